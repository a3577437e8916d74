#!/usr/bin/env python3
"""Checks fuzz.h's directed roundings (printed by reference_test) with exact arithmetic:
each bound must hold the exact result and lie within two units of long double's last place
of it; each rounding to an element format must be the exact one (overflow: infinity, or NaN
for e4m3, when rounding to nearest or away from zero)."""
import math
import re
import subprocess
import sys
from fractions import Fraction as Q

# p, smallest normal exponent, largest finite value, overflow gives NaN.
FORMATS = [(24, -126, Q(2**24 - 1) * Q(2)**104, False), (8, -126, Q(255) * Q(2)**120, False),
           (11, -14, Q(65504), False), (4, -6, Q(448), True), (3, -14, Q(57344), False),
           (53, -1022, Q(2**53 - 1) * Q(2)**971, False)]


def parse(s):
    neg = s.startswith('-')
    s = s.lstrip('-')
    if s in ('inf', 'nan'):
        return s
    m = re.match(r'0x([0-9a-f]+)(?:\.([0-9a-f]*))?p([+-]\d+)$', s)
    frac = m.group(2) or ''
    v = Q(int(m.group(1) + frac, 16), 16**len(frac)) * Q(2)**int(m.group(3))
    return -v if neg else v


def ilog2(a):
    e = a.numerator.bit_length() - a.denominator.bit_length()
    while Q(2)**e > a:
        e -= 1
    while Q(2)**(e + 1) <= a:
        e += 1
    return e


def round_to(x, p, emin, top, nan, mode):
    if x == 0:
        return Q(0)
    e = max(ilog2(abs(x)), emin)
    q = Q(2)**(e - (p - 1))
    m = abs(x) / q
    fl = m.numerator // m.denominator
    away = -mode if x < 0 else mode
    if mode == 0:
        r = fl + (1 if m - fl > Q(1, 2) or (m - fl == Q(1, 2) and fl % 2) else 0)
    else:
        r = fl + (1 if away > 0 and fl != m else 0)
    r *= q
    if r > top:
        if mode == 0 or away > 0:
            return 'nan' if nan else 'inf'
        r = top
    return -r if x < 0 else r


def main():
    out = subprocess.run([sys.argv[1]] + sys.argv[2:], stdout=subprocess.PIPE, text=True, check=True).stdout
    bad = 0
    for n, line in enumerate(out.split('\n')):
        if not line:
            continue
        v = line.split()
        a, b = parse(v[0]), parse(v[1])
        for name, exact, lo, hi in (('add', a + b, v[2], v[3]), ('mul', a * b, v[4], v[5]),
                                    ('div', a / b if b else None, v[6], v[7])):
            if exact is None:
                continue
            lo, hi = parse(lo), parse(hi)
            if not (lo <= exact <= hi) or hi - lo > abs(exact) * Q(1, 2**62) + Q(1, 2**16000):
                bad += 1
                print('%s %d: %s' % (name, n, line[:120]))
        k = 8
        for fmt in FORMATS:
            for mode in (-1, 0, 1):
                want, got = round_to(a, *fmt, mode), v[k]
                k += 1
                ok = got.lstrip('-') == want if isinstance(want, str) else parse(got) == want
                if not ok:
                    bad += 1
                    print('round p=%d mode %d of %s: %s, want %s' % (fmt[0], mode, v[0], got, want))
    print('%d lines, %d wrong' % (n, bad))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
