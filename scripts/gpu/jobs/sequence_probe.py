"""Whether many other convolutions run first slow the U-Net bottleneck
(N=2, C=F=320, 4x6x6, 3x3x3) down in one process, as in bench/networks.py
(bench/RESULTS.md, ninth session): ours against cuDNN with bench/timing.py's
Timer (L2 flushed) fresh, after 40 other distinct convolutions through
conv3d.torch, and after conv3d.clear_cache(). Run on the GPU machine from the
repository root with scripts/gpu/env.sh's environment."""
import statistics
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, "bench")
import conv3d  # noqa: E402
import conv3d.torch  # noqa: E402
import timing  # noqa: E402

torch.backends.cudnn.benchmark = True
CL = torch.channels_last_3d
gen = torch.Generator(device="cpu").manual_seed(0)


def tensors(n, c, d, h, w, f, k):
    x = torch.randn(n, c, d, h, w, generator=gen).cuda().bfloat16().contiguous(memory_format=CL)
    wt = (torch.randn(f, c, k, k, k, generator=gen) * 0.05).cuda().bfloat16().contiguous(
        memory_format=CL)
    return x, wt, torch.randn(f, generator=gen).cuda().bfloat16()


x, w, b = tensors(2, 320, 4, 6, 6, 320, 3)


def measure(label):
    timer = timing.Timer(50, 5, flush=True, device="cuda")
    times = timer.interleaved({
        "ours": lambda: conv3d.torch.conv3d(x, w, b, 1, 1, 1, 1, target="sm90"),
        "cudnn": lambda: F.conv3d(x, w, b, 1, 1, 1, 1)})
    print("%-40s ours %.1f us (max %.1f), cuDNN %.1f us" % (
        label, statistics.median(times["ours"]) * 1e3, max(times["ours"]) * 1e3,
        statistics.median(times["cudnn"]) * 1e3), flush=True)


measure("fresh")
others = []
for i in range(40):
    c = 64 + 32 * (i % 6)
    others.append(tensors(2, c, 4 + i % 3, 8 + i % 5, 8 + i % 7, 64 + 32 * (i % 4), 3))
for ox, ow, ob in others:
    conv3d.torch.conv3d(ox, ow, ob, 1, 1, 1, 1, target="sm90")
torch.cuda.synchronize()
measure("after 40 other convolutions")
measure("again")
conv3d.clear_cache()
measure("after conv3d.clear_cache()")
