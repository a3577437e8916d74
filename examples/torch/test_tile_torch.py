"""Checks tile_torch on torch tensors against torch.matmul / torch.softmax in float64.

    python3 test_tile_torch.py [--device cpu|cuda] [--library PATH]

Outputs are poisoned with NaN first and must be written in place (their data_ptr is
kept, gaps of strided outputs stay NaN); shapes divide no tile size; errors must name the
argument at fault. On CUDA, the kernels must run on the current torch stream. Ends with
"PASS tile_torch <device>" (status 0), or "FAIL ..." (status 1); status 77 (a skip for
ctest) when torch cannot be imported.
"""

import argparse
import os
import sys

try:
    import torch
except ImportError as e:
    print(f"SKIP tile_torch: torch cannot be imported ({e})")
    sys.exit(77)

parser = argparse.ArgumentParser()
parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
parser.add_argument("--library", help="libtile_torch.so (default: $TILE_TORCH_LIBRARY, else next to tile_torch.py)")
args = parser.parse_args()
if args.library:
    os.environ["TILE_TORCH_LIBRARY"] = os.path.abspath(args.library)
sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tile_torch  # noqa: E402

dev = torch.device(args.device)
torch.manual_seed(0)
failures = []
checks = 0


def check(name, ok, detail=""):
    global checks
    checks += 1
    if not ok:
        failures.append(f"{name}: {detail}")
        print(f"  fail {name}: {detail}")


def rel_error(got, ref):
    got, ref = got.double().cpu(), ref.double().cpu()
    if got.numel() == 0:
        return 0.0
    return float((got - ref).norm() / ref.norm().clamp_min(1e-30))


TOL = {torch.float32: 1e-5, torch.float16: 1e-2, torch.bfloat16: 2e-2}


def poisoned(shape, dtype):
    return torch.full(shape, float("nan"), dtype=dtype, device=dev)


def check_matmul(name, a, b, out):
    ptr = out.data_ptr()
    ret = tile_torch.matmul(a, b, out=out)
    ref = torch.matmul(a.double(), b.double())
    if dev.type == "cuda":
        torch.cuda.synchronize()
    check(name + " returns out", ret is out)
    check(name + " in place", out.data_ptr() == ptr, f"data_ptr {out.data_ptr():#x} != {ptr:#x}")
    check(name + " finite", bool(torch.isfinite(out).all()), "NaN left in the output")
    err = rel_error(out, ref)
    check(name, err <= TOL[a.dtype], f"relative error {err:.3g}")


def expect_error(name, call, *words):
    try:
        call()
    except tile_torch.TileError as e:
        msg = str(e)
        missing = [w for w in words if w not in msg]
        check(name, not missing, f"message {msg!r} lacks {missing}")
        return
    check(name, False, "no TileError")


# matmul: shapes that divide no tile (64 x 64 x 32), an empty one, K = 0.
for dtype in (torch.float32, torch.float16, torch.bfloat16):
    for m, n, k in [(67, 45, 83), (130, 70, 33), (1, 1, 1), (0, 7, 5), (4, 6, 0)]:
        a = torch.randn(m, k, device=dev).to(dtype)
        b = torch.randn(k, n, device=dev).to(dtype)
        check_matmul(f"matmul {dtype} {m}x{n}x{k}", a, b, poisoned((m, n), dtype))

# Strided views, no copy: a slice of a larger tensor (offset data), b transposed, and an
# output of every other column whose gaps must stay NaN.
m, n, k = 67, 45, 83
big = torch.randn(m + 3, k + 5, device=dev)
a = big[2:2 + m, 3:3 + k]
b = torch.randn(n, k, device=dev).t()
out_big = poisoned((m, 2 * n), torch.float32)
out = out_big[:, ::2]
check("strided inputs are views", not a.is_contiguous() and not b.is_contiguous() and not out.is_contiguous())
check_matmul("matmul strided views", a, b, out)
check("matmul strided gaps untouched", bool(torch.isnan(out_big[:, 1::2]).all()))

# matmul without out: tile allocates the result and exports it (tile::to_dlpack).
a, b = torch.randn(37, 29, device=dev), torch.randn(29, 41, device=dev)
c = tile_torch.matmul(a, b)
if dev.type == "cuda":
    torch.cuda.synchronize()
check("matmul_new device and type", c.device == a.device and c.dtype == a.dtype and tuple(c.shape) == (37, 41),
      f"{c.device} {c.dtype} {tuple(c.shape)}")
check("matmul_new", rel_error(c, torch.matmul(a.double(), b.double())) <= 1e-5)
del c  # torch calls the exported tensor's deleter

# softmax along the rows: one chunk, several chunks (256 columns each), a transposed input.
for dtype in (torch.float32, torch.float16, torch.bfloat16):
    for m, n in [(37, 1001), (5, 3), (3, 256), (2, 513)]:
        x = (4 * torch.randn(m, n, device=dev)).to(dtype)
        y = poisoned((m, n), dtype)
        ptr = y.data_ptr()
        tile_torch.softmax(x, out=y)
        if dev.type == "cuda":
            torch.cuda.synchronize()
        name = f"softmax {dtype} {m}x{n}"
        check(name + " in place", y.data_ptr() == ptr)
        check(name + " finite", bool(torch.isfinite(y).all()))
        err = rel_error(y, torch.softmax(x.double(), dim=-1))
        check(name, err <= TOL[dtype], f"relative error {err:.3g}")
x = torch.randn(300, 70, device=dev).t()
y = tile_torch.softmax(x)
check("softmax transposed input", rel_error(y, torch.softmax(x.double(), dim=-1)) <= 1e-5)

# Errors name the argument at fault.
a, b, out = torch.randn(8, 5, device=dev), torch.randn(5, 3, device=dev), torch.empty(8, 3, device=dev)
expect_error("error: b of another type", lambda: tile_torch.matmul(a, b.double(), out=out),
             "b:", "float32", "float64")
expect_error("error: out of another type", lambda: tile_torch.matmul(a, b, out=out.half()), "out:", "float32",
             "float16")
expect_error("error: a of no supported type", lambda: tile_torch.matmul(a.double(), b.double(), out=out.double()),
             "a:", "float64")
expect_error("error: b of the wrong rows", lambda: tile_torch.matmul(a, torch.randn(4, 3, device=dev), out=out),
             "b:", "5 rows")
expect_error("error: out of the wrong shape", lambda: tile_torch.matmul(a, b, out=torch.empty(8, 4, device=dev)),
             "out:", "[8, 3]", "[8, 4]")
expect_error("error: x of rank 3", lambda: tile_torch.softmax(torch.randn(2, 3, 4, device=dev)), "x:",
             "expected 2 dimensions, got 3")
expect_error("error: broadcast out", lambda: tile_torch.matmul(a, b, out=torch.empty(1, 3, device=dev).expand(8, 3)),
             "out:", "stride 0")
if dev.type == "cuda":
    expect_error("error: out on the CPU", lambda: tile_torch.matmul(a, b, out=torch.empty(8, 3)), "out:",
                 "kDLCUDA", "kDLCPU")

# CUDA: the kernels run on the current torch stream. On a side stream (torch's are
# non-blocking: no ordering with the default stream), a2 is written only after a long
# sleep; a kernel on any other stream would read the NaN a2 held before.
if dev.type == "cuda":
    m, n, k = 300, 200, 100
    a, b = torch.randn(m, k, device=dev), torch.randn(k, n, device=dev)
    a2 = torch.full_like(a, float("nan"))
    out = poisoned((m, n), torch.float32)
    x2 = torch.full((m, n), float("nan"), device=dev)
    y = poisoned((m, n), torch.float32)
    torch.cuda.synchronize()
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        torch.cuda._sleep(200_000_000)  # cycles: about 0.1 s
        a2.copy_(a)
        x2.copy_(4 * torch.randn(m, n, device=dev))
        tile_torch.matmul(a2, b, out=out)
        tile_torch.softmax(x2, out=y)
    side.synchronize()
    check("cuda: matmul on the current stream", bool(torch.isfinite(out).all()) and
          rel_error(out, torch.matmul(a.double(), b.double())) <= 1e-5)
    check("cuda: softmax on the current stream", bool(torch.isfinite(y).all()) and
          rel_error(y, torch.softmax(x2.double(), dim=-1)) <= 1e-5)

if failures:
    print(f"FAIL tile_torch {args.device}: {len(failures)} of {checks} checks failed")
    for f in failures:
        print("  " + f)
    sys.exit(1)
print(f"PASS tile_torch {args.device} ({checks} checks)")
