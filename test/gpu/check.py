#!/usr/bin/env python3
"""Checks what the GPU test set printed on the GPU machine (results.tgz from run.sh).

Each execution test's output is checked by FileCheck against its own source, as its lit RUN
line does on the CPU; each program must exit 0, each example print PASS, and each sanitizer
run report no error,
and the GEMM example's kernel hold HMMA or HGMMA instructions in its SASS for sm_90a and
sm_80 (HGMMA for sm_90a in one image at least).
  python3 test/gpu/check.py RESULTS_DIR [FILECHECK]
"""
import os, re, subprocess, sys

root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
results = sys.argv[1]
filecheck = sys.argv[2] if len(sys.argv) > 2 else "FileCheck"
failed, passed = [], 0

def read(name):
    with open(os.path.join(results, name), errors="replace") as f:
        return f.read()

for entry in sorted(os.listdir(results)):
    if not entry.endswith(".rc"):
        continue
    name = entry[:-3]
    rc = read(entry).strip()
    out = read(name + ".out")
    problems = []
    if rc != "0":
        problems.append("exit status " + rc)
    if name.startswith("example-"):
        if not re.search(r"^PASS ", out, re.M):
            problems.append("no PASS line")
    elif name != "unit-tests":
        # NAME-mma: the same test built with -fplugin-arg-tile-gemm=mma; NAME-no-pingpong,
        # with -fplugin-arg-tile-pingpong=off.
        base = name
        for suffix in ("-mma", "-no-pingpong"):
            if name.endswith(suffix) and not os.path.exists(os.path.join(root, "test", "lit", "exec", name + ".cpp")):
                base = name[:-len(suffix)]
        source = os.path.join(root, "test", "lit", "exec", base + ".cpp")
        run = next(l for l in open(source) if "FileCheck" in l and "RUN:" in l)
        text = out + (read(name + ".err") if "2>&1" in run else "")
        args = run.split("FileCheck %s", 1)[1].split()
        args = [a.strip("'") if a.startswith("--implicit-check-not=") else a for a in args]
        args = [re.sub(r"=\'(.*)\'$", r"=\1", a) for a in args]
        check = subprocess.run([filecheck, source] + args, input=text, capture_output=True, text=True)
        if check.returncode != 0:
            problems.append("FileCheck:\n" + check.stderr[-3000:])
    if problems:
        failed.append(name)
        print("FAIL %s: %s\n%s" % (name, "; ".join(problems), (out + read(name + ".err"))[-2000:]))
    else:
        passed += 1
        print("PASS " + name)

for entry in sorted(os.listdir(results)):
    if entry.endswith(".memcheck") or entry.endswith(".racecheck"):
        text = read(entry)
        last = text.strip().splitlines()[-1] if text.strip() else ""
        clean = "ERROR SUMMARY: 0 errors" in text or "RACECHECK SUMMARY: 0 hazards displayed (0 errors" in text
        if last != "0" or not clean:
            failed.append(entry)
            print("FAIL %s:\n%s" % (entry, text[-2000:]))
        else:
            passed += 1
            print("PASS " + entry)

# Tensor cores in the GEMM examples' machine code: in every image of matmul_relu, for
# sm_90a and sm_80, HMMA (mma.sync) or HGMMA (wgmma) instructions, and HGMMA in one sm_90a
# image at least (cuobjdump on the GPU
# machine, summarized by run.sh: image, architecture, kernel, HMMA count, HGMMA count).
sass = os.path.join(results, "sass-hmma.txt")
if not os.path.exists(sass):
    failed.append("sass-hmma")
    print("FAIL sass-hmma: no SASS summary (cuobjdump missing on the GPU machine?)")
else:
    archs = {}
    for line in read("sass-hmma.txt").splitlines():
        parts = line.split()
        if len(parts) in (4, 5) and "matmul_relu" in parts[2]:
            hgmma = int(parts[4]) if len(parts) == 5 else 0
            archs.setdefault(parts[1], []).append((int(parts[3]), hgmma))
    missing = [a for a in ("sm_90a", "sm_80") if not archs.get(a) or min(h + g for h, g in archs[a]) == 0]
    # wgmma is the default on sm_90a: the example's sm_90a image has HGMMA.
    no_hgmma = not any(g > 0 for h, g in archs.get("sm_90a", []))
    if missing or no_hgmma:
        failed.append("sass-hmma")
        print("FAIL sass-hmma: matmul_relu without HMMA or HGMMA for %s%s: %s" %
              (", ".join(missing), "; no sm_90a image with HGMMA" if no_hgmma else "", archs))
    else:
        passed += 1
        print("PASS sass-hmma (matmul_relu (HMMA, HGMMA) counts per image: %s)" % archs)

print("%d passed, %d failed" % (passed, len(failed)))
sys.exit(1 if failed else 0)
