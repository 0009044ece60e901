"""bench/timing.py on the CPU (test/Python/bench-timing.test)."""
import gc
import sys

sys.path.insert(0, sys.argv[1])
import timing  # noqa: E402

timer = timing.Timer(3, 1, device="cpu")
times = timer.interleaved({"a": lambda: sum(range(100)), "b": lambda: None})
assert sorted(times) == ["a", "b"] and all(len(v) == 3 and min(v) >= 0 for v in times.values())
assert set(timing.medians(times)) == {"a", "b"} and timer.median(lambda: None) >= 0
print("cpu timer: %d names x %d reps, flush %d bytes"
      % (len(times), len(times["a"]), timer.flush_bytes))
# Full garbage collections during the timed calls are counted (three
# gc.collect() calls, one a repetition; the warm-up's is not counted).
timer.interleaved({"collect": gc.collect})
print("full collections during 3 timed gc.collect() calls: %d" % timer.full_collections)
assert timer.full_collections >= 3, timer.full_collections
timer.interleaved({"a": lambda: None})
assert timer.full_collections >= 0
# The collector is off during the timed calls (not during the warm-up),
# on again after them; keep_gc leaves it on.
for keep_gc in (False, True):
    seen = []
    timing.Timer(reps=2, warmup=1, device="cpu", keep_gc=keep_gc).interleaved(
        {"seen": lambda: seen.append(gc.isenabled())})
    print("keep_gc=%s: collector on in warm-up, timed calls, after: %s, %s, %s"
          % (keep_gc, seen[0], seen[1:], gc.isenabled()))
for kwargs in (dict(reps=0, warmup=1), dict(reps=1, warmup=0, device="tpu")):
    try:
        timing.Timer(**kwargs)
        print("accepted %r" % (kwargs,))
    except ValueError as error:
        print("refused:", error)
print("BENCH-TIMING-OK")
