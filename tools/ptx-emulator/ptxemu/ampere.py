"""The sm_80 kernels' instructions: cp.async (copies from global to shared
memory completed by cp.async.wait_group), ldmatrix and mma.sync.

cp.async lands its bytes at the wait_group that retires it, the latest
moment the PTX memory model allows; until then its destination is in
flight (accesses to it are reported, as by the TMA loads). Fragments
(PTX ISA, "Matrix Fragments for mma.m16n8k16", "ldmatrix"): g = lane / 4,
t = lane % 4; A registers a0..a3 hold rows g, g+8, g, g+8 at columns
2t (+8 for a2, a3), two 16-bit values each, the lower column in the lower
half; B registers b0, b1 hold k = 2t, 2t+1 (+8 for b1) of column g; C and D
registers hold (g, 2t), (g, 2t+1), (g+8, 2t), (g+8, 2t+1). ldmatrix: lane
l's register i holds row l / 4 of matrix i at 16-bit columns 2(l % 4),
+1 (transposed: rows 2(l % 4), +1 of column l / 4), the eight row
addresses of matrix i coming from lanes 8i..8i+7.
"""
import numpy as np

from . import mma_model
from . import numerics as fp
from .compiler import address_of
from .errors import EmulatorError
from .machine import Compiled
from .memory import OFFSET_MASK, RANK_SHIFT, SHARED_GENERIC


def install(ctx):
    ctx.extensions['ampere'] = Ampere(ctx)


class Ampere:
    def __init__(self, ctx):
        self.ctx = ctx
        self.model = mma_model.get(getattr(ctx.opt, 'mma_model', None), 'mma.sync')
        self.reset()

    def reset(self):
        self.uncommitted = {}   # thread -> [copies]
        self.groups = {}        # thread -> [[copies]]

    def progress(self):
        return False

    def on_exit(self, idx):
        for t in idx.tolist():
            if self.uncommitted.get(t) or self.groups.get(t):
                self.ctx.hz.add('cp.async copies not waited for before exit', 'thread %d' % t)
                for group in self.groups.pop(t, []) + [self.uncommitted.pop(t, [])]:
                    for copy in group:
                        self.land(copy, t)

    def compile(self, inst):
        m = inst.mods
        what = repr(inst)
        if m[0] == 'cp' and len(m) > 1 and m[1] == 'async' and (len(m) < 3 or m[2] != 'bulk'):
            if 'commit_group' in m:
                return Compiled('alu', inst, fn=self._commit)
            if 'wait_group' in m:
                n = inst.args[0].value
                return Compiled('alu', inst, fn=lambda idx: self._wait(idx, n))
            if 'wait_all' in m:
                return Compiled('alu', inst, fn=lambda idx: (self._commit(idx), self._wait(idx, 0)))
            if 'mbarrier' in m:
                raise EmulatorError('instruction not emulated: %s' % what)
            return self._copy(inst, what)
        if m[0] == 'ldmatrix':
            return self._ldmatrix(inst, what)
        if m[0] == 'mma' and 'sync' in m:
            return self._mma(inst, what)
        return None

    # --- cp.async ------------------------------------------------------------

    def _copy(self, inst, what):
        ctx = self.ctx
        rdst = address_of(ctx, inst.args[0], what)
        rsrc = address_of(ctx, inst.args[1], what)
        size = inst.args[2].value
        rsrcsize = ctx.reader(inst.args[3], 32, what) if len(inst.args) > 3 else None
        if size not in (4, 8, 16):
            raise EmulatorError('%s: copy size %d' % (what, size))

        def copy(idx):
            dst = rdst(idx)
            src = rsrc(idx)
            srcsize = rsrcsize(idx) if rsrcsize is not None else np.full(idx.size, size)
            dst = np.where(dst >= np.uint64(SHARED_GENERIC), dst - np.uint64(SHARED_GENERIC), dst)
            rank = ctx.rank[idx].astype(np.uint64)
            dst = (dst & np.uint64(OFFSET_MASK)) | (rank << np.uint64(RANK_SHIFT))
            ranks, offs = ctx.shared_locate(dst, size, what)
            for i, t in enumerate(idx.tolist()):
                n = int(srcsize[i])
                if n > size:
                    raise EmulatorError('%s: src-size %d above the copy size %d' % (what, n, size))
                data = np.zeros(size, dtype=np.uint8)
                if n:
                    if int(src[i]) % size:
                        raise EmulatorError('%s: misaligned source %#x' % (what, int(src[i])))
                    data[:n] = ctx.mem.read_bytes(int(src[i]), n)
                r, o = int(ranks[i]), int(offs[i])
                offsets = np.arange(o, o + size)
                sh = ctx.shadow[r]
                if sh.pending_w[offsets].any():
                    ctx.hz.add('accesses to async-copy destinations before the copy completed',
                               '%s at smem+%d' % (what, o))
                sh.pending_w[offsets] += 1
                agent, epoch, vc = ctx.clocks.issue(t, 'load')
                self.uncommitted.setdefault(t, []).append((r, offsets, data, agent, epoch, vc, what))
        return Compiled('alu', inst, fn=copy)

    def land(self, copy, t):
        ctx = self.ctx
        r, offsets, data, agent, epoch, vc, what = copy
        sh = ctx.shadow[r]
        sh.pending_w[offsets] -= 1
        n = offsets.size
        sh.access(ctx.hz, offsets, np.full(n, agent, np.int32), np.full(n, epoch, np.int32),
                  lambda pa: vc[pa], True, what)
        # an async write: no generic-proxy fence needed before async reads
        sh.unfenced[offsets] = False
        ctx.smem[r][offsets] = data
        ctx.clocks.acquire(np.array([t]), ctx.clocks.completion(agent, epoch, vc))

    def _commit(self, idx):
        for t in idx.tolist():
            self.groups.setdefault(t, []).append(self.uncommitted.pop(t, []))

    def _wait(self, idx, n):
        for t in idx.tolist():
            groups = self.groups.get(t, [])
            while len(groups) > n:
                for copy in groups.pop(0):
                    self.land(copy, t)

    # --- ldmatrix ----------------------------------------------------------------

    def _ldmatrix(self, inst, what):
        ctx = self.ctx
        m = inst.mods
        if 'm8n8' not in m or 'b16' not in m:
            raise EmulatorError('instruction not emulated: %s' % what)
        count = int([x for x in m if x in ('x1', 'x2', 'x4')][0][1:])
        trans = 'trans' in m
        d = inst.args[0]
        items = d.items if d.kind == 'vec' else [d]
        if len(items) != count:
            raise EmulatorError('%s: %d registers for .x%d' % (what, len(items), count))
        writers = [ctx.writer(x, what) for x in items]
        raddr = address_of(ctx, inst.args[1], what)

        def ldmatrix(idx):
            if idx.size != 32:
                raise EmulatorError('%s: executed by %d threads, not a warp' % (what, idx.size))
            addrs = raddr(idx)
            rows = addrs[:8 * count]
            rows = np.where(rows >= np.uint64(SHARED_GENERIC), rows - np.uint64(SHARED_GENERIC), rows)
            rank = ctx.rank[idx[:8 * count]].astype(np.uint64)
            rows = (rows & np.uint64(OFFSET_MASK)) | (rank << np.uint64(RANK_SHIFT))
            # each row: 8 x 16-bit values, read by the warp (generic proxy)
            vals = ctx.shared_load(idx[:8 * count], rows, np.uint16, 8, what)  # (8*count, 8)
            lane = np.arange(32)
            for i, wr in enumerate(writers):
                mat = vals[8 * i:8 * i + 8]          # (row, col)
                if trans:
                    lo = mat[2 * (lane % 4), lane // 4]
                    hi = mat[2 * (lane % 4) + 1, lane // 4]
                else:
                    lo = mat[lane // 4, 2 * (lane % 4)]
                    hi = mat[lane // 4, 2 * (lane % 4) + 1]
                wr(idx, lo.astype(np.uint32) | (hi.astype(np.uint32) << np.uint32(16)))
        return Compiled('coll', inst, fn=ldmatrix, unit='warp')

    # --- mma.sync ------------------------------------------------------------------

    def _mma(self, inst, what):
        ctx = self.ctx
        m = inst.mods
        if 'm16n8k16' not in m or 'row' not in m or 'col' not in m:
            raise EmulatorError('instruction not emulated: %s' % what)
        types = [x for x in m if x in ('f32', 'bf16', 'f16')]
        if len(types) != 4 or types[0] != 'f32' or types[3] != 'f32' or types[1] != types[2]:
            raise EmulatorError('instruction not emulated: %s' % what)
        ty = types[1]
        d, a, b, c = inst.args
        dw = [ctx.writer(x, what) for x in d.items]
        ra = [ctx.reader(x, 32, what) for x in a.items]
        rb = [ctx.reader(x, 32, what) for x in b.items]
        rc = [ctx.reader(x, 32, what) for x in c.items]
        to32 = fp.bf16_to_f32 if ty == 'bf16' else fp.f16_to_f32
        lane = np.arange(32)
        g, t = lane // 4, lane % 4
        model = self.model

        def vals(v):
            lo = fp.f32(to32((v & np.uint32(0xFFFF)).astype(np.uint16))).astype(np.float64)
            hi = fp.f32(to32((v >> np.uint32(16)).astype(np.uint16))).astype(np.float64)
            return lo, hi

        def mma(idx):
            if idx.size != 32:
                raise EmulatorError('%s: executed by %d threads, not a warp' % (what, idx.size))
            A = np.zeros((16, 16))
            B = np.zeros((8, 16))     # N x K
            C = np.zeros((16, 8), dtype=np.uint32)
            for i, r in enumerate(ra):
                lo, hi = vals(r(idx))
                row = g + (8 if i % 2 else 0)
                col = 2 * t + (8 if i >= 2 else 0)
                A[row, col], A[row, col + 1] = lo, hi
            for i, r in enumerate(rb):
                lo, hi = vals(r(idx))
                k = 2 * t + (8 if i else 0)
                B[g, k], B[g, k + 1] = lo, hi
            for i, r in enumerate(rc):
                row = g + (8 if i >= 2 else 0)
                C[row, 2 * t + i % 2] = r(idx)
            D = model.mma(C, A, B, True, ty)
            for i, wr in enumerate(dw):
                row = g + (8 if i >= 2 else 0)
                wr(idx, D[row, 2 * t + i % 2])
        return Compiled('coll', inst, fn=mma, unit='warp')
