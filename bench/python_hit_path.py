#!/usr/bin/env python3
"""Host time per conv3d.conv3d call on a seen signature (the hit path), CPU target.

A tiny convolution (1x4x1x2x2 input, 1x1x1 window), so the loop measures
the package's per-call work: NumPy arrays always, PyTorch CPU tensors when
PyTorch is importable. Each figure is the best of several interleaved rounds
of many calls (the minimum is the least disturbed by other processes).

Printed: the hit path (conv3d.conv3d, also with out= and with 3-tuple
arguments); the general route every call took before the hit path
(ArrayViews, the plan table, the checks: what CuPy and generic DLPack arrays
still take); the floor, the C API call alone (conv3d_run with the same plan
and addresses, which includes the CPU kernel); and the hit path's pieces,
timed as replicas of its steps: the signature and lookup, the addresses,
the output allocation. The GPU counterpart, with cuDNN beside it, is
scripts/gpu/hit_path.py (`scripts/gpu/run.sh overhead`).

  PYTHONPATH=python CONV3D_LIB=build/lib/libConv3d.so \\
      python3 bench/python_hit_path.py [--rounds N] [--calls N]
"""

import argparse
import ctypes
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))

import numpy as np  # noqa: E402

import conv3d  # noqa: E402
from conv3d import _arrays, _functional, _hit  # noqa: E402


def best_us(cases, rounds, calls, clock=time.perf_counter):
    """The best per-call time of each case over `rounds` interleaved rounds."""
    best = dict.fromkeys(cases, float("inf"))
    for fn in cases.values():
        for _ in range(calls // 10 + 1):
            fn()
    for _ in range(rounds):
        for name, fn in cases.items():
            start = clock()
            for _ in range(calls):
                fn()
            best[name] = min(best[name], (clock() - start) / calls * 1e6)
    return best


def channels_last(a):
    return np.ascontiguousarray(a.transpose(0, 2, 3, 4, 1)).transpose(0, 4, 1, 2, 3)


def general_route(x, w, b):
    """conv3d.conv3d without the hit path."""
    plan, views = _functional._checked_plan(x, w, b, None, None, 1, 0, 1, 1, None, "auto")
    return _functional._run_views(plan, x, w, b, None, None, views)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--calls", type=int, default=5000)
    parser.add_argument("--cpu-time", action="store_true",
                        help="time with this thread's CPU time instead of the wall clock "
                        "(steadier on a loaded machine; the kernel's own threads, if any, "
                        "are not counted)")
    args = parser.parse_args()

    rng = np.random.default_rng(0)
    x = channels_last(rng.standard_normal((1, 4, 1, 2, 2)).astype(np.float32))
    w = channels_last(rng.standard_normal((4, 4, 1, 1, 1)).astype(np.float32))
    b = rng.standard_normal(4).astype(np.float32)
    conv3d.clear_cache()
    y = conv3d.conv3d(x, w, b)
    (plan,) = _hit.signatures.values()
    lib = conv3d._library()
    error = ctypes.create_string_buffer(4096)
    amax = ctypes.c_float(0.0)
    ptrs = (x.ctypes.data, w.ctypes.data, b.ctypes.data, y.ctypes.data)
    signatures = _hit.signatures
    address = _arrays.numpy_address
    cases = {
        "numpy: conv3d.conv3d (hit)": lambda: conv3d.conv3d(x, w, b),
        "numpy: conv3d.conv3d(out=) (hit)": lambda: conv3d.conv3d(x, w, b, out=y),
        "numpy: conv3d.conv3d, 3-tuples (hit)": lambda: conv3d.conv3d(
            x, w, b, (1, 1, 1), (0, 0, 0), (1, 1, 1)),
        "numpy: general route (no hit path)": lambda: general_route(x, w, b),
        "  conv3d_run (C API alone)": lambda: lib.conv3d_run(
            plan.handle, ptrs[0], ptrs[1], ptrs[2], None, amax, ptrs[3], None, error,
            len(error)),
        "  signature + lookup (replica)": lambda: signatures.get((
            (type(x), x.dtype, x.shape, x.strides), (type(w), w.dtype, w.shape, w.strides),
            (type(b), b.dtype, b.shape, b.strides), None, None, (1, 0, 1, 1), None,
            "auto")),
        "  addresses: 3 x numpy_address": lambda: (address(x), address(w), address(b)),
        "  addresses: 3 x .ctypes.data (for scale)": lambda: (
            x.ctypes.data, w.ctypes.data, b.ctypes.data),
        "  output allocation + address": lambda: address(plan.empty()),
    }
    try:
        import torch
    except ImportError:
        torch = None
        print("PyTorch not importable: NumPy only")
    if torch is not None:
        tx, tw, tb, ty = (torch.from_numpy(a) for a in (x, w, b, y))
        shape = tuple(y.shape)
        cases.update({
            "torch (cpu): conv3d.conv3d (hit)": lambda: conv3d.conv3d(tx, tw, tb),
            "torch (cpu): conv3d.conv3d(out=) (hit)": lambda: conv3d.conv3d(tx, tw, tb,
                                                                            out=ty),
            "torch (cpu): general route": lambda: general_route(tx, tw, tb),
            "  torch.empty (channels_last_3d)": lambda: torch.empty(
                shape, dtype=torch.float32, memory_format=torch.channels_last_3d),
        })
    clock = time.thread_time if args.cpu_time else time.perf_counter
    for name, us in best_us(cases, args.rounds, args.calls, clock).items():
        print("%-42s %6.2f us" % (name, us))


if __name__ == "__main__":
    main()
