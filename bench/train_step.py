#!/usr/bin/env python3
"""A training step (forward + backward) on conv3d against PyTorch's own
convolutions (cuDNN on the GPU), for two models (issue 22):

- unet: a 3-D U-Net in nnU-Net's 3d_fullres configuration
  (bench/netbench/models.py: 6 stages of 32-64-128-256-320-320 channels,
  two 3x3x3 conv + instance norm + LeakyReLU per stage, strided convs
  down, ConvTranspose3d up, a 1x1x1 head); batch 2, a 128^3 patch, one
  input channel, 3 classes; the input needs no gradient (it is the data);
- vae_block: WAN 2.1's video-VAE decoder residual block
  (conv3d.models.wan_vae.ResidualBlock: RMS norm, SiLU, causal 3x3x3 conv,
  twice, plus the shortcut) on a whole clip (no chunk cache): 192
  channels, 8 frames of 240 x 416 (the decoder's second-largest stage);
  the input needs its gradient (the block sits inside the decoder).

Each model runs twice from the same weights: as built (PyTorch's
convolutions: on CUDA bf16 channels_last_3d with cudnn.benchmark) and a copy
converted by conv3d.torch.convert() (PyTorch 2.4 and up; with an older
PyTorch, such as Debian's 1.13, each Conv3d and ConvTranspose3d becomes
conv3d.autograd's module instead, the same kernels through
torch.autograd.Function). The loss is the output weighted by a fixed
random tensor and summed (a plain sum would send the same gradient to every
output element). For each model and side:

- conv kernel time: torch.profiler over one step per repetition, the
  kernels summed by the explicit classification of classify() (printed
  with the kernel names in each class): "conv3d library" (kernels launched
  by the library: named conv3d_kernel*, or launched inside a conv3d op),
  "PyTorch conv" (kernels whose launching op is one of PyTorch's
  convolution ops: cuDNN's on the PyTorch side, and on ours the fallbacks
  PyTorch runs for it, e.g. the weight gradient conv3d.torch takes from
  cuDNN on a GPU), "conv glue" (the other kernels inside convolution ops:
  layout copies, padding, the bias gradient's sum), "other" (norms,
  activations, the loss). Conv time = conv3d library + PyTorch conv. On
  the CPU the units are the CPU ops' own (self) times instead of kernels,
  and everything inside one of PyTorch's convolution ops is "PyTorch conv";
- whole-step time (bench/timing.py: the two sides interleaved, CUDA
  events with the L2 flushed before each, medians);
- peak memory: torch.cuda.max_memory_allocated over one step, reset
  before each side (the step's peak, and its rise over what was allocated
  before it); the library's own temporaries come from a CUDA memory pool
  that PyTorch does not see;
- errors: the relative L2 distance of all gradients (parameters, and the
  input's where it has one), concatenated, against the same model in
  higher precision (--reference-dtype: float32 with TF32 off on CUDA,
  float64 on the CPU) with the same (rounded) weights and input; also the
  worst single tensor, and the output's distance.

Usage (GPU machine, from the repository root after scripts/gpu/env.sh):
    python3 bench/train_step.py [--models unet vae_block] [--reps 5]
        [--json out.json]
--quick: small models (a 2-stage U-Net on an 8^3 patch, a block of 8
channels) on the CPU target in float32, with Debian's PyTorch 1.13 too:
the checks that the numbers are consistent (test/Python/train-step.test).
Every run ends with CHECK lines and exits 1 when one fails: gradients as
close to the reference as PyTorch's (within a factor 2, or the dtype's
tolerance), the library's kernels counted on our side only, PyTorch's
convolutions on its side, at least one library call or kernel per converted
convolution and some work outside the convolutions (norms...), and
the CUDA classification rules on made-up kernels (classification_check).
"""

import argparse
import copy
import json
import os
import statistics
import time
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))

import torch  # noqa: E402
from torch import nn  # noqa: E402

from netbench.models import UNET_CHANNELS, unet3d  # noqa: E402
import timing  # noqa: E402
from timing import rel_l2  # noqa: E402

import conv3d.autograd  # noqa: E402
from conv3d.models import wan_vae  # noqa: E402

CL = torch.channels_last_3d
SIDES = ("pytorch", "ours")
CLASSES = ("conv3d library", "PyTorch conv", "conv glue", "other")

FULL = {"unet": dict(batch=2, patch=(128, 128, 128), channels=UNET_CHANNELS),
        "vae_block": dict(batch=1, channels=192, frames=8, size=(240, 416))}
QUICK = {"unet": dict(batch=1, patch=(8, 8, 8), channels=(4, 8)),
         "vae_block": dict(batch=1, channels=8, frames=3, size=(6, 5))}
# Relative L2 of the gradients that always passes (the dtype's rounding
# on long reductions), beside "no more than twice PyTorch's".
TOLERANCE = {torch.bfloat16: 2e-2, torch.float16: 5e-3, torch.float32: 1e-4}


class VaeBlock(nn.Module):
    """wan_vae.ResidualBlock(C, C) on a whole clip: each causal conv pads
    its 2 frames in front (no cache)."""

    def __init__(self, channels):
        super().__init__()
        self.block = wan_vae.ResidualBlock(channels, channels)
        with torch.no_grad():
            for name, p in self.block.named_parameters():
                if name.endswith("gamma"):
                    p.copy_(1 + 0.1 * torch.randn_like(p))

    def forward(self, x):
        return self.block.eager(x, {})


def make_model(name, size, seed):
    """(model in float32 on the CPU, input shape, whether the input needs
    its gradient)."""
    torch.manual_seed(seed)
    if name == "unet":
        model = unet3d(1, 3, size["channels"]).train()
        return model, (size["batch"], 1) + tuple(size["patch"]), False
    model = VaeBlock(size["channels"]).train()
    c, t, (h, w) = size["channels"], size["frames"], size["size"]
    return model, (size["batch"], c, t, h, w), True


def convert(model, target):
    """`model` on conv3d, in place: conv3d.torch.convert(), or with a
    PyTorch older than 2.4 conv3d.autograd's Conv3d / ConvTranspose3d as
    each module's class (made beside its own, as convert() does for
    subclasses). Returns a line saying which, and how many were converted."""
    try:
        import conv3d.torch as ct
        report = ct.convert(model, target=target)
        return "conv3d.torch.convert: %d converted, %d left%s" % (
            len(report.converted), len(report.skipped),
            "".join("; left %s: %s" % s for s in report.skipped)), len(report.converted)
    except ImportError:
        pass
    count = 0
    for module in model.modules():
        for theirs, ours in ((nn.Conv3d, conv3d.autograd.Conv3d),
                             (nn.ConvTranspose3d, conv3d.autograd.ConvTranspose3d)):
            if isinstance(module, theirs) and not isinstance(module, ours):
                kind = type(module)
                module.__class__ = type(kind.__name__, (ours, kind), {})
                module.target = target
                count += 1
    return "conv3d.autograd (PyTorch %s has no custom ops): %d converted" % (
        torch.__version__, count), count


def fallbacks():
    """conv3d.torch's fallback counts ({} with PyTorch < 2.4)."""
    try:
        import conv3d.torch as ct
        return ct.fallbacks()
    except ImportError:
        return {}


def reset_fallbacks():
    try:
        import conv3d.torch as ct
        ct.reset_fallbacks()
    except ImportError:
        pass


class Side:
    """One model on one device and dtype with its input and loss weights."""

    def __init__(self, model, x, probe, input_grad):
        self.model, self.x, self.probe = model, x, probe
        if input_grad:
            self.x.requires_grad_()

    def step(self):
        self.model.zero_grad(set_to_none=True)
        self.x.grad = None
        y = self.model(self.x)
        (y.to(self.probe.dtype) * self.probe).sum().backward()
        return y

    def gradients(self):
        grads = {name: p.grad for name, p in self.model.named_parameters()}
        if self.x.requires_grad:
            grads["input"] = self.x.grad
        return grads


def gradient_errors(grads, reference):
    """(relative L2 of all gradients concatenated, (worst tensor's relative
    L2, its name)) against `reference`; the worst among tensors whose
    reference is not vanishing (a conv's bias before an instance norm has
    a zero gradient, computed as rounding noise)."""
    num = den = 0.0
    norms = {}
    for name, ref in reference.items():
        got = grads[name]
        if got is None:
            return float("inf"), (float("inf"), name + " (no gradient)")
        num += torch.linalg.vector_norm(got.double() - ref.double()).item() ** 2
        norms[name] = torch.linalg.vector_norm(ref.double()).item()
        den += norms[name] ** 2
    floor = 1e-4 * den ** 0.5
    worst = max((rel_l2(grads[n], r), n) for n, r in reference.items() if norms[n] > floor)
    return (num / den) ** 0.5, worst


# -- the classification of the profiled work ------------------------------------
# Our scopes: conv3d.torch's custom ops (conv3d::conv3d, ::conv3d_input,
# ::conv3d_weight, ::conv_transpose3d) and conv3d.autograd's Functions
# (PyTorch 1.13: their forward and backward nodes).
_OUR_FUNCTIONS = tuple(f.__name__ + suffix for f in (conv3d.autograd._Conv3dFunction,
                                                     conv3d.autograd._ConvTranspose3dFunction)
                       for suffix in ("", "Backward"))


def is_ours(op):
    return op.startswith("conv3d::") or op in _OUR_FUNCTIONS


def is_pytorch_conv(op):
    """PyTorch's convolution ops: aten::conv3d, convolution, _convolution,
    cudnn_convolution(_transpose), convolution_backward, slow_conv3d*,
    mkldnn_convolution, conv_transpose3d..."""
    return op.startswith("aten::") and "conv" in op


# What names a convolution kernel of cuDNN's (or PyTorch's) when the
# profiler linked it to no op (sm90_xmma_fprop_implicit_gemm_...,
# cutlass3x_..., cudnn_...).
_CONV_KERNEL_WORDS = ("conv", "xmma", "implicit_gemm", "dgrad", "wgrad", "fprop", "cutlass",
                      "cudnn")


def classify_item(name, stack, device):
    """The class of one unit of work: a kernel (CUDA) named `name`
    launched inside the ops `stack` (innermost first; empty when the
    profiler linked it to none), or a CPU op's own time (stack[0] is the
    op itself)."""
    if name.startswith("conv3d_kernel") or (stack and is_ours(stack[0])):
        return "conv3d library"
    if device == "cuda":
        if stack and is_pytorch_conv(stack[0]):
            return "PyTorch conv"
        if not stack and any(k in name.lower() for k in _CONV_KERNEL_WORDS):
            return "PyTorch conv"  # unlinked kernel, by its name
    elif any(is_pytorch_conv(op) for op in stack):
        return "PyTorch conv"
    if any(is_ours(op) or is_pytorch_conv(op) for op in stack):
        return "conv glue"
    return "other"


def _op_stack(event):
    stack = []
    while event is not None:
        stack.append(event.name)
        event = event.cpu_parent
    return stack


def profiled_items(prof, device):
    """[(name, microseconds, stack)] of a torch.profiler run: every CUDA
    kernel / memory operation with the stack of ops that launched it
    (those the profiler links to no op with an empty stack), or on the CPU
    every op's self time with its own stack."""
    events = prof.events()
    if device != "cuda":
        return [(e.name, e.self_cpu_time_total, _op_stack(e)) for e in events
                if e.device_type.name == "CPU"]
    items, linked = [], {}
    for e in events:
        if e.device_type.name == "CPU" and e.kernels:
            stack = _op_stack(e)
            for k in e.kernels:
                items.append((k.name, k.duration, stack))
                linked[(k.name, k.duration)] = linked.get((k.name, k.duration), 0) + 1
    for e in events:
        if e.device_type.name == "CUDA":
            key = (e.name, e.time_range.end - e.time_range.start)
            if linked.get(key, 0) > 0:
                linked[key] -= 1
            else:
                items.append((key[0], key[1], []))
    return items


def classify(items, device):
    """{class: microseconds}, {class: {name: [microseconds, count]}}, the
    number of unlinked kernels, and {class: {"name < op < op < op":
    [microseconds, count]}} (the three innermost ops that launched each
    kernel and the innermost op outside aten above them: where a class's
    time comes from)."""
    totals = dict.fromkeys(CLASSES, 0.0)
    names = {c: {} for c in CLASSES}
    by_op = {c: {} for c in CLASSES}
    unlinked = 0
    for name, us, stack in items:
        cls = classify_item(name, stack, device)
        totals[cls] += us
        # (A CPU op's stack starts with the op itself.)
        ops = stack[1:] if stack and stack[0] == name else stack
        # The three innermost ops, then the innermost one outside aten (the
        # conv3d op, autograd node or module that the aten ops serve).
        outer = next((op for op in ops[3:] if not op.startswith("aten::")), None)
        ops = ops[:3] + (["... " + outer] if outer else [])
        for table, key in ((names, name), (by_op, " < ".join([name[:40]] + ops))):
            entry = table[cls].setdefault(key, [0.0, 0])
            entry[0] += us
            entry[1] += 1
        unlinked += device == "cuda" and not stack
    return totals, names, unlinked, by_op


def profile_step(side, device):
    from torch.profiler import ProfilerActivity, profile
    activities = [ProfilerActivity.CPU]
    if device == "cuda":
        activities.append(ProfilerActivity.CUDA)
    with profile(activities=activities) as prof:
        side.step()
        if device == "cuda":
            torch.cuda.synchronize()
    return classify(profiled_items(prof, device), device)


def peak_memory(side, others):
    """(max_memory_allocated over one step, its rise over the memory
    allocated before it), bytes; every side's gradients freed first."""
    for other in others:
        other.model.zero_grad(set_to_none=True)
        other.x.grad = None
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    base = torch.cuda.memory_allocated()
    side.step()
    torch.cuda.synchronize()
    peak = torch.cuda.max_memory_allocated()
    return peak, peak - base


def run_model(name, size, args, device, dtype):
    model, shape, input_grad = make_model(name, size, args.seed)
    gen = torch.Generator().manual_seed(args.seed + 1)
    x = torch.randn(shape, generator=gen)
    fmt = CL if device == "cuda" else torch.contiguous_format
    theirs = model.to(device=device, dtype=dtype)
    # Module.to(memory_format=...) refuses models with parameters that are
    # not 5-D (the VAE block's norm scales): the 5-D ones only.
    for parameter in theirs.parameters():
        if parameter.dim() == 5:
            parameter.data = parameter.data.contiguous(memory_format=fmt)
    ours = copy.deepcopy(theirs)
    conversion, converted = convert(ours, args.target)
    reference = copy.deepcopy(theirs).to(dtype=args.reference_dtype)
    xb = x.to(device=device, dtype=dtype).contiguous(memory_format=fmt)
    with torch.no_grad():
        y_shape = theirs(xb).shape
    probe = torch.randn(y_shape, generator=gen).to(device)
    sides = {"pytorch": Side(theirs, xb.clone(), probe, input_grad),
             "ours": Side(ours, xb.clone(), probe, input_grad)}
    ref = Side(reference, xb.to(args.reference_dtype), probe.to(args.reference_dtype),
               input_grad)
    row = {"model": name, "size": size, "input": list(shape), "dtype": str(dtype),
           "device": device, "conversion": conversion, "converted": converted}
    print("== %s %s: input %s, %s on %s; %s" % (
        name, {k: v for k, v in size.items() if k != "batch"}, tuple(shape), dtype, device,
        conversion), flush=True)

    # Correctness (the first steps also compile our kernels and run
    # cuDNN's search): every gradient against the reference.
    # The reference runs with cuDNN's heuristic algorithms: in benchmark
    # mode its search over float32 3-D algorithms (TF32 off) at the VAE
    # block's size did not finish in 200 s on the H100 (2026-11-28).
    start = time.perf_counter()
    benchmark = torch.backends.cudnn.benchmark
    if device == "cuda":
        torch.backends.cudnn.allow_tf32 = False
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.benchmark = False
    y_ref = ref.step().detach()
    ref_grads = {k: v.detach() for k, v in ref.gradients().items()}
    del ref, reference
    if device == "cuda":
        torch.backends.cudnn.allow_tf32 = True
        torch.backends.cudnn.benchmark = benchmark
        torch.cuda.empty_cache()
    print("  reference step (%s): %.1f s" % (args.reference_dtype, time.perf_counter() - start),
          flush=True)
    for side_name, side in sides.items():
        reset_fallbacks()
        start = time.perf_counter()
        y = side.step()
        print("  %s first step (compilation, cuDNN's search): %.1f s"
              % (side_name, time.perf_counter() - start), flush=True)
        row[side_name + "_output_rel_l2"] = rel_l2(y, y_ref)
        total, (worst, worst_name) = gradient_errors(side.gradients(), ref_grads)
        row[side_name + "_grad_rel_l2"] = total
        row[side_name + "_grad_worst"] = [worst, worst_name]
        if side_name == "ours":
            row["ours_fallbacks_per_step"] = fallbacks()
    del ref_grads, y_ref

    # Whole-step time: interleaved, medians.
    timer = timing.from_arguments(args, device=device)
    times = timer.interleaved({s: sides[s].step for s in SIDES})
    for s in SIDES:
        row[s + "_step_ms"] = statistics.median(times[s])

    # Conv kernel time: one profiled step per side and repetition,
    # interleaved; medians of each class.
    per_class = {s: {c: [] for c in CLASSES} for s in SIDES}
    conv = {s: [] for s in SIDES}
    for _ in range(args.profile_reps):
        for s in SIDES:
            totals, names, unlinked, by_op = profile_step(sides[s], device)
            for c in CLASSES:
                per_class[s][c].append(totals[c] / 1e3)
            conv[s].append((totals["conv3d library"] + totals["PyTorch conv"]) / 1e3)
            row[s + "_kernels"] = {c: sorted(([n, v[0] / 1e3, v[1]] for n, v in names[c].items()),
                                             key=lambda r: -r[1]) for c in CLASSES}
            row[s + "_kernels_by_op"] = {
                c: sorted(([n, v[0] / 1e3, v[1]] for n, v in by_op[c].items()),
                          key=lambda r: -r[1]) for c in ("conv glue", "PyTorch conv", "other")}
            row[s + "_unlinked_kernels"] = unlinked
            row[s + "_profiled_total_ms"] = sum(totals.values()) / 1e3
    for s in SIDES:
        row[s + "_conv_ms"] = statistics.median(conv[s])
        row[s + "_class_ms"] = {c: statistics.median(v) for c, v in per_class[s].items()}

    if device == "cuda":
        everyone = list(sides.values())
        for s in SIDES:
            row[s + "_peak_bytes"], row[s + "_step_peak_bytes"] = peak_memory(sides[s],
                                                                               everyone)
    del sides
    if device == "cuda":
        torch.cuda.empty_cache()
    return row


def show(row, top):
    unit = "kernel" if row["device"] == "cuda" else "CPU op self"
    for s in SIDES:
        print("  %-7s step %.3f ms, conv %s time %.3f ms (%s), grads rel. L2 %.2e "
              "(worst %.2e %s), output %.2e%s" % (
                  s, row[s + "_step_ms"], unit, row[s + "_conv_ms"],
                  ", ".join("%s %.3f" % kv for kv in row[s + "_class_ms"].items()),
                  row[s + "_grad_rel_l2"], row[s + "_grad_worst"][0],
                  row[s + "_grad_worst"][1], row[s + "_output_rel_l2"],
                  ", peak %.2f GiB (step's rise %.2f GiB)" % (
                      row[s + "_peak_bytes"] / 2**30, row[s + "_step_peak_bytes"] / 2**30)
                  if s + "_peak_bytes" in row else ""))
        for c in CLASSES:
            entries = row[s + "_kernels"][c]
            if not entries:
                continue
            shown = "; ".join("%s x%d %.3f ms" % (n[:70], k, ms) for n, ms, k in entries[:top])
            more = " (+%d more)" % (len(entries) - top) if len(entries) > top else ""
            print("    [%s] %s%s" % (c, shown, more))
        # Where the glue (and PyTorch's convolution kernels) come from: the
        # kernel with the ops that launched it, innermost first.
        for c, entries in row[s + "_kernels_by_op"].items():
            if entries:
                print("    [%s by op] %s" % (c, "; ".join(
                    "%s x%d %.3f ms" % (n, k, ms) for n, ms, k in entries[:top])))
        if row[s + "_unlinked_kernels"]:
            print("    (%d kernels linked to no op: classified by name)"
                  % row[s + "_unlinked_kernels"])
    if row.get("ours_fallbacks_per_step"):
        print("  conv3d.torch fallbacks in one step of ours: %s" % row["ours_fallbacks_per_step"])
    print("  speed: conv time %.2fx, step %.2fx (PyTorch's time / ours)" % (
        row["pytorch_conv_ms"] / row["ours_conv_ms"], row["pytorch_step_ms"] / row["ours_step_ms"]),
        flush=True)


def classification_check():
    """classify_item's CUDA rules on made-up kernels: (name, passed,
    detail); the GPU's profiles cannot run where the tests do."""
    cases = [
        ("conv3d_kernel", ["conv3d::conv3d_input", "ConvBackward"], "conv3d library"),
        ("conv3d_kernel_0", [], "conv3d library"),  # a driver launch linked to no op
        ("Memset (Device)", ["conv3d::conv3d"], "conv3d library"),
        ("sm90_xmma_wgrad_implicit_gemm", ["aten::convolution_backward",
                                           "conv3d::conv3d_weight"], "PyTorch conv"),
        ("elementwise_kernel", ["aten::constant_pad_nd", "conv3d::conv3d_weight"],
         "conv glue"),
        ("sm90_xmma_fprop_implicit_gemm", ["aten::cudnn_convolution", "aten::_convolution"],
         "PyTorch conv"),
        ("cutlass3x_sm90_tensorop_gemm", [], "PyTorch conv"),
        ("vectorized_elementwise_kernel", ["aten::add_", "aten::_convolution"], "conv glue"),
        ("vectorized_elementwise_kernel", ["aten::leaky_relu_"], "other"),
        ("reduce_kernel", [], "other"),
    ]
    wrong = [(n, s, classify_item(n, s, "cuda"), want) for n, s, want in cases
             if classify_item(n, s, "cuda") != want]
    return ("classification", not wrong, "%d made-up CUDA kernels%s" % (
        len(cases), "; wrong: %s" % wrong if wrong else ""))


def checks(row, dtype):
    """[(name, passed, detail)]: the consistency of one model's numbers."""
    tol = TOLERANCE.get(dtype, 1e-4)
    theirs, ours = row["pytorch_grad_rel_l2"], row["ours_grad_rel_l2"]
    lib_ours = row["ours_class_ms"]["conv3d library"]
    lib_theirs = row["pytorch_class_ms"]["conv3d library"]
    fallback_ok = row["device"] == "cuda" or row["ours_class_ms"]["PyTorch conv"] == 0
    library_units = sum(count for _, _, count in row["ours_kernels"]["conv3d library"])
    other = [row[s + "_class_ms"]["other"] for s in SIDES]
    return [
        ("%s gradients" % row["model"], ours <= max(2 * theirs, tol),
         "ours %.2e, PyTorch %.2e, tolerance max(2 x PyTorch's, %.0e)" % (ours, theirs, tol)),
        ("%s conv time" % row["model"],
         lib_ours > 0 and lib_theirs == 0 and row["pytorch_conv_ms"] > 0 and fallback_ok,
         "ours: library %.3f ms, PyTorch conv %.3f ms; PyTorch side: library %.3f ms, "
         "conv %.3f ms" % (lib_ours, row["ours_class_ms"]["PyTorch conv"], lib_theirs,
                           row["pytorch_conv_ms"])),
        # Each converted convolution runs the library at least once (its
        # forward); the norms and activations are not convolutions.
        ("%s classes" % row["model"],
         library_units >= row["converted"] and min(other) > 0,
         "ours: %d library %s for %d converted convolutions; other: %s ms" % (
             library_units, "kernels" if row["device"] == "cuda" else "calls",
             row["converted"], " / ".join("%.3f" % v for v in other))),
    ]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", nargs="+", default=["unet", "vae_block"],
                    choices=["unet", "vae_block"])
    ap.add_argument("--quick", action="store_true",
                    help="small models on the CPU target in float32 (any PyTorch >= 1.13)")
    ap.add_argument("--device", choices=["cuda", "cpu"], default=None,
                    help="default: cuda, cpu with --quick")
    ap.add_argument("--dtype", choices=["bf16", "f16", "f32"], default=None,
                    help="default: bf16 on cuda, f32 on cpu")
    ap.add_argument("--reference-dtype", choices=["f32", "f64"], default=None,
                    help="the reference's dtype (default: f32 on cuda, TF32 off; f64 on cpu)")
    ap.add_argument("--target", default="auto", help="conv3d's target (auto, sm90, sm80, cpu)")
    timing.add_arguments(ap, reps=5, warmup=2)
    ap.add_argument("--profile-reps", type=int, default=3, help="profiled steps per side")
    ap.add_argument("--top", type=int, default=4, help="kernel names shown per class")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--library-wgrad", action="store_true",
                    help="our side computes the weight gradient with the library's kernels on "
                    "the GPU too (default: conv3d.torch's choice, PyTorch's there)")
    ap.add_argument("--json")
    args = ap.parse_args()
    if args.library_wgrad:
        from conv3d import _torch_dropin
        _torch_dropin._WGRAD_ON_GPU = True
    device = args.device or ("cpu" if args.quick else "cuda")
    dtypes = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32,
              "f64": torch.float64}
    dtype = dtypes[args.dtype or ("bf16" if device == "cuda" else "f32")]
    args.reference_dtype = dtypes[args.reference_dtype
                                  or ("f32" if device == "cuda" else "f64")]
    if device == "cuda":
        if not torch.cuda.is_available():
            sys.exit("bench/train_step.py: no CUDA device (--quick runs on the CPU)")
        torch.backends.cudnn.benchmark = True
        props = torch.cuda.get_device_properties(0)
        print("device: %s, torch %s, cuDNN %s, conv3d target %s" % (
            props.name, torch.__version__, torch.backends.cudnn.version(), args.target))
    else:
        print("device: CPU, torch %s, conv3d target %s" % (torch.__version__, args.target))
    if device == "cuda":
        print("kernel classes: conv3d library = named conv3d_kernel* or launched by a conv3d "
              "op itself; PyTorch conv = launched by one of PyTorch's convolution ops "
              "(aten::*conv*: cuDNN; on our side the fallbacks, e.g. the weight gradient); "
              "conv glue = the other kernels inside convolution ops; other = the rest; "
              "conv time = conv3d library + PyTorch conv")
    else:
        print("CPU op classes (self time): conv3d library = conv3d's ops and autograd "
              "functions; PyTorch conv = inside PyTorch's convolution ops (aten::*conv*); "
              "conv glue = the other ops inside conv3d's; other = the rest; conv time = "
              "conv3d library + PyTorch conv")
    sizes = QUICK if args.quick else FULL
    rows, results = [], []
    for name in args.models:
        row = run_model(name, sizes[name], args, device, dtype)
        show(row, args.top)
        rows.append(row)
        results += checks(row, dtype)
    print("\n| model | conv time PyTorch / ours ms | speed | step PyTorch / ours ms | "
          "speed | peak PyTorch / ours GiB | grads rel. L2 PyTorch / ours |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        peak = ("%.2f / %.2f" % (r["pytorch_peak_bytes"] / 2**30, r["ours_peak_bytes"] / 2**30)
                if "ours_peak_bytes" in r else "n/a")
        print("| %s | %.3f / %.3f | %.2fx | %.3f / %.3f | %.2fx | %s | %.2e / %.2e |" % (
            r["model"], r["pytorch_conv_ms"], r["ours_conv_ms"],
            r["pytorch_conv_ms"] / r["ours_conv_ms"], r["pytorch_step_ms"], r["ours_step_ms"],
            r["pytorch_step_ms"] / r["ours_step_ms"], peak, r["pytorch_grad_rel_l2"],
            r["ours_grad_rel_l2"]))
    results.append(classification_check())
    for name, ok, detail in results:
        print("CHECK %-22s %s (%s)" % (name, "PASS" if ok else "FAIL", detail))
    if args.json:
        with open(args.json, "w") as out:
            json.dump(rows, out, indent=1, default=str)
    sys.exit(0 if all(ok for _, ok, _ in results) else 1)


if __name__ == "__main__":
    main()
