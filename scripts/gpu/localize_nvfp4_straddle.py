#!/usr/bin/env python3
"""Localizes the sm80 NVFP4 straddle failure on the GPU machine: runs the
failing convolution (test/GPU/sm80-nvfp4-straddle.test) on inputs that
are zero except for one range of channels, and filters that are zero except
for one tap, so that only the K elements (tap, channels) contribute; prints
which ones the GPU gets wrong. With --pairs, the input is whole and the
filter is zero except for two K steps (32 consecutive k of the kernel's K
loop each): when every step alone is exact but some pairs are not, the
contributions of different K-loop iterations do not add up, and the failing
pairs show the distance between them. Extra arguments go to every conv3d-run
(e.g. --ptxas-options=-O0, --target=sm90). Usage, after `source
scripts/gpu/env.sh`:

  scripts/gpu/localize_nvfp4_straddle.py [--pairs] [conv3d-run flags...]
"""
import json
import math
import os
import random
import struct
import subprocess
import sys
import tempfile

SPEC = ["--input-shape=1,9,4,3,48", "--filter-shape=3,3,3,48,3",
        "--padding=3,3,2,1,0,2", "--filter-layout=fqrsc", "--stride=2,1,1",
        "--dilation=1,3,1", "--dtype=f16", "--output-dtype=f32",
        "--activation=silu", "--quantize-input=nvfp4", "--block-size=32",
        "--quant-placement=tile", "--qslice=none", "--no-cache", "--json"]
INPUT = (1, 9, 4, 3, 48)   # N D H W C
FILTER = (3, 3, 3, 3, 48)  # F Q R S C (FQRSC)
# Taps (q, r, s) that read inside the input for some output: r = 1 only
# (H = 4, dilation 3, padding 2 + 1).
TAPS = [(q, 1, s) for q in range(3) for s in range(3)]
# Channel ranges: NVFP4 blocks of 32 over C = 48 start at channel 0 or 32 of
# a tap, so [0, 16) and [32, 48) are the two halves of the blocks that
# straddle taps, [16, 32) the end of the blocks that do not.
RANGES = [(0, 16), (16, 32), (32, 48)]


def save_npy(path, shape, values):
    dims = ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "")
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }" % dims
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    with open(path, "wb") as out:
        out.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)))
        out.write(header.encode("latin1"))
        out.write(struct.pack("<%df" % len(values), *values))


def run(extra, input_path, filter_path):
    out = subprocess.run(["conv3d-run"] + SPEC + extra +
                         ["--input=" + input_path, "--filter=" + filter_path],
                         capture_output=True, text=True)
    for line in out.stdout.splitlines():
        if line.startswith("{"):
            return json.loads(line).get("rel_l2")
    return "error: " + (out.stderr.strip().splitlines() or ["?"])[-1]


def tap_of(k):
    """(q, r, s) of the filter tap holding GEMM column k (channels fastest)."""
    tap = k // FILTER[4]
    return (tap // 9, tap // 3 % 3, tap % 3)


def localize_pairs(extra, rng, work):
    k_total = FILTER[1] * FILTER[2] * FILTER[3] * FILTER[4]
    step = 32  # the heuristic's tile_k
    # K steps holding a tap that reads inside the input.
    steps = sorted({k // step for k in range(k_total) if tap_of(k) in TAPS})
    data = [rng.gauss(0.0, 1.0) for _ in range(math.prod(INPUT))]
    input_path = os.path.join(work, "input.npy")
    save_npy(input_path, INPUT, data)
    filter_path = os.path.join(work, "filter.npy")

    def error_of(chosen):
        filt = [0.0] * math.prod(FILTER)
        for f in range(FILTER[0]):
            for k in range(k_total):
                if k // step in chosen:
                    filt[f * k_total + k] = (rng.gauss(0.0, 1.0) /
                                             math.sqrt(k_total))
        save_npy(filter_path, FILTER, filt)
        return run(extra, input_path, filter_path)

    print("K steps of %d with taps inside the input: %s" % (step, steps))
    bad_single = [(s, e) for s in steps for e in [error_of({s})]
                  if not isinstance(e, float) or e > 2e-5]
    print("single steps over the tolerance: %s" % (bad_single or "none"))
    bad = []
    for i, first in enumerate(steps):
        for second in steps[i + 1:]:
            error = error_of({first, second})
            if not isinstance(error, float) or error > 2e-5:
                bad.append((first, second, error))
    print("step pairs over the tolerance (first, second, error):")
    for first, second, error in bad:
        print("  %2d %2d  distance %2d  %s" % (first, second, second - first,
                                               error))
    if not bad:
        print("  none")


def main():
    args = sys.argv[1:]
    rng = random.Random(1)
    work = tempfile.mkdtemp()
    if args[:1] == ["--pairs"]:
        return localize_pairs(args[1:], rng, work)
    extra = args
    k = FILTER[1] * FILTER[2] * FILTER[3] * FILTER[4]
    print("rel. L2 error per (tap, channel range); tolerance 2e-5")
    print("tap (q,r,s)   " + "   ".join("c%2d-%2d" % r for r in RANGES) +
          "   all channels")
    for tap in TAPS:
        filt = [0.0] * math.prod(FILTER)
        for f in range(FILTER[0]):
            for c in range(FILTER[4]):
                index = (((f * 3 + tap[0]) * 3 + tap[1]) * 3 + tap[2]) * 48 + c
                filt[index] = rng.gauss(0.0, 1.0) / math.sqrt(k)
        filter_path = os.path.join(work, "filter.npy")
        save_npy(filter_path, FILTER, filt)
        cells = []
        for lo, hi in RANGES + [(0, 48)]:
            data = [rng.gauss(0.0, 1.0) if lo <= i % 48 < hi else 0.0
                    for i in range(math.prod(INPUT))]
            input_path = os.path.join(work, "input.npy")
            save_npy(input_path, INPUT, data)
            error = run(extra, input_path, filter_path)
            cells.append("%9.2e" % error if isinstance(error, float)
                         else error)
        print("%-12s  %s" % (str(tap), "  ".join(cells)))


if __name__ == "__main__":
    main()
