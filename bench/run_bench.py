#!/usr/bin/env python3
"""Benchmark conv3d-mlir against cuDNN on the GPU, in one process.

For each shape of the suite (bench/shapes.json), on the same torch tensors:
  - cuDNN: torch.nn.functional.conv3d on bf16 channels_last_3d tensors with
    torch.backends.cudnn.benchmark = True (what PyTorch users get);
  - conv3d-mlir: each target's kernel (--targets, default sm90 then sm80;
    compiled once through the C API) reading the same memory:
    channels_last_3d input/weight/output are NDHWC / FQRSC / NDHWF, the
    layouts the kernels take;
  - optionally the fused NVFP4 variant (input quantized in the tile load).
Timing (bench/timing.py): CUDA events around each call, warm-up first,
median of the runs; the L2 is flushed before every timed call (a write of
max(2 x L2, 256 MiB), as triton.testing.do_bench does: the conservative
number; --no-flush turns it off), and the calls rotate among several input
sets.
Correctness: both outputs against an fp32 (TF32 off) cuDNN reference.
Reports ms, TFLOP/s, the speed ratio to cuDNN (cuDNN time / ours), the
fraction of the roofline limit (max(FLOPs / 730 TFLOP/s, bytes / 3 TB/s) /
time), compile time, and the geometric mean of the ratio.
"""

import argparse
import itertools
import json
import math
import os
import sys
import tempfile
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import conv3d  # noqa: E402
import suite  # noqa: E402
import timing  # noqa: E402
from timing import rel_l2  # noqa: E402

PEAK_FLOPS = 730e12  # bf16 MMA, measured on the H100 (TOOLCHAIN.md)
PEAK_BYTES = 3.0e12  # device copy, reads + writes
L2_BYTES = 50 << 20


def rotating(fn):
    """fn(i) as a call of no arguments, i counting the calls: the timed
    calls rotate among the input sets."""
    counter = itertools.count()
    return lambda: fn(next(counter))


def run_shape(engine, shape, args):
    n, c, d, h, w, f = (shape[k] for k in ("N", "C", "D", "H", "W", "F"))
    q, r, s = shape["k"]
    stride, pad, dilation = suite.geometry(shape)
    spec_args = suite.spec_args(shape)
    spec = conv3d.Spec.from_shapes(**spec_args)
    nn, do, ho, wo, ff = spec.output_shape()
    flops = spec.flops()
    in_bytes = n * d * h * w * c * 2
    out_bytes = nn * do * ho * wo * ff * 2
    bytes_moved = in_bytes + q * r * s * c * f * 2 + out_bytes
    limit_ms = max(flops / PEAK_FLOPS, bytes_moved / PEAK_BYTES) * 1e3

    sets = max(1, min(4, math.ceil(3 * L2_BYTES / in_bytes)))
    cl = torch.channels_last_3d
    xs = [suite.random_input(shape) for _ in range(sets)]
    wt = suite.random_weight(shape)
    ys = [torch.empty(n, f, do, ho, wo, device="cuda", dtype=torch.bfloat16,
                      memory_format=cl) for _ in range(sets)]

    # Reference in fp32 without TF32.
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    ref = F.conv3d(xs[0].float(), wt.float(), stride=stride, padding=pad, dilation=dilation)

    # cuDNN.
    cudnn_out = F.conv3d(xs[0], wt, stride=stride, padding=pad, dilation=dilation)
    cudnn_err = rel_l2(cudnn_out, ref)
    cudnn_ms = args.timer.median(rotating(
        lambda i: F.conv3d(xs[i % sets], wt, stride=stride, padding=pad, dilation=dilation)))

    result = dict(name=shape["name"], flops=flops, bytes=bytes_moved, limit_ms=limit_ms,
                  cudnn_ms=cudnn_ms, cudnn_err=cudnn_err)
    stream = torch.cuda.current_stream().cuda_stream
    if args.configs:
        # Tuning: every configuration on the same data; errors are reported.
        tuning = {}
        for cfg in args.configs:
            try:
                conv = engine.compile(spec, target=args.targets[0], config=cfg)
            except conv3d.Conv3dError as e:
                tuning[cfg] = str(e).splitlines()[-1][:120]
                continue
            def call(i):
                conv.run(xs[i % sets].data_ptr(), wt.data_ptr(), ys[i % sets].data_ptr(),
                         stream=stream)
            ys[0].fill_(float("nan"))
            call(0)
            torch.cuda.synchronize()
            err = rel_l2(ys[0], ref)
            ms = args.timer.median(rotating(call))
            tuning[cfg] = dict(ms=ms, err=err, ratio=cudnn_ms / ms)
        result["tuning"] = tuning
    # The first target is "ours"; the others are timed beside it.
    variants = [("ours", dict(), None, args.targets[0])]
    variants += [(t, dict(), None, t) for t in args.targets[1:]]
    if args.heuristic:
        variants.append(("heuristic", dict(), None, args.targets[0]))
    if args.nvfp4:
        # The compiler's placement (cost model) and both forced placements
        # (what the cost model's rates are calibrated from).
        variants.append(("nvfp4", dict(quant_block_size=16), "auto", args.targets[0]))
        variants.append(("nvfp4tile", dict(quant_block_size=16), "tile", args.targets[0]))
        variants.append(("nvfp4prepass", dict(quant_block_size=16), "prepass",
                         args.targets[0]))
    for label, extra, placement, target in variants:
        vspec = conv3d.Spec.from_shapes(**spec_args, **extra)
        # --tune: our main kernel's configuration is chosen by timing.
        tune = args.tune and label == "ours"
        try:
            t0 = time.time()
            conv = engine.compile(vspec, target=target, config=args.config,
                                  quant_placement=placement, tune=tune,
                                  selection="heuristic" if label == "heuristic" else None)
            if tune:
                result["tune_s"] = time.time() - t0
                result["ours_config"] = conv.config
        except conv3d.Conv3dError as e:
            result[label + "_error"] = str(e)[:400]
            continue
        for y in ys:
            y.fill_(float("nan"))
        amax = xs[0].abs().max().item()
        def call(i):
            conv.run(xs[i % sets].data_ptr(), wt.data_ptr(), ys[i % sets].data_ptr(),
                     amax=amax, stream=stream)
        call(0)
        torch.cuda.synchronize()
        if not extra:
            result[label + "_err"] = rel_l2(ys[0], ref)
        else:
            # NVFP4 changes the operand (its exactness is tested elsewhere);
            # report the distance to the unquantized result.
            result[label + "_vs_bf16"] = rel_l2(ys[0], ref)
        result[label + "_ms"] = args.timer.median(rotating(call))
        result[label + "_compile_ms"] = conv.compile_millis
        if label == "ours":
            # A second engine stands in for a second process: it loads the
            # kernel from the disk cache the first one filled.
            cached = conv3d.Engine(cache_dir=args.cache_dir).compile(
                vspec, target=target, config=args.config, quant_placement=placement,
                tune=tune)
            assert cached.compile_source == "disk cache", cached.compile_source
            result["ours_cached_compile_ms"] = cached.compile_millis
    del xs, ys, wt, ref, cudnn_out
    torch.cuda.empty_cache()
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    suite.add_arguments(parser)
    timing.add_arguments(parser, reps=20, warmup=5)
    parser.add_argument("--config", default=None, help="force a tile configuration")
    parser.add_argument("--tune", action="store_true",
                        help="compile our main kernels with tune=True (the configuration "
                             "chosen by timing, as cudnn.benchmark does)")
    parser.add_argument("--configs", nargs="*", default=None,
                        help="time each of these configurations per shape (tuning)")
    parser.add_argument("--nvfp4", action="store_true", help="also time fused NVFP4")
    parser.add_argument("--heuristic", action="store_true",
                        help="also time the kernel families' rules (selection=heuristic) "
                             "beside the default cost-model pick")
    parser.add_argument("--targets", nargs="+", default=["sm90", "sm80"],
                        help="targets to time; the first is the one the table and "
                        "the NVFP4 and tuning runs use")
    parser.add_argument("--out", default=".")
    args = parser.parse_args()
    args.timer = timing.from_arguments(args)

    torch.backends.cudnn.benchmark = True
    shapes = suite.shapes(args)
    # A fresh disk cache: compile times are cold compilations.
    args.cache_dir = tempfile.mkdtemp(prefix="conv3d-bench-cache-")
    engine = conv3d.Engine(cache_dir=args.cache_dir)
    props = torch.cuda.get_device_properties(0)
    print(f"device: {props.name}, torch {torch.__version__}, cuDNN {torch.backends.cudnn.version()}",
          flush=True)
    results = []
    for shape in shapes:
        t0 = time.time()
        res = run_shape(engine, shape, args)
        res["wall_s"] = time.time() - t0
        results.append(res)
        print(json.dumps(res), flush=True)

    lines = [f"targets: {' '.join(args.targets)} (ours = {args.targets[0]}); "
             f"L2 {'not flushed' if args.no_flush else 'flushed'} between calls",
             "| shape | ours ms | cuDNN ms | ours TFLOP/s | speed vs cuDNN | of limit | "
             "compile ms (cold / cached) | rel. err ours / cuDNN |"
             + "".join(f" {t} ms | {t} vs cuDNN |" for t in args.targets[1:]),
             "|---|---|---|---|---|---|---|---|" + "---|---|" * len(args.targets[1:])]
    ratios = []
    for r in results:
        if "ours_ms" not in r:
            lines.append(f"| {r['name']} | error: {r.get('ours_error', '?')[:60]} | {r['cudnn_ms']:.3f} | | | | | |")
            continue
        ratio = r["cudnn_ms"] / r["ours_ms"]
        ratios.append(ratio)
        lines.append(
            f"| {r['name']} | {r['ours_ms']:.3f} | {r['cudnn_ms']:.3f} | "
            f"{r['flops'] / r['ours_ms'] / 1e9:.0f} | {ratio:.2f}x | "
            f"{r['limit_ms'] / r['ours_ms'] * 100:.0f}% | {r['ours_compile_ms']:.0f} / "
            f"{r['ours_cached_compile_ms']:.0f} | "
            f"{r['ours_err']:.2e} / {r['cudnn_err']:.2e} |"
            + "".join(f" {r[t + '_ms']:.3f} | {r['cudnn_ms'] / r[t + '_ms']:.2f}x |"
                      if t + "_ms" in r else " error | |" for t in args.targets[1:]))
    if ratios:
        geo = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
        lines.append(f"\ngeometric mean speed vs cuDNN ({args.targets[0]}): {geo:.3f}x over "
                     f"{len(ratios)} shapes")
    for t in args.targets[1:]:
        other = [r["cudnn_ms"] / r[t + "_ms"] for r in results if t + "_ms" in r]
        if other:
            geo = math.exp(sum(math.log(x) for x in other) / len(other))
            lines.append(f"geometric mean speed vs cuDNN ({t}): {geo:.3f}x over {len(other)} shapes")
    if args.nvfp4:
        lines.append("\n| shape | bf16 ms | NVFP4 (compiler's placement) ms | ratio | "
                     "NVFP4 in the tile load ms | ratio | NVFP4 prepass ms | ratio |")
        lines.append("|---|---|---|---|---|---|---|---|")
        for r in results:
            if "nvfp4_ms" in r and "ours_ms" in r:
                tile = r.get("nvfp4tile_ms", float("nan"))
                prepass = r.get("nvfp4prepass_ms", float("nan"))
                lines.append(f"| {r['name']} | {r['ours_ms']:.3f} | {r['nvfp4_ms']:.3f} | "
                             f"{r['nvfp4_ms'] / r['ours_ms']:.2f} | {tile:.3f} | "
                             f"{tile / r['ours_ms']:.2f} | {prepass:.3f} | "
                             f"{prepass / r['ours_ms']:.2f} |")
    for r in results:
        if "ours_config" in r:
            lines.append(f"tuned {r['name']}: {r['ours_config']} (tuning took {r['tune_s']:.1f} s)")
        for cfg, t in r.get("tuning", {}).items():
            if isinstance(t, dict):
                lines.append(f"tune {r['name']} {cfg}: {t['ms']:.3f} ms, {t['ratio']:.2f}x cuDNN, err {t['err']:.1e}")
            else:
                lines.append(f"tune {r['name']} {cfg}: {t}")
    suite.write(args.out, "bench", results, "\n".join(lines))


if __name__ == "__main__":
    main()
