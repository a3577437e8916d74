#!/usr/bin/env python3
"""The manual's test: every program in docs/ (and the README) is compiled and run, and every
link stays inside the repository and points at something that is there.

Code blocks, by their info string (the word after the opening fence):
  cpp            a translation unit. With `int main(` it is a program: compiled with
                 tile-c++, run on the CPU (TILE_DEVICE=cpu), and it must exit with 0 (the
                 manual's programs check their own results); without, it is compiled
                 with -c. A block right after a program whose info string is `output`
                 must equal what the program printed.
  cpp fragment   a piece of a kernel or of host code, not compiled (say so in the text).
  output         what the program before it prints (above).
  Other blocks (sh, cmake, text, none) are not run.

Links: [text](target) in README.md and docs/ must be relative (no scheme, no absolute
path), stay inside the repository, name a file or folder that exists, and a #anchor must be
a heading of the file it names (GitHub's anchors: lower case, punctuation dropped, spaces
as dashes).

  doctest.py --tile-cxx build/bin/tile-c++ [--work DIR] [--jobs N] [--targets cpu] [FILE.md ...]
"""

import argparse
import concurrent.futures
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
FENCE = re.compile(r'^(\s*)(```+|~~~+)\s*(.*)$')
MAIN = re.compile(r'\bmain\s*\(')
# Info strings that would be C++ but are not spelled `cpp`: refused, so that no program goes
# unrun for its spelling.
CXX_LIKE = {'c++', 'cxx', 'cc', 'c', 'hpp', 'h', 'cuda', 'cu'}


class Block:
    def __init__(self, path, line, info, text):
        self.path, self.line, self.info, self.text = path, line, info.split(), text
        self.output = None

    def where(self):
        return '%s:%d' % (os.path.relpath(self.path, ROOT), self.line)

    @property
    def lang(self):
        return self.info[0] if self.info else ''


def blocks_of(path):
    """The fenced code blocks of a Markdown file, with the line each opens at."""
    out, cur = [], None
    with open(path, encoding='utf-8') as f:
        for n, line in enumerate(f, 1):
            m = FENCE.match(line.rstrip('\n'))
            if cur is None:
                if m:
                    cur = (n, m.group(2), m.group(3), [])
            elif m and m.group(2) == cur[1] and not m.group(3):
                out.append(Block(path, cur[0], cur[2], ''.join(cur[3])))
                cur = None
            else:
                cur[3].append(line)
    if cur is not None:
        raise SystemExit('%s:%d: code block never closed' % (os.path.relpath(path, ROOT), cur[0]))
    # An output block belongs to the program just before it.
    for prev, b in zip(out, out[1:]):
        if b.lang == 'output':
            if prev.lang != 'cpp' or not MAIN.search(prev.text):
                raise SystemExit('%s: an output block must follow a program' % b.where())
            prev.output = b.text
    return out


def slug(heading):
    """GitHub's anchor for a heading: lower case, punctuation but '-' and '_' dropped, spaces
    as dashes."""
    s = re.sub(r'\s+#+\s*$', '', heading.strip()).lower()
    s = re.sub(r'[^\w\- ]', '', s)
    return s.replace(' ', '-')


def unfenced_lines(path):
    """(line number, text) of the lines outside fenced code blocks."""
    out, fence = [], None
    with open(path, encoding='utf-8') as f:
        for n, line in enumerate(f, 1):
            m = FENCE.match(line.rstrip('\n'))
            if fence is None and m:
                fence = m.group(2)
            elif fence is not None and m and m.group(2) == fence and not m.group(3):
                fence = None
            elif fence is None:
                out.append((n, line))
    return out


def anchors_of(path):
    """The anchors of a file's headings (a repeated heading's get -1, -2, ...)."""
    found, seen = set(), {}
    for _, line in unfenced_lines(path):
        if re.match(r'^#{1,6}\s', line):
            a = slug(line.lstrip('#'))
            found.add(a if a not in seen else '%s-%d' % (a, seen[a]))
            seen[a] = seen.get(a, 0) + 1
    return found


LINK = re.compile(r'!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)')


def check_links(path):
    """Problems with the links of one Markdown file (a link's text may span lines)."""
    problems = []
    lines = unfenced_lines(path)
    # The text outside code (code spans blanked, offsets kept), and each line's offset.
    text, starts = '', []
    for n, line in lines:
        starts.append((len(text), n))
        text += re.sub(r'`[^`\n]*`', lambda m: ' ' * len(m.group(0)), line)
    for m in LINK.finditer(text):
        target = m.group(1)
        n = [ln for off, ln in starts if off <= m.start()][-1]  # the line the link starts on
        where = '%s:%d' % (os.path.relpath(path, ROOT), n)
        if re.match(r'^[a-zA-Z][a-zA-Z0-9+.-]*:', target) or target.startswith('//'):
            problems.append('%s: link out of the repository: %s' % (where, target))
            continue
        file_part, _, anchor = target.partition('#')
        if file_part.startswith('/'):
            problems.append('%s: absolute link %s (write it relative to the file)' % (where, target))
            continue
        dest = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) if file_part else path
        if os.path.commonpath([dest, ROOT]) != ROOT:
            problems.append('%s: link leaves the repository: %s' % (where, target))
        elif not os.path.exists(dest):
            problems.append('%s: link to a missing file: %s' % (where, target))
        elif anchor and dest.endswith('.md') and anchor not in anchors_of(dest):
            problems.append('%s: no heading #%s in %s' % (where, anchor, os.path.relpath(dest, ROOT)))
    # Autolinks and HTML links out of the repository.
    for m in re.finditer(r'<(https?://[^>\s]+)>|(?:href|src)\s*=\s*"((?:https?:)?//[^"]*)"', text):
        n = [ln for off, ln in starts if off <= m.start()][-1]
        problems.append('%s:%d: link out of the repository: %s' % (os.path.relpath(path, ROOT), n,
                                                                   m.group(1) or m.group(2)))
    return problems


def run_block(a, b, i):
    """Compiles (and runs) one block; returns None or what went wrong."""
    d = os.path.join(a.work, 'b%03d' % i)
    os.makedirs(d, exist_ok=True)
    src = os.path.join(d, 'prog.cpp')
    with open(src, 'w') as f:
        f.write('#line %d "%s"\n' % (b.line + 1, os.path.relpath(b.path, ROOT)))
        f.write(b.text)
    program = bool(MAIN.search(b.text))
    exe = os.path.join(d, 'prog' if program else 'prog.o')
    cmd = [a.tile_cxx, '-O1', '-fplugin-arg-tile-targets=' + a.targets,
           '-fplugin-arg-tile-cache=' + os.path.join(a.work, 'cache')]
    cmd += ([] if program else ['-c']) + [src, '-o', exe]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=a.timeout)
    except subprocess.TimeoutExpired:
        return 'compiling took more than %d s' % a.timeout
    if r.returncode != 0:
        return 'does not compile:\n' + r.stderr[-4000:]
    if not program:
        return None
    env = dict(os.environ, TILE_DEVICE='cpu', TILE_TUNING_CACHE=os.path.join(d, 'tuning.tsv'))
    try:
        r = subprocess.run([exe], capture_output=True, text=True, timeout=a.timeout, cwd=d, env=env)
    except subprocess.TimeoutExpired:
        return 'ran more than %d s' % a.timeout
    if r.returncode != 0:
        return 'exited with %d:\n%s%s' % (r.returncode, r.stdout[-2000:], r.stderr[-2000:])
    if b.output is not None and r.stdout != b.output:
        return 'printed\n%s\ninstead of the output block\n%s' % (r.stdout, b.output)
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--tile-cxx', default=os.path.join(ROOT, 'build', 'bin', 'tile-c++'))
    ap.add_argument('--work', default=None, help='where programs are built (default: a temporary folder)')
    ap.add_argument('--jobs', type=int, default=2)
    ap.add_argument('--targets', default='cpu', help="the images to build (tile's targets= option)")
    ap.add_argument('--timeout', type=int, default=600)
    ap.add_argument('files', nargs='*', help='Markdown files (default: README.md and docs/**/*.md)')
    a = ap.parse_args()
    files = [os.path.abspath(f) for f in a.files]
    if not files:
        files = [os.path.join(ROOT, 'README.md')]
        for dirpath, _, names in os.walk(os.path.join(ROOT, 'docs')):
            files += [os.path.join(dirpath, n) for n in sorted(names) if n.endswith('.md')]
    tmp = None
    if a.work is None:
        tmp = tempfile.TemporaryDirectory(prefix='tile-doctest-')
        a.work = tmp.name
    a.work = os.path.abspath(a.work)

    problems = []
    for f in files:
        problems += check_links(f)
    blocks = [b for f in files for b in blocks_of(f)]
    unknown = [b for b in blocks if b.lang == 'cpp' and b.info[1:] not in ([], ['fragment'])]
    problems += ['%s: unknown info string "%s"' % (b.where(), ' '.join(b.info)) for b in unknown]
    problems += ['%s: C++ is written `cpp` (or `cpp fragment`) here, not "%s"' % (b.where(), b.lang)
                 for b in blocks if b.lang.lower() in CXX_LIKE]
    todo = [b for b in blocks if b.lang == 'cpp' and b.info[1:] == []]
    fragments = sum(1 for b in blocks if b.lang == 'cpp' and b.info[1:] == ['fragment'])
    with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as ex:
        results = list(ex.map(lambda ib: run_block(a, ib[1], ib[0]), enumerate(todo)))
    for b, why in zip(todo, results):
        kind = 'program' if MAIN.search(b.text) else 'translation unit'
        if why:
            problems.append('%s: %s %s' % (b.where(), kind, why))
        else:
            print('ok   %s (%s%s)' % (b.where(), kind, ', output checked' if b.output is not None else ''))
    programs = sum(1 for b in todo if MAIN.search(b.text))
    print('doctest: %d files, %d programs run, %d translation units compiled, %d fragments not compiled, '
          '%d problems' % (len(files), programs, len(todo) - programs, fragments, len(problems)))
    for p in problems:
        print('FAIL ' + p)
    return 1 if problems or not todo else 0


if __name__ == '__main__':
    sys.exit(main())
