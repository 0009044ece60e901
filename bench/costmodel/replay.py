#!/usr/bin/env python3
"""Replays the compiler's kernel choice on candidate measurements, without a
GPU: for every layer of the given candidates.csv files (bench/networks.py
--candidates, where every configuration the tuner would try was timed on
the GPU), asks this build's `conv3d-run --list-configs` which configuration
it picks by default, looks that configuration's measured time up, and
reports how the pick compares with the best measured configuration and
with cuDNN. A change to the selection rules or to the cost model can so be
checked on measured layers before a GPU run; a pick that was never timed
(a configuration outside the measured candidates) is counted and listed.

    python3 bench/costmodel/replay.py run/cand31/candidates.csv ... \\
        [--tool build/bin/conv3d-run] [--target sm90] [--misses 20]
"""

import argparse
import collections
import csv
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from netbench import compiling, configs  # noqa: E402
from netbench.layers import ConvLayer  # noqa: E402
from netbench.stats import geomean, percentile  # noqa: E402


def layers_of(paths):
    """{(path, index): (ConvLayer, name, [timed rows])}."""
    layers = collections.OrderedDict()
    for path in paths:
        for r in csv.DictReader(open(path)):
            key = (path, r["index"])
            if key not in layers:
                layers[key] = (ConvLayer.from_dict(r), r["layer"], [])
            if r.get("ms") and not r.get("error"):
                layers[key][2].append(r)
    return layers


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("csv", nargs="+", help="candidates.csv files")
    p.add_argument("--tool", default=os.path.join(os.path.dirname(os.path.dirname(HERE)),
                                                  "build", "bin", "conv3d-run"),
                   help="the conv3d-run whose choice is replayed: a path, or a name "
                   "looked up on PATH (default: build/bin/conv3d-run)")
    p.add_argument("--target", default="sm90")
    p.add_argument("--misses", type=int, default=15,
                   help="list this many of the worst picks (default 15)")
    args = p.parse_args()
    if os.sep not in args.tool:
        args.tool = shutil.which(args.tool) or args.tool
    if not os.access(args.tool, os.X_OK):
        sys.exit("replay.py: %s is not an executable conv3d-run (--tool)" % args.tool)

    within = untimed = 0
    to_best, vs_cudnn, misses, absent = [], [], [], []
    layers = layers_of(args.csv)
    for layer, name, rows in layers.values():
        if not rows:
            continue
        best = min(rows, key=lambda r: float(r["ms"]))
        pick = compiling.list_configs(layer, args.target, args.tool)["heuristic"]
        timed = [r for r in rows if configs.fields(r["config"]) == configs.fields(pick)]
        if not timed:
            untimed += 1
            absent.append("%s: %s" % (name, pick))
            continue
        ms, best_ms = float(timed[0]["ms"]), float(best["ms"])
        within += ms <= 1.1 * best_ms
        to_best.append(best_ms / ms)
        vs_cudnn.append(float(timed[0]["cudnn_ms"]) / ms)
        if ms > 1.1 * best_ms:
            misses.append((ms / best_ms, name, pick, ms, best["config"], best_ms))
    n = len(to_best)
    if not n:
        sys.exit("replay.py: no layer's pick was timed")
    print("%d layers replayed with %s (%d picks not among the timed candidates)"
          % (n, args.tool, untimed))
    print("| pick within 10% of the best | geomean best / pick | 5th percentile "
          "| geomean vs cuDNN | 5th percentile vs cuDNN |")
    print("|---|---|---|---|---|")
    print("| %d (%.0f%%) | %.3f | %.3f | %.3fx | %.3fx |" % (
        within, 100.0 * within / n, geomean(to_best), percentile(to_best, 5),
        geomean(vs_cudnn), percentile(vs_cudnn, 5)))
    misses.sort(reverse=True)
    for ratio, name, pick, ms, best_config, best_ms in misses[:args.misses]:
        print("%.2fx  %s\n       pick %s %.4f ms\n       best %s %.4f ms"
              % (ratio, name, pick, ms, best_config, best_ms))
    for line in absent[:args.misses]:
        print("not timed:", line)


if __name__ == "__main__":
    main()
