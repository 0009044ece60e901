#!/usr/bin/env python3
"""The training path on the GPU (PyTorch 2.4+, conv3d.torch): autograd
through conv3d.torch.Conv3d (with a fused SiLU and a residual) and
ConvTranspose3d against PyTorch's own gradients in float32, convert()
taking nn.ConvTranspose3d, and torch.compile(fullgraph=True) of a training
step (no graph breaks: the gradient ops have fake kernels). Prints one line
per check and TRAINING-OK at the end when every check passed."""

import sys

import torch
import torch.nn.functional as F

import conv3d.torch as ct

failures = 0


def report(name, ok, detail=""):
    global failures
    failures += not ok
    print("%-60s %s %s" % (name, "PASS" if ok else "FAIL", detail), flush=True)


def rel(a, b):
    a, b = a.float(), b.float()
    return float((a - b).norm() / b.norm())


def check_conv3d():
    torch.manual_seed(0)
    layer = ct.Conv3d(64, 96, 3, stride=2, padding=1, activation="silu").cuda().bfloat16()
    x = torch.randn(2, 64, 9, 16, 17, device="cuda").bfloat16().requires_grad_()
    res = torch.randn(2, 96, 5, 8, 9, device="cuda").bfloat16().requires_grad_()
    g = torch.randn(2, 96, 5, 8, 9, device="cuda")
    (layer(x, residual=res).float() * g).sum().backward()
    xr = x.detach().float().requires_grad_()
    rr = res.detach().float().requires_grad_()
    wr = layer.weight.detach().float().requires_grad_()
    br = layer.bias.detach().float().requires_grad_()
    ((F.silu(F.conv3d(xr, wr, br, stride=2, padding=1)) + rr) * g).sum().backward()
    errs = [rel(x.grad, xr.grad), rel(layer.weight.grad, wr.grad),
            rel(layer.bias.grad, br.grad), rel(res.grad, rr.grad)]
    report("Conv3d(silu, residual) backward vs PyTorch", max(errs) < 3e-2,
           " ".join("%.1e" % e for e in errs))


def check_transposed():
    torch.manual_seed(1)
    plain = torch.nn.ConvTranspose3d(96, 64, 3, stride=2, padding=1,
                                     output_padding=1).cuda().bfloat16()
    model = torch.nn.Sequential(plain)
    report_ = ct.convert(model)
    report("convert() takes nn.ConvTranspose3d",
           isinstance(model[0], ct.ConvTranspose3d), str(report_).splitlines()[0])
    x = torch.randn(1, 96, 5, 8, 8, device="cuda").bfloat16().requires_grad_()
    y = model(x)
    g = torch.randn(y.shape, device="cuda")
    (y.float() * g).sum().backward()
    xr = x.detach().float().requires_grad_()
    wr = model[0].weight.detach().float().requires_grad_()
    br = model[0].bias.detach().float().requires_grad_()
    yr = F.conv_transpose3d(xr, wr, br, stride=2, padding=1, output_padding=1)
    (yr * g).sum().backward()
    errs = [rel(y, yr), rel(x.grad, xr.grad), rel(model[0].weight.grad, wr.grad)]
    report("ConvTranspose3d forward/backward vs PyTorch", max(errs) < 3e-2,
           " ".join("%.1e" % e for e in errs))


def check_compile():
    torch.manual_seed(2)
    model = torch.nn.Sequential(ct.Conv3d(32, 64, 3, padding=1),
                                ct.ConvTranspose3d(64, 32, 3, stride=2, padding=1,
                                                   output_padding=1)).cuda().bfloat16()
    x = torch.randn(1, 32, 4, 8, 8, device="cuda").bfloat16()

    def step(x):
        return model(x).float().square().mean()

    compiled = torch.compile(step, fullgraph=True)
    try:
        loss = compiled(x)
        loss.backward()
        grads = [p.grad.clone() for p in model.parameters()]
        for p in model.parameters():
            p.grad = None
        step(x).backward()
        errs = [rel(a, p.grad) for a, p in zip(grads, model.parameters())]
        report("torch.compile(fullgraph=True) training step", max(errs) < 1e-2,
               " ".join("%.1e" % e for e in errs))
    except Exception as e:  # noqa: BLE001 (report any compiler failure)
        report("torch.compile(fullgraph=True) training step", False, repr(e)[:300])


for check in (check_conv3d, check_transposed, check_compile):
    try:
        check()
    except Exception as e:  # noqa: BLE001
        report(check.__name__, False, repr(e)[:300])
print("TRAINING-OK" if failures == 0 else "TRAINING-FAILED %d" % failures)
sys.exit(1 if failures else 0)
