"""Warpgroup MMA (sm_90a wgmma.mma_async) with shared-memory descriptors.

The 64-bit matrix descriptor (PTX ISA, "Matrix Descriptor Format"): bits
0-13 start address >> 4, 16-29 leading-dimension byte offset >> 4, 32-45
stride-dimension byte offset >> 4, 49-51 base offset, 62-63 swizzle (0
none, 1 128B, 2 64B, 3 32B). A K-major operand of R rows (M for A, N for
B) and K elements: with a T-byte swizzle, row r's elements are T-byte
rows, eight to a swizzle atom, atoms SBO apart: byte (r // 8) * SBO +
(r % 8) * T + k * size from the start, then permuted by the address bits
as TMA writes it (checked on the H100 by scripts/gpu/wgmma_row_offset.cu,
start addresses a whole number of rows into an atom included, with base
offset 0); without swizzle, 8 x 16-byte core matrices, LBO apart along K
and SBO apart along the rows.

The f32 accumulator fragment of m64nNk16 (PTX ISA, "Register Fragments:
wgmma .m64nNk16"): thread t of the warpgroup, warp w = t / 32, lane l,
register i: row 16w + l / 4 + 8 * ((i % 4) / 2), column 8 * (i / 4) +
2 * (l % 4) + i % 2.

Arithmetic: mma_model.py (the H100's, found by scripts/gpu/wgmma_numerics.cu).
"""
import numpy as np

from . import mma_model
from . import numerics as fp
from .errors import EmulatorError
from .machine import Compiled
from .memory import OFFSET_MASK, RANK_SHIFT
from .tma import swizzle

SPAN = {0: 0, 1: 128, 2: 64, 3: 32}
ELEM = {'bf16': 2, 'f16': 2, 'tf32': 4, 'e4m3': 1, 'e5m2': 1, 's8': 1, 'u8': 1}


def install(ctx):
    ctx.extensions['wgmma'] = Wgmma(ctx)


def decode_descriptor(d):
    d = int(d)
    return {'start': (d & 0x3FFF) << 4, 'lbo': ((d >> 16) & 0x3FFF) << 4,
            'sbo': ((d >> 32) & 0x3FFF) << 4, 'base': (d >> 49) & 7,
            'layout': (d >> 62) & 3}


def kmajor_addresses(desc, rows, k, esize, what):
    """Shared-window addresses (low 24 bits) of a K-major operand's
    elements, (rows, k)."""
    f = decode_descriptor(desc)
    if f['base']:
        raise EmulatorError('%s: a nonzero matrix base offset is not emulated' % what)
    span = SPAN[f['layout']]
    r = np.arange(rows)[:, None]
    kk = np.arange(k)[None, :]
    if span:
        if k * esize > span:
            raise EmulatorError('%s: K of %d bytes exceeds the %d-byte swizzle span'
                                % (what, k * esize, span))
        pre = f['start'] + (r // 8) * f['sbo'] + (r % 8) * span + kk * esize
        return swizzle(pre, span)
    byte = kk * esize
    return f['start'] + (r // 8) * f['sbo'] + (byte // 16) * f['lbo'] + (r % 8) * 16 + byte % 16


def fragment_positions(n):
    """(row, col) of each (thread, register) of an m64nN f32 accumulator."""
    t = np.arange(128)[:, None]
    i = np.arange(n // 2)[None, :]
    w, lane = t // 32, t % 32
    row = 16 * w + lane // 4 + 8 * ((i % 4) // 2)
    col = 8 * (i // 4) + 2 * (lane % 4) + i % 2
    return row, col


class Wgmma:
    def __init__(self, ctx):
        self.ctx = ctx
        self.model = mma_model.get(getattr(ctx.opt, 'mma_model', None), 'wgmma')
        self.reset()

    def reset(self):
        self.pending = {}   # warpgroup -> [ops] not committed
        self.groups = {}    # warpgroup -> [[ops]]

    def progress(self):
        return False

    def on_exit(self, idx):
        ctx = self.ctx
        for wg in np.unique(ctx.warpgroup[idx]).tolist():
            if self.pending.get(wg) or self.groups.get(wg):
                ctx.hz.add('wgmma operations not waited for before exit', 'warpgroup %d' % wg)
                for group in self.groups.pop(wg, []) + [self.pending.pop(wg, [])]:
                    for op in group:
                        self.retire(op)

    def compile(self, inst):
        m = inst.mods
        if m[0] != 'wgmma':
            return None
        what = repr(inst)
        kind = m[1]
        if kind == 'fence':
            return Compiled('coll', inst, fn=lambda idx: None, unit='warpgroup')
        if kind == 'commit_group':
            return Compiled('coll', inst, fn=self._commit, unit='warpgroup')
        if kind == 'wait_group':
            n = inst.args[0].value
            return Compiled('coll', inst, fn=lambda idx: self._wait(idx, n), unit='warpgroup')
        if kind == 'mma_async':
            return Compiled('coll', inst, fn=self._mma(inst, what), unit='warpgroup')
        raise EmulatorError('instruction not emulated: %s' % what)

    def _mma(self, inst, what):
        ctx = self.ctx
        m = inst.mods
        shape = [x for x in m if x.startswith('m64n')][0]
        n = int(shape[4:shape.index('k')])
        k = int(shape[shape.index('k') + 1:])
        dty, aty, bty = m[-3], m[-2], m[-1]
        if dty != 'f32' or aty not in ('bf16', 'f16') or bty != aty:
            raise EmulatorError('%s: only f32 += bf16/f16 x bf16/f16 is emulated' % what)
        if 'sp' in m:
            raise EmulatorError('%s: sparse wgmma' % what)
        args = inst.args
        d = args[0]
        if d.kind != 'vec' or len(d.items) != n // 2:
            raise EmulatorError('%s: %d accumulator registers for n%d' % (what, len(d.items), n))
        if args[1].kind == 'vec':
            raise EmulatorError('%s: A from registers is not emulated' % what)
        names = [x.name for x in d.items]
        regs = [ctx.R[x] for x in names]
        wms = [ctx.Wm[x] for x in names]
        ra = ctx.reader(args[1], 64, what)
        rb = ctx.reader(args[2], 64, what)
        rscale = ctx.reader(args[3], 1, what)
        imms = [a.value for a in args[4:8]]
        scale_a, scale_b = imms[0], imms[1]
        tnsp_a, tnsp_b = (imms[2], imms[3]) if len(imms) == 4 else (0, 0)
        if tnsp_a or tnsp_b:
            raise EmulatorError('%s: MN-major (transposed) operands are not emulated' % what)
        esize = ELEM[aty]
        row, col = fragment_positions(n)
        to64 = (lambda v: fp.f32(fp.bf16_to_f32(v)).astype(np.float64)) if aty == 'bf16' else \
            (lambda v: fp.f32(fp.f16_to_f32(v)).astype(np.float64))
        model = self.model
        inflight = ctx.inflight_regs
        for name in names:
            if name not in inflight:
                inflight[name] = np.zeros(ctx.N, dtype=np.int16)

        def mma(idx):
            if idx.size != 128 or idx[0] % 128:
                raise EmulatorError('%s: executed by %d threads, not a whole warpgroup'
                                    % (what, idx.size))
            first = int(idx[0])
            da, db, sc = ra(idx), rb(idx), rscale(idx)
            if len(set(da.tolist())) != 1 or len(set(db.tolist())) != 1 or len(set(sc.tolist())) != 1:
                raise EmulatorError('%s: descriptors or scale-d differ across the warpgroup' % what)
            rank = int(ctx.rank[first])
            agent, epoch, vc = ctx.clocks.issue(first, 'mma')
            a_addr = kmajor_addresses(da[0], 64, k, esize, what)
            b_addr = kmajor_addresses(db[0], n, k, esize, what)
            a_vals, a_off = self._fetch(rank, a_addr, esize, agent, epoch, vc, what)
            b_vals, b_off = self._fetch(rank, b_addr, esize, agent, epoch, vc, what)
            A = to64(a_vals) * scale_a
            B = to64(b_vals) * scale_b
            C = np.zeros((64, n), dtype=np.uint32)
            use_c = bool(sc[0])
            if use_c:
                for i, (reg, wm) in enumerate(zip(regs, wms)):
                    if ctx.opt.check_registers and not wm[idx].all():
                        ctx.hz.add('reads of unwritten registers', '%s in %s' % (names[i], what))
                    C[row[:, i], col[:, i]] = reg[idx]
            D = model.mma(C, A, B, use_c, aty)
            for i, (reg, wm) in enumerate(zip(regs, wms)):
                reg[idx] = D[row[:, i], col[:, i]]
                wm[idx] = True
                inflight[names[i]][idx] += 1
            op = (agent, epoch, vc, rank, np.concatenate([a_off, b_off]), names, idx.copy())
            self.pending.setdefault(first // 128, []).append(op)
        return mma

    def _fetch(self, rank, addrs, esize, agent, epoch, vc, what):
        ctx = self.ctx
        offs = (addrs & OFFSET_MASK) - ctx.smem_base
        if (addrs >> RANK_SHIFT).any():
            raise EmulatorError('%s: descriptor addresses carry no CTA rank' % what)
        byte_offs = (offs.ravel()[:, None] + np.arange(esize)).ravel()
        if byte_offs.min() < 0 or byte_offs.max() >= ctx.smem_size:
            raise EmulatorError('%s: operand outside shared memory' % what)
        sh = ctx.shadow[rank]
        n = byte_offs.size
        sh.access(ctx.hz, byte_offs, np.full(n, agent, np.int32), np.full(n, epoch, np.int32),
                  lambda pa: vc[pa], False, what, async_read=True)
        sh.pending_r[byte_offs] += 1
        raw = ctx.smem[rank][byte_offs].reshape(addrs.shape + (esize,))
        vals = raw[..., 0].astype(np.uint16) | (raw[..., 1].astype(np.uint16) << 8) \
            if esize == 2 else raw[..., 0]
        return vals, byte_offs

    def retire(self, op):
        ctx = self.ctx
        agent, epoch, vc, rank, offs, names, threads = op
        ctx.shadow[rank].pending_r[offs] -= 1
        for name in names:
            ctx.inflight_regs[name][threads] -= 1
        ctx.clocks.acquire(threads, ctx.clocks.completion(agent, epoch, vc))

    def _commit(self, idx):
        wg = int(idx[0]) // 128
        self.groups.setdefault(wg, []).append(self.pending.pop(wg, []))

    def _wait(self, idx, n):
        wg = int(idx[0]) // 128
        groups = self.groups.get(wg, [])
        while len(groups) > n:
            for op in groups.pop(0):
                self.retire(op)
