"""Floating-point arithmetic as the PTX ISA defines it, on NumPy arrays of
bit patterns (uint16 for f16/bf16, uint32 for f32, uint64 for f64).

NumPy's float32 operations are IEEE 754 round-to-nearest-even, which is what
PTX's .rn arithmetic is. What NumPy lacks is written here: a correctly
rounded fused multiply-add, the directed roundings, bf16 and the 8- and
4-bit formats, flush-to-zero, and PTX's min/max and conversion rules.
"""
import numpy as np

F32_SIGN = np.uint32(0x80000000)
F32_ABS = np.uint32(0x7FFFFFFF)
F32_QNAN = np.uint32(0x7FFFFFFF)   # PTX's canonical NaN for f32 results


def f32(bits):
    return np.asarray(bits, dtype=np.uint32).view(np.float32)


def b32(values):
    return np.asarray(values, dtype=np.float32).view(np.uint32)


def f64(bits):
    return np.asarray(bits, dtype=np.uint64).view(np.float64)


def b64(values):
    return np.asarray(values, dtype=np.float64).view(np.uint64)


def ftz32(bits):
    """Flushes f32 subnormals to zero of the same sign."""
    bits = np.asarray(bits, dtype=np.uint32)
    sub = ((bits & np.uint32(0x7F800000)) == 0) & ((bits & np.uint32(0x007FFFFF)) != 0)
    if sub.any():
        bits = np.where(sub, bits & F32_SIGN, bits)
    return bits


def canon_nan32(bits):
    """PTX arithmetic returns the canonical NaN 0x7fffffff."""
    x = f32(bits)
    nan = np.isnan(x)
    if nan.any():
        bits = np.where(nan, F32_QNAN, bits)
    return bits


def round_f64_to_f32(values, mode='rn'):
    """f64 values to f32 bits with rounding `mode` (rn, rz, rm, rp).

    For rn NumPy's conversion is exact. The directed modes compare the
    nearest f32 with the exact value and step one ulp where it went the
    wrong way."""
    values = np.asarray(values, dtype=np.float64)
    with np.errstate(over='ignore', invalid='ignore'):
        near = values.astype(np.float32)
    if mode == 'rn':
        return near.view(np.uint32)
    back = near.astype(np.float64)
    if mode == 'odd':
        # round to odd: an inexact result takes the neighbour with an odd
        # last bit (exact for a later rounding to fewer bits)
        inexact = np.isfinite(values) & (back != values)
        out = near.copy()
        even = (near.view(np.uint32) & np.uint32(1)) == 0
        fix = inexact & even
        if fix.any():
            toward = np.where(values[fix] > back[fix], np.float32(np.inf), np.float32(-np.inf))
            out[fix] = np.nextafter(near[fix], toward)
        return out.view(np.uint32)
    if mode == 'rz':
        wrong = np.abs(back) > np.abs(values)
        direction = np.zeros_like(values)
    elif mode == 'rm':
        wrong = back > values
        direction = np.full_like(values, -np.inf)
    elif mode == 'rp':
        wrong = back < values
        direction = np.full_like(values, np.inf)
    else:
        raise ValueError(mode)
    wrong &= np.isfinite(values)
    if mode == 'rz':
        # overflow to inf under rz gives the largest finite value
        wrong |= np.isinf(near) & np.isfinite(values)
    out = near.copy()
    if wrong.any():
        out[wrong] = np.nextafter(near[wrong], direction[wrong].astype(np.float32))
    return out.view(np.uint32)


def _to_odd(s, err):
    """Round-to-odd correction of s = fl64(exact) given err = exact - s:
    with at least two more bits than the target, rounding the result to
    the target is the correctly rounded exact value."""
    inexact = (err != 0) & np.isfinite(s)
    if inexact.any():
        even = (s.view(np.uint64) & np.uint64(1)) == 0
        fix = inexact & even
        if fix.any():
            s = s.copy()
            toward = np.where(err > 0, np.inf, -np.inf)
            s[fix] = np.nextafter(s[fix], toward[fix])
    return s


def fma32(a_bits, b_bits, c_bits, mode='rn', ftz=False):
    """fma.{rn,rz,rm,rp}.f32: a*b+c rounded once.

    a*b is exact in f64; the sum is made exact by TwoSum and rounded to odd
    in f64, so the final conversion rounds once."""
    if ftz:
        a_bits, b_bits, c_bits = ftz32(a_bits), ftz32(b_bits), ftz32(c_bits)
    a = f32(a_bits).astype(np.float64)
    b = f32(b_bits).astype(np.float64)
    c = f32(c_bits).astype(np.float64)
    with np.errstate(all='ignore'):
        p = a * b
        s = p + c
        bb = s - p
        err = (p - (s - bb)) + (c - bb)
        err = np.where(np.isfinite(s), err, 0.0)
    s = _to_odd(s, err)
    out = round_f64_to_f32(s, mode)
    # exact zero results: IEEE sign rules (x*y + z with x*y = -z gives +0
    # under rn/rz/rp, -0 under rm); NumPy's f64 sum already follows them.
    if ftz:
        out = ftz32(out)
    return canon_nan32(out)


def binop32(op, a_bits, b_bits, mode='rn', ftz=False):
    """add/sub/mul/div of f32 with rounding `mode`."""
    if ftz:
        a_bits, b_bits = ftz32(a_bits), ftz32(b_bits)
    a, b = f32(a_bits), f32(b_bits)
    with np.errstate(all='ignore'):
        if mode == 'rn':
            r = {'add': np.add, 'sub': np.subtract, 'mul': np.multiply,
                 'div': np.divide}[op](a, b)
            out = r.view(np.uint32)
        else:
            a64, b64_ = a.astype(np.float64), b.astype(np.float64)
            if op == 'add' or op == 'sub':
                bb = b64_ if op == 'add' else -b64_
                s = a64 + bb
                t = s - a64
                err = (a64 - (s - t)) + (bb - t)
                err = np.where(np.isfinite(s), err, 0.0)
                s = _to_odd(s, err)
            elif op == 'mul':
                s = a64 * b64_          # exact
            else:
                s = a64 / b64_
                # remainder sign gives the direction of the rounding error
                rem = np.where(np.isfinite(s) & (b64_ != 0),
                               _fma64_residual(s, b64_, a64), 0.0)
                s = _to_odd(s, -rem)
            out = round_f64_to_f32(s, mode)
    if ftz:
        out = ftz32(out)
    return canon_nan32(out)


def _fma64_residual(q, b, a):
    """q*b - a exactly (q*b split by Veltkamp), for the division's
    rounding direction."""
    def split(x):
        c = x * 134217729.0
        hi = c - (c - x)
        return hi, x - hi
    qh, ql = split(q)
    bh, bl = split(b)
    p = q * b
    e = ((qh * bh - p) + qh * bl + ql * bh) + ql * bl
    return (p - a) + e


def minmax32(op, a_bits, b_bits, nan_propagate=False, ftz=False):
    """min/max.f32: -0 < +0; a NaN operand is ignored (the other returned)
    unless .NaN, where any NaN gives the canonical NaN."""
    if ftz:
        a_bits, b_bits = ftz32(a_bits), ftz32(b_bits)
    a, b = f32(a_bits), f32(b_bits)
    an, bn = np.isnan(a), np.isnan(b)
    # order by a key where -0 < +0: compare the floats, break zero ties by sign
    if op == 'max':
        pick_a = (a > b) | ((a == b) & ((a_bits & F32_SIGN) == 0))
    else:
        pick_a = (a < b) | ((a == b) & ((a_bits & F32_SIGN) != 0))
    out = np.where(pick_a, a_bits, b_bits).astype(np.uint32)
    out = np.where(an & ~bn, b_bits, out)
    out = np.where(bn & ~an, a_bits, out)
    both = an & bn
    if nan_propagate:
        both = an | bn
    out = np.where(both, F32_QNAN, out)
    return out.astype(np.uint32)


# --- 16-bit formats -------------------------------------------------------

def bf16_to_f32(bits16):
    return (np.asarray(bits16, dtype=np.uint32) << np.uint32(16)).astype(np.uint32)


def f32_to_bf16(bits32, mode='rn', satfinite=False):
    """cvt.{rn,rz}[.satfinite].bf16.f32 on bit patterns."""
    bits32 = np.asarray(bits32, dtype=np.uint32)
    x = f32(bits32)
    nan = np.isnan(x)
    if mode == 'rn':
        lsb = (bits32 >> np.uint32(16)) & np.uint32(1)
        r = ((bits32.astype(np.uint64) + np.uint64(0x7FFF) + lsb) >> np.uint64(16)).astype(np.uint32)
    elif mode == 'rz':
        r = bits32 >> np.uint32(16)
    else:
        raise NotImplementedError('bf16 rounding ' + mode)
    r = r & np.uint32(0xFFFF)
    if satfinite:
        inf = (r & np.uint32(0x7FFF)) == np.uint32(0x7F80)
        r = np.where(inf & ~nan, (r & np.uint32(0x8000)) | np.uint32(0x7F7F), r)
    r = np.where(nan, np.uint32(0x7FFF), r)
    return r.astype(np.uint16)


def f16_to_f32(bits16):
    return np.asarray(bits16, dtype=np.uint16).view(np.float16).astype(np.float32).view(np.uint32)


def f32_to_f16(bits32, mode='rn', satfinite=False):
    x = f32(bits32)
    if mode == 'rn':
        with np.errstate(over='ignore'):
            h = x.astype(np.float16)
    elif mode == 'rz':
        with np.errstate(over='ignore'):
            h = x.astype(np.float16)
        back = h.astype(np.float32)
        wrong = np.isfinite(x) & (np.abs(back) > np.abs(x))
        if wrong.any():
            h = h.copy()
            h[wrong] = np.nextafter(h[wrong], np.float16(0))
    else:
        raise NotImplementedError('f16 rounding ' + mode)
    out = h.view(np.uint16).copy()
    if satfinite:
        inf = np.isinf(h) & ~np.isinf(x)
        out = np.where(inf, (out & np.uint16(0x8000)) | np.uint16(0x7BFF), out)
    out = np.where(np.isnan(x), np.uint16(0x7FFF), out)
    return out.astype(np.uint16)


# --- 8- and 4-bit formats (sm100's block-scaled MMA) ----------------------

def _small_float_table(exp_bits, man_bits, bias, finite_max_code=None,
                       has_inf=False, nan_codes=()):
    """Values of every code of a small float format (no sign bit first)."""
    values = []
    for code in range(1 << (exp_bits + man_bits)):
        e = code >> man_bits
        m = code & ((1 << man_bits) - 1)
        if e == 0:
            v = m * 2.0 ** (1 - bias - man_bits)
        else:
            v = (1 + m / (1 << man_bits)) * 2.0 ** (e - bias)
        values.append(v)
    return np.array(values, dtype=np.float64)


E2M1_VALUES = _small_float_table(2, 1, 1)            # 0 .. 6
E4M3_VALUES = _small_float_table(4, 3, 7)            # code 0x7f is NaN


def e2m1_to_f64(codes):
    codes = np.asarray(codes, dtype=np.uint8)
    mag = E2M1_VALUES[codes & 7]
    return np.where(codes & 8, -mag, mag)


def e4m3_to_f64(codes):
    codes = np.asarray(codes, dtype=np.uint8)
    mag = E4M3_VALUES[codes & 0x7F]
    mag = np.where((codes & 0x7F) == 0x7F, np.nan, mag)
    return np.where(codes & 0x80, -mag, mag)


def ue4m3_to_f64(codes):
    """Unsigned E4M3 (the block scales of kind::mxf4nvf4 with scale format
    UE4M3): the sign bit is ignored."""
    codes = np.asarray(codes, dtype=np.uint8) & np.uint8(0x7F)
    return np.where(codes == 0x7F, np.nan, E4M3_VALUES[codes])


def _round_to_table(values, table, satfinite=True):
    """Nearest code (ties to even code) of |values| in a sorted table of a
    format's non-negative values; saturates at the largest."""
    mag = np.abs(values)
    idx = np.searchsorted(table, mag)
    idx = np.clip(idx, 1, len(table) - 1)
    lo, hi = table[idx - 1], table[idx]
    pick_hi = (mag - lo > hi - mag) | ((mag - lo == hi - mag) & (idx % 2 == 0))
    code = np.where(pick_hi, idx, idx - 1)
    code = np.where(mag >= table[-1], len(table) - 1, code)
    return code


def f32_to_e2m1(bits32):
    """cvt.rn.satfinite.e2m1x2.f32 of one value: the 4-bit code."""
    x = f32(bits32).astype(np.float64)
    code = _round_to_table(x, E2M1_VALUES)
    sign = (np.asarray(bits32, dtype=np.uint32) >> np.uint32(31)).astype(np.int64)
    code = code | (sign << 3)
    return code.astype(np.uint8)


def f32_to_e4m3(bits32):
    """cvt.rn.satfinite.e4m3x2.f32 of one value: the 8-bit code (NaN stays
    NaN, everything else saturates to +-448)."""
    x = f32(bits32).astype(np.float64)
    table = E4M3_VALUES[:0x7F]   # 0x7f is NaN
    code = _round_to_table(x, table)
    sign = (np.asarray(bits32, dtype=np.uint32) >> np.uint32(31)).astype(np.int64)
    code = code | (sign << 7)
    code = np.where(np.isnan(x), 0x7F, code)
    return code.astype(np.uint8)
