#!/usr/bin/env python3
"""Random grouped convolutions for the sm80 kernel's grouped implicit GEMM,
run in the PTX emulator (sm80-grouped-emulate*.test).

  grouped_gemm_cases.py --seed S --count N [--print]

draws N cases from seed S: groups of 8, 16 or 24 channels and 8, 16 or 32
filters (the multiples of 8 the sm80 family takes), 2 to 6 groups, random
windows, strides, dilations and asymmetric paddings, both filter layouts,
bf16 and f16, the epilogues (bias, activations, residual, accumulation
into an f32 output), and the sm80, sm90 and sm100 targets (the last two
fall back to the sm80 kernel). For each case it asks `conv3d-run --explain`
which kernel takes it (it must be sm80), then runs `conv3d-run --emulate`
(fresh random data from the case's --seed, the output poisoned with NaN,
checked against the float64 reference) and prints one line per case.
Exit status 1 when a case picks another kernel or fails its check.
With --print, only prints the cases' flags. Environment: CONV3D_RUN
(default: conv3d-run on PATH).
"""
import argparse
import os
import random
import subprocess
import sys


def make_case(rng, index):
    """conv3d-run flags of one random case."""
    groups = rng.randint(2, 6)
    cg = rng.choice([8, 8, 16, 24])
    fg = rng.choice([8, 8, 16, 32])
    n = rng.choice([1, 1, 2])
    window = [rng.choice([1, 2, 3]), rng.choice([1, 3]), rng.choice([1, 2, 3])]
    strides = [rng.choice([1, 1, 2]) for _ in range(3)]
    dilations = [rng.choice([1, 1, 2]) for _ in range(3)]
    padding = [rng.randint(0, 2) for _ in range(6)]
    # Input sizes the dilated windows fit (with the padding).
    sizes = []
    for axis in range(3):
        span = (window[axis] - 1) * dilations[axis] + 1
        low = max(1, span - padding[2 * axis] - padding[2 * axis + 1])
        sizes.append(rng.randint(low, low + 5))
    flags = [
        "--target=" + rng.choice(["sm80", "sm80", "sm90", "sm100"]),
        "--dtype=" + rng.choice(["bf16", "f16"]),
        "--filter-layout=" + rng.choice(["qrscf", "fqrsc"]),
        "--input-shape=%d,%d,%d,%d,%d" % (n, *sizes, groups * cg),
        "--filter-shape=%d,%d,%d,%d,%d" % (*window, cg, groups * fg),
        "--groups=%d" % groups,
        "--stride=%d,%d,%d" % tuple(strides),
        "--dilation=%d,%d,%d" % tuple(dilations),
        "--padding=%d,%d,%d,%d,%d,%d" % tuple(padding),
        "--seed=%d" % rng.randint(1, 1 << 30),
    ]
    if rng.random() < 0.5:
        flags.append("--bias")
    flags.append("--activation=" + rng.choice(["none", "relu", "silu", "gelu_tanh"]))
    epilogue = rng.choice(["overwrite", "residual", "accumulate"])
    if epilogue == "residual":
        flags.append("--residual")
    elif epilogue == "accumulate":
        flags += ["--accumulate", "--output-dtype=f32"]
    return flags


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--count", type=int, required=True)
    parser.add_argument("--print", action="store_true", help="only print the cases")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    tool = os.environ.get("CONV3D_RUN", "conv3d-run")
    env = dict(os.environ)
    env.setdefault("CONV3D_EMULATOR_SMS", "2")
    failed = 0
    for index in range(args.count):
        flags = make_case(rng, index)
        if args.print:
            print(" ".join(flags))
            continue
        explain = subprocess.run([tool, "--explain"] + flags, capture_output=True, text=True)
        kernel = next((line.split()[1] for line in explain.stdout.splitlines()
                       if line.strip().startswith("kernel:")), None)
        if kernel != "sm80":
            print("case %d: FAIL: kernel %s, not sm80: %s\n%s" % (
                index, kernel, " ".join(flags), explain.stdout + explain.stderr))
            failed += 1
            continue
        run = subprocess.run([tool, "--emulate", "--quiet"] + flags, capture_output=True,
                             text=True, env=env)
        check = [line for line in run.stdout.splitlines() if line.startswith("check:")]
        ok = run.returncode == 0 and check and check[-1].endswith("PASS")
        print("case %d: %s: %s%s" % (index, "PASS" if ok else "FAIL", " ".join(flags),
                                     "" if ok else "\n" + run.stdout + run.stderr))
        failed += 0 if ok else 1
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
