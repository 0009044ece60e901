"""conv3d.torch.CausalConv3d's backward on the CPU target (any PyTorch from
1.13): on fresh random data and geometries, the gradients of every operand
(x, the cache, the weight, the bias, norm_weight, norm_bias, the residual)
of a loss on the output and the returned cache, against float64 autograd
of an eager twin (the prologue, cat and pad, F.conv3d, the activation and
the residual in float64); the output and the cache against the inference
path (no_grad) of the same module; a chunked sequence trained through the
returned caches against the twin on the whole sequence; and
torch.autograd.gradcheck in float64 (the kernels compute float64 in
float32, so float32's tolerances, as python_autograd_check.py). Autograd
writes fresh gradient tensors (every .grad starts as None): a gradient
that is missing where the twin has one, or not finite, fails; an operand
the twin leaves without a gradient (a cache with p_t = 0) must get none.
Prints one line per check."""

import sys

import torch
import torch.nn.functional as F

import conv3d.torch as ct
from conv3d._torch_dropin import apply_activation

torch.manual_seed(int(sys.argv[1]) if len(sys.argv) > 1 else 22)
failures = 0


def report(name, ok, detail):
    global failures
    failures += not ok
    print("%s: %s (%s)" % (name, "PASS" if ok else "FAIL", detail), flush=True)


def rel(a, b):
    if a is None:
        return float("inf")
    a, b = a.double(), b.double()
    if not torch.isfinite(a).all():
        return float("inf")
    return float((a - b).norm() / b.norm())


def twin(x, cache, w, b, gamma, beta, eps, in_act, act, residual, padding, stride,
         dilation):
    """(y, new cache or None) of CausalConv3d's definition, in x's dtype."""
    p_t, p_h, p_w = padding
    keep = 2 * p_t
    h = x
    if gamma is not None:
        rms = torch.rsqrt(h.pow(2).mean(dim=1, keepdim=True) + eps)
        h = h * rms * gamma.reshape(1, -1, 1, 1, 1)
        if beta is not None:
            h = h + beta.reshape(1, -1, 1, 1, 1)
    h = apply_activation(h, in_act)
    front = keep
    if cache is not None and keep > 0 and cache.shape[2] > 0:
        hist = cache[:, :, max(0, cache.shape[2] - keep):]
        front -= hist.shape[2]
        h = torch.cat([hist, h], dim=2)
    y = F.conv3d(F.pad(h, (p_w, p_w, p_h, p_h, front, 0)), w, b, stride, 0, dilation)
    y = apply_activation(y, act)
    if residual is not None:
        y = y + residual
    return y, (h[:, :, max(0, h.shape[2] - keep):] if keep else None)


CASES = [
    # cache shorter than the time padding, norm with bias, SiLU in and out,
    # residual
    dict(c=4, f=6, k=3, padding=(1, 1, 1), stride=1, dilation=1, frames=3, cache=1,
         norm=True, beta=True, in_act="silu", act="silu", residual=True),
    # a cache longer than the padding (cropped), stride and dilation, the
    # GELU-tanh prologue without norm, ReLU out, no residual
    dict(c=5, f=3, k=(3, 2, 3), padding=(1, 0, 1), stride=(1, 2, 1), dilation=(1, 1, 2),
         frames=4, cache=3, norm=False, beta=False, in_act="gelu_tanh", act="relu",
         residual=False),
    # no cache, the norm alone, no activation, a bias-free layer
    dict(c=3, f=4, k=3, padding=(1, 1, 0), stride=(2, 1, 1), dilation=1, frames=5, cache=0,
         norm=True, beta=False, in_act=None, act=None, residual=True, bias=False),
    # p_t = 0: the cache is ignored and none is returned
    dict(c=4, f=4, k=(1, 3, 3), padding=(0, 1, 1), stride=1, dilation=1, frames=2, cache=2,
         norm=False, beta=False, in_act=None, act="gelu_tanh", residual=False),
]


def operands(case, dtype):
    """The module (dtype) and float64 leaves of its operands."""
    m = ct.CausalConv3d(case["c"], case["f"], case["k"], stride=case["stride"],
                        padding=case["padding"], dilation=case["dilation"],
                        bias=case.get("bias", True), activation=case["act"],
                        target="cpu", dtype=dtype)
    with torch.no_grad():
        m.weight.copy_(torch.randn(m.weight.shape) / m.weight[0].numel() ** 0.5)
        if m.bias is not None:
            m.bias.copy_(torch.randn(m.bias.shape))
    n, c, h, w = 2, case["c"], 6, 5
    leaves = {"x": torch.randn(n, c, case["frames"], h, w, dtype=torch.float64)}
    if case["cache"]:
        leaves["cache"] = torch.randn(n, c, case["cache"], h, w, dtype=torch.float64)
    if case["norm"]:
        leaves["norm_weight"] = 1 + 0.2 * torch.randn(c, dtype=torch.float64)
    if case["beta"]:
        leaves["norm_bias"] = 0.2 * torch.randn(c, dtype=torch.float64)
    return m, leaves


def run(m, t, case):
    out = m(t["x"], t.get("cache"), norm_weight=t.get("norm_weight"),
            norm_bias=t.get("norm_bias"), norm_eps=1e-6, input_activation=case["in_act"],
            residual=t.get("residual"), return_cache=True)
    return out


def check_case(index, case, dtype, tol):
    m, leaves = operands(case, dtype)
    with torch.no_grad():
        y0, _ = run(m, {k: v.to(dtype) for k, v in leaves.items()}, case)
    if case["residual"]:
        leaves["residual"] = torch.randn(y0.shape, dtype=torch.float64)
    # Inference (no_grad: the fused path) on the same operands.
    ours = {k: v.to(dtype).requires_grad_() for k, v in leaves.items()}
    with torch.no_grad():
        y_inf, cache_inf = run(m, {k: v.detach() for k, v in ours.items()}, case)
    for p in m.parameters():
        p.grad = None
    y, cache = run(m, ours, case)
    gy = torch.randn(y.shape, dtype=torch.float64)
    loss = (y.double() * gy).sum()
    gc = None
    if cache is not None:
        gc = torch.randn(cache.shape, dtype=torch.float64)
        loss = loss + (cache.double() * gc).sum()
    loss.backward()
    # The float64 twin on the same (rounded) values.
    ref = {k: v.detach().double().requires_grad_() for k, v in ours.items()}
    w64 = m.weight.detach().double().requires_grad_()
    b64 = m.bias.detach().double().requires_grad_() if m.bias is not None else None
    y_ref, cache_ref = twin(ref["x"], ref.get("cache"), w64, b64, ref.get("norm_weight"),
                            ref.get("norm_bias"), 1e-6, case["in_act"], case["act"],
                            ref.get("residual"), case["padding"], m.stride, m.dilation)
    loss_ref = (y_ref * gy).sum()
    if cache_ref is not None:
        loss_ref = loss_ref + (cache_ref * gc).sum()
    loss_ref.backward()
    errors = {"y": rel(y, y_ref), "y vs inference": rel(y, y_inf)}
    if case["padding"][0]:
        errors["cache"] = rel(cache, cache_ref)
        errors["cache vs inference"] = rel(cache, cache_inf)
    elif cache is not None or cache_inf is not None:
        errors["no cache returned"] = float("inf")
    for name in ref:
        if ref[name].grad is None:  # unused by the definition (p_t = 0)
            errors["d" + name] = 0.0 if ours[name].grad is None else float("inf")
        else:
            errors["d" + name] = rel(ours[name].grad, ref[name].grad)
    errors["dweight"] = rel(m.weight.grad, w64.grad)
    if b64 is not None:
        errors["dbias"] = rel(m.bias.grad, b64.grad)
    worst = max(errors.values())
    report("case %d %s: %d operands" % (index, str(dtype).split(".")[1], len(errors) - 2),
           worst <= tol, ", ".join("%s %.1e" % kv for kv in errors.items()))


def check_chunks():
    """Training through a chunked sequence: each chunk's returned cache feeds
    the next; the gradients of the whole sequence's operands equal the
    twin's on the sequence at once."""
    m = ct.CausalConv3d(4, 5, 3, padding=1, activation="silu", target="cpu")
    x = torch.randn(1, 4, 7, 5, 6, dtype=torch.float64)
    gamma = 1 + 0.2 * torch.randn(4, dtype=torch.float64)
    xs, g = x.float().requires_grad_(), gamma.float().requires_grad_()
    outs, cache = [], None
    for lo, hi in ((0, 3), (3, 4), (4, 7)):
        y, cache = m(xs[:, :, lo:hi], cache, norm_weight=g, input_activation="silu",
                     return_cache=True)
        outs.append(y)
    y = torch.cat(outs, dim=2)
    gy = torch.randn(y.shape, dtype=torch.float64)
    (y.double() * gy).sum().backward()
    xr, gr = xs.detach().double().requires_grad_(), g.detach().double().requires_grad_()
    w64 = m.weight.detach().double().requires_grad_()
    b64 = m.bias.detach().double().requires_grad_()
    y_ref, _ = twin(xr, None, w64, b64, gr, None, 1e-6, "silu", "silu", None, (1, 1, 1), 1, 1)
    (y_ref * gy).sum().backward()
    errors = [rel(y, y_ref), rel(xs.grad, xr.grad), rel(g.grad, gr.grad),
              rel(m.weight.grad, w64.grad), rel(m.bias.grad, b64.grad)]
    report("chunks 3+1+3 through the returned caches", max(errors) <= 1e-4,
           "y, dx, dnorm_weight, dweight, dbias: " + ", ".join("%.1e" % e for e in errors))


def check_gradcheck():
    m = ct.CausalConv3d(2, 3, (3, 2, 3), padding=(1, 0, 1), activation="silu",
                        target="cpu", dtype=torch.float64)
    x = torch.randn(1, 2, 3, 3, 4, dtype=torch.float64, requires_grad=True)
    cache = torch.randn(1, 2, 1, 3, 4, dtype=torch.float64, requires_grad=True)
    gamma = (1 + 0.2 * torch.randn(2, dtype=torch.float64)).requires_grad_()
    res = torch.randn(1, 3, 3, 2, 4, dtype=torch.float64, requires_grad=True)
    # (The weight's and the bias's gradients, parameters of the module, are
    # checked against the twin in check_case.)
    ok = torch.autograd.gradcheck(lambda x, c, gm, r: m(x, c, norm_weight=gm,
                                                         input_activation="gelu_tanh",
                                                         residual=r, return_cache=True),
                                  (x, cache, gamma, res), eps=1e-3, atol=5e-3, rtol=1e-2)
    report("gradcheck float64 (x, cache, norm_weight, residual)", ok, "float32 tolerances")


def check_inference_path():
    """Without autograd forward is the fused inference path: no graph."""
    m = ct.CausalConv3d(4, 4, 3, padding=1, target="cpu")
    x = torch.randn(1, 4, 3, 5, 5)
    with torch.no_grad():
        y = m(x)
    report("no_grad forward records nothing", y.grad_fn is None and not y.requires_grad,
           "grad_fn %s" % (y.grad_fn,))


if __name__ == "__main__":
    for i, case in enumerate(CASES):
        check_case(i, case, torch.float32, 1e-4)
    check_case(0, CASES[0], torch.bfloat16, 3e-2)
    check_chunks()
    check_gradcheck()
    check_inference_path()
    print("CAUSAL-AUTOGRAD %s" % ("OK" if failures == 0 else "FAILED (%d)" % failures))
    sys.exit(1 if failures else 0)
