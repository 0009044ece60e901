"""Layers and networks measured by the project's rules (bench/RESULTS.md):
same process, same tensors, the timing of bench/timing.py (interleaved,
L2 flushed before every timed call, CUDA events, medians after a warm-up,
which also takes compilation and cuDNN's benchmark-mode search out of the
timed calls), random data (never zeros), bf16 channels_last_3d tensors,
torch.backends.cudnn.benchmark = True."""

import math
import statistics
import time

import torch
import torch.nn.functional as F

import conv3d
import conv3d.torch
from timing import rel_l2

from .compiling import short_error

CL = torch.channels_last_3d


def layer_tensors(layer, seed):
    """Random bf16 channels_last_3d input and weight (scaled by 1/sqrt(K)
    so outputs are O(1)), and a bias if the layer has one."""
    gen = torch.Generator(device="cuda").manual_seed(seed)
    k = layer.gemm()[2]
    x = torch.randn(layer.input_shape(), device="cuda", dtype=torch.bfloat16,
                    generator=gen).contiguous(memory_format=CL)
    w = (torch.randn(layer.weight_shape(), device="cuda", generator=gen) / math.sqrt(k)).to(
        torch.bfloat16).contiguous(memory_format=CL)
    b = None
    if layer.bias:
        b = (0.5 * torch.randn(layer.f, device="cuda", generator=gen)).to(torch.bfloat16)
    return x, w, b


def poisoned_output(layer):
    return torch.full(layer.output_shape(), float("nan"), device="cuda",
                      dtype=torch.bfloat16).contiguous(memory_format=CL)


def measure_layer(layer, timer, target, seed=0):
    """One layer, ours (conv3d.torch.conv3d) against cuDNN (F.conv3d) on the
    same tensors: medians, the first call's time (compilation or a disk
    cache load), and ours' rel. L2 distance to cuDNN's result, checked on
    a NaN-poisoned output (an unwritten element fails the check)."""
    x, w, b = layer_tensors(layer, seed)
    args = (layer.stride, layer.padding, layer.dilation, layer.groups)
    row = {}

    def cudnn():
        return F.conv3d(x, w, b, *args)

    def ours():
        return conv3d.torch.conv3d(x, w, b, *args, target=target)

    reference = cudnn()
    try:
        start = time.perf_counter()
        fallbacks = sum(conv3d.torch.fallbacks().values())
        ours()
        torch.cuda.synchronize()
        row["first_call_s"] = time.perf_counter() - start
        if sum(conv3d.torch.fallbacks().values()) != fallbacks:
            # The drop-in sends what the kernels do not take well to
            # PyTorch (grouped GEMMs on a GPU): that is what a user gets.
            row["fallback"] = True
        out = poisoned_output(layer)
        conv3d.conv3d(x, w, b, stride=layer.stride, padding=layer.padding,
                      dilation=layer.dilation, groups=layer.groups, out=out, target=target)
        row["rel_l2"] = rel_l2(out, reference)
        del out
    except (conv3d.Conv3dError, ValueError, TypeError) as error:
        row["error"] = short_error(error)
        times = timer.interleaved({"cudnn": cudnn})
        row["cudnn_ms"] = statistics.median(times["cudnn"])
        return row
    times = timer.interleaved({"ours": ours, "cudnn": cudnn})
    row["gc_full_collections"] = timer.full_collections
    row["ours_ms"] = statistics.median(times["ours"])
    row["cudnn_ms"] = statistics.median(times["cudnn"])
    row["ours_spread"] = (max(times["ours"]) - min(times["ours"])) / row["ours_ms"]
    return row


def compiled_config(layer, target):
    """What the Python API says about the configuration ours used: the
    tuner's choice, or "heuristic" (the API names no more; the engine's
    memory cache answers, nothing is compiled again)."""
    from conv3d import _functional
    spec = conv3d.Spec.from_shapes(**layer.spec_args())
    return _functional._default_engine().compile(spec, target=target).config


def whole_network(module, input_shape, target, reps):
    """Wall time of a whole forward pass, ours (conv3d.torch.convert on a
    copy) and cuDNN interleaved: ours, cuDNN, ours, ... Host-bound and
    noisy; kernel time is the per-layer sum."""
    import copy
    model = module.to(device="cuda", dtype=torch.bfloat16, memory_format=CL).eval()
    ours = copy.deepcopy(model)
    report = conv3d.torch.convert(ours, target=target)
    x = torch.randn(input_shape, device="cuda", dtype=torch.bfloat16).contiguous(
        memory_format=CL)
    times = {"ours": [], "cudnn": []}
    with torch.inference_mode():
        for _ in range(3):
            y_ours, y_ref = ours(x), model(x)
        torch.cuda.synchronize()
        for _ in range(reps):
            for name, net in (("ours", ours), ("cudnn", model)):
                torch.cuda.synchronize()
                start = time.perf_counter()
                net(x)
                torch.cuda.synchronize()
                times[name].append((time.perf_counter() - start) * 1e3)
        error = rel_l2(y_ours, y_ref)
    result = dict(ours_wall_ms=statistics.median(times["ours"]),
                  cudnn_wall_ms=statistics.median(times["cudnn"]),
                  converted=len(report.converted), left=len(report.skipped),
                  output_rel_l2=error)
    del ours, model, x
    torch.cuda.empty_cache()
    return result
