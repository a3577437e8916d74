#!/usr/bin/env python3
"""Peers of the kernels whose tiles data chooses (issue 30's bar), measured in the same run as
the examples' bench modes, as JSON lines that bench/ratios.py pairs with the examples' own
(same "kernel" and "shape"):

  grouped_gemm_bf16 "8x4096 4096 14336"        torch._grouped_mm, and a loop of torch.mm
                                               (cuBLAS) over the experts
  attn_varlen_causal_bf16 "b32h32kv8s4096d128c" cuDNN's dense causal rate (SDPA, b4 h32 s4096
                                               d128): the issue compares varlen with it
  attn_block_sparse_bf16 "b1h32s8192d128p0.25" cuDNN's dense rate (SDPA, b1 h32 s8192 d128),
                                               against the blocks the sparse kernel visits

Run on the GPU machine: python3 bench/peers_data.py [--only grouped,varlen,sparse]
"""
import argparse, json, sys

import torch


def median_ms(fn, warmup=10, rep=50):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(rep):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    times.sort()
    return times[len(times) // 2]


def line(**fields):
    print(json.dumps(fields), flush=True)


def grouped(experts=8, per_expert=4096, k=4096, n=14336):
    shape = f"{experts}x{per_expert} {k} {n}"
    tokens = experts * per_expert
    flop = 2.0 * tokens * k * n
    a = torch.randn(tokens, k, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(experts, k, n, device="cuda", dtype=torch.bfloat16)
    offs = torch.arange(1, experts + 1, device="cuda", dtype=torch.int32) * per_expert
    try:
        # (The grouped kernel wants the experts' matrices column-major: the same values, a
        # transposed copy's transpose.)
        w_cm = w.transpose(-2, -1).contiguous().transpose(-2, -1)
        f = lambda: torch._grouped_mm(a, w_cm, offs=offs)
        f()
        ms = median_ms(f)
        line(kernel="grouped_gemm_bf16", shape=shape, peer="torch_grouped_mm", ms=ms, tflops=flop / ms / 1e9)
    except Exception as e:  # an older torch, or a layout it refuses
        print(f"# torch._grouped_mm unavailable: {e}", file=sys.stderr)
    out = torch.empty(tokens, n, device="cuda", dtype=torch.bfloat16)

    def loop():
        for e in range(experts):
            torch.mm(a[e * per_expert:(e + 1) * per_expert], w[e], out=out[e * per_expert:(e + 1) * per_expert])

    ms = median_ms(loop)
    line(kernel="grouped_gemm_bf16", shape=shape, peer="cublas_loop", ms=ms, tflops=flop / ms / 1e9)


def dense_rate(b, h, s, d, causal):
    """cuDNN's SDPA forward in TFLOP/s at a dense shape."""
    from torch.nn.attention import sdpa_kernel, SDPBackend
    F = torch.nn.functional
    q, k, v = (torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    flop = 4.0 * b * h * s * s * d / (2 if causal else 1)
    with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
        f = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        f()
        ms = median_ms(f)
    return ms, flop / ms / 1e9


def varlen():
    ms, rate = dense_rate(4, 32, 4096, 128, True)
    line(kernel="attn_varlen_causal_bf16", shape="b32h32kv8s4096d128c", peer="cudnn_dense_causal_rate", ms=ms,
         tflops=rate)


def sparse():
    ms, rate = dense_rate(1, 32, 8192, 128, False)
    line(kernel="attn_block_sparse_bf16", shape="b1h32s8192d128p0.25", peer="cudnn_dense_rate", ms=ms, tflops=rate)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", default="grouped,varlen,sparse")
    only = parser.parse_args().only.split(",")
    for name, fn in (("grouped", grouped), ("varlen", varlen), ("sparse", sparse)):
        if name in only:
            try:
                fn()
            except Exception as e:
                print(f"# {name}: {e}", file=sys.stderr)


if __name__ == "__main__":
    main()
