#!/usr/bin/env python3
"""The PyTorch path of conv3d on the GPU machine (run by scripts/gpu/run.sh
torch). Every step prints PASS/FAIL/SKIP with numbers; the exit status is 1
if any step failed.

  1. conv3d.conv3d and the custom op against cuDNN (torch F.conv3d) on fresh
     random bf16 data, both measured against a float32 cuDNN reference:
     channels_last and contiguous layouts, bias, stride, dilation, causal
     6-tuple padding, fused activation and residual, out=.
  2. torch.library.opcheck of the custom op (schema, fake kernel, autograd
     registration).
  3. A small video network (several Conv3d + activations, a strided conv, a
     residual block): convert() on a copy, results against the original on
     cuDNN; torch.compile(fullgraph=True) of the converted net (no graph
     breaks), results again.
  4. The caller's stream: a conv enqueued on a side stream, no added sync.
  5. backward through the dgrad and wgrad kernels; state_dict round trip.
  6. Per-call host time on a cached kernel, behind a busy GPU (conv3d.conv3d, the custom op,
     the module; torch's F.conv3d for comparison): conv3d.conv3d < 15 us;
     where the hit path's time goes (hit_path.breakdown: signature and
     lookup, data_ptr(), allocation, stream query, the C call, the rest)
     for the auto (sm90 on an H100) and sm80 plans.
  7. CuPy arrays (skipped when CuPy is not installed) and a generic DLPack
     producer on the GPU.
  8. The cost of the layout step for NCDHW-contiguous input (GPU time of the
     contiguous path minus the channels_last path).
  9. Converted copies of weights and biases follow in-place updates.
 10. Eager calls past the custom op (conv3d.torch._direct): bit-identical
     to the op under no_grad, and taken exactly when autograd has nothing
     to record on plain tensors (not with parameters requiring grad, nor
     for a FakeTensor).
 11. The PyTorch hit paths (torch-native when built, the C extension, pure
     Python) give bit-identical results on fresh random data (int and tuple
     arguments, residual, converted weights and biases), raise the same
     error for a misaligned input, and clear_cache() leaves none stale.
 12. convert() on torchvision's r3d_18, mc3_18 and r2plus1d_18 (random
     weights): every Conv3d converted, the Conv3DSimple / Conv3DNoTemporal
     subclasses included and still instances of their classes; the bf16
     networks against float32 cuDNN, next to cuDNN in bf16.
 13. CUDA graphs: torch.compile(mode="reduce-overhead") (CUDA-graph trees) of
     a converted bf16 network, channels_last and NCDHW input, fresh parameters and
     inputs, against float32 cuDNN; before them, a torch.cuda.graph capture
     whose output (so its TMA descriptors) is new inside the capture,
     replayed on fresh data into a poisoned output.
 14. conv3d.torch as a drop-in for F.conv3d on CUDA: an empty batch, a
     channel slice and depthwise groups=32 (computed by conv3d), groups=2,
     float64 and float32
     (on cuDNN, counted by conv3d.torch.fallbacks()); conv3d.conv3d's
     errors.
 15. A configuration tuned through the Python package (Engine.compile
     tune=True, sm90) is remembered by conv3d-run for the same convolution.
 16. Diagnostic (INFO, last: it may leave CUDA unusable): step 13's
     reduce-overhead without the graph-side parameter conversions.

CONV3D_TORCH_STEPS=12,13,1 runs those steps, in that order.
"""

import copy
import os
import sys
import time
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import conv3d  # noqa: E402
import conv3d.torch as ct  # noqa: E402
import hit_path  # noqa: E402  (scripts/gpu/hit_path.py, beside this script)

BF16_TOL = 4e-3  # the README's bf16 tolerance (relative L2)
OVERHEAD_LIMIT_US = 15.0
failures = []


def report(name, ok, detail=""):
    print("%s %s%s" % ("PASS" if ok else "FAIL", name, (": " + detail) if detail else ""),
          flush=True)
    if not ok:
        failures.append(name)


def step(name):
    def wrap(fn):
        def run():
            print("\n=== %s ===" % name, flush=True)
            try:
                fn()
            except Exception:  # noqa: BLE001 - every step reports and continues
                traceback.print_exc()
                report(name, False, "exception")
        return run
    return wrap


def random_cl(*shape, scale=1.0):
    """Fresh standard-normal values times `scale`, bf16, channels_last_3d."""
    return (torch.randn(*shape, device="cuda") * scale).bfloat16().contiguous(
        memory_format=torch.channels_last_3d)


def rel_l2(actual, expected):
    a, e = actual.double(), expected.double()
    if not torch.isfinite(a).all():
        return float("inf")
    return ((a - e).norm() / e.norm()).item()


def torch_reference(x, w, b, stride, pad6, dilation, activation=None, residual=None):
    """float32 cuDNN on the same (bf16-valued) data, with explicit padding."""
    d_lo, d_hi, h_lo, h_hi, w_lo, w_hi = pad6
    xp = F.pad(x.float(), (w_lo, w_hi, h_lo, h_hi, d_lo, d_hi))
    y = F.conv3d(xp, w.float(), None if b is None else b.float(), stride, 0, dilation)
    if activation == "relu":
        y = F.relu(y)
    elif activation == "silu":
        y = F.silu(y)
    elif activation == "gelu_tanh":
        y = F.gelu(y, approximate="tanh")
    if residual is not None:
        y = y + residual.float()
    return y


CASES = [
    # (N, C, D, H, W), (F, Q, R, S), stride, pad6, dilation, activation, residual
    ((1, 64, 8, 32, 32), (128, 3, 3, 3), (1, 1, 1), (2, 0, 1, 1, 1, 1), (1, 1, 1), None, False),
    ((2, 128, 5, 16, 16), (128, 3, 3, 3), (1, 2, 2), (1, 1, 1, 1, 1, 1), (1, 1, 1), "silu", True),
    ((1, 96, 6, 20, 20), (64, 3, 3, 3), (1, 1, 1), (2, 2, 1, 1, 2, 2), (2, 1, 2), "relu", False),
    ((1, 3, 9, 32, 32), (64, 3, 3, 3), (1, 1, 1), (2, 0, 1, 1, 1, 1), (1, 1, 1), "gelu_tanh", False),
    ((1, 256, 4, 16, 16), (256, 1, 1, 1), (1, 1, 1), (0,) * 6, (1, 1, 1), None, True),
]


@step("1. conv3d.conv3d and the custom op vs cuDNN")
def check_against_cudnn():
    torch.manual_seed(int(time.time()))
    for shape, (f, q, r, s), stride, pad6, dil, act, with_res in CASES:
        n, c, d, h, w_ = shape
        for layout in ("channels_last", "contiguous"):
            fmt = torch.channels_last_3d if layout == "channels_last" else torch.contiguous_format
            x = torch.randn(shape, device="cuda").bfloat16().contiguous(memory_format=fmt)
            w = (torch.randn(f, c, q, r, s, device="cuda") / (c * q * r * s) ** 0.5
                 ).bfloat16().contiguous(memory_format=fmt)
            b = torch.randn(f, device="cuda").bfloat16()
            ref = torch_reference(x, w, b, stride, pad6, dil, act)
            res = None
            if with_res:
                res = torch.randn(ref.shape, device="cuda").bfloat16().contiguous(
                    memory_format=fmt)
                ref = ref + res.float()
            y = conv3d.conv3d(x, w, b, stride, pad6, dil, activation=act, residual=res)
            torch.cuda.synchronize()
            err = rel_l2(y, ref)
            # cuDNN in bf16 on the same data, for scale (symmetric padding only:
            # F.conv3d has no causal padding, so pad explicitly).
            cud = F.conv3d(F.pad(x, (pad6[4], pad6[5], pad6[2], pad6[3], pad6[0], pad6[1])),
                           w, b, stride, 0, dil)
            if act == "relu":
                cud = F.relu(cud)
            elif act == "silu":
                cud = F.silu(cud)
            elif act == "gelu_tanh":
                cud = F.gelu(cud, approximate="tanh")
            if res is not None:
                cud = cud + res
            cud_err = rel_l2(cud, ref)
            same_format = y.is_contiguous(memory_format=fmt)
            op = ct.conv3d(x, w, b, stride, pad6, dil, activation=act, residual=res)
            op_err = rel_l2(op, ref)
            report("%s %s w%s stride%s pad%s dil%s %s%s" % (
                layout, tuple(shape), (f, q, r, s), stride, pad6, dil, act or "",
                " +res" if with_res else ""),
                err < BF16_TOL and op_err < BF16_TOL and same_format,
                "ours %.2e, op %.2e, cuDNN bf16 %.2e (vs f32 cuDNN), output %s"
                % (err, op_err, cud_err, layout if same_format else "WRONG FORMAT"))
    # out=: a poisoned channels_last output written in place.
    x = torch.randn(1, 64, 6, 16, 16, device="cuda").bfloat16().contiguous(
        memory_format=torch.channels_last_3d)
    w = (torch.randn(64, 64, 3, 3, 3, device="cuda") / 40).bfloat16().contiguous(
        memory_format=torch.channels_last_3d)
    out = torch.full((1, 64, 6, 16, 16), float("nan"), device="cuda").bfloat16().contiguous(
        memory_format=torch.channels_last_3d)
    y = conv3d.conv3d(x, w, padding=1, out=out)
    torch.cuda.synchronize()
    err = rel_l2(out, torch_reference(x, w, None, (1, 1, 1), (1,) * 6, (1, 1, 1)))
    report("out= (poisoned, channels_last)", y is out and err < BF16_TOL, "%.2e" % err)


@step("2. torch.library.opcheck")
def check_opcheck():
    x = torch.randn(1, 64, 4, 8, 8, device="cuda").bfloat16().contiguous(
        memory_format=torch.channels_last_3d)
    w = (torch.randn(64, 64, 3, 3, 3, device="cuda") / 40).bfloat16().contiguous(
        memory_format=torch.channels_last_3d)
    b = torch.randn(64, device="cuda")
    args = (x, w, b, [1, 1, 1], [2, 0, 1, 1, 1, 1], [1, 1, 1], "silu", None, "auto")
    result = torch.library.opcheck(torch.ops.conv3d.conv3d.default, args,
                                   test_utils=("test_schema", "test_faketensor",
                                               "test_autograd_registration"))
    ok = all(v == "SUCCESS" for v in result.values())
    report("opcheck", ok, str(result))


class VideoNet(torch.nn.Module):
    """A small causal video encoder block: RGB -> 64 -> 128 channels."""

    def __init__(self):
        super().__init__()
        self.stem = torch.nn.Conv3d(3, 64, 3, padding=1)
        self.conv1 = torch.nn.Conv3d(64, 64, 3, padding=1)
        self.conv2 = torch.nn.Conv3d(64, 64, 3, padding=1)
        self.down = torch.nn.Conv3d(64, 128, 3, stride=(1, 2, 2), padding=1)
        self.proj = torch.nn.Conv3d(128, 128, 1)
        self.grouped = torch.nn.Conv3d(128, 128, 3, padding=1, groups=4)  # converted too
        self.act = torch.nn.SiLU()

    def forward(self, x):
        x = self.act(self.stem(x))
        x = x + self.conv2(self.act(self.conv1(x)))
        x = torch.relu(self.down(x))
        return self.grouped(self.proj(x))


@step("3. convert() and torch.compile of a video network")
def check_network():
    torch.manual_seed(1)
    net = VideoNet().cuda().bfloat16().eval()
    ours = copy.deepcopy(net)
    report_ = ct.convert(ours)
    print(report_)
    report("convert: 6 converted (the grouped layer too), none left",
           len(report_.converted) == 6 and not report_.skipped,
           "converted %s, left %s" % (report_.converted, report_.skipped))
    state_ok = all(torch.equal(a, b) for a, b in zip(net.state_dict().values(),
                                                    ours.state_dict().values()))
    report("state_dict unchanged by convert", state_ok)
    for layout in ("contiguous", "channels_last"):
        fmt = torch.channels_last_3d if layout == "channels_last" else torch.contiguous_format
        x = torch.randn(2, 3, 8, 64, 64, device="cuda").bfloat16().contiguous(memory_format=fmt)
        with torch.no_grad():
            ref = net.float()(x.float())
            net.bfloat16()
            cud = net(x)
            y = ours(x)
        torch.cuda.synchronize()
        report("converted net, %s input" % layout, rel_l2(y, ref) < 2 * BF16_TOL,
               "ours %.2e, cuDNN bf16 %.2e (vs f32)" % (rel_l2(y, ref), rel_l2(cud, ref)))
    compiled = torch.compile(ours, fullgraph=True)
    x = torch.randn(2, 3, 8, 64, 64, device="cuda").bfloat16().contiguous(
        memory_format=torch.channels_last_3d)
    with torch.no_grad():
        ref = net.float()(x.float())
        net.bfloat16()
        y = compiled(x)
        y2 = compiled(torch.randn_like(x))
    torch.cuda.synchronize()
    report("torch.compile(fullgraph=True) of the converted net", rel_l2(y, ref) < 2 * BF16_TOL
           and torch.isfinite(y2.float()).all().item(), "%.2e" % rel_l2(y, ref))


@step("4. the caller's stream")
def check_stream():
    x = torch.randn(1, 64, 8, 32, 32, device="cuda").bfloat16().contiguous(
        memory_format=torch.channels_last_3d)
    w = (torch.randn(64, 64, 3, 3, 3, device="cuda") / 40).bfloat16().contiguous(
        memory_format=torch.channels_last_3d)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        y = conv3d.conv3d(x, w, padding=1)
        y2 = y * 2  # ordered after the conv on the same stream
    side.synchronize()
    ref = torch_reference(x, w, None, (1, 1, 1), (1,) * 6, (1, 1, 1))
    report("conv on a side stream", rel_l2(y2 / 2, ref) < BF16_TOL, "%.2e" % rel_l2(y2 / 2, ref))


@step("5. backward and state_dict")
def check_backward_state():
    layer = ct.Conv3d(64, 64, 3, padding=1).cuda().bfloat16()
    x = torch.randn(1, 64, 4, 8, 8, device="cuda").bfloat16().requires_grad_()
    plain = torch.nn.Conv3d(64, 64, 3, padding=1).cuda().bfloat16()
    plain.load_state_dict(layer.state_dict())
    # Backward runs the dgrad and wgrad kernels (the custom op's autograd):
    # the gradients equal PyTorch's, computed in float32.
    g = torch.randn(1, 64, 4, 8, 8, device="cuda").bfloat16()
    (layer(x).float() * g.float()).sum().backward()
    xr = x.detach().float().requires_grad_()
    ref = torch.nn.Conv3d(64, 64, 3, padding=1).cuda()
    ref.load_state_dict({k: v.float() for k, v in plain.state_dict().items()})
    (ref(xr) * g.float()).sum().backward()
    errs = [rel_l2(x.grad, xr.grad), rel_l2(layer.weight.grad, ref.weight.grad),
            rel_l2(layer.bias.grad, ref.bias.grad)]
    report("backward (dgrad, wgrad, bias) equals PyTorch's", max(errs) < 2e-2,
           "%.2e %.2e %.2e" % tuple(errs))
    layer2 = ct.Conv3d(64, 64, 3, padding=1).cuda().bfloat16()
    layer2.load_state_dict(plain.state_dict())
    with torch.no_grad():
        xs = x.detach()
        err = rel_l2(layer2(xs), plain.float()(xs.float()))
    report("state_dict interchangeable with nn.Conv3d", err < BF16_TOL, "%.2e" % err)


def host_us_per_call(fn, calls=2000):
    for _ in range(20):
        fn()
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    host = (time.perf_counter() - start) / calls * 1e6
    torch.cuda.synchronize()
    return host


@step("6. per-call host time on a cached kernel")
def check_overhead():
    # A small conv; host time per call measured behind a busy GPU
    # (hit_path.busy_us: bursts queued behind torch.cuda._sleep), so that
    # neither side waits for the other; back-to-back loops for comparison.
    x = torch.randn(1, 64, 2, 8, 8, device="cuda").bfloat16().contiguous(
        memory_format=torch.channels_last_3d)
    w = (torch.randn(64, 64, 3, 3, 3, device="cuda") / 40).bfloat16().contiguous(
        memory_format=torch.channels_last_3d)
    b = torch.randn(64, device="cuda")
    layer = ct.Conv3d(64, 64, 3, padding=1).cuda().bfloat16()
    with torch.no_grad():
        cases = {"conv3d.conv3d": lambda: conv3d.conv3d(x, w, b, 1, 1),
                 "custom op": lambda: ct.conv3d(x, w, b, 1, 1),
                 "Conv3d module": lambda: layer(x),
                 "F.conv3d (cuDNN)": lambda: F.conv3d(x, w, b.bfloat16(), 1, 1)}
        busy = {name: hit_path.busy_us(case) for name, case in cases.items()}
        loop = {name: host_us_per_call(case) for name, case in cases.items()}
    print("host us/call, busy GPU | loop (GPU us/call):")
    for name in cases:
        print("  %-18s %6.2f | %6.2f  (%.2f)" % (name, busy[name][0], loop[name],
                                                 busy[name][1]))
    print("busy-GPU bursts left out: %s" % hit_path.skipped)
    fn = busy["conv3d.conv3d"][0]
    hit_path.breakdown(x, w, b)
    report("conv3d.conv3d host time < %.0f us" % OVERHEAD_LIMIT_US, fn < OVERHEAD_LIMIT_US,
           "%.1f us" % fn)


def gpu_ms(fn, calls=20):
    for _ in range(3):
        fn()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(calls):
        fn()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / calls


@step("8. cost of the NCDHW layout step")
def check_layout_cost():
    # The contiguous path = copy in to channels_last + conv + copy out; the
    # difference to the channels_last path is the layout steps' cost.
    for shape, f in (((1, 128, 8, 64, 64), 128), ((1, 512, 4, 32, 32), 512)):
        x_cl = torch.randn(shape, device="cuda").bfloat16().contiguous(
            memory_format=torch.channels_last_3d)
        x_c = x_cl.contiguous()
        w = (torch.randn(f, shape[1], 3, 3, 3, device="cuda") / 60).bfloat16().contiguous(
            memory_format=torch.channels_last_3d)
        cl = gpu_ms(lambda: conv3d.conv3d(x_cl, w, padding=1))
        c = gpu_ms(lambda: conv3d.conv3d(x_c, w, padding=1))
        copy_in = gpu_ms(lambda: x_c.contiguous(memory_format=torch.channels_last_3d))
        mbytes = x_c.numel() * 2 / 1e6
        print("%s bf16 (%.0f MB in and out): channels_last %.3f ms, NCDHW %.3f ms "
              "(+%.3f ms, %.0f%%); one copy of the input %.3f ms"
              % (tuple(shape), mbytes, cl, c, c - cl, 100 * (c - cl) / cl, copy_in))
    report("layout step measured", True)


@step("9. converted weights and biases are reused until modified")
def check_parameter_cache():
    # A contiguous (FCQRS) weight and a bf16 bias are converted once; an
    # in-place update (version counter) or a new storage must be picked up.
    x = torch.randn(1, 64, 4, 8, 8, device="cuda").bfloat16().contiguous(
        memory_format=torch.channels_last_3d)
    w = (torch.randn(64, 64, 3, 3, 3, device="cuda") / 40).bfloat16()   # contiguous
    b = torch.randn(64, device="cuda").bfloat16()
    errors = []
    for change in ("first call", "same tensors", "bias.add_(1)", "weight.mul_(-1)",
                   "weight.data = new storage"):
        if change == "bias.add_(1)":
            b.add_(1)
        elif change == "weight.mul_(-1)":
            w.mul_(-1)
        elif change == "weight.data = new storage":
            w.data = (torch.randn(64, 64, 3, 3, 3, device="cuda") / 40).bfloat16()
        y = conv3d.conv3d(x, w, b, padding=1)
        torch.cuda.synchronize()
        errors.append((change, rel_l2(y, torch_reference(x, w, b, (1, 1, 1), (1,) * 6,
                                                         (1, 1, 1)))))
    with torch.inference_mode():  # inference tensors have no version counter
        wi = (torch.randn(64, 64, 3, 3, 3, device="cuda") / 40).bfloat16()
        bi = torch.randn(64, device="cuda").bfloat16()
        y = conv3d.conv3d(x, wi, bi, padding=1)
        torch.cuda.synchronize()
        errors.append(("inference-mode tensors", rel_l2(
            y, torch_reference(x, wi, bi, (1, 1, 1), (1,) * 6, (1, 1, 1)))))
    report("parameter copies follow in-place updates",
           all(e < BF16_TOL for _, e in errors),
           ", ".join("%s %.1e" % pair for pair in errors))


class DLPackOnly:
    def __init__(self, t):
        self.t = t

    def __dlpack__(self, stream=None):
        return self.t.__dlpack__(stream=stream)

    def __dlpack_device__(self):
        return self.t.__dlpack_device__()


@step("7. CuPy arrays and a generic DLPack producer")
def check_cupy():
    x = torch.randn(1, 64, 4, 16, 16, device="cuda").bfloat16().contiguous(
        memory_format=torch.channels_last_3d)
    w = (torch.randn(64, 64, 3, 3, 3, device="cuda") / 40).bfloat16().contiguous(
        memory_format=torch.channels_last_3d)
    ref = torch_reference(x, w, None, (1, 1, 1), (1,) * 6, (1, 1, 1))
    out = torch.full(ref.shape, float("nan"), device="cuda").bfloat16().contiguous(
        memory_format=torch.channels_last_3d)
    torch.cuda.synchronize()
    conv3d.conv3d(DLPackOnly(x), DLPackOnly(w), padding=1, out=DLPackOnly(out))
    torch.cuda.synchronize()
    report("generic DLPack producer (torch behind __dlpack__), out=",
           rel_l2(out, ref) < BF16_TOL, "%.2e" % rel_l2(out, ref))
    try:
        import cupy
    except ImportError:
        print("SKIP CuPy: not installed")
        return
    # GPU targets take bf16/f16; CuPy has no bfloat16, so float16 here.
    xh, wh = x.half(), w.half()
    xc = cupy.from_dlpack(xh.detach())
    wc = cupy.from_dlpack(wh.detach())
    yc = conv3d.conv3d(xc, wc, padding=1)
    cupy.cuda.get_current_stream().synchronize()
    ok = isinstance(yc, cupy.ndarray)
    y = torch.from_dlpack(yc)
    ref16 = torch_reference(xh, wh, None, (1, 1, 1), (1,) * 6, (1, 1, 1))
    report("CuPy float16 arrays: CuPy result", ok and rel_l2(y, ref16) < 1e-3,
           "%.2e" % rel_l2(y, ref16))


@step("10. eager calls past the custom op (conv3d.torch._direct)")
def check_direct():
    torch.manual_seed(int(time.time()))
    x = random_cl(2, 64, 5, 9, 9)
    w = random_cl(96, 64, 3, 3, 3, scale=1 / 40)
    b = torch.randn(96, device="cuda")
    args = (x, w, b, [1, 1, 1], [2, 0, 1, 1, 1, 1], [1, 1, 1], "silu", None, "auto")
    with torch.no_grad():
        direct = ct.conv3d(x, w, b, 1, (2, 0, 1, 1, 1, 1), activation="silu")
        through_op = torch.ops.conv3d.conv3d(*args)
    torch.cuda.synchronize()
    report("no_grad: ct.conv3d (direct) == the custom op, bit for bit",
           torch.equal(direct, through_op) and direct.is_contiguous(
               memory_format=torch.channels_last_3d))
    layer = ct.Conv3d(64, 96, 3, padding=1).cuda().bfloat16()
    wp = layer.weight
    answers = {
        "no_grad, parameters": (torch.no_grad, (x, wp, layer.bias, None), True),
        "inference_mode": (torch.inference_mode, (x, w, b, None), True),
        "grad enabled, nothing requires grad": (torch.enable_grad, (x, w, b, None), True),
        "grad enabled, parameters require grad": (torch.enable_grad,
                                                  (x, wp, layer.bias, None), False),
        "grad enabled, input requires grad": (torch.enable_grad,
                                              (x.detach().requires_grad_(), w, b, None),
                                              False),
    }
    for name, (mode, operands, expected) in answers.items():
        with mode():
            got = ct._direct(*operands)
        report("_direct, %s: %s" % (name, expected), got == expected, str(got))
    try:
        from torch._subclasses.fake_tensor import FakeTensorMode
        with FakeTensorMode() as mode:
            fake = mode.from_tensor(x)
            got = ct._direct(fake, w, b, None)
        report("_direct, a FakeTensor input: False", got is False, str(got))
    except ImportError:
        print("SKIP _direct with a FakeTensor (torch._subclasses.fake_tensor missing)")
    with torch.no_grad():
        y = layer(x)
        ref = F.conv3d(x.float(), layer.weight.float(), layer.bias.float(), 1, 1)
    report("no_grad Conv3d module (direct) vs float32 cuDNN", rel_l2(y, ref) < BF16_TOL,
           "%.2e" % rel_l2(y, ref))


@step("11. the hit paths agree (torch-native, C, pure Python)")
def check_hit_paths():
    # Every PyTorch hit path on the same fresh random operands, outputs
    # poisoned first where given: bit-identical results, the same errors.
    from conv3d import _hit, _torch_native
    _hit.paths.get(torch.Tensor) or _hit.path_for(torch.Tensor)
    native = _hit._native
    c_module = _hit.extension()
    print("torch-native: %s; C extension: %s" % (
        "used" if native else _torch_native.status,
        "used" if c_module else _hit.extension_status))
    paths = {"package": conv3d.conv3d,
             "pure Python": lambda *a, **k: _hit._torch_conv3d(*_call(*a, **k))}
    if c_module is not None:
        paths["C"] = lambda *a, **k: c_module.torch_conv3d(*_call(*a, **k))
    if native is not None:
        paths["torch-native"] = lambda *a, **k: native.conv3d(*_call(*a, **k))
    torch.manual_seed(int(time.time()))
    x = random_cl(2, 32, 4, 9, 10)
    w = random_cl(48, 32, 3, 3, 3, scale=1 / 30)
    b = torch.randn(48, device="cuda")
    res = random_cl(2, 48, 4, 9, 10)
    layer = ct.Conv3d(32, 48, 3, padding=1).cuda().bfloat16()  # bf16 bias: converted
    wc = w.contiguous()  # FCQRS: converted
    cases = {
        "ints": ((x, w, b, 1, 1), {}),
        "tuples, silu, residual": ((x, w, b, (1, 1, 1), (2, 0, 1, 1, 1, 1), (1, 1, 1)),
                                   {"activation": "silu", "residual": res}),
        "stride 2, no bias": ((x, w, None, 2, 1), {}),
        "bf16 bias (converted)": ((x, layer.weight.detach(), layer.bias.detach(), 1, 1), {}),
        "FCQRS weight (converted)": ((x, wc, b, 1, 1), {}),
    }
    with torch.no_grad():
        for name, (args, kwargs) in cases.items():
            results = {}
            for path, fn in paths.items():
                for _ in range(3):  # the miss, then hits
                    results[path] = fn(*args, **kwargs)
            torch.cuda.synchronize()
            first = next(iter(results.values()))
            report("%s: %s equal" % (name, ", ".join(results)),
                   all(torch.equal(first, r) for r in results.values()))
        # A misaligned input (2 bytes off) with a cached key's metadata: each
        # path raises the package's error.
        raw = torch.empty(x.numel() + 1, dtype=x.dtype, device="cuda")[1:]
        odd = raw.view(2, 4, 9, 10, 32).permute(0, 4, 1, 2, 3)
        odd.copy_(x)
        for path, fn in paths.items():
            try:
                fn(odd, w, b, 1, 1)
                report("misaligned input, %s: raises" % path, False, "no error")
            except ValueError as e:
                report("misaligned input, %s: raises" % path, "aligned" in str(e), str(e))
        # clear_cache() forgets the compiled convolutions: the next call
        # compiles again, whatever a hit path remembered.
        before = conv3d.conv3d(x, w, b, 1, 1)
        conv3d.clear_cache()
        again = [conv3d.conv3d(x, w, b, 1, 1) for _ in range(2)]
        torch.cuda.synchronize()
        report("after clear_cache(): same results", all(torch.equal(before, a) for a in again))


@step("12. convert() on torchvision's video networks")
def check_torchvision():
    try:
        from torchvision.models import video
    except ImportError:
        print("SKIP torchvision: not installed")
        return
    ct.reset_fallbacks()
    for name in ("r3d_18", "mc3_18", "r2plus1d_18"):
        torch.manual_seed(3)
        net = getattr(video, name)(weights=None).cuda().eval()
        reference_net = copy.deepcopy(net).float()
        cudnn = copy.deepcopy(net).bfloat16()
        ours = copy.deepcopy(net).bfloat16()
        originals = [(m, type(m)) for m in ours.modules() if isinstance(m, torch.nn.Conv3d)]
        converted = ct.convert(ours)
        kept = all(isinstance(m, ct.Conv3d) and isinstance(m, kind) for m, kind in originals)
        report("%s: convert() converts all %d Conv3d (%s), subclasses kept" % (
            name, len(originals), ", ".join(sorted({k.__name__ for _, k in originals}))),
            len(converted.converted) == len(originals) and not converted.skipped and kept,
            str(converted).splitlines()[0])
        x = torch.randn(1, 3, 8, 112, 112, device="cuda")
        with torch.no_grad():
            ref = reference_net(x)
            ours_err = rel_l2(ours(x.bfloat16()), ref)
            cudnn_err = rel_l2(cudnn(x.bfloat16()), ref)
        torch.cuda.synchronize()
        report("%s: converted bf16 network vs float32 cuDNN" % name,
               ours_err < max(2 * cudnn_err, 2 * BF16_TOL),
               "ours %.2e, cuDNN bf16 %.2e" % (ours_err, cudnn_err))
    report("no fallbacks in the networks", not ct.fallbacks(), str(ct.fallbacks()))


def _reduce_overhead_errors(net, reference_net, layout, calls=4):
    """rel_l2 of each call of torch.compile(copy of net,
    mode="reduce-overhead") on fresh inputs (each output cloned before the
    next call replays the graph); fresh parameters (a copy), so no
    converted copy made by an earlier eager call exists."""
    torch._dynamo.reset()
    model = copy.deepcopy(net)
    compiled = torch.compile(model, mode="reduce-overhead")
    fmt = torch.channels_last_3d if layout == "channels_last" else torch.contiguous_format
    errors = []
    with torch.no_grad():
        for _ in range(calls):
            x = torch.randn(2, 3, 8, 32, 32, device="cuda").bfloat16().contiguous(
                memory_format=fmt)
            y = compiled(x).clone()
            errors.append(rel_l2(y, reference_net(x.float())))
    torch.cuda.synchronize()
    return errors


def _video_net_pair():
    """A converted bf16 VideoNet (bf16 biases: converted to float32) and its
    float32 original."""
    torch.manual_seed(4)
    net = VideoNet().cuda().bfloat16().eval()
    reference_net = copy.deepcopy(net).float()
    ct.convert(net)
    return net, reference_net


@step("13. CUDA graphs: torch.cuda.graph and torch.compile(mode='reduce-overhead')")
def check_reduce_overhead():
    # A manual capture whose output, so its TMA maps, is new inside the
    # capture (the graph's pool): the maps are uploaded outside the graph.
    torch.manual_seed(int(time.time()))
    w = random_cl(64, 64, 3, 3, 3, scale=1 / 40)
    b = torch.randn(64, device="cuda")
    static_x = random_cl(1, 64, 6, 16, 16)
    try:
        with torch.no_grad():
            conv3d.conv3d(static_x, w, b, padding=1)  # compiled and loaded outside
            torch.cuda.synchronize()
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                static_y = conv3d.conv3d(static_x, w, b, padding=1)
            errors = []
            for _ in range(3):
                static_x.copy_(random_cl(1, 64, 6, 16, 16))
                static_y.fill_(float("nan"))
                graph.replay()
                torch.cuda.synchronize()
                errors.append(rel_l2(static_y, torch_reference(
                    static_x, w, b, (1, 1, 1), (1,) * 6, (1, 1, 1))))
        report("torch.cuda.graph capture with a new output, 3 replays (fresh data, "
               "poisoned output)", all(e < BF16_TOL for e in errors),
               ", ".join("%.1e" % e for e in errors))
    except Exception as e:  # noqa: BLE001 - reported
        report("torch.cuda.graph capture with a new output", False,
               "%s: %s" % (type(e).__name__, str(e).splitlines()[0][:300]))
        return
    net, reference_net = _video_net_pair()
    for layout in ("channels_last", "contiguous"):
        start = time.perf_counter()
        try:
            errors = _reduce_overhead_errors(net, reference_net, layout)
            report("reduce-overhead, %s input: 4 calls" % layout,
                   all(e < 2 * BF16_TOL for e in errors),
                   "rel_l2 %s (%.0f s with compilation)" % (
                       ", ".join("%.1e" % e for e in errors), time.perf_counter() - start))
        except Exception as e:  # noqa: BLE001 - reported
            report("reduce-overhead, %s input" % layout, False,
                   "%s: %s" % (type(e).__name__, str(e).splitlines()[0][:300]))


@step("16. diagnostic: reduce-overhead without the graph-side conversions")
def check_reduce_overhead_cause():
    # The first cause, shown (INFO; it may leave CUDA unusable, so it runs
    # last): without the conversions in the graph, the op caches a float32
    # copy of each bias, made in the CUDA-graph pool.
    net, reference_net = _video_net_pair()
    saved = ct._graph_side_copies
    ct._graph_side_copies = lambda weight, bias: (weight, bias)
    try:
        _reduce_overhead_errors(net, reference_net, "channels_last")
        print("INFO without the graph-side conversions: no error")
    except Exception as e:  # noqa: BLE001 - the diagnostic's answer
        print("INFO without the graph-side conversions: %s: %s" % (
            type(e).__name__, " ".join(str(e).split())[:400]))
    finally:
        ct._graph_side_copies = saved
        torch._dynamo.reset()


@step("14. conv3d.torch as a drop-in for F.conv3d on CUDA")
def check_dropin():
    ct.reset_fallbacks()
    torch.manual_seed(int(time.time()))
    x = random_cl(2, 32, 4, 9, 10)
    w = random_cl(48, 32, 3, 3, 3, scale=1 / 30)
    b = torch.randn(48, device="cuda").bfloat16()
    with torch.no_grad():
        empty = ct.conv3d(x[:0], w, b, padding=1)
        report("empty batch: an empty output", tuple(empty.shape) == (0, 48, 4, 9, 10),
               str(tuple(empty.shape)))
        base = random_cl(2, 64, 4, 9, 10)
        sliced = base[:, 16:48]
        before = ct.fallbacks()
        y = ct.conv3d(sliced, w, b, padding=1)
        err = rel_l2(y, torch_reference(sliced, w, b, (1, 1, 1), (1,) * 6, (1, 1, 1)))
        report("channel slice (not dense): computed by conv3d", err < BF16_TOL and
               ct.fallbacks() == before, "%.2e, fallbacks before %s, after %s"
               % (err, before, ct.fallbacks()))
        for name, args in (("float64", (x.double(), w.double(), b.double())),
                           ("float32 on a CUDA device", (x.float(), w.float(), b.float()))):
            y = ct.conv3d(*args, padding=1)
            ref = F.conv3d(*args, padding=1)
            report("%s: PyTorch's convolution" % name, torch.equal(y, ref))
        wg = random_cl(48, 16, 3, 3, 3, scale=1 / 20)
        before = ct.fallbacks()
        err = rel_l2(ct.conv3d(x, wg, b, padding=1, groups=2),
                     F.conv3d(x.float(), wg.float(), b.float(), padding=1, groups=2))
        report("groups=2 (16 channels a group): PyTorch's convolution, counted",
               err < BF16_TOL and ct.fallbacks() != before, "%.2e" % err)
        wd = random_cl(32, 1, 3, 3, 3, scale=1 / 5)
        before = ct.fallbacks()
        err = rel_l2(ct.conv3d(x, wd, None, padding=1, groups=32),
                     F.conv3d(x.float(), wd.float(), None, padding=1, groups=32))
        report("groups=32 (depthwise): computed by conv3d (the depthwise kernel)",
               err < BF16_TOL and ct.fallbacks() == before, "%.2e" % err)
    expected = {"empty input": 1, "float64": 1, "float32 on a CUDA device": 1,
                "grouped with several channels per group on a GPU": 1}
    report("fallbacks() counts them by reason", ct.fallbacks() == expected,
           str(ct.fallbacks()))
    for name, args in (("empty batch", (x[:0], w)), ("channel slice", (sliced, w)),
                       ("float64", (x.double(), w.double())),
                       ("float32 on a CUDA device", (x.float(), w.float()))):
        try:
            conv3d.conv3d(*args, padding=1)
            report("conv3d.conv3d refuses the %s" % name, False, "no error")
        except (TypeError, ValueError, conv3d.Conv3dError) as e:
            report("conv3d.conv3d refuses the %s" % name, True, str(e).splitlines()[0])


@step("15. a configuration tuned from Python is remembered by conv3d-run")
def check_tuning_key():
    import shutil
    import subprocess
    import tempfile
    tool = shutil.which("conv3d-run")
    if tool is None:
        print("SKIP conv3d-run: not on PATH (scripts/gpu/env.sh puts it there)")
        return
    flags = ["--input-shape=1,4,16,16,64", "--filter-shape=3,3,3,64,64",
             "--padding=1,1,1,1,1,1", "--filter-layout=fqrsc", "--dtype=bf16",
             "--target=sm90", "--tune"]
    with tempfile.TemporaryDirectory() as cache:
        spec = conv3d.Spec.from_shapes((1, 4, 16, 16, 64), (3, 3, 3, 64, 64),
                                       padding=(1,) * 6, filter_layout="fqrsc")
        start = time.perf_counter()
        conv = conv3d.Engine(cache).compile(spec, target="sm90", tune=True)
        print("tuned from Python in %.1f s: %s" % (time.perf_counter() - start, conv.config))
        run = subprocess.run([tool, "--cache-dir=" + cache] + flags, capture_output=True,
                             text=True)
        line = next((l for l in run.stdout.splitlines() if "tuned config" in l), run.stderr)
        report("conv3d-run --tune finds it", run.returncode == 0 and "(remembered)" in line
               and conv.config in line, line.strip())


def _call(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1, *,
          activation=None, residual=None, out=None, target="auto"):
    """A hit function's positional arguments, from conv3d.conv3d's."""
    return (input, weight, bias, stride, padding, dilation, groups, activation, residual, out,
            target)


def main():
    print("conv3d %s, library %s (%s)" % (conv3d.__version__, conv3d.library_path(),
                                          conv3d.library_version()))
    dev = conv3d.cuda_device()
    print("device %d: %s, cc %d.%d; torch %s, cuDNN %s" % (
        dev.ordinal, dev.name.decode(), dev.cc_major, dev.cc_minor, torch.__version__,
        torch.backends.cudnn.version()))
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    checks = (check_against_cudnn, check_opcheck, check_network, check_stream,
              check_backward_state, check_overhead, check_cupy, check_layout_cost,
              check_parameter_cache, check_direct, check_hit_paths, check_torchvision,
              check_reduce_overhead, check_dropin, check_tuning_key,
              check_reduce_overhead_cause)
    chosen = os.environ.get("CONV3D_TORCH_STEPS")
    for number in (chosen.split(",") if chosen else range(1, len(checks) + 1)):
        checks[int(number) - 1]()
    print("\n%d failed: %s" % (len(failures), ", ".join(failures) or "none"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
