"""conv3d.autograd on the CPU target against PyTorch's own gradients
(torch.nn.grad.conv3d_input / conv3d_weight, F.conv_transpose3d, all in
float64), and torch.autograd.gradcheck in float64 (computed in float32 by
the kernels, so with float32's tolerances): `check` runs the numerical
checks, `errors` the mismatches every call must name."""

import sys

import torch
import torch.nn.functional as F

import conv3d.autograd as ca

torch.manual_seed(22)


def rel(a, b):
    a, b = a.double(), b.double()
    return float((a - b).norm() / b.norm())


def fallback():
    """conv3d.torch's weight gradient on a GPU (PyTorch's own), here on the
    CPU: symmetric padding passed through, asymmetric padding applied
    explicitly, operands in mixed memory formats, against float64."""
    cl = torch.channels_last_3d
    cases = [((2, 3, 6, 7, 5), (4, 3, 3, 3, 3), 2, (1, 1, 1, 1, 1, 1), 1, cl, cl),
             ((1, 4, 6, 5, 9), (5, 4, 2, 3, 2), (1, 2, 3), (2, 0, 1, 1, 0, 2), (2, 1, 2),
              torch.contiguous_format, cl),
             ((1, 2, 5, 6, 6), (3, 2, 3, 3, 3), 1, (2, 0, 1, 1, 1, 1), 1, cl,
              torch.contiguous_format),
             ((2, 1, 4, 5, 6), (3, 1, 3, 3, 3), 1, (1, 1, 1, 1, 1, 1), 1,
              torch.contiguous_format, cl)]
    for shape, wshape, stride, pads, dilation, x_format, dy_format in cases:
        x = torch.randn(shape, dtype=torch.float64)
        padded = F.pad(x, (pads[4], pads[5], pads[2], pads[3], pads[0], pads[1]))
        dy = torch.randn(F.conv3d(padded, torch.zeros(wshape, dtype=torch.float64), None,
                                  stride, 0, dilation).shape, dtype=torch.float64)
        reference = torch.nn.grad.conv3d_weight(padded, wshape, dy, stride, 0, dilation)
        dw = ca.pytorch_conv3d_weight(x.float().contiguous(memory_format=x_format), wshape,
                                      dy.float().contiguous(memory_format=dy_format), stride,
                                      pads, dilation)
        error = rel(dw, reference)
        print("pytorch wgrad pads %s: %.1e, channels-last %s: %s" % (
            ",".join(map(str, pads)), error, dw.is_contiguous(memory_format=cl),
            "PASS" if error < 2e-5 else "FAIL"))


def check():
    # Stride 2 with an extra input row (a transposed conv's output padding),
    # asymmetric padding emulated by F.pad for PyTorch's reference.
    cases = [
        dict(x=(2, 3, 7, 8, 6), w=(4, 3, 3, 3, 3), stride=(2, 2, 2), padding=(1, 1, 1),
             dilation=(1, 1, 1)),
        dict(x=(1, 4, 6, 5, 9), w=(5, 4, 2, 3, 2), stride=(1, 2, 3), padding=(2, 0, 1),
             dilation=(2, 1, 2)),
    ]
    worst = 0.0
    for case in cases:
        x = torch.randn(case["x"], dtype=torch.float64)
        w = torch.randn(case["w"], dtype=torch.float64)
        args = (case["stride"], case["padding"], case["dilation"])
        y = F.conv3d(x, w, None, *args)
        dy = torch.randn(y.shape, dtype=torch.float64)
        for dtype in (torch.float32, torch.bfloat16):
            tol = 2e-5 if dtype == torch.float32 else 1e-2
            xs, ws, dys = x.to(dtype), w.to(dtype), dy.to(dtype)
            dx = ca.conv3d_input(x.shape, ws, dys, *args, target="cpu")
            dw = ca.conv3d_weight(xs, w.shape, dys, *args, target="cpu")
            ref_dx = torch.nn.grad.conv3d_input(x.shape, ws.double(), dys.double(), *args)
            ref_dw = torch.nn.grad.conv3d_weight(xs.double(), w.shape, dys.double(), *args)
            errors = (rel(dx, ref_dx), rel(dw, ref_dw))
            worst = max(worst, max(errors) / tol)
            print("%s dgrad %.1e wgrad %.1e: %s" % (
                str(dtype).split(".")[1], errors[0], errors[1],
                "PASS" if max(errors) <= tol else "FAIL"))
    # The differentiable conv3d: gradients of a loss through it (bias
    # included) equal PyTorch's.
    x = torch.randn(2, 3, 7, 8, 6, dtype=torch.float32, requires_grad=True)
    w = torch.randn(4, 3, 3, 3, 3, dtype=torch.float32, requires_grad=True)
    b = torch.randn(4, dtype=torch.float32, requires_grad=True)
    y = ca.conv3d(x, w, b, stride=2, padding=(1, 0, 1, 1, 2, 1), target="cpu")
    g = torch.randn(y.shape)
    (y * g).sum().backward()
    xr, wr, br = (t.detach().double().requires_grad_() for t in (x, w, b))
    yr = F.conv3d(F.pad(xr, (2, 1, 1, 1, 1, 0)), wr, br, stride=2)
    (yr * g.double()).sum().backward()
    errors = [rel(a.grad, r.grad) for a, r in ((x, xr), (w, wr), (b, br))]
    print("autograd conv3d: forward %.1e, input %.1e, weight %.1e, bias %.1e: %s" % (
        rel(y, yr), *errors, "PASS" if max(errors + [rel(y, yr)]) < 2e-5 else "FAIL"))
    # ConvTranspose3d with output padding against PyTorch's.
    xt = torch.randn(2, 4, 3, 4, 3, dtype=torch.float64)
    wt = torch.randn(4, 3, 3, 2, 3, dtype=torch.float64)
    bt = torch.randn(3, dtype=torch.float64)
    z = ca.conv_transpose3d(xt.float(), wt.float(), bt.float(), stride=(2, 2, 3),
                            padding=1, output_padding=(1, 0, 2), target="cpu")
    zr = F.conv_transpose3d(xt, wt, bt, stride=(2, 2, 3), padding=1,
                            output_padding=(1, 0, 2))
    print("conv_transpose3d %s: %.1e: %s" % ("x".join(map(str, z.shape)), rel(z, zr),
                                             "PASS" if rel(z, zr) < 2e-5 else "FAIL"))
    module = ca.ConvTranspose3d(4, 3, (3, 2, 3), stride=(2, 2, 3), padding=1,
                                output_padding=(1, 0, 2))
    module.target = "cpu"
    reference = torch.nn.ConvTranspose3d(4, 3, (3, 2, 3), stride=(2, 2, 3), padding=1,
                                         output_padding=(1, 0, 2))
    reference.load_state_dict(module.state_dict())
    xm = torch.randn(1, 4, 3, 4, 3)
    print("ConvTranspose3d module: %s" % (
        "PASS" if rel(module(xm), reference(xm)) < 2e-5 else "FAIL"))
    # gradcheck in float64 (the kernels compute in float32).
    tolerances = dict(eps=1e-3, atol=5e-3, rtol=1e-2)
    x = torch.randn(1, 2, 5, 4, 5, dtype=torch.float64, requires_grad=True)
    w = torch.randn(3, 2, 3, 2, 3, dtype=torch.float64, requires_grad=True)
    b = torch.randn(3, dtype=torch.float64, requires_grad=True)
    ok = torch.autograd.gradcheck(
        lambda x, w, b: ca.conv3d(x, w, b, stride=(2, 1, 2), padding=(1, 0, 0, 1, 2, 1),
                                  dilation=(1, 2, 1), target="cpu"), (x, w, b),
        **tolerances)
    print("gradcheck conv3d:", "PASS" if ok else "FAIL")
    xt = torch.randn(1, 3, 3, 2, 3, dtype=torch.float64, requires_grad=True)
    wt = torch.randn(3, 2, 2, 3, 2, dtype=torch.float64, requires_grad=True)
    ok = torch.autograd.gradcheck(
        lambda x, w: ca.conv_transpose3d(x, w, None, stride=2, padding=(0, 1, 1),
                                         output_padding=(1, 0, 1), target="cpu"),
        (xt, wt), **tolerances)
    print("gradcheck conv_transpose3d:", "PASS" if ok else "FAIL")


def errors():
    x = torch.randn(1, 3, 6, 6, 6)
    w = torch.randn(4, 3, 3, 3, 3)
    dy = torch.randn(1, 4, 4, 4, 4)
    calls = [
        ("shape", lambda: ca.conv3d_input(x.shape, w, dy[:, :, :3], target="cpu")),
        ("dtype", lambda: ca.conv3d_weight(x.double(), w.shape, dy, target="cpu")),
        ("int", lambda: ca.conv3d_input(x.shape, w.int(), dy.int(), target="cpu")),
        ("channels", lambda: ca.conv3d_weight(x, (4, 2, 3, 3, 3), dy, target="cpu")),
        ("rank", lambda: ca.conv3d_input(x.shape, w[0], dy, target="cpu")),
        ("output_padding", lambda: ca.conv_transpose3d(dy, w, stride=2, output_padding=2,
                                                       target="cpu")),
        ("transposed channels", lambda: ca.conv_transpose3d(x, w, target="cpu")),
        ("padding", lambda: ca.conv3d(x, w, padding=(1, 1), target="cpu")),
        ("target", lambda: ca.conv3d(x, w, target="sm90")),
    ]
    for name, call in calls:
        try:
            call()
            print(name, "NO ERROR")
        except (TypeError, ValueError) as e:
            print(name, type(e).__name__ + ":", e)


if __name__ == "__main__":
    {"check": check, "errors": errors, "fallback": fallback}[sys.argv[1]]()
