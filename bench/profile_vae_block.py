#!/usr/bin/env python3
"""Where one chunk of bench/vae_block.py's streaming block spends its time:
torch.profiler over a few decoded chunks of a wan_chunk preset, printing the
GPU kernels (total and per chunk) and the host time per chunk, for the
library's default path. Needs a CUDA GPU.

    python3 bench/profile_vae_block.py [--shape wan_chunk_mid] [--chunks 6]
"""
import argparse
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vae_block as vb  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shape", default="wan_chunk_mid")
    ap.add_argument("--chunks", type=int, default=6)
    a = ap.parse_args()
    suite = {s["name"]: s for s in json.load(open(os.path.join(vb.ROOT, "bench", "shapes.json")))["shapes"]}
    s = suite[a.shape]
    c, h, w, frames = s["C"], s["H"], s["W"], s["D"] - vb.CACHE_T
    dev = torch.device("cuda")
    torch.manual_seed(0)
    eager = vb.EagerBlock(c, torch.bfloat16, dev)
    ours = vb.StreamingBlock(eager, "auto")
    chunks = [torch.randn(1, c, frames, h, w, device=dev, dtype=torch.bfloat16).contiguous(
        memory_format=torch.channels_last_3d) for _ in range(a.chunks)]
    with torch.no_grad():
        for block, label in ((eager, "eager"), (ours, "conv3d default")):
            vb.decode(block, chunks)
            torch.cuda.synchronize()
            with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU,
                                                    torch.profiler.ProfilerActivity.CUDA]) as prof:
                vb.decode(block, chunks)
                torch.cuda.synchronize()
            print("==", label, a.shape)
            print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=14,
                                            max_name_column_width=60))


if __name__ == "__main__":
    main()
