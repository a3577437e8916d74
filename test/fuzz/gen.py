#!/usr/bin/env python3
"""Random tile programs for the differential tester (see README.md).

One seed gives one program: a [[tile::kernel]] and, next to it, a plain C++ reference of
the same abstract program that computes, with the interval rules of fuzz.h, what every
output element may hold, and a run function that makes the inputs, launches the kernel and
compares. The generator keeps every program inside what API.md documents: values stay in
range (static intervals are tracked for every buffer and expression), buffers are written
before they are read, plain stores from different blocks never overlap (the rest go through
atomics), fragment elements are touched only inside parallel loops, and a parallel loop
reads the buffer it writes only at the element it writes.

  gen.py --seed 7 > prog.cpp            # one program with main (a reproducer)
  gen.py --seeds 1-40 > batch.cpp       # a batch in one translation unit
"""

import argparse
import math
import os
import random
import sys

# -------------------------------------------------------------------------------------
# Element types
# -------------------------------------------------------------------------------------


class Ty:
    def __init__(self, key, cpp, kind, fmt, size, lo=0, hi=0, p=0, fmax=0.0):
        self.key, self.cpp, self.kind, self.fmt, self.size = key, cpp, kind, fmt, size
        self.lo, self.hi, self.p, self.fmax = lo, hi, p, fmax


# kind: 'f' float/double, 'x' extended float (storage only: arithmetic is in float),
# 'i' integer, 'b' bool.
TY = {t.key: t for t in [
    Ty('f32', 'float', 'f', 'fz::F32', 4, p=24, fmax=3.4e38),
    Ty('f64', 'double', 'f', 'fz::F64', 8, p=53, fmax=1.7e308),
    Ty('bf16', 'T::bf16', 'x', 'fz::BF16', 2, p=8, fmax=3.38e38),
    Ty('f16', 'T::f16', 'x', 'fz::F16', 2, p=11, fmax=65504.0),
    Ty('e4m3', 'T::f8e4m3', 'x', 'fz::E4M3', 1, p=4, fmax=448.0),
    Ty('e5m2', 'T::f8e5m2', 'x', 'fz::E5M2', 1, p=3, fmax=57344.0),
    Ty('i8', 'std::int8_t', 'i', 'fz::I8', 1, lo=-128, hi=127),
    Ty('u8', 'std::uint8_t', 'i', 'fz::U8', 1, lo=0, hi=255),
    Ty('i16', 'std::int16_t', 'i', 'fz::I16', 2, lo=-32768, hi=32767),
    Ty('i32', 'int', 'i', 'fz::I32', 4, lo=-2**31, hi=2**31 - 1),
    Ty('i64', 'std::int64_t', 'i', 'fz::I64', 8, lo=-2**63, hi=2**63 - 1),
    Ty('bool', 'bool', 'b', 'fz::B1', 1, lo=0, hi=1),
]}
FLOATS = ['f32', 'f64', 'bf16', 'f16', 'e4m3', 'e5m2']
INTS = ['i8', 'u8', 'i16', 'i32', 'i64']
# The largest magnitude a float expression may reach: keeps sums of thousands of terms, exp
# and the narrow types far from overflow.
LIM = 1.0e4
ILIM = 2**40  # integers: exact in long double, far from int64 overflow


def arith(t):
    return 'f32' if TY[t].kind == 'x' else t


def promote(t):
    t = arith(t)
    return 'i32' if t in ('bool', 'i8', 'u8', 'i16') else t


def common(a, b):
    """The usual arithmetic conversions of C++ (after promotion)."""
    a, b = promote(a), promote(b)
    for t in ('f64', 'f32', 'i64'):
        if t in (a, b):
            return t
    return 'i32'


def common_np(a, b):
    """std::common_type of the arithmetic types (tile::min / max): no promotion of equal types."""
    a, b = arith(a), arith(b)
    return a if a == b else common(a, b)


def math_t(t):
    return 'f64' if arith(t) == 'f64' else 'f32'


def fits(t, lo, hi):
    ty = TY[t]
    if ty.kind == 'b':
        return True
    if ty.kind == 'i':
        return lo >= max(ty.lo, -ILIM) and hi <= min(ty.hi, ILIM)
    m = max(abs(lo), abs(hi))
    return m <= min(ty.fmax * 0.85, LIM if ty.kind == 'f' else LIM)


def widen(lo, hi, t):
    """Static ranges of float results get a margin for rounding."""
    if TY[t].kind in 'fx':
        return lo - abs(lo) * 0.02 - 1e-30, hi + abs(hi) * 0.02 + 1e-30
    return lo, hi


def flit(v):
    """A float literal whose value is exactly v (v has few bits)."""
    s = repr(float(v))
    return s + 'f'


# -------------------------------------------------------------------------------------
# Expressions: kernel text, reference text, C++ type, static range
# -------------------------------------------------------------------------------------


class Ex:
    def __init__(self, k, r, ty, lo, hi, exact=False):
        self.k, self.r, self.ty, self.lo, self.hi, self.exact = k, r, ty, float(lo), float(hi), exact

    def assignable(self, t):
        """This value as the right side of an assignment to type t: C++ converts between two
        extended floats (and from double to one) only through an explicit float."""
        if TY[t].kind == 'x' and self.ty != t and (TY[self.ty].kind == 'x' or self.ty == 'f64'):
            r = self.r if TY[self.ty].kind == 'x' else 'fz::cvt(%s, fz::F32)' % self.r
            return Ex('float(%s)' % self.k, r, 'f32', self.lo, self.hi, False)
        return self

    def conv(self, t):
        """Reference text of this value converted to type t."""
        if self.ty == t or (TY[self.ty].kind == 'x' and t == 'f32'):
            return self.r
        return 'fz::cvt(%s, %s)' % (self.r, TY[t].fmt)


def ival(v):
    return Ex(str(v), 'fz::val(%d)' % v, 'i32', v, v, True)


# -------------------------------------------------------------------------------------
# Program pieces
# -------------------------------------------------------------------------------------


class Buf:
    def __init__(self, name, scope, ty, dims):
        self.name, self.scope, self.ty, self.dims = name, scope, ty, dims
        self.lo = self.hi = 0.0
        self.exact = False
        self.defined = False
        self.used = False
        self.acc = False  # an accumulator of the loop being generated: updated only
        self.frozen = False  # defined outside the loop being generated: read only


class Tensor:
    def __init__(self, name, ty, dims, role, layout):
        self.name, self.ty, self.dims, self.role, self.layout = name, ty, dims, role, layout
        self.lo = self.hi = 0.0
        self.kind = 'store'  # outputs: store, add, max, min
        # (before, after): the kernel gets the tensor with that many more rows of dimension 0
        # around it (guard memory) and takes the tensor back as a view of its rows,
        # T.rows(row0, row0 + rows); None: the tensor itself.
        self.view = None
        # An order of k tiles (k_loop): n entries, 0 first, the others shuffled.
        self.order = None
        # A selection of k tiles (k_loop, with `order` its count): 1 for tile 0, then 0 or 1
        # ('runs': in runs of one value).
        self.select = None


class Ctx:
    """Where ops are generated: the global origin of each tile dimension, the tile shapes
    available, and the loop depth (for indentation)."""

    def __init__(self, origin, shape_w, indent, loop_vars=()):
        self.origin, self.indent = origin, indent
        self.shape_w = shape_w
        self.shapes = [s[0] for s in shape_w]
        self.loop_vars = list(loop_vars)  # (name, trip count) of the serial loops around

    def inner(self, origin=None, loop_var=None, indent=1):
        return Ctx(dict(self.origin, **(origin or {})), self.shape_w, self.indent + indent,
                   self.loop_vars + ([loop_var] if loop_var else []))


class Gen:
    def __init__(self, seed, skip=(), over=None):
        """skip: steps (ops, loops, stores) to leave out; over: sizes and tile shapes to force
        (M, N, K, B, BM, BN, BK, threads). Both for minimizing a failing program."""
        self.seed = seed
        self.skip, self.over = set(skip), dict(over or {})
        self.nstep = 0
        self.r = random.Random(seed * 7919 + 17)
        # Draws added after the rest (views of rows): a stream of their own, so that the other
        # draws, and so the programs of earlier seeds, stay as they were.
        self.r2 = random.Random(seed * 104729 + 3)
        self.k = []  # kernel body lines
        self.ref = []  # reference lines (inside the block loops)
        self.bufs = []
        self.tensors = []
        self.scalars = {}  # name -> (cpp type, value)
        self.custom = {}  # dimension symbol -> extent, for sub-tiles and tables
        self.tables = []  # local tables filled by unrolled scalar loops: read at constant indices
        self.annotations = []
        self.helpers = []  # [[tile::macro]] functions (None for lambdas)
        self.block_scalars = []  # scalars declared at the kernel's top level
        self.lambdas = []
        self.nbuf = 0
        self.ntmp = 0
        self.generate()

    # --- helpers ------------------------------------------------------------------------

    def step(self):
        """Starts a step of the program with a random stream of its own, so that leaving a
        step out changes the others as little as possible. True if the step is skipped."""
        n = self.nstep
        self.nstep += 1
        self.r = random.Random('%d:%d' % (self.seed, n))
        return n in self.skip

    def pick(self, items, weights=None):
        return self.r.choices(items, weights=weights)[0]

    def pick_src(self, cands):
        """A source buffer, preferring ones nothing has read yet (less dead code)."""
        return self.pick(cands, [1 if b.used else 4 for b in cands])

    def chance(self, p):
        return self.r.random() < p

    def emit(self, ctx_or_indent, kline, rline=None):
        ind = ctx_or_indent if isinstance(ctx_or_indent, int) else ctx_or_indent.indent
        if kline is not None:
            self.k.append('  ' * ind + kline)
        if rline is not None:
            self.ref.append('  ' * (ind + 2) + rline)

    def ext(self, d):
        if d in self.custom:
            return self.custom[d]
        return {'m': self.BM, 'n': self.BN, 'k': self.BK, '1': 1}[d]

    def extname(self, d):
        if d in self.custom:
            return str(self.custom[d])
        return {'m': 'BM', 'n': 'BN', 'k': 'BK', '1': '1'}[d]

    def plain(self, b):
        """Whether b's dims are tile dims (it can be stored, and read in parallel loops)."""
        return all(d in 'mnk1' for d in b.dims)

    def custom_dim(self, extent):
        """A dimension of its own (sub-tiles, tables): no tensor dimension maps onto it."""
        d = 'u%d' % len(self.custom)
        self.custom[d] = extent
        return d

    def size(self, D):
        return 1 if D == '1' else self.sizes[D]

    def shape_str(self, dims):
        return ', '.join(self.extname(d) for d in dims)

    def numel(self, dims):
        n = 1
        for d in dims:
            n *= self.ext(d)
        return n

    def flat(self, dims, idx):
        """Row-major flat index text of buffer dims for index texts idx."""
        s = None
        for d, i in zip(dims, idx):
            s = i if s is None else '(%s) * %s + %s' % (s, self.extname(d), i)
        return s or '0'

    def rand_float_ty(self):
        return self.pick(FLOATS, [50, 8, 14, 14, 5, 5])

    def rand_ty(self):
        return self.pick(FLOATS + INTS + ['bool'], [40, 6, 10, 10, 4, 4, 3, 3, 3, 9, 3, 2])

    def new_buf(self, scope, ty, dims):
        b = Buf('b%d' % self.nbuf, scope, ty, tuple(dims))
        self.nbuf += 1
        self.bufs.append(b)
        return b

    def shared_bytes(self):
        return sum(self.numel(b.dims) * TY[b.ty].size for b in self.bufs if b.scope == 'shared')

    def rand_scope(self, dims, allow_local=True):
        n = self.numel(dims)
        opts, w = ['fragment', 'shared'], [60, 30]
        if allow_local and n <= 128:
            opts.append('local')
            w.append(10)
        s = self.pick(opts, w)
        if s == 'shared' and self.shared_bytes() + n * 8 > 40000:
            s = 'fragment'
        if s == 'fragment' and n > 64 * self.threads and self.shared_bytes() + n * 8 <= 40000:
            s = 'shared'
        return s

    def def_buf(self, b, lo, hi, exact=False):
        b.defined = True
        b.lo, b.hi = float(lo), float(hi)
        if TY[b.ty].kind == 'b':
            b.lo, b.hi = 0.0, 1.0
        b.exact = exact and TY[b.ty].kind in 'ib'

    def fit_ty(self, lo, hi, prefer_int, choices=None):
        """A random element type that holds [lo, hi]."""
        for _ in range(8):
            t = self.rand_ty() if choices is None else self.pick(choices)
            if prefer_int and TY[t].kind in 'fx' and self.chance(0.7):
                continue
            if fits(t, lo, hi) and (TY[t].kind != 'i' or (lo >= TY[t].lo and hi <= TY[t].hi)):
                return t
        return 'f32' if not prefer_int else ('i32' if fits('i32', lo, hi) else 'f32')

    # --- tensors ------------------------------------------------------------------------

    def tensor_dims(self, tile_dims):
        """Problem dims of a tensor holding tiles of tile_dims (with the batch dim, if any)."""
        dims = [d.upper() for d in tile_dims]
        if self.batch and self.chance(0.6):
            pos = self.r.randint(0, len(dims))
            dims.insert(pos, 'B')
        return tuple(dims)

    def new_tensor(self, role, ty, dims):
        layouts, w = [0, 1, 2, 3, 4], [50, 18, 15, 10, 7 if role == 'in' else 0]
        t = Tensor(('X%d' if role == 'in' else 'Y%d') % len([x for x in self.tensors if x.role == role]), ty,
                   dims, role, self.pick(layouts, w))
        if len(dims) < 2 and t.layout == 2:
            t.layout = 0
        t.offset = self.pick([0, 1, 3, 8, 5])
        if role == 'in' and getattr(self, 'tensor_map_friendly', False) and self.chance(0.8):
            t.layout, t.offset = 0, self.pick([0, 8])
        # A view of rows where dimension 0 is the slowest in memory (not transposed rank 2,
        # not a broadcast): rows outside it are guard memory, which must not be read or written.
        if t.layout in (0, 1, 3) and self.r2.random() < (0.1 if getattr(self, 'tensor_map_friendly', False) else 0.2):
            t.view = (self.r2.randint(1, 20), self.r2.randint(0, 20))
        self.tensors.append(t)
        return t

    def region(self, ctx, t, tile_dims, fixed=None, shift=False):
        """Kernel text of t.at(...) for a tile of tile_dims at ctx's origins, and per tensor
        dim the reference index text as a function of the tile's loop variables. With shift,
        some corners move by a few elements (also before the tensor's start: those elements
        read as 0, and writes to them are dropped)."""
        tile_dims = [d for d in tile_dims]
        args, ridx = [], []
        pos = {}
        for n, d in enumerate(tile_dims):
            pos[d.upper()] = n
        trailing = list(t.dims[len(t.dims) - len(pos):]) == [d.upper() for d in tile_dims]
        use_slice = len(pos) < len(t.dims) and (not trailing or self.chance(0.5))
        for D in t.dims:
            if D in pos:
                o = ctx.origin[D.lower()]
                if shift and self.chance(0.4):
                    c = self.pick([-3, -2, -1, 1, 2])
                    o = '%s %s %d' % (o, '-' if c < 0 else '+', abs(c))
                args.append('T::slice(%s)' % o if use_slice else o)
                ridx.append(('tile', pos[D], o))
            elif D == 'B':
                args.append(self.bvar)
                ridx.append(('fixed', self.bvar))
            else:
                e = fixed[D]
                args.append(e)
                ridx.append(('fixed', e))
        return '%s.at(%s)' % (t.name, ', '.join(args)), ridx

    def ref_tensor_index(self, ridx, loop_vars):
        out = []
        for x in ridx:
            if x[0] == 'tile':
                out.append('(%s) + %s' % (x[2], loop_vars[x[1]]))
            else:
                out.append(x[1])
        return out

    def dims_text(self, t):
        return ', '.join('k%s' % D for D in t.dims)

    # --- loops in the reference ----------------------------------------------------------

    def ref_loops(self, ctx, dims, body):
        """Reference loops over a tile of dims, with loop variables v0, v1..."""
        vs = ['v%d' % n for n in range(len(dims))]
        for n, d in enumerate(dims):
            self.emit(ctx.indent + n, None, 'for (int %s = 0; %s < %s; ++%s)' % (vs[n], vs[n], self.extname(d), vs[n]))
        for line in body(vs):
            self.emit(ctx.indent + len(dims), None, line)

    # --- ops ----------------------------------------------------------------------------

    def op_load(self, ctx, dims=None, buf=None, tensor=None, ty=None):
        dims = dims or self.pick(ctx.shapes, [s[1] for s in ctx.shape_w])
        if tensor is None:
            cands = [t for t in self.tensors if t.role == 'in' and [D for D in t.dims if D != 'B'] ==
                     [d.upper() for d in dims]]
            if cands and self.chance(0.3):
                tensor = self.pick(cands)
            else:
                tty = ty or self.rand_ty()
                tensor = self.new_tensor('in', tty, self.tensor_dims(dims))
                k = TY[tty].kind
                if k == 'i':
                    lo, hi = self.pick([(-100, 100), (-5, 5), (0, 50), (-1000, 1000)])
                    lo, hi = max(lo, TY[tty].lo), min(hi, TY[tty].hi)
                    if tty == 'i8':
                        lo, hi = max(lo, -100), min(hi, 100)
                elif k == 'b':
                    lo, hi = 0, 1
                else:
                    lo, hi = self.pick([(-1, 1), (-1, 1), (0, 2), (-4, 4), (-0.5, 3)])
                tensor.lo, tensor.hi = float(lo), float(hi)
        if buf is None:
            # Past the tensor's edge a copy reads 0: the buffer's range holds 0.
            lo, hi = min(tensor.lo, 0.0), max(tensor.hi, 0.0)
            bt = self.fit_ty(lo, hi, TY[tensor.ty].kind in 'ib') if self.chance(0.6) else tensor.ty
            if not fits(bt, lo, hi):
                bt = tensor.ty
            buf = self.new_buf(self.rand_scope(dims), bt, dims)
        lo, hi = min(tensor.lo, 0.0), max(tensor.hi, 0.0)
        at, ridx = self.region(ctx, tensor, dims, shift=self.chance(0.15))
        self.emit(ctx, 'T::copy(%s, %s);' % (at, buf.name))

        def body(vs):
            idx = self.ref_tensor_index(ridx, vs)
            return ['%s_r[%s] = fz::cvt(fz::val(fz::read(%s_v, {%s}, {%s})), %s);' % (
                buf.name, self.flat(buf.dims, vs), tensor.name, ', '.join(idx), self.dims_text(tensor),
                TY[buf.ty].fmt)]
        self.ref_loops(ctx, dims, body)
        self.def_buf(buf, lo, hi, exact=TY[tensor.ty].kind in 'ib')
        return buf

    # Expressions ----------------------------------------------------------------------

    def leaf(self, env):
        kinds = ['buf', 'const', 'index', 'scalar', 'tensor']
        w = [60 if env.reads else 0, 18, 8 if env.index_leaves else 0, 6, 5 if env.tensor_reads else 0]
        k = self.pick(kinds, w)
        if k == 'buf':
            e = self.pick(env.reads, [1 if e.buf.used else 3 for e in env.reads])
            e.buf.used = True
            return e
        if k == 'index':
            return self.pick(env.index_leaves)
        if k == 'scalar':
            opts = env.temps + self.block_scalars + \
                [Ex(n, 'fz::val((long double)%s)' % self.scalar_value(n), t, v, v, TY[t].kind == 'i')
                 for n, (t, v) in self.scalars.items()]
            for tb in self.tables:
                if tb.defined:
                    c = self.r.randint(0, self.ext(tb.dims[0]) - 1)
                    e = Ex('%s(%d)' % (tb.name, c), '%s_r[%d]' % (tb.name, c), tb.ty, tb.lo, tb.hi, tb.exact)
                    e.buf = tb
                    opts.append(e)
            e = self.pick(opts)
            e.used = True
            if hasattr(e, 'buf'):
                e.buf.used = True
            return e
        if k == 'tensor':
            return self.pick(env.tensor_reads)
        return self.const()

    def const(self, ty=None):
        ty = ty or self.pick(['f32', 'i32', 'f64'], [70, 25, 5])
        if ty == 'i32':
            v = self.pick([0, 1, 2, 3, -1, 5, 7, -4, 10])
            return ival(v)
        v = self.pick([0.5, 2.0, -1.0, 0.25, 1.5, 3.0, -0.75, 0.125, 1.0, 0.1, 0.3, -2.5, 1.7])
        if ty == 'f64':
            return Ex(repr(v), 'fz::val((long double)%r)' % v, 'f64', v, v)
        return Ex(flit(v), 'fz::val((long double)%s)' % flit(v), 'f32', v, v)

    def expr(self, env, depth):
        if depth <= 0 or self.chance(0.25):
            return self.leaf(env)
        for _ in range(6):
            e = self.try_op(env, depth)
            if e is not None:
                return e
        return self.leaf(env)

    def bin_arith(self, op, a, b):
        t = common(a.ty, b.ty)
        if op == '+':
            lo, hi = a.lo + b.lo, a.hi + b.hi
        elif op == '-':
            lo, hi = a.lo - b.hi, a.hi - b.lo
        else:
            ps = [a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi]
            lo, hi = min(ps), max(ps)
        lo, hi = widen(lo, hi, t)
        if not fits(t, lo, hi):
            return None
        fn = {'+': 'add', '-': 'sub', '*': 'mul'}[op]
        return Ex('(%s %s %s)' % (a.k, op, b.k), 'fz::%s(%s, %s, %s)' % (fn, a.conv(t), b.conv(t), TY[t].fmt), t,
                  lo, hi, a.exact and b.exact and TY[t].kind == 'i')

    def cond(self, env, depth):
        """A bool expression."""
        c = self.pick(['cmp', 'cmp', 'bool', 'index', 'and', 'not'])
        if c == 'bool':
            bs = [e for e in env.reads if e.ty == 'bool']
            if bs:
                return self.pick(bs)
            c = 'cmp'
        if c in ('and', 'not') and depth > 0:
            if c == 'not':
                a = self.cond(env, depth - 1)
                return Ex('(!%s)' % a.k, 'fz::lnot(%s)' % a.conv('bool'), 'bool', 0, 1)
            a, b = self.cond(env, depth - 1), self.cond(env, depth - 1)
            op = self.pick(['&&', '||'])
            return Ex('(%s %s %s)' % (a.k, op, b.k), 'fz::%s(%s, %s)' % ('land' if op == '&&' else 'lor',
                                                                          a.conv('bool'), b.conv('bool')), 'bool', 0, 1)
        if c == 'index':
            a = self.pick(env.index_leaves)
            m = self.pick([2, 3, 5])
            return self.cmp_of(Ex('(%s %% %d)' % (a.k, m), 'fz::mod(%s, fz::val(%d))' % (a.r, m), 'i32', 0, m - 1, True),
                               ival(self.r.randint(0, m - 1)), '==')
        a = self.expr(env, max(depth - 1, 0))
        b = self.expr(env, max(depth - 2, 0)) if self.chance(0.6) else self.const()
        return self.cmp_of(a, b, self.pick(['<', '<=', '>', '>=', '==', '!=']))

    def cmp_of(self, a, b, op):
        t = common(a.ty, b.ty)
        fn = {'<': 'lt', '<=': 'le', '>': 'gt', '>=': 'ge', '==': 'eq', '!=': 'ne'}[op]
        return Ex('(%s %s %s)' % (a.k, op, b.k), 'fz::%s(%s, %s)' % (fn, a.conv(t), b.conv(t)), 'bool', 0, 1,
                  a.exact and b.exact)

    def arith_operand(self, e):
        """e usable as an operand of ?: with another type: extended floats as float."""
        if TY[e.ty].kind == 'x':
            return Ex('float(%s)' % e.k, e.r, 'f32', e.lo, e.hi)
        return e

    def try_op(self, env, depth):
        op = self.pick(['+', '-', '*', 'div', 'neg', 'min', 'max', 'abs', 'math', 'fma', 'sel', 'cast', 'int', 'call'],
                       [14, 10, 12, 5, 3, 6, 6, 4, 10, 3, 7, 5, 5, 4])
        d = depth - 1
        if op == 'call':
            return self.call(self.expr(env, d), self.expr(env, d))
        if op in '+-*':
            return self.bin_arith(op, self.expr(env, d), self.expr(env, d))
        if op == 'div':
            a = self.expr(env, d)
            if self.chance(0.5):
                c = self.pick([2.0, 3.0, 0.5, 7.0, -4.0])
                den = Ex(flit(c), 'fz::val((long double)%s)' % flit(c), 'f32', c, c)
            else:
                b = self.expr(env, d)
                if TY[b.ty].kind == 'i' and max(abs(b.lo), abs(b.hi)) > 2**24:
                    return None
                ab = self.abs_of(b)
                if ab is None:
                    return None
                one = Ex('1.0f', 'fz::val(1)', 'f32', 1, 1)
                den = self.bin_arith('+', ab, one)
                if den is None:
                    return None
            t = common(a.ty, den.ty)
            if TY[t].kind != 'f':
                return None
            if den.lo <= 0 < den.hi or den.lo < 0 <= den.hi:
                return None
            dl = min(abs(den.lo), abs(den.hi))
            m = max(abs(a.lo), abs(a.hi)) / dl
            lo, hi = widen(-m, m, t)
            if not fits(t, lo, hi):
                return None
            return Ex('(%s / %s)' % (a.k, den.k), 'fz::div(%s, %s, %s)' % (a.conv(t), den.conv(t), TY[t].fmt), t, lo, hi)
        if op == 'neg':
            a = self.expr(env, d)
            t = promote(a.ty)
            if t == 'bool':
                return None
            return Ex('(- %s)' % a.k, 'fz::neg(%s)' % a.conv(t), t, -a.hi, -a.lo, a.exact)
        if op in ('min', 'max'):
            a, b = self.expr(env, d), self.expr(env, d)
            t = common_np(a.ty, b.ty)
            if t == 'bool':
                return None
            if op == 'min':
                lo, hi = min(a.lo, b.lo), min(a.hi, b.hi)
            else:
                lo, hi = max(a.lo, b.lo), max(a.hi, b.hi)
            return Ex('T::%s(%s, %s)' % (op, a.k, b.k), 'fz::%s(%s, %s)' % (op, a.conv(t), b.conv(t)), t, lo, hi,
                      a.exact and b.exact)
        if op == 'abs':
            return self.abs_of(self.expr(env, d))
        if op == 'math':
            return self.math(self.expr(env, d))
        if op == 'fma':
            a, b, c = self.expr(env, d), self.expr(env, d), self.expr(env, d)
            t = math_t(common_np(common_np(a.ty, b.ty), c.ty))
            ps = [a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi]
            lo, hi = widen(min(ps) + c.lo, max(ps) + c.hi, t)
            if not fits(t, lo, hi):
                return None
            return Ex('T::fma(%s, %s, %s)' % (a.k, b.k, c.k),
                      'fz::fma(%s, %s, %s, %s)' % (a.conv(t), b.conv(t), c.conv(t), TY[t].fmt), t, lo, hi)
        if op == 'sel':
            c = self.cond(env, 1)
            a, b = self.expr(env, d), self.expr(env, d)
            if a.ty == b.ty:
                t = a.ty
            else:
                a, b = self.arith_operand(a), self.arith_operand(b)
                t = common(a.ty, b.ty)
            return Ex('(%s ? %s : %s)' % (c.k, a.k, b.k), 'fz::sel(%s, %s, %s)' % (c.r, a.conv(t), b.conv(t)), t,
                      min(a.lo, b.lo), max(a.hi, b.hi), a.exact and b.exact and c.exact)
        if op == 'cast':
            a = self.expr(env, d)
            t = self.pick(['f32', 'f64', 'i32', 'bf16', 'f16', 'i64', 'i16'], [30, 10, 20, 10, 10, 5, 5])
            lo, hi = a.lo, a.hi
            if TY[t].kind == 'i':
                lo, hi = math.trunc(lo), math.trunc(hi)
            if not fits(t, lo, hi) or TY[a.ty].kind == 'b':
                return None
            if TY[t].kind == 'x':
                lo, hi = widen(lo, hi, t)
                if not fits(t, lo, hi):
                    return None
            form = 'T::cast<%s>(%s)' % (TY[t].cpp, a.k) if TY[t].kind == 'x' or self.chance(0.4) else \
                '%s(%s)' % (TY[t].cpp if ' ' not in TY[t].cpp and '::' not in TY[t].cpp else TY[t].cpp, a.k)
            if '::' in TY[t].cpp and not form.startswith('T::cast'):
                form = 'T::cast<%s>(%s)' % (TY[t].cpp, a.k)
            return Ex(form, 'fz::cvt(%s, %s)' % (a.conv(arith(a.ty)), TY[t].fmt), t, lo, hi,
                      a.exact and TY[a.ty].kind == 'i' and TY[t].kind == 'i')
        if op == 'int':
            a = self.expr(env, d)
            t = promote(a.ty)
            if TY[t].kind != 'i':
                return None
            which = self.pick(['/', '%', '&', '>>', '<<'])
            c = self.pick([2, 3, 4, 7])
            if which == '/':
                lo, hi = sorted([math.trunc(a.lo / c), math.trunc(a.hi / c)])
                return Ex('(%s / %d)' % (a.k, c), 'fz::div(%s, fz::val(%d), %s)' % (a.conv(t), c, TY[t].fmt), t,
                          min(lo, 0), max(hi, 0), a.exact)
            if not a.exact:
                return None
            if which == '%':
                return Ex('(%s %% %d)' % (a.k, c), 'fz::mod(%s, fz::val(%d))' % (a.conv(t), c), t,
                          -(c - 1) if a.lo < 0 else 0, c - 1 if a.hi > 0 else 0, True)
            if a.lo < 0:
                return None
            if which == '&':
                return Ex('(%s & %d)' % (a.k, c), 'fz::band(%s, fz::val(%d))' % (a.conv(t), c), t, 0, c, True)
            if which == '>>':
                return Ex('(%s >> %d)' % (a.k, c % 3 + 1), 'fz::shr(%s, fz::val(%d))' % (a.conv(t), c % 3 + 1), t,
                          0, a.hi, True)
            sh = c % 3 + 1
            if not fits(t, 0, a.hi * (1 << sh)):
                return None
            return Ex('(%s << %d)' % (a.k, sh), 'fz::shl(%s, fz::val(%d))' % (a.conv(t), sh), t, 0, a.hi * (1 << sh), True)
        return None

    def call(self, a, b):
        """a OP b through a [[tile::macro]] function or a lambda (inlined by the frontend): the
        arguments convert to the parameter types, the result to the return type."""
        if 'bool' in (a.ty, b.ty):
            return None
        ps = []
        for e in (a, b):
            opts = ['f32', 'f64'] + (['i32', 'i64'] if TY[e.ty].kind == 'i' else [])
            ps.append(self.pick(opts))
        op = self.pick('+-*')
        args = []
        for e, p in zip((a, b), ps):
            args.append(Ex(e.k, e.conv(p), p, e.lo, e.hi, e.exact and TY[p].kind == 'i'))
        body = self.bin_arith(op, args[0], args[1])
        if body is None:
            return None
        n = len(self.helpers)
        if self.chance(0.5):
            rt = self.pick(['f32', 'f64', body.ty]) if TY[body.ty].kind == 'f' else body.ty
            if not fits(rt, body.lo, body.hi):
                rt = body.ty
            name = 'helper%d' % n
            self.helpers.append('[[tile::macro]] %s %s(%s a, %s b) { return a %s b; }' % (
                TY[rt].cpp, name, TY[ps[0]].cpp, TY[ps[1]].cpp, op))
        else:
            rt = body.ty
            name = 'lambda%d' % n
            self.lambdas.append('auto %s = [&](%s a, %s b) { return a %s b; };' % (name, TY[ps[0]].cpp, TY[ps[1]].cpp,
                                                                                 op))
            self.helpers.append(None)
        return Ex('%s(%s, %s)' % (name, a.k, b.k), 'fz::cvt(%s, %s)' % (body.r, TY[rt].fmt), rt, body.lo, body.hi,
                  body.exact and TY[rt].kind == 'i')

    def abs_of(self, a):
        t = arith(a.ty)
        if t == 'bool':
            return None
        if TY[t].kind == 'i' and t in ('i8', 'i16', 'i32', 'i64') and a.lo <= TY[t].lo:
            return None
        lo = 0.0 if a.lo <= 0 <= a.hi else min(abs(a.lo), abs(a.hi))
        return Ex('T::abs(%s)' % a.k, 'fz::abs(%s)' % a.conv(t), t, lo, max(abs(a.lo), abs(a.hi)), a.exact)

    def math(self, a):
        fn = self.pick(['exp', 'exp2', 'log', 'log2', 'sqrt', 'rsqrt', 'tanh', 'sigmoid'])
        t = math_t(a.ty)
        if TY[a.ty].kind == 'b':
            return None
        if fn in ('exp', 'exp2'):
            top = 8.0 if fn == 'exp' else 12.0
            if a.hi > top:
                c = Ex(flit(top / 2), 'fz::val((long double)%s)' % flit(top / 2), 'f32', top / 2, top / 2)
                t2 = common_np(a.ty, 'f32')
                a = Ex('T::min(%s, %s)' % (a.k, c.k), 'fz::min(%s, %s)' % (a.conv(t2), c.conv(t2)), t2,
                       min(a.lo, top / 2), min(a.hi, top / 2))
                t = math_t(a.ty)
            f = math.exp if fn == 'exp' else (lambda x: 2.0 ** x)
            lo, hi = f(max(a.lo, -700)), f(a.hi)
        elif fn in ('log', 'log2', 'sqrt', 'rsqrt'):
            floor = {'log': 0.05, 'log2': 0.05, 'sqrt': 0.0, 'rsqrt': 0.2}[fn]
            if a.lo < floor:
                ab = self.abs_of(a)
                if ab is None:
                    return None
                if fn != 'sqrt':
                    c = self.pick([0.25, 0.5, 1.0, 2.0]) if fn != 'rsqrt' else self.pick([0.25, 0.5, 1.0])
                    a = self.bin_arith('+', ab, Ex(flit(c), 'fz::val((long double)%s)' % flit(c), 'f32', c, c))
                    if a is None:
                        return None
                else:
                    a = ab
                t = math_t(a.ty)
            g = {'log': math.log, 'log2': math.log2, 'sqrt': math.sqrt, 'rsqrt': lambda x: 1 / math.sqrt(x)}[fn]
            alo = max(a.lo, 1e-300)
            v = [g(alo), g(a.hi)] if fn != 'sqrt' else [math.sqrt(max(a.lo, 0)), math.sqrt(a.hi)]
            lo, hi = min(v), max(v)
        elif fn == 'tanh':
            lo, hi = math.tanh(a.lo), math.tanh(a.hi)
        else:
            lo, hi = 1 / (1 + math.exp(min(-a.lo, 700))), 1 / (1 + math.exp(min(-a.hi, 700)))
        lo, hi = widen(lo, hi, t)
        if not fits(t, lo, hi):
            return None
        name = {'exp': 'Exp', 'exp2': 'Exp2', 'log': 'Log', 'log2': 'Log2', 'sqrt': 'Sqrt', 'rsqrt': 'Rsqrt',
                'tanh': 'Tanh', 'sigmoid': 'Sigmoid'}[fn]
        if fn == 'sigmoid':
            return Ex('T::sigmoid(%s)' % a.k, 'fz::sigmoid(%s, %s)' % (a.conv(t), TY[t].fmt), t, lo, hi)
        return Ex('T::%s(%s)' % (fn, a.k), 'fz::call(fz::%s, %s, %s)' % (name, a.conv(t), TY[t].fmt), t, lo, hi)

    # Element-wise loops ---------------------------------------------------------------

    class Env:
        pass

    def make_env(self, ctx, dims, dst, vs):
        """What a parallel loop over dims (variables vs) may read: buffers whose dims are a
        subset of the loop's (broadcast, transposed), [1] buffers, the written buffer at
        its own element only; indices; guarded tensor elements."""
        env = Gen.Env()
        env.reads, env.temps, env.index_leaves, env.tensor_reads = [], [], [], []
        pos = {d: n for n, d in enumerate(dims)}
        for b in self.bufs:
            if not b.defined or b.acc:
                continue
            if b is dst:
                idx = vs
            elif b.dims == ('1',):
                idx = ['0']
            elif len(set(b.dims)) == len(b.dims) and all(d in pos for d in b.dims):
                idx = [vs[pos[d]] for d in b.dims]
                if b.scope == 'fragment' and list(b.dims) != [d for d in dims if d in b.dims] and self.chance(0.5):
                    continue  # transposed fragment reads: less often
            else:
                continue
            e = Ex('%s(%s)' % (b.name, ', '.join(idx)), '%s_r[%s]' % (b.name, self.flat(b.dims, idx)), b.ty, b.lo,
                   b.hi, b.exact)
            e.buf = b
            env.reads.append(e)
        for n, d in enumerate(dims):
            if d == '1':
                continue
            env.index_leaves.append(Ex(vs[n], 'fz::val(%s)' % vs[n], 'i32', 0, self.ext(d) - 1, True))
            if d not in ctx.origin:
                continue  # a dimension of its own: no global index
            o = ctx.origin[d]
            top = self.size(d.upper()) + 3 * self.ext(d)
            env.index_leaves.append(Ex('(%s + %s)' % (o, vs[n]), 'fz::val((%s) + %s)' % (o, vs[n]), 'i32', 0, top, True))
        for name, trips in ctx.loop_vars:
            env.index_leaves.append(Ex(name, 'fz::val(%s)' % name, 'i32', 0, max(trips - 1, 0), True))
        env.index_leaves.append(Ex(self.bvars[0], 'fz::val(%s)' % self.bvars[0], 'i32', 0, self.grid[0], True))
        if not env.index_leaves:
            env.index_leaves.append(ival(1))
        # Tensor elements, read directly under a guard (a C++ ?: must not read past the edge).
        for t in self.tensors:
            if t.role != 'in' or TY[t.ty].kind == 'b':
                continue
            td = [D for D in t.dims if D != 'B']
            if not all(D.lower() in pos for D in td) or len(td) == 0:
                continue
            idx, conds = [], []
            for D in t.dims:
                if D == 'B':
                    idx.append(self.bvar)
                else:
                    g = '%s + %s' % (ctx.origin[D.lower()], vs[pos[D.lower()]])
                    idx.append(g)
                    conds.append('%s < %s' % (g, D))
            el = '%s(%s)' % (t.name, ', '.join(idx))
            zero, zt = ('0.0', 'f64') if t.ty == 'f64' else ('0', 'i32') if TY[t.ty].kind == 'i' else ('0.0f', 'f32')
            if TY[t.ty].kind == 'x':
                el = 'float(%s)' % el
            rt = common(t.ty, zt) if t.ty != zt else zt
            vread = 'fz::val(fz::read(%s_v, {%s}, {%s}))' % (t.name, ', '.join(idx), self.dims_text(t))
            vr = vread if rt == t.ty or (TY[t.ty].kind == 'x' and rt == 'f32') else 'fz::cvt(%s, %s)' % (vread, TY[rt].fmt)
            cond = ' && '.join(conds)
            env.tensor_reads.append(Ex('((%s) ? %s : %s)' % (cond, el, zero),
                                       'fz::sel(fz::val((%s) ? 1 : 0), %s, fz::val(0))' % (cond, vr), rt,
                                       min(t.lo, 0), max(t.hi, 0), TY[t.ty].kind == 'i'))
        return env

    def loop_header(self, dims, vs):
        if len(dims) == 1:
            return 'for (int %s : T::parallel(%s))' % (vs[0], self.extname(dims[0]))
        return 'for (auto [%s] : T::parallel(%s))' % (', '.join(vs), self.shape_str(dims))

    def assign_fit(self, e, t):
        """e clamped into the range of type t where it does not fit."""
        if fits(t, e.lo, e.hi) and (TY[t].kind != 'i' or (e.lo >= TY[t].lo and e.hi <= TY[t].hi)):
            return e
        ty = TY[t]
        if ty.kind == 'b':
            return e
        if ty.kind == 'i':
            lo, hi = max(ty.lo, -1000), min(ty.hi, 1000)
        else:
            lo, hi = -min(ty.fmax * 0.5, 1000), min(ty.fmax * 0.5, 1000)
        if TY[e.ty].kind == 'i' or e.ty == 'bool':
            cl, ch = ival(int(lo)), ival(int(hi))
        else:
            cl = Ex(flit(lo), 'fz::val((long double)%s)' % flit(lo), 'f32', lo, lo)
            ch = Ex(flit(hi), 'fz::val((long double)%s)' % flit(hi), 'f32', hi, hi)
        t1 = common_np(e.ty, cl.ty)
        inner = Ex('T::max(%s, %s)' % (e.k, cl.k), 'fz::max(%s, %s)' % (e.conv(t1), cl.conv(t1)), t1, max(e.lo, lo),
                   max(e.hi, lo), e.exact)
        t2 = common_np(inner.ty, ch.ty)
        return Ex('T::min(%s, %s)' % (inner.k, ch.k), 'fz::min(%s, %s)' % (inner.conv(t2), ch.conv(t2)), t2,
                  min(inner.lo, hi), min(inner.hi, hi), e.exact)

    def op_elementwise(self, ctx, dims=None, dst=None):
        dims = dims or self.pick(ctx.shapes, [s[1] for s in ctx.shape_w])
        if dst is None:
            cands = [b for b in self.bufs if b.defined and not b.acc and not b.frozen and b.dims == tuple(dims)
                     and b.scope != 'local']
            if cands and self.chance(0.3):
                dst = self.pick(cands)
        vs = ['i%d' % n for n in range(len(dims))]
        env = self.make_env(ctx, dims, dst, vs)
        if not env.reads and not env.tensor_reads:
            return None
        lines, rlines = [], []
        # Temporaries.
        for _ in range(self.r.choice([0, 0, 1, 2])):
            e = self.expr(env, 2)
            tt = self.pick(['f32', 'f64', 'i32', 'auto_same'], [50, 10, 15, 25])
            if tt == 'auto_same':
                tt = promote(e.ty) if TY[e.ty].kind != 'x' else 'f32'
            if tt == 'bool' or not fits(tt, e.lo, e.hi):
                tt = 'f32' if fits('f32', e.lo, e.hi) else None
            if tt is None:
                continue
            name = 't%d' % self.ntmp
            self.ntmp += 1
            lines.append('%s %s = %s;' % (TY[tt].cpp, name, e.k))
            rlines.append('fz::I %s = %s;' % (name, 'fz::cvt(%s, %s)' % (e.conv(arith(e.ty)), TY[tt].fmt)))
            lo, hi = (math.trunc(e.lo), math.trunc(e.hi)) if TY[tt].kind == 'i' else (e.lo, e.hi)
            env.temps.append(Ex(name, name, tt, lo, hi, e.exact and TY[tt].kind == 'i'))
        form = self.pick(['assign', 'assign', 'assign', 'if'])
        e1 = self.expr(env, self.pick([1, 2, 3, 3, 4]))
        for t in env.temps:
            if not getattr(t, 'used', False):
                # Every temporary reaches the result.
                c = self.bin_arith(self.pick('+-*'), e1, t)
                if c is None:
                    tt = common_np(e1.ty, t.ty)
                    c = Ex('T::max(%s, %s)' % (e1.k, t.k), 'fz::max(%s, %s)' % (e1.conv(tt), t.conv(tt)), tt,
                           max(e1.lo, t.lo), max(e1.hi, t.hi), e1.exact and t.exact)
                e1 = c
        if form == 'if':
            c = self.cond(env, 1)
            e2 = self.expr(env, 2)
        if dst is None:
            lo, hi = (e1.lo, e1.hi) if form != 'if' else (min(e1.lo, e2.lo), max(e1.hi, e2.hi))
            t = self.fit_ty(lo, hi, TY[e1.ty].kind in 'ib')
            if self.chance(0.5) and fits(arith(e1.ty), lo, hi) and arith(e1.ty) in TY and \
                    TY[arith(e1.ty)].kind != 'b':
                t = arith(e1.ty) if self.chance(0.5) else t
            dst = self.new_buf(self.rand_scope(dims, allow_local=False), t, dims)
            # New buffers may not be read in their own defining loop (env was built before).
        e1 = self.assign_fit(e1, dst.ty).assignable(dst.ty)
        el = '%s(%s)' % (dst.name, ', '.join(vs))
        rel = '%s_r[%s]' % (dst.name, self.flat(dst.dims, vs))
        if form == 'if':
            e2 = self.assign_fit(e2, dst.ty).assignable(dst.ty)
            lines.append('if (%s)' % c.k)
            lines.append('  %s = %s;' % (el, e1.k))
            lines.append('else')
            lines.append('  %s = %s;' % (el, e2.k))
            rlines.append('%s = fz::sel(%s, fz::cvt(%s, %s), fz::cvt(%s, %s));' % (
                rel, c.conv('bool'), e1.conv(arith(e1.ty)), TY[dst.ty].fmt, e2.conv(arith(e2.ty)), TY[dst.ty].fmt))
            lo, hi = min(e1.lo, e2.lo), max(e1.hi, e2.hi)
            exact = e1.exact and e2.exact and c.exact
        else:
            lines.append('%s = %s;' % (el, e1.k))
            rlines.append('%s = fz::cvt(%s, %s);' % (rel, e1.conv(arith(e1.ty)), TY[dst.ty].fmt))
            lo, hi, exact = e1.lo, e1.hi, e1.exact
        if TY[dst.ty].kind == 'i':
            lo, hi = math.trunc(lo), math.trunc(hi)
        if TY[dst.ty].kind in 'fxi' and self.chance(0.1):
            # The generator's own static range of the element, checked in the kernel.
            # Margin: rounding to the element type (half an ulp, or a subnormal step).
            p = TY[dst.ty].p or 60
            tiny = {'e4m3': 2.0**-9, 'e5m2': 2.0**-16, 'f16': 2.0**-24}.get(dst.ty, 0.0)
            m = max(abs(lo), abs(hi)) * 2.0**(1 - p) + tiny + 1e-300
            lines.append('T::device_assert(%s >= %r && %s <= %r, "static range of %s");' % (
                el, lo - m, el, hi + m, dst.name))
        if dst.defined and dst in [b for b in self.bufs]:
            pass
        self.emit(ctx, self.loop_header(dims, vs) + ' {')
        for l in lines:
            self.emit(ctx.indent + 1, l)
        self.emit(ctx, '}')

        def body(rv):
            out = []
            for l in rlines:
                for a, b in zip(vs, rv):
                    l = l.replace('\x00', '')
                out.append(l)
            return ['{'] + ['  int %s = %s;' % (a, b) for a, b in zip(vs, rv)] + ['  ' + l for l in out] + ['}']
        self.ref_loops(ctx, dims, body)
        self.def_buf(dst, lo, hi, exact and TY[dst.ty].kind in 'ib')
        return dst

    # Reductions, scans, copies, fills -----------------------------------------------------

    def op_reduce(self, ctx, src=None, dst=None, dim=None, kind=None, clear=None):
        if src is None:
            cands = [b for b in self.bufs if b.defined and not b.acc and self.plain(b) and len(b.dims) <= 2 and TY[b.ty].kind != 'b']
            if not cands:
                return None
            src = self.pick_src(cands)
        if dim is None:
            dim = self.r.randint(0, len(src.dims) - 1)
        kept = tuple(d for n, d in enumerate(src.dims) if n != dim) or ('1',)
        kind = kind or self.pick(['sum', 'max', 'min', 'absmax', 'abssum'], [35, 20, 15, 15, 15])
        n = self.ext(src.dims[dim])
        m = max(abs(src.lo), abs(src.hi))
        if kind == 'sum':
            lo, hi = min(src.lo * n, src.lo), max(src.hi * n, src.hi)
        elif kind in ('max', 'min'):
            lo, hi = src.lo, src.hi
        elif kind == 'absmax':
            lo, hi = 0.0, m
        else:
            lo, hi = 0.0, m * n
        if clear is None:
            clear = True
            if dst is None:
                cands = [b for b in self.bufs if b.defined and not b.acc and not b.frozen and b.dims == kept
                         and TY[b.ty].kind != 'b' and b is not src]
                if cands and self.chance(0.35):
                    dst = self.pick(cands)
                    clear = False
        if not clear:
            if kind == 'sum':
                lo, hi = lo + min(dst.lo, 0), hi + max(dst.hi, 0)
            elif kind == 'abssum':
                lo, hi = min(dst.lo, 0), hi + max(dst.hi, 0)
            elif kind == 'min':
                lo, hi = min(lo, dst.lo), min(hi, dst.hi)
            else:  # max, absmax: max(dst, terms)
                lo, hi = max(lo, dst.lo), max(hi, dst.hi)
        at_lo, at_hi = lo, hi
        if dst is None:
            t = self.fit_ty(lo, hi, TY[src.ty].kind == 'i',
                            choices=None if TY[src.ty].kind == 'i' else FLOATS)
            if TY[t].kind == 'b':
                t = 'f32'
            dst = self.new_buf(self.rand_scope(kept), t, kept)
        at = arith(dst.ty)
        # The result must fit the destination's type; the elements of a max or min need not
        # (with clear = false, max(dst, terms) fits where the terms do not: FOUND.md #3).
        if not fits(at, at_lo, at_hi) or not fits(dst.ty, *widen(lo, hi, dst.ty)):
            return None
        if TY[at].kind == 'i' and TY[src.ty].kind != 'i':
            return None  # float terms truncated one by one: legal, but no interesting rounding model
        self.emit(ctx, 'T::reduce_%s(%s, %s, %d%s);' % (kind, src.name, dst.name, dim, '' if clear and self.chance(0.6)
                                                         else ', %s' % ('true' if clear else 'false')))
        rv = ['v%d' % i for i in range(len(kept))]
        k = ctx.indent

        def idx_src(rv, r):
            out, n2 = [], 0
            for q in range(len(src.dims)):
                if q == dim:
                    out.append(r)
                else:
                    out.append(rv[n2])
                    n2 += 1
            return out
        for q, d in enumerate(kept):
            self.emit(k + q, None, 'for (int %s = 0; %s < %s; ++%s) {' % (rv[q], rv[q], self.extname(d), rv[q]))
        kk = k + len(kept)
        dflat = self.flat(dst.dims, rv if kept != ('1',) else ['0'])
        sflat = self.flat(src.dims, idx_src(rv if kept != ('1',) else [], 'r'))
        term = 'fz::cvt(%s_r[%s], %s)' % (src.name, sflat, TY[at].fmt)
        if kind in ('absmax', 'abssum'):
            term = 'fz::abs(%s)' % term
        if kind in ('sum', 'abssum'):
            self.emit(kk, None, 'fz::Sum s;')
            if not clear:
                self.emit(kk, None, 's.add(%s_r[%s]);' % (dst.name, dflat))
            self.emit(kk, None, 'for (int r = 0; r < %d; ++r) s.add(%s);' % (n, term))
            self.emit(kk, None, '%s_r[%s] = fz::cvt(fz::sum_result(s, %s, s.n - 1), %s);' % (
                dst.name, dflat, TY[at].fmt, TY[dst.ty].fmt))
        else:
            f = 'max' if kind in ('max', 'absmax') else 'min'
            init = '%s_r[%s]' % (dst.name, dflat) if not clear else ('fz::val(0)' if kind == 'absmax' else
                                                                   'fz::val(%sINFINITY)' % ('-' if f == 'max' else ''))
            self.emit(kk, None, 'fz::I m = %s;' % init)
            self.emit(kk, None, 'for (int r = 0; r < %d; ++r) m = fz::%s(m, %s);' % (n, f, term))
            self.emit(kk, None, '%s_r[%s] = fz::cvt(m, %s);' % (dst.name, dflat, TY[dst.ty].fmt))
        for q in range(len(kept)):
            self.emit(k + len(kept) - 1 - q, None, '}')
        src.used = True
        self.def_buf(dst, *widen(lo, hi, dst.ty), exact=src.exact and TY[dst.ty].kind == 'i')
        return dst

    def op_cumsum(self, ctx):
        cands = [b for b in self.bufs if b.defined and not b.acc and self.plain(b) and len(b.dims) <= 2 and TY[b.ty].kind != 'b']
        if not cands:
            return None
        src = self.pick_src(cands)
        dim = self.r.randint(0, len(src.dims) - 1)
        rev = self.chance(0.5)
        n = self.ext(src.dims[dim])
        lo, hi = min(src.lo, src.lo * n, 0), max(src.hi, src.hi * n, 0)
        if self.chance(0.3) and not src.frozen and fits(src.ty, *widen(lo, hi, src.ty)) and \
                TY[src.ty].kind in 'fxi':
            dst = src  # in place
        else:
            t = self.fit_ty(lo, hi, TY[src.ty].kind == 'i', choices=None if TY[src.ty].kind == 'i' else FLOATS)
            if TY[t].kind == 'b' or (TY[t].kind == 'i' and TY[src.ty].kind != 'i'):
                t = 'f32'
            dst = self.new_buf(self.rand_scope(src.dims), t, src.dims)
        at = arith(dst.ty)
        if not fits(at, lo, hi) or not fits(dst.ty, *widen(lo, hi, dst.ty)):
            return None
        self.emit(ctx, 'T::cumsum(%s, %s, %d%s);' % (src.name, dst.name, dim, ', true' if rev else
                                                      ('' if self.chance(0.5) else ', false')))
        other = [q for q in range(len(src.dims)) if q != dim]
        k = ctx.indent
        # A scope of its own (rank 1: a loop of one trip), for s.
        self.emit(k, None, 'for (int o = 0; o < %s; ++o) {' % (self.extname(src.dims[other[0]]) if other else '1'))
        k += 1
        self.emit(k, None, 'fz::Sum s;')
        self.emit(k, None, 'for (int t = 0; t < %d; ++t) {' % n)
        pos = '%d - 1 - t' % n if rev else 't'
        idx = [pos if q == dim else 'o' for q in range(len(src.dims))]
        fl = self.flat(src.dims, idx)
        self.emit(k + 1, None, 's.add(fz::cvt(%s_r[%s], %s));' % (src.name, fl, TY[at].fmt))
        self.emit(k + 1, None, '%s_r[%s] = fz::cvt(fz::sum_result(s, %s, s.n - 1), %s);' % (
            dst.name, fl, TY[at].fmt, TY[dst.ty].fmt))
        self.emit(k, None, '}')
        self.emit(k - 1, None, '}')
        src.used = True
        self.def_buf(dst, *widen(lo, hi, dst.ty), exact=src.exact and TY[dst.ty].kind == 'i')
        return dst

    def op_copy(self, ctx):
        cands = [b for b in self.bufs if b.defined and not b.acc and self.plain(b)]
        if not cands:
            return None
        src = self.pick_src(cands)
        t = self.fit_ty(src.lo, src.hi, TY[src.ty].kind in 'ib')
        if TY[src.ty].kind in 'fx' and TY[t].kind == 'i':
            lo, hi = math.trunc(src.lo), math.trunc(src.hi)
        else:
            lo, hi = src.lo, src.hi
        if TY[src.ty].kind == 'b':
            t = self.pick(['bool', 'i32', 'f32', 'u8'])
        if not fits(t, lo, hi):
            return None
        dst = self.new_buf(self.rand_scope(src.dims), t, src.dims)
        self.emit(ctx, 'T::copy(%s, %s);' % (src.name, dst.name))
        n = self.numel(src.dims)
        self.emit(ctx, None, 'for (int e = 0; e < %d; ++e) %s_r[e] = fz::cvt(%s_r[e], %s);' % (
            n, dst.name, src.name, TY[t].fmt))
        src.used = True
        self.def_buf(dst, lo, hi, src.exact and TY[t].kind in 'ib')
        return dst

    def op_fill(self, ctx):
        dims = self.pick(ctx.shapes, [s[1] for s in ctx.shape_w])
        t = self.rand_ty()
        b = self.new_buf(self.rand_scope(dims), t, dims)
        form = self.pick(['clear', 'const', 'expr'])
        if form == 'clear':
            self.emit(ctx, 'T::clear(%s);' % b.name)
            v = Ex('0', 'fz::val(0)', 'i32', 0, 0, True)
        else:
            if form == 'const' or TY[t].kind == 'b':
                v = self.const('i32' if TY[t].kind in 'ib' else 'f32')
            else:
                # A scalar expression of the block's indices and the parameters.
                bv = self.pick(self.bvars)
                a = Ex(bv, 'fz::val(%s)' % bv, 'i32', 0, 64, True)
                if TY[t].kind == 'i':
                    v = self.bin_arith('+', a, ival(self.r.randint(-3, 3)))
                else:
                    v = self.bin_arith('*', Ex('float(%s)' % bv, 'fz::val(%s)' % bv, 'f32', 0, 64),
                                       Ex('alpha', 'fz::val(alpha)', 'f32', *self.scalars['alpha'][1:] * 2))
                    if v is None:
                        v = self.const('f32')
            v = self.assign_fit(v, t).assignable(t)
            self.emit(ctx, 'T::fill(%s, %s);' % (b.name, v.k))
        self.emit(ctx, None, 'for (int e = 0; e < %d; ++e) %s_r[e] = fz::cvt(%s, %s);' % (
            self.numel(dims), b.name, v.conv(arith(v.ty)), TY[t].fmt))
        lo, hi = v.lo, v.hi
        if TY[t].kind == 'i':
            lo, hi = math.trunc(lo), math.trunc(hi)
        self.def_buf(b, *widen(lo, hi, t), exact=v.exact)
        return b

    def op_scan_loop(self, ctx):
        """A serial loop inside a parallel loop: running sums or maxima along a row."""
        cands = [b for b in self.bufs if b.defined and not b.acc and self.plain(b) and len(b.dims) == 2
                 and TY[b.ty].kind in 'fx']
        if not cands:
            return None
        src = self.pick_src(cands)
        d0, d1 = src.dims
        n = self.ext(d1)
        f = self.pick(['sum', 'max'])
        lo, hi = (min(src.lo * n, src.lo, 0), max(src.hi * n, src.hi, 0)) if f == 'sum' else (src.lo, src.hi)
        t = self.pick(['f32', 'f32', 'f64']) if src.ty != 'f64' else 'f64'
        if not fits(t, *widen(lo, hi, t)):
            return None
        row = self.new_buf(self.rand_scope((d0,), allow_local=False), t, (d0,))
        full = self.new_buf(self.rand_scope(src.dims, allow_local=False), t, src.dims) if self.chance(0.6) else None
        init = '0.0f' if f == 'sum' else 'T::lowest<float>()'
        if t == 'f64':
            init = '0.0' if f == 'sum' else 'T::lowest<double>()'
        step = ('s = s + %s(i0, c);' if f == 'sum' else 's = T::max(s, %s(i0, c));') % src.name
        self.emit(ctx, 'for (int i0 : T::parallel(%s)) {' % self.extname(d0))
        self.emit(ctx.indent + 1, '%s s = %s;' % (TY[t].cpp, init))
        self.emit(ctx.indent + 1, 'for (int c = 0; c < %s; ++c) {' % self.extname(d1))
        self.emit(ctx.indent + 2, step)
        if full:
            self.emit(ctx.indent + 2, '%s(i0, c) = s;' % full.name)
        self.emit(ctx.indent + 1, '}')
        self.emit(ctx.indent + 1, '%s(i0) = s;' % row.name)
        self.emit(ctx, '}')
        k = ctx.indent
        lowest = '-(long double)FLT_MAX' if t == 'f32' else '-(long double)DBL_MAX'
        self.emit(k, None, 'for (int i0 = 0; i0 < %s; ++i0) {' % self.extname(d0))
        self.emit(k + 1, None, 'fz::I s = fz::val(%s);' % ('0' if f == 'sum' else lowest))
        self.emit(k + 1, None, 'for (int c = 0; c < %s; ++c) {' % self.extname(d1))
        x = 'fz::cvt(%s_r[(i0) * %s + c], %s)' % (src.name, self.extname(d1), TY[t].fmt)
        if f == 'sum':
            self.emit(k + 2, None, 's = fz::cvt(fz::add(s, %s, %s), %s);' % (x, TY[t].fmt, TY[t].fmt))
        else:
            self.emit(k + 2, None, 's = fz::max(s, %s);' % x)
        if full:
            self.emit(k + 2, None, '%s_r[(i0) * %s + c] = s;' % (full.name, self.extname(d1)))
        self.emit(k + 1, None, '}')
        self.emit(k + 1, None, '%s_r[i0] = s;' % row.name)
        self.emit(k, None, '}')
        src.used = True
        self.def_buf(row, *widen(lo, hi, t))
        if full:
            self.def_buf(full, *widen(lo, hi, t))
        return row

    def op_branch(self, ctx):
        """if / else on the block's indices, each side defining the same new buffer."""
        dims = self.pick(ctx.shapes, [s[1] for s in ctx.shape_w])
        bv = self.pick(self.bvars)
        m = self.pick([2, 3])
        cond = '%s %% %d == %d' % (bv, m, self.r.randint(0, m - 1))
        t = self.pick(['f32', 'f32', 'bf16', 'i32', 'f16'])
        dst = self.new_buf(self.rand_scope(dims, allow_local=False), t, dims)
        self.emit(ctx, 'if (%s) {' % cond, 'if (%s) {' % cond)
        inner = ctx.inner()
        ranges = []
        for side in range(2):
            if side == 1:
                self.emit(ctx, '} else {', '} else {')
            dst.defined = False
            if self.chance(0.5):
                c = self.const('i32' if TY[t].kind == 'i' else 'f32')
                self.emit(inner, 'T::fill(%s, %s);' % (dst.name, c.k))
                self.emit(inner, None, 'for (int e = 0; e < %d; ++e) %s_r[e] = fz::cvt(%s, %s);' % (
                    self.numel(dims), dst.name, c.conv(arith(c.ty)), TY[t].fmt))
                ranges.append((c.lo, c.hi))
            else:
                if self.op_elementwise(inner, dims, dst) is None:
                    c = self.const('f32')
                    self.emit(inner, 'T::fill(%s, %s);' % (dst.name, c.k))
                    self.emit(inner, None, 'for (int e = 0; e < %d; ++e) %s_r[e] = fz::cvt(%s, %s);' % (
                        self.numel(dims), dst.name, c.conv('f32'), TY[t].fmt))
                    ranges.append((c.lo, c.hi))
                else:
                    ranges.append((dst.lo, dst.hi))
        self.emit(ctx, '}', '}')
        lo, hi = min(r[0] for r in ranges), max(r[1] for r in ranges)
        if TY[t].kind == 'i':
            lo, hi = math.trunc(lo), math.trunc(hi)
        self.def_buf(dst, *widen(lo, hi, t))
        return dst

    def scalar_value(self, n):
        t, v = self.scalars[n]
        return flit(v) if t == 'f32' else repr(v)

    def op_table(self, ctx):
        """A local table filled by an unrolled scalar loop (every thread holds all of it)."""
        if ctx.loop_vars:
            return None
        u = self.r.randint(1, 8)
        d = self.custom_dim(u)
        t = self.pick(['f32', 'i32', 'f64'])
        b = self.new_buf('local', t, (d,))
        bv = self.pick(self.bvars)
        if t == 'i32':
            a, c = self.r.randint(-3, 3), self.r.randint(-5, 5)
            self.emit(ctx, 'for (int u : T::unroll(%d))' % u, 'for (int u = 0; u < %d; ++u)' % u)
            self.emit(ctx.indent + 1, '%s(u) = u * %d + %s + %d;' % (b.name, a, bv, c),
                      '%s_r[u] = fz::val(u * %d + %s + %d);' % (b.name, a, bv, c))
            vals = [u * a + c + g for u in (0, u - 1) for g in (0, self.grid[self.bvars.index(bv)])]
            self.def_buf(b, min(vals), max(vals), True)
        else:
            al = self.scalar_value('alpha')
            cpp = TY[t].cpp
            self.emit(ctx, 'for (int u : T::unroll(%d))' % u, 'for (int u = 0; u < %d; ++u)' % u)
            self.emit(ctx.indent + 1, '%s(u) = %s(u) * alpha + %s(%s);' % (b.name, cpp, cpp, bv),
                      '%s_r[u] = fz::cvt(fz::add(fz::mul(fz::val(u), fz::val((long double)%s), %s), fz::val(%s), %s), %s);'
                      % (b.name, al, TY[t].fmt, bv, TY[t].fmt, TY[t].fmt))
            m = u * abs(self.scalars['alpha'][1]) + self.grid[self.bvars.index(bv)] + 1
            self.def_buf(b, -m, m)
        self.tables.append(b)
        b.used = False
        return b

    def op_subtile(self, ctx):
        """A sub-tile of a shared buffer (s.at(i, j)) copied out, changed, and copied into a
        region of a shared buffer of the same shape."""
        cands = [b for b in self.bufs if b.defined and not b.acc and b.scope == 'shared' and len(b.dims) == 2
                 and all(self.ext(d) >= 2 for d in b.dims) and b.dims[0] in 'mnk' and b.dims[1] in 'mnk']
        if not cands:
            return None
        s = self.pick_src(cands)
        E = [self.ext(d) for d in s.dims]
        e = [self.r.randint(1, x - 1) if self.chance(0.8) else x for x in E]
        o = [self.r.randint(0, x - y) for x, y in zip(E, e)]
        q = [self.r.randint(0, x - y) for x, y in zip(E, e)]
        dims = tuple(self.custom_dim(x) for x in e)
        sub = self.new_buf(self.rand_scope(dims, allow_local=False), self.pick([s.ty, s.ty, 'f32']), dims)
        if not fits(sub.ty, s.lo, s.hi):
            sub.ty = s.ty
        self.emit(ctx, 'T::copy(%s.at(%d, %d), %s);' % (s.name, o[0], o[1], sub.name))
        self.emit(ctx, None, 'for (int v0 = 0; v0 < %d; ++v0) for (int v1 = 0; v1 < %d; ++v1) %s_r[v0 * %d + v1] = '
                  'fz::cvt(%s_r[(v0 + %d) * %d + v1 + %d], %s);' % (e[0], e[1], sub.name, e[1], s.name, o[0], E[1], o[1],
                                                                   TY[sub.ty].fmt))
        self.def_buf(sub, s.lo, s.hi, s.exact)
        s.used = True
        # The destination: s itself or another defined shared buffer of its shape, or a fresh
        # one cleared first.
        dcands = [b for b in self.bufs if b.defined and not b.acc and not b.frozen and b.scope == 'shared'
                  and b.dims == s.dims and TY[b.ty].kind in 'fx']
        if dcands and self.chance(0.6):
            p = self.pick(dcands)
        else:
            p = self.new_buf('shared', self.pick(['f32', 'bf16', 'f16']), s.dims)
            self.emit(ctx, 'T::clear(%s);' % p.name, 'for (int e = 0; e < %d; ++e) %s_r[e] = fz::val(0);' % (
                self.numel(p.dims), p.name))
            self.def_buf(p, 0, 0)
        lo, hi = min(p.lo, s.lo), max(p.hi, s.hi)
        if not fits(p.ty, *widen(lo, hi, p.ty)):
            return None
        self.emit(ctx, 'T::copy(%s, %s.at(%d, %d));' % (sub.name, p.name, q[0], q[1]))
        self.emit(ctx, None, 'for (int v0 = 0; v0 < %d; ++v0) for (int v1 = 0; v1 < %d; ++v1) %s_r[(v0 + %d) * %d + v1 + %d]'
                  ' = fz::cvt(%s_r[v0 * %d + v1], %s);' % (e[0], e[1], p.name, q[0], E[1], q[1], sub.name, e[1],
                                                          TY[p.ty].fmt))
        sub.used = True
        self.def_buf(p, lo, hi)
        p.used = False
        return p

    def op_scalar(self, ctx):
        """A per-thread scalar of the block, outside parallel loops: block indices, parameters,
        tables and elements of shared buffers at constant indices (read after the parallel
        loops that wrote them)."""
        if ctx.indent != 1:
            return None  # declared at the kernel's top level only: it stays in scope
        env = Gen.Env()
        env.reads, env.temps, env.tensor_reads = [], [], []
        env.index_leaves = [Ex(v, 'fz::val(%s)' % v, 'i32', 0, g, True) for v, g in zip(self.bvars, self.grid)]
        for b in self.bufs:
            if b.defined and b.scope == 'shared' and self.plain(b) and not b.acc and TY[b.ty].kind != 'b':
                idx = [str(self.r.randint(0, self.ext(d) - 1)) for d in b.dims]
                e = Ex('%s(%s)' % (b.name, ', '.join(idx)), '%s_r[%s]' % (b.name, self.flat(b.dims, idx)), b.ty,
                       b.lo, b.hi, b.exact)
                e.buf = b
                env.reads.append(e)
        if not env.reads and self.chance(0.7):
            return None
        e = self.expr(env, 2)
        t = 'f32' if TY[e.ty].kind in 'xb' else promote(e.ty)
        if not fits(t, e.lo, e.hi):
            return None
        name = 's%d' % len(self.block_scalars)
        self.emit(ctx, '%s %s = %s;' % (TY[t].cpp, name, e.k), 'fz::I %s = fz::cvt(%s, %s);' % (
            name, e.conv(arith(e.ty)), TY[t].fmt))
        lo, hi = (math.trunc(e.lo), math.trunc(e.hi)) if TY[t].kind == 'i' else (e.lo, e.hi)
        self.block_scalars.append(Ex(name, name, t, lo, hi, e.exact and TY[t].kind == 'i'))
        return None

    def op_stack(self, ctx):
        """A rank-3 tile [u, ...] written by a parallel loop of three extents (reading tiles
        of the other two dims broadcast along u), reduced along u."""
        dims = self.pick([s for s in ctx.shapes if len(s) == 2] or [('m', 'n')])
        u = self.custom_dim(self.pick([1, 2, 3, 4]))
        if self.numel((u,) + dims) > 8192:
            return None
        st = self.op_elementwise(ctx, (u,) + tuple(dims), None)
        if st is None:
            return None
        st.used = False
        return self.op_reduce(ctx, st, None, 0)

    def random_ops(self, ctx, count):
        ops = ['load', 'elementwise', 'reduce', 'cumsum', 'copy', 'fill', 'scan', 'branch', 'table', 'subtile', 'stack',
               'scalar']
        w = [14, 40, 18, 6, 8, 4, 4, 4, 2, 4, 3, 3]
        for _ in range(count):
            if self.step():
                continue
            op = self.pick(ops, w)
            fn = {'load': self.op_load, 'elementwise': self.op_elementwise, 'reduce': self.op_reduce,
                  'cumsum': self.op_cumsum, 'copy': self.op_copy, 'fill': self.op_fill, 'scan': self.op_scan_loop,
                  'branch': self.op_branch, 'table': self.op_table, 'subtile': self.op_subtile,
                  'stack': self.op_stack, 'scalar': self.op_scalar}[op]
            fn(ctx)

    # Loops ------------------------------------------------------------------------------

    def loop_header_serial(self, var, count_expr, first=0):
        kind = self.pick(['pipelined', 'serial', 'for', 'pipelined_s', 'range'],
                         [45, 5, 8, 37, 5] if getattr(self, 'tensor_map_friendly', False) else [30, 18, 22, 18, 12])
        if first or kind == 'range':
            kind = self.pick(['pipelined_range', 'serial_range', 'for'])
        st = self.r.randint(1, 4)
        if self.chance(0.4):
            # The first iteration as a kernel parameter (known only at run time).
            name = 'first_%s' % var
            self.scalars[name] = ('i32', first)
            first = name
        if kind == 'for':
            return 'for (int %s = %s; %s < %s; ++%s)' % (var, first, var, count_expr, var)
        if kind == 'pipelined':
            return 'for (int %s : T::pipelined(%s))' % (var, count_expr)
        if kind == 'pipelined_s':
            return 'for (int %s : T::pipelined(%s, T::stages(%d)))' % (var, count_expr, st)
        if kind == 'pipelined_range':
            return 'for (int %s : T::pipelined(%s, %s, T::stages(%d)))' % (var, first, count_expr, st)
        if kind == 'serial':
            return 'for (int %s : T::serial(%s))' % (var, count_expr)
        if kind == 'serial_range':
            return 'for (int %s : T::serial(%s, %s))' % (var, first, count_expr)

    def freeze(self, on):
        """Buffers defined before a loop are read-only inside it (their ranges must not grow
        with the trip count); the loop's accumulators are updated by the loop's own ops."""
        for b in self.bufs:
            b.frozen = on and b.defined

    def fold(self, ctx, acc, part, kind):
        """acc(i) = acc(i) + part(i) (sums) or T::max / T::min, element by element."""
        self.emit(ctx, 'for (int i0 : T::parallel(%s))' % self.extname(acc.dims[0]))
        fmt = TY[acc.ty].fmt
        if kind in ('sum', 'abssum'):
            self.emit(ctx.indent + 1, '%s(i0) = %s(i0) + %s(i0);' % (acc.name, acc.name, part.name))
            t = common(acc.ty, part.ty)
            self.emit(ctx, None, 'for (int e = 0; e < %d; ++e) %s_r[e] = fz::cvt(fz::add(fz::cvt(%s_r[e], %s), '
                      'fz::cvt(%s_r[e], %s), %s), %s);' % (self.numel(acc.dims), acc.name, acc.name, TY[t].fmt,
                                                          part.name, TY[t].fmt, TY[t].fmt, fmt))
        else:
            self.emit(ctx.indent + 1, '%s(i0) = T::%s(%s(i0), %s(i0));' % (acc.name, kind, acc.name, part.name))
            self.emit(ctx, None, 'for (int e = 0; e < %d; ++e) %s_r[e] = fz::cvt(fz::%s(%s_r[e], %s_r[e]), %s);' % (
                self.numel(acc.dims), acc.name, kind, acc.name, part.name, fmt))

    def update_stat(self, ctx, st, src):
        """Folds a row reduction of src ([m, x]) into the row accumulator st."""
        kind = st.rkind
        st.acc = False
        if self.chance(0.5):
            r = self.op_reduce(ctx, src, st, 1, kind, False)
        else:
            part = self.new_buf(self.rand_scope(('m',), allow_local=False), st.ty, ('m',))
            r = self.op_reduce(ctx, src, part, 1, kind, True)
            if r is not None:
                self.fold(ctx, st, part, kind)
                part.used = True
        st.acc = True
        st.defined = True
        return r is not None

    def stat_range(self, st, terms, m):
        """The range of a row accumulator after `terms` (>= 1) terms of magnitude at most m."""
        if st.rkind in ('sum', 'abssum'):
            t = terms * m + max(abs(st.lo), abs(st.hi)) + 1
            return -t, t
        if st.rkind == 'max':
            return max(st.lo, -m), max(st.hi, m)
        return min(st.lo, -m), min(st.hi, m)

    def infinite_start(self, st):
        """Once a max (min) accumulator surely gets a term, it may start at -infinity or
        lowest (+infinity): its fill, written before the loop, is changed here."""
        if st.rkind not in ('max', 'min') or not self.chance(0.5):
            return
        c = TY[st.ty].cpp
        if st.rkind == 'max':
            k, r = self.pick([('-T::infinity<%s>()' % c, '-INFINITY'),
                              ('T::lowest<%s>()' % c, '-(long double)%s_MAX' % ('FLT' if st.ty == 'f32' else 'DBL'))])
        else:
            k, r = 'T::infinity<%s>()' % c, 'INFINITY'
        ki, ri = st.init_at
        self.k[ki] = self.k[ki].replace(st.init_text[0], k)
        self.ref[ri] = self.ref[ri].replace(st.init_text[1], 'fz::val(%s)' % r)

    def new_stat(self, ctx):
        st = self.new_buf(self.rand_scope(('m',), allow_local=False), self.pick(['f32', 'f32', 'f64']), ('m',))
        st.rkind = self.pick(['sum', 'max', 'min', 'abssum'])
        init = {'sum': 0, 'abssum': 0, 'max': -1000, 'min': 1000}[st.rkind]
        st.init_at = (len(self.k), len(self.ref))
        st.init_text = (flit(init) if st.ty == 'f32' else repr(float(init)), 'fz::val(%d)' % init)
        self.emit(ctx, 'T::fill(%s, %s);' % (st.name, st.init_text[0]),
                  'for (int e = 0; e < BM; ++e) %s_r[e] = %s;' % (st.name, st.init_text[1]))
        self.def_buf(st, init, init)
        return st

    def k_loop(self, ctx):
        """A loop over k tiles of [M, K] / [K, N] operands: gemm, and row statistics of the A
        tiles."""
        iters = -(-self.sizes['K'] // self.BK)
        do_gemm = self.chance(0.75)
        acc, st, peel = None, None, False
        if do_gemm:
            init = self.pick(['clear', 'fill', 'existing', 'peel'], [45, 15, 20, 20])
            existing = [b for b in self.bufs if b.defined and b.dims == ('m', 'n') and b.scope == 'fragment'
                        and b.ty == 'f32']
            if init == 'existing' and existing:
                acc = self.pick(existing)
            else:
                acc = self.new_buf('fragment', 'f32', ('m', 'n'))
                if init == 'fill':
                    c = self.const('f32')
                    self.emit(ctx, 'T::fill(%s, %s);' % (acc.name, c.k),
                              'for (int e = 0; e < %d; ++e) %s_r[e] = %s;' % (self.numel(acc.dims), acc.name, c.r))
                    self.def_buf(acc, c.lo, c.hi)
                elif init == 'peel':
                    peel = True
                    self.emit(ctx, 'T::fill(%s, 1000.0f); // garbage: the first gemm clears it' % acc.name)
                    self.def_buf(acc, 0, 0)
                else:
                    self.emit(ctx, 'T::clear(%s);' % acc.name,
                              'for (int e = 0; e < %d; ++e) %s_r[e] = fz::val(0);' % (self.numel(acc.dims), acc.name))
                    self.def_buf(acc, 0, 0)
        if not do_gemm or self.chance(0.35):
            st = self.new_stat(ctx)
        # over['wgmma']: operands Hopper's warpgroup instruction takes (16-bit, b in shared
        # memory; a and b transposed or not), for the batches that exercise wgmma
        # (gpu-fuzz-wgmma).
        wg = self.over.get('wgmma')
        ta, tb = self.chance(0.3), self.chance(0.3)
        ot = self.pick(['bf16', 'f16', 'f32'], [40, 30, 30])
        if wg:
            ot = self.pick(['bf16', 'f16'])
        elif self.over.get('mfma'):
            # over['mfma']: 16-bit operands, which AMD's matrix cores take (fuzz-hip-mfma-build).
            ot = self.pick(['bf16', 'f16'])
        a_dims = ('k', 'm') if ta else ('m', 'k')
        b_dims = ('n', 'k') if tb else ('k', 'n')
        # (Tensor-map friendly programs copy operands without conversion into shared tiles,
        # mostly straight into the gemm: loops warp-specialize takes.)
        fr = getattr(self, 'tensor_map_friendly', False)
        A = self.new_tensor('in', ot if fr else self.pick([ot, ot, 'f32', 'bf16']), tuple(d.upper() for d in a_dims))
        B = self.new_tensor('in', ot if fr else self.pick([ot, ot, 'f32', 'f16']), tuple(d.upper() for d in b_dims))
        for t in (A, B):
            t.lo, t.hi = self.pick([(-1.0, 1.0), (-1.0, 1.0), (0.0, 1.0), (-2.0, 2.0)])
        # wgmma batches: sometimes a is the block's first k tile, copied into a fragment once
        # before the loop and read by every iteration's gemm (attention's query tile kept in
        # registers: wgmma with a from registers, its registers live through the loop).
        fixed_a = bool(wg) and do_gemm and not ta and self.chance(0.4)
        if fixed_a:
            self.emit(ctx, '// a: the first k tile, in a fragment through the loop')
            a_tile = self.new_buf('shared', ot, a_dims)
            self.op_load(ctx.inner(origin={'k': '0'}, indent=0), a_dims, a_tile, A)
            As = self.new_buf('fragment', ot, a_dims)
            self.emit(ctx, 'T::copy(%s, %s);' % (a_tile.name, As.name),
                      'for (int e = 0; e < %d; ++e) %s_r[e] = %s_r[e];' % (self.numel(a_dims), As.name, a_tile.name))
            self.def_buf(As, a_tile.lo, a_tile.hi)
        before = len(self.bufs)
        if not fixed_a:
            As = self.new_buf('shared' if fr else self.pick(['shared', 'fragment'], [75, 25]), ot, a_dims)
        Bs = self.new_buf('shared' if wg else self.pick(['shared', 'shared', 'fragment']), ot, b_dims) if do_gemm else None
        policy = self.pick(['', 'T::warp_policy::square', 'T::warp_policy::full_row', 'T::warp_policy::full_col'])
        self.freeze(True)
        for x in (acc, st):
            if x is not None:
                x.frozen, x.acc = False, True

        def gemm_opts(clear):
            o = []
            if ta:
                o.append('.transpose_a = true')
            if tb:
                o.append('.transpose_b = true')
            if clear:
                o.append('.clear_accum = true')
            if policy:
                o.append('.policy = %s' % policy)
            return (', {%s}' % ', '.join(o)) if o else ''

        def body_ops(c, clear_first):
            if not fixed_a:
                self.op_load(c, a_dims, As, A)
            if do_gemm:
                self.op_load(c, b_dims, Bs, B)
                if self.chance(0.05 if fr else 0.2):
                    # Scale an operand tile in place between its copy and the gemm.
                    tgt = self.pick([As, Bs]) if not fixed_a else Bs  # (the fixed a is read only)
                    s = self.pick([0.5, 2.0, -1.0])
                    self.emit(c, '%s {' % self.loop_header(tgt.dims, ['i0', 'i1']))
                    self.emit(c.indent + 1, '%s(i0, i1) = %s(i0, i1) * %s;' % (tgt.name, tgt.name, flit(s)))
                    self.emit(c, '}')
                    self.emit(c, None, 'for (int e = 0; e < %d; ++e) %s_r[e] = fz::cvt(fz::mul(%s_r[e], fz::val(%r), '
                              'fz::F32), %s);' % (self.numel(tgt.dims), tgt.name, tgt.name, s, TY[tgt.ty].fmt))
                self.emit(c, 'T::gemm(%s, %s, %s%s);' % (As.name, Bs.name, acc.name, gemm_opts(clear_first)))
                aidx = '(kk) * BM + v0' if ta else '(v0) * BK + kk'
                bidx = '(v1) * BK + kk' if tb else '(kk) * BN + v1'
                self.emit(c, None, 'for (int v0 = 0; v0 < BM; ++v0) for (int v1 = 0; v1 < BN; ++v1) {')
                self.emit(c.indent + 1, None, 'fz::Sum s;')
                self.emit(c.indent + 1, None, 's.add(%s);' % ('fz::val(0)' if clear_first else
                                                              '%s_r[(v0) * BN + v1]' % acc.name))
                self.emit(c.indent + 1, None, 'for (int kk = 0; kk < BK; ++kk) s.add(fz::mul(%s_r[%s], %s_r[%s], '
                          'fz::LD));' % (As.name, aidx, Bs.name, bidx))
                self.emit(c.indent + 1, None, '%s_r[(v0) * BN + v1] = fz::sum_result(s, fz::F32, s.n, 2);' % acc.name)
                self.emit(c, None, '}')
            if st is not None:
                src = As
                if ta:
                    # Row statistics need the tile as [BM, BK].
                    src = self.new_buf('fragment', 'f32', ('m', 'k'))
                    self.emit(c, 'for (auto [i0, i1] : T::parallel(BM, BK)) {')
                    self.emit(c.indent + 1, '%s(i0, i1) = %s(i1, i0);' % (src.name, As.name))
                    self.emit(c, '}')
                    self.emit(c, None, 'for (int v0 = 0; v0 < BM; ++v0) for (int v1 = 0; v1 < BK; ++v1) '
                              '%s_r[(v0) * BK + v1] = fz::cvt(%s_r[(v1) * BM + v0], fz::F32);' % (src.name, As.name))
                    self.def_buf(src, As.lo, As.hi)
                updated.append(self.update_stat(c, st, src))

        k0 = 0
        updated = []
        if peel:
            # The first k tile outside the loop, with clear_accum.
            self.emit(ctx, None, '{ const int k = 0; (void)k;')
            body_ops(ctx.inner(origin={'k': '0'}, indent=0), True)
            self.emit(ctx, None, '}')
            k0 = 1
        # Sometimes the loop takes its k tiles in the order a read-only tensor lists (the first
        # stays first: a peeled tile is tile 0), as a block-sparse loop takes its blocks from an
        # index list: the copies' offsets read the list (prefetched by the pipelines).
        order = None
        if iters - k0 >= 2 and self.r2.random() < 0.5:
            order = Tensor('KOrder', 'i32', ('T',), 'in', 0)
            order.offset, order.order = self.r2.choice([0, 3]), iters
            self.tensors.append(order)
        # Sometimes the loop's body runs only for the k tiles a read-only tensor selects (tile 0
        # always), TileLang's block-sparse form: `if (KSel(k) != 0) { ... }` is the whole body.
        select = None
        if iters - k0 >= 1 and self.r2.random() < 0.3:
            select = Tensor('KSel', 'i32', ('T',), 'in', 0)
            select.offset, select.order = self.r2.choice([0, 3]), iters
            select.select = self.r2.choice(['random', 'runs'])
            self.tensors.append(select)
        if order is not None:
            self.emit(ctx, self.loop_header_serial('kk', 'T::ceildiv(K, BK)', k0) + ' {',
                      'for (int kk = %d; kk < %d; ++kk) {' % (k0, iters))
            self.emit(ctx.indent + 1, 'const int k = KOrder(kk);', 'const int k = int(KOrder_v[std::size_t(kk)]);')
        else:
            self.emit(ctx, self.loop_header_serial('k', 'T::ceildiv(K, BK)', k0) + ' {',
                      'for (int k = %d; k < %d; ++k) {' % (k0, iters))
        if select is not None:
            self.emit(ctx.indent + 1, 'if (KSel(k) != 0) {', 'if (KSel_v[std::size_t(k)] != 0) {')
        body_ops(ctx.inner(origin={'k': 'k * BK'}, loop_var=('k', iters)), False)
        if select is not None:
            self.emit(ctx.indent + 1, '}', '}')
        self.emit(ctx, '}', '}')
        self.freeze(False)
        for b in self.bufs[before:]:
            b.defined = False  # the loop's own buffers: undefined after zero iterations
        if fixed_a:
            a_tile.defined = As.defined = False  # (k tiles: nothing outside a k loop takes them)
        am, bm = max(abs(A.lo), abs(A.hi)), max(abs(B.lo), abs(B.hi))
        if acc is not None:
            acc.acc = False
            m = max(abs(acc.lo), abs(acc.hi)) + (self.sizes['K'] + self.BK) * am * bm + 1
            self.def_buf(acc, -m, m)
        if st is not None:
            st.acc = False
            runs = (1 if peel else 0) + max(iters - k0, 0)
            if runs and any(updated):
                # max / min: every update is a term (peeled first tile or loop iterations).
                if all(updated) or st.rkind in ('sum', 'abssum'):
                    st.lo, st.hi = self.stat_range(st, self.sizes['K'] + self.BK, am)
                    if all(updated):
                        self.infinite_start(st)
                else:
                    lo, hi = self.stat_range(st, self.sizes['K'] + self.BK, am)
                    st.lo, st.hi = min(lo, st.lo), max(hi, st.hi)

    def chunk_loop(self, ctx, stats):
        """Rows mode: a loop over the column tiles of the block's rows; `stats` (row
        accumulators) are updated in the loop, other buffers defined before it are read only."""
        iters = -(-self.sizes['N'] // self.BN)
        body = ctx.inner(origin={'n': 'c * BN'}, loop_var=('c', iters))
        before = len(self.bufs)
        self.freeze(True)
        for st in stats:
            st.frozen, st.acc = False, True
        saved = {st.name: (st.lo, st.hi) for st in stats}
        nops = self.r.randint(1, 4)
        self.emit(ctx, self.loop_header_serial('c', 'T::ceildiv(N, BN)') + ' {', 'for (int c = 0; c < %d; ++c) {' % iters)
        x = self.op_load(body, ('m', 'n'))
        self.random_ops(body, nops)
        mags = {}
        for st in stats:
            cands = [b for b in self.bufs[before:] if b.defined and b.dims == ('m', 'n') and TY[b.ty].kind in 'fx']
            src = self.pick(cands) if cands else x
            if TY[src.ty].kind in 'fx' and self.update_stat(body, st, src):
                mags[st.name] = max(abs(src.lo), abs(src.hi))
        # Per-chunk outputs.
        sinks = [b for b in self.bufs[before:] if b.defined and not b.used and not b.acc and self.plain(b)]
        for b in sinks[:3]:
            self.store(body, b)
        self.emit(ctx, '}', '}')
        self.freeze(False)
        for b in self.bufs[before:]:
            b.defined = False
        for st in stats:
            st.acc = False
            st.lo, st.hi = saved[st.name]
            if st.name in mags:
                if iters >= 1:
                    st.lo, st.hi = self.stat_range(st, (iters + 1) * self.BN, mags[st.name])
                    self.infinite_start(st)
                else:
                    lo, hi = self.stat_range(st, (iters + 1) * self.BN, mags[st.name])
                    st.lo, st.hi = min(lo, st.lo), max(hi, st.hi)

    # Stores -----------------------------------------------------------------------------

    def owner_ok(self, ctx, dims, tensor_dims):
        """Whether a plain store of a tile of dims hits different elements in different blocks."""
        owned = set()
        for d in dims:
            owned |= set(self.owner.get(d, ()))
        if 'B' in tensor_dims:
            owned.add(self.bvar)
        return all(v in owned or self.grid[n] == 1 for n, v in enumerate(self.bvars))

    def store(self, ctx, b):
        b.used = True
        dims = tuple(d for d in b.dims)
        tdims = self.tensor_dims(dims)
        plain = self.owner_ok(ctx, dims, tdims)
        t = None
        lo, hi = b.lo, b.hi
        if TY[b.ty].kind in 'fx' and self.chance(0.3):
            t = self.pick(FLOATS)
        elif self.chance(0.2):
            t = self.rand_ty()
        if t is None or not fits(t, lo, hi) or (TY[t].kind == 'i' and TY[b.ty].kind in 'fx') or \
                (TY[t].kind == 'b' and TY[b.ty].kind != 'b'):
            t = b.ty
        if TY[t].kind == 'x' and TY[b.ty].kind == 'f' and b.ty == 'f64':
            pass
        kind = 'store' if plain and self.chance(0.8) else self.pick(['add', 'max', 'min'], [50, 25, 25])
        if kind != 'store':
            if TY[t].kind == 'b' or TY[b.ty].kind == 'b':
                if not plain:
                    return
                kind = 'store'
            elif TY[t].kind == 'x' and kind == 'add' and t in ('e4m3', 'e5m2'):
                t = 'f32'
        if kind == 'add' and TY[t].kind in 'ifx':
            # The sum over blocks must stay in range.
            nb = 1
            for g in self.grid:
                nb *= g
            integer = TY[t].kind == 'i'
            m = max(abs(lo), abs(hi)) * (nb + 1) * 4 + (1000 if integer else 10)
            if not fits(t, -m, m):
                wide = ('i32', 'i64') if integer else ('f32', 'f64')
                t = wide[0] if fits(wide[0], -m, m) else wide[1]
        Y = self.new_tensor('out', t, tdims)
        Y.kind = kind
        # Initial values of atomic outputs: for max (min) mostly below (above) what the blocks
        # bring, so that their results show.
        Y.lo, Y.hi = (-2.0, 2.0) if kind == 'add' else (lo, hi)
        if kind == 'max' and self.chance(0.7):
            Y.lo, Y.hi = lo - 2, lo
        elif kind == 'min' and self.chance(0.7):
            Y.lo, Y.hi = hi, hi + 2
        if TY[t].kind == 'i':
            Y.lo, Y.hi = math.ceil(max(Y.lo, TY[t].lo, -50)), math.floor(min(Y.hi, TY[t].hi, 50))
            if Y.lo > Y.hi:
                Y.lo, Y.hi = max(TY[t].lo, -50), min(TY[t].hi, 50)
        elif not fits(t, Y.lo, Y.hi):
            Y.lo, Y.hi = lo, hi
        form = self.pick(['region', 'elements'], [70, 30])
        ref_pre = [None]  # a conversion to float first (element stores of double into extended floats)
        vs = ['i%d' % n for n in range(len(dims))]
        at, ridx = self.region(ctx, Y, dims, shift=form == 'region' and self.chance(0.15))
        tv = vs
        if form == 'region':
            if kind == 'store':
                self.emit(ctx, 'T::copy(%s, %s);' % (b.name, at))
            else:
                self.emit(ctx, 'T::atomic_%s(%s, %s);' % (kind, at, b.name))
        else:
            # Element by element in a parallel loop, guarded at the tensor's edge.
            idx, conds = [], []
            for x in ridx:
                idx.append('%s + %s' % (x[2], tv[x[1]]) if x[0] == 'tile' else x[1])
            for D, x in zip(Y.dims, ridx):
                if x[0] == 'tile':
                    conds.append('%s + %s < %s' % (x[2], tv[x[1]], D))
            el = '%s(%s)' % (Y.name, ', '.join(idx))
            val = '%s(%s)' % (b.name, ', '.join(vs))
            if kind == 'store' and TY[t].kind == 'x' and (TY[b.ty].kind == 'x' or b.ty == 'f64') and t != b.ty:
                val = 'float(%s)' % val
                if b.ty == 'f64':
                    ref_pre[0] = 'fz::F32' 
            self.emit(ctx, '%s {' % self.loop_header(dims, vs))
            guard = 'if (%s)' % ' && '.join(conds) if conds else None
            if kind == 'store':
                stmt = '%s = %s;' % (el, val)
            else:
                stmt = 'T::atomic_%s(%s, %s);' % (kind, el, val)
            if guard:
                self.emit(ctx.indent + 1, guard)
                self.emit(ctx.indent + 2, stmt)
            else:
                self.emit(ctx.indent + 1, stmt)
            self.emit(ctx, '}')

        def body(rv):
            idx = self.ref_tensor_index(ridx, rv)
            src = '%s_r[%s]' % (b.name, self.flat(b.dims, rv))
            out = ['{ bool in; long long f = fz::flat_index({%s}, {%s}, in);' % (', '.join(idx), self.dims_text(Y))]
            if ref_pre[0]:
                src = 'fz::cvt(%s, %s)' % (src, ref_pre[0])
            if kind == 'store':
                out.append('  if (in) { %s_w[f].v = fz::cvt(%s, %s); %s_w[f].untouched = false; } }' % (
                    Y.name, src, TY[Y.ty].fmt, Y.name))
            else:
                out.append('  if (in) %s_a.apply(f, %s); }' % (Y.name, src))
            return out
        self.ref_loops(ctx, dims, body)

    # The program ------------------------------------------------------------------------

    def generate(self):
        r = self.r
        self.mode = self.pick(['2d', 'rows'], [60, 40])
        self.batch = self.chance(0.2)
        tiles = [1, 2, 3, 4, 5, 7, 8, 12, 16, 17, 24, 31, 32, 33, 48, 64, 80, 96, 128]
        tw = [3, 2, 4, 5, 3, 4, 8, 3, 12, 5, 4, 3, 12, 3, 6, 8, 3, 2, 2]
        for _ in range(100):
            self.BM, self.BN = self.pick(tiles, tw), self.pick(tiles, tw)
            if self.BM * self.BN <= 4096:
                break
        self.BK = self.pick([1, 3, 8, 16, 17, 32, 48, 64, 80], [2, 2, 5, 10, 3, 10, 4, 4, 2])
        if self.BM * self.BK > 4096 or self.BK * self.BN > 4096:
            self.BK = 8
        self.threads = self.pick([32, 64, 96, 128, 160, 192, 256, 384, 512, 40, 50, 100, 200, 300],
                                 [8, 10, 6, 20, 4, 4, 10, 3, 4, 2, 2, 2, 2, 2])
        if self.over.get('wgmma'):
            # wgmma batches: K tiles of 16, 32 and 64 (the 32-, 64- and 128-byte swizzles), and
            # two warpgroups as often as one (a 64-row accumulator then splits along N).
            self.BK = self.pick([16, 32, 64])
            self.threads = self.pick([128, 256])
        self.BM, self.BN, self.BK = self.over.get('BM', self.BM), self.over.get('BN', self.BN), self.over.get('BK', self.BK)
        self.threads = self.over.get('threads', self.threads)

        def dim_size(tile):
            # Sizes that divide no tile (mostly), from one element to a few tiles.
            for _ in range(20):
                s = self.pick([r.randint(1, 9), r.randint(1, 3 * tile + 2), r.randint(tile, 4 * tile + 5),
                               r.randint(1, 200)], [10, 40, 35, 15])
                if s % tile != 0 or tile == 1 or self.chance(0.1):
                    return s
            return s
        self.sizes = {'M': dim_size(self.BM), 'N': dim_size(self.BN), 'K': dim_size(self.BK),
                      'B': r.randint(1, 3)}
        if self.chance(0.03):
            self.sizes[self.pick('MNK')] = 0  # empty tensors: no blocks, or no k tiles
        while self.sizes['M'] * self.sizes['N'] * self.sizes['B'] > 40000:
            self.sizes['M'] = max(1, self.sizes['M'] // 2)
            self.sizes['N'] = max(1, self.sizes['N'] // 2)
        while self.sizes['K'] * (self.sizes['M'] + self.sizes['N']) > 60000:
            self.sizes['K'] = max(1, self.sizes['K'] // 2)
        # wgmma batches: often N and K a multiple of 8 and inputs row-major from a 16-byte
        # boundary, whose rows tensor maps take: sm_90a's warp-specialized entry (bulk
        # tensor copies) runs, not only its fallback.
        self.tensor_map_friendly = bool(self.over.get('wgmma')) and self.chance(0.6)
        if self.tensor_map_friendly:
            for D in 'NK':
                self.sizes[D] = (self.sizes[D] + 7) // 8 * 8  # (0 stays 0: empty tensors)
        for D in 'MNKB':
            self.sizes[D] = self.over.get(D, self.sizes[D])
        M, N, B = self.sizes['M'], self.sizes['N'], self.sizes['B']
        extra = lambda: self.pick([0, 0, 0, 0, 0, 0, 1, 2])
        if self.mode == '2d':
            self.bvars = ['bx', 'by'] + (['bz'] if self.batch else [])
            self.grid_text = ['T::ceildiv(N, BN)', 'T::ceildiv(M, BM)']
            ex = [extra(), extra()]
            self.grid = [-(-N // self.BN) + ex[0], -(-M // self.BM) + ex[1]]
            self.owner = {'n': ('bx',), 'm': ('by',)}
            origin = {'m': 'by * BM', 'n': 'bx * BN', '1': '0'}
        else:
            self.bvars = ['bx'] + (['by'] if self.batch else [])
            self.grid_text = ['T::ceildiv(M, BM)']
            ex = [extra()]
            self.grid = [-(-M // self.BM) + ex[0]]
            self.owner = {'m': ('bx',)}
            origin = {'m': 'bx * BM', 'n': '0', '1': '0'}
        self.grid_text = ['%s + %d' % (g, e) if e else g for g, e in zip(self.grid_text, ex)]
        if self.batch:
            self.grid.append(B)
            self.grid_text.append('B')
            self.bvar = self.bvars[-1]
        else:
            self.bvar = None
        self.scalars = {'alpha': ('f32', self.pick([0.5, 1.25, -0.75, 2.0, 0.1]))}
        if self.chance(0.3):
            self.scalars['ip'] = ('i32', self.r.randint(-20, 20))
        if self.chance(0.15):
            self.scalars['dp'] = ('f64', self.pick([0.3, -1.5, 2.25]))
        if self.chance(0.1):
            self.scalars['cp'] = ('i8', self.r.randint(-100, 100))
        shapes = [(('m', 'n'), 50), (('m',), 14), (('n',), 10), (('1',), 3), (('n', 'm'), 5)]
        ctx = Ctx(origin, shapes, 1)
        # The plan, drawn before the steps.
        n_loads, n_ops, n_after = r.randint(1, 3), r.randint(1, 5), r.randint(0, 3)
        loop = 'k' if self.mode == '2d' and self.chance(0.9 if self.tensor_map_friendly else 0.45) else \
            'chunks' if self.mode == 'rows' and self.chance(0.6) else None
        n_stats, second_pass = r.randint(1, 2), self.chance(0.5)
        # Prologue: a few loads, then random ops.
        for _ in range(n_loads):
            if not self.step():
                self.op_load(ctx, ('m', 'n') if self.chance(0.7) else None)
        self.random_ops(ctx, n_ops)
        if loop == 'k':
            if not self.step():
                self.k_loop(ctx)
            self.random_ops(ctx, n_after)
        elif loop == 'chunks':
            if not self.step():
                stats = [self.new_stat(ctx) for _ in range(n_stats)]
                self.chunk_loop(ctx, stats)
            if second_pass and not self.step():
                self.chunk_loop(ctx, [])  # a second pass that reads the statistics
            self.random_ops(ctx, min(n_after, 2))
        # Stores: every buffer nobody read, at most six.
        sinks = [b for b in self.bufs if b.defined and not b.used and self.plain(b)]
        if not sinks:
            sinks = [b for b in self.bufs if b.defined and self.plain(b)][-1:]
        for b in sinks[-6:]:
            if self.step():
                continue
            if self.chance(0.12):
                # Only some blocks store: the others' part of the output stays poisoned.
                bv = self.pick(self.bvars)
                cond = '%s %% 2 == %d' % (bv, self.r.randint(0, 1))
                self.emit(ctx, 'if (%s) {' % cond, 'if (%s) {' % cond)
                self.store(ctx.inner(), b)
                self.emit(ctx, '}', '}')
            else:
                self.store(ctx, b)

    # Emission ---------------------------------------------------------------------------

    def source(self, ns):
        P = []
        w = P.append
        w('namespace %s {' % ns)
        w('constexpr int BM = %d, BN = %d, BK = %d;' % (self.BM, self.BN, self.BK))
        orders = [t for t in self.tensors if t.order]
        if orders:
            w('constexpr int kT = %d;' % orders[0].order)
        w('constexpr int k1 = 1, kM = %d, kN = %d, kK = %d, kB = %d;' % (self.sizes['M'], self.sizes['N'], self.sizes['K'],
                                                               self.sizes['B']))
        params = []
        for t in self.tensors:
            c = 'const ' if t.role == 'in' else ''
            if t.view:
                params.append('T::tensor<%s%s, %d> %s_full, int %s_row0, int %s_rows' %
                              (c, TY[t.ty].cpp, len(t.dims), t.name, t.name, t.name))
            else:
                params.append('T::tensor<%s%s, %d> %s' % (c, TY[t.ty].cpp, len(t.dims), t.name))
        params += ['%s %s' % (TY[ty].cpp, n) for n, (ty, v) in self.scalars.items()]
        # Problem sizes: from a tensor's size(d), or scalar parameters. (Not from a view:
        # views are made after tile::grid.)
        size_lines, size_params = [], []
        for D in 'MNKB':
            have = [(t, t.dims.index(D)) for t in self.tensors if D in t.dims and not t.view]
            if have and self.chance(0.7):
                t, d = self.pick(have)
                size_lines.append('  const int %s = %s.size(%d);' % (D, t.name, d))
            else:
                params.append('int %s' % D)
                size_params.append('k%s' % D)
        for h in self.helpers:
            if h:
                w(h)
        w('[[tile::kernel]] void kernel(%s) {' % ', '.join(params))
        for line in size_lines:
            w(line)
        bind = ', '.join(self.bvars)
        w('  auto [%s] = T::grid(%s, T::threads(%d));' % (bind, ', '.join(self.grid_text), self.threads))
        if self.mode == '2d' and self.chance(0.15):
            w('  T::use_swizzle(%d);' % self.pick([1, 2, 3, 4, 8]))
        # wgmma batches: odd seeds ask for a persistent grid (taken where warp-specialize takes
        # the loop), drawing nothing: the programs are those of earlier batches otherwise.
        if self.over.get('wgmma') and self.seed % 2 == 1:
            w('  T::persistent();')
        for t in self.tensors:
            if t.view:
                w('  auto %s = %s_full.rows(%s_row0, %s_row0 + %s_rows);' % (t.name, t.name, t.name, t.name, t.name))
        for b in self.bufs:
            w('  T::%s<%s, %s> %s;' % (b.scope, TY[b.ty].cpp, self.shape_str(b.dims), b.name))
            if b.scope == 'shared' and len(b.dims) == 2 and self.chance(0.15):
                lay = self.pick(['row_major()', 'col_major()', 'swizzled()', 'swizzled(64)', 'swizzled(32)'])
                w('  T::annotate_layout(%s, T::layouts::%s);' % (b.name, lay))
        for l in self.lambdas:
            w('  ' + l)
        for line in self.k:
            w(line)
        w('}')
        # The reference.
        ins = [t for t in self.tensors if t.role == 'in']
        outs = [t for t in self.tensors if t.role == 'out']
        rp = ['const std::vector<long double> &%s_v' % t.name for t in ins]
        for t in outs:
            rp.append('std::vector<fz::Want> &%s_w' % t.name if t.kind == 'store' else 'fz::Atomic &%s_a' % t.name)
        rp.append('long double alpha')
        w('FZ_HOST void reference(%s) {' % ', '.join(rp))
        w('  const int M = kM, N = kN, K = kK, B = kB;')
        w('  (void)M, (void)N, (void)K, (void)B, (void)alpha;')
        names = {'bx': 0, 'by': 1, 'bz': 2}
        loops = list(reversed(list(zip(self.bvars, self.grid))))
        for v, g in loops:
            w('  for (int %s = 0; %s < %d; ++%s)' % (v, v, g, v))
        w('  {')
        for b in self.bufs:
            w('    std::vector<fz::I> %s_r(%d, fz::I{NAN, NAN});' % (b.name, self.numel(b.dims)))
        for line in self.ref:
            w(line)
        w('  }')
        w('}')
        # The run function.
        w('FZ_HOST void run(unsigned long long seed) {')
        w('  fz::Rng rng(seed);')
        for t in self.tensors:
            dims = '{%s}' % ', '.join('k%s' % D for D in t.dims)
            st = 'fz::Tensor<%s, %d>' % (TY[t.ty].cpp, len(t.dims))
            fill = '1' if t.ty == 'bool' and t.role == 'in' else 'fz::poison<%s::S>()' % st
            if t.view:
                w('  %s %s(%s, %d, %s, %d, %d, %d);' % (st, t.name, dims, t.layout, fill, t.offset, t.view[0],
                                                        t.view[1]))
            else:
                w('  %s %s(%s, %d, %s, %d);' % (st, t.name, dims, t.layout, fill, t.offset))
            if t.select:
                w('  auto %s_v = fz::fill_select(%s, rng, %s);' % (t.name, t.name,
                                                               'true' if t.select == 'runs' else 'false'))
            elif t.order:
                w('  auto %s_v = fz::fill_order(%s, rng);' % (t.name, t.name))
            elif t.role == 'in':
                w('  auto %s_v = fz::fill_input(%s, rng, %r, %r);' % (t.name, t.name, t.lo, t.hi))
            elif t.kind != 'store':
                w('  auto %s_init = fz::fill_input(%s, rng, %r, %r);' % (t.name, t.name, t.lo, t.hi))
            w('  auto %s_before = %s.host;' % (t.name, t.name))
            w('  %s.upload();' % t.name)
        args = ['%s.padded(%d, %d), %d, int(k%s)' % (t.name, t.view[0], t.view[1], t.view[0], t.dims[0]) if t.view
                else '%s.view()' % t.name for t in self.tensors]
        args += ['%s(%s)' % (TY[ty].cpp, flit(v) if ty == 'f32' else v) for n, (ty, v) in self.scalars.items()]
        args += size_params
        w('  try {')
        w('    kernel(%s);' % ', '.join(args))
        w('    tile::synchronize();')
        w('  } catch (const std::exception &e) {')
        w('    fz::report(seed, false, std::string(" launch: ") + e.what());')
        w('    return;')
        w('  }')
        for t in outs:
            w('  %s.download();' % t.name)
            if t.kind == 'store':
                w('  std::vector<fz::Want> %s_w(%s.numel());' % (t.name, t.name))
            else:
                k = {'add': 'Add', 'max': 'Max', 'min': 'Min'}[t.kind]
                w('  fz::Atomic %s_a(fz::Atomic::%s, %s, %s_init);' % (t.name, k, TY[t.ty].fmt, t.name))
        rargs = ['%s_v' % t.name for t in ins] + ['%s_%s' % (t.name, 'w' if t.kind == 'store' else 'a') for t in outs]
        rargs.append('(long double)%s' % (flit(self.scalars['alpha'][1])))
        w('  reference(%s);' % ', '.join(rargs))
        w('  std::string why;')
        w('  long wrong = 0;')
        for t in outs:
            want = '%s_w' % t.name if t.kind == 'store' else '%s_a.result()' % t.name
            w('  wrong += fz::compare("%s", %s, %s, %s_before, why);' % (t.name, t.name, want, t.name))
        w('  fz::report(seed, wrong == 0, why);')
        w('}')
        w('} // namespace %s' % ns)
        return '\n'.join(P) + '\n'


HEADER = '''// Generated by test/fuzz/gen.py: random tile programs and their interval references.
#include "fuzz.h"
#include <cfloat>
namespace T = tile;
// Host code compiled without optimization: it runs fast enough, and compiles in half the time.
#define FZ_HOST __attribute__((optnone, noinline))
'''


def program(seed, skip=(), over=None):
    return Gen(seed, skip, over).source('p%d' % seed)


def translation_unit(seeds, inline_header=False, skip=(), over=None):
    out = []
    if inline_header:
        h = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), 'fuzz.h')).read()
        out.append('// Reproducer generated by test/fuzz/gen.py; fuzz.h is inlined below.\n')
        out.append('// Build: tile-c++ -O2 THIS.cpp -o repro && TILE_DEVICE=cpu ./repro\n')
        out.append(h)
        out.append(HEADER.replace('#include "fuzz.h"\n', ''))
    else:
        out.append(HEADER)
    for s in seeds:
        out.append(program(s, skip, over))
    out.append('int main(int argc, char **argv) {')
    out.append('  struct P { unsigned long long seed; void (*run)(unsigned long long); };')
    out.append('  static const P progs[] = {%s};' % ', '.join('{%dull, p%d::run}' % (s, s) for s in seeds))
    out.append('  // Arguments: seeds to run (default: all).')
    out.append('  for (const P &p : progs) {')
    out.append('    bool chosen = argc < 2;')
    out.append('    for (int a = 1; a < argc; ++a)')
    out.append('      chosen |= std::strtoull(argv[a], nullptr, 10) == p.seed;')
    out.append('    if (!chosen)')
    out.append('      continue;')
    out.append('    std::printf("BEGIN %llu\\n", p.seed);')
    out.append('    std::fflush(stdout);')
    out.append('    p.run(p.seed);')
    out.append('  }')
    out.append('  return fz::failures ? 1 : 0;')
    out.append('}')
    return '\n'.join(out) + '\n'


def parse_seeds(text):
    seeds = []
    for part in text.split(','):
        if '-' in part:
            a, b = part.split('-')
            seeds += list(range(int(a), int(b) + 1))
        elif part:
            seeds.append(int(part))
    return seeds


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--seed', type=int, help='one program, with fuzz.h inlined (a standalone reproducer)')
    ap.add_argument('--seeds', help='a batch: 1-40 or 3,5,9')
    ap.add_argument('--skip', default='', help='steps to leave out (minimize.py): 3,7')
    ap.add_argument('--set', default='', help='sizes and tiles to force (minimize.py): M=5,BN=16')
    ap.add_argument('-o', '--output', help='output file (default stdout)')
    a = ap.parse_args()
    if a.seed is not None:
        skip = [int(x) for x in a.skip.split(',') if x]
        over = {k: int(v) for k, v in (x.split('=') for x in a.set.split(',') if x)}
        text = translation_unit([a.seed], inline_header=True, skip=skip, over=over)
        if skip or over:
            text = '// gen.py --seed %d --skip %s --set %s\n' % (a.seed, a.skip, a.set) + text
    else:
        text = translation_unit(parse_seeds(a.seeds or '1-10'))
    if a.output:
        open(a.output, 'w').write(text)
    else:
        sys.stdout.write(text)


if __name__ == '__main__':
    main()
