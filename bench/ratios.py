#!/usr/bin/env python3
"""Prints tile's figures against the peers measured in the same run (JSON lines of the
examples in bench mode and of peers.py): one row per kernel and shape, the best peer's
figure, and the ratio. Memory-bound kernels are also compared with the copy bandwidth.
  python3 ratios.py bench.jsonl
"""
import sys

import bench_jsonl

run = bench_jsonl.load(sys.argv[1])
tile, peers = run.tile, run.peers
copy = run.copy_bandwidth()
print("%-16s %-16s %12s %22s %7s %9s %8s" % ("kernel", "shape", "tile", "best peer", "ratio", "vs copy", "vs FA2"))
for (kernel, shape), (rate, unit, err) in sorted(tile.items()):
    best = run.best_peer((kernel, shape))
    ratio = "%.2f" % (rate / best[0]) if best[0] else "-"
    vs_copy = "%.2f" % (rate / copy) if unit == "GB/s" and copy else "-"
    peer = "%.1f %s" % (best[0], best[1]) if best[0] else "-"
    # FlashAttention-2 (issue 8's bar for attention) beside the best peer.
    fa2 = [v for v, name in peers.get((kernel, shape), []) if name == "sdpa_flash"]
    vs_fa2 = "%.2f" % (rate / fa2[0]) if fa2 else "-"
    print("%-16s %-16s %8.1f %-7s %18s %7s %9s %8s   err %.2g" % (kernel, shape, rate, unit, peer, ratio, vs_copy,
                                                                  vs_fa2, err or 0))
