"""Issue 21's two worst layers of the network benchmark (the U-Net
bottleneck, N=2 C=F=320 4x6x6 3x3x3, and s3d's classifier, N=2
C=1024->400 1x1x1) timed alone in a fresh process: ours
(conv3d.torch.conv3d) against cuDNN with bench/timing.py's Timer, with and
without the L2 flush; the host time per call; the kernels one call
launches (torch.profiler). bench/networks.py measured these layers at
75.7 / 28.0 us and 81.6 / 51.5 us (ours / cuDNN) with a spread of 2.6-3.8x
its median on ours; alone they are not slower (bench/RESULTS.md, ninth
session). Run on the GPU machine from the repository root with the
carried build's environment (scripts/gpu/env.sh)."""
import sys, time, statistics, torch, torch.nn.functional as F
sys.path.insert(0, "bench")
import conv3d, conv3d.torch
import timing
torch.backends.cudnn.benchmark = True
CL = torch.channels_last_3d
def mk(n, c, d, h, w, f, k, pad):
    g = torch.Generator(device="cpu").manual_seed(0)
    x = torch.randn(n, c, d, h, w, generator=g).cuda().bfloat16().contiguous(memory_format=CL)
    wt = (torch.randn(f, c, k, k, k, generator=g) * 0.05).cuda().bfloat16().contiguous(memory_format=CL)
    b = torch.randn(f, generator=g).cuda().bfloat16()
    return x, wt, b, pad
for name, (x, w, b, pad) in {"unet_bottleneck": mk(2, 320, 4, 6, 6, 320, 3, 1),
                              "s3d_classifier": mk(2, 1024, 1, 1, 1, 400, 1, 0)}.items():
    ours = lambda: conv3d.torch.conv3d(x, w, b, 1, pad, 1, 1, target="sm90")
    cud = lambda: F.conv3d(x, w, b, 1, pad, 1, 1)
    for flush in (True, False):
        t = timing.Timer(50, 5, flush=flush, device="cuda")
        times = t.interleaved({"ours": ours, "cudnn": cud})
        print(name, "flush" if flush else "no flush", {k: "%.1f us (min %.1f, max %.1f)" % (statistics.median(v) * 1e3, min(v) * 1e3, max(v) * 1e3) for k, v in times.items()})
    # host time of one call
    torch.cuda.synchronize(); s = time.perf_counter()
    for _ in range(100): ours()
    h1 = (time.perf_counter() - s) * 1e4; torch.cuda.synchronize()
    s = time.perf_counter()
    for _ in range(100): cud()
    h2 = (time.perf_counter() - s) * 1e4; torch.cuda.synchronize()
    print(name, "host us per call: ours %.1f cudnn %.1f" % (h1, h2))
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA, torch.profiler.ProfilerActivity.CPU]) as p:
        for _ in range(5): ours()
        torch.cuda.synchronize()
    ev = [e for e in p.events() if e.device_type.name == "CUDA"]
    print(name, "ours kernels:", sorted(set("%s %.1fus" % (e.name[:40], (e.time_range.end - e.time_range.start)) for e in ev))[:8])
    syncs = [e.name for e in p.events() if "Synchronize" in e.name or "Memcpy" in e.name or "Malloc" in e.name or "Free" in e.name]
    print(name, "ours runtime calls:", sorted(set(syncs))[:10])
