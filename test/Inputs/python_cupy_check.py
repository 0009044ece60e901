#!/usr/bin/env python3
"""conv3d.conv3d on CuPy arrays (GPU): the CuPy hit path (_hit._cupy_conv3d).

Fresh random float16 data each call, against an independent float64 NumPy
convolution (np_conv3d.py), outputs poisoned first: the miss and hits
(channels_last), a poisoned out=, NCDHW memory (the layout step), a
non-default CuPy stream; a hit adds no signature and makes no plan; a hit
refuses what a miss refuses (an odd address, out= overlapping the input).
Prints one line per case and CUPY-OK at the end; any failed check raises.
"""

import os
import sys

import cupy
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import np_conv3d  # noqa: E402
import conv3d  # noqa: E402
from conv3d import _hit  # noqa: E402

rng = np.random.default_rng(int.from_bytes(os.urandom(4), "little"))
TOL = 2e-3  # float16 operands and result, float32 accumulation


def channels_last(a):
    return cupy.ascontiguousarray(a.transpose(0, 2, 3, 4, 1)).transpose(0, 4, 1, 2, 3)


def data(shape, scale=1.0, layout=channels_last):
    return layout(cupy.asarray((rng.standard_normal(shape) * scale).astype(np.float16)))


def reference(x, w, b, stride, padding, residual=None):
    y = np_conv3d.conv3d(cupy.asnumpy(x).astype(np.float64).transpose(0, 2, 3, 4, 1),
                         cupy.asnumpy(w).astype(np.float64).transpose(2, 3, 4, 1, 0),
                         strides=stride, padding=(padding,) * 6).transpose(0, 4, 1, 2, 3)
    y = y + cupy.asnumpy(b).astype(np.float64)[None, :, None, None, None]
    y = y / (1 + np.exp(-y))  # silu
    if residual is not None:
        y = y + cupy.asnumpy(residual).astype(np.float64)
    return y


def check(name, y, expected):
    cupy.cuda.get_current_stream().synchronize()
    assert isinstance(y, cupy.ndarray), (name, type(y))
    y = cupy.asnumpy(y).astype(np.float64)
    assert y.shape == expected.shape, (name, y.shape, expected.shape)
    assert np.isfinite(y).all(), (name, "non-finite values")
    err = np.linalg.norm(y - expected) / np.linalg.norm(expected)
    print("%s: rel_l2=%.2e" % (name, err))
    assert err < TOL, (name, err)


def poisoned(shape_ncdhw):
    n, c, d, h, w = shape_ncdhw
    return cupy.full((n, d, h, w, c), np.nan, np.float16).transpose(0, 4, 1, 2, 3)


def expect(exception, fragment, call):
    try:
        call()
    except exception as e:
        assert fragment in str(e), "%r not in %r" % (fragment, str(e))
        print("%s: %s" % (type(e).__name__, str(e).splitlines()[0]))
        return
    raise AssertionError("no %s (%s)" % (exception.__name__, fragment))


def main():
    conv3d.clear_cache()
    stride, padding = (1, 2, 1), 1
    w = data((24, 16, 3, 3, 3), scale=0.1)
    b = cupy.asarray(rng.standard_normal(24).astype(np.float32))
    out_shape = (2, 24, 4, 3, 6)

    def call(x, residual, **kwargs):
        return conv3d.conv3d(x, w, b, stride, padding, activation="silu",
                             residual=residual, **kwargs)

    for i in range(3):
        x, res = data((2, 16, 4, 6, 6)), data(out_shape)
        before = len(_hit.signatures), conv3d.cached_plans()
        y = call(x, res)
        check("CuPy, call %d (%s)" % (i + 1, "miss" if i == 0 else "hit"), y,
              reference(x, w, b, stride, padding, res))
        if i:
            assert (len(_hit.signatures), conv3d.cached_plans()) == before, "not a hit"
    assert y.strides[1] == 2, y.strides  # NDHWC memory, like the input
    entry = next(e for k, e in _hit.signatures.items() if k[0][0] is cupy.ndarray)
    print("CuPy signature remembered, target %s" % entry[0].target)

    x, res = data((2, 16, 4, 6, 6)), data(out_shape)
    for i in range(2):
        out = poisoned(out_shape)
        y = call(x, res, out=out)
        assert y is out
        check("CuPy out= (poisoned), call %d" % (i + 1), out,
              reference(x, w, b, stride, padding, res))

    layout = cupy.ascontiguousarray
    for i in range(2):
        xc, resc = data((2, 16, 4, 6, 6), layout=layout), data(out_shape, layout=layout)
        y = call(xc, resc)
        # PyTorch's rule for its cuDNN convolutions (conv3d._plan): an NCDHW
        # input with a channels-last weight gives a channels-last output.
        assert y.strides[1] == 2, ("a channels-last weight gives NDHWC memory", y.strides)
        check("CuPy NCDHW (layout step), call %d" % (i + 1), y,
              reference(xc, w, b, stride, padding, resc))
    # With an NCDHW weight too, the output is copied back to NCDHW memory.
    wc = layout(w)
    xc, resc = data((2, 16, 4, 6, 6), layout=layout), data(out_shape, layout=layout)
    y = conv3d.conv3d(xc, wc, b, stride, padding, activation="silu", residual=resc)
    assert y.flags.c_contiguous, "NCDHW input and weight give NCDHW memory"
    check("CuPy NCDHW input and weight (copied back)", y,
          reference(xc, wc, b, stride, padding, resc))

    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        for i in range(2):
            x, res = data((2, 16, 4, 6, 6)), data(out_shape)
            y = call(x, res)
            stream.synchronize()
            check("CuPy on a non-default stream, call %d" % (i + 1), y,
                  reference(x, w, b, stride, padding, res))

    # A hit's signature at an address 2 bytes off: the per-call checks.
    raw = cupy.zeros(x.size + 8, np.float16)
    odd = raw[1:1 + x.size].reshape(2, 4, 6, 6, 16).transpose(0, 4, 1, 2, 3)
    assert (odd.shape, odd.strides) == (x.shape, x.strides)
    misses = len(_hit.signatures)
    expect(ValueError, "input starts at address", lambda: call(odd, res))
    w16 = data((16, 16, 3, 3, 3), scale=0.1)
    shared = data((2, 16, 4, 6, 6))
    conv3d.conv3d(shared, w16, padding=1, out=poisoned((2, 16, 4, 6, 6)))
    expect(ValueError, "out overlaps input",
           lambda: conv3d.conv3d(shared, w16, padding=1, out=shared))
    assert len(_hit.signatures) == misses + 1
    expect(TypeError, "must match", lambda: conv3d.conv3d(x, w.astype(np.float32)))
    cupy.cuda.Device().synchronize()
    print("CUPY-OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
