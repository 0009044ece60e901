"""sm_100a's tensor memory (TMEM) and the tcgen05 instructions.

Read from the PTX ISA ("Tensorcore 5th Generation Family Instructions"),
not run on hardware (no sm_100 GPU was available):

- TMEM: per CTA 128 lanes x 512 columns of 32 bits; an address holds the
  lane in bits 31-16 and the column in 15-0. tcgen05.alloc (a warp) takes
  a power of two from 32 to 512 columns and writes the address to shared
  memory; dealloc gives them back; everything must be given back before
  the CTA exits, and relinquish_alloc_permit ends the CTA's allocations.
  Warp w of a CTA reaches lanes 32 (w % 4) .. +31 with tcgen05.ld / st.
- tcgen05.mma (one thread issues it): D[m][n] at lane m, column d + n
  (M = 128, cta_group::1, "Layout D"); with cta_group::2, M = 256 over a
  CTA pair, each CTA's TMEM holding its 128 rows, A's rows and B's rows
  (N / 2 each) from each CTA's shared memory at the descriptor's address.
  The instruction descriptor (Table 42: kind::f16; Table 44:
  kind::mxf4nvf4) and the shared-memory descriptor (bits 0-13 start >> 4,
  16-29 LBO >> 4, 32-45 SBO >> 4, 46-48 the fixed 0b001, 49-51 base
  offset, 52 LBO mode, 61-63 swizzle 0 none / 2 128B / 4 64B / 6 32B)
  are decoded and their reserved bits checked. FP4 operands: two E2M1
  codes a byte, the lower K index in the lower nibble. Block scaling
  (scale_vec::4X / block16, UE4M3): row m of A's four scales are the
  bytes of the TMEM word at lane m % 32, column sfa + m / 32 (32 lanes x
  M / 32 columns), column n of B's likewise, and the PTX ISA asks for them
  duplicated to all four 32-lane partitions: the emulator reads every copy
  and reports copies that differ.
- tcgen05.cp.32x128b.warpx4: 32 rows of 16 bytes (row r at
  (r / 8) SBO + (r % 8) 16 bytes from the descriptor's start, no swizzle)
  to lanes r + 32 q (q = 0..3), four columns.
- tcgen05.mma, tcgen05.cp: asynchronous, in issue order; tcgen05.commit
  arrives on an mbarrier once all the thread's earlier ones completed.
  tcgen05.ld: asynchronous until tcgen05.wait::ld.
- Arithmetic: the H100's MMA model (mma_model.py), not checked against an
  sm_100 MMA.
"""
import numpy as np

from . import mma_model
from . import numerics as fp
from .compiler import address_of
from .errors import EmulatorError
from .machine import DONE, Compiled
from .memory import OFFSET_MASK, RANK_SHIFT
from .tma import swizzle

LANES, COLUMNS = 128, 512
SWIZZLE = {0: 0, 2: 128, 4: 64, 6: 32}


def install(ctx):
    ctx.extensions['tcgen05'] = Tcgen05(ctx)


def decode_smem_descriptor(d, what):
    d = int(d)
    f = {'start': (d & 0x3FFF) << 4, 'lbo': ((d >> 16) & 0x3FFF) << 4,
         'sbo': ((d >> 32) & 0x3FFF) << 4, 'fixed': (d >> 46) & 7, 'base': (d >> 49) & 7,
         'lbo_mode': (d >> 52) & 1, 'swizzle': (d >> 61) & 7}
    if f['fixed'] != 1:
        raise EmulatorError('%s: shared-memory descriptor bits 46-48 are %d, not the '
                            'fixed 0b001 (a wgmma descriptor?)' % (what, f['fixed']))
    if f['swizzle'] not in SWIZZLE:
        raise EmulatorError('%s: swizzle mode %d is not emulated' % (what, f['swizzle']))
    if f['base'] or f['lbo_mode']:
        raise EmulatorError('%s: base offset / absolute LBO mode are not emulated' % what)
    return f


def kmajor_bytes(desc, rows, nbytes, what):
    """Shared-window addresses (low 24 bits) of `nbytes` bytes of each of
    `rows` K-major rows, (rows, nbytes)."""
    f = decode_smem_descriptor(desc, what)
    span = SWIZZLE[f['swizzle']]
    r = np.arange(rows)[:, None]
    b = np.arange(nbytes)[None, :]
    if span:
        if nbytes > span:
            raise EmulatorError('%s: %d bytes of K exceed the %d-byte swizzle' % (what, nbytes, span))
        return swizzle(f['start'] + (r // 8) * f['sbo'] + (r % 8) * span + b, span)
    return f['start'] + (r // 8) * f['sbo'] + (b // 16) * f['lbo'] + (r % 8) * 16 + b % 16


def decode_idesc(idesc, kind, what):
    v = int(idesc)
    if kind == 'f16':
        reserved = (v & 0x3) | ((v >> 2) & 1) << 1 | ((v >> 6) & 1) << 2 | ((v >> 23) & 1) << 3 | \
            ((v >> 29) & 1) << 4
        out = {'dtype': (v >> 4) & 3, 'atype': (v >> 7) & 7, 'btype': (v >> 10) & 7,
               'nega': (v >> 13) & 1, 'negb': (v >> 14) & 1, 'ta': (v >> 15) & 1,
               'tb': (v >> 16) & 1, 'n': ((v >> 17) & 0x3F) << 3, 'm': ((v >> 24) & 0x1F) << 4,
               'k': 16}
        if out['dtype'] != 1:
            raise EmulatorError('%s: only an f32 accumulator is emulated' % what)
        if out['atype'] > 1 or out['btype'] > 1 or out['atype'] != out['btype']:
            raise EmulatorError('%s: A/B formats %d/%d' % (what, out['atype'], out['btype']))
    else:   # mxf4nvf4
        reserved = (v & 0x3) | ((v >> 3) & 1) << 1 | ((v >> 6) & 1) << 2 | ((v >> 12) & 1) << 3 | \
            ((v >> 24) & 7) << 4
        out = {'sfb': (v >> 4) & 3, 'atype': (v >> 7) & 7, 'btype': (v >> 10) & 3,
               'nega': (v >> 13) & 1, 'negb': (v >> 14) & 1, 'ta': (v >> 15) & 1,
               'tb': (v >> 16) & 1, 'n': ((v >> 17) & 0x3F) << 3, 'scale': (v >> 23) & 1,
               'm': ((v >> 27) & 3) << 7, 'sfa': (v >> 29) & 3, 'k': 96 if (v >> 31) & 1 else 64}
        if out['atype'] != 1 or out['btype'] != 1:
            raise EmulatorError('%s: A/B formats %d/%d are not E2M1 (1)'
                                % (what, out['atype'], out['btype']))
        if out['scale'] != 0:
            raise EmulatorError('%s: UE8M0 scales are not emulated' % what)
        if out['sfa'] or out['sfb'] or out['k'] != 64:
            raise EmulatorError('%s: block16 needs scale-factor IDs 0 and K = 64' % what)
    if reserved:
        raise EmulatorError('%s: reserved bits of the instruction descriptor %#x are set'
                            % (what, v))
    if out['ta'] or out['tb']:
        raise EmulatorError('%s: MN-major operands are not emulated' % what)
    return out


class Tmem:
    """One CTA's tensor memory with its hazard shadow."""

    def __init__(self):
        self.data = np.zeros((LANES, COLUMNS), dtype=np.uint32)
        self.written = np.zeros((LANES, COLUMNS), dtype=bool)
        self.w_agent = np.zeros((LANES, COLUMNS), dtype=np.int32)
        self.w_clock = np.zeros((LANES, COLUMNS), dtype=np.int32)
        self.pending = np.zeros((LANES, COLUMNS), dtype=np.int16)
        self.allocated = {}     # column -> columns
        self.relinquished = False


class Op:
    __slots__ = ('agent', 'epoch', 'vc', 'tmem', 'smem', 'what', 'done')


class Tcgen05:
    def __init__(self, ctx):
        self.ctx = ctx
        self.model = mma_model.get(getattr(ctx.opt, 'mma_model', None), 'tcgen05')
        self.cta_group = None
        self.reset()

    def reset(self):
        self.tmem = [Tmem() for _ in range(self.ctx.ncta)]
        self.issued = {}       # thread -> [Op] not completed
        self.committed = set()  # threads whose ops a commit covers
        self.commits = []      # [(ops, barriers, issuer, release)], oldest first
        self.loads = {}        # thread -> [register names] until wait::ld

    # --- completion -------------------------------------------------------

    def progress(self):
        if not self.commits:
            return False
        self.complete(self.commits.pop(0))
        return True

    def complete(self, commit):
        """A commit lands: every operation its thread issued before it is
        complete, and its mbarriers get one arrival each."""
        ctx = self.ctx
        ops, barriers, issuer, rel = commit
        sync = ctx.extensions['sync']
        for op in ops:
            if op.done:
                continue
            op.done = True
            for rank, lanes, cols in op.tmem:
                t = self.tmem[rank]
                t.pending[lanes, cols] -= 1
                t.w_agent[lanes, cols] = op.agent
                t.w_clock[lanes, cols] = op.epoch
            for rank, offs in op.smem:
                ctx.shadow[rank].pending_r[offs] -= 1
        for key in barriers:
            bar = sync.get(key, 'tcgen05.commit')
            sync.check_init_order(bar, rel[bar.init_agent], 'tcgen05.commit')
            bar.vc = np.maximum(bar.vc, rel)
            bar.pending -= 1
            if bar.pending < 0:
                ctx.hz.add('mbarrier arrivals beyond the expected count', 'tcgen05.commit')
                bar.pending = 0
            sync.maybe_complete(bar)

    def on_exit(self, idx):
        ctx = self.ctx
        rest = np.setdiff1d(np.arange(ctx.N), idx)
        for t in idx.tolist():
            if self.loads.get(t):
                ctx.hz.add('tcgen05.ld without tcgen05.wait::ld before exit', 'thread %d' % t)
        for r in range(ctx.ncta):
            cta = np.arange(r * ctx.T, (r + 1) * ctx.T)
            gone = np.isin(cta, idx) | (ctx.state[cta] == DONE)
            if gone.all() and self.tmem[r].allocated:
                ctx.hz.add('tensor memory not deallocated before the CTA exits',
                           'CTA %d: columns %s' % (r, sorted(self.tmem[r].allocated)))
                self.tmem[r].allocated = {}
        if (ctx.state[rest] == DONE).all():
            while self.commits:
                self.complete(self.commits.pop(0))
            for t, ops in self.issued.items():
                if any(not op.done for op in ops):
                    ctx.hz.add('tcgen05.mma / tcgen05.cp never committed', 'thread %d' % t)

    # --- compile ---------------------------------------------------------

    def compile(self, inst):
        m = inst.mods
        if m[0] != 'tcgen05':
            return None
        what = repr(inst)
        kind = m[1]
        group = [x for x in m if x.startswith('cta_group::')]
        if group:
            g = int(group[0].split('::')[1])
            if self.cta_group is None:
                self.cta_group = g
            elif self.cta_group != g:
                raise EmulatorError('%s: tcgen05 instructions of one kernel must use one '
                                    'cta_group (PTX ISA)' % what)
        if kind == 'alloc':
            return Compiled('coll', inst, fn=self._alloc(inst, what), unit='warp')
        if kind == 'dealloc':
            return Compiled('coll', inst, fn=self._dealloc(inst, what), unit='warp')
        if kind == 'relinquish_alloc_permit':
            return Compiled('coll', inst, fn=self._relinquish, unit='warp')
        if kind.startswith('fence'):
            return Compiled('alu', inst, fn=lambda idx: None)
        if kind == 'mma':
            return Compiled('alu', inst, fn=self._mma(inst, what))
        if kind == 'commit':
            return Compiled('alu', inst, fn=self._commit(inst, what))
        if kind == 'cp':
            return Compiled('alu', inst, fn=self._cp(inst, what))
        if kind == 'ld':
            return Compiled('coll', inst, fn=self._ld(inst, what), unit='warp')
        if kind.startswith('wait'):
            return Compiled('coll', inst, fn=self._wait(inst, what), unit='warp')
        raise EmulatorError('instruction not emulated: %s' % what)

    # --- allocation ----------------------------------------------------------

    def _alloc(self, inst, what):
        ctx = self.ctx
        raddr = address_of(ctx, inst.args[0], what)
        rcols = ctx.reader(inst.args[1], 32, what)

        def alloc(idx):
            cols = int(rcols(idx)[0])
            if cols < 32 or cols > COLUMNS or cols & (cols - 1):
                raise EmulatorError('%s: %d columns (a power of two from 32 to 512)' % (what, cols))
            r = int(ctx.rank[idx[0]])
            t = self.tmem[r]
            if t.relinquished:
                ctx.hz.add('tcgen05.alloc after relinquish_alloc_permit', what)
            used = np.zeros(COLUMNS, dtype=bool)
            for c, n in t.allocated.items():
                used[c:c + n] = True
            for c in range(0, COLUMNS, cols):
                if not used[c:c + cols].any():
                    break
            else:
                raise EmulatorError('%s: %d columns requested, not free: the allocation '
                                    'would wait forever' % (what, cols))
            t.allocated[c] = cols
            # the address, written to shared memory by the warp (its first lane)
            first = idx[:1]
            addr = raddr(first)
            ctx.shared_store(first, addr, np.array([[c]], dtype=np.uint32), np.uint32, what)
        return alloc

    def _dealloc(self, inst, what):
        ctx = self.ctx
        raddr = ctx.reader(inst.args[0], 32, what)
        rcols = ctx.reader(inst.args[1], 32, what)

        def dealloc(idx):
            a, cols = int(raddr(idx)[0]), int(rcols(idx)[0])
            r = int(ctx.rank[idx[0]])
            t = self.tmem[r]
            col = a & 0xFFFF
            if (a >> 16) or t.allocated.get(col) != cols:
                ctx.hz.add('tcgen05.dealloc of columns that were not allocated so',
                           '%s: address %#x, %d columns' % (what, a, cols))
            t.allocated.pop(col, None)
            if t.pending[:, col:col + cols].any():
                ctx.hz.add('tensor memory deallocated while an MMA or copy writes it', what)
        return dealloc

    def _relinquish(self, idx):
        self.tmem[int(self.ctx.rank[idx[0]])].relinquished = True

    def _check_allocated(self, rank, cols, what):
        t = self.tmem[rank]
        ok = np.zeros(COLUMNS, dtype=bool)
        for c, n in t.allocated.items():
            ok[c:c + n] = True
        cols = np.asarray(cols)
        if (cols >= COLUMNS).any() or not ok[np.minimum(cols, COLUMNS - 1)].all():
            self.ctx.hz.add('tensor memory accesses outside the allocated columns', what)

    # --- async operations ----------------------------------------------------

    def _new_op(self, t, what):
        op = Op()
        op.agent, op.epoch, op.vc = self.ctx.clocks.issue(t, 'mma')
        op.tmem, op.smem, op.what, op.done = [], [], what, False
        self.issued.setdefault(t, []).append(op)
        return op

    def _smem_read(self, op, rank, addrs, what, carry_unwritten=False):
        """Bytes at shared addresses (low 24 bits, any shape) of CTA
        `rank`, read by the async proxy for op (carry_unwritten: the
        unwritten bytes are not reported here, their marks are returned as
        the second result, for the copy's destination)."""
        ctx = self.ctx
        offs = addrs.ravel().astype(np.int64) - ctx.smem_base
        if offs.min() < 0 or offs.max() >= ctx.smem_size:
            raise EmulatorError('%s: an operand outside shared memory' % what)
        sh = ctx.shadow[rank]
        n = offs.size
        vc = op.vc
        sh.access(ctx.hz, offs, np.full(n, op.agent, np.int32), np.full(n, op.epoch, np.int32),
                  lambda pa: vc[pa], False, what, async_read=True, uninit_ok=carry_unwritten)
        sh.pending_r[offs] += 1
        op.smem.append((rank, offs))
        data = ctx.smem[rank][offs].reshape(addrs.shape)
        if carry_unwritten:
            return data, sh.written[offs].reshape(addrs.shape)
        return data

    def _tmem_read(self, op, rank, lanes, cols, what):
        """TMEM words read by an async operation (D when accumulating,
        scale factors)."""
        t = self.tmem[rank]
        self._check_allocated(rank, cols, what)
        if not t.written[lanes, cols].all():
            self.ctx.hz.add('reads of unwritten tensor memory (or of copies of unwritten '
                            'shared memory)', what)
        seen = op.vc[t.w_agent[lanes, cols]]
        if (t.w_clock[lanes, cols] > seen).any():
            # earlier operations of the same thread come first (pipelined)
            own = t.w_agent[lanes, cols] == op.agent
            if ((t.w_clock[lanes, cols] > seen) & ~own).any():
                self.ctx.hz.add('tensor memory races (an async read after an unordered write)',
                                what)
        return t.data[lanes, cols]

    def _tmem_write(self, op, rank, lanes, cols, values, what, written=True):
        t = self.tmem[rank]
        self._check_allocated(rank, cols, what)
        t.data[lanes, cols] = values
        t.written[lanes, cols] = written
        t.pending[lanes, cols] += 1
        op.tmem.append((rank, lanes, cols))

    def _mma(self, inst, what):
        ctx = self.ctx
        m = inst.mods
        kind = 'f16' if 'kind::f16' in m else 'mxf4nvf4' if 'kind::mxf4nvf4' in m else None
        if kind is None:
            raise EmulatorError('instruction not emulated: %s' % what)
        if kind == 'mxf4nvf4' and not ('block16' in m or 'scale_vec::4X' in m):
            raise EmulatorError('%s: only block16 scaling is emulated' % what)
        group = 2 if 'cta_group::2' in m else 1
        args = inst.args
        rd = address_of(ctx, args[0], what) if args[0].kind == 'mem' else None
        ra, rb, ri = (ctx.reader(args[i], 64 if i < 3 else 32, what) for i in (1, 2, 3))
        if kind == 'mxf4nvf4':
            rsa = address_of(ctx, args[4], what)
            rsb = address_of(ctx, args[5], what)
            rest = args[6:]
        else:
            rest = args[4:]
        if not rest:
            raise EmulatorError('%s: no enable-input-d operand' % what)
        ren = ctx.reader(rest[0], 1, what)
        if len(rest) > 1:
            raise EmulatorError('%s: disable_output_lane / scale_input_d are not emulated' % what)
        model = self.model

        def mma(idx):
            for t in idx.tolist():
                one = np.array([t])
                rank = int(ctx.rank[t])
                if group == 2 and rank % 2:
                    raise EmulatorError('%s: a cta_group::2 MMA issued by the odd CTA of its pair'
                                        % what)
                d_addr = int(rd(one)[0])
                desc = decode_idesc(ri(one)[0], kind, what)
                M, N, K = desc['m'], desc['n'], desc['k']
                if M != 128 * group:
                    raise EmulatorError('%s: M = %d with cta_group::%d' % (what, M, group))
                op = self._new_op(t, what)
                ranks = [rank] if group == 1 else [rank, rank + 1]
                da, db = ra(one)[0], rb(one)[0]
                esz = 2 if kind == 'f16' else None
                # A: 128 rows per CTA, B: N / group rows per CTA
                nb = N // group
                kbytes = K * 2 if kind == 'f16' else K // 2
                A = np.concatenate([self._operand(op, r, da, 128, kbytes, kind, desc['atype'], what)
                                    for r in ranks])
                B = np.concatenate([self._operand(op, r, db, nb, kbytes, kind, desc['btype'], what)
                                    for r in ranks])
                if kind == 'mxf4nvf4':
                    sa = np.concatenate([self._scales(op, rank, int(rsa(one)[0]), M, what)])
                    sb = self._scales(op, rank, int(rsb(one)[0]), N, what)
                    A = A * np.repeat(sa, 16, axis=1)
                    B = B * np.repeat(sb, 16, axis=1)
                if desc['nega']:
                    A = -A
                if desc['negb']:
                    B = -B
                lane0, col0 = d_addr >> 16, d_addr & 0xFFFF
                if lane0:
                    raise EmulatorError('%s: D at lane %d (M = %d needs lane 0)' % (what, lane0, M))
                cols = col0 + np.arange(N)
                lanes = np.arange(128)
                L, Cc = np.meshgrid(lanes, cols, indexing='ij')
                acc = bool(ren(one)[0])
                C = np.zeros((M, N), dtype=np.uint32)
                if acc:
                    C = np.concatenate([self._tmem_read(op, r, L, Cc, what) for r in ranks])
                D = model.mma(C, A, B, acc, 'bf16' if kind == 'f16' and desc['atype'] == 1 else
                              'f16' if kind == 'f16' else 'bf16')
                for i, r in enumerate(ranks):
                    self._tmem_write(op, r, L, Cc, D[128 * i:128 * (i + 1)], what)
        return mma

    def _operand(self, op, rank, desc, rows, kbytes, kind, fmt, what):
        """A K-major operand's values (rows, K) as f64."""
        addrs = kmajor_bytes(desc, rows, kbytes, what)
        raw = self._smem_read(op, rank, addrs, what)
        if kind == 'f16':
            bits = (raw[:, 0::2].astype(np.uint16) | (raw[:, 1::2].astype(np.uint16) << 8))
            to32 = fp.bf16_to_f32 if fmt == 1 else fp.f16_to_f32
            return fp.f32(to32(bits)).astype(np.float64)
        lo = fp.e2m1_to_f64(raw & 0xF)
        hi = fp.e2m1_to_f64(raw >> 4)
        out = np.empty((rows, kbytes * 2))
        out[:, 0::2], out[:, 1::2] = lo, hi
        return out

    def _scales(self, op, rank, taddr, rows, what):
        """The UE4M3 scales (rows, 4) of a block16 scale matrix at TMEM
        address taddr: row i's word at lane i % 32, column + i / 32, in
        each 32-lane partition (the copies must agree)."""
        ctx = self.ctx
        lane0, col0 = taddr >> 16, taddr & 0xFFFF
        if lane0:
            raise EmulatorError('%s: scale factors at lane %d (0 expected)' % (what, lane0))
        i = np.arange(rows)
        words = []
        for q in range(4):
            words.append(self._tmem_read(op, rank, i % 32 + 32 * q, col0 + i // 32, what))
        if any((w != words[0]).any() for w in words[1:]):
            ctx.hz.add('block scale factors not duplicated to all four lane partitions '
                       '(PTX ISA, block scaling)', what)
        w = words[0]
        b = np.stack([(w >> np.uint32(8 * k)) & np.uint32(0xFF) for k in range(4)], axis=1)
        vals = fp.ue4m3_to_f64(b.astype(np.uint8))
        if np.isnan(vals).any():
            ctx.hz.add('NaN block scale factors', what)
        return vals

    def _cp(self, inst, what):
        ctx = self.ctx
        m = inst.mods
        if '32x128b' not in m or 'warpx4' not in m:
            raise EmulatorError('instruction not emulated: %s' % what)
        if any(x.startswith('b') and 'x16' in x for x in m):
            raise EmulatorError('%s: decompression is not emulated' % what)
        rt = address_of(ctx, inst.args[0], what)
        rs = ctx.reader(inst.args[1], 64, what)

        def cp(idx):
            for t in idx.tolist():
                one = np.array([t])
                rank = int(ctx.rank[t])
                taddr = int(rt(one)[0])
                lane0, col0 = taddr >> 16, taddr & 0xFFFF
                if lane0:
                    raise EmulatorError('%s: .warpx4 copies to lane 0 of each partition; '
                                        'lane %d given' % (what, lane0))
                op = self._new_op(t, what)
                f = decode_smem_descriptor(rs(one)[0], what)
                if f['swizzle']:
                    raise EmulatorError('%s: a swizzled source is not emulated' % what)
                r = np.arange(32)[:, None]
                addrs = f['start'] + (r // 8) * f['sbo'] + (r % 8) * 16 + np.arange(16)[None, :]
                raw, written = self._smem_read(op, rank, addrs, what, carry_unwritten=True)
                raw = raw.astype(np.uint32)
                words = raw[:, 0::4] | (raw[:, 1::4] << 8) | (raw[:, 2::4] << 16) | (raw[:, 3::4] << 24)
                complete = written.reshape(32, 4, 4).all(axis=2)
                for q in range(4):
                    lanes = np.repeat(np.arange(32) + 32 * q, 4).reshape(32, 4)
                    cols = np.tile(col0 + np.arange(4), (32, 1))
                    self._tmem_write(op, rank, lanes, cols, words, what, complete)
        return cp

    def _commit(self, inst, what):
        ctx = self.ctx
        m = inst.mods
        multicast = 'multicast::cluster' in m
        raddr = address_of(ctx, inst.args[0], what)
        rmask = ctx.reader(inst.args[1], 16, what) if multicast else None
        sync = ctx.extensions['sync']

        def commit(idx):
            for t in idx.tolist():
                one = np.array([t])
                key = sync.barrier_key(int(raddr(one)[0]), what)
                if multicast:
                    mask = int(rmask(one)[0])
                    keys = [(r, key[1]) for r in range(16) if (mask >> r) & 1]
                    if any(r >= ctx.ncta for r, _ in keys):
                        raise EmulatorError('%s: mask %#x beyond the cluster' % (what, mask))
                else:
                    keys = [key]
                for k in keys:
                    sync.get(k, what)
                # every earlier operation of the thread not yet complete
                ops = [op for op in self.issued.get(t, []) if not op.done]
                self.issued[t] = ops
                rel = ctx.clocks.vc[t].copy()
                for op in ops:
                    rel = np.maximum(rel, ctx.clocks.completion(op.agent, op.epoch, op.vc))
                ctx.clocks.release(one)
                self.commits.append((ops, keys, t, rel))
        return commit

    # --- tcgen05.ld ---------------------------------------------------------------

    def _ld(self, inst, what):
        ctx = self.ctx
        m = inst.mods
        if '32x32b' not in m or 'red' in m or any(x.startswith('pack') for x in m):
            raise EmulatorError('instruction not emulated: %s' % what)
        num = int([x for x in m if x.startswith('x') and x[1:].isdigit()][0][1:])
        d = inst.args[0]
        items = d.items if d.kind == 'vec' else [d]
        if len(items) != num:
            raise EmulatorError('%s: %d registers for .x%d' % (what, len(items), num))
        names = [x.name for x in items]
        regs = [ctx.R[n] for n in names]
        wms = [ctx.Wm[n] for n in names]
        raddr = ctx.reader(inst.args[1].base if inst.args[1].kind == 'mem' else inst.args[1],
                           32, what)
        off = inst.args[1].offset if inst.args[1].kind == 'mem' else 0
        inflight = ctx.inflight_regs
        for n in names:
            if n not in inflight:
                inflight[n] = np.zeros(ctx.N, dtype=np.int16)

        def ld(idx):
            if idx.size != 32:
                raise EmulatorError('%s: executed by %d threads, not a warp' % (what, idx.size))
            a = raddr(idx).astype(np.int64) + off
            if len(set(a.tolist())) != 1:
                raise EmulatorError('%s: the warp gives different addresses' % what)
            a = int(a[0])
            lane0, col0 = a >> 16, a & 0xFFFF
            rank = int(ctx.rank[idx[0]])
            warp = (int(idx[0]) % ctx.T) // 32
            if lane0 != 32 * (warp % 4):
                ctx.hz.add('tcgen05.ld outside the lanes of its warp (32 (warp % 4) .. +31)',
                           '%s: warp %d, lane %d' % (what, warp, lane0))
            t = self.tmem[rank]
            lanes = lane0 + np.arange(32)
            cols = col0 + np.arange(num)
            L, Cc = np.meshgrid(lanes, cols, indexing='ij')
            self._check_allocated(rank, cols, what)
            if t.pending[L, Cc].any():
                ctx.hz.add('tcgen05.ld of tensor memory an MMA or copy has not finished writing',
                           what)
            if not t.written[L, Cc].all():
                ctx.hz.add('reads of unwritten tensor memory', what)
            seen = ctx.clocks.vc[idx[:, None], t.w_agent[L, Cc]]
            if (t.w_clock[L, Cc] > seen).any():
                ctx.hz.add('tensor memory races (tcgen05.ld after an unordered write)', what)
            vals = t.data[L, Cc]
            for j, (reg, wm) in enumerate(zip(regs, wms)):
                reg[idx] = vals[:, j]
                wm[idx] = True
                inflight[names[j]][idx] += 1
            for x in idx.tolist():
                self.loads.setdefault(x, []).extend(names)
        return ld

    def _wait(self, inst, what):
        ctx = self.ctx
        st = 'st' in inst.mods[1]

        def wait(idx):
            if st:
                return
            for x in idx.tolist():
                for n in self.loads.pop(x, []):
                    ctx.inflight_regs[n][x] -= 1
        return wait
