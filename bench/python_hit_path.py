#!/usr/bin/env python3
"""Host time per conv3d.conv3d call on a seen signature (the hit path), in
several fresh processes: the median and the spread, and the machine.

One process's figure is not to be trusted alone: on the H100 machine the
same call measured 19.2 us in one process and 14.5 us in another. This
script starts --processes fresh Python processes one after the other, each
measuring every case (--rounds interleaved rounds, the best of each), and
prints each process's figures, then per case the median, min and max over
the processes.

With a CUDA device (PyTorch importable and a GPU present), each case is
timed behind a busy GPU, as scripts/gpu/hit_path.py does: the best of
bursts of 100 calls enqueued behind torch.cuda._sleep, so that neither side
waits for the other (a burst the sleep did not outlast, or one that took
most of it, is left out and counted), on a
small bf16 convolution (1x64x2x8x8 channels_last_3d, 64 3x3x3 filters,
bias, padding 1; sm90 on an H100):
  conv3d.conv3d (PyTorch tensors), conv3d.torch.conv3d (eager, no_grad),
  a conv3d.torch.Conv3d module, F.conv3d (cuDNN), torch.relu on the input
  (a one-kernel PyTorch op, for scale: the machine's speed at the moment;
  on the H100 machine every figure, cuDNN's too, swings by up to ~45%
  between processes), the pure-Python hit path beside the C one when the
  extension is loaded, and CuPy arrays through
  conv3d.conv3d when CuPy is importable;
  and the hit's pieces: the C call alone (conv3d_run_packed, busy GPU), the
  output allocation, the signature and lookup.
The limit (the issue's: < 15 us host time per call on a cached kernel) is
checked on every process's conv3d.conv3d and conv3d.torch.conv3d figures:
PASS only when the largest is below it. The exit status is 1 on FAIL.

Without one, the CPU target: a tiny convolution (1x4x1x2x2, 1x1x1 window)
on NumPy arrays (and PyTorch CPU tensors when importable), plain loops, so
that the figures are the package's per-call work: the hit path, with out=,
with 3-tuple arguments, a generic DLPack producer's hit with out= (NumPy
behind __dlpack__ only), and the C call alone.

  PYTHONPATH=python CONV3D_LIB=build/lib/libConv3d.so \\
      python3 bench/python_hit_path.py [--processes 5] [--rounds N] [--calls N]
  # GPU machine (after scripts/gpu/stage.sh): source scripts/gpu/env.sh; then the same.

--cpus 0,8 runs one process pinned to each listed CPU instead (to compare
CPUs near the GPU with far ones; the GPU's local CPUs are printed).
"""

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIMIT_US = 15.0
CHECKED = ("conv3d.conv3d (torch, hit)", "conv3d.torch.conv3d (eager)")


# The child: one process's measurements ---------------------------------------


def best_us(cases, rounds, calls, clock=time.perf_counter):
    """The best per-call time of each case over `rounds` interleaved rounds
    of plain loops."""
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


class DLPackOnly:
    """A generic DLPack producer: a NumPy array seen only through DLPack."""

    def __init__(self, a):
        self.a = a

    def __dlpack__(self, stream=None):
        return self.a.__dlpack__()

    def __dlpack_device__(self):
        return self.a.__dlpack_device__()


def cpu_child(args):
    import numpy as np
    import conv3d
    from conv3d import _hit

    def channels_last(a):
        return np.ascontiguousarray(a.transpose(0, 2, 3, 4, 1)).transpose(0, 4, 1, 2, 3)

    rng = np.random.default_rng(0)
    x = channels_last(rng.standard_normal((1, 4, 1, 2, 2)).astype(np.float32))
    w = channels_last(rng.standard_normal((4, 4, 1, 1, 1)).astype(np.float32))
    b = rng.standard_normal(4).astype(np.float32)
    conv3d.clear_cache()
    y = conv3d.conv3d(x, w, b)
    (entry,) = _hit.signatures.values()
    handle, empty = entry[2], entry[4]
    packed = _hit.pack_run_args(handle, x.ctypes.data, w.ctypes.data, b.ctypes.data, 0,
                                y.ctypes.data, 0)
    run = _hit.run_packed
    ydl = DLPackOnly(np.empty_like(y))
    xdl, wdl, bdl = DLPackOnly(x), DLPackOnly(w), DLPackOnly(b)
    cases = {
        "numpy: conv3d.conv3d (hit)": lambda: conv3d.conv3d(x, w, b),
        "numpy: conv3d.conv3d(out=) (hit)": lambda: conv3d.conv3d(x, w, b, out=y),
        "numpy: conv3d.conv3d, 3-tuples (hit)": lambda: conv3d.conv3d(
            x, w, b, (1, 1, 1), (0, 0, 0), (1, 1, 1)),
        "DLPack producer, out= (hit)": lambda: conv3d.conv3d(
            xdl, wdl, bdl, out=ydl),
        "  conv3d_run_packed (the C call alone)": lambda: run(packed),
        "  output allocation (numpy.empty)": empty,
    }
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None:
        tx, tw, tb, ty = (torch.from_numpy(a) for a in (x, w, b, y))
        cases["torch (cpu): conv3d.conv3d (hit)"] = lambda: conv3d.conv3d(tx, tw, tb)
        cases["torch (cpu): conv3d.conv3d(out=) (hit)"] = lambda: conv3d.conv3d(
            tx, tw, tb, out=ty)
    clock = time.thread_time if args.cpu_time else time.perf_counter
    return {"mode": "cpu", "us": best_us(cases, args.rounds, args.calls, clock)}


def gpu_child(args):
    sys.path.insert(0, os.path.join(ROOT, "scripts", "gpu"))
    import torch
    import torch.nn.functional as F
    import hit_path  # scripts/gpu/hit_path.py: busy_us, operands
    import conv3d
    import conv3d.torch as ct
    from conv3d import _hit

    x, w, b = hit_path.operands()
    b16 = b.bfloat16()
    layer = ct.Conv3d(64, 64, 3, padding=1, device="cuda", dtype=torch.bfloat16)
    with torch.no_grad():
        y = conv3d.conv3d(x, w, b, 1, 1)
        ref = F.conv3d(x.float(), w.float(), b, 1, 1)
        err = ((y.double() - ref.double()).norm() / ref.double().norm()).item()
        cases = {
            CHECKED[0]: lambda: conv3d.conv3d(x, w, b, 1, 1),
            CHECKED[1]: lambda: ct.conv3d(x, w, b, 1, 1),
            "conv3d.torch.Conv3d module": lambda: layer(x),
            "F.conv3d (cuDNN)": lambda: F.conv3d(x, w, b16, 1, 1),
            # A one-kernel PyTorch op (allocation and launch): what any op
            # costs on this machine at the moment, for scale.
            "  torch.relu(input) (reference)": lambda: torch.relu(x),
        }
        # The pieces need this package's entries (CONV3D_PYTHON may name an
        # older package: then the totals alone).
        pieces = {}
        if hasattr(_hit, "pack_run_args"):
            entry = _hit.signatures[_hit.torch_signature(x, w, b, None, None, 1, 1, 1, 1,
                                                         None, "auto")]
            handle, empty, stream = entry[2], entry[4], entry[5]
            packed = _hit.pack_run_args(handle, x.data_ptr(), w.data_ptr(), b.data_ptr(), 0,
                                        y.data_ptr(), stream() or 1)
            run = _hit.run_packed
            cases["  conv3d_run_packed alone"] = lambda: run(packed)
            if _hit.paths.get(torch.Tensor) not in (None, _hit._torch_conv3d):
                # The other hit paths, in the same process (the pure-Python
                # one has its own signatures and entries).
                cases["  pure-Python hit (_hit._torch_conv3d)"] = lambda: _hit._torch_conv3d(
                    x, w, b, 1, 1, 1, 1, None, None, None, "auto")
                c_module = _hit.extension()
                if _hit._native is not None and c_module is not None:
                    cases["  C hit (_conv3d_hit.torch_conv3d)"] = lambda: c_module.torch_conv3d(
                        x, w, b, 1, 1, 1, 1, None, None, None, "auto")
            pieces = {
                "  output allocation (the entry's)": empty,
                "  signature + lookup": lambda: _hit.signatures.get(_hit.torch_signature(
                    x, w, b, None, None, 1, 1, 1, 1, None, "auto")),
                "  stream query": stream,
            }
        try:
            import cupy
            cupy.cuda.runtime.getDevice()
        except Exception:  # noqa: BLE001 - not installed, or unusable here
            cupy = None
        if cupy is not None:
            cx, cw, cb = (cupy.asarray(t) for t in (x.float(), w.float(), b))
            cx = cupy.ascontiguousarray(cx.transpose(0, 2, 3, 4, 1)).transpose(
                0, 4, 1, 2, 3)
            cw = cupy.ascontiguousarray(cw.transpose(0, 2, 3, 4, 1)).transpose(
                0, 4, 1, 2, 3)
            cx, cw = cx.astype(cupy.float16), cw.astype(cupy.float16)
            cases["conv3d.conv3d (CuPy, hit)"] = lambda: conv3d.conv3d(cx, cw, cb, 1, 1)
        us, gpu = {}, {}
        # Interleaved: every case once per round, the best burst of each.
        for _ in range(args.rounds):
            for name, fn in cases.items():
                host, g = hit_path.busy_us(fn, rounds=2)
                us[name] = min(us.get(name, host), host)
                gpu[name] = min(gpu.get(name, g), g)
        us.update({name: hit_path.cpu_us(fn) for name, fn in pieces.items()})
        # After the timing, apart from it: how many output addresses each
        # PyTorch case's busy-GPU bursts got. A new address means new TMA
        # maps (sm90), uploaded behind the busy GPU: the calls of a burst
        # that meet one take the runtime's slower path until it lands.
        addresses = {}
        for name in CHECKED + ("conv3d.torch.Conv3d module",):
            seen = addresses[name] = set()
            hit_path.busy_us(lambda fn=cases[name], seen=seen: seen.add(fn().data_ptr()),
                             rounds=2)
        addresses = {name: len(seen) for name, seen in addresses.items()}
    dev = conv3d.cuda_device()
    target = "sm90" if (dev.cc_major, dev.cc_minor) == (9, 0) else "sm80"
    return {"mode": "gpu", "us": us, "gpu_us": gpu, "rel_l2": err, "target": target,
            "addresses": addresses, "skipped": dict(hit_path.skipped),
            "hit_path": "torch-native" if getattr(_hit, "_native", None) is not None
            else "C" if _hit.paths.get(torch.Tensor) not in (None, _hit._torch_conv3d)
            else "pure Python (%s)" % _hit.extension_status,
            "device": dev.name.decode(), "torch": torch.__version__,
            "cudnn": torch.backends.cudnn.version(), "cupy": getattr(cupy, "__version__", None)}


def child(args):
    if args.cpu is not None:
        os.sched_setaffinity(0, {args.cpu})
    try:
        import torch
        gpu = torch.cuda.is_available()
    except ImportError:
        gpu = False
    result = gpu_child(args) if gpu and not args.cpu_target else cpu_child(args)
    result["cpu"] = _current_cpu()
    result["pid"] = os.getpid()
    print("RESULT " + json.dumps(result))


def _current_cpu():
    try:
        with open("/proc/self/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[36])
    except (OSError, IndexError, ValueError):
        return -1


# The parent: fresh processes, the median and spread --------------------------


def machine():
    lines = []
    model = "?"
    try:
        with open("/proc/cpuinfo") as f:
            model = next(l.split(":", 1)[1].strip() for l in f if l.startswith("model name"))
    except (OSError, StopIteration):
        pass
    lines.append("host: %s, %s, %d CPUs (%d allowed), load average %s; Python %s" % (
        platform.node(), model, os.cpu_count(), len(os.sched_getaffinity(0)),
        ", ".join("%.1f" % v for v in os.getloadavg()), platform.python_version()))
    try:
        smi = subprocess.run(["nvidia-smi", "--query-gpu=name,pci.bus_id,driver_version,"
                              "clocks.sm", "--format=csv,noheader"], capture_output=True,
                             text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        smi = ""
    for line in smi.splitlines():
        fields = [f.strip() for f in line.split(",")]
        local = "?"
        if len(fields) > 1:
            bus = fields[1].lower()
            bus = bus[4:] if bus.count(":") == 2 and len(bus.split(":")[0]) == 8 else bus
            try:
                with open("/sys/bus/pci/devices/%s/local_cpulist" % bus) as f:
                    local = f.read().strip()
            except OSError:
                pass
        lines.append("GPU: %s; CPUs local to it: %s" % (line, local))
    return lines


def run_children(args):
    runs = []
    plan = [None] * args.processes if args.cpus is None else [
        int(c) for c in args.cpus.split(",")]
    for cpu in plan:
        command = [sys.executable, os.path.abspath(__file__), "--child",
                   "--rounds", str(args.rounds), "--calls", str(args.calls)]
        if cpu is not None:
            command += ["--cpu", str(cpu)]
        if args.cpu_time:
            command.append("--cpu-time")
        if args.cpu_target:
            command.append("--cpu-target")
        done = subprocess.run(command, capture_output=True, text=True)
        result = [l for l in done.stdout.splitlines() if l.startswith("RESULT ")]
        if done.returncode or not result:
            sys.stderr.write(done.stdout + done.stderr)
            raise SystemExit("python_hit_path.py: a measuring process failed (status %d)"
                             % done.returncode)
        runs.append(json.loads(result[-1][len("RESULT "):]))
    return runs


def report(runs):
    names = list(runs[0]["us"])
    print("per process (host us per call; %s):" % (
        "best burst behind a busy GPU" if runs[0]["mode"] == "gpu" else "best loop"))
    print("  %-42s %s" % ("", " ".join("%8s" % ("cpu%d" % r["cpu"]) for r in runs)))
    for name in names:
        print("  %-42s %s" % (name, " ".join("%8.2f" % r["us"][name] for r in runs)))
    print("over %d processes:          median      min      max" % len(runs))
    for name in names:
        values = [r["us"][name] for r in runs]
        print("  %-42s %8.2f %8.2f %8.2f" % (name, statistics.median(values), min(values),
                                             max(values)))
    if runs[0]["mode"] != "gpu":
        return 0
    first = runs[0]
    print("GPU time per call (conv3d.conv3d's kernel): %.2f us; rel_l2 vs float32 cuDNN "
          "%.2e; target %s; %s, torch %s, cuDNN %s, CuPy %s" % (
              statistics.median(r["gpu_us"][CHECKED[0]] for r in runs), first["rel_l2"],
              first["target"], first["device"], first["torch"], first["cudnn"],
              first["cupy"]))
    print("  hit path per process: %s" % ", ".join(r.get("hit_path", "?") for r in runs))
    print("  busy-GPU bursts left out per process: %s" % "; ".join(
        ", ".join("%s %d" % (why, n) for why, n in r["skipped"].items()) for r in runs))
    for name in runs[0]["addresses"]:
        print("  output addresses over 2 bursts, %s: %s" % (
            name, " ".join(str(r["addresses"][name]) for r in runs)))
    ok = True
    for name in CHECKED:
        values = [r["us"][name] for r in runs]
        passed = max(values) < LIMIT_US
        ok = ok and passed
        print("%s %s < %.0f us host time per call in every process: median %.2f, max %.2f "
              "us over %d processes" % ("PASS" if passed else "FAIL", name, LIMIT_US,
                                        statistics.median(values), max(values), len(runs)))
    ok = ok and all(r["rel_l2"] < 4e-3 for r in runs)
    return 0 if ok else 1


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--processes", type=int, default=5)
    parser.add_argument("--cpus", help="one process pinned to each of these CPUs "
                        "(comma-separated) instead of --processes unpinned ones")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls", type=int, default=3000,
                        help="calls per loop (CPU target; GPU bursts are 100 calls)")
    parser.add_argument("--cpu-time", action="store_true",
                        help="CPU target: time with the thread's CPU time instead of "
                        "the wall clock (steadier on a loaded machine)")
    parser.add_argument("--cpu-target", action="store_true",
                        help="measure the CPU target even where a GPU is present")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--cpu", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        # CONV3D_PYTHON=DIR: another conv3d package (as scripts/gpu/hit_path.py).
        sys.path.insert(0, os.environ.get("CONV3D_PYTHON") or os.path.join(ROOT, "python"))
        return child(args)
    for line in machine():
        print(line)
    return report(run_children(args))


if __name__ == "__main__":
    sys.exit(main())
