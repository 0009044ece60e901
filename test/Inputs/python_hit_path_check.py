#!/usr/bin/env python3
"""conv3d.conv3d's hit path (python/conv3d/_hit.py) on NumPy arrays, CPU target.

A call whose signature was seen before skips the ArrayViews and the checks;
this checks that it computes what a miss computes (fresh random data each
call, against the independent float64 NumPy convolution, poisoned out=),
that a changed stride, dtype, shape or memory layout misses, and that a hit
refuses everything a miss refuses (what the signature cannot see, the
addresses, is checked on every call).

Prints one line per case and HIT-PATH-OK at the end; any failed check raises.
"""

import os
import sys
import threading

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import np_conv3d  # noqa: E402
import conv3d  # noqa: E402
from dlpack_only import DLPackOnly  # noqa: E402
from conv3d import _arrays, _hit, _plan  # noqa: E402

rng = np.random.default_rng(int(os.environ.get("SEED", "20261124")))
TOL = {np.float32: 1e-5, np.float16: 1e-3}


def channels_last(a):
    return np.ascontiguousarray(a.transpose(0, 2, 3, 4, 1)).transpose(0, 4, 1, 2, 3)


def data(shape, dtype=np.float32, scale=1.0, layout=channels_last):
    return layout((rng.standard_normal(shape) * scale).astype(dtype))


def reference(x, w, b=None, stride=1, padding=0):
    stride = (stride,) * 3 if isinstance(stride, int) else stride
    y = np_conv3d.conv3d(np.asarray(x, np.float64).transpose(0, 2, 3, 4, 1),
                         np.asarray(w, np.float64).transpose(2, 3, 4, 1, 0),
                         strides=stride, padding=(padding,) * 6).transpose(0, 4, 1, 2, 3)
    if b is not None:
        y = y + np.asarray(b, np.float64)[None, :, None, None, None]
    return y


def check(name, y, expected, dtype=np.float32):
    y = np.asarray(y, np.float64)
    assert y.shape == expected.shape, (name, y.shape, expected.shape)
    assert np.isfinite(y).all(), (name, "non-finite values")
    err = np.linalg.norm(y - expected) / np.linalg.norm(expected)
    print("%s: rel_l2=%.2e" % (name, err))
    assert err < TOL[dtype], (name, err)


class Counter:
    """Counts the calls of a module function (the general route's pieces)."""

    def __init__(self, module, name):
        self.module, self.name, self.calls = module, name, 0
        self.original = getattr(module, name)

        def counted(*args, **kwargs):
            self.calls += 1
            return self.original(*args, **kwargs)

        setattr(module, name, counted)

    def restore(self):
        setattr(self.module, self.name, self.original)


misses = Counter(_plan, "_checked_plan")
views = Counter(_arrays, "view")


def expect_miss(name, call):
    before = misses.calls
    result = call()
    assert misses.calls == before + 1, "%s: expected a miss" % name
    return result


def expect_hit(name, call, builds_views=False):
    """A hit; one without layout steps or out= builds no ArrayView (those
    with them run the found plan through the general route's views)."""
    before, views_before = misses.calls, views.calls
    result = call()
    assert misses.calls == before, "%s: expected a hit, the general route ran" % name
    assert builds_views or views.calls == views_before, "%s: a hit built ArrayViews" % name
    return result


def poisoned(shape_ncdhw, dtype=np.float32):
    n, c, d, h, w = shape_ncdhw
    return np.full((n, d, h, w, c), np.nan, dtype).transpose(0, 4, 1, 2, 3)


def case_hit_matches_miss():
    conv3d.clear_cache()
    w = data((8, 6, 3, 3, 3), scale=0.2)
    b = data((8,), layout=lambda a: a)
    x1 = data((2, 6, 4, 5, 6))
    check("miss", expect_miss("first call", lambda: conv3d.conv3d(x1, w, b, 1, 1)),
          reference(x1, w, b, padding=1))
    assert len(_hit.signatures) == 1
    for i in range(3):
        # Fresh data for each call: a hit that skipped the kernel and handed
        # back a recycled buffer would hold another call's result.
        x = data((2, 6, 4, 5, 6))
        w2 = data((8, 6, 3, 3, 3), scale=0.2)
        b2 = data((8,), layout=lambda a: a)
        y = expect_hit("repeat", lambda: conv3d.conv3d(x, w2, b2, 1, 1))
        check("hit %d (fresh data)" % i, y, reference(x, w2, b2, padding=1))
        # The same data through a miss: the same kernel, the same bits.
        conv3d.clear_cache()
        y_miss = expect_miss("after clear_cache", lambda: conv3d.conv3d(x, w2, b2, 1, 1))
        assert np.array_equal(y, y_miss), "hit and miss differ"
        assert y.strides == y_miss.strides and y.dtype == y_miss.dtype
    print("hit == miss bit for bit, channels_last result")
    for i in range(2):
        x = data((2, 6, 4, 5, 6))
        out = poisoned((2, 8, 4, 5, 6))
        call = lambda: conv3d.conv3d(x, w, b, 1, 1, out=out)  # noqa: E731
        y = expect_hit("out=", call) if i else expect_miss("out=", call)
        assert y is out
        check("%s with a poisoned out=" % ("hit" if i else "miss"), out,
              reference(x, w, b, padding=1))


def case_changes_miss():
    conv3d.clear_cache()
    w = data((4, 3, 3, 3, 3), scale=0.2)
    x = data((1, 3, 6, 6, 5))
    expect_miss("base", lambda: conv3d.conv3d(x, w))
    changes = {
        "stride 2": lambda: (conv3d.conv3d(x, w, stride=2), reference(x, w, stride=2)),
        "stride (1, 2, 1)": lambda: (conv3d.conv3d(x, w, stride=(1, 2, 1)),
                                     reference(x, w, stride=(1, 2, 1))),
        "padding 1": lambda: (conv3d.conv3d(x, w, padding=1), reference(x, w, padding=1)),
        "another shape": lambda: (conv3d.conv3d(x[:, :, :5], w), reference(x[:, :, :5], w)),
        "NCDHW memory (layout step)": lambda: (
            conv3d.conv3d(np.ascontiguousarray(x), w), reference(x, w)),
        "an ndarray subclass": lambda: (conv3d.conv3d(x.view(Sub), w), reference(x, w)),
    }
    for name, call in changes.items():
        y, expected = expect_miss(name, call)
        check("%s misses" % name, y, expected)
        y, expected = expect_hit(name + ", again", call, builds_views="layout" in name)
        check("%s, again: hits" % name, y, expected)
    x16, w16 = x.astype(np.float16), w.astype(np.float16)
    y = expect_miss("float16", lambda: conv3d.conv3d(x16, w16))
    assert y.dtype == np.float16
    check("float16 misses", y, reference(x16, w16), np.float16)
    check("float16, again: hits", expect_hit("float16", lambda: conv3d.conv3d(x16, w16)),
          reference(x16, w16), np.float16)
    assert np.ascontiguousarray(x).flags.c_contiguous
    # The output is channels-last when the input or the weight is
    # (PyTorch's rule for cuDNN), NCDHW when both are, on a hit too.
    for _ in range(2):
        y = conv3d.conv3d(np.ascontiguousarray(x), w)
        assert y.transpose(0, 2, 3, 4, 1).flags.c_contiguous, \
            "NCDHW input, channels-last weight: channels-last output"
        y = conv3d.conv3d(np.ascontiguousarray(x), np.ascontiguousarray(w))
        assert y.flags.c_contiguous, "NCDHW input and weight: NCDHW output"


class Sub(np.ndarray):
    pass


def expect(exception, fragment, call):
    try:
        call()
    except exception as e:
        assert fragment in str(e), "%r not in %r" % (fragment, str(e))
        print("%s: %s" % (type(e).__name__, str(e).splitlines()[0]))
        return
    raise AssertionError("no %s (%s)" % (exception.__name__, fragment))


def case_hit_refuses_what_a_miss_refuses():
    conv3d.clear_cache()
    x = data((1, 4, 4, 5, 6))
    w = data((5, 4, 3, 3, 3))
    out = poisoned((1, 5, 2, 3, 4))
    conv3d.conv3d(x, w)
    conv3d.conv3d(x, w, out=out)
    f = conv3d.conv3d
    # The same signature at an odd address: only the per-call checks see it.
    raw = np.zeros(x.size * 4 + 1, np.uint8)
    odd = np.frombuffer(raw.data, np.float32, x.size, offset=1).reshape(
        1, 4, 5, 6, 4).transpose(0, 4, 1, 2, 3)
    assert (odd.shape, odd.strides) == (x.shape, x.strides)
    before = misses.calls
    expect(ValueError, "input starts at address", lambda: f(odd, w))
    odd_out = np.frombuffer(raw.data, np.float32, out.size, offset=1).reshape(
        1, 2, 3, 4, 5).transpose(0, 4, 1, 2, 3)
    assert (odd_out.shape, odd_out.strides) == (out.shape, out.strides)
    expect(ValueError, "out starts at address", lambda: f(x, w, out=odd_out))
    # out= overlapping the input, with a seen out signature.
    shared = data((1, 5, 4, 5, 6))
    w55 = data((5, 5, 3, 3, 3))
    f(shared, w55, padding=1, out=data((1, 5, 4, 5, 6)))
    expect(ValueError, "out overlaps input", lambda: f(shared, w55, padding=1, out=shared))
    assert misses.calls == before + 1, "the odd addresses and the overlap were hits"
    # A read-only out= of a seen shape and strides: the signature holds the
    # writeability the miss checks.
    read_only = poisoned((1, 5, 2, 3, 4))
    read_only.flags.writeable = False
    assert (read_only.shape, read_only.strides) == (out.shape, out.strides)
    expect(ValueError, "out is a read-only NumPy array", lambda: f(x, w, out=read_only))
    # Arguments equal to seen ones as dictionary keys but refused.
    for bad in (True, 1.0, (1, True, 1), [1, 1.0, 1]):
        expect(TypeError, "stride must be an int", lambda: f(x, w, stride=bad))
    # nn.Conv3d's form (tuples of ints): hits; a tuple equal to a seen one
    # but holding a bool does not.
    module_form = {"stride": (1, 1, 1), "padding": (0, 0, 0), "dilation": (1, 1, 1)}
    f(x, w, **module_form)
    expect_hit("tuples of ints (nn.Conv3d's form), again", lambda: f(x, w, **module_form))
    print("tuples of ints (nn.Conv3d's form), again: hits")
    expect(TypeError, "stride must be an int",
           lambda: f(x, w, **dict(module_form, stride=(1, True, 1))))
    expect(ValueError, "groups", lambda: f(x, w, groups=2))
    expect(ValueError, "activation", lambda: f(x, w, activation="tanh"))
    expect(ValueError, "target", lambda: f(x, w, target="sm75"))
    expect(ValueError, "host memory", lambda: f(x, w, target="sm80"))
    # Operands that differ in what the signature holds.
    expect(TypeError, "non-native byte order", lambda: f(x.astype(">f4"), w.astype(">f4")))
    expect(TypeError, "must match", lambda: f(x, w.astype(np.float16)))
    expect(TypeError, "int32", lambda: f(x.astype(np.int32), w.astype(np.int32)))
    expect(ValueError, "negative strides", lambda: f(x[:, :, ::-1], w))
    expect(ValueError, "C = 3", lambda: f(x, w[:, :3]))
    expect(TypeError, "DLPack", lambda: f(x, w.tolist()))
    expect(ValueError, "rank 5", lambda: f(x, w[0]))
    # A weight of another library: the general route, every call.
    before = len(_hit.signatures)
    for _ in range(2):
        check("DLPack weight with a NumPy input (general route)",
              f(x, DLPackOnly(w)), reference(x, w))
    assert len(_hit.signatures) == before, "a mixed call must not be remembered"


def case_threads():
    """Threads hitting one signature at once (each has its own argument
    block for the C call): every result against its own reference."""
    conv3d.clear_cache()
    w = data((6, 5, 3, 3, 3), scale=0.2)
    cases = [data((1, 5, 4, 4, 4)) for _ in range(4)]
    expected = [reference(x, w, padding=1) for x in cases]
    errors = []

    def work(i):
        try:
            for _ in range(25):
                y = conv3d.conv3d(cases[i], w, padding=1)
                y = np.asarray(y, np.float64)
                err = np.linalg.norm(y - expected[i]) / np.linalg.norm(expected[i])
                if not err < TOL[np.float32]:
                    errors.append((i, err))
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append((i, repr(e)))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    print("4 threads x 25 hits on one signature: every result matches its reference")


def case_dlpack_repeated():
    """A generic DLPack producer (NumPy behind __dlpack__ only): its plan is
    made once, later calls with out= are hits (the signature read from the
    capsules), on fresh data they compute the reference into a poisoned out=
    and refuse odd addresses and overlaps; without out= the hit allocates
    through the general route."""
    conv3d.clear_cache()
    made = Counter(_plan, "_make_plan")
    try:
        w = data((6, 5, 3, 3, 3), scale=0.2)
        b = data((6,), layout=lambda a: a)
        for i in range(3):
            x = data((1, 5, 4, 5, 6))
            out = poisoned((1, 6, 4, 5, 6))
            before = misses.calls
            y = conv3d.conv3d(DLPackOnly(x), DLPackOnly(w), DLPackOnly(b), padding=1,
                              out=DLPackOnly(out))
            assert misses.calls == before + (i == 0), "call %d: hit expected" % (i + 1)
            assert y._array is out
            check("DLPack producer, call %d, poisoned out=" % (i + 1), out,
                  reference(x, w, b, padding=1))
        y = conv3d.conv3d(DLPackOnly(x), DLPackOnly(w), DLPackOnly(b), padding=1)
        assert isinstance(y, np.ndarray), type(y)
        check("DLPack producer, no out= (a NumPy result)", y, reference(x, w, b, padding=1))
        assert made.calls == 2 and conv3d.cached_plans() == 2, (made.calls,
                                                                conv3d.cached_plans())
        print("DLPack producer: one plan per signature (%d made)" % made.calls)
        raw = np.zeros(x.size * 4 + 1, np.uint8)
        odd = np.frombuffer(raw.data, np.float32, x.size, offset=1).reshape(
            1, 4, 5, 6, 5).transpose(0, 4, 1, 2, 3)
        assert (odd.shape, odd.strides) == (x.shape, x.strides)
        expect(ValueError, "input starts at address",
               lambda: conv3d.conv3d(DLPackOnly(odd), DLPackOnly(w), DLPackOnly(b),
                                     padding=1, out=DLPackOnly(out)))
        w66 = data((6, 6, 3, 3, 3), scale=0.2)
        shared = data((1, 6, 4, 5, 6))
        conv3d.conv3d(DLPackOnly(shared), DLPackOnly(w66), padding=1,
                      out=DLPackOnly(poisoned((1, 6, 4, 5, 6))))
        expect(ValueError, "out overlaps input",
               lambda: conv3d.conv3d(DLPackOnly(shared), DLPackOnly(w66), padding=1,
                                     out=DLPackOnly(shared)))
    finally:
        made.restore()
    # A failed C call's message comes from conv3d_last_error.
    assert _hit.run_packed(_hit.pack_run_args(0, 0, 0, 0, 0, 0, 0)) == 1
    print("a failed run: %s" % _hit.last_error())


def case_numpy_address():
    """The hit path reads NumPy addresses from __array_struct__: the same as
    a.ctypes.data for offset views, transposes, read-only arrays,
    subclasses, non-native byte order and empty arrays."""
    base = data((2, 3, 4, 5, 6))
    read_only = base.copy()
    read_only.flags.writeable = False
    arrays = [base, base[1], base[:, 1:, 2:], base[..., 3], base.transpose(4, 3, 2, 1, 0),
              read_only, base.view(Sub), base.astype(">f4"), np.zeros((0, 4), np.float32),
              np.float16(1.5) * np.ones(7, np.float16)]
    for a in arrays:
        assert _arrays.numpy_address(a) == a.ctypes.data, (a.shape, a.strides)
    print("numpy_address == a.ctypes.data for %d kinds of arrays" % len(arrays))


def main():
    case_numpy_address()
    case_hit_matches_miss()
    case_changes_miss()
    case_hit_refuses_what_a_miss_refuses()
    case_threads()
    case_dlpack_repeated()
    misses.restore()
    views.restore()
    print("HIT-PATH-OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
