#!/usr/bin/env python3
"""conv3d.torch.CausalConv3d against a plain PyTorch causal convolution
written from the video-VAE description (concatenate the cache, pad time
before the input by 2*p_t minus the cache's length, pad space, convolve),
evaluated in float64 on the CPU. Needs PyTorch; runs on the CPU and, when
present, on CUDA. Prints PASS/FAIL per step; exit status 1 on any failure.

  1. One forward with and without a cache (shorter than, equal to and
     longer than the time padding), fused RMS norm + SiLU prologue.
  2. Chunked decoding (random chunk lengths, one-frame chunks) equals the
     full-sequence convolution; dilation 2 in time.
  3. Errors: bad cache rank, norm_bias without norm_weight.

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

        m = ct.CausalConv3d(8, 8, 3, padding=1).to(device=device, dtype=dtype)
        x = torch.randn(1, 8, 3, 4, 4, device=device, dtype=dtype)
        for what, call in (("bad cache rank", lambda: m(x, x[0])),
                           ("norm_bias alone", lambda: m(x, norm_bias=gamma[:8]))):
            try:
                call()
                report("%s error: %s" % (device, what), False, "no error")
            except (ValueError, RuntimeError) as e:
                report("%s error: %s" % (device, what), True, str(e))


run("cpu", torch.float32, 1e-5)
run("cpu", torch.bfloat16, 1e-2)
if torch.cuda.is_available():
    run("cuda", torch.bfloat16, 1e-2)
else:
    print("SKIP cuda: no GPU")
sys.exit(1 if failures else 0)
