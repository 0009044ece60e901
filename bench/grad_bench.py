#!/usr/bin/env python3
"""Benchmark conv3d-mlir's data and weight gradients against cuDNN's.

bench/run_bench.py's method, for the gradients: for each shape of the suite
(bench/shapes.json), in one process on the same torch tensors (bf16,
channels_last_3d, torch.backends.cudnn.benchmark = True):
  - cuDNN: torch.nn.grad.conv3d_input (dgrad) and conv3d_weight (wgrad);
  - conv3d-mlir: the kinds "dgrad" and "wgrad" of the forward's spec
    (Engine.compile(kind=...), Conv.run_gradient), reading the same memory:
    channels_last_3d dy / weight / x are NDHWF / FQRSC / NDHWC, and the
    results are written into channels_last_3d tensors (NDHWC, FQRSC).
Timing (bench/timing.py): CUDA events around each call, warm-up first,
median of the runs, the L2 flushed before every timed call (--no-flush
turns it off). Correctness: both results against an fp32 (TF32 off) PyTorch
reference. Reports ms, TFLOP/s (the forward's 2*M*N*K), the speed ratio to
cuDNN (cuDNN time / ours), compile time, errors and the geometric means.
--time-budget stops starting new shapes after that many seconds (the GPU
job's limit); the shapes left are listed. --random N --seed S takes N
random layers of bench/netbench/random_layers.py (the network sweep's
families) instead of the suite. --wgrad-folds times the weight gradient
once per fold (Engine.compile's wgrad_fold: auto, width, height-width); the
first is the table's, the others get a column each. --activation times
dgrad through an activation before the forward convolution: cuDNN's dgrad
followed by aten's activation backward (what autograd runs) against ours
with the derivative fused into the epilogue, on the same pre-activation.
"""

import argparse
import json
import math
import os
import sys
import tempfile
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import conv3d  # noqa: E402
import suite  # noqa: E402
from netbench import random_layers  # noqa: E402
import timing  # noqa: E402
from timing import rel_l2  # noqa: E402


def run_shape(engine, shape, args):
    n, c, d, h, w, f = (shape[k] for k in ("N", "C", "D", "H", "W", "F"))
    q, r, s = shape["k"]
    stride, pad, dilation = suite.geometry(shape)
    spec = conv3d.Spec.from_shapes(**suite.spec_args(shape))
    _, do, ho, wo, _ = spec.output_shape()
    flops = spec.flops()
    cl = torch.channels_last_3d
    x = suite.random_input(shape)
    wt = suite.random_weight(shape)
    dy = torch.randn(n, f, do, ho, wo, device="cuda").to(torch.bfloat16).contiguous(
        memory_format=cl)
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    geometry = (stride, pad, dilation)
    result = dict(name=shape["name"], flops=flops)
    stream = torch.cuda.current_stream().cuda_stream
    for kind in args.kinds:
        z = None
        if kind == "dgrad" and args.activation != "none":
            # Through an activation: cuDNN's dgrad then the activation's
            # backward as autograd runs it; ours fused into the epilogue.
            z = torch.randn(n, c, d, h, w, device="cuda").to(torch.bfloat16).contiguous(
                memory_format=cl)
            ref = activation_backward(
                torch.nn.grad.conv3d_input(x.shape, wt.float(), dy.float(), *geometry),
                z.float(), args.activation)
            cudnn = lambda: activation_backward(  # noqa: E731
                torch.nn.grad.conv3d_input(x.shape, wt, dy, *geometry), z, args.activation)
            out = torch.empty(n, c, d, h, w, device="cuda", dtype=torch.bfloat16,
                              memory_format=cl)
        elif kind == "dgrad":
            ref = torch.nn.grad.conv3d_input(x.shape, wt.float(), dy.float(), *geometry)
            cudnn = lambda: torch.nn.grad.conv3d_input(x.shape, wt, dy, *geometry)  # noqa: E731
            out = torch.empty(n, c, d, h, w, device="cuda", dtype=torch.bfloat16,
                              memory_format=cl)
        else:
            ref = torch.nn.grad.conv3d_weight(x.float(), wt.shape, dy.float(), *geometry)
            cudnn = lambda: torch.nn.grad.conv3d_weight(x, wt.shape, dy, *geometry)  # noqa: E731
            out = torch.empty(f, c, q, r, s, device="cuda", dtype=torch.bfloat16,
                              memory_format=cl)
        result[kind + "_cudnn_err"] = rel_l2(cudnn(), ref)
        result[kind + "_cudnn_ms"] = args.timer.median(cudnn)
        folds = args.wgrad_folds if kind == "wgrad" else [None]
        for i, fold in enumerate(folds):
            # The first fold's keys are the kind's; the others' carry the fold.
            key = kind if i == 0 else "%s_%s" % (kind, fold)
            try:
                t0 = time.time()
                kind_spec = spec
                if z is not None:
                    kind_spec = conv3d.Spec.from_shapes(
                        **suite.spec_args(shape), activation=args.activation,
                        residual=True)
                conv = engine.compile(kind_spec, target=args.target, kind=kind,
                                      wgrad_fold=fold if fold != "auto" else None)
                result[key + "_compile_ms"] = (time.time() - t0) * 1e3
            except conv3d.Conv3dError as e:
                result[key + "_error"] = str(e)[:400]
                continue
            if kind == "dgrad" and z is not None:
                call = lambda: conv.run_gradient(  # noqa: E731
                    dy.data_ptr(), out.data_ptr(), filter=wt.data_ptr(), stream=stream,
                    pre_activation=z.data_ptr())
            elif kind == "dgrad":
                call = lambda: conv.run_gradient(dy.data_ptr(), out.data_ptr(),  # noqa: E731
                                                 filter=wt.data_ptr(), stream=stream)
            else:
                call = lambda: conv.run_gradient(dy.data_ptr(), out.data_ptr(),  # noqa: E731
                                                 input=x.data_ptr(), stream=stream)
            out.fill_(float("nan"))
            call()
            torch.cuda.synchronize()
            result[key + "_err"] = rel_l2(out, ref)
            result[key + "_ms"] = args.timer.median(call)
            if args.kernels:
                result[key + "_kernels_us"] = kernel_times(call)
    del x, wt, dy, ref, out
    torch.cuda.empty_cache()
    return result


def activation_backward(grad, z, activation):
    """What autograd runs for the activation's backward (aten's kernels)."""
    if activation == "relu":
        return torch.ops.aten.threshold_backward(grad, z, 0)
    if activation == "silu":
        return torch.ops.aten.silu_backward(grad, z)
    return torch.ops.aten.gelu_backward(grad, z, approximate="tanh")


def random_shapes(count, seed, only=None):
    """`count` random layers as suite shapes (grouped ones left out; those
    `only` names, when given)."""
    shapes = []
    for i, (layer, family) in enumerate(random_layers.generate(count, seed)):
        if layer.groups != 1 or (only and "r%d_%s" % (i, family) not in only):
            continue
        shapes.append(dict(name="r%d_%s" % (i, family), N=layer.n, C=layer.c, D=layer.d,
                           H=layer.h, W=layer.w, F=layer.f, k=list(layer.kernel),
                           stride=list(layer.stride), pad=list(layer.padding),
                           dilation=list(layer.dilation)))
    return shapes


def kernel_times(call, reps=3):
    """[(kernel, microseconds)] of one call, in launch order: the median of
    `reps` profiled calls (torch.profiler's CUDA activity, no replay)."""
    from torch.profiler import ProfilerActivity, profile
    runs = []
    for _ in range(reps):
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            call()
            torch.cuda.synchronize()
        events = sorted((e for e in prof.events() if e.device_type.name == "CUDA"),
                        key=lambda e: e.time_range.start)
        runs.append([(e.name[:40], e.time_range.end - e.time_range.start) for e in events])
    if any(len(run) != len(runs[0]) for run in runs):
        return runs[0]
    return [(runs[0][i][0], sorted(run[i][1] for run in runs)[len(runs) // 2])
            for i in range(len(runs[0]))]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    suite.add_arguments(parser)
    parser.add_argument("--kinds", nargs="+", default=["dgrad", "wgrad"],
                        choices=["dgrad", "wgrad"])
    parser.add_argument("--target", default="sm90")
    parser.add_argument("--kernels", action="store_true",
                        help="also profile one call of ours (torch.profiler): each kernel's "
                        "time, in launch order, in the JSON and the log")
    timing.add_arguments(parser, reps=10, warmup=3)
    parser.add_argument("--time-budget", type=float, default=0,
                        help="seconds after which no new shape is started (0: none)")
    parser.add_argument("--out", default=".")
    parser.add_argument("--random", type=int, default=0,
                        help="N random layers (bench/netbench/random_layers.py) instead of "
                        "the suite")
    parser.add_argument("--seed", type=int, default=61)
    parser.add_argument("--wgrad-folds", nargs="+", default=["auto"],
                        choices=["auto", "width", "height-width"],
                        help="time the weight gradient with each fold (the first is the "
                        "table's)")
    parser.add_argument("--activation", default="none",
                        choices=["none", "relu", "silu", "gelu_tanh"],
                        help="dgrad through this activation: cuDNN's dgrad then aten's "
                        "activation backward, against ours with the derivative fused")
    args = parser.parse_args()
    args.timer = timing.from_arguments(args)
    torch.backends.cudnn.benchmark = True
    shapes = (random_shapes(args.random, args.seed, args.only) if args.random
              else suite.shapes(args))
    engine = conv3d.Engine(cache_dir=tempfile.mkdtemp(prefix="conv3d-grad-cache-"))
    props = torch.cuda.get_device_properties(0)
    print(f"device: {props.name}, torch {torch.__version__}, cuDNN "
          f"{torch.backends.cudnn.version()}, target {args.target}", flush=True)
    start = time.time()
    results, skipped = [], []
    for shape in shapes:
        if args.time_budget and time.time() - start > args.time_budget:
            skipped.append(shape["name"])
            continue
        t0 = time.time()
        res = run_shape(engine, shape, args)
        res["wall_s"] = time.time() - t0
        results.append(res)
        print(json.dumps(res), flush=True)

    lines = [f"target {args.target}; L2 {'not flushed' if args.no_flush else 'flushed'} "
             "between calls; TFLOP/s of the forward's 2*M*N*K"]
    for kind in args.kinds:
        lines += ["", f"{kind}:",
                  "| shape | ours ms | cuDNN ms | ours TFLOP/s | speed vs cuDNN | "
                  "compile ms | rel. err ours / cuDNN |", "|---|---|---|---|---|---|---|"]
        ratios = []
        for r in results:
            if kind + "_ms" not in r:
                lines.append(f"| {r['name']} | error: {r.get(kind + '_error', '?')[:80]} | "
                             f"{r[kind + '_cudnn_ms']:.3f} | | | | |")
                continue
            ratio = r[kind + "_cudnn_ms"] / r[kind + "_ms"]
            ratios.append(ratio)
            lines.append(f"| {r['name']} | {r[kind + '_ms']:.3f} | {r[kind + '_cudnn_ms']:.3f} | "
                         f"{r['flops'] / r[kind + '_ms'] / 1e9:.0f} | {ratio:.2f}x | "
                         f"{r[kind + '_compile_ms']:.0f} | {r[kind + '_err']:.2e} / "
                         f"{r[kind + '_cudnn_err']:.2e} |")
        if ratios:
            geo = math.exp(sum(math.log(v) for v in ratios) / len(ratios))
            lines.append(f"\n{kind} geometric mean speed vs cuDNN: {geo:.3f}x over "
                         f"{len(ratios)} shapes (min {min(ratios):.2f}x, 5th percentile "
                         f"{sorted(ratios)[int(0.05 * (len(ratios) - 1))]:.2f}x)")
        if kind == "wgrad" and len(args.wgrad_folds) > 1:
            lines += ["", "wgrad per fold (ms; the best marked *):",
                      "| shape | " + " | ".join(args.wgrad_folds) + " | cuDNN |",
                      "|---|" + "---|" * (len(args.wgrad_folds) + 1)]
            for r in results:
                keys = ["wgrad"] + ["wgrad_" + f for f in args.wgrad_folds[1:]]
                times = [r.get(k + "_ms") for k in keys]
                best = min((t for t in times if t is not None), default=None)
                cells = ["%.3f%s" % (t, "*" if t == best else "") if t is not None else "error"
                         for t in times]
                lines.append(f"| {r['name']} | " + " | ".join(cells) +
                             f" | {r['wgrad_cudnn_ms']:.3f} |")
    if skipped:
        lines.append("\nnot run (time budget): " + ", ".join(skipped))
    suite.write(args.out, "grad_bench", results, "\n".join(lines))


if __name__ == "__main__":
    main()
