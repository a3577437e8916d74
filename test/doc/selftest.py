#!/usr/bin/env python3
"""The doc test's own test: on Inputs/, whose links and programs are wrong on purpose, it
must fail and name each problem (and pass the block that is right).
  selftest.py DOCTEST.py TILE_CXX WORK_DIR
"""
import os
import subprocess
import sys

doctest, tile_cxx, work = sys.argv[1:4]
inputs = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'Inputs')
r = subprocess.run([sys.executable, doctest, '--tile-cxx', tile_cxx, '--work', work,
                    os.path.join(inputs, 'links.md'), os.path.join(inputs, 'programs.md')],
                   capture_output=True, text=True)
out = r.stdout + r.stderr
expected = [
    'links.md:6: link out of the repository: https://example.com/page',
    'links.md:7: absolute link /etc/passwd',
    'links.md:8: link leaves the repository: ../../../../outside.md',
    'links.md:9: link to a missing file: nothing-here.md',
    'links.md:10: no heading #no-such-heading in test/doc/Inputs/links.md',
    'programs.md:5: program printed\ntwo\n\ninstead of the output block\none',
    'programs.md:16: program exited with 3',
    'programs.md:22: program does not compile',
    'links.md:12: link to a missing file: missing-too.md',
    'links.md:14: link out of the repository: https://example.org/autolink',
    'links.md:14: link out of the repository: https://example.net',
    'programs.md:28: unknown info string "cpp snippet"',
    'programs.md:34: program exited with 4',
    'programs.md:40: C++ is written `cpp` (or `cpp fragment`) here, not "c++"',
    'ok   test/doc/Inputs/programs.md:50 (program, output checked)',
    '1 fragments not compiled, 14 problems',
]
unexpected = ['heading_with_underscore']
missing = [e for e in expected if e not in out] + ['no mention of ' + u for u in unexpected if u in out]
if r.returncode == 0 or missing:
    print(out)
    print('exit status %d; missing from the output:\n  %s' % (r.returncode, '\n  '.join(missing)))
    sys.exit(1)
print('the doc test refused all 14 problems and passed the right program')
