"""conv3d.CausalConv3dStream on NumPy arrays (CPU target): random sequences
fed in random chunkings equal the full-sequence causal convolution of the
independent unfused NumPy model (np_causal_block.causal_step: prologue, pad,
conv in float64) on fresh random data; reset(); the errors it names."""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import conv3d  # noqa: E402
from dlpack_only import DLPackOnly  # noqa: E402
from np_causal_block import causal_step  # noqa: E402
from np_conv3d import rel_l2  # noqa: E402

rng = np.random.default_rng(7)


def chunkings(frames):
    yield [frames]
    yield [1] * frames
    for _ in range(3):
        lengths, left = [], frames
        while left:
            n = int(min(left, rng.integers(1, 5)))
            lengths.append(n)
            left -= n
        yield lengths


def case(name, frames, q, stride, dilation, dtype, gamma, beta, act, tol):
    n, h, w, c, f = 2, 4, 5, 8, 6
    x = rng.standard_normal((n, frames, h, w, c)).astype(dtype)
    wt = (rng.standard_normal((q, 3, 3, c, f)) * 0.2).astype(dtype)
    g = rng.standard_normal(c).astype(np.float32) if gamma else None
    b = (rng.standard_normal(c) * 0.5).astype(np.float32) if beta else None
    span = (q - 1) * dilation
    expected = causal_step(x, None, wt, g, b, 1e-6, act, (span, 0, 1, 1, 1, 1),
                           (stride, 1, 1), (dilation, 1, 1))
    stream = conv3d.CausalConv3dStream(wt, None, stride=(stride, 1, 1),
                                       dilation=(dilation, 1, 1),
                                       padding_hw=(1, 1, 1, 1), norm_gamma=g,
                                       norm_beta=b, norm_eps=1e-6,
                                       input_activation=act)
    worst = 0.0
    for lengths in chunkings(frames):
        stream.reset()
        parts, at = [], 0
        for length in lengths:
            y = stream.step(np.ascontiguousarray(x[:, at:at + length]))
            assert y.shape[1] == -(-(at + length) // stride) - (-(-at // stride)), y.shape
            assert stream.cached_frames <= span
            parts.append(y)
            at += length
        out = np.concatenate(parts, axis=1)
        assert out.shape == expected.shape, (out.shape, expected.shape, lengths)
        assert np.all(np.isfinite(out)), lengths
        e = rel_l2(expected, out)
        assert e <= tol, (name, lengths, e)
        worst = max(worst, e)
    print("%s: %d chunkings match the full sequence, worst rel_l2=%.2e" % (
        name, 5, worst))


case("f32 norm+beta+silu", 7, 3, 1, 1, np.float32, True, True, "silu", 1e-5)
case("f32 stride 2", 9, 3, 2, 1, np.float32, False, False, "none", 1e-5)
case("f32 dilation 2, relu", 8, 3, 1, 2, np.float32, False, False, "relu", 1e-5)
case("f16 norm+gelu_tanh", 6, 3, 1, 1, np.float16, True, False, "gelu_tanh", 5e-3)

# One convolution with explicit history frames and a prologue through
# compile_ext / ConvExt.run, against the model with that history.
from conv3d._stream import InputExt, compile_ext  # noqa: E402
x = rng.standard_normal((1, 3, 4, 5, 8)).astype(np.float32)
hist = rng.standard_normal((1, 2, 4, 5, 8)).astype(np.float32)
wt = (rng.standard_normal((3, 3, 3, 8, 6)) * 0.2).astype(np.float32)
g = rng.standard_normal(8).astype(np.float32)
spec = conv3d.Spec.from_shapes(x.shape, wt.shape, padding=(0, 0, 1, 1, 1, 1), dtype="f32")
conv = compile_ext(conv3d.Engine(None), spec, InputExt(2, 1, 0, 1e-6, 2))
out = np.full(conv.output_shape, np.nan, np.float32)
conv.run(x.ctypes.data, wt.ctypes.data, out.ctypes.data, history=hist.ctypes.data,
         norm_gamma=g.ctypes.data)
e = rel_l2(causal_step(x, hist, wt, g, None, 1e-6, "silu", (0, 0, 1, 1, 1, 1)), out)
print("compile_ext with history and prologue: %s rel_l2=%.2e shape=%s" % (
    "PASS" if e < 1e-5 else "FAIL", e, "x".join(map(str, out.shape))))

# Errors name the problem; a failed step leaves the stream unchanged.
x = rng.standard_normal((1, 2, 4, 4, 8)).astype(np.float32)
wt = rng.standard_normal((3, 3, 3, 8, 4)).astype(np.float32)
s = conv3d.CausalConv3dStream(wt, padding_hw=(1, 1, 1, 1))
s.step(x)
for bad, what in ((np.zeros((1, 2, 4, 5, 8), np.float32), "shape"),
                  (np.zeros((1, 2, 4, 4, 8), np.float16), "dtype"),
                  (np.zeros((1, 0, 4, 4, 8), np.float32), "empty")):
    try:
        s.step(bad)
        print("no error for bad", what)
    except (conv3d.Conv3dError, ValueError) as e:
        print("bad %s: %s" % (what, e))
print("after errors: frames_seen=%d cached_frames=%d" % (s.frames_seen, s.cached_frames))
try:
    conv3d.CausalConv3dStream(wt, norm_beta=np.zeros(8, np.float32))
except ValueError as e:
    print("ValueError:", e)
try:
    conv3d.CausalConv3dStream(wt, norm_gamma=np.zeros(8, np.float32),
                              norm_eps=0.0).step(x)
except conv3d.Conv3dError as e:
    print("Conv3dError:", e)

# A chunk that is a view of a batch-1 sequence, x[:, 2:5]: contiguous, the
# batch stride is the whole sequence's (extent-1 strides are ignored; a
# generic DLPack producer's too): the same output as contiguous copies.
seq = rng.standard_normal((1, 8, 4, 4, 8)).astype(np.float32)
view = seq[:, 2:5]
assert view.flags.c_contiguous and view.strides[0] != view[0].size * 4
copies, views = (conv3d.CausalConv3dStream(wt, padding_hw=(1, 1, 1, 1)) for _ in range(2))


same = all(np.array_equal(copies.step(np.ascontiguousarray(seq[:, a:b])),
                          views.step(seq[:, a:b] if i % 2 else DLPackOnly(seq[:, a:b])))
           for i, (a, b) in enumerate(((0, 2), (2, 5), (5, 8))))
print("chunks x[:, a:b] of a batch-1 sequence (NumPy and DLPack): same output:", same)

# Every vector the library reads whole is checked against the weight; bad
# dtypes and output_dtype are named (no bare KeyError).
bad = (("bias of 3 values", dict(bias=np.zeros(3, np.float32))),
       ("norm_gamma of 4 values", dict(norm_gamma=np.zeros(4, np.float32))),
       ("norm_beta of 9 values", dict(norm_gamma=np.ones(8, np.float32),
                                      norm_beta=np.zeros(9, np.float32))),
       ("float64 norm_gamma", dict(norm_gamma=np.ones(8))),
       ("a bogus output_dtype", dict(output_dtype="f64")),
       ("float64 weights", dict(weight=wt.astype(np.float64))))
for name, kwargs in bad:
    weight = kwargs.pop("weight", wt)
    try:
        conv3d.CausalConv3dStream(weight, **kwargs).step(x)
        print("%s: no error" % name)
    except (TypeError, ValueError, conv3d.Conv3dError) as e:
        print("%s: %s: %s" % (name, type(e).__name__, e))
print("STREAM-OK")
