#!/usr/bin/env python3
"""conv3d.torch.CausalConv3d against a plain PyTorch causal convolution
written from the video-VAE description (concatenate the cache, pad time
before the input by 2*p_t minus the cache's length, pad space, convolve),
evaluated in float64 on the CPU. Needs PyTorch; runs on the CPU and, when
present, on CUDA. Prints PASS/FAIL per step; exit status 1 on any failure.

  1. One forward with and without a cache (shorter than, equal to and
     longer than the time padding), fused RMS norm + SiLU prologue.
  2. Chunked decoding (random chunk lengths, one-frame chunks) equals the
     full-sequence convolution; dilation 2 in time; with the prologue and
     the caches forward(..., return_cache=True) returns, for each
     fuse_prologue placement.
  3. Errors: bad cache rank, norm_bias without norm_weight.
  4. conv3d.CausalConv3dStream on CUDA tensors (targets sm80 and sm90, the
     cache kept on the device): random chunkings (one-frame chunks, depth
     stride 2, dilation 2, the prologue with beta) equal the full-sequence
     float64 model; reset(); a host chunk is refused.

Run from the repository root: python3 scripts/gpu/causal_check.py
"""

import os
import random
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import conv3d.torch as ct  # noqa: E402

failures = 0


def report(name, ok, detail=""):
    global failures
    failures += not ok
    print("%s %s %s" % ("PASS" if ok else "FAIL", name, detail), flush=True)


def prologue(x, gamma, beta, eps, act):
    x = x.double()
    if gamma is not None:
        x = x * torch.rsqrt(x.pow(2).mean(dim=1, keepdim=True) + eps)
        x = x * gamma.double().view(1, -1, 1, 1, 1)
        if beta is not None:
            x = x + beta.double().view(1, -1, 1, 1, 1)
    if act == "silu":
        x = F.silu(x)
    elif act == "relu":
        x = F.relu(x)
    elif act == "gelu_tanh":
        x = F.gelu(x, approximate="tanh")
    return x


def reference(module, x, cache, gamma=None, beta=None, eps=1e-6, act=None):
    """The unfused model: transform x, cat the cache, pad, convolve (f64)."""
    front, p_h, p_w = module.causal_padding
    x = prologue(x.cpu(), gamma.cpu() if gamma is not None else None,
                 beta.cpu() if beta is not None else None, eps, act)
    pad_front = front
    if cache is not None and front > 0:
        x = torch.cat([cache.cpu().double(), x], dim=2)
        pad_front = front - cache.shape[2]
    if pad_front < 0:  # a long cache: only its last `front` frames count
        x = x[:, :, -pad_front:]
        pad_front = 0
    x = F.pad(x, (p_w, p_w, p_h, p_h, pad_front, 0))
    w = module.weight.detach().cpu().double()
    b = module.bias.detach().cpu().double() if module.bias is not None else None
    return F.conv3d(x, w, b, module.stride, 0, module.dilation)


def rel(a, b):
    a, b = a.double().cpu(), b.double().cpu()
    return ((a - b).norm() / b.norm()).item()


def run(device, dtype, tol):
    torch.manual_seed(0)
    random.seed(0)
    with torch.no_grad():
        m = ct.CausalConv3d(16, 24, 3, padding=1).to(device=device, dtype=dtype)
        gamma = torch.randn(16, device=device)
        beta = 0.5 * torch.randn(16, device=device)
        for cache_len in (None, 1, 2, 4):
            x = torch.randn(1, 16, 5, 6, 7, device=device, dtype=dtype)
            cache = (torch.randn(1, 16, cache_len, 6, 7, device=device, dtype=dtype)
                     if cache_len else None)
            y = m(x, cache, norm_weight=gamma, norm_bias=beta, input_activation="silu")
            e = rel(y, reference(m, x, cache, gamma, beta, 1e-6, "silu"))
            report("%s %s forward cache=%s" % (device, dtype, cache_len), e < tol,
                   "rel_l2=%.2e" % e)

        # (Depth stride 2 is CausalConv3dStream's: a module call does not
        # know where the previous chunk's windows ended.)
        for stride, dilation in ((1, 1), (1, 2)):
            m = ct.CausalConv3d(8, 8, 3, stride=(stride, 1, 1), padding=(dilation, 1, 1),
                                dilation=(dilation, 1, 1)).to(device=device, dtype=dtype)
            frames = 9
            x = torch.randn(1, 8, frames, 5, 5, device=device, dtype=dtype)
            full = reference(m, x, None)
            for chunks in ([1] * frames, [4, 1, 3, 1], [2, 2, 2, 3]):
                outs, at, cache = [], 0, None
                front = m.causal_padding[0]
                for n in chunks:
                    xc = x[:, :, at:at + n]
                    # The cache: the last `front` frames seen.
                    outs.append(m(xc, cache))
                    seen = x[:, :, :at + n]
                    cache = seen[:, :, max(0, seen.shape[2] - front):]
                    at += n
                y = torch.cat(outs, dim=2)
                e = rel(y, full)
                report("%s %s chunks %s dilation %d" % (device, dtype, chunks, dilation),
                       y.shape == full.shape and e < tol, "rel_l2=%.2e" % e)

        # Chunked decoding with the prologue, each call's cache the one the
        # previous call returned (return_cache=True), for each placement of
        # the prologue: equals the full sequence transformed, then convolved.
        for fuse in (None, True, False):
            for dilation in (1, 2):
                m = ct.CausalConv3d(16, 8, 3, padding=(dilation, 1, 1),
                                    dilation=(dilation, 1, 1),
                                    fuse_prologue=fuse).to(device=device, dtype=dtype)
                frames = 9
                x = torch.randn(1, 16, frames, 5, 6, device=device, dtype=dtype)
                full = reference(m, x, None, gamma, beta, 1e-6, "silu")
                for chunks in ([1] * frames, [4, 1, 3, 1], [2, 2, 2, 3]):
                    outs, at, cache = [], 0, None
                    for n in chunks:
                        y, cache = m(x[:, :, at:at + n], cache, norm_weight=gamma,
                                     norm_bias=beta, input_activation="silu",
                                     return_cache=True)
                        outs.append(y)
                        at += n
                    y = torch.cat(outs, dim=2)
                    e = rel(y, full)
                    report("%s %s return_cache fuse_prologue=%s chunks %s dilation %d"
                           % (device, dtype, fuse, chunks, dilation),
                           y.shape == full.shape and e < tol, "rel_l2=%.2e" % e)

        m = ct.CausalConv3d(8, 8, 3, padding=1).to(device=device, dtype=dtype)
        x = torch.randn(1, 8, 3, 4, 4, device=device, dtype=dtype)
        for what, call in (("bad cache rank", lambda: m(x, x[0])),
                           ("norm_bias alone", lambda: m(x, norm_bias=gamma[:8]))):
            try:
                call()
                report("%s error: %s" % (device, what), False, "no error")
            except (ValueError, RuntimeError) as e:
                report("%s error: %s" % (device, what), True, str(e))


def run_stream(target, dtype, tol):
    """CausalConv3dStream(target) on CUDA tensors (NDHWC) against the
    float64 model of the whole sequence at once."""
    from conv3d import CausalConv3dStream, Conv3dError
    torch.manual_seed(1)
    random.seed(1)
    for stride, dilation, norm, beta, act in ((1, 1, True, False, "silu"),
                                              (2, 1, True, True, "gelu_tanh"),
                                              (1, 2, False, False, "relu"),
                                              (2, 2, True, True, "silu"),
                                              (1, 1, False, False, "none")):
        c, f, frames = 16, 24, 9
        m = ct.CausalConv3d(c, f, 3, stride=(stride, 1, 1), padding=(dilation, 1, 1),
                            dilation=(dilation, 1, 1)).to(dtype=dtype)
        gamma = torch.randn(c) if norm else None
        bias_n = 0.5 * torch.randn(c) if beta else None
        x = torch.randn(2, c, frames, 5, 6, dtype=dtype)
        full = reference(m, x, None, gamma, bias_n, 1e-6, None if act == "none" else act)
        # QRSCF weights and NDHWC data; the weights stay host arrays.
        w = m.weight.detach().permute(2, 3, 4, 1, 0).contiguous()
        stream = CausalConv3dStream(w, m.bias.detach().float().contiguous(),
                                    stride=(stride, 1, 1), dilation=(dilation, 1, 1),
                                    padding_hw=(1, 1, 1, 1), norm_gamma=gamma,
                                    norm_beta=bias_n, input_activation=act, target=target)
        xd = x.permute(0, 2, 3, 4, 1).contiguous().cuda()
        for chunks in ([frames], [1] * frames, [4, 1, 3, 1], [2, 2, 2, 3]):
            stream.reset()
            outs, at = [], 0
            for n in chunks:
                y = stream.step(xd[:, at:at + n].contiguous())
                if y.device.type != "cuda":
                    report("%s stream output device" % target, False, str(y.device))
                outs.append(y)
                at += n
            y = torch.cat(outs, dim=1).permute(0, 4, 1, 2, 3)
            e = rel(y, full) if y.shape == full.shape else float("inf")
            report("%s %s stream stride %d dilation %d norm=%s beta=%s %s chunks %s" % (
                target, dtype, stride, dilation, norm, beta, act, chunks),
                e < tol, "rel_l2=%.2e cached=%d" % (e, stream.cached_frames))
    try:
        stream.step(x.permute(0, 2, 3, 4, 1).contiguous()[:, :1].contiguous())
        report("%s stream error: host chunk" % target, False, "no error")
    except Conv3dError as e:
        report("%s stream error: host chunk" % target, True, str(e))


run("cpu", torch.float32, 1e-5)
run("cpu", torch.bfloat16, 1e-2)
if torch.cuda.is_available():
    run("cuda", torch.bfloat16, 1e-2)
    for target in ("sm80", "sm90"):
        run_stream(target, torch.bfloat16, 1e-2)
else:
    print("SKIP cuda: no GPU")
sys.exit(1 if failures else 0)
