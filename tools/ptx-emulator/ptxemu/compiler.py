"""Instructions to closures over the machine's register arrays.

compile_kernel turns each instruction into a machine.Compiled: the
arithmetic, conversion, memory and control-flow instructions of plain SIMT
code are here; the extensions (sync, tma, wgmma, tcgen05) compile their own.
Every closure takes the indices of the threads that execute it.
"""
import numpy as np

from . import numerics as fp
from .errors import EmulatorError
from .machine import SIGNED, UNSIGNED, Compiled
from .memory import SHARED_GENERIC

ROUNDINGS = ('rn', 'rz', 'rm', 'rp', 'rni', 'rzi', 'rmi', 'rpi')
FLOATS = ('f16', 'bf16', 'f32', 'f64')
TYPE_WIDTH = {'b8': 8, 'u8': 8, 's8': 8, 'b16': 16, 'u16': 16, 's16': 16,
              'f16': 16, 'bf16': 16, 'b32': 32, 'u32': 32, 's32': 32,
              'f32': 32, 'b64': 64, 'u64': 64, 's64': 64, 'f64': 64,
              'pred': 1, 'f16x2': 32, 'bf16x2': 32, 'f32x2': 64, 'b128': 128}

# Instructions that approximate (the ISA bounds their error, it does not
# define their bits): computed correctly rounded here, and listed.
APPROXIMATE = set()


def compile_kernel(ctx):
    from . import ampere, sync, tcgen05, tma, wgmma
    for ext in (sync, tma, wgmma, ampere, tcgen05):
        ext.install(ctx)
    code = []
    for i, inst in enumerate(ctx.kernel.insts):
        c = None
        for ext in ctx.extensions.values():
            c = ext.compile(inst)
            if c is not None:
                break
        if c is None:
            c = compile_basic(ctx, inst)
        code.append(c)
    return code


def _type(inst):
    """The instruction's operand type: its last modifier that is a type."""
    for m in reversed(inst.mods):
        if m in TYPE_WIDTH:
            return m
    raise EmulatorError('%r: no type' % inst)


def _signed(ty):
    return ty[0] == 's'


def _as_signed(v, w):
    return v.view(SIGNED[w]) if w in SIGNED else v


def compile_basic(ctx, inst):
    op = inst.mods[0]
    what = repr(inst)
    if op in ('bra', 'brx'):
        target = inst.args[0].name
        if target not in ctx.kernel.labels:
            raise EmulatorError('%s: unknown label %s' % (what, target))
        return Compiled('bra', inst, target=ctx.kernel.labels[target])
    if op in ('ret', 'exit', 'trap'):
        if op == 'trap':
            def trap(idx):
                raise EmulatorError('%s executed' % what)
            return Compiled('alu', inst, fn=trap)
        return Compiled('ret', inst)
    fn = _ALU.get(op)
    if fn is None:
        raise EmulatorError('instruction not emulated: %s' % what)
    return Compiled('alu', inst, fn=fn(ctx, inst, what))


# --- moves and conversions -----------------------------------------------------

def _mov(ctx, inst, what):
    d, a = inst.args
    ty = _type(inst)
    w = TYPE_WIDTH[ty]
    if d.kind == 'vec':           # unpack a into pieces
        n = len(d.items)
        piece = w // n
        src = ctx.reader(a, w, what)
        writers = [ctx.writer(x, what) for x in d.items]
        mask = (1 << piece) - 1
        dt = UNSIGNED[w]

        def unpack(idx):
            v = src(idx)
            for i, wr in enumerate(writers):
                wr(idx, (v >> dt(i * piece)) & dt(mask))
        return unpack
    wr = ctx.writer(d, what)
    if a.kind == 'vec':           # pack pieces into d
        n = len(a.items)
        piece = w // n
        readers = [ctx.reader(x, piece, what) for x in a.items]
        dt = UNSIGNED[w]

        def pack(idx):
            out = np.zeros(idx.size, dtype=dt)
            for i, rd in enumerate(readers):
                out |= rd(idx).astype(dt) << dt(i * piece)
            wr(idx, out)
        return pack
    src = ctx.reader(a, w, what)
    return lambda idx: wr(idx, src(idx))


def _cvta(ctx, inst, what):
    d, a = inst.args
    src = ctx.reader(a, 64, what)
    wr = ctx.writer(d, what)
    to = 'to' in inst.mods
    space = [m for m in inst.mods if m.startswith('shared') or m in ('global', 'const', 'local', 'param')]
    space = space[0] if space else 'global'
    if space.startswith('shared'):
        base = np.uint64(SHARED_GENERIC)
        if to:
            def to_shared(idx):
                v = src(idx)
                if ((v < base) | (v >= base + np.uint64(1 << 32))).any():
                    raise EmulatorError('%s: a generic address that is not shared memory' % what)
                wr(idx, v - base)
            return to_shared
        return lambda idx: wr(idx, src(idx) + base)
    return lambda idx: wr(idx, src(idx))


def _cvt(ctx, inst, what):
    mods = inst.mods[1:]
    rnd = [m for m in mods if m in ROUNDINGS]
    rnd = rnd[0] if rnd else None
    ftz = 'ftz' in mods
    sat = 'sat' in mods
    satfinite = 'satfinite' in mods
    relu = 'relu' in mods
    types = [m for m in mods if m in TYPE_WIDTH or m in ('e4m3x2', 'e5m2x2', 'e2m1x2', 'e2m3x2',
                                                         'e3m2x2', 'ue8m0x2')]
    if len(types) != 2:
        raise EmulatorError('%s: cannot read the conversion types' % what)
    dty, aty = types
    d = inst.args[0]
    wr = ctx.writer(d, what)
    # packed pairs from two f32 sources: d.hi = cvt(a), d.lo = cvt(b)
    if dty in ('bf16x2', 'f16x2', 'e4m3x2', 'e2m1x2') and aty == 'f32':
        ra, rb = ctx.reader(inst.args[1], 32, what), ctx.reader(inst.args[2], 32, what)
        def one(v):
            if relu:
                v = np.where(fp.f32(v) < 0, np.uint32(0), v).astype(np.uint32)
                v = np.where(np.isnan(fp.f32(v)), fp.F32_QNAN, v).astype(np.uint32)
            if dty == 'bf16x2':
                return fp.f32_to_bf16(v, rnd or 'rn', satfinite).astype(np.uint32), 16
            if dty == 'f16x2':
                return fp.f32_to_f16(v, rnd or 'rn', satfinite).astype(np.uint32), 16
            if dty == 'e4m3x2':
                return fp.f32_to_e4m3(v).astype(np.uint32), 8
            return fp.f32_to_e2m1(v).astype(np.uint32), 4

        def pack2(idx):
            hi, bits = one(ra(idx))
            lo, _ = one(rb(idx))
            wr(idx, (hi << np.uint32(bits)) | lo)
        return pack2
    a = inst.args[1]
    aw, dw = TYPE_WIDTH[aty], TYPE_WIDTH[dty]
    src = ctx.reader(a, aw, what)
    afloat, dfloat = aty in FLOATS, dty in FLOATS
    if not afloat and not dfloat:
        def int_int(idx):
            v = src(idx)
            if _signed(aty):
                v = _as_signed(v, aw).astype(np.int64)
            else:
                v = v.astype(np.uint64)
            if sat:
                lo, hi = _int_range(dty)
                v = np.clip(v.astype(np.int64) if _signed(aty) else v.astype(np.float64), lo, hi)
                v = v.astype(np.int64)
            wr(idx, v.astype(SIGNED[64]).view(np.uint64).astype(UNSIGNED[dw])
               if v.dtype.kind == 'i' else v.astype(UNSIGNED[dw]))
        return int_int
    if afloat and dfloat:
        return _cvt_float_float(ctx, src, wr, aty, dty, rnd, ftz, sat, satfinite, relu, what)
    if not afloat:
        # integer to float
        mode = rnd or 'rn'

        def int_float(idx):
            v = src(idx)
            if _signed(aty):
                x = _as_signed(v, aw).astype(np.float64)
            else:
                x = v.astype(np.float64)
            if aw == 64 and (np.abs(x) >= 2.0 ** 53).any():
                raise EmulatorError('%s: 64-bit integers beyond 2^53' % what)
            if dty == 'f32':
                out = fp.round_f64_to_f32(x, mode)
                if sat:
                    out = _sat32(out)
            elif dty == 'f64':
                out = x.view(np.uint64)
            elif dty == 'f16':
                out = fp.f32_to_f16(fp.round_f64_to_f32(x, 'rn'), 'rn')
            else:
                out = fp.f32_to_bf16(fp.round_f64_to_f32(x, 'rn'), 'rn')
            wr(idx, out)
        return int_float
    # float to integer: round per the integer rounding, saturate, NaN -> 0
    mode = rnd or 'rzi'

    def float_int(idx):
        v = src(idx)
        if aty == 'f32':
            if ftz:
                v = fp.ftz32(v)
            x = fp.f32(v).astype(np.float64)
        elif aty == 'f64':
            x = fp.f64(v)
        elif aty == 'f16':
            x = fp.f32(fp.f16_to_f32(v)).astype(np.float64)
        else:
            x = fp.f32(fp.bf16_to_f32(v)).astype(np.float64)
        r = {'rni': np.rint, 'rzi': np.trunc, 'rmi': np.floor, 'rpi': np.ceil}[mode](x)
        lo, hi = _int_range(dty)
        r = np.where(np.isnan(r), 0, np.clip(r, lo, hi))
        if _signed(dty):
            out = r.astype(np.int64).view(np.uint64).astype(UNSIGNED[dw])
        else:
            out = r.astype(np.uint64).astype(UNSIGNED[dw])
        wr(idx, out)
    return float_int


def _int_range(ty):
    w = TYPE_WIDTH[ty]
    if _signed(ty):
        return -(1 << (w - 1)), (1 << (w - 1)) - 1
    return 0, (1 << w) - 1


def _sat32(bits):
    x = fp.f32(bits)
    y = np.where(np.isnan(x), np.float32(0), np.clip(x, np.float32(0), np.float32(1)))
    return y.astype(np.float32).view(np.uint32)


def _cvt_float_float(ctx, src, wr, aty, dty, rnd, ftz, sat, satfinite, relu, what):
    def to32(v):
        if aty == 'f32':
            return fp.ftz32(v) if ftz else v
        if aty == 'bf16':
            return fp.bf16_to_f32(v)
        if aty == 'f16':
            return fp.f16_to_f32(v)
        return None

    if dty == 'f32' and aty == 'f32':
        mode = rnd

        def f32f32(idx):
            v = to32(src(idx))
            if mode in ('rni', 'rzi', 'rmi', 'rpi'):
                x = fp.f32(v)
                r = {'rni': np.rint, 'rzi': np.trunc, 'rmi': np.floor, 'rpi': np.ceil}[mode](x)
                v = r.astype(np.float32).view(np.uint32)
            if sat:
                v = _sat32(v)
            if ftz:
                v = fp.ftz32(v)
            wr(idx, v)
        return f32f32
    if dty == 'f32':
        def up(idx):
            v = src(idx)
            if aty == 'f64':
                out = fp.round_f64_to_f32(fp.f64(v), rnd or 'rn')
            else:
                out = to32(v)
            if sat:
                out = _sat32(out)
            if ftz:
                out = fp.ftz32(out)
            wr(idx, out)
        return up
    if dty == 'f64':
        return lambda idx: wr(idx, fp.f32(to32(src(idx))).astype(np.float64).view(np.uint64))
    if dty in ('bf16', 'f16'):
        conv = fp.f32_to_bf16 if dty == 'bf16' else fp.f32_to_f16

        def down(idx):
            v = to32(src(idx))
            if relu:
                x = fp.f32(v)
                v = np.where(x < 0, np.uint32(0), v).astype(np.uint32)
            if sat:
                v = _sat32(v)
            wr(idx, conv(v, rnd or 'rn', satfinite))
        return down
    raise EmulatorError('%s: conversion %s <- %s' % (what, dty, aty))


# --- integer and float arithmetic ---------------------------------------------

def _arith(ctx, inst, what):
    op = inst.mods[0]
    ty = _type(inst)
    types = [m for m in inst.mods[1:] if m in TYPE_WIDTH]
    if len(types) == 2 and types[0] == 'f32' and types[1] in ('f16', 'bf16'):
        return _mixed_arith(ctx, inst, what, op, types[1])
    if ty == 'f32x2':
        return _f32x2_arith(ctx, inst, what, op)
    if ty in FLOATS or ty in ('f16x2', 'bf16x2'):
        return _float_arith(ctx, inst, what, op, ty)
    return _int_arith(ctx, inst, what, op, ty)


def _int_arith(ctx, inst, what, op, ty):
    w = TYPE_WIDTH[ty]
    mods = inst.mods
    mode = 'wide' if 'wide' in mods else 'hi' if 'hi' in mods else 'lo'
    signed = _signed(ty)
    d = inst.args[0]
    wr = ctx.writer(d, what)
    if ty == 'pred':
        rs = [ctx.reader(a, 1, what) for a in inst.args[1:]]
        f = {'and': np.logical_and, 'or': np.logical_or, 'xor': np.logical_xor}
        if op in f:
            g = f[op]
            return lambda idx: wr(idx, g(rs[0](idx), rs[1](idx)))
        if op == 'not':
            return lambda idx: wr(idx, ~rs[0](idx))
        raise EmulatorError('%s on predicates' % what)
    rs = [ctx.reader(a, w if not (op in ('shl', 'shr', 'bfe') and i > 0) else 32, what)
          for i, a in enumerate(inst.args[1:])]
    dt, st = UNSIGNED[w], SIGNED[w]
    mask64 = (1 << w) - 1

    def sv(v):
        return v.view(st).astype(np.int64) if signed else v.astype(np.int64 if w < 64 else np.uint64)

    if op in ('add', 'sub'):
        sat = 'sat' in mods
        if sat:
            def addsat(idx):
                a, b = sv(rs[0](idx)), sv(rs[1](idx))
                r = a + b if op == 'add' else a - b
                lo, hi = _int_range(ty)
                wr(idx, np.clip(r, lo, hi).astype(st).view(dt))
            return addsat
        if op == 'add':
            return lambda idx: wr(idx, rs[0](idx) + rs[1](idx))
        return lambda idx: wr(idx, rs[0](idx) - rs[1](idx))
    if op in ('mul', 'mad'):
        def product(idx):
            a, b = rs[0](idx), rs[1](idx)
            if mode == 'lo':
                p = a * b
                if op == 'mad':
                    p = p + rs[2](idx)
                return p
            # hi and wide need the full 2w-bit product
            if w <= 32:
                if signed:
                    p = a.view(st).astype(np.int64) * b.view(st).astype(np.int64)
                    p = p.view(np.uint64)
                else:
                    p = a.astype(np.uint64) * b.astype(np.uint64)
                if mode == 'hi':
                    r = (p >> np.uint64(w)).astype(dt)
                    if op == 'mad':
                        r = r + rs[2](idx)
                    return r
                r = p.astype(UNSIGNED[2 * w])
                if op == 'mad':
                    r = r + ctx.reader(inst.args[3], 2 * w, what)(idx)
                return r
            out = []
            for x, y in zip(a.tolist(), b.tolist()):
                if signed:
                    x = x - (1 << 64) if x >> 63 else x
                    y = y - (1 << 64) if y >> 63 else y
                out.append(((x * y) >> 64) & mask64)
            r = np.array(out, dtype=np.uint64)
            if op == 'mad':
                r = r + rs[2](idx)
            return r
        return lambda idx: wr(idx, product(idx))
    if op in ('div', 'rem'):
        def divrem(idx):
            a, b = rs[0](idx), rs[1](idx)
            if (b == 0).any():
                ctx.hz.add('integer divisions by zero', what)
                b = np.where(b == 0, dt(1), b)
            if signed:
                x, y = a.view(st).astype(np.int64), b.view(st).astype(np.int64)
                q = np.abs(x) // np.abs(y)
                q = np.where((x < 0) != (y < 0), -q, q)
                r = q if op == 'div' else x - q * y
                return r.astype(st).view(dt)
            return (a // b) if op == 'div' else (a % b)
        return lambda idx: wr(idx, divrem(idx))
    if op in ('min', 'max'):
        g = np.minimum if op == 'min' else np.maximum

        def minmax(idx):
            vals = [r(idx).view(st) if signed else r(idx) for r in rs]
            out = vals[0]
            for v in vals[1:]:
                out = g(out, v)
            return out.view(dt) if signed else out
        return lambda idx: wr(idx, minmax(idx))
    if op == 'abs':
        return lambda idx: wr(idx, np.abs(rs[0](idx).view(st)).view(dt))
    if op == 'neg':
        return lambda idx: wr(idx, (dt(0) - rs[0](idx)))
    if op in ('and', 'or', 'xor'):
        g = {'and': np.bitwise_and, 'or': np.bitwise_or, 'xor': np.bitwise_xor}[op]
        return lambda idx: wr(idx, g(rs[0](idx), rs[1](idx)))
    if op == 'not':
        return lambda idx: wr(idx, ~rs[0](idx))
    if op == 'cnot':
        return lambda idx: wr(idx, (rs[0](idx) == 0).astype(dt))
    if op == 'shl':
        def shl(idx):
            a, s = rs[0](idx), rs[1](idx)
            big = s >= w
            r = a << np.minimum(s, w - 1).astype(dt)
            return np.where(big, dt(0), r)
        return lambda idx: wr(idx, shl(idx))
    if op == 'shr':
        def shr(idx):
            a, s = rs[0](idx), rs[1](idx)
            s = np.minimum(s, w - 1 if signed else w).astype(dt)
            if signed:
                return (a.view(st) >> s.view(st)).view(dt)
            big = s >= w
            return np.where(big, dt(0), a >> np.minimum(s, w - 1))
        return lambda idx: wr(idx, shr(idx))
    if op == 'bfe':
        def bfe(idx):
            a = rs[0](idx).astype(np.uint64)
            pos = (rs[1](idx) & np.uint32(0xFF)).astype(np.int64)
            ln = (rs[2](idx) & np.uint32(0xFF)).astype(np.int64)
            out = np.zeros(idx.size, dtype=np.uint64)
            for i in range(idx.size):
                p, l, x = int(pos[i]), int(ln[i]), int(a[i])
                if l == 0:
                    v = 0
                else:
                    v = (x >> min(p, w)) & ((1 << l) - 1) if p < w else 0
                    if signed:
                        msb = min(p + l - 1, w - 1)
                        sbit = (x >> msb) & 1 if p < w else (x >> (w - 1)) & 1
                        if l < w and sbit:
                            v |= (mask64 << l) & mask64
                        if p >= w:
                            v = mask64 if sbit else 0
                out[i] = v & mask64
            return out.astype(dt)
        return lambda idx: wr(idx, bfe(idx))
    if op == 'bfi':
        def bfi(idx):
            a, b = rs[0](idx).astype(np.uint64), rs[1](idx).astype(np.uint64)
            pos = (rs[2](idx) & np.uint32(0xFF)).astype(np.int64)
            ln = (rs[3](idx) & np.uint32(0xFF)).astype(np.int64)
            out = np.empty(idx.size, dtype=np.uint64)
            for i in range(idx.size):
                p, l = int(pos[i]), int(ln[i])
                x, y = int(a[i]), int(b[i])
                if l == 0 or p >= w:
                    out[i] = y
                    continue
                l = min(l, w - p)
                m = ((1 << l) - 1) << p
                out[i] = (y & ~m & mask64) | ((x << p) & m)
            return out.astype(dt)
        return lambda idx: wr(idx, bfi(idx))
    if op == 'popc':
        return lambda idx: wr(idx, np.array([bin(int(x)).count('1') for x in rs[0](idx)],
                                            dtype=np.uint32))
    if op == 'clz':
        return lambda idx: wr(idx, np.array([w - int(x).bit_length() for x in rs[0](idx)],
                                            dtype=np.uint32))
    if op == 'brev':
        return lambda idx: wr(idx, np.array([int('{:0{w}b}'.format(int(x), w=w)[::-1], 2)
                                             for x in rs[0](idx)], dtype=dt))
    raise EmulatorError('instruction not emulated: %s' % what)


def _float_arith(ctx, inst, what, op, ty):
    mods = inst.mods
    rnd = [m for m in mods if m in ROUNDINGS]
    mode = rnd[0] if rnd else 'rn'
    ftz = 'ftz' in mods
    sat = 'sat' in mods
    d = inst.args[0]
    wr = ctx.writer(d, what)
    if ty == 'f32':
        rs = [ctx.reader(a, 32, what) for a in inst.args[1:]]

        def finish(r):
            if sat:
                r = _sat32(r)
            return r
        if op in ('add', 'sub', 'mul', 'div'):
            if op == 'div' and ('approx' in mods or 'full' in mods):
                APPROXIMATE.add(inst.op)
            return lambda idx: wr(idx, finish(fp.binop32(op, rs[0](idx), rs[1](idx), mode, ftz)))
        if op in ('fma', 'mad'):
            return lambda idx: wr(idx, finish(fp.fma32(rs[0](idx), rs[1](idx), rs[2](idx), mode, ftz)))
        if op == 'abs':
            return lambda idx: wr(idx, (fp.ftz32(rs[0](idx)) if ftz else rs[0](idx)) & fp.F32_ABS)
        if op == 'neg':
            return lambda idx: wr(idx, (fp.ftz32(rs[0](idx)) if ftz else rs[0](idx)) ^ fp.F32_SIGN)
        if op in ('min', 'max'):
            # sm_100's three-input form folds left: max(max(a, b), c)
            nanp = 'NaN' in mods

            def minmax(idx):
                r = fp.minmax32(op, rs[0](idx), rs[1](idx), nanp, ftz)
                for extra in rs[2:]:
                    r = fp.minmax32(op, r, extra(idx), nanp, ftz)
                return r
            return lambda idx: wr(idx, minmax(idx))
        if op == 'copysign':
            return lambda idx: wr(idx, (rs[0](idx) & fp.F32_SIGN) | (rs[1](idx) & fp.F32_ABS))
        if op in ('rcp', 'sqrt', 'rsqrt', 'ex2', 'lg2', 'sin', 'cos', 'tanh'):
            return _unary_f32(ctx, inst, what, op, mode, ftz, rs[0], wr)
        if op == 'testp':
            raise EmulatorError('instruction not emulated: %s' % what)
    if ty in ('bf16', 'f16', 'bf16x2', 'f16x2'):
        return _half_arith(ctx, inst, what, op, ty, mode, ftz, wr)
    if ty == 'f64':
        rs = [ctx.reader(a, 64, what) for a in inst.args[1:]]
        g = {'add': np.add, 'sub': np.subtract, 'mul': np.multiply, 'div': np.divide}.get(op)
        if g is not None and mode == 'rn':
            return lambda idx: wr(idx, g(fp.f64(rs[0](idx)), fp.f64(rs[1](idx))).view(np.uint64))
        if op == 'neg':
            return lambda idx: wr(idx, rs[0](idx) ^ np.uint64(1 << 63))
        if op == 'abs':
            return lambda idx: wr(idx, rs[0](idx) & np.uint64((1 << 63) - 1))
    raise EmulatorError('instruction not emulated: %s' % what)


def _mixed_arith(ctx, inst, what, op, atype):
    """sm_100's mixed-precision add/sub/fma .f32.{f16,bf16}: the 16-bit
    operands (a; a and b for fma) converted to f32 (exactly), then the f32
    operation: d = cvt(a) + c, cvt(a) - c, cvt(a) * cvt(b) + c."""
    mods = inst.mods
    rnd = [m for m in mods if m in ROUNDINGS]
    mode = rnd[0] if rnd else 'rn'
    sat = 'sat' in mods
    wr = ctx.writer(inst.args[0], what)
    to32 = fp.bf16_to_f32 if atype == 'bf16' else fp.f16_to_f32
    narrow = 2 if op in ('fma', 'mad') else 1
    rs = [ctx.reader(a, 16 if i < narrow else 32, what) for i, a in enumerate(inst.args[1:])]

    def f(idx):
        vals = [to32(r(idx)) if i < narrow else r(idx) for i, r in enumerate(rs)]
        if op in ('add', 'sub'):
            out = fp.binop32(op, vals[0], vals[1], mode)
        elif op in ('fma', 'mad'):
            out = fp.fma32(vals[0], vals[1], vals[2], mode)
        else:
            raise EmulatorError('instruction not emulated: %s' % what)
        wr(idx, _sat32(out) if sat else out)
    return f


def _f32x2_arith(ctx, inst, what, op):
    """sm_100's packed pairs of f32 (add/sub/mul/fma .f32x2 on 64-bit
    registers): each 32-bit half as its own f32 operation."""
    mods = inst.mods
    rnd = [m for m in mods if m in ROUNDINGS]
    mode = rnd[0] if rnd else 'rn'
    ftz = 'ftz' in mods
    wr = ctx.writer(inst.args[0], what)
    rs = [ctx.reader(a, 64, what) for a in inst.args[1:]]
    lo32, hi = np.uint64(0xFFFFFFFF), np.uint64(32)

    def halves(v):
        return (v & lo32).astype(np.uint32), (v >> hi).astype(np.uint32)

    def f(idx):
        parts = [halves(r(idx)) for r in rs]
        out = []
        for i in range(2):
            xs = [p[i] for p in parts]
            if op in ('add', 'sub', 'mul'):
                out.append(fp.binop32(op, xs[0], xs[1], mode, ftz))
            elif op in ('fma', 'mad'):
                out.append(fp.fma32(xs[0], xs[1], xs[2], mode, ftz))
            else:
                raise EmulatorError('instruction not emulated: %s' % what)
        wr(idx, out[0].astype(np.uint64) | (out[1].astype(np.uint64) << hi))
    return f


def _unary_f32(ctx, inst, what, op, mode, ftz, src, wr):
    approx = 'approx' in inst.mods
    if approx:
        APPROXIMATE.add(inst.op)

    def f(idx):
        v = src(idx)
        if ftz:
            v = fp.ftz32(v)
        x = fp.f32(v).astype(np.float64)
        with np.errstate(all='ignore'):
            if op == 'rcp':
                r = 1.0 / x
            elif op == 'sqrt':
                r = np.sqrt(x)
            elif op == 'rsqrt':
                r = 1.0 / np.sqrt(x)
            elif op == 'ex2':
                r = np.exp2(x)
            elif op == 'lg2':
                r = np.log2(x)
            elif op == 'sin':
                r = np.sin(x)
            elif op == 'cos':
                r = np.cos(x)
            else:
                r = np.tanh(x)
        if op in ('rcp', 'sqrt') and not approx:
            # 1/x and sqrt(x) of an f32 rounded from f64 are correctly rounded
            # unless the f64 rounding hit a tie: do them in f32 directly
            xf = fp.f32(v)
            with np.errstate(all='ignore'):
                out = (np.float32(1) / xf if op == 'rcp' else np.sqrt(xf)).view(np.uint32)
            if mode != 'rn':
                out = fp.round_f64_to_f32(r, mode)
        else:
            out = fp.round_f64_to_f32(r, 'rn')
        if ftz:
            out = fp.ftz32(out)
        wr(idx, fp.canon_nan32(out))
    return f


def _half_arith(ctx, inst, what, op, ty, mode, ftz, wr):
    """bf16/f16 (and x2) arithmetic: computed exactly in f64 and rounded
    once to the 16-bit format."""
    pair = ty.endswith('x2')
    base = ty[:-2] if pair else ty
    w = 32 if pair else 16
    rs = [ctx.reader(a, w, what) for a in inst.args[1:]]
    to32 = fp.bf16_to_f32 if base == 'bf16' else fp.f16_to_f32
    back = fp.f32_to_bf16 if base == 'bf16' else fp.f32_to_f16

    def lanes(v):
        if pair:
            return [v & np.uint32(0xFFFF), v >> np.uint32(16)]
        return [v]

    def one(args):
        xs = [fp.f32(to32(a.astype(np.uint16))).astype(np.float64) for a in args]
        with np.errstate(all='ignore'):
            if op == 'add':
                r = xs[0] + xs[1]
            elif op == 'sub':
                r = xs[0] - xs[1]
            elif op == 'mul':
                r = xs[0] * xs[1]
            elif op in ('fma', 'mad'):
                r = xs[0] * xs[1] + xs[2]
            elif op == 'neg':
                r = -xs[0]
            elif op == 'abs':
                r = np.abs(xs[0])
            elif op in ('min', 'max'):
                r = np.fmin(xs[0], xs[1]) if op == 'min' else np.fmax(xs[0], xs[1])
            else:
                raise EmulatorError('instruction not emulated: %s' % what)
        # exact in f64 (products of 8- or 11-bit significands); rounded to
        # odd in f32 first, so that the 16-bit rounding is the only one
        return back(fp.round_f64_to_f32(r, 'odd'), mode if mode in ('rn', 'rz') else 'rn')

    def f(idx):
        vals = [lanes(r(idx)) for r in rs]
        outs = [one([v[i] for v in vals]).astype(np.uint32) for i in range(2 if pair else 1)]
        r = outs[0] if not pair else outs[0] | (outs[1] << np.uint32(16))
        wr(idx, r)
    return f


def _selp(ctx, inst, what):
    ty = _type(inst)
    w = TYPE_WIDTH[ty]
    d, a, b, c = inst.args
    wr = ctx.writer(d, what)
    ra, rb, rc = ctx.reader(a, w, what), ctx.reader(b, w, what), ctx.reader(c, 1, what)
    return lambda idx: wr(idx, np.where(rc(idx), ra(idx), rb(idx)))


def _setp(ctx, inst, what):
    mods = inst.mods
    cmp = mods[1]
    ty = _type(inst)
    w = TYPE_WIDTH[ty]
    combine = [m for m in mods if m in ('and', 'or', 'xor')]
    d = inst.args[0]
    if d.kind == 'reg' and '|' in d.name:
        raise EmulatorError('%s: setp with two destinations' % what)
    wr = ctx.writer(d, what)
    ra, rb = ctx.reader(inst.args[1], w, what), ctx.reader(inst.args[2], w, what)
    rc = ctx.reader(inst.args[3], 1, what) if combine else None
    ftz = 'ftz' in mods
    if ty in FLOATS:
        def conv(v):
            if ty == 'f32':
                return fp.f32(fp.ftz32(v) if ftz else v)
            if ty == 'f64':
                return fp.f64(v)
            return fp.f32(fp.bf16_to_f32(v) if ty == 'bf16' else fp.f16_to_f32(v))

        def fcmp(idx):
            x, y = conv(ra(idx)), conv(rb(idx))
            nan = np.isnan(x) | np.isnan(y)
            base = cmp[:-1] if cmp.endswith('u') and cmp not in ('nan', 'num') else cmp
            with np.errstate(invalid='ignore'):
                r = {'eq': x == y, 'ne': x != y, 'lt': x < y, 'le': x <= y, 'gt': x > y,
                     'ge': x >= y, 'num': ~nan, 'nan': nan}[base]
            if cmp in ('num', 'nan'):
                return r
            if cmp.endswith('u'):
                return r | nan
            return r & ~nan
        f = fcmp
    else:
        signed = _signed(ty) and cmp in ('lt', 'le', 'gt', 'ge')

        def icmp(idx):
            x, y = ra(idx), rb(idx)
            if signed:
                x, y = x.view(SIGNED[w]), y.view(SIGNED[w])
            return {'eq': x == y, 'ne': x != y, 'lt': x < y, 'le': x <= y, 'gt': x > y,
                    'ge': x >= y, 'lo': x < y, 'ls': x <= y, 'hi': x > y, 'hs': x >= y}[cmp]
        f = icmp
    if combine:
        g = {'and': np.logical_and, 'or': np.logical_or, 'xor': np.logical_xor}[combine[0]]
        return lambda idx: wr(idx, g(f(idx), rc(idx)))
    return lambda idx: wr(idx, f(idx))


def _prmt(ctx, inst, what):
    d, a, b, c = inst.args
    mode = [m for m in inst.mods[1:] if m not in ('b32',)]
    if mode:
        raise EmulatorError('%s: prmt mode %s' % (what, mode[0]))
    wr = ctx.writer(d, what)
    ra, rb, rc = (ctx.reader(x, 32, what) for x in (a, b, c))

    def prmt(idx):
        x, y, s = ra(idx).astype(np.uint64), rb(idx).astype(np.uint64), rc(idx)
        bytes8 = x | (y << np.uint64(32))
        out = np.zeros(idx.size, dtype=np.uint32)
        for i in range(4):
            sel = ((s >> np.uint32(4 * i)) & np.uint32(0xF)).astype(np.uint64)
            byte = (bytes8 >> ((sel & np.uint64(7)) * np.uint64(8))) & np.uint64(0xFF)
            sign = (sel & np.uint64(8)) != 0
            byte = np.where(sign, np.where(byte & np.uint64(0x80), np.uint64(0xFF), np.uint64(0)), byte)
            out |= (byte.astype(np.uint32) << np.uint32(8 * i))
        return out
    return lambda idx: wr(idx, prmt(idx))


# --- memory -------------------------------------------------------------------

def _space(inst):
    for m in inst.mods[1:]:
        if m in ('param', 'global', 'local', 'const') or m.startswith('shared'):
            return m
    return 'generic'


def address_of(ctx, op, what):
    """f(idx) -> uint64 addresses of a [base+offset] operand."""
    if op.kind != 'mem':
        raise EmulatorError('%s: %r is not an address' % (what, op))
    base = op.base
    off = np.uint64(op.offset & ((1 << 64) - 1))
    rd = ctx.reader(base, 64, what) if base.kind != 'reg' or ctx.reg_width(base) == 64 \
        else ctx.reader(base, 32, what)

    def addr(idx):
        return rd(idx).astype(np.uint64) + off
    return addr


def _ld_param(ctx, inst, what, ty):
    d = inst.args[0]
    m = inst.args[1]
    if m.base.kind != 'sym' or m.base.name not in ctx.launch.params:
        raise EmulatorError('%s: reads a parameter the launch did not pass' % what)
    data = ctx.launch.params[m.base.name]
    w = TYPE_WIDTH[ty]
    nb = w // 8
    items = d.items if d.kind == 'vec' else [d]
    vals = []
    for i in range(len(items)):
        o = m.offset + i * nb
        if o + nb > len(data):
            raise EmulatorError('%s: reads past the parameter' % what)
        vals.append(int.from_bytes(bytes(data[o:o + nb]), 'little'))
    writers = [ctx.writer(x, what) for x in items]
    dt = UNSIGNED[w]

    def ld(idx):
        for wr, v in zip(writers, vals):
            wr(idx, np.full(idx.size, v, dtype=dt))
    return ld


def _ld_st(ctx, inst, what):
    op = inst.mods[0]
    ty = _type(inst)
    space = _space(inst)
    vec = [m for m in inst.mods if m in ('v2', 'v4', 'v8')]
    count = int(vec[0][1:]) if vec else 1
    if op == 'ld' and space == 'param':
        return _ld_param(ctx, inst, what, ty)
    w = TYPE_WIDTH[ty]
    if w == 128:
        raise EmulatorError('%s: 128-bit accesses' % what)
    dt = UNSIGNED[max(w, 8)]
    if op == 'ld':
        d, m = inst.args
        items = d.items if d.kind == 'vec' else [d]
        writers = [ctx.writer(x, what) for x in items]
        addr = address_of(ctx, m, what)

        def ld(idx):
            a = addr(idx)
            vals = _load(ctx, idx, a, dt, count, space, what)
            signed = _signed(ty)
            for i, wr in enumerate(writers):
                v = vals[:, i]
                if signed and w < 32:
                    v = v.view(SIGNED[w]).astype(np.int64).view(np.uint64)
                wr(idx, v)
        return ld
    m, s = inst.args
    items = s.items if s.kind == 'vec' else [s]
    readers = [ctx.reader(x, w, what) for x in items]
    addr = address_of(ctx, m, what)

    def st(idx):
        a = addr(idx)
        vals = np.stack([r(idx) for r in readers], axis=1).astype(dt)
        _store(ctx, idx, a, vals, dt, space, what)
    return st


def _load(ctx, idx, a, dt, count, space, what):
    if space.startswith('shared'):
        return ctx.shared_load(idx, _shared_addr(ctx, idx, a, space, what), dt, count, what)
    if space == 'generic':
        sh = ctx.is_shared_generic(a)
        if sh.any():
            out = np.empty((idx.size, count), dtype=dt)
            if sh.all():
                return ctx.shared_load(idx, a - np.uint64(SHARED_GENERIC), dt, count, what)
            out[sh] = ctx.shared_load(idx[sh], a[sh] - np.uint64(SHARED_GENERIC), dt, count, what)
            out[~sh] = ctx.mem.load(a[~sh], dt, count, what)
            return out
    if space in ('local', 'const'):
        raise EmulatorError('%s: the %s state space is not emulated' % (what, space))
    return ctx.mem.load(a, dt, count, what)


def _store(ctx, idx, a, vals, dt, space, what):
    if space.startswith('shared'):
        ctx.shared_store(idx, _shared_addr(ctx, idx, a, space, what), vals, dt, what)
        return
    if space == 'generic':
        sh = ctx.is_shared_generic(a)
        if sh.any():
            ctx.shared_store(idx[sh], a[sh] - np.uint64(SHARED_GENERIC), vals[sh], dt, what)
            if sh.all():
                return
            idx, a, vals = idx[~sh], a[~sh], vals[~sh]
    if space in ('local', 'const'):
        raise EmulatorError('%s: the %s state space is not emulated' % (what, space))
    ranks = ctx.rank[idx]
    for r in np.unique(ranks):
        sel = ranks == r
        ctx.mem.store(a[sel], vals[sel], dt, what, writer=ctx.cta_linear(int(r)))


def _shared_addr(ctx, idx, a, space, what):
    """Shared-window addresses; .shared::cta and .shared name the
    executing CTA's memory."""
    if space != 'shared::cluster':
        from .memory import OFFSET_MASK, RANK_SHIFT
        rank = ctx.rank[idx].astype(np.uint64)
        given = a >> np.uint64(RANK_SHIFT)
        if (given & (given != rank)).any():
            raise EmulatorError('%s: a .shared::cta address of another CTA (%#x)'
                                % (what, int(a[given != rank][0])))
        a = (a & np.uint64(OFFSET_MASK)) | (rank << np.uint64(RANK_SHIFT))
    return a


def _atom(ctx, inst, what):
    op = inst.mods[0]
    space = _space(inst)
    ty = _type(inst)
    w = TYPE_WIDTH[ty]
    kind = [m for m in inst.mods[1:] if m in ('add', 'min', 'max', 'exch', 'cas', 'and',
                                               'or', 'xor', 'inc', 'dec')]
    if not kind:
        raise EmulatorError('%s: atomic operation' % what)
    kind = kind[0]
    if op == 'atom':
        d, m = inst.args[0], inst.args[1]
        vals = inst.args[2:]
        wr = ctx.writer(d, what)
    else:
        d, m, vals = None, inst.args[0], inst.args[1:]
        wr = None
    addr = address_of(ctx, m, what)
    rs = [ctx.reader(v, w, what) for v in vals]
    dt = UNSIGNED[w]

    def atom(idx):
        a = addr(idx)
        b = rs[0](idx)
        if space.startswith('shared') or (space == 'generic' and ctx.is_shared_generic(a).all()):
            raise EmulatorError('%s: shared-memory atomics' % what)
        ctx.mem.check(a, w // 8, what)
        view = ctx.mem.view(dt)
        index = ((a - np.uint64(ctx.mem.base)) // np.uint64(w // 8)).astype(np.int64)
        old = np.empty(idx.size, dtype=dt)
        # one at a time, in thread order (what the GPU does in some order)
        for i in range(idx.size):
            j = index[i]
            o = view[j]
            old[i] = o
            if kind == 'add':
                if ty == 'f32':
                    n = fp.binop32('add', np.array([o]), np.array([b[i]]))[0]
                else:
                    n = dt(int(o) + int(b[i]))
            elif kind == 'exch':
                n = b[i]
            elif kind in ('min', 'max'):
                if ty == 'f32':
                    n = fp.minmax32(kind, np.array([o]), np.array([b[i]]))[0]
                else:
                    x, y = (o.view(SIGNED[w]), b[i].view(SIGNED[w])) if _signed(ty) else (o, b[i])
                    n = dt(min(x, y) if kind == 'min' else max(x, y)) if not _signed(ty) \
                        else np.array([min(x, y) if kind == 'min' else max(x, y)],
                                      dtype=SIGNED[w]).view(dt)[0]
            elif kind == 'cas':
                n = rs[1](idx)[i] if o == b[i] else o
            elif kind in ('and', 'or', 'xor'):
                n = {'and': o & b[i], 'or': o | b[i], 'xor': o ^ b[i]}[kind]
            else:
                raise EmulatorError('%s: atomic %s' % (what, kind))
            view[j] = n
        if wr is not None:
            wr(idx, old)
    return atom


def _noop(ctx, inst, what):
    return lambda idx: None


def _shfl_unused(ctx, inst, what):
    raise EmulatorError('%s is compiled by the sync extension' % what)


_ALU = {
    'mov': _mov, 'cvta': _cvta, 'cvt': _cvt,
    'add': _arith, 'sub': _arith, 'mul': _arith, 'mad': _arith, 'fma': _arith,
    'div': _arith, 'rem': _arith, 'min': _arith, 'max': _arith, 'abs': _arith,
    'neg': _arith, 'and': _arith, 'or': _arith, 'xor': _arith, 'not': _arith,
    'cnot': _arith, 'shl': _arith, 'shr': _arith, 'bfe': _arith, 'bfi': _arith,
    'popc': _arith, 'clz': _arith, 'brev': _arith, 'copysign': _arith,
    'rcp': _arith, 'sqrt': _arith, 'rsqrt': _arith, 'ex2': _arith, 'lg2': _arith,
    'sin': _arith, 'cos': _arith, 'tanh': _arith,
    'selp': _selp, 'setp': _setp, 'prmt': _prmt,
    'ld': _ld_st, 'st': _ld_st, 'atom': _atom, 'red': _atom,
    'prefetch': _noop, 'prefetchu': _noop, 'pmevent': _noop, 'nanosleep': _noop,
    'discard': _noop, 'createpolicy': None,
}
