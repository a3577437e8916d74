"""The JSON lines of one benchmark run (bench/run_gpu.sh's bench.jsonl), read for ratios.py
and plot.py: tile's figures (lines with "impl": "tile", from the examples in bench mode) and
the peers' (lines with "peer": NAME, from peers.py), by kernel and shape. Lines that are not
JSON objects (the examples' PASS lines) and objects without a kernel (peers.py's header with
the GPU's name) are not figures.
"""
import json

COPY_KERNEL = "copy_bf16"  # the copy bandwidth memory-bound kernels are compared with


class Run:
    def __init__(self):
        self.tile = {}     # (kernel, shape) -> (rate, unit, err); unit "TFLOP/s" or "GB/s"
        self.peers = {}    # (kernel, shape) -> [(rate, peer name)], in the file's order
        self.gpu = None    # the GPU's name, from peers.py's header line
        self.devices = []  # tile's "device" fields (cuda:0), in the order first seen

    def device(self):
        """The GPU's name where peers.py gave it, else tile's device fields."""
        return self.gpu or ", ".join(self.devices) or "unknown device"

    def best_peer(self, key):
        """(rate, name) of the fastest peer of a kernel and shape, or (None, "-"). A kernel
        written or built another way ("gemm_simple_bfloat16": the same GEMM with a user's
        first tiles; "gemm_multicast_bfloat16": built with multicast=on) has the peers of the
        kernel it computes ("gemm_bfloat16")."""
        kernel, shape = key
        peers = self.peers.get(key) or self.peers.get((kernel.replace("_simple", "").replace("_multicast", ""), shape))
        return max(peers or [(None, "-")], key=lambda p: p[0] or 0)

    def copy_bandwidth(self):
        """The fastest copy of the run (GB/s), or None."""
        return max((v for (k, s), vs in self.peers.items() if k == COPY_KERNEL for v, _ in vs), default=None)


def load(path):
    """Reads a run; raises OSError for an unreadable file, ValueError for a bad JSON line."""
    run = Run()
    with open(path) as f:
        for number, line in enumerate(f, 1):
            line = line.strip()
            if not line.startswith("{"):
                continue
            try:
                r = json.loads(line)
            except ValueError as e:
                raise ValueError("%s:%d: not a JSON line: %s" % (path, number, e)) from None
            if "kernel" not in r:
                if "device" in r and run.gpu is None:
                    run.gpu = r["device"]
                continue
            rate = r.get("tflops", r.get("gbps"))
            key = (r["kernel"], r["shape"])
            if r.get("impl") == "tile":
                run.tile[key] = (rate, "TFLOP/s" if "tflops" in r else "GB/s", r.get("err"))
                if r.get("device") and r["device"] not in run.devices:
                    run.devices.append(r["device"])
            elif rate is not None:
                run.peers.setdefault(key, []).append((rate, r.get("peer", r.get("impl", "?"))))
    return run
