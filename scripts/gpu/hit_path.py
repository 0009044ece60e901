#!/usr/bin/env python3
"""conv3d.conv3d's hit path on the GPU: host time per call next to cuDNN.

Run on the GPU machine by `scripts/gpu/run.sh overhead` (after
conv3d-host-overhead, the C++ side). A small bf16 convolution
(1x64x2x8x8 channels_last_3d input, 64 3x3x3 filters, bias, padding 1),
so that the GPU keeps up and the host side is measured, for target=auto
(sm90 on an H100) and target=sm80:

  - us/call in a loop of back-to-back calls (what a model's forward pays;
    when the GPU time per call is not below it, the loop measured the GPU),
    and the host latency of one call into an idle GPU (synchronized before
    each call, the call alone timed: no queue back-pressure), for
    conv3d.conv3d and cuDNN's F.conv3d under torch.no_grad();
  - the hit path's pieces, timed as replicas of its steps: the signature
    and lookup, the three data_ptr() reads, the output allocation (and two
    alternatives to it, for comparison), the stream query, the C call alone
    (conv3d_run_packed with a filled block, and conv3d_run); the rest of
    the hit is the package's Python around them.

Prints PASS/FAIL for the issue's limit (conv3d.conv3d < 15 us per call in
the loop); the exit status is 1 if it failed. scripts/gpu/torch_check.py
step 6 calls breakdown() too. The CPU counterpart: bench/python_hit_path.py.
"""

import ctypes
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import conv3d  # noqa: E402
from conv3d import _hit  # noqa: E402

LIMIT_US = 15.0


def loop_us(fn, calls=2000, rounds=5):
    """The best per-call host time over `rounds` loops of back-to-back calls."""
    for _ in range(20):
        fn()
    torch.cuda.synchronize()
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        best = min(best, (time.perf_counter() - start) / calls * 1e6)
        torch.cuda.synchronize()
    return best


def idle_us(fn, calls=500):
    """The median host time of one call into an idle GPU."""
    samples = []
    for _ in range(calls):
        torch.cuda.synchronize()
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    torch.cuda.synchronize()
    return statistics.median(samples) * 1e6


def gpu_us(fn, calls=200):
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    fn()
    start.record()
    for _ in range(calls):
        fn()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / calls * 1e3


def operands():
    x = torch.randn(1, 64, 2, 8, 8, device="cuda").bfloat16().contiguous(
        memory_format=torch.channels_last_3d)
    w = (torch.randn(64, 64, 3, 3, 3, device="cuda") / 40).bfloat16().contiguous(
        memory_format=torch.channels_last_3d)
    b = torch.randn(64, device="cuda")
    return x, w, b


def signature_of(x, w, b, target):
    """The hit path's signature for conv3d.conv3d(x, w, b, 1, 1, target=...)."""
    def sig(t):
        return type(t), t.dtype, t.layout, t.device, t.shape, t.stride()
    return (sig(x), sig(w), sig(b), None, None, (1, 1, 1, 1), None, target)


def breakdown(x, w, b, targets=("auto", "sm80")):
    """Where conv3d.conv3d's host time goes on a hit; returns {target: us}."""
    lib = conv3d._library()
    error = ctypes.create_string_buffer(4096)
    amax = ctypes.c_float(0.0)
    totals = {}
    with torch.no_grad():
        for target in targets:
            conv3d.clear_cache()
            y = conv3d.conv3d(x, w, b, 1, 1, target=target)
            key = signature_of(x, w, b, target)
            plan = _hit.signatures.get(key)
            if plan is None:
                print("  the replica of the signature does not find the plan: "
                      "signature_of() is out of date with _hit.py")
                return totals
            stream = (plan.stream() or 1) if plan.gpu else None
            ptrs = (x.data_ptr(), w.data_ptr(), b.data_ptr(), y.data_ptr())
            block = conv3d.RunArgs()
            block.conv, block.input, block.filter, block.bias = (plan.handle, *ptrs[:3])
            block.output, block.stream = ptrs[3], stream
            block.error, block.error_size = ctypes.addressof(error), len(error)
            ref = ctypes.byref(block)
            shape = plan.output_shape
            strides = y.stride()

            def fn():
                return conv3d.conv3d(x, w, b, 1, 1, target=target)

            total = loop_us(fn)
            pieces = {
                "signature + lookup": loop_us(
                    lambda: _hit.signatures.get(signature_of(x, w, b, target))),
                "3 x data_ptr()": loop_us(lambda: (x.data_ptr(), w.data_ptr(),
                                                   b.data_ptr())),
                "output allocation + data_ptr()": loop_us(lambda: plan.empty().data_ptr()),
                "stream query": loop_us(plan.stream) if plan.gpu else 0.0,
                "conv3d_run_packed (C call alone)": loop_us(
                    lambda: lib.conv3d_run_packed(ref)),
            }
            c_run = loop_us(lambda: lib.conv3d_run(
                plan.handle, ptrs[0], ptrs[1], ptrs[2], None, amax, ptrs[3], stream, error,
                len(error)))
            alternatives = {
                "torch.empty_strided": loop_us(lambda: torch.empty_strided(
                    shape, strides, dtype=x.dtype, device=x.device)),
                "x.new_empty_strided": loop_us(lambda: x.new_empty_strided(shape, strides)),
            }
            rest = total - sum(pieces.values())
            print("  %s (target=%s): conv3d.conv3d hit %.1f us/call in a loop, %.1f us "
                  "into an idle GPU; GPU time %.1f us/call"
                  % (plan.target, target, total, idle_us(fn), gpu_us(fn)))
            for name, us in pieces.items():
                print("    %-36s %5.2f us" % (name, us))
            print("    %-36s %5.2f us" % ("the rest (the package's Python)", rest))
            print("    (for comparison: conv3d_run, ten ctypes arguments, %.2f us; %s)"
                  % (c_run, ", ".join("%s %.2f us" % item for item in alternatives.items())))
            totals[target] = total
    return totals


def main():
    dev = conv3d.cuda_device()
    print("device %d: %s, cc %d.%d; torch %s, cuDNN %s; conv3d %s (%s)" % (
        dev.ordinal, dev.name.decode(), dev.cc_major, dev.cc_minor, torch.__version__,
        torch.backends.cudnn.version(), conv3d.__version__, conv3d.library_path()))
    x, w, b = operands()
    b16 = b.bfloat16()
    with torch.no_grad():
        ours = conv3d.conv3d(x, w, b, 1, 1)
        ref = F.conv3d(x.float(), w.float(), b, 1, 1)
        err = ((ours.double() - ref.double()).norm() / ref.double().norm()).item()
        hit = loop_us(lambda: conv3d.conv3d(x, w, b, 1, 1))
        hit_idle = idle_us(lambda: conv3d.conv3d(x, w, b, 1, 1))
        cudnn = loop_us(lambda: F.conv3d(x, w, b16, 1, 1))
        cudnn_idle = idle_us(lambda: F.conv3d(x, w, b16, 1, 1))
        gpu_ours = gpu_us(lambda: conv3d.conv3d(x, w, b, 1, 1))
        gpu_cudnn = gpu_us(lambda: F.conv3d(x, w, b16, 1, 1))
    print("result against float32 cuDNN: rel_l2 %.2e" % err)
    print("host us/call, loop | idle GPU: conv3d.conv3d (hit path) %.1f | %.1f; "
          "F.conv3d (cuDNN) %.1f | %.1f; GPU us/call: ours %.1f, cuDNN %.1f"
          % (hit, hit_idle, cudnn, cudnn_idle, gpu_ours, gpu_cudnn))
    breakdown(x, w, b)
    ok = hit < LIMIT_US and err < 4e-3
    print("%s conv3d.conv3d hit path < %.0f us per call: %.1f us (cuDNN %.1f us)"
          % ("PASS" if ok else "FAIL", LIMIT_US, hit, cudnn))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
