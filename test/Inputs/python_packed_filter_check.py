"""Engine.quantize_filter and packed-filter convolutions on NumPy arrays (CPU
target): the packed bytes equal, bit for bit, an independent NumPy port of
the packer of ../shared/spec/nvfp4.md (np_pack below, written from the spec,
float32 throughout); a packed-filter convolution in nvfp4-mode=fake equals,
bit for bit, the convolution of the dequantized (fake-quantized) filter, and
the float64 NumPy convolution; fresh random data, poisoned outputs; every
refusal."""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import conv3d  # noqa: E402
from np_conv3d import conv3d as np_conv3d, rel_l2  # noqa: E402

F32 = np.float32
E2M1 = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6], dtype=F32)


def round_e4m3(s):
    """Round-to-nearest-even onto E4M3 (FN), saturating at 448; s >= 0."""
    s = s.astype(F32)
    out = np.zeros_like(s)
    pos = s > 0
    m = s[pos]
    exponent = np.maximum(np.frexp(m)[1] - 1, -6)
    quantum = np.ldexp(F32(1), exponent - 3).astype(F32)
    out[pos] = (np.rint(m / quantum) * quantum).astype(F32)
    return np.minimum(out, F32(448))


def encode_e4m3(s8):
    s8 = s8.astype(F32)
    bits = np.zeros(s8.shape, dtype=np.uint8)
    pos = s8 > 0
    m = s8[pos]
    exponent = np.frexp(m)[1] - 1
    sub = exponent < -6
    normal_bits = ((exponent + 7) << 3) | ((np.ldexp(m, -exponent) - 1) * 8).astype(int)
    bits[pos] = np.where(sub, np.ldexp(m, 9).astype(int), normal_bits).astype(np.uint8)
    return bits


def round_e2m1_index(a):
    """Index into E2M1 of the nearest magnitude (ties as the spec: to even)."""
    edges_le = [(0.25, 0), (0.75, 1), (1.25, 2), (1.75, 3), (2.5, 4), (3.5, 5),
                (5.0, 6)]
    index = np.full(a.shape, 7, dtype=np.uint8)
    # From the top so that lower bins win: m <= 0.25 -> 0, m < 0.75 -> 1, ...
    for bound, i in reversed(edges_le):
        inclusive = i % 2 == 0  # ties go to the even code (0, 1.0, 2.0, 4.0)
        hit = a <= bound if inclusive else a < bound
        index[hit] = i
    return index


def np_pack(w, amax):
    """(codes, scales) of w (..., C), blocks of 16 along C."""
    x = w.astype(F32).reshape(-1, 16)
    gs = F32(amax) / F32(2688)
    bmax = np.fmax.reduce(np.abs(x), axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):  # amax 0: s is inf/NaN
        s = np.minimum(bmax / (F32(6) * gs), F32(448))
    s8 = round_e4m3(s)
    zero = (s8 == 0) | (F32(amax) == 0)
    scale = (s8 * gs).astype(F32)
    with np.errstate(divide="ignore", invalid="ignore"):
        inv = (F32(1) / scale).astype(F32)
        a = (np.abs(x) * inv[:, None]).astype(F32)
    codes = round_e2m1_index(a) | (np.signbit(x) * 8).astype(np.uint8)
    codes[np.isnan(x) | zero[:, None]] = 0
    scale_bits = np.where(zero, 0, encode_e4m3(np.where(zero, 0, s8))).astype(np.uint8)
    codes = codes.reshape(-1, 2)
    packed = (codes[:, 0] | (codes[:, 1] << 4)).astype(np.uint8)
    shape = w.shape[:-1]
    return (packed.reshape(shape + (w.shape[-1] // 2,)),
            scale_bits.reshape(shape + (w.shape[-1] // 16,)))


def decode_e4m3(bits):
    bits = bits.astype(int)
    biased, mantissa = (bits >> 3) & 15, bits & 7
    return np.where(biased == 0, np.ldexp(mantissa.astype(F32), -9),
                    np.ldexp(F32(1) + mantissa.astype(F32) / F32(8), biased - 7)).astype(F32)


def dequantize(codes, scales, amax):
    """The values a packed filter stands for: E2M1 * (E4M3 * amax / 2688)."""
    c = np.stack([codes & 15, codes >> 4], axis=-1).reshape(codes.shape[:-1] + (-1,))
    values = E2M1[c & 7] * np.where(c & 8, F32(-1), F32(1))
    scale = (decode_e4m3(scales) * (F32(amax) / F32(2688))).astype(F32)
    return (values.reshape(scales.shape + (16,)) * scale[..., None]).astype(F32).reshape(
        c.shape)


rng = np.random.default_rng(2026)
engine = conv3d.Engine(cache_dir=None)
n, d, h, wd, c, f = 2, 3, 5, 4, 32, 12
window, padding = (3, 2, 3), (1, 1, 0, 1, 2, 0)
spec = conv3d.Spec.from_shapes((n, d, h, wd, c), window + (c, f), padding=padding,
                               filter_layout="fqrsc", dtype="f32")
x = rng.standard_normal((n, d, h, wd, c)).astype(F32)
w = (0.3 * rng.standard_normal((f,) + window + (c,))).astype(F32)
w[0, 0, 0, 0, 3] = np.nan  # FP4 has no NaN: encodes as +0
w[1, 0, 0, 0, :16] = 0  # a zero block: scale byte 0

for amax in (0.6, 2.5, 0.0):  # 0.6 is below max |w|: some blocks saturate
    codes, scales = engine.quantize_filter(spec, w, amax)
    ref_codes, ref_scales = np_pack(w, amax)
    print("pack amax=%g: codes %s %s, scales %s %s, %d/%d nonzero scales" % (
        amax, codes.shape, "EQUAL" if np.array_equal(codes, ref_codes) else "DIFFER",
        scales.shape, "EQUAL" if np.array_equal(scales, ref_scales) else "DIFFER",
        np.count_nonzero(scales), scales.size))

# The filter without NaN for the convolutions.
w[0, 0, 0, 0, 3] = 0.25
amax = float(np.max(np.abs(w))) * 0.8
codes, scales = engine.quantize_filter(spec, w, amax)
fake = dequantize(codes, scales, amax)
packed_conv = engine.compile(spec, packed_filter=True, nvfp4_mode="fake")
plain_conv = engine.compile(spec)
out_shape = spec.output_shape()
y_packed = np.full(out_shape, np.nan, dtype=F32)
y_fake = np.full(out_shape, np.nan, dtype=F32)
packed_conv.run(x.ctypes.data, codes.ctypes.data, y_packed.ctypes.data,
                filter_scales=scales.ctypes.data, filter_amax=amax)
plain_conv.run(x.ctypes.data, fake.ctypes.data, y_fake.ctypes.data)
expected = np_conv3d(x, fake, padding=padding, layout="fqrsc")
err = rel_l2(expected, y_packed)
print("fake-mode run: bit-exact vs fake-quantized filter: %s, finite: %s, "
      "rel_l2 vs float64 %s" % (
          np.array_equal(y_packed.view(np.uint32), y_fake.view(np.uint32)),
          bool(np.all(np.isfinite(y_packed))), "PASS" if err < 1e-5 else "FAIL %g" % err))


def expect(kind, fn):
    try:
        fn()
    except kind as e:
        print("%s: %s" % (kind.__name__, e))
    else:
        print("no %s" % kind.__name__)


qrscf = conv3d.Spec.from_shapes((n, d, h, wd, c), window + (c, f), filter_layout="qrscf",
                                dtype="f32")
expect(conv3d.Conv3dError, lambda: engine.quantize_filter(qrscf, w, 1.0))
c24 = conv3d.Spec.from_shapes((n, d, h, wd, 24), window + (24, f), filter_layout="fqrsc",
                              dtype="f32")
expect(conv3d.Conv3dError, lambda: engine.quantize_filter(c24, w[..., :24].copy(), 1.0))
expect(conv3d.Conv3dError, lambda: engine.compile(c24, packed_filter=True))
expect(conv3d.Conv3dError, lambda: engine.quantize_filter(spec, w, -1.0))
expect(conv3d.Conv3dError, lambda: engine.quantize_filter(spec, w, 1.0, target="sm100"))
expect(TypeError, lambda: engine.quantize_filter(spec, w.astype(np.float16), 1.0))
expect(TypeError, lambda: engine.quantize_filter(spec, w.tolist(), 1.0))
expect(ValueError, lambda: engine.quantize_filter(spec, w[:6], 1.0))
expect(ValueError, lambda: engine.quantize_filter(
    spec, np.asfortranarray(w), 1.0))
expect(conv3d.Conv3dError, lambda: engine.compile(spec, packed_filter=True,
                                                  nvfp4_mode="real"))
expect(ValueError, lambda: packed_conv.run(x.ctypes.data, codes.ctypes.data,
                                           y_packed.ctypes.data))
expect(ValueError, lambda: plain_conv.run(x.ctypes.data, fake.ctypes.data,
                                          y_fake.ctypes.data,
                                          filter_scales=scales.ctypes.data))
print("PACKED-FILTER-OK")
