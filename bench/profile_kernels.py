#!/usr/bin/env python3
"""Kernel timeline of compiled convolutions, from the CUDA profiler.

For each named shape of bench/shapes.json and each variant (bf16; NVFP4 with
the compiler's placement; NVFP4 in the tile load), runs the compiled
convolution a few times under torch.profiler and prints every GPU kernel and
memory operation it issued with its device time, so the cost of auxiliary
kernels (the NVFP4 prepass, split-K fills and epilogues) and of the gaps
between them can be read off directly. Usage (GPU machine):
    python3 bench/profile_kernels.py --only pointwise_384 wan_chunk_mid
"""

import argparse
import os
import sys

import torch
from torch.profiler import ProfilerActivity, profile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import conv3d  # noqa: E402
import suite  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    suite.add_arguments(parser)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--target", default="sm80")
    parser.add_argument("--configs", nargs="*", default=None,
                        help="bf16 only: profile each forced tile configuration")
    args = parser.parse_args()
    engine = conv3d.Engine(cache_dir="")
    for shape in suite.shapes(args):
        n, f = shape["N"], shape["F"]
        base = suite.spec_args(shape)
        cl = torch.channels_last_3d
        x = suite.random_input(shape)
        wt = suite.random_weight(shape, scaled=False)
        spec = conv3d.Spec.from_shapes(**base)
        do, ho, wo = spec.output_shape()[1:4]
        y = torch.empty(n, f, do, ho, wo, device="cuda", dtype=torch.bfloat16, memory_format=cl)
        amax = x.abs().max().item()
        stream = torch.cuda.current_stream().cuda_stream
        variants = [("bf16", {}, None, None),
                    ("nvfp4", dict(quant_block_size=16), "auto", None),
                    ("nvfp4-tile", dict(quant_block_size=16), "tile", None)]
        if args.configs:
            variants = [("bf16 " + c, {}, None, c) for c in args.configs]
        for label, extra, placement, config in variants:
            try:
                conv = engine.compile(conv3d.Spec.from_shapes(**base, **extra),
                                      target=args.target, quant_placement=placement,
                                      config=config)
            except conv3d.Conv3dError as e:
                print(f"\n{shape['name']} {label}: refused: {str(e).splitlines()[0][:160]}")
                continue
            run = lambda: conv.run(x.data_ptr(), wt.data_ptr(), y.data_ptr(), amax=amax,
                                   stream=stream)
            run()
            torch.cuda.synchronize()
            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                for _ in range(args.runs):
                    run()
                torch.cuda.synchronize()
            events = sorted((e for e in prof.events() if e.device_type.name == "CUDA"),
                            key=lambda e: e.time_range.start)
            print(f"\n{shape['name']} {label}:")
            last_end = None
            for e in events[-3 * args.runs:]:
                start, end = e.time_range.start, e.time_range.end
                gap = "" if last_end is None else f" (gap {start - last_end:.1f} us)"
                print(f"  {e.name[:40]:40s} {end - start:9.1f} us{gap}")
                last_end = end


if __name__ == "__main__":
    main()
