"""The arithmetic of the tensor cores' f32-accumulating MMAs.

The PTX ISA defines the products and the f32 result but not the order or
precision of the sums inside one MMA. The models here are parametrized the
way the hardware literature describes tensor cores (products exact; a
block of products and the addend aligned to the largest exponent among
them, with a fixed number of bits kept below it and the rest truncated;
the exact sum of the aligned terms rounded once to f32), and the default
is the one that reproduces the H100 bit for bit on the probe data of
scripts/gpu/wgmma_numerics.cu (see README.md).

A model: `block` products fused per step with the running sum, `bits`
significand bits kept per aligned term (counting the leading bit of the
largest term), `rounding` of each step's sum ('rz' or 'rn').
"""
import numpy as np

from . import numerics as fp
from .errors import EmulatorError


class Model:
    def __init__(self, name, block=16, bits=25, rounding='rz'):
        self.name, self.block, self.bits, self.rounding = name, block, bits, rounding

    def mma(self, C, A, B, use_c):
        """D (f32 bits, M x N) = C (f32 bits) + A (M x K, f64) * B^T (N x K)."""
        acc = fp.f32(C).astype(np.float64) if use_c else np.zeros(C.shape, dtype=np.float64)
        K = A.shape[1]
        At, Bt = A.T, B.T
        for k0 in range(0, K, self.block):
            # (k, M, N): one plane per product, reductions across planes
            prods = At[k0:k0 + self.block, :, None] * Bt[k0:k0 + self.block, None, :]
            acc = self.fused_sum(prods, acc)
        return _as_f32_bits(acc)

    def fused_sum(self, prods, acc):
        """One step: the products (k, M, N) and the running sum (M, N) as
        aligned fixed-point terms, summed exactly, rounded to f32 (returned
        as exactly representable f64)."""
        with np.errstate(all='ignore'):
            big = np.maximum(np.abs(prods).max(axis=0), np.abs(acc))
            finite = np.isfinite(big) & np.isfinite(prods).all(axis=0) & np.isfinite(acc)
            _, e = np.frexp(np.where(finite, big, 1.0))
            # the grid: `bits` bits from the largest term's leading bit
            scale = np.ldexp(1.0, self.bits - e)
            q = np.trunc(prods * scale).sum(axis=0) + np.trunc(acc * scale)
            exact = q / scale            # exact: |q| < 2^(bits + 5)
        r = fp.round_f64_to_f32(exact, self.rounding)
        out = fp.f32(r).astype(np.float64)
        if not finite.all():
            with np.errstate(all='ignore'):
                naive = prods.sum(axis=0) + acc
            out = np.where(finite, out, naive)
        return out


def _as_f32_bits(acc):
    with np.errstate(all='ignore'):
        bits = acc.astype(np.float32).view(np.uint32)
    return fp.canon_nan32(bits)


MODELS = {
    # the default: the probe's verdict on the H100 (README: "wgmma numerics")
    'h100': Model('h100', block=16, bits=25, rounding='rz'),
    # nearly exact sums (48 bits below the largest term), rounded once
    'exact-rn': Model('exact-rn', block=16, bits=48, rounding='rn'),
}


def get(name, instruction):
    if name is None:
        name = 'h100'
    if name in MODELS:
        return MODELS[name]
    # "block:bits:rounding", e.g. 8:26:rz
    try:
        block, bits, rounding = name.split(':')
        if int(bits) > 48 or rounding not in ('rz', 'rn'):
            raise ValueError(name)
        return Model(name, int(block), int(bits), rounding)
    except ValueError:
        raise EmulatorError('unknown MMA model %r (known: %s, or block:bits:rz|rn)'
                            % (name, ', '.join(MODELS)))
