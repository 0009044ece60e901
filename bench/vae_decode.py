#!/usr/bin/env python3
"""A whole WAN 2.1 VAE decode (conv3d.models.wan_vae), random weights: eager
PyTorch (cuDNN, bf16, the caches concatenated and padded as WAN does) against
Conv3dWanDecoder on one GPU, and Conv3dWanDecoder with the height split over
the GPUs of a torchrun job.

    python3 bench/vae_decode.py [--sizes 480p,720p] [--frames 21] [--json out.json]
    torchrun --nproc_per_node 4 bench/vae_decode.py --sizes 720p [--frames 21]

Sizes: 480p is the latent 1x16xTx60x104 (81 x 480 x 832 frames for T = 21),
720p 1x16xTx90x160 (81 x 720 x 1280), or HxW for any latent height and
width; --frames T sets the latent frames (1 + 4 (T - 1) video frames), so a
short run fits in a few minutes.

One process: per size, the float32 eager decode (TF32 off) as the accuracy
reference, then the eager bf16 decode and ours, each warmed up on a 4-frame
latent (cuDNN's autotuning, conv3d's compilations: every shape has occurred
by the fourth chunk) and timed over --repeat
whole decodes (median); the peak memory PyTorch allocated
(max_memory_allocated, weights included) and the device memory in use after
the decode (mem_get_info: PyTorch's cache and conv3d's own buffers too),
and for ours the high-water mark of the conv3d runtime's own memory pool
(conv3d.cuda_pool_memory: its temporaries, which PyTorch's peak leaves out);
each decode's rel_l2 against the float32 one (before the clamp); then the
per-stage breakdown of a --profile-frames decode: ours from CUDA events
around each step (convolutions with their fused norm + SiLU prologue and
residual, upsampling, attention, communication, other), eager from
torch.profiler's device time per PyTorch op, grouped (convolutions, norms +
SiLU, upsampling and the time conv's rearrangement, attention, cache
copies: cat / pad / clone, other), and the ops and kernels with the most
device time in each (--top-kernels, torch.profiler: conv3d's kernels
appear under their own names).

torchrun (world size P > 1, NCCL): every rank decodes its rows (the split
of Conv3dWanDecoder); rank 0 prints the time (from a barrier to every
rank's end, median over --repeat), each rank's peak memory, the rel_l2 of
the gathered video against our one-GPU decode on rank 0 (and against the
float32 eager one with --reference), and rank 0's stage breakdown (the
exposed communication is the time the stream waited for NCCL).
Set CONV3D_CUDA_DEVICE per rank: this script sets it from LOCAL_RANK.
"""

import argparse
import json
import math
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
LOCAL_RANK = int(os.environ.get("LOCAL_RANK", "0"))
os.environ.setdefault("CONV3D_CUDA_DEVICE", str(LOCAL_RANK))

import torch  # noqa: E402

import conv3d  # noqa: E402
from conv3d.models import wan_vae as W  # noqa: E402
from conv3d.models._wan_conv3d import StageTimes  # noqa: E402

SIZES = {"480p": (60, 104), "720p": (90, 160)}
SPLIT_TOLERANCE = 2e-2  # rel_l2 of the split decode against the one-GPU one
# The warm-up decodes 4 latent frames: every shape of every convolution
# occurs by the fourth chunk (the first time conv's cache grows to its 2
# frames on the third chunk after its first).
WARM_FRAMES = 4  # (conv2, 1x1x1, runs frame by frame: no shape depends on T)


def make_model(dtype, device, seed=0):
    """WAN 2.1's decoder with random weights (gammas 1 + 0.1 N(0,1); convs
    PyTorch's default initialization, the attention's output projection
    too, which WAN initializes to zero)."""
    torch.manual_seed(seed)
    m = W.WanVAEDecoder()
    with torch.no_grad():
        for name, p in m.named_parameters():
            if name.endswith("gamma"):
                p.copy_(1 + 0.1 * torch.randn_like(p))
        proj = m.decoder.middle[1].proj
        torch.nn.init.kaiming_uniform_(proj.weight, a=5 ** 0.5)
    return m.to(device=device, dtype=dtype).eval()


def latent(size, frames, device, dtype, seed=1):
    h, w = SIZES.get(size) or tuple(int(v) for v in size.split("x"))
    g = torch.Generator().manual_seed(seed)
    return torch.randn(1, 16, frames, h, w, generator=g).to(device=device, dtype=dtype)


def empty_cache():
    if DEVICE == "cuda":
        torch.cuda.empty_cache()


def rel(a, b):
    return ((a.float() - b.float()).norm() / b.float().norm()).item()


DEVICE = "cuda"  # --device cpu: a smoke test of this script on the CPU target


def sync():
    if DEVICE == "cuda":
        torch.cuda.synchronize()


def timed(fn, repeat, barrier=None):
    """(median seconds, result of the last call)."""
    times, out = [], None
    for _ in range(repeat):
        out = None
        sync()
        if barrier:
            barrier()
        t0 = time.perf_counter()
        out = fn()
        sync()
        if barrier:
            barrier()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def _pool_high(reset=False):
    """The high-water mark in GiB of the conv3d runtime's temporaries
    (prologue prepasses, split-K workspaces): its own pool's, plus the
    device's CUDA graph memory's, where they live inside captured graphs;
    NaN without a pool."""
    try:
        memory = conv3d.cuda_pool_memory(reset=reset)
    except conv3d.Conv3dError:
        return float("nan")
    return (memory["used_high"] + (memory["graph_used_high"] or 0)) / 2**30


def peak(fn):
    """fn's result and (max_memory_allocated, device memory in use, the
    conv3d runtime's pool's high-water mark over fn), GiB. The first leaves
    out the third: the library's temporaries are not PyTorch's."""
    if DEVICE != "cuda":
        return fn(), (float("nan"), float("nan"), float("nan"))
    sync()
    torch.cuda.reset_peak_memory_stats()
    _pool_high(reset=True)
    out = fn()
    sync()
    free, total = torch.cuda.mem_get_info()
    return out, (torch.cuda.max_memory_allocated() / 2**30, (total - free) / 2**30,
                 _pool_high())


EAGER_GROUPS = (("attention", ("attention", "softmax", "bmm", "baddbmm")),
                ("convolutions", ("conv",)),
                ("upsampling", ("upsample", "permute", "stack")),
                ("norms + SiLU", ("norm", "silu", "div", "mul", "clamp_min", "expand")),
                ("cache copies (cat, pad, clone)", ("cat", "pad", "clone", "copy")))


def eager_stages(model, z):
    """{group: ms} of the eager decode from torch.profiler (device time of
    each PyTorch op itself, grouped by name)."""
    from torch.profiler import ProfilerActivity, profile
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if DEVICE == "cuda" else [])
    with profile(activities=activities) as prof:
        model.decode(z, clamp=False)
        sync()
    out = {}
    for e in prof.key_averages():
        us = getattr(e, "self_device_time_total", None)
        if us is None:
            us = getattr(e, "self_cuda_time_total", 0)
        if DEVICE != "cuda":
            us = e.self_cpu_time_total
        if not us:
            continue
        key = e.key.lower()
        group = next((g for g, words in EAGER_GROUPS if any(w in key for w in words)), "other")
        out[group] = out.get(group, 0.0) + us / 1e3
    return out


def top_entries(fn, count):
    """The `count` profiler entries (PyTorch ops and CUDA kernels, conv3d's
    driver-API launches too) with the most device time (self) in fn():
    [(name, ms, calls)]."""
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        fn()
        sync()
    rows = []
    for e in prof.key_averages():
        us = getattr(e, "self_device_time_total", None)
        if us is None:
            us = getattr(e, "self_cuda_time_total", 0)
        if us:
            rows.append((e.key[:90], us / 1e3, e.count))
    return sorted(rows, key=lambda r: -r[1])[:count]


def ours_stages(ours, z):
    timer = StageTimes(z.device)
    ours.decode(z, clamp=False, timer=timer)
    return timer.totals()


def show(stages):
    total = sum(stages.values()) or 1.0
    return ", ".join("%s %.1f ms (%.0f%%)" % (k, v, 100 * v / total)
                     for k, v in sorted(stages.items(), key=lambda kv: -kv[1]))


def run_single(args):
    device = torch.device(DEVICE, 0) if DEVICE == "cuda" else torch.device("cpu")
    torch.backends.cudnn.benchmark = True
    out = []
    for size in args.sizes.split(","):
        row = {"size": size, "frames": args.frames, "gpus": 1}
        z32 = latent(size, args.frames, device, torch.float32)
        row["latent"] = list(z32.shape)
        row["video"] = list(W.output_shape(z32.shape))
        ref = None
        if not args.no_reference:
            torch.backends.cudnn.allow_tf32 = False
            torch.backends.cuda.matmul.allow_tf32 = False
            m32 = make_model(torch.float32, device)
            t0 = time.perf_counter()
            ref = m32.decode(z32, clamp=False)
            sync()
            row["fp32_eager_s"] = time.perf_counter() - t0
            ref = ref.cpu()
            del m32
            empty_cache()
            torch.backends.cudnn.allow_tf32 = True
            torch.backends.cuda.matmul.allow_tf32 = True
        model = make_model(args.dtype, device)
        z = z32.to(args.dtype)
        short = z[:, :, :WARM_FRAMES]
        ours = W.Conv3dWanDecoder(model, fold_upsample=args.fold_upsample,
                                  cuda_graphs=args.cuda_graphs)
        paths = [("ours", lambda zz: ours.decode(zz, clamp=False))]
        if not args.no_eager:
            paths.insert(0, ("eager", lambda zz: model.decode(zz, clamp=False)))
        for name, fn in paths:
            fn(short)  # warm-up: autotuning, compilation
            if name == "ours" and args.cuda_graphs:
                fn(z)  # every step's shapes seen once, then captured
                fn(z)
            sync()
            seconds, y = timed(lambda: fn(z), args.repeat)
            del y
            empty_cache()
            y, (alloc, used, pool) = peak(lambda: fn(z))
            row[name + "_s"] = seconds
            row[name + "_peak_gib"] = alloc
            row[name + "_device_used_gib"] = used
            if name == "ours":
                # (The eager side's figure is PyTorch's whole: cuDNN's
                # workspaces come from its allocator.)
                row["ours_library_pool_gib"] = pool
            if ref is not None:
                row[name + "_rel_l2"] = rel(y.cpu(), ref)
            del y
            empty_cache()
        pz = z[:, :, :args.profile_frames]
        row["ours_stages_ms"] = ours_stages(ours, pz)
        if not args.no_eager:
            row["eager_stages_ms"] = eager_stages(model, pz)
            row["speedup"] = row["eager_s"] / row["ours_s"]
        if args.top_kernels and DEVICE == "cuda":
            row["ours_top"] = top_entries(lambda: ours.decode(pz, clamp=False),
                                          args.top_kernels)
            if not args.no_eager:
                row["eager_top"] = top_entries(lambda: model.decode(pz, clamp=False),
                                               args.top_kernels)
        out.append(row)
        print("%s latent %s -> video %s:" % (size, "x".join(map(str, row["latent"])),
                                            "x".join(map(str, row["video"]))))
        if ref is not None:
            print("  float32 eager (TF32 off): %.2f s" % row["fp32_eager_s"])
        for name in [p for p, _ in paths]:
            print("  %-5s %s: %.3f s, peak %.2f GiB allocated (%.2f GiB device in use), "
                  "rel_l2 vs float32 %s" % (
                      name, str(args.dtype).replace("torch.", ""), row[name + "_s"],
                      row[name + "_peak_gib"],
                      row[name + "_device_used_gib"],
                      "%.2e" % row[name + "_rel_l2"] if ref is not None else "n/a"))
        if DEVICE == "cuda":
            print("  ours: the conv3d runtime's temporaries (its pool and graph memory, not "
                  "in PyTorch's peak) peaked at %.2f GiB" % row["ours_library_pool_gib"])
        if "speedup" in row:
            pool = row["ours_library_pool_gib"]
            print("  ours / eager: %.2fx faster, %.2fx the peak memory (%.2fx with the "
                  "library's temporaries added)" % (
                      row["speedup"], row["ours_peak_gib"] / row["eager_peak_gib"],
                      (row["ours_peak_gib"] + (0.0 if math.isnan(pool) else pool))
                      / row["eager_peak_gib"]))
        print("  stages (%d latent frames), ours: %s" % (args.profile_frames,
                                                          show(row["ours_stages_ms"])))
        if "eager_stages_ms" in row:
            print("  stages (%d latent frames), eager: %s" % (
                args.profile_frames, show(row["eager_stages_ms"])))
        for name in ("ours", "eager"):
            for entry in row.get(name + "_top", []):
                print("  %s top: %8.2f ms %5d x %s" % (name, entry[1], entry[2], entry[0]))
        sys.stdout.flush()
        model = ours = ref = None
        empty_cache()
    return out


def run_distributed(args):
    import torch.distributed as dist
    if DEVICE == "cuda":
        torch.cuda.set_device(LOCAL_RANK)
        device = torch.device("cuda", LOCAL_RANK)
        dist.init_process_group("nccl")
        barrier = lambda: dist.barrier(device_ids=[LOCAL_RANK])  # noqa: E731
    else:
        device = torch.device("cpu")
        dist.init_process_group("gloo")
        barrier = dist.barrier
    rank, size = dist.get_rank(), dist.get_world_size()
    barrier()
    out = []
    for name in args.sizes.split(","):
        row = {"size": name, "frames": args.frames, "gpus": size,
               "split_halo": args.split_halo, "cuda_graphs": args.cuda_graphs}
        model = make_model(args.dtype, device)
        z = latent(name, args.frames, device, args.dtype)
        ours = W.Conv3dWanDecoder(model, fold_upsample=args.fold_upsample,
                                  cuda_graphs=args.cuda_graphs, split_halo=args.split_halo)
        ours.decode(z[:, :, :WARM_FRAMES], clamp=False)  # warm-up: compilation
        if args.cuda_graphs:
            for _ in range(2):  # every step's shapes seen once, then captured
                ours.decode(z, clamp=False, gather=False)
        seconds, _ = timed(lambda: ours.decode(z, clamp=False, gather=False), args.repeat,
                           barrier)
        y, (alloc, used, pool) = peak(lambda: ours.decode(z, clamp=False))
        stages = ours_stages(ours, z[:, :, :args.profile_frames])
        peaks = [None] * size
        dist.all_gather_object(peaks, (alloc, used, pool))
        row.update(split_s=seconds, peak_gib=[p[0] for p in peaks],
                   device_used_gib=[p[1] for p in peaks],
                   library_pool_gib=[p[2] for p in peaks], rank0_stages_ms=stages,
                   rows=ours.rows(z))
        if rank == 0:
            single = W.Conv3dWanDecoder(model, group=False, fold_upsample=args.fold_upsample,
                                        cuda_graphs=args.cuda_graphs)
            one = single.decode(z, clamp=False)
            row["rel_l2_vs_one_gpu"] = rel(y, one)
            del one
            if args.one_gpu_baseline:
                # The same decode on this rank's GPU alone (the others wait
                # at the barrier), as warmed as the split's: the speedup's
                # baseline from the same machine and process.
                if args.cuda_graphs:
                    single.decode(z, clamp=False)  # (the first decode saw the shapes)
                row["one_gpu_s"], _ = timed(lambda: single.decode(z, clamp=False), args.repeat)
            single.refresh()
            if args.reference:
                torch.backends.cudnn.allow_tf32 = False
                torch.backends.cuda.matmul.allow_tf32 = False
                m32 = make_model(torch.float32, device)
                ref = m32.decode(z.float(), clamp=False)
                row["rel_l2_vs_fp32_eager"] = rel(y, ref)
                del m32, ref
        barrier()
        del y
        # The CUDA graphs (NCCL work captured in them) go before the process
        # group: with them alive the 2- and 4-GPU runs of the seventh session
        # printed their results, then hung until killed.
        ours.refresh()
        sync()
        empty_cache()
        out.append(row)
        if rank == 0:
            print("%s latent %s, %d ranks (height split, %s): %.3f s; peak per GPU %s GiB "
                  "allocated (%s GiB device in use); rel_l2 vs our one-GPU decode %.2e%s" % (
                      name, "x".join(map(str, z.shape)), size,
                      "%s, split_halo=%s%s" % (dist.get_backend(), args.split_halo,
                                               ", CUDA graphs" if args.cuda_graphs else ""),
                      seconds,
                      "/".join("%.2f" % p for p in row["peak_gib"]),
                      "/".join("%.2f" % p for p in row["device_used_gib"])
                      # The library's temporaries: its pool's and, inside CUDA
                      # graphs, the device's graph memory's high-water marks.
                      + "; conv3d's temporaries (pool and graph memory) %s" % "/".join(
                          "%.2f" % p for p in row["library_pool_gib"]),
                      row["rel_l2_vs_one_gpu"],
                      ", vs float32 eager %.2e" % row["rel_l2_vs_fp32_eager"]
                      if "rel_l2_vs_fp32_eager" in row else ""))
            if "one_gpu_s" in row:
                print("  one GPU (rank 0 alone, same process): %.3f s; the split %.2fx faster"
                      % (row["one_gpu_s"], row["one_gpu_s"] / seconds))
            print("  stages on rank 0 (%d latent frames): %s" % (args.profile_frames,
                                                                 show(stages)))
            # Different heights may take other tilings: equal within bf16's
            # rounding, not bit for bit.
            print("  split vs one GPU: %s" % ("PASS" if row["rel_l2_vs_one_gpu"] < SPLIT_TOLERANCE
                                             else "FAIL (over %g)" % SPLIT_TOLERANCE))
            sys.stdout.flush()
    dist.destroy_process_group()
    return out if rank == 0 else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="480p,720p", help="480p, 720p or HxW (latent), "
                    "comma-separated")
    ap.add_argument("--frames", type=int, default=21, help="latent frames")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--profile-frames", type=int, default=3)
    ap.add_argument("--top-kernels", type=int, default=12,
                    help="one GPU: print the N ops/kernels with the most device time "
                    "in the --profile-frames decode (0: none)")
    ap.add_argument("--no-eager", action="store_true", help="one GPU: skip the eager decode")
    ap.add_argument("--no-reference", action="store_true",
                    help="one GPU: skip the float32 reference")
    ap.add_argument("--reference", action="store_true",
                    help="torchrun: also the float32 eager decode on rank 0")
    ap.add_argument("--device", choices=("cuda", "cpu"), default="cuda",
                    help="cpu: a smoke test of this script (CPU target, float32, gloo)")
    ap.add_argument("--fold-upsample", action="store_true",
                    help="fold each 2x upsampling into its convolution "
                    "(Conv3dWanDecoder(fold_upsample=True): transposed convolutions, the "
                    "upsampled tensors never formed)")
    ap.add_argument("--split-halo", choices=("copy", "correct"), default="correct",
                    help="torchrun: how a rank's 3-row convolutions get the neighbours' rows "
                    "(Conv3dWanDecoder(split_halo=...))")
    ap.add_argument("--one-gpu-baseline", action="store_true",
                    help="torchrun: rank 0 also times the decode on its GPU alone (the "
                    "speedup's baseline from the same run)")
    ap.add_argument("--cuda-graphs", action="store_true",
                    help="Conv3dWanDecoder(cuda_graphs=True): each latent frame's decode step "
                    "replayed as a CUDA graph (two more warm-up decodes of the whole latent "
                    "capture them; the per-stage breakdown runs eagerly)")
    ap.add_argument("--json")
    args = ap.parse_args()
    global DEVICE
    DEVICE = args.device
    args.dtype = torch.bfloat16 if DEVICE == "cuda" else torch.float32
    if DEVICE == "cuda" and not torch.cuda.is_available():
        sys.exit("bench/vae_decode.py needs a CUDA GPU (or --device cpu for a smoke test)")
    if int(os.environ.get("WORLD_SIZE", "1")) > 1:
        results = run_distributed(args)
    else:
        results = run_single(args)
    if args.json and results is not None:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
