"""Timing by the benchmarks' rules (bench/RESULTS.md), shared by every
script in bench/: the calls compared run in one process on the same
tensors, interleaved (each repetition runs every call once, in order),
after a warm-up (which also takes compilation and cuDNN's benchmark-mode
search out of the timed calls); on CUDA each call is timed by CUDA events
with the L2 flushed before it (a write of max(2 x L2, 256 MiB), as
triton.testing.do_bench does: the conservative number), on the CPU by the
wall clock; the result is the median over the repetitions.

    timer = Timer(reps=20, warmup=5)                  # flush=False: no flush
    times = timer.interleaved({"ours": ours, "cudnn": cudnn})   # ms per rep
    ms = timer.median(ours)

Imports only PyTorch (any version from 1.13 up)."""

import gc
import statistics
import time

import torch


class Timer:
    """Interleaved timing of zero-argument calls on `device` ("cuda" or
    "cpu"): CUDA events and an L2 flush before every call (unless
    flush=False), or time.perf_counter() on the CPU (no flush)."""

    #: Python's full (generation 2) garbage collections during the last
    #: interleaved() call's timed repetitions (0 unless keep_gc).
    full_collections = 0

    def __init__(self, reps, warmup, flush=True, device="cuda", keep_gc=False):
        if reps < 1 or warmup < 0:
            raise ValueError("reps must be >= 1 and warmup >= 0, got %r and %r"
                             % (reps, warmup))
        if device not in ("cuda", "cpu"):
            raise ValueError("device must be 'cuda' or 'cpu', got %r" % (device,))
        self.reps, self.warmup, self.device = reps, warmup, device
        # Python's garbage collector is off during the timed repetitions, as
        # timeit turns it off: a collection is a pause of the host, and where
        # the GPU has run out of queued work it lands in the interval being
        # timed (bench/RESULTS.md, tenth session). keep_gc=True leaves it on.
        self.keep_gc = keep_gc
        self.flush = None
        if flush and device == "cuda":
            l2 = getattr(torch.cuda.get_device_properties(0), "L2_cache_size", 50 << 20)
            self.flush = torch.empty(max(2 * l2, 256 << 20), dtype=torch.int8, device="cuda")

    @property
    def flush_bytes(self):
        """Bytes written to flush the L2 before each timed call (0: no flush)."""
        return 0 if self.flush is None else self.flush.numel()

    def _sync(self):
        if self.device == "cuda":
            torch.cuda.synchronize()

    def interleaved(self, calls, reps=None, warmup=None):
        """{name: [ms per repetition]} for {name: callable}."""
        reps = reps or self.reps
        for _ in range(self.warmup if warmup is None else warmup):
            for call in calls.values():
                call()
        self._sync()
        # Python's full garbage collections during the timed calls: a pause
        # of the host while the GPU has run out of queued work lands in the
        # interval being timed (bench/RESULTS.md, ninth session: small layers
        # slower only late in a long benchmark process).
        full = gc.get_stats()[2]["collections"]
        collecting = gc.isenabled()
        if not self.keep_gc:
            gc.disable()
        try:
            return self._timed(calls, reps)
        finally:
            if collecting:
                gc.enable()
            self.full_collections = gc.get_stats()[2]["collections"] - full

    def _timed(self, calls, reps):
        if self.device == "cpu":
            times = {name: [] for name in calls}
            for _ in range(reps):
                for name, call in calls.items():
                    start = time.perf_counter()
                    call()
                    times[name].append((time.perf_counter() - start) * 1e3)
            return times
        events = {name: [(torch.cuda.Event(enable_timing=True),
                          torch.cuda.Event(enable_timing=True)) for _ in range(reps)]
                  for name in calls}
        for i in range(reps):
            for name, call in calls.items():
                if self.flush is not None:
                    self.flush.zero_()
                start, end = events[name][i]
                start.record()
                call()
                end.record()
        torch.cuda.synchronize()
        return {name: [s.elapsed_time(e) for s, e in pairs] for name, pairs in events.items()}

    def median(self, call, reps=None, warmup=None):
        """The median milliseconds of one call."""
        return statistics.median(self.interleaved({"call": call}, reps, warmup)["call"])


def add_arguments(parser, reps, warmup):
    """--reps, --warmup (with these defaults), --no-flush and --keep-gc."""
    parser.add_argument("--reps", type=int, default=reps, help="timed calls (the median's)")
    parser.add_argument("--warmup", type=int, default=warmup, help="untimed calls first")
    parser.add_argument("--no-flush", action="store_true",
                        help="do not flush the L2 before each timed call")
    parser.add_argument("--keep-gc", action="store_true",
                        help="leave Python's garbage collector on during the timed calls "
                        "(default: off, as timeit has it)")


def from_arguments(args, device="cuda"):
    """The Timer of add_arguments' flags."""
    return Timer(args.reps, args.warmup, flush=not args.no_flush, device=device,
                 keep_gc=args.keep_gc)


def medians(times):
    """{name: median} of Timer.interleaved's result."""
    return {name: statistics.median(values) for name, values in times.items()}


def rel_l2(out, ref):
    """||out - ref|| / ||ref|| in float64 (inf where out is not finite; the
    plain distance where ref is zero)."""
    out, ref = out.double(), ref.double()
    if not torch.isfinite(out).all():
        return float("inf")
    norm = torch.linalg.vector_norm(ref).item()
    return torch.linalg.vector_norm(out - ref).item() / (norm or 1.0)
