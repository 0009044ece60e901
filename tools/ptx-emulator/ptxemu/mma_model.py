"""The arithmetic of the tensor cores' f32-accumulating MMAs.

The PTX ISA defines the products and the f32 result of wgmma and mma.sync
with bf16/f16 inputs but not the order or precision of the sums inside
one instruction. What the H100 does, found by scripts/gpu/wgmma_numerics.cu
(2.9 million results of wgmma.m64n16k16 and mma.sync.m16n8k16, bf16 and
f16, seven input distributions: normal, wide exponent ranges, cancelling,
tiny and huge addends, chained instructions, no addend) and matched bit
for bit by the 'h100' model below (scripts/gpu/wgmma_numerics_fit.py):

- the 16 products of a k16 step and the addend C are one fused sum;
- each product is placed by the sum of its factors' exponents (not by its
  own leading bit: a product of two significands in [1, 2) may reach 4x
  that), C by its exponent; the largest of these, e, fixes a grid of
  2^(e - 25), and every term is truncated toward zero to that grid;
- the exact sum of the truncated terms is rounded to f32 toward zero;
- a K = 32 product of two instructions (or of chained k16 steps) is two
  such sums, the first rounded to f32 before the second adds to it.

Both instructions behave the same. Not covered by the probe: subnormal
inputs (placed here at their format's minimum exponent, as an exponent
field of 0 reads), infinities and NaNs (summed in f64, giving IEEE's
results), and a negative zero sum (given as +0).

A model: `block` products fused per step with the running sum, `bits`
kept below the largest exponent, `rounding` of each step's sum ('rz' or
'rn'), `align` 'exponents' (as above) or 'lead' (by each term's leading
bit).
"""
import numpy as np

from . import numerics as fp
from .errors import EmulatorError

EMIN = {'bf16': -126, 'f16': -14}


class Model:
    def __init__(self, name, block=16, bits=25, rounding='rz', align='exponents'):
        self.name, self.block, self.bits = name, block, bits
        self.rounding, self.align = rounding, align

    def mma(self, C, A, B, use_c, dtype='bf16'):
        """D (f32 bits, M x N) = C (f32 bits) + A (M x K, f64) * B^T (N x K)."""
        acc = fp.f32(C).astype(np.float64) if use_c else np.zeros(C.shape, dtype=np.float64)
        emin = EMIN.get(dtype, -126)
        ea, eb = _exponents(A, emin), _exponents(B, emin)
        K = A.shape[1]
        At, Bt, eat, ebt = A.T, B.T, ea.T, eb.T
        for k0 in range(0, K, self.block):
            ks = slice(k0, k0 + self.block)
            # (k, M, N): one plane per product, reductions across planes
            prods = At[ks, :, None] * Bt[ks, None, :]
            if self.align == 'exponents':
                place = (eat[ks, :, None] + ebt[ks, None, :]).max(axis=0)
            else:
                place = _exponents(np.abs(prods).max(axis=0), 0)
            acc = self.fused_sum(prods, acc, place)
        return _as_f32_bits(acc)

    def fused_sum(self, prods, acc, place):
        """One step: products (k, M, N) and the running sum (M, N) on the
        grid 2^(max(place, exponent of acc) - bits), truncated, summed
        exactly, rounded to f32 (returned as exactly representable f64)."""
        with np.errstate(all='ignore'):
            finite = np.isfinite(prods).all(axis=0) & np.isfinite(acc)
            e = np.maximum(place, _exponents(acc, -1000))
            # all terms zero (every placement at ZERO or below): any grid
            e = np.where(finite & (e > ZERO // 2), e, 0)
            scale = np.ldexp(1.0, self.bits - e)
            q = np.trunc(prods * scale).sum(axis=0) + np.trunc(acc * scale)
            exact = q / scale            # exact: |q| < 2^(bits + 7)
        r = fp.round_f64_to_f32(exact, self.rounding)
        out = fp.f32(r).astype(np.float64)
        if not finite.all():
            with np.errstate(all='ignore'):
                naive = prods.sum(axis=0) + acc
            out = np.where(finite, out, naive)
        return out


# The placement of a zero: far below any sum of two real exponents, so that
# a product with a zero factor never sets the grid.
ZERO = -(1 << 30)


def _exponents(x, emin):
    """floor(log2 |x|), at least emin; ZERO for zeros."""
    with np.errstate(all='ignore'):
        _, e = np.frexp(np.where(np.isfinite(x), x, 1.0))
    e = np.maximum(e.astype(np.int64) - 1, emin)
    return np.where(x == 0, ZERO, e)


def _as_f32_bits(acc):
    with np.errstate(all='ignore'):
        bits = acc.astype(np.float32).view(np.uint32)
    return fp.canon_nan32(bits)


MODELS = {
    # The H100's (module docstring), for wgmma and mma.sync alike.
    'h100': Model('h100', block=16, bits=25, rounding='rz', align='exponents'),
    # Nearly exact sums (48 bits below the largest term), rounded once.
    'exact-rn': Model('exact-rn', block=16, bits=48, rounding='rn', align='lead'),
}


def get(name, instruction):
    if name is None:
        name = 'h100'
    if name in MODELS:
        return MODELS[name]
    # "block:bits:rounding[:lead]", e.g. 8:26:rz
    try:
        parts = name.split(':')
        block, bits, rounding = parts[:3]
        align = parts[3] if len(parts) > 3 else 'exponents'
        if int(bits) > 48 or rounding not in ('rz', 'rn') or align not in ('exponents', 'lead'):
            raise ValueError(name)
        return Model(name, int(block), int(bits), rounding, align)
    except ValueError:
        raise EmulatorError('unknown MMA model %r (known: %s, or block:bits:rz|rn[:lead])'
                            % (name, ', '.join(MODELS)))
