#!/usr/bin/env python3
"""ctest bench-plots: runs plot.py on a committed run and checks what it made.
  python3 check_plots.py RUN.jsonl WORKDIR
- plot.py exits 0 and writes the expected PNG files (valid PNG signature and header);
- the ratios it prints for a few kernels and shapes match ratios computed here, straight
  from the JSON lines (not through bench_jsonl.py);
- a peer's plot has no row for a kernel that peer did not measure;
- plot.py exits non-zero, saying why, on a run with no tile lines and on a missing file.
matplotlib is required: without it plot.py fails, and so does this test.
"""
import json, os, shutil, struct, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))
PLOT = os.path.join(HERE, "plot.py")
EXPECTED = ["summary.png", "vs-cublas.png", "vs-cublaslt.png", "vs-sdpa_cudnn.png", "vs-sdpa_efficient.png",
            "vs-sdpa_flash.png", "vs-torch.png", "vs-triton.png"]
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL: " + what)


def plot(run, outdir):
    return subprocess.run([sys.executable, PLOT, run, outdir], capture_output=True, text=True)


def rate_of(lines, kernel, shape, who):
    """The rate of one line: who is "tile" or a peer's name."""
    for r in lines:
        if r.get("kernel") == kernel and r.get("shape") == shape and \
                (r.get("impl") == "tile" if who == "tile" else r.get("peer") == who):
            return r.get("tflops", r.get("gbps"))
    raise KeyError((kernel, shape, who))


def main(run, work):
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    outdir = os.path.join(work, "plots")
    p = plot(run, outdir)
    sys.stdout.write(p.stdout)
    sys.stderr.write(p.stderr)
    if p.returncode != 0:
        print("FAIL: plot.py exited %d (is python3-matplotlib installed for %s?)" % (p.returncode, sys.executable))
        return 1

    # The files, and that each is a PNG: the signature, then an IHDR chunk of a plausible size.
    check(sorted(os.listdir(outdir)) == EXPECTED, "files %s, expected %s" % (sorted(os.listdir(outdir)), EXPECTED))
    for name in EXPECTED:
        path = os.path.join(outdir, name)
        if not os.path.exists(path):
            continue
        data = open(path, "rb").read()
        check(data[:8] == b"\x89PNG\r\n\x1a\n", "%s: no PNG signature" % name)
        check(data[12:16] == b"IHDR", "%s: no IHDR chunk first" % name)
        width, height = struct.unpack(">II", data[16:24])
        check(400 <= width <= 3000 and 100 <= height <= 3000, "%s: %dx%d pixels" % (name, width, height))
        check(len(data) < 100 * 1024, "%s: %d bytes, more than 100 KB" % (name, len(data)))

    # plot.py's table: plot kernel shape against tile other unit ratio.
    table = {}
    for line in p.stdout.splitlines()[1:]:
        f = line.split()
        if len(f) == 8:
            table[(f[0], f[1], f[2], f[3])] = float(f[7])

    lines = [json.loads(l) for l in open(run) if l.startswith("{")]
    copy = max(r["gbps"] for r in lines if r.get("kernel") == "copy_bf16")
    g4, g8 = "4096x4096x4096", "8192x8192x8192"
    expected = {
        ("vs-cublas.png", "gemm_bfloat16", g4, "cublas"):
            rate_of(lines, "gemm_bfloat16", g4, "tile") / rate_of(lines, "gemm_bfloat16", g4, "cublas"),
        ("vs-sdpa_flash.png", "attn_fwd_bf16", "b4h32s4096d128", "sdpa_flash"):
            rate_of(lines, "attn_fwd_bf16", "b4h32s4096d128", "tile") /
            rate_of(lines, "attn_fwd_bf16", "b4h32s4096d128", "sdpa_flash"),
        # The fastest peer of bf16 8192^3 is cuBLAS, not Triton.
        ("summary.png", "gemm_bfloat16", g8, "cublas"):
            rate_of(lines, "gemm_bfloat16", g8, "tile") / max(rate_of(lines, "gemm_bfloat16", g8, p)
                                                              for p in ("cublas", "triton")),
        ("summary.png", "softmax_bf16", "32768x8192", "copy_bf16"):
            rate_of(lines, "softmax_bf16", "32768x8192", "tile") / copy,
    }
    # The figures themselves, as written in the run (so a change of file shows here too).
    check(abs(expected[("vs-cublas.png", "gemm_bfloat16", g4, "cublas")] - 700.02 / 708.2729623540633) < 1e-9,
          "the run's bf16 4096^3 figures are not those of session 22")
    for key, value in expected.items():
        got = table.get(key)
        check(got is not None and abs(got - value) < 6e-5, "%s: plot.py says %s, expected %.4f" % (key, got, value))
    # Absent, not zero: no peer measured the decoding kernel, and cuBLASLt's FP8 4096^3 line has
    # no tile line to go with it.
    check(not any(k[1] == "decode_bf16" and k[0] != "summary.png" for k in table), "decode_bf16 in a peer's plot")
    check(("vs-cublaslt.png", "gemm_fp8_e4m3", g4, "cublaslt") not in table, "fp8 4096^3 plotted without tile")
    check(all(v > 0 for v in table.values()), "a ratio of zero or less")

    # A run without tile lines, and a missing run: non-zero, with a message.
    no_tile = os.path.join(work, "no-tile.jsonl")
    with open(no_tile, "w") as f:
        f.writelines(l for l in open(run) if '"impl": "tile"' not in l)
    p = plot(no_tile, os.path.join(work, "no-tile"))
    check(p.returncode != 0 and "no tile lines" in p.stderr,
          "no tile lines: exit %d, stderr %r" % (p.returncode, p.stderr))
    p = plot(os.path.join(work, "missing.jsonl"), os.path.join(work, "missing"))
    check(p.returncode != 0 and "cannot read" in p.stderr, "missing run: exit %d, stderr %r" % (p.returncode, p.stderr))

    print("bench-plots: %s" % ("FAILED: %d checks" % len(failures) if failures else "all checks passed"))
    return 1 if failures else 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print("usage: python3 check_plots.py RUN.jsonl WORKDIR", file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1], sys.argv[2]))
