"""The Tensor Memory Accelerator: tiled and im2col tensor copies between
global and shared memory (cp.async.bulk.tensor), their bulk groups, and
the tensor maps the emulated driver encodes.

A tensor map is the 128-byte CUtensorMap the runtime got from
cuTensorMapEncodeTiled / cuTensorMapEncodeIm2col. The real encoding is the
driver's secret; the emulated driver (lib/Emulator) writes the encode
calls' parameters into those bytes instead, little-endian:

  0  u32  magic 0x4D543343 ("C3TM")
  4  u8   kind (1 tiled, 2 im2col)      5  u8 rank
  6  u8   CUtensorMapDataType           7  u8 interleave
  8  u8   swizzle                       9  u8 L2 promotion
  10 u8   OOB fill                      11 u8 0
  12 u32  channelsPerPixel (im2col)
  16 u64  globalAddress
  24 u32  globalDim[i] - 1, i < 5
  44 u8   elementStrides[i], i < 5
  49 u8   boxDim[i] - 1, i < 5 (tiled)
  54 u16  pixelsPerColumn (im2col)
  56 i16  pixelBoxLowerCorner[i], i < 3; 62 i16 pixelBoxUpperCorner[i]
  72 u64  globalStrides[i] (bytes), i < 4

Semantics (CUDA driver API, cuTensorMapEncodeTiled/Im2col; PTX ISA
"Tensor copy" and "im2col mode"): a tiled box is boxDim elements per
dimension from the coordinates (innermost first), laid out densely in
shared memory, innermost fastest; an im2col box is pixelsPerColumn pixels
of channelsPerPixel channels. Im2col walks the pixels of the bounding box
[lower corner, dim - 1 + upper corner] of each spatial dimension with the
traversal strides, innermost spatial dimension first, then the images,
from the pixel the coordinates name; each pixel's channels are read at the
pixel plus the load's im2col offsets. Elements outside the tensor are zero
(OOB fill NONE) or NaN (NAN_REQUEST_ZERO_FMA). Swizzled layouts permute
16-byte chunks within each 128/64/32-byte span by the shared memory
address bits above it (bits 4-6 ^= bits 7-9 for 128B), which is why a
swizzled box must be aligned to the pattern's repeat (1024 bytes for 128B).
"""
import struct

import numpy as np

from .compiler import address_of
from .errors import EmulatorError
from .machine import Compiled
from .memory import OFFSET_MASK, RANK_SHIFT, SHARED_GENERIC

MAGIC = 0x4D543343
ELEMENT_BYTES = {0: 1, 1: 2, 2: 4, 3: 4, 4: 8, 5: 8, 6: 2, 7: 4, 8: 8, 9: 2, 10: 4,
                 11: 4, 12: 4, 13: 0.5, 14: 1, 15: 1}
SWIZZLE_BYTES = {0: 0, 1: 32, 2: 64, 3: 128}


def install(ctx):
    ctx.extensions['tma'] = Tma(ctx)


class TensorMap:
    def __init__(self, raw, where):
        raw = bytes(raw)
        if len(raw) != 128 or struct.unpack_from('<I', raw, 0)[0] != MAGIC:
            raise EmulatorError('%s: no tensor map made by the emulated driver there '
                                '(a descriptor the runtime did not encode?)' % where)
        (self.kind, self.rank, self.dtype, self.interleave, self.swizzle, self.l2,
         self.oob) = struct.unpack_from('<7B', raw, 4)
        self.cpp = struct.unpack_from('<I', raw, 12)[0]
        self.address = struct.unpack_from('<Q', raw, 16)[0]
        r = self.rank
        self.dims = [d + 1 for d in struct.unpack_from('<5I', raw, 24)][:r]
        self.estrides = list(struct.unpack_from('<5B', raw, 44))[:r]
        self.box = [b + 1 for b in struct.unpack_from('<5B', raw, 49)][:r]
        self.ppc = struct.unpack_from('<H', raw, 54)[0]
        self.lower = list(struct.unpack_from('<3h', raw, 56))[:max(r - 2, 0)]
        self.upper = list(struct.unpack_from('<3h', raw, 62))[:max(r - 2, 0)]
        self.strides = [1] + list(struct.unpack_from('<4Q', raw, 72))[:r - 1]
        self.esize = ELEMENT_BYTES[self.dtype]
        if self.esize != int(self.esize) and self.dtype != 13:
            raise EmulatorError('tensor map data type %d' % self.dtype)
        if self.interleave:
            raise EmulatorError('interleaved tensor maps are not emulated')
        if self.swizzle > 3:
            raise EmulatorError('swizzle mode %d is not emulated' % self.swizzle)

    @property
    def elem_bytes(self):
        return self.esize

    def element_offsets(self, coords):
        """Byte offsets (from the global address) and in-bounds mask of
        elements at integer coordinate arrays (innermost first)."""
        ok = np.ones(coords[0].shape, dtype=bool)
        off = np.zeros(coords[0].shape, dtype=np.int64)
        for i, c in enumerate(coords):
            ok &= (c >= 0) & (c < self.dims[i])
            stride = self.esize if i == 0 else self.strides[i]
            off += np.where(ok, c, 0) * np.int64(stride)
        return off, ok


def swizzle(addr, span):
    """The shared address of byte `addr` of a box under a `span`-byte
    swizzle (16-byte chunk bits XOR the address bits above the span's
    row)."""
    if span == 0:
        return addr
    mask = span // 16 - 1
    return addr ^ (((addr >> 7) & mask) << 4)


class Op:
    """An async copy in flight."""
    __slots__ = ('kind', 'issuer', 'agent', 'epoch', 'vc', 'writes', 'barriers', 'nbytes',
                 'what', 'reads')


class Tma:
    def __init__(self, ctx):
        self.ctx = ctx
        self.reset()

    def reset(self):
        self.inflight = []           # TMA loads not landed, oldest first
        self.uncommitted = {}        # thread -> [store ops]
        self.groups = {}             # thread -> [[store ops], ...] committed

    # --- landing ---------------------------------------------------------

    def progress(self):
        if not self.inflight:
            return False
        self.land(self.inflight.pop(0))
        return True

    def land(self, op):
        ctx = self.ctx
        sync = ctx.extensions['sync']
        for rank, offsets, data in op.writes:
            sh = ctx.shadow[rank]
            sh.pending_w[offsets] -= 1
            agents = np.full(offsets.size, op.agent, dtype=np.int32)
            epochs = np.full(offsets.size, op.epoch, dtype=np.int32)
            vc = op.vc
            sh.access(ctx.hz, offsets, agents, epochs, lambda pa: vc[pa], True, op.what)
            ctx.smem[rank][offsets] = data
        rel = ctx.clocks.completion(op.agent, op.epoch, op.vc)
        for key, nbytes in op.barriers:
            bar = sync.get(key, op.what)
            sync.check_init_order(bar, op.vc[bar.init_agent], op.what)
            sync.complete_tx(bar, nbytes, rel, op.what)

    def on_exit(self, idx):
        ctx = self.ctx
        for t in idx.tolist():
            if self.uncommitted.get(t) or self.groups.get(t):
                ctx.hz.add('bulk async copies (TMA stores) not waited for before exit',
                           'thread %d' % t)
                for op in self.uncommitted.pop(t, []):
                    self.retire_store(op, t)
                for group in self.groups.pop(t, []):
                    for op in group:
                        self.retire_store(op, t)
        if (ctx.state[np.setdiff1d(np.arange(ctx.N), idx)] == 2).all() and self.inflight:
            ctx.hz.add('TMA loads in flight when the CTA exited', self.inflight[0].what)
            while self.inflight:
                self.land(self.inflight.pop(0))

    # --- compile -----------------------------------------------------------

    def compile(self, inst):
        m = inst.mods
        if m[0] != 'cp' or len(m) < 3 or m[1] not in ('async', 'reduce'):
            return None
        what = repr(inst)
        if m[1] == 'reduce':
            raise EmulatorError('instruction not emulated: %s' % what)
        if m[2] != 'bulk':
            return None
        if 'commit_group' in m:
            return Compiled('alu', inst, fn=self._commit)
        if 'wait_group' in m:
            n = inst.args[0].value
            read_only = 'read' in m
            return Compiled('alu', inst, fn=lambda idx: self._wait(idx, n, read_only))
        if 'tensor' in m:
            dst_space = m[m.index('tensor') + 2]
            if dst_space.startswith('shared'):
                return self._load(inst, what)
            return self._store(inst, what)
        if 'prefetch' in m:
            return Compiled('alu', inst, fn=lambda idx: None)
        raise EmulatorError('instruction not emulated: %s' % what)

    def tensor_map(self, addr, what):
        ctx = self.ctx
        a = int(addr)
        if a >= SHARED_GENERIC and a < SHARED_GENERIC + (1 << 32):
            raise EmulatorError('%s: tensor maps in shared memory are not emulated' % what)
        if a % 64:
            raise EmulatorError('%s: tensor map address %#x is not 64-byte aligned' % (what, a))
        return TensorMap(ctx.mem.read_bytes(a, 128), what)

    # --- loads ---------------------------------------------------------------

    def _load(self, inst, what):
        ctx = self.ctx
        m = inst.mods
        mode = 'im2col' if 'im2col' in m else 'tile'
        if not any(x.startswith('mbarrier::complete_tx') for x in m):
            raise EmulatorError('%s: a tensor load without an mbarrier' % what)
        multicast = 'multicast::cluster' in m
        cache_hint = any(x.startswith('L2::cache_hint') for x in m)
        args = list(inst.args)
        dst_op, tensor_op, bar_op = args[0], args[1], args[2]
        rest = args[3:]
        offsets_op = rest.pop(0) if mode == 'im2col' else None
        mask_op = rest.pop(0) if multicast else None
        rdst = address_of(ctx, dst_op, what)
        rbar = address_of(ctx, bar_op, what)
        rmap = ctx.reader(tensor_op.base, 64, what)
        rcoords = [ctx.reader(c, 32, what) for c in tensor_op.items]
        roffs = [ctx.reader(c, 16, what) for c in offsets_op.items] if offsets_op else []
        rmask = ctx.reader(mask_op, 16, what) if mask_op else None
        dims = int([x for x in m if x.endswith('d') and x[:-1].isdigit()][0][:-1])
        if len(tensor_op.items) != dims:
            raise EmulatorError('%s: %d coordinates for a %dd copy' % (what, len(tensor_op.items), dims))

        def load(idx):
            dsts = rdst(idx)
            bars = rbar(idx)
            maps = rmap(idx)
            coords = [r(idx).view(np.int32).astype(np.int64) for r in rcoords]
            offs = [r(idx).astype(np.int64) for r in roffs]
            masks = rmask(idx) if rmask else None
            for i, t in enumerate(idx.tolist()):
                tm = self.tensor_map(maps[i], what)
                if tm.rank != dims:
                    raise EmulatorError('%s: a rank-%d tensor map for a %dd copy' % (what, tm.rank, dims))
                c = [int(x[i]) for x in coords]
                if mode == 'tile':
                    if tm.kind != 1:
                        raise EmulatorError('%s: an im2col tensor map in a tiled copy' % what)
                    box = self.tiled_box(tm, c)
                else:
                    if tm.kind != 2:
                        raise EmulatorError('%s: a tiled tensor map in an im2col copy' % what)
                    box = self.im2col_box(tm, c, [int(x[i]) for x in offs], what)
                ranks = [int(ctx.rank[t])]
                if masks is not None:
                    mk = int(masks[i])
                    ranks = [r for r in range(16) if (mk >> r) & 1]
                    if any(r >= ctx.ncta for r in ranks):
                        raise EmulatorError('%s: multicast mask %#x beyond the cluster' % (what, mk))
                self.issue_load(t, tm, box, int(dsts[i]), int(bars[i]), ranks, multicast, what)
        return Compiled('alu', inst, fn=load)

    def issue_load(self, t, tm, box, dst, bar, ranks, multicast, what):
        """An async load of `box` (bytes, before the swizzle) to `dst`
        (shared::cluster) completing on `bar`; multicast: to the same
        offsets of every CTA in `ranks`."""
        ctx = self.ctx
        sync = ctx.extensions['sync']
        if dst >= SHARED_GENERIC:
            dst -= SHARED_GENERIC
        dst_rank = dst >> RANK_SHIFT
        dst_off = (dst & OFFSET_MASK) - ctx.smem_base
        if dst_off % 128:
            raise EmulatorError('%s: destination smem+%d is not 128-byte aligned' % (what, dst_off))
        span = SWIZZLE_BYTES[tm.swizzle]
        if span and (dst & (span * 8 - 1)):
            ctx.hz.add('swizzled TMA boxes not aligned to the swizzle pattern',
                       '%s at smem+%d' % (what, dst_off))
        n = box.size
        base_addr = dst & OFFSET_MASK
        addrs = swizzle(base_addr + np.arange(n, dtype=np.int64), span)
        offsets = addrs - ctx.smem_base
        if offsets.min() < 0 or offsets.max() >= ctx.smem_size:
            raise EmulatorError('%s: the %d-byte box at smem+%d overflows shared memory'
                                % (what, n, dst_off))
        key = sync.barrier_key(bar, what)
        if not multicast:
            ranks = [dst_rank]
        op = Op()
        op.kind = 'load'
        op.issuer = t
        op.agent, op.epoch, op.vc = ctx.clocks.issue(t, 'load')
        op.what = what
        op.writes = []
        op.barriers = []
        for r in ranks:
            order = np.argsort(offsets)
            op.writes.append((r, offsets[order], box[order]))
            ctx.shadow[r].pending_w[offsets] += 1
            bkey = (r, key[1]) if multicast else key
            if bkey not in sync.barriers:
                raise EmulatorError('%s: the mbarrier at smem+%d of CTA %d was never initialized'
                                    % (what, bkey[1], bkey[0]))
            op.barriers.append((bkey, n))
        self.inflight.append(op)

    def tiled_box(self, tm, c):
        """The box's bytes (dense, innermost first) at coordinates c."""
        counts = [-(-b // s) for b, s in zip(tm.box, tm.estrides)]
        grids = np.meshgrid(*[np.arange(k) for k in reversed(counts)], indexing='ij')
        coords = [c[i] + grids[tm.rank - 1 - i].ravel() * tm.estrides[i] for i in range(tm.rank)]
        return self._gather(tm, coords)

    def im2col_box(self, tm, c, offs, what):
        r = tm.rank
        s = r - 2
        if len(offs) != s:
            raise EmulatorError('%s: %d im2col offsets for rank %d' % (what, len(offs), r))
        dims = tm.dims
        ts = tm.estrides[1:1 + s]
        cnt = [(dims[1 + i] - 1 + tm.upper[i] - tm.lower[i]) // ts[i] + 1 for i in range(s)]
        if min(cnt) <= 0:
            raise EmulatorError('%s: an empty im2col bounding box' % what)
        start = []
        for i in range(s):
            d = c[1 + i] - tm.lower[i]
            if d % ts[i] or d < 0 or d // ts[i] >= cnt[i]:
                raise EmulatorError('%s: im2col coordinate %d of dimension %d is not a pixel '
                                    'of the bounding box' % (what, c[1 + i], i + 1))
            start.append(d // ts[i])
        lin = c[r - 1]
        for i in reversed(range(s)):
            lin = lin * cnt[i] + start[i]
        p = lin + np.arange(tm.ppc, dtype=np.int64)
        pos = []
        for i in range(s):
            pos.append(tm.lower[i] + (p % cnt[i]) * ts[i] + offs[i])
            p = p // cnt[i]
        image = p
        ch = c[0] + np.arange(tm.cpp, dtype=np.int64)
        coords = [np.tile(ch, tm.ppc)] + [np.repeat(x, tm.cpp) for x in pos] + \
            [np.repeat(image, tm.cpp)]
        return self._gather(tm, coords)

    def _gather(self, tm, coords):
        ctx = self.ctx
        eb = tm.esize
        if eb < 1:
            raise EmulatorError('packed 4-bit tensor maps are not emulated')
        off, ok = tm.element_offsets(coords)
        n = off.size
        out = np.zeros((n, eb), dtype=np.uint8)
        if ok.any():
            addrs = np.uint64(tm.address) + off[ok].astype(np.uint64)
            ctx.mem.check(addrs, eb, 'TMA load')
            rel = (addrs - np.uint64(ctx.mem.base)).astype(np.int64)
            out[ok] = ctx.mem.buf[rel[:, None] + np.arange(eb)]
        if tm.oob == 1 and (~ok).any():
            # NaN fill (floating types)
            nan = {2: b'\xff\x7f', 4: b'\xff\xff\xff\x7f'}.get(eb)
            if nan is not None:
                out[~ok] = np.frombuffer(nan, dtype=np.uint8)
        return out.ravel()

    # --- stores ----------------------------------------------------------------

    def _store(self, inst, what):
        ctx = self.ctx
        m = inst.mods
        if 'im2col' in m:
            raise EmulatorError('instruction not emulated: %s' % what)
        tensor_op, src_op = inst.args[0], inst.args[1]
        rsrc = address_of(ctx, src_op, what)
        rmap = ctx.reader(tensor_op.base, 64, what)
        rcoords = [ctx.reader(c, 32, what) for c in tensor_op.items]

        def store(idx):
            srcs = rsrc(idx)
            maps = rmap(idx)
            coords = [r(idx).view(np.int32).astype(np.int64) for r in rcoords]
            for i, t in enumerate(idx.tolist()):
                tm = self.tensor_map(maps[i], what)
                if tm.kind != 1:
                    raise EmulatorError('%s: an im2col tensor map in a store' % what)
                self.issue_store(t, tm, [int(x[i]) for x in coords], int(srcs[i]), what)
        return Compiled('alu', inst, fn=store)

    def issue_store(self, t, tm, c, src, what):
        ctx = self.ctx
        if src >= SHARED_GENERIC:
            src -= SHARED_GENERIC
        rank = int(ctx.rank[t])
        src_off = (src & OFFSET_MASK) - ctx.smem_base
        if src_off % 128:
            raise EmulatorError('%s: source smem+%d is not 128-byte aligned' % (what, src_off))
        span = SWIZZLE_BYTES[tm.swizzle]
        if span and (src & (span * 8 - 1)):
            ctx.hz.add('swizzled TMA boxes not aligned to the swizzle pattern',
                       '%s at smem+%d' % (what, src_off))
        counts = [-(-b // s) for b, s in zip(tm.box, tm.estrides)]
        n = int(np.prod(counts)) * tm.esize
        addrs = swizzle((src & OFFSET_MASK) + np.arange(n, dtype=np.int64), span)
        offsets = addrs - ctx.smem_base
        if offsets.min() < 0 or offsets.max() >= ctx.smem_size:
            raise EmulatorError('%s: the box overflows shared memory' % what)
        agent, epoch, vc = ctx.clocks.issue(t, 'store')
        sh = ctx.shadow[rank]
        sh.access(ctx.hz, offsets, np.full(n, agent, np.int32), np.full(n, epoch, np.int32),
                  lambda pa: vc[pa], False, what, async_read=True)
        sh.pending_r[offsets] += 1
        data = ctx.smem[rank][offsets]
        # the global write (clipped to the tensor) happens now; the source
        # stays busy until a wait_group retires the group
        grids = np.meshgrid(*[np.arange(k) for k in reversed(counts)], indexing='ij')
        coords = [c[i] + grids[tm.rank - 1 - i].ravel() * tm.estrides[i] for i in range(tm.rank)]
        off, ok = tm.element_offsets(coords)
        eb = tm.esize
        if ok.any():
            addrs_g = np.uint64(tm.address) + off[ok].astype(np.uint64)
            ctx.mem.check(addrs_g, eb, 'TMA store')
            rel = (addrs_g - np.uint64(ctx.mem.base)).astype(np.int64)
            flat = (rel[:, None] + np.arange(eb)).ravel()
            ctx.mem.note_writes(rel, eb, ctx.cta_linear(rank))
            ctx.mem.buf[flat] = data.reshape(-1, eb)[ok].ravel()
        op = Op()
        op.kind = 'store'
        op.issuer = t
        op.agent, op.epoch, op.vc = agent, epoch, vc
        op.reads = (rank, offsets)
        op.what = what
        self.uncommitted.setdefault(t, []).append(op)

    def retire_store(self, op, t):
        ctx = self.ctx
        rank, offsets = op.reads
        ctx.shadow[rank].pending_r[offsets] -= 1
        ctx.clocks.acquire(np.array([t]), ctx.clocks.completion(op.agent, op.epoch, op.vc))

    def _commit(self, idx):
        for t in idx.tolist():
            ops = self.uncommitted.pop(t, [])
            self.groups.setdefault(t, []).append(ops)

    def _wait(self, idx, n, read_only):
        for t in idx.tolist():
            groups = self.groups.get(t, [])
            while len(groups) > n:
                for op in groups.pop(0):
                    self.retire_store(op, t)
