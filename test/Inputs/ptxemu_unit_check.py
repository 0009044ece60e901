#!/usr/bin/env python3
"""Unit checks of the PTX emulator's pieces (tools/ptx-emulator/ptxemu)
against independent references: exact rational arithmetic for the f32
operations, a direct im2col for TMA's im2col boxes, the byte permutation
the H100 showed for the 128-byte swizzle. Prints one line per check and
'all checks passed'; exit status 1 on the first failure.
"""
import fractions
import random
import struct
import sys

import numpy as np

from ptxemu import mma_model
from ptxemu.memory import GlobalMemory
from ptxemu import numerics as fp
from ptxemu.tma import TensorMap, Tma, swizzle


def f32bits(x):
    return struct.unpack('<I', struct.pack('<f', x))[0]


def exact_round32(q, mode):
    """The f32 of rational q rounded with mode (normal range only)."""
    if q == 0:
        return 0.0
    sign = -1 if q < 0 else 1
    a = abs(q)
    e = a.numerator.bit_length() - a.denominator.bit_length()
    while fractions.Fraction(2) ** e > a:
        e -= 1
    while fractions.Fraction(2) ** (e + 1) <= a:
        e += 1
    ulp = fractions.Fraction(2) ** (e - 23)
    n, r = divmod(a, ulp)
    if mode == 'rn':
        if r * 2 > ulp or (r * 2 == ulp and n % 2):
            n += 1
    elif mode == 'rz':
        pass
    elif mode == 'rm':
        n += 1 if (sign < 0 and r) else 0
    elif mode == 'rp':
        n += 1 if (sign > 0 and r) else 0
    return float(sign * n * ulp)


def check(name, ok):
    print('%s: %s' % (name, 'ok' if ok else 'FAILED'))
    if not ok:
        sys.exit(1)


def check_fma():
    rng = random.Random(3)
    bad = 0
    for _ in range(3000):
        vals = [rng.uniform(-1, 1) * 2.0 ** rng.randint(-20, 20) for _ in range(3)]
        if rng.random() < 0.3:   # near-cancelling addend
            vals[2] = -vals[0] * vals[1] * (1 + rng.uniform(-1e-6, 1e-6))
        a, b, c = (np.float32(v) for v in vals)
        q = fractions.Fraction(float(a)) * fractions.Fraction(float(b)) + fractions.Fraction(float(c))
        for mode in ('rn', 'rz', 'rm', 'rp'):
            got = fp.f32(fp.fma32(np.array([a]).view(np.uint32), np.array([b]).view(np.uint32),
                                  np.array([c]).view(np.uint32), mode))[0]
            if float(got) != exact_round32(q, mode):
                bad += 1
    check('fma.{rn,rz,rm,rp}.f32 against exact rationals (12000 cases)', bad == 0)


def check_add_div():
    rng = random.Random(4)
    bad = 0
    for _ in range(2000):
        a = np.float32(rng.uniform(-1, 1) * 2.0 ** rng.randint(-10, 10))
        b = np.float32(rng.uniform(-1, 1) * 2.0 ** rng.randint(-10, 10))
        for op, q in (('add', fractions.Fraction(float(a)) + fractions.Fraction(float(b))),
                      ('div', fractions.Fraction(float(a)) / fractions.Fraction(float(b)))):
            for mode in ('rn', 'rz', 'rm', 'rp'):
                got = fp.f32(fp.binop32(op, np.array([a]).view(np.uint32),
                                        np.array([b]).view(np.uint32), mode))[0]
                if float(got) != exact_round32(q, mode):
                    bad += 1
    check('add and div .{rn,rz,rm,rp}.f32 against exact rationals (16000 cases)', bad == 0)


def check_bf16():
    # ties to even, and the carry into the exponent
    cases = {0x3F808000: 0x3F80, 0x3F818000: 0x3F82, 0x3F80C000: 0x3F81, 0x3FFF8000: 0x4000,
             0x7F7FFFFF: 0x7F80, 0x80000000: 0x8000}
    got = fp.f32_to_bf16(np.array(list(cases), dtype=np.uint32))
    check('cvt.rn.bf16.f32 ties and carries', list(got) == list(cases.values()))


def check_swizzle():
    # 16-byte chunk j of 128-byte row i of a 1024-byte-aligned box lands at
    # chunk j ^ (i % 8) (TOOLCHAIN.md, checked on the H100)
    ok = all(swizzle(1024 + i * 128 + j * 16, 128) == 1024 + i * 128 + ((j ^ (i % 8)) * 16)
             for i in range(16) for j in range(8))
    check('128-byte swizzle of TMA boxes', ok)


class _FakeCtx:
    def __init__(self, mem):
        self.mem = mem


class _Mem:
    def __init__(self, data, base):
        self.buf = data
        self.base = base

    def check(self, addrs, n, what):
        pass


def encode_im2col(address, dims, strides, lower, upper, cpp, ppc, estrides, swz=3):
    raw = bytearray(128)
    struct.pack_into('<I', raw, 0, 0x4D543343)
    struct.pack_into('<7B', raw, 4, 2, len(dims), 9, 0, swz, 0, 0)
    struct.pack_into('<I', raw, 12, cpp)
    struct.pack_into('<Q', raw, 16, address)
    struct.pack_into('<5I', raw, 24, *([d - 1 for d in dims] + [0] * (5 - len(dims))))
    struct.pack_into('<5B', raw, 44, *(estrides + [1] * (5 - len(estrides))))
    struct.pack_into('<H', raw, 54, ppc)
    struct.pack_into('<3h', raw, 56, *(lower + [0] * (3 - len(lower))))
    struct.pack_into('<3h', raw, 62, *(upper + [0] * (3 - len(upper))))
    struct.pack_into('<4Q', raw, 72, *(strides + [0] * (4 - len(strides))))
    return TensorMap(raw, 'test')


def check_im2col():
    """Rows of an im2col box against a direct im2col of an NDHWC tensor
    (TOOLCHAIN.md's corners and coordinates for a 3-D convolution)."""
    rng = np.random.default_rng(5)
    n, d, h, w, c = 2, 5, 6, 7, 16
    q, r, s = 3, 2, 3
    st = (2, 1, 2)
    dil = (1, 2, 1)
    pad = ((1, 1), (1, 0), (2, 1))
    x = rng.integers(1, 60000, size=(n, d, h, w, c)).astype(np.uint16)
    base = 1 << 20
    elem = 2
    strides = [c * elem, w * c * elem, h * w * c * elem, d * h * w * c * elem]
    lower = [-pad[2][0], -pad[1][0], -pad[0][0]]
    upper = [pad[2][1] - (s - 1) * dil[2], pad[1][1] - (r - 1) * dil[1], pad[0][1] - (q - 1) * dil[0]]
    od, oh, ow = ((dim + a + b - dd * (k - 1) - 1) // ss + 1 for dim, (a, b), dd, k, ss in
                  zip((d, h, w), pad, dil, (q, r, s), st))
    ppc = 32
    tm = encode_im2col(base, [c, w, h, d, n], strides, lower, upper, c, ppc,
                       [1, st[2], st[1], st[0], 1])
    tma = Tma.__new__(Tma)
    tma.ctx = _FakeCtx(_Mem(x.view(np.uint8).ravel(), base))
    ok = True
    m_total = n * od * oh * ow
    for m0 in (0, 37, m_total - 5):
        nn, rest = divmod(m0, od * oh * ow)
        dd_, rest = divmod(rest, oh * ow)
        hh, ww = divmod(rest, ow)
        for tap in ((0, 0, 0), (2, 1, 2), (1, 0, 1)):
            coords = [0, ww * st[2] - pad[2][0], hh * st[1] - pad[1][0], dd_ * st[0] - pad[0][0], nn]
            offs = [tap[2] * dil[2], tap[1] * dil[1], tap[0] * dil[0]]
            box = tma.im2col_box(tm, coords, offs, 'test').view(np.uint16).reshape(ppc, c)
            for row in range(ppc):
                m = m0 + row
                want = np.zeros(c, dtype=np.uint16)
                if m < m_total:
                    bn, rest = divmod(m, od * oh * ow)
                    bd, rest = divmod(rest, oh * ow)
                    bh, bw = divmod(rest, ow)
                    zi = bd * st[0] - pad[0][0] + tap[0] * dil[0]
                    yi = bh * st[1] - pad[1][0] + tap[1] * dil[1]
                    xi = bw * st[2] - pad[2][0] + tap[2] * dil[2]
                    if 0 <= zi < d and 0 <= yi < h and 0 <= xi < w:
                        want = x[bn, zi, yi, xi]
                ok &= bool((box[row] == want).all())
    check('TMA im2col boxes against a direct im2col (strides, dilation, padding, tail rows)', ok)


def check_mma_model():
    # One k16 step where truncation matters: products 1 and 2^-26 (placed by
    # exponent sums) plus C = 2^-30: truncated to 2^-25's grid, summed,
    # rounded toward zero -> exactly 1.
    A = np.zeros((64, 16))
    B = np.zeros((16, 16))
    A[0, 0], B[0, 0] = 1.0, 1.0
    A[0, 1], B[0, 1] = 2.0 ** -13, 2.0 ** -13
    C = np.zeros((64, 16), dtype=np.uint32)
    C[0, 0] = f32bits(2.0 ** -30)
    D = mma_model.get('h100', 'wgmma').mma(C, A, B, True, 'bf16')
    check('MMA model: terms below 2^(e-25) are truncated', fp.f32(D)[0, 0] == 1.0)
    # A row of zeros (a padding pixel) against B values >= 1, no addend:
    # zero products never set the grid (no 0 x inf NaN), the sum is +0
    A = np.zeros((64, 16))
    B = np.full((16, 16), 6.0)
    D = mma_model.get('h100', 'wgmma').mma(np.zeros((64, 16), np.uint32), A, B, False, 'bf16')
    check('MMA model: zero rows give zeros', (D == 0).all())


def check_cross_cta_writes():
    # Different bytes of one word written by two CTAs (a packed i8 output
    # split across blocks) do not race; one byte written by both does.
    mem = GlobalMemory(bytearray(1 << 12), 0x10000)
    mem.store(np.array([0x10000, 0x10001]), np.array([1, 2]), np.uint8, 'st', writer=0)
    mem.store(np.array([0x10002, 0x10003]), np.array([3, 4]), np.uint8, 'st', writer=1)
    mem.store(np.array([0x10010]), np.array([5]), np.uint32, 'st', writer=0)
    check('cross-CTA writes: different bytes of one word', not mem.conflicts)
    mem.store(np.array([0x10013]), np.array([6]), np.uint8, 'st', writer=1)
    check('cross-CTA writes: one byte by two CTAs',
          [c[0] for c in mem.conflicts] == [0x10013])


if __name__ == '__main__':
    check_fma()
    check_add_div()
    check_bf16()
    check_swizzle()
    check_im2col()
    check_mma_model()
    check_cross_cta_writes()
    print('all checks passed')
