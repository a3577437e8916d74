#!/usr/bin/env python3
"""Plots tile against the peers measured in the same run (the JSON lines bench/run_gpu.sh
writes; bench_jsonl.py reads them as ratios.py does), as PNG files in OUTDIR:
  vs-PEER.png   for each peer (cublas, sdpa_cudnn, ...): tile's rate / that peer's rate,
                one bar per kernel and shape both measured
  summary.png   tile / the fastest peer of each kernel and shape, and for memory-bound
                kernels (GB/s) tile / the copy bandwidth (copy_bf16)
A ratio above 1 means tile is faster. Kernels a peer did not measure have no bar in its
plot. The ratios plotted are printed as a table.
  python3 plot.py RUN.jsonl OUTDIR
"""
import io, os, re, sys

import bench_jsonl

# What the peers are, for the plots' titles and notes (peers.py's names stay beside them).
PEER_NAMES = {
    "cublas": "cuBLAS",
    "cublaslt": "cuBLASLt",
    "triton": "Triton",
    "sdpa_flash": "FlashAttention-2",
    "sdpa_cudnn": "cuDNN",
    "sdpa_efficient": "PyTorch mem-efficient",
    "torch": "PyTorch",
}
SUMMARY = "summary.png"
CUT = 2.5  # where the ratio axis ends


def peer_name(peer):
    return PEER_NAMES.get(peer, peer)


def natural(key):
    """Sort key reading digit runs as numbers: d64 before d128, 4096 before 8192."""
    return [int(t) if t.isdigit() else t for k in key for t in re.split(r"(\d+)", k)]


def plot_file(peer):
    return "vs-%s.png" % re.sub(r"[^A-Za-z0-9_.-]", "_", peer)


def ratios(run):
    """{file name: [(kernel, shape, against, tile rate, its rate, unit, ratio)]}, rows in
    kernel and shape order. `against` is a peer's name, or copy_bf16 in the summary."""
    plots = {}
    keys = sorted(run.tile, key=natural)
    for key in keys:
        rate, unit, _ = run.tile[key]
        if not rate:
            continue
        best = {}  # a peer's fastest figure where it was measured more than once
        for peer_rate, peer in run.peers.get(key, []):
            best[peer] = max(best.get(peer, 0), peer_rate)
        for peer, peer_rate in sorted(best.items()):
            plots.setdefault(plot_file(peer), []).append(key + (peer, rate, peer_rate, unit, rate / peer_rate))
    copy = run.copy_bandwidth()
    summary = []
    for key in keys:
        rate, unit, _ = run.tile[key]
        if not rate:
            continue
        best_rate, best = run.best_peer(key)
        if best_rate:
            summary.append(key + (best, rate, best_rate, unit, rate / best_rate))
        if unit == "GB/s" and copy:
            summary.append(key + (bench_jsonl.COPY_KERNEL, rate, copy, unit, rate / copy))
    if summary:
        plots[SUMMARY] = summary
    return plots


def print_table(plots):
    print("%-22s %-16s %-20s %-16s %9s %9s %-7s %7s" % ("plot", "kernel", "shape", "against", "tile", "other",
                                                         "unit", "ratio"))
    for name in sorted(plots):
        for kernel, shape, against, rate, other, unit, ratio in plots[name]:
            print("%-22s %-16s %-20s %-16s %9.2f %9.2f %-7s %7.4f" % (name, kernel, shape, against, rate, other, unit,
                                                                      ratio))


def draw(plt, rows, title, xlabel, path, summary=False):
    """Horizontal bars, the first row on top; in the summary a kernel and shape with both a
    best peer and the copy bandwidth gets two thinner bars."""
    labels = []
    for kernel, shape, *_ in rows:
        if (kernel, shape) not in labels:
            labels.append((kernel, shape))
    fig, ax = plt.subplots(figsize=(10, 1.7 + 0.42 * len(labels)), dpi=100)
    # Room for the notes right of the bars; a ratio far past 1 (a slow peer) would squeeze
    # the others, so the axis ends at CUT and longer bars are cut there, noted inside.
    xmax = min(max(1.5, max(max(r[-1], 1.0) for r in rows) * 1.5), CUT)
    for i, label in enumerate(labels):
        mine = [r for r in rows if r[:2] == label]
        height = 0.7 / len(mine)
        for j, (kernel, shape, against, rate, other, unit, ratio) in enumerate(mine):
            y = i - 0.35 + height * (j + 0.5)
            copy = against == bench_jsonl.COPY_KERNEL
            ax.barh(y, min(ratio, xmax), height=height * 0.9, color="tab:orange" if copy else "tab:blue")
            if summary:
                note = "%.2fx %s" % (ratio, "copy bandwidth" if copy else peer_name(against))
            else:
                note = "%.2fx   %.1f / %.1f %s" % (ratio, rate, other, unit)
            if ratio > xmax * 0.7:  # inside the bar, at its end
                note += " (bar cut)" if ratio > xmax else ""
                ax.text(min(ratio, xmax) - xmax * 0.01, y, note, va="center", ha="right", fontsize=8.5,
                        color="white", fontweight="bold")
            else:  # right of the bar, and of the line at 1
                ax.text(max(ratio, 1.0) + xmax * 0.01, y, note, va="center", fontsize=8.5)
    ax.axvline(1.0, color="black", linewidth=1.2, linestyle="--")
    ax.set_yticks(range(len(labels)))
    ax.set_yticklabels(["%s  %s" % l for l in labels], fontsize=9)
    ax.set_ylim(len(labels) - 0.5, -0.5)
    ax.set_xlim(0, xmax)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("kernel, shape")
    ax.set_title(title, fontsize=10.5)
    ax.grid(axis="x", alpha=0.3)
    ax.set_axisbelow(True)
    if summary:
        from matplotlib.patches import Patch
        handles = [Patch(color="tab:blue", label="tile / fastest peer (named at the bar)")]
        if any(r[2] == bench_jsonl.COPY_KERNEL for r in rows):
            handles.append(Patch(color="tab:orange", label="tile / copy bandwidth (memory-bound kernels)"))
        ax.legend(handles=handles, loc="upper right", fontsize=8.5)
    fig.tight_layout()
    # Rendered by Agg, then kept in a 256-colour palette (the plot has about 500 colours,
    # most of them antialiasing): a third of the bytes, and no metadata, so that the same
    # run gives the same file.
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", metadata={"Software": None})
    plt.close(fig)
    from PIL import Image
    image = Image.open(buffer).convert("RGB")
    image.quantize(colors=256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE).save(path, optimize=True)


def main(argv):
    if len(argv) != 3:
        print("usage: python3 plot.py RUN.jsonl OUTDIR", file=sys.stderr)
        return 2
    path, outdir = argv[1], argv[2]
    try:
        run = bench_jsonl.load(path)
    except (OSError, ValueError) as e:
        print("plot.py: cannot read the run %s: %s" % (path, e), file=sys.stderr)
        return 1
    if not run.tile:
        print('plot.py: %s has no tile lines (JSON lines with "impl": "tile"): nothing to plot' % path,
              file=sys.stderr)
        return 1
    plots = ratios(run)
    if not plots:
        print("plot.py: %s has no peer measured at a kernel and shape of tile's, and no copy bandwidth: "
              "nothing to plot" % path, file=sys.stderr)
        return 1
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        print("plot.py: needs matplotlib (Debian: apt-get install python3-matplotlib): %s" % e, file=sys.stderr)
        return 1
    try:
        os.makedirs(outdir, exist_ok=True)
    except OSError as e:
        print("plot.py: cannot make %s: %s" % (outdir, e), file=sys.stderr)
        return 1
    where = "on %s, run %s" % (run.device(), os.path.basename(path))
    for name, rows in sorted(plots.items()):
        if name == SUMMARY:
            title = "tile against the fastest peer of each kernel and shape\n%s" % where
            xlabel = "tile's rate / the other's (TFLOP/s or GB/s; > 1: tile is faster)"
        else:
            peer = rows[0][2]
            title = "tile against %s (%s)\n%s" % (peer_name(peer), peer, where)
            xlabel = "tile's rate / %s's (%s; > 1: tile is faster)" % (peer_name(peer), rows[0][5])
        draw(plt, rows, title, xlabel, os.path.join(outdir, name), summary=name == SUMMARY)
    print_table(plots)
    print("plot.py: %d plots in %s" % (len(plots), outdir))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
