#!/usr/bin/env python3
"""Grouped and depthwise 3-D convolutions on the GPU: the memory limit,
cuDNN and conv3d-mlir, in one process (issue 23).

Shapes (bf16): the depthwise 3x3x3 layers of X3D (C = 432 at 16x14x14,
C = 54 at 16x56x56) and CSN (C = 256 at 8x28x28), MViT-v2's attention
pooling (depthwise 3x3x3 over C = 96 at 8x56x56, stride 1 and the KV
pooling's 1x8x8), grouped 3x3x3 convolutions of 8 and 16 channels per
group (C = F = 256 at 8x28x28), and ResNeXt-like 3-D layers of 32 groups:
of 4 channels (C = 128 at 8x56x56: the depthwise kernel's) and of 16
(C = 512 at 8x14x14).

For each shape, on the same tensors:
  - limit: the bytes a convolution must move (input, filter and output
    once) at 3.35 TB/s, the H100 SXM's DRAM bandwidth (the FLOPs of these
    shapes are far below the tensor cores' limit);
  - cuDNN: torch.nn.functional.conv3d on channels_last_3d tensors and on
    NCDHW (contiguous) tensors, torch.backends.cudnn.benchmark = True;
  - ours: the convolution compiled through the C API for --target, on the
    kernel the compiler picks (the "kernel" column: the depthwise kernel,
    or the sm80 kernel's grouped implicit GEMM for groups of multiples of 8
    channels and filters; conv3d.explain names it); --config forces a
    tile configuration of the grouped GEMM, --tune times its candidates
    (the tuner's choice is used).
Timing (bench/timing.py): CUDA events, warm-up first, median of --reps
runs, the L2 flushed before every timed call (--no-flush turns it off).
Errors: relative L2 against an fp32 cuDNN result (TF32 off).
Prints one table row per shape and, with --json FILE, the rows as JSON.
"""

import argparse
import json
import math
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import conv3d  # noqa: E402
import timing  # noqa: E402
from timing import rel_l2  # noqa: E402

PEAK_BYTES = 3.35e12  # H100 SXM DRAM bandwidth

# name, N, C, (D, H, W), groups, F, stride
SHAPES = [
    ("x3d_dw_c432_16x14x14", 4, 432, (16, 14, 14), 432, 432, (1, 1, 1)),
    ("x3d_dw_c54_16x56x56", 4, 54, (16, 56, 56), 54, 54, (1, 1, 1)),
    ("csn_dw_c256_8x28x28", 4, 256, (8, 28, 28), 256, 256, (1, 1, 1)),
    ("mvit_pool_c96_8x56x56_s1", 1, 96, (8, 56, 56), 96, 96, (1, 1, 1)),
    ("mvit_pool_c96_8x56x56_s188", 1, 96, (8, 56, 56), 96, 96, (1, 8, 8)),
    ("grouped8_c256_8x28x28", 4, 256, (8, 28, 28), 32, 256, (1, 1, 1)),
    ("grouped16_c256_8x28x28", 4, 256, (8, 28, 28), 16, 256, (1, 1, 1)),
    ("resnext_32x4_c128_8x56x56", 4, 128, (8, 56, 56), 32, 128, (1, 1, 1)),
    ("resnext_32x16_c512_8x14x14", 4, 512, (8, 14, 14), 32, 512, (1, 1, 1)),
]


def kernel_of(spec, args):
    """The family conv3d.explain names for `spec` (depthwise, sm80, ...)."""
    report = conv3d.explain(spec, target=args.target, json=True, **compile_options(args))
    return report["convolutions"][0]["family"]


def compile_options(args):
    options = {}
    if args.config:
        options["config"] = args.config
    if args.tune:
        options["tune"] = True
    return options


def run_shape(engine, name, n, c, dhw, groups, f, stride, args):
    d, h, w = dhw
    pad = (1, 1, 1)
    cl = torch.channels_last_3d
    x = torch.randn(n, c, d, h, w, device="cuda").to(torch.bfloat16)
    wt = (torch.randn(f, c // groups, 3, 3, 3, device="cuda")
          / math.sqrt(27 * c // groups)).to(torch.bfloat16)
    x_cl, w_cl = x.contiguous(memory_format=cl), wt.contiguous(memory_format=cl)
    torch.backends.cudnn.allow_tf32 = False
    ref = F.conv3d(x.float(), wt.float(), stride=stride, padding=pad, groups=groups)
    out_shape = ref.shape
    bytes_moved = 2 * (x.numel() + wt.numel() + ref.numel())
    row = dict(name=name, limit_ms=bytes_moved / PEAK_BYTES * 1e3, bytes=bytes_moved)

    for label, xi, wi in (("cudnn_cl", x_cl, w_cl), ("cudnn_ncdhw", x, wt)):
        y = F.conv3d(xi, wi, stride=stride, padding=pad, groups=groups)
        row[label + "_err"] = rel_l2(y, ref)
        row[label + "_ms"] = args.timer.median(
            lambda: F.conv3d(xi, wi, stride=stride, padding=pad, groups=groups))

    spec = conv3d.Spec.from_shapes(
        input_shape=(n, d, h, w, c), filter_shape=(3, 3, 3, c // groups, f),
        strides=stride, padding=(1, 1, 1, 1, 1, 1), filter_layout="fqrsc",
        dtype="bf16", groups=groups)
    try:
        row["kernel"] = kernel_of(spec, args)
        conv = engine.compile(spec, target=args.target, **compile_options(args))
    except conv3d.Conv3dError as e:
        row["ours_error"] = str(e).splitlines()[-1][:300]
        return row
    y = torch.full((n, f) + tuple(out_shape[2:]), float("nan"), device="cuda",
                   dtype=torch.bfloat16).contiguous(memory_format=cl)
    stream = torch.cuda.current_stream().cuda_stream

    def call():
        conv.run(x_cl.data_ptr(), w_cl.data_ptr(), y.data_ptr(), stream=stream)

    call()
    torch.cuda.synchronize()
    row["ours_err"] = rel_l2(y, ref)
    row["ours_ms"] = args.timer.median(call)
    return row


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", default="sm90")
    timing.add_arguments(parser, reps=50, warmup=5)
    parser.add_argument("--only", nargs="*", help="shape names")
    parser.add_argument("--config", help="tile configuration of our kernel "
                        "(conv3d-run --config syntax; GEMM kernels only)")
    parser.add_argument("--tune", action="store_true",
                        help="time the tuner's candidates and use its choice")
    parser.add_argument("--json", help="write the rows to this file")
    args = parser.parse_args()
    torch.backends.cudnn.benchmark = True
    args.timer = timing.from_arguments(args)
    engine = conv3d.Engine()
    print("device: %s; bf16; limit = (input + filter + output bytes) / %.2f TB/s"
          % (torch.cuda.get_device_name(), PEAK_BYTES / 1e12))
    header = ("shape", "kernel", "limit ms", "cuDNN cl ms", "cuDNN ncdhw ms", "ours ms",
              "ours/limit", "cuDNN cl/ours", "err ours", "err cuDNN")
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    rows = []
    for shape in SHAPES:
        if args.only and shape[0] not in args.only:
            continue
        row = run_shape(engine, *shape, args)
        rows.append(row)
        ours = row.get("ours_ms")
        cells = [row["name"], row.get("kernel", "-"), "%.4f" % row["limit_ms"],
                 "%.4f" % row["cudnn_cl_ms"],
                 "%.4f" % row["cudnn_ncdhw_ms"],
                 "%.4f" % ours if ours else "refused",
                 "%.1fx" % (ours / row["limit_ms"]) if ours else "-",
                 "%.1fx" % (row["cudnn_cl_ms"] / ours) if ours else "-",
                 "%.1e" % row["ours_err"] if ours else "-",
                 "%.1e" % row["cudnn_cl_err"]]
        print("| " + " | ".join(cells) + " |", flush=True)
        if "ours_error" in row:
            print("  ours: " + row["ours_error"])
    if args.json:
        with open(args.json, "w") as out:
            json.dump(rows, out, indent=1)


if __name__ == "__main__":
    main()
