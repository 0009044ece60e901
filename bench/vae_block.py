#!/usr/bin/env python3
"""A WAN-2.x-style VAE decoder residual block, decoded chunk by chunk:
eager PyTorch (cuDNN, channels_last_3d, cache concatenated and padded as the
VAEs do it) against the same block on conv3d's streaming causal convolutions
(conv3d.torch.CausalConv3d: the cache as a history operand, the RMS norm and
SiLU as the convolution's input prologue).

    block(x) = x + conv2(silu(rms2(conv1(silu(rms1(x))))))

rms(x) = x * rsqrt(mean over channels of x^2 + eps) * gamma; each conv is a
causal 3x3x3 convolution in time (2 frames of time padding before, 1 in
space) that, after the first chunk, takes the last 2 frames of its (already
normalized and activated) input from the previous chunk.

Prints, per shape, the time per chunk (median of CUDA-event timings) and the
peak memory of each path, and both paths' errors against a float32 eager
reference (cuDNN, TF32 off). Run on the GPU machine from the repository
root after staging the build (scripts/gpu/stage.sh):

    python3 bench/vae_block.py [--shapes wan_chunk_mid,wan_chunk_192]
        [--chunks 6] [--repeat 5] [--json out.json]

The shapes are bench/shapes.json's wan_chunk presets: C channels, H x W, and
D - 2 new frames per chunk (D counts the 2 cached frames). The eager path is
cat + pad + norm + SiLU + cuDNN conv. Three conv3d paths, each conv reading
the cache as its history operand (no cat, no pad; the sm90 kernel on the
H100), the norm and SiLU given to CausalConv3d as its input prologue, and
the next chunk's caches from forward(..., return_cache=True): the
library's default (the compiled convolution's own prologue prepass, one
library call per conv), the prologue fused in the conv's A-operand loads
(fuse_prologue=True: the sm80 kernel, the per-voxel RMS statistic from a
one-read prepass), and the prologue as a separate PyTorch pass
(fuse_prologue=False: compiled by torch.compile for large chunks).
"""

import argparse
import json
import os
import statistics
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import conv3d.torch as ct  # noqa: E402

CACHE_T = 2
EPS = 1e-6


def rms_norm(x, gamma):
    xf = x.float()
    xf = xf * torch.rsqrt(xf.pow(2).mean(dim=1, keepdim=True) + EPS)
    return (xf * gamma.view(1, -1, 1, 1, 1)).to(x.dtype)


class EagerBlock(torch.nn.Module):
    """What the VAEs do: norm, SiLU, cat(cache, x), pad, cuDNN conv."""

    def __init__(self, c, dtype, device):
        super().__init__()
        mk = lambda: torch.nn.Conv3d(c, c, 3, padding=0).to(  # noqa: E731
            device=device, dtype=dtype, memory_format=torch.channels_last_3d)
        self.conv1, self.conv2 = mk(), mk()
        self.g1 = torch.nn.Parameter(1 + 0.1 * torch.randn(c, device=device))
        self.g2 = torch.nn.Parameter(1 + 0.1 * torch.randn(c, device=device))

    def causal(self, conv, x, cache):
        pad_t = 2
        if cache is not None:
            x = torch.cat([cache, x], dim=2)
            pad_t -= cache.shape[2]
        x = F.pad(x, (1, 1, 1, 1, pad_t, 0))
        return conv(x)

    @staticmethod
    def next_cache(h, cache):
        # As WAN's decoder does: a chunk shorter than the cache keeps the
        # previous cache's last frame in front of its own.
        new = h[:, :, -CACHE_T:].clone()
        if new.shape[2] < CACHE_T and cache is not None:
            new = torch.cat([cache[:, :, -1:], new], dim=2)
        return new

    def forward(self, x, caches):
        h = F.silu(rms_norm(x, self.g1))
        new0 = self.next_cache(h, caches[0])
        h = self.causal(self.conv1, h, caches[0])
        h = F.silu(rms_norm(h, self.g2))
        new1 = self.next_cache(h, caches[1])
        h = self.causal(self.conv2, h, caches[1])
        return x + h, [new0, new1]


class StreamingBlock(torch.nn.Module):
    """The same block on conv3d: the cache read in place as each conv's
    history, the shortcut fused as the second conv's residual, the norm +
    SiLU given to CausalConv3d as its input prologue (`fuse_prologue`, see
    the module's docstring) and the caches it returns kept for the next
    chunk."""

    def __init__(self, eager, target, fuse_prologue=None):
        super().__init__()
        c = eager.conv1.in_channels
        dtype, device = eager.conv1.weight.dtype, eager.conv1.weight.device
        self.conv1 = ct.CausalConv3d(c, c, 3, padding=1, device=device, dtype=dtype,
                                     target=target, fuse_prologue=fuse_prologue)
        self.conv2 = ct.CausalConv3d(c, c, 3, padding=1, device=device, dtype=dtype,
                                     target=target, fuse_prologue=fuse_prologue)
        with torch.no_grad():
            for mine, theirs in ((self.conv1, eager.conv1), (self.conv2, eager.conv2)):
                mine.weight.copy_(theirs.weight)
                mine.bias.copy_(theirs.bias)
        self.g1, self.g2 = eager.g1, eager.g2

    def forward(self, x, caches):
        h, new0 = self.conv1(x, caches[0], norm_weight=self.g1, norm_eps=EPS,
                             input_activation="silu", return_cache=True)
        y, new1 = self.conv2(h, caches[1], norm_weight=self.g2, norm_eps=EPS,
                             input_activation="silu", residual=x, return_cache=True)
        return y, [new0, new1]


def decode(block, chunks):
    caches, outs = [None, None], []
    for x in chunks:
        y, caches = block(x, caches)
        outs.append(y)
    return torch.cat(outs, dim=2)


def timed(block, chunks, repeat):
    """Median milliseconds per chunk, and the peak memory of one decode."""
    decode(block, chunks)  # warm-up (compiles conv3d's kernels)
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    base = torch.cuda.memory_allocated()
    times = []
    for _ in range(repeat):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        decode(block, chunks)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / len(chunks))
    peak = torch.cuda.max_memory_allocated() - base
    return statistics.median(times), peak


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shapes", default="wan_chunk_mid,wan_chunk_192")
    ap.add_argument("--chunks", type=int, default=6)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--target", default="auto")
    ap.add_argument("--json")
    a = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit("bench/vae_block.py needs a CUDA GPU")
    torch.backends.cudnn.benchmark = True
    suite = {s["name"]: s for s in json.load(open(os.path.join(ROOT, "bench", "shapes.json")))["shapes"]}
    results = []
    for name in a.shapes.split(","):
        s = suite[name]
        c, h, w, frames = s["C"], s["H"], s["W"], s["D"] - CACHE_T
        torch.manual_seed(0)
        dev = torch.device("cuda")
        eager = EagerBlock(c, torch.bfloat16, dev)
        # The library's default (the compiled conv's prologue prepass), the
        # prologue in the conv's loads (the sm80 kernel), and the prologue as
        # a separate PyTorch pass.
        ours = StreamingBlock(eager, a.target)
        ours_fused = StreamingBlock(eager, a.target, fuse_prologue=True)
        ours_history = StreamingBlock(eager, a.target, fuse_prologue=False)
        chunks = [torch.randn(1, c, frames, h, w, device=dev, dtype=torch.bfloat16).contiguous(
            memory_format=torch.channels_last_3d) for _ in range(a.chunks)]
        with torch.no_grad():
            # The float32 reference: the eager block in float32, TF32 off.
            torch.backends.cudnn.allow_tf32 = False
            torch.backends.cuda.matmul.allow_tf32 = False
            ref32 = EagerBlock(c, torch.float32, dev)
            ref32.load_state_dict({k: v.float() for k, v in eager.state_dict().items()})
            ref = decode(ref32, [x.float() for x in chunks]).float()
            del ref32
            torch.backends.cudnn.allow_tf32 = True
            y_eager = decode(eager, chunks).float()
            y_ours = decode(ours, chunks).float()
            y_fused = decode(ours_fused, chunks).float()
            y_hist = decode(ours_history, chunks).float()
            err = lambda y: ((y - ref).norm() / ref.norm()).item()  # noqa: E731
            e_eager, e_ours, e_fused, e_hist = (err(y_eager), err(y_ours), err(y_fused),
                                                err(y_hist))
            del y_eager, y_ours, y_fused, y_hist, ref
            t_eager, m_eager = timed(eager, chunks, a.repeat)
            t_ours, m_ours = timed(ours, chunks, a.repeat)
            t_fused, m_fused = timed(ours_fused, chunks, a.repeat)
            t_hist, m_hist = timed(ours_history, chunks, a.repeat)
        path = "default (history read in place, the conv's own prologue prepass)"
        row = {"shape": name, "C": c, "H": h, "W": w, "frames_per_chunk": frames,
               "eager_ms_per_chunk": t_eager, "conv3d_ms_per_chunk": t_ours,
               "speedup": t_eager / t_ours, "eager_peak_mib": m_eager / 2**20,
               "conv3d_peak_mib": m_ours / 2**20, "eager_rel_l2": e_eager,
               "conv3d_rel_l2": e_ours, "conv3d_path": path,
               "fused_ms_per_chunk": t_fused, "fused_speedup": t_eager / t_fused,
               "fused_peak_mib": m_fused / 2**20, "fused_rel_l2": e_fused,
               "torch_prologue_ms_per_chunk": t_hist, "torch_prologue_speedup": t_eager / t_hist,
               "torch_prologue_peak_mib": m_hist / 2**20, "torch_prologue_rel_l2": e_hist}
        results.append(row)
        print("%-14s C=%d %dx%d %d frames/chunk: eager %.3f ms/chunk (peak %.0f MiB, "
              "err %.2e); conv3d %.3f ms/chunk (peak %.0f MiB, err %.2e) [%s]: %.2fx" % (
                  name, c, h, w, frames, t_eager, row["eager_peak_mib"], e_eager, t_ours,
                  row["conv3d_peak_mib"], e_ours, path, row["speedup"]), flush=True)
        print("%-14s prologue fused in the conv's loads (sm80 kernel): %.3f ms/chunk "
              "(peak %.0f MiB, err %.2e): %.2fx" % (
                  name, t_fused, row["fused_peak_mib"], e_fused, row["fused_speedup"]),
              flush=True)
        print("%-14s prologue as a PyTorch pass (fuse_prologue=False): %.3f "
              "ms/chunk (peak %.0f MiB, err %.2e): %.2fx" % (
                  name, t_hist, row["torch_prologue_peak_mib"], e_hist,
                  row["torch_prologue_speedup"]), flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
