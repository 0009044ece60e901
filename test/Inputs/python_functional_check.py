#!/usr/bin/env python3
"""conv3d.conv3d on NumPy arrays (the CPU target): every argument form and
memory layout, checked against the independent float64 NumPy convolution
(np_conv3d.py) on fresh random data with poisoned outputs; a generic DLPack
producer; the plan cache; and every error the API names.

Prints one line per case and FUNCTIONAL-OK at the end; any failed check
raises (non-zero exit).
"""

import math
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import np_conv3d  # noqa: E402
import conv3d  # noqa: E402
from dlpack_only import DLPackOnly  # noqa: E402
from conv3d import _arrays  # noqa: E402

rng = np.random.default_rng(int(os.environ.get("SEED", "20261124")))
TOL = {"float32": 1e-5, "float16": 1e-3}


def channels_last(a):
    """A copy of logical (N, C, D, H, W) `a` with NDHWC memory (FQRSC for a
    weight), the same logical view: what torch.channels_last_3d gives."""
    return np.ascontiguousarray(a.transpose(0, 2, 3, 4, 1)).transpose(0, 4, 1, 2, 3)


def reference(x, w, bias=None, stride=(1, 1, 1), padding=(0,) * 6, dilation=(1, 1, 1),
              activation=None, residual=None, groups=1):
    """float64, logical NCDHW in and out."""
    y = np_conv3d.conv3d(np.asarray(x, np.float64).transpose(0, 2, 3, 4, 1),
                         np.asarray(w, np.float64).transpose(2, 3, 4, 1, 0),
                         strides=stride, dilations=dilation, padding=padding,
                         groups=groups)
    y = y.transpose(0, 4, 1, 2, 3)
    if bias is not None:
        y = y + np.asarray(bias, np.float64)[None, :, None, None, None]
    if activation == "relu":
        y = np.maximum(y, 0.0)
    elif activation == "silu":
        y = y / (1.0 + np.exp(-y))
    elif activation == "gelu_tanh":
        y = 0.5 * y * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (y + 0.044715 * y ** 3)))
    if residual is not None:
        y = y + np.asarray(residual, np.float64)
    return y


def rel_l2(actual, expected):
    actual = np.asarray(actual, np.float64)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    assert np.isfinite(actual).all(), "non-finite values in the output"
    return np.linalg.norm(actual - expected) / np.linalg.norm(expected)


def data(shape, dtype, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(dtype)


def check(name, y, expected, dtype):
    err = rel_l2(y, expected)
    print("%s: rel_l2=%.2e" % (name, err))
    assert err < TOL[np.dtype(dtype).name], (name, err)


def case_channels_last_causal():
    x = channels_last(data((2, 6, 5, 7, 6), np.float32))
    w = channels_last(data((9, 6, 3, 3, 2), np.float32, 0.2))
    b = data((9,), np.float32)
    pad, stride, dil = (2, 0, 1, 1, 0, 2), (1, 2, 1), (1, 1, 2)
    expected = reference(x, w, b, stride, pad, dil, "relu")
    out = np.full((2, 5, 4, 6, 9), np.nan, np.float32).transpose(0, 4, 1, 2, 3)
    y = conv3d.conv3d(x, w, b, stride=stride, padding=pad, dilation=dil,
                      activation="relu", out=out)
    assert y is out, "out= must be returned"
    check("channels_last, causal 6-tuple padding, stride, dilation, bias, relu, out=",
          y, expected, np.float32)


def case_contiguous_layout_step():
    x = data((1, 4, 6, 5, 5), np.float32)             # NCDHW-contiguous
    w = data((8, 4, 3, 3, 3), np.float32, 0.2)        # FCQRS-contiguous
    y = conv3d.conv3d(x, w, None, 1, 1, 1)
    assert y.flags.c_contiguous, "NCDHW input gives NCDHW output"
    check("contiguous NCDHW (layout step in and out), int arguments", y,
          reference(x, w, padding=(1,) * 6), np.float32)
    y = conv3d.conv3d(x, w, padding=[1, 0, 2], stride=[2, 1, 1])
    check("3-tuple padding and stride as lists", y,
          reference(x, w, padding=(1, 1, 0, 0, 2, 2), stride=(2, 1, 1)), np.float32)


def case_weight_qrscf():
    x = channels_last(data((1, 5, 4, 6, 6), np.float32))
    w_qrscf = data((2, 3, 3, 5, 7), np.float32, 0.2)
    w = w_qrscf.transpose(4, 3, 0, 1, 2)              # logical (F, C, Q, R, S), QRSCF memory
    check("QRSCF weight memory, used in place", conv3d.conv3d(x, w, padding=1),
          reference(x, w, padding=(1,) * 6), np.float32)


def case_grouped():
    # Depthwise (groups = C, with a channel multiplier of 2) and grouped,
    # in every weight memory layout, against the per-group float64
    # convolutions.
    x = channels_last(data((2, 6, 5, 7, 6), np.float32))
    w = channels_last(data((12, 1, 3, 3, 3), np.float32, 0.3))
    b = data((12,), np.float32)
    pad, stride, dil = (1, 1, 0, 2, 1, 0), (1, 2, 1), (2, 1, 1)
    y = conv3d.conv3d(x, w, b, stride=stride, padding=pad, dilation=dil, groups=6,
                      activation="silu")
    check("depthwise groups=6 (multiplier 2), stride, dilation, bias, silu", y,
          reference(x, w, b, stride, pad, dil, "silu", groups=6), np.float32)
    xc = data((1, 8, 4, 5, 5), np.float16)               # NCDHW-contiguous
    wc = data((6, 4, 3, 1, 3), np.float16, 0.3)          # FCQRS-contiguous
    y = conv3d.conv3d(xc, wc, padding=(1, 1, 0, 0, 1, 1), groups=2)
    check("grouped groups=2, float16, contiguous layouts", y,
          reference(xc, wc, padding=(1, 1, 0, 0, 1, 1), groups=2), np.float16)
    wq = data((3, 1, 3, 4, 6), np.float32, 0.3).transpose(4, 3, 0, 1, 2)  # QRSCF memory
    y = conv3d.conv3d(channels_last(xc.astype(np.float32)), wq, groups=2)
    check("grouped groups=2, QRSCF weight memory", y,
          reference(xc.astype(np.float32), wq, groups=2), np.float32)


def case_float16_epilogue():
    x = channels_last(data((1, 8, 5, 6, 6), np.float16))
    w = channels_last(data((16, 8, 3, 3, 3), np.float16, 0.15))
    b16 = data((16,), np.float16)                     # converted to float32
    expected_shape = (1, 16, 5, 6, 6)
    res = channels_last(data(expected_shape, np.float16))
    for act in ("silu", "gelu_tanh"):
        y = conv3d.conv3d(x, w, b16, padding=1, activation=act, residual=res)
        assert y.dtype == np.float16
        check("float16, %s, float16 bias, residual" % act, y,
              reference(x, w, b16, padding=(1,) * 6, activation=act, residual=res),
              np.float16)
    res_c = np.ascontiguousarray(res)
    y = conv3d.conv3d(x, w, None, padding=1, residual=res_c)
    check("float16, NCDHW-contiguous residual (layout step)", y,
          reference(x, w, padding=(1,) * 6, residual=res_c), np.float16)


def case_same_valid():
    x = channels_last(data((1, 3, 7, 6, 5), np.float32))
    w = channels_last(data((4, 3, 3, 4, 3), np.float32, 0.3))
    y = conv3d.conv3d(x, w, padding="same", dilation=(2, 1, 1))
    # PyTorch's 'same': total = dilation * (k - 1), the odd one on the high side.
    check("padding='same' (even window: extra on the high side), dilation",
          y, reference(x, w, padding=(2, 2, 1, 2, 1, 1), dilation=(2, 1, 1)), np.float32)
    assert y.shape == x.shape[:1] + (4,) + x.shape[2:]
    check("padding='valid'", conv3d.conv3d(x, w, padding="valid"), reference(x, w),
          np.float32)


def case_generic_dlpack():
    x = channels_last(data((1, 4, 4, 5, 6), np.float32))
    w = channels_last(data((5, 4, 1, 3, 3), np.float32, 0.3))
    y = conv3d.conv3d(DLPackOnly(x), DLPackOnly(w), padding=(0, 1, 1))
    assert isinstance(y, np.ndarray), type(y)
    check("generic DLPack producer (host): NumPy result", y,
          reference(x, w, padding=(0, 0, 1, 1, 1, 1)), np.float32)


def case_plan_cache():
    conv3d.clear_cache()
    w = channels_last(data((8, 8, 3, 3, 3), np.float32, 0.2))

    def poisoned():
        return np.full((1, 4, 8, 8, 8), np.nan, np.float32).transpose(0, 4, 1, 2, 3)

    conv3d.conv3d(channels_last(data((1, 8, 4, 8, 8), np.float32)), w, padding=1,
                  out=poisoned())
    assert conv3d.cached_plans() == 1
    x2 = channels_last(data((1, 8, 4, 8, 8), np.float32))
    start = time.perf_counter()
    y = conv3d.conv3d(x2, w, padding=1, out=poisoned())
    seconds = time.perf_counter() - start
    assert conv3d.cached_plans() == 1, "a repeated spec must reuse its plan"
    check("repeated call: plan reused (fresh data, poisoned out)", y,
          reference(x2, w, padding=(1,) * 6), np.float32)
    assert seconds < 0.5, "a cached call took %.3f s" % seconds
    # True and 1.0 equal 1 as dictionary keys but are no int stride: a cached
    # plan must not let them past the check.
    for bad in (True, 1.0, (1, True, 1)):
        expect(TypeError, "stride must be an int",
               lambda: conv3d.conv3d(x2, w, stride=bad, padding=1, out=poisoned()))
    conv3d.conv3d(x2, w, padding=2)
    assert conv3d.cached_plans() == 2, "another padding is another plan"


def expect(exception, fragment, call):
    try:
        call()
    except exception as e:
        message = str(e)
        assert fragment in message, "%r not in %r" % (fragment, message)
        print("%s: %s" % (type(e).__name__, message.splitlines()[0]))
        return
    raise AssertionError("no %s (%s)" % (exception.__name__, fragment))


def case_errors():
    x = channels_last(data((1, 4, 4, 5, 6), np.float32))
    w = channels_last(data((5, 4, 3, 3, 3), np.float32))
    f = conv3d.conv3d
    expect(ValueError, "groups", lambda: f(x, w, groups=2))
    expect(ValueError, "C/groups = 4 channels per group",
           lambda: f(channels_last(data((1, 4, 4, 5, 6), np.float32)),
                     channels_last(data((4, 4, 3, 3, 3), np.float32)), groups=2))
    expect(ValueError, "groups must be a positive int", lambda: f(x, w, groups=0))
    expect(TypeError, "int32", lambda: f(x.astype(np.int32), w.astype(np.int32)))
    expect(TypeError, "float64", lambda: f(x.astype(np.float64), w.astype(np.float64)))
    expect(TypeError, "non-native byte order", lambda: f(x.astype(">f4"), w.astype(">f4")))
    expect(TypeError, "must match", lambda: f(x, w.astype(np.float16)))
    expect(ValueError, "rank 5", lambda: f(x[0], w))
    expect(ValueError, "rank 5", lambda: f(x, w[0]))
    expect(ValueError, "C = 3", lambda: f(x, w[:, :3]))
    expect(ValueError, "strides", lambda: f(x[:, :, :, :, ::2], w))
    expect(ValueError, "negative strides", lambda: f(x[:, :, ::-1], w))
    expect(ValueError, "negative strides", lambda: f(x, w[:, :, :, ::-1]))
    expect(TypeError, "DLPack", lambda: f([[1.0]], w))
    expect(ValueError, "stride must be >= 1", lambda: f(x, w, stride=0))
    expect(TypeError, "stride must be an int", lambda: f(x, w, stride=True))
    expect(TypeError, "dilation must be an int", lambda: f(x, w, dilation=1.5))
    expect(ValueError, "3-tuple", lambda: f(x, w, stride=(1, 1)))
    expect(ValueError, "6-tuple", lambda: f(x, w, padding=(1, 1, 1, 1)))
    expect(ValueError, "padding must be >= 0", lambda: f(x, w, padding=-1))
    expect(ValueError, "needs stride 1", lambda: f(x, w, padding="same", stride=2))
    expect(ValueError, "'valid' or 'same'", lambda: f(x, w, padding="full"))
    expect(ValueError, "activation", lambda: f(x, w, activation="tanh"))
    expect(ValueError, "target", lambda: f(x, w, target="sm75"))
    expect(ValueError, "host memory", lambda: f(x, w, target="sm80"))
    expect(ValueError, "bias must have shape (5,)", lambda: f(x, w, np.zeros(4, np.float32)))
    expect(TypeError, "bias has dtype int64", lambda: f(x, w, np.zeros(5, np.int64)))
    expect(ValueError, "residual must have the output's shape",
           lambda: f(x, w, residual=np.zeros((1, 5, 2, 3, 5), np.float32)))
    expect(TypeError, "residual has dtype float16",
           lambda: f(x, w, residual=np.zeros((1, 5, 2, 3, 4), np.float16)))
    expect(ValueError, "out must have the output's shape",
           lambda: f(x, w, out=np.zeros((1, 5, 2, 3, 5), np.float32)))
    expect(ValueError, "channels_last_3d (NDHWC in memory), which the kernels write",
           lambda: f(x, w, out=np.zeros((1, 5, 2, 3, 4), np.float32)))
    expect(TypeError, "out has dtype float16",
           lambda: f(x, w, out=channels_last(np.zeros((1, 5, 2, 3, 4), np.float16))))
    expect(ValueError, "weight is on cuda:0 but input is on cpu",
           lambda: f(x, DLPackOnly(w, device=(2, 0))))
    # Output voxels would be empty: the library's geometry refuses.
    expect(conv3d.Conv3dError, "output", lambda: f(x, channels_last(
        data((5, 4, 7, 3, 3), np.float32))))
    # out= sharing memory with an operand.
    same = channels_last(data((1, 5, 4, 5, 6), np.float32))
    w55 = channels_last(data((5, 5, 3, 3, 3), np.float32))
    expect(ValueError, "out overlaps input", lambda: f(same, w55, padding=1, out=same))
    # A buffer at an odd address.
    raw = np.zeros(x.size * 4 + 1, np.uint8)
    odd = np.frombuffer(raw.data, np.float32, x.size, offset=1).reshape(1, 4, 5, 6, 4)
    expect(ValueError, "not 4-byte aligned", lambda: f(odd.transpose(0, 4, 1, 2, 3), w))
    # Read-only arrays (which NumPy will not export through DLPack) are fine.
    ro_x, ro_w = x.copy(), w.copy()
    ro_x.flags.writeable = ro_w.flags.writeable = False
    check("read-only NumPy operands", f(ro_x, ro_w), reference(x, w), np.float32)


def case_size_one_and_empty():
    """Strides of extent-1 dimensions are ignored (x[:, 2:5] of a batch-1
    array keeps the batch stride of the whole array: NumPy, PyTorch and
    DLPack call it contiguous); an array without elements (NumPy gives it
    zero strides) gets the library's geometry error, not a layout one."""
    whole = data((1, 9, 4, 5, 6), np.float32)
    x = whole[:, 2:6]  # NCDHW, batch stride 9*4*5*6 (canonical: 4*4*5*6)
    assert x.flags.c_contiguous and x.strides[0] != x[0].size * 4
    w = channels_last(data((5, 4, 3, 3, 3), np.float32, 0.3))
    check("a channel slice of a batch-1 array (NCDHW)", conv3d.conv3d(x, w, padding=1),
          reference(np.ascontiguousarray(x), w, padding=(1,) * 6), np.float32)
    frames = channels_last(data((1, 4, 7, 5, 6), np.float32))[:, :, 2:6]  # NDHWC
    assert frames.strides[0] != frames[0].size * 4
    check("frames of a batch-1 channels_last array, through DLPack",
          conv3d.conv3d(DLPackOnly(frames), DLPackOnly(w), padding=1),
          reference(frames, w, padding=(1,) * 6), np.float32)
    odd = np.lib.stride_tricks.as_strided(x, x.shape, (12345 * 4,) + x.strides[1:])
    check("an arbitrary batch stride of a batch-1 array", conv3d.conv3d(odd, w, padding=1),
          reference(np.ascontiguousarray(x), w, padding=(1,) * 6), np.float32)
    empty = np.zeros((0, 4, 4, 5, 6), np.float32)
    assert empty.strides == (0,) * 5, empty.strides
    expect(conv3d.Conv3dError, "batch size must be positive",
           lambda: conv3d.conv3d(empty, w, padding=1))


def case_spec_arguments():
    """Spec.from_shapes names a bad element type, layout or activation (no
    bare KeyError); NumPy bfloat16 without ml_dtypes names the package."""
    shapes = ((1, 4, 4, 4, 8), (3, 3, 3, 8, 4))
    for kwargs in ({"dtype": "f64"}, {"output_dtype": "float"}, {"filter_layout": "fcqrs"},
                   {"activation": "tanh"}):
        expect(ValueError, "must be one of",
               lambda: conv3d.Spec.from_shapes(*shapes, **kwargs))
    hidden = sys.modules.get("ml_dtypes", None)
    sys.modules["ml_dtypes"] = None  # as if it were not installed
    try:
        expect(TypeError, "pip install ml_dtypes", lambda: _arrays.numpy_dtype("bf16"))
        spec = conv3d.Spec.from_shapes((1, 4, 4, 4, 16), (3, 3, 3, 16, 16),
                                       filter_layout="fqrsc", dtype="bf16")
        expect(TypeError, "ml_dtypes", lambda: conv3d.Engine(None).quantize_filter(
            spec, np.zeros((16, 3, 3, 3, 16), np.float32), 1.0))
    finally:
        if hidden is None:
            del sys.modules["ml_dtypes"]
        else:
            sys.modules["ml_dtypes"] = hidden


def main():
    print("library:", conv3d.library_path())
    assert conv3d.library_version() == conv3d.__version__, (
        conv3d.library_version(), conv3d.__version__)
    case_channels_last_causal()
    case_contiguous_layout_step()
    case_weight_qrscf()
    case_grouped()
    case_float16_epilogue()
    case_same_valid()
    case_generic_dlpack()
    case_plan_cache()
    case_errors()
    case_size_one_and_empty()
    case_spec_arguments()
    print("FUNCTIONAL-OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
