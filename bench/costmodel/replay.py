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
With --baseline, a second build's picks are replayed too and both builds
are compared on the layers where both picks were timed (a rule change
before and after).

    python3 bench/costmodel/replay.py bench/costmodel/data/run14-seed32.csv.gz ... \\
        [--tool build/bin/conv3d-run] [--baseline old/bin/conv3d-run]
        [--target sm90] [--misses 20]
"""

import argparse
import collections
import csv
import gzip
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from netbench import compiling, configs  # noqa: E402
from netbench.layers import ConvLayer  # noqa: E402
from netbench.stats import geomean, percentile  # noqa: E402


def layers_of(paths):
    """{(path, index): (ConvLayer, name, [timed rows])}; a path ending in
    .gz is read compressed (bench/costmodel/data)."""
    layers = collections.OrderedDict()
    for path in paths:
        opened = gzip.open(path, "rt") if path.endswith(".gz") else open(path)
        for r in csv.DictReader(opened):
            key = (path, r["index"])
            if key not in layers:
                layers[key] = (ConvLayer.from_dict(r), r["layer"], [])
            if r.get("ms") and not r.get("error"):
                layers[key][2].append(r)
    return layers


def executable(tool, flag):
    """`tool` as a path (a bare name looked up on PATH); exits naming `flag`
    when it is not an executable."""
    if os.sep not in tool:
        tool = shutil.which(tool) or tool
    if not os.access(tool, os.X_OK):
        sys.exit("replay.py: %s is not an executable conv3d-run (%s)" % (tool, flag))
    return tool


def replay(layers, tool, target):
    """({layer key: (pick ms, best ms, cuDNN ms, name, pick, best config)},
    [the picks that were not timed]) of `tool`'s choices."""
    timed_picks, absent = {}, []
    for key, (layer, name, rows) in layers.items():
        if not rows:
            continue
        best = min(rows, key=lambda r: float(r["ms"]))
        pick = compiling.list_configs(layer, target, tool)["heuristic"]
        timed = [r for r in rows if configs.fields(r["config"]) == configs.fields(pick)]
        if not timed:
            absent.append("%s: %s" % (name, pick))
            continue
        timed_picks[key] = (float(timed[0]["ms"]), float(best["ms"]),
                            float(timed[0]["cudnn_ms"]), name, pick, best["config"])
    return timed_picks, absent


def summary_row(picks, keys):
    """The table row of `picks` over `keys`."""
    to_best = [picks[k][1] / picks[k][0] for k in keys]
    vs_cudnn = [picks[k][2] / picks[k][0] for k in keys]
    within = sum(picks[k][0] <= 1.1 * picks[k][1] for k in keys)
    return "| %d (%.0f%%) | %.3f | %.3f | %.3fx | %.3fx |" % (
        within, 100.0 * within / len(keys), geomean(to_best), percentile(to_best, 5),
        geomean(vs_cudnn), percentile(vs_cudnn, 5))


HEADER = ("| pick within 10% of the best | geomean best / pick | 5th percentile "
          "| geomean vs cuDNN | 5th percentile vs cuDNN |\n|---|---|---|---|---|")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("csv", nargs="+", help="candidates.csv files")
    p.add_argument("--tool", default=os.path.join(os.path.dirname(os.path.dirname(HERE)),
                                                  "build", "bin", "conv3d-run"),
                   help="the conv3d-run whose choice is replayed: a path, or a name "
                   "looked up on PATH (default: build/bin/conv3d-run)")
    p.add_argument("--baseline",
                   help="another build's conv3d-run (a path or a name on PATH): its "
                   "choice is replayed too, and both are compared on the layers "
                   "where both picks were timed")
    p.add_argument("--target", default="sm90")
    p.add_argument("--misses", type=int, default=15,
                   help="list this many of the worst picks (default 15)")
    args = p.parse_args()
    args.tool = executable(args.tool, "--tool")
    if args.baseline:
        args.baseline = executable(args.baseline, "--baseline")

    layers = layers_of(args.csv)
    picks, absent = replay(layers, args.tool, args.target)
    if not picks:
        sys.exit("replay.py: no layer's pick was timed")
    print("%d layers replayed with %s (%d picks not among the timed candidates)"
          % (len(picks), args.tool, len(absent)))
    print(HEADER)
    print(summary_row(picks, list(picks)))
    if args.baseline:
        base, _ = replay(layers, args.baseline, args.target)
        both = [k for k in picks if k in base]
        if not both:
            sys.exit("replay.py: no layer has timed picks of both builds")
        print("\n%d layers whose picks were timed with both builds" % len(both))
        print(HEADER.replace("| pick within", "| build | pick within").replace(
            "|---|", "|---|---|", 1))
        print("| baseline " + summary_row(base, both))
        print("| tool " + summary_row(picks, both))
        changed = [k for k in both if configs.fields(base[k][4]) != configs.fields(picks[k][4])]
        print("%d of them picked differently" % len(changed))
    misses = sorted(((ms / best_ms, name, pick, ms, best_config, best_ms)
                     for ms, best_ms, _, name, pick, best_config in picks.values()
                     if ms > 1.1 * best_ms), reverse=True)
    for ratio, name, pick, ms, best_config, best_ms in misses[:args.misses]:
        print("%.2fx  %s\n       pick %s %.4f ms\n       best %s %.4f ms"
              % (ratio, name, pick, ms, best_config, best_ms))
    for line in absent[:args.misses]:
        print("not timed:", line)


if __name__ == "__main__":
    main()
