#!/usr/bin/env python3
"""conv3d.conv3d's hit path on the GPU: host time per call next to cuDNN.

Run on the GPU machine by `scripts/gpu/run.sh overhead` (after
conv3d-host-overhead, the C++ side). A small bf16 convolution
(1x64x2x8x8 channels_last_3d input, 64 3x3x3 filters, bias, padding 1),
for target=auto (sm90 on an H100) and target=sm80. What is measured:

  - busy GPU (the figure the issue's limit is checked on): the host time
    per call of bursts of 100 calls enqueued behind torch.cuda._sleep, so
    that the GPU never waits for the host and the host never waits for the
    GPU (no queue back-pressure: a burst that ends after the sleep, or that
    takes most of it, is left out and counted; an error if none counts).
    The GPU time per call of
    the queued burst (events after the sleep) is printed beside it: it is
    the kernels' own time, what a back-to-back loop cannot go below.
  - loop: back-to-back calls (what a model's forward pays; GPU-bound when
    the GPU time per call is not below it).
  - idle GPU: the host latency of one call after synchronizing.
  - the hit path's pieces, each timed alone (plain loops for pure host
    work, busy-GPU bursts for the C call, which launches): the signature
    and lookup (_hit.torch_signature, the function the hit path calls), the
    data_ptr() reads, the output allocation (the plan's, and alternatives
    for comparison), the stream query, conv3d_run_packed alone; and what
    each tensor attribute the signature reads costs.

Prints PASS/FAIL for the issue's limit (conv3d.conv3d < 15 us host time per
call with a busy GPU) and the result's accuracy; the exit status is 1 if
it failed. scripts/gpu/torch_check.py step 6 calls breakdown() too. The CPU
counterpart: bench/python_hit_path.py.

CONV3D_PYTHON=DIR times the conv3d package in DIR instead of this tree's
python/ (e.g. another branch's, for a before/after comparison on the same
machine; the breakdown is skipped when that package has no
_hit.pack_run_args). Several fresh processes, with the median and spread:
bench/python_hit_path.py --processes N.
"""

import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.environ.get("CONV3D_PYTHON") or os.path.join(ROOT, "python"))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import conv3d  # noqa: E402
from conv3d import _hit  # noqa: E402

LIMIT_US = 15.0
BURST = 100
SPIN_MS = 20.0


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


_cycles_per_ms = None


def _spin_cycles(ms):
    """torch.cuda._sleep's argument for about `ms` milliseconds."""
    global _cycles_per_ms
    if _cycles_per_ms is None:
        begin = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        torch.cuda._sleep(1000)
        begin.record()
        torch.cuda._sleep(10_000_000)
        end.record()
        end.synchronize()
        _cycles_per_ms = 10_000_000 / max(begin.elapsed_time(end), 1e-3)
    return int(ms * _cycles_per_ms)


# Bursts busy_us left out, by reason (see there); reported by the callers.
skipped = {"the sleep ended before the burst": 0, "the burst outlasted 80% of the sleep": 0}


def busy_us(fn, rounds=10, burst=BURST, spin_ms=SPIN_MS):
    """(host us per call, GPU us per call): the best over `rounds` bursts of
    `burst` calls enqueued behind a GPU sleep of `spin_ms`. A burst is left
    out (counted in `skipped`) when the GPU was no longer asleep when it
    ended (its event after the sleep had completed: the calls may have
    waited for the GPU) or when it took 80% of the sleep (a stall of the
    process, such as a garbage collection); RuntimeError when no burst of
    2 * `rounds` counts."""
    cycles = _spin_cycles(spin_ms)
    begin = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    for _ in range(20):
        fn()
    host = gpu = float("inf")
    counted = attempts = 0
    while counted < rounds and attempts < 2 * rounds:
        attempts += 1
        torch.cuda.synchronize()
        torch.cuda._sleep(cycles)
        begin.record()
        start = time.perf_counter()
        for _ in range(burst):
            fn()
        stop = time.perf_counter()
        asleep = not begin.query()
        end.record()
        end.synchronize()
        if not asleep:
            skipped["the sleep ended before the burst"] += 1
            continue
        if stop - start >= 0.8 * spin_ms * 1e-3:
            skipped["the burst outlasted 80% of the sleep"] += 1
            continue
        counted += 1
        host = min(host, (stop - start) / burst * 1e6)
        gpu = min(gpu, begin.elapsed_time(end) / burst * 1e3)
    if not counted:
        raise RuntimeError("no burst of %d calls was enqueued behind the GPU sleep of %.0f "
                           "us in %d attempts (%s)" % (burst, spin_ms * 1e3, attempts,
                                                       skipped))
    return host, gpu


def cpu_us(fn, calls=20000, rounds=5):
    """The best per-call time of host-only work (no GPU involved)."""
    for _ in range(calls // 10):
        fn()
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        best = min(best, (time.perf_counter() - start) / calls * 1e6)
    return best


def operands(spatial=(2, 8, 8), window=(3, 3, 3)):
    x = torch.randn(1, 64, *spatial, device="cuda").bfloat16().contiguous(
        memory_format=torch.channels_last_3d)
    w = (torch.randn(64, 64, *window, device="cuda") / 40).bfloat16().contiguous(
        memory_format=torch.channels_last_3d)
    b = torch.randn(64, device="cuda")
    return x, w, b


def compare(x, w, b, padding):
    """conv3d.conv3d and F.conv3d on one convolution: the error against
    float32 cuDNN, and the host us per call (busy GPU, loop, idle GPU) and
    GPU us per call of each."""
    b16 = b.bfloat16()

    def ours():
        return conv3d.conv3d(x, w, b, 1, padding)

    def cudnn():
        return F.conv3d(x, w, b16, 1, padding)

    import conv3d.torch as ct

    def op_eager():
        return ct.conv3d(x, w, b, 1, padding)

    with torch.no_grad():
        result = ours()
        ref = F.conv3d(x.float(), w.float(), b, 1, padding)
        err = ((result.double() - ref.double()).norm() / ref.double().norm()).item()
        rows = {}
        for name, fn in (("conv3d.conv3d (hit)", ours),
                         ("conv3d.torch.conv3d", op_eager), ("F.conv3d (cuDNN)", cudnn)):
            host, gpu = busy_us(fn)
            rows[name] = (host, loop_us(fn), idle_us(fn), gpu)
    return err, rows


def attribute_costs(t):
    """What reading each attribute of a CUDA tensor costs on this machine."""
    costs = {
        "(nothing: the loop's own cost)": cpu_us(lambda: t),
        "type(t)": cpu_us(lambda: type(t)),
        "t.dtype": cpu_us(lambda: t.dtype),
        "t.layout": cpu_us(lambda: t.layout),
        "t.device": cpu_us(lambda: t.device),
        "t.shape": cpu_us(lambda: t.shape),
        "t.stride()": cpu_us(lambda: t.stride()),
        "t.data_ptr()": cpu_us(lambda: t.data_ptr()),
        "t.is_cuda": cpu_us(lambda: t.is_cuda),
        "t.get_device()": cpu_us(lambda: t.get_device()),
    }
    return costs


def breakdown(x, w, b, targets=("auto", "sm80")):
    """Where conv3d.conv3d's host time goes on a hit; returns {target: us}
    (the busy-GPU host time per call)."""
    totals = {}
    if not hasattr(_hit, "pack_run_args"):
        print("  (no breakdown: %s has no _hit.pack_run_args)" % conv3d.__file__)
        return totals
    with torch.no_grad():
        for target in targets:
            conv3d.clear_cache()
            y = conv3d.conv3d(x, w, b, 1, 1, target=target)
            key = _hit.torch_signature(x, w, b, None, None, 1, 1, 1, 1, None, target)
            entry = _hit.signatures.get(key)
            if entry is None:
                print("  _hit.torch_signature does not find the entry the call made")
                return totals
            plan, handle, empty, stream = entry[0], entry[2], entry[4], entry[5]
            pack, run = _hit.pack_run_args, _hit.run_packed
            x_ptr, w_ptr, b_ptr, y_ptr = x.data_ptr(), w.data_ptr(), b.data_ptr(), y.data_ptr()
            packed = pack(handle, x_ptr, w_ptr, b_ptr, 0, y_ptr, stream() or 1)
            shape, strides = plan.output_shape, y.stride()
            nd_shape = (shape[0], shape[2], shape[3], shape[4], shape[1])

            def fn():
                return conv3d.conv3d(x, w, b, 1, 1, target=target)

            host, gpu = busy_us(fn)
            c_host, c_gpu = busy_us(lambda: run(packed))
            pieces = {
                "signature + lookup": cpu_us(lambda: _hit.signatures.get(
                    _hit.torch_signature(x, w, b, None, None, 1, 1, 1, 1, None, target))),
                "3 x data_ptr()": cpu_us(lambda: (x.data_ptr(), w.data_ptr(),
                                                  b.data_ptr())),
                "output allocation (the entry's)": cpu_us(empty),
                "stream query": cpu_us(stream),
                "packing the C call's record": cpu_us(
                    lambda: pack(handle, x_ptr, w_ptr, b_ptr, 0, y_ptr, 1)),
                "conv3d_run_packed (busy GPU)": c_host,
            }
            alternatives = {
                "torch.empty(memory_format=channels_last_3d)": lambda: torch.empty(
                    shape, dtype=x.dtype, device=x.device,
                    memory_format=torch.channels_last_3d),
                "torch.empty_strided": lambda: torch.empty_strided(
                    shape, strides, dtype=x.dtype, device=x.device),
                "x.new_empty_strided": lambda: x.new_empty_strided(shape, strides),
                "torch.empty_like(an output)": lambda: torch.empty_like(y),
                "x.new_empty(NDHWC).permute": lambda: x.new_empty(nd_shape).permute(
                    0, 4, 1, 2, 3),
            }
            rest = host - sum(pieces.values())
            print("  %s (target=%s): conv3d.conv3d hit, host us/call: %.2f with a busy "
                  "GPU (its kernel: %.2f us of GPU time), %.2f in a loop, %.2f into an "
                  "idle GPU" % (plan.target, target, host, gpu, loop_us(fn), idle_us(fn)))
            for name, us in pieces.items():
                print("    %-44s %6.2f us" % (name, us))
            c_path = _hit.paths.get(torch.Tensor) not in (None, _hit._torch_conv3d)
            print("    %-44s %6.2f us" % (
                "the rest (C hit path; pieces timed from Python)" if c_path
                else "the rest (the package's Python)", rest))
            if c_path:
                print("    %-44s %6.2f us" % ("the pure-Python hit path, whole call", busy_us(
                    lambda: _hit._torch_conv3d(x, w, b, 1, 1, 1, 1, None, None, None,
                                               target))[0]))
            print("    the C call's kernel: %.2f us of GPU time per call" % c_gpu)
            # Diagnostics of a busy-GPU figure above its pieces' sum (seen
            # on sm90 only, in a process that had run much else): with the
            # output given (one address, no allocation), and how many output
            # addresses the allocating calls of the bursts got (a new one
            # means new TMA maps, uploaded behind the busy GPU).
            given = torch.empty_like(y)
            out_host = busy_us(lambda: conv3d.conv3d(x, w, b, 1, 1, target=target,
                                                     out=given))[0]
            addresses = set()

            def allocating():
                result = conv3d.conv3d(x, w, b, 1, 1, target=target)
                addresses.add(result.data_ptr())
                return result

            busy_us(allocating)
            print("    with out= (no allocation, one address): %.2f us; output addresses "
                  "over the allocating bursts: %d" % (out_host, len(addresses)))
            print("    output allocation alternatives (host us, allocation + free):")
            for name, alloc in alternatives.items():
                print("      %-42s %6.2f us" % (name, cpu_us(alloc)))
            totals[target] = host
        print("    tensor attributes (host us, the loop's own cost included):")
        for name, us in attribute_costs(x).items():
            print("      %-42s %6.3f us" % (name, us))
    return totals


def _current_cpu():
    try:
        with open("/proc/self/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[36]
    except (OSError, IndexError):
        return "?"


def main():
    dev = conv3d.cuda_device()
    print("device %d: %s, cc %d.%d; torch %s, cuDNN %s; conv3d %s (%s, %s)" % (
        dev.ordinal, dev.name.decode(), dev.cc_major, dev.cc_minor, torch.__version__,
        torch.backends.cudnn.version(), conv3d.__version__, conv3d.__file__,
        conv3d.library_path()))
    x, w, b = operands()
    err, rows = compare(x, w, b, 1)
    print("1x64x2x8x8 input, 64 3x3x3 filters, padding 1: rel_l2 %.2e against float32 "
          "cuDNN" % err)
    print("  host us/call                busy GPU |  loop | idle GPU   (GPU us/call)")
    for name, (host, loop, idle, gpu) in rows.items():
        print("  %-26s %9.2f | %5.2f | %8.2f   (%.2f)" % (name, host, loop, idle, gpu))
    hit, hit_loop, _, hit_gpu = rows["conv3d.conv3d (hit)"]
    theirs = rows["F.conv3d (cuDNN)"][0]
    # A pointwise convolution of 16 pixels: little GPU time, so that the
    # back-to-back loop is bound by the host as well.
    tiny_err, tiny_rows = compare(*operands((1, 4, 4), (1, 1, 1)), 0)
    print("1x64x1x4x4 input, 64 1x1x1 filters: rel_l2 %.2e" % tiny_err)
    for name, (host, loop, idle, gpu) in tiny_rows.items():
        print("  %-26s %9.2f | %5.2f | %8.2f   (%.2f)" % (name, host, loop, idle, gpu))
    err = max(err, tiny_err)
    breakdown(x, w, b)
    # Again at the end, in this now warmed-up process: the same figure
    # differed by several us between processes (torch_check step 6 against
    # this script); the spread within one process says how far to trust it.
    conv3d.clear_cache()
    with torch.no_grad():
        again = [busy_us(lambda: conv3d.conv3d(x, w, b, 1, 1))[0] for _ in range(3)]
    print("conv3d.conv3d (hit) again after the breakdown, busy GPU: %s us"
          % ", ".join("%.2f" % us for us in again))
    print("busy-GPU bursts left out: %s" % skipped)
    print("this process: pid %d, on CPU %s of %d allowed, load average %s"
          % (os.getpid(), _current_cpu(), len(os.sched_getaffinity(0)),
             ", ".join("%.1f" % v for v in os.getloadavg())))
    ok = hit < LIMIT_US and err < 4e-3
    print("%s conv3d.conv3d hit path < %.0f us host time per call (busy GPU): %.2f us "
          "(cuDNN %.2f us; back-to-back loop %.2f us, GPU time %.2f us per call)"
          % ("PASS" if ok else "FAIL", LIMIT_US, hit, theirs, hit_loop, hit_gpu))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
