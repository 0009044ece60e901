"""The emulated machine: one cluster of CTAs at a time (a lone CTA is a
cluster of one), its threads run together, vectorized.

Threads are grouped by program counter: each step runs the instructions of
the runnable threads with the lowest PC, as a group, over NumPy arrays of
their registers (threads at one PC of straight-line code advance together,
and threads that branched ahead wait for the others, so the warps of
structured code reconverge as on the GPU). A thread that waits (an
mbarrier phase not completed, a barrier not reached by everyone, a
warp-collective instruction not reached by its whole warp or warpgroup) is
blocked and runs again when what it waits for happens; asynchronous copies
land as late as the PTX memory model lets them, when nothing else can run.
If nothing can run and nothing is in flight, the kernel has deadlocked.
"""
import numpy as np

from .errors import EmulatorError
from .hazards import Clocks, Hazards, SharedShadow
from .memory import OFFSET_MASK, RANK_SHIFT, SHARED_GENERIC

RUN, BLOCKED, DONE = 0, 1, 2

DTYPES = {'pred': np.bool_}
for _t in ('b8', 'u8', 's8'):
    DTYPES[_t] = np.uint16          # 8-bit registers hold 16 bits in PTX
for _t in ('b16', 'u16', 's16', 'f16', 'bf16'):
    DTYPES[_t] = np.uint16
for _t in ('b32', 'u32', 's32', 'f32', 'f16x2', 'bf16x2'):
    DTYPES[_t] = np.uint32
for _t in ('b64', 'u64', 's64', 'f64'):
    DTYPES[_t] = np.uint64

UNSIGNED = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}
SIGNED = {8: np.int8, 16: np.int16, 32: np.int32, 64: np.int64}
WIDTH = {np.dtype(np.bool_): 1, np.dtype(np.uint8): 8, np.dtype(np.uint16): 16,
         np.dtype(np.uint32): 32, np.dtype(np.uint64): 64}


class Options:
    def __init__(self, **kw):
        self.smem_base = 0x400          # the first user byte of the shared window
        self.check_registers = True
        self.arch = 90
        self.max_steps = 50_000_000
        # lowest-pc: the runnable threads of the lowest PC run first (warps
        # of structured code stay converged); warpgroups[:SEED]: a random
        # warpgroup's lowest PC, so that warpgroups drift apart and
        # synchronization that only holds in lockstep shows as races
        self.schedule = 'lowest-pc'
        self.__dict__.update(kw)


class Launch:
    """A kernel launch: grid, block and cluster extents (x, y, z), dynamic
    shared memory, parameter bytes by name."""

    def __init__(self, grid, block, smem, params, cluster=(1, 1, 1)):
        self.grid, self.block, self.cluster = tuple(grid), tuple(block), tuple(cluster)
        self.smem = smem
        self.params = params


class Compiled:
    """A compiled instruction: kind is 'alu' (fn(idx) does it), 'bra'
    (target), 'ret', 'block' (fn(idx) returns the threads that must wait;
    they retry the instruction when woken), or 'coll' (unit: 'warp',
    'warpgroup', 'cta', 'cluster'; fn(idx) runs once the unit is there)."""
    __slots__ = ('kind', 'fn', 'target', 'unit', 'inst')

    def __init__(self, kind, inst, fn=None, target=None, unit=None):
        self.kind, self.inst, self.fn, self.target, self.unit = kind, inst, fn, target, unit


class Context:
    """The state of one launch's execution, one cluster at a time."""

    def __init__(self, kernel, launch, memory, options=None):
        self.kernel = kernel
        self.launch = launch
        self.mem = memory
        self.opt = options or Options()
        self.hz = Hazards()
        bx, by, bz = launch.block
        self.T = bx * by * bz
        cx, cy, cz = launch.cluster
        self.ncta = cx * cy * cz
        self.N = self.T * self.ncta
        gx, gy, gz = launch.grid
        for g, c in zip(launch.grid, launch.cluster):
            if g % c:
                raise EmulatorError('grid %s is not a multiple of the cluster %s'
                                    % (launch.grid, launch.cluster))
        # the shared window: static variables, then the dynamic area
        self.shared_offsets = {}
        off = 0
        dynamic = []
        for var in kernel.shared:
            if var.dynamic:
                dynamic.append(var)
                continue
            off = -(-off // var.align) * var.align
            self.shared_offsets[var.name] = off
            off += max(var.size, 1)
        self.dynamic_offset = -(-off // 16) * 16
        for var in dynamic:
            self.shared_offsets[var.name] = self.dynamic_offset
        self.smem_size = self.dynamic_offset + launch.smem
        self.smem_base = self.opt.smem_base
        n = self.N
        self.R, self.Wm = {}, {}
        for name, ty in kernel.regs.items():
            dt = DTYPES.get(ty)
            if dt is None:
                raise EmulatorError('register type .%s of %s' % (ty, name))
            self.R[name] = np.zeros(n, dtype=dt)
            self.Wm[name] = np.zeros(n, dtype=bool)
        self.full = set()
        self.pc = np.zeros(n, dtype=np.int64)
        self.state = np.zeros(n, dtype=np.int8)
        g = np.arange(n)
        self.gid = g
        self.rank = g // self.T
        self.tid = g % self.T
        self.tid_xyz = (self.tid % bx, (self.tid // bx) % by, self.tid // (bx * by))
        self.laneid = self.tid % 32
        self.warp = g // 32            # cluster-wide warp index
        self.warpgroup = g // 128      # cluster-wide warpgroup index
        self.ctaid_xyz = [np.zeros(n, dtype=np.int64) for _ in range(3)]
        self.cluster_ctaid = (self.rank % cx, (self.rank // cx) % cy, self.rank // (cx * cy))
        self.clusterid = [0, 0, 0]
        self.cluster_index = 0
        self.code = None
        self.extensions = {}
        self.wait_info = {}           # thread -> description, while blocked
        self.steps = 0
        # registers an async instruction (wgmma) writes, not yet retired:
        # name -> bool per thread
        self.inflight_regs = {}

    # --- set-up per cluster ------------------------------------------------

    def reset(self, cluster_index):
        gx, gy, gz = self.launch.grid
        cx, cy, cz = self.launch.cluster
        ncx, ncy = gx // cx, gy // cy
        cid = (cluster_index % ncx, (cluster_index // ncx) % ncy, cluster_index // (ncx * ncy))
        self.clusterid = cid
        self.cluster_index = cluster_index
        for d, (c, k) in enumerate(zip(cid, (cx, cy, cz))):
            self.ctaid_xyz[d][:] = c * k + self.cluster_ctaid[d]
        for name in self.R:
            self.R[name][:] = 0
            self.Wm[name][:] = False
        self.full = set()
        self.pc[:] = 0
        self.state[:] = RUN
        self.smem = [np.zeros(self.smem_size, dtype=np.uint8) for _ in range(self.ncta)]
        self.smem_views = [{} for _ in range(self.ncta)]
        self.shadow = [SharedShadow(self.smem_size, self.N) for _ in range(self.ncta)]
        self.clocks = Clocks(self.N)
        self.wait_info = {}
        self.blocked_fns = {}          # thread -> retry predicate source
        self.coll_waiting = {}         # pc -> set of threads
        for ext in self.extensions.values():
            ext.reset()

    def cta_linear(self, rank):
        """The grid-wide linear index of this cluster's CTA `rank`."""
        gx, gy, _ = self.launch.grid
        t = rank * self.T
        return int(self.ctaid_xyz[0][t] + gx * (self.ctaid_xyz[1][t] + gy * self.ctaid_xyz[2][t]))

    def cta_ids(self):
        """(x, y, z) of every CTA of this cluster, by rank."""
        return [(int(self.ctaid_xyz[0][r * self.T]), int(self.ctaid_xyz[1][r * self.T]),
                 int(self.ctaid_xyz[2][r * self.T])) for r in range(self.ncta)]

    # --- registers ---------------------------------------------------------

    def reader(self, op, width, what=''):
        """f(idx) -> the operand's values as unsigned ints of `width` bits
        (bool for width 1)."""
        kind = op.kind
        dt = np.bool_ if width == 1 else UNSIGNED[width]
        if kind == 'imm':
            v = op.value
            if width == 1:
                c = bool(v)
                return lambda idx: np.full(idx.size, c, dtype=np.bool_)
            if op.fbits == 64 and width == 32:
                v = int(np.float64(np.uint64(v).view(np.float64)).astype(np.float32).view(np.uint32))
            v &= (1 << width) - 1
            c = dt(v)
            return lambda idx: np.full(idx.size, c, dtype=dt)
        if kind == 'special':
            return self._special(op.name, dt)
        if kind == 'sym':
            if op.name in self.shared_offsets:
                off = self.shared_offsets[op.name] + self.smem_base
                rank = self.rank
                return lambda idx: ((rank[idx].astype(np.uint64) << np.uint64(RANK_SHIFT))
                                    + np.uint64(off)).astype(dt)
            raise EmulatorError('%s: unknown symbol %s' % (what, op.name))
        if kind != 'reg':
            raise EmulatorError('%s: operand %r is not a value' % (what, op))
        name = op.name
        neg = name.startswith('!')
        if neg:
            name = name[1:]
        if name not in self.R:
            raise EmulatorError('%s: undeclared register %s' % (what, name))
        arr, wm, full, hz = self.R[name], self.Wm[name], self.full, self.hz
        check = self.opt.check_registers
        pc_of = self.pc
        inflight = self.inflight_regs

        def read(idx):
            if check and name not in full:
                w = wm[idx]
                if not w.all():
                    hz.add('reads of unwritten registers', '%s in %s' % (name, what))
                if wm.all():
                    full.add(name)
            if inflight and name in inflight:
                busy = inflight[name][idx]
                if busy.any():
                    hz.add('accesses to registers an asynchronous MMA or TMEM load has not delivered yet (before wgmma.wait_group, tcgen05.wait::ld)',
                           '%s in %s' % (name, what))
            v = arr[idx]
            if v.dtype != dt:
                v = v.astype(dt)
            if neg:
                v = ~v
            return v
        return read

    def writer(self, op, what=''):
        """f(idx, values) storing into a register (sink: nothing)."""
        if op.kind == 'sink':
            return lambda idx, v: None
        if op.kind != 'reg':
            raise EmulatorError('%s: cannot write %r' % (what, op))
        name = op.name
        arr, wm = self.R[name], self.Wm[name]
        inflight = self.inflight_regs
        hz = self.hz

        def write(idx, values):
            if inflight and name in inflight and inflight[name][idx].any():
                hz.add('accesses to registers an asynchronous MMA or TMEM load has not delivered yet (before wgmma.wait_group, tcgen05.wait::ld)',
                       '%s in %s' % (name, what))
            if arr.dtype == np.bool_:
                arr[idx] = values
            else:
                arr[idx] = np.asarray(values).astype(arr.dtype, copy=False)
            wm[idx] = True
        return write

    def reg_width(self, op):
        if op.kind == 'reg':
            return WIDTH[self.R[op.name.lstrip('!')].dtype]
        return None

    def _special(self, name, dt):
        T = self.T
        bx, by, bz = self.launch.block
        gx, gy, gz = self.launch.grid
        cx, cy, cz = self.launch.cluster
        xyz = {'x': 0, 'y': 1, 'z': 2}
        base, _, axis = name.partition('.')
        a = xyz.get(axis, 0)
        ctx = self
        if base == '%tid':
            arr = self.tid_xyz[a]
            return lambda idx: arr[idx].astype(dt)
        if base == '%ntid':
            c = (bx, by, bz)[a]
            return lambda idx: np.full(idx.size, c, dtype=dt)
        if base == '%ctaid':
            arr = self.ctaid_xyz[a]
            return lambda idx: arr[idx].astype(dt)
        if base == '%nctaid':
            c = (gx, gy, gz)[a]
            return lambda idx: np.full(idx.size, c, dtype=dt)
        if base == '%laneid':
            return lambda idx: ctx.laneid[idx].astype(dt)
        if base == '%warpid':
            return lambda idx: (ctx.tid[idx] // 32).astype(dt)
        if base == '%nwarpid':
            return lambda idx: np.full(idx.size, -(-T // 32), dtype=dt)
        if base == '%cluster_ctarank':
            return lambda idx: ctx.rank[idx].astype(dt)
        if base == '%cluster_nctarank':
            return lambda idx: np.full(idx.size, ctx.ncta, dtype=dt)
        if base == '%cluster_ctaid':
            arr = self.cluster_ctaid[a]
            return lambda idx: arr[idx].astype(dt)
        if base == '%cluster_nctaid':
            c = (cx, cy, cz)[a]
            return lambda idx: np.full(idx.size, c, dtype=dt)
        if base == '%clusterid':
            return lambda idx: np.full(idx.size, ctx.clusterid[a], dtype=dt)
        if base == '%nclusterid':
            c = ((gx // cx), (gy // cy), (gz // cz))[a]
            return lambda idx: np.full(idx.size, c, dtype=dt)
        if base == '%is_explicit_cluster':
            c = 1 if self.ncta > 1 or self.kernel.cluster_dim else 0
            return lambda idx: np.full(idx.size, c, dtype=dt)
        if base in ('%dynamic_smem_size',):
            c = self.launch.smem
            return lambda idx: np.full(idx.size, c, dtype=dt)
        if base in ('%total_smem_size',):
            c = self.smem_size
            return lambda idx: np.full(idx.size, c, dtype=dt)
        if base.startswith('%lanemask'):
            kind = base[len('%lanemask_'):]
            def mask(idx):
                lane = ctx.laneid[idx].astype(np.uint64)
                one = np.uint64(1)
                bit = one << lane
                below = bit - one
                m = {'eq': bit, 'lt': below, 'le': below | bit,
                     'gt': ~(below | bit) & np.uint64(0xFFFFFFFF),
                     'ge': ~below & np.uint64(0xFFFFFFFF)}[kind]
                return m.astype(dt)
            return mask
        raise EmulatorError('special register %s' % name)

    # --- shared memory -----------------------------------------------------

    def shared_locate(self, addrs, nbytes, what):
        """(rank, offset) arrays of shared-window addresses, bounds-checked."""
        addrs = np.asarray(addrs, dtype=np.uint64)
        rank = (addrs >> np.uint64(RANK_SHIFT)).astype(np.int64)
        off = (addrs & np.uint64(OFFSET_MASK)).astype(np.int64) - self.smem_base
        bad = (rank >= self.ncta) | (off < 0) | (off + nbytes > self.smem_size)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise EmulatorError('%s: shared address %#x (+%d) is outside the %d bytes '
                                'of shared memory' % (what, int(addrs[i]), nbytes,
                                                      self.smem_size))
        if nbytes in (2, 4, 8, 16) and (off % nbytes).any():
            i = int(np.flatnonzero(off % nbytes)[0])
            raise EmulatorError('%s: misaligned %d-byte shared access at %#x'
                                % (what, nbytes, int(addrs[i])))
        return rank, off

    def smem_view(self, rank, dtype):
        v = self.smem_views[rank].get(dtype)
        if v is None:
            n = self.smem_size // np.dtype(dtype).itemsize
            v = self.smem[rank][:n * np.dtype(dtype).itemsize].view(dtype)
            self.smem_views[rank][dtype] = v
        return v

    def shared_track(self, idx, rank, off, nbytes, write, what):
        """Hazard bookkeeping of threads idx accessing [off, off + nbytes)
        of CTA `rank` (arrays) by the generic proxy."""
        vc = self.clocks.vc
        for r in np.unique(rank):
            sel = rank == r
            t = idx[sel]
            o = off[sel]
            offsets = (o[:, None] + np.arange(nbytes)).ravel()
            agents = np.repeat(t, nbytes)
            epochs = vc[agents, agents]
            self.shadow[r].access(self.hz, offsets, agents, epochs,
                                  lambda pa: vc[agents, pa], write, what)

    def shared_load(self, idx, addrs, dtype, count, what):
        """(n, count) values from shared memory."""
        itemsize = np.dtype(dtype).itemsize
        rank, off = self.shared_locate(addrs, itemsize * count, what)
        self.shared_track(idx, rank, off, itemsize * count, False, what)
        out = np.empty((idx.size, count), dtype=dtype)
        for r in np.unique(rank):
            sel = rank == r
            v = self.smem_view(int(r), dtype)
            out[sel] = v[(off[sel] // itemsize)[:, None] + np.arange(count)]
        return out

    def shared_store(self, idx, addrs, values, dtype, what):
        itemsize = np.dtype(dtype).itemsize
        values = np.asarray(values).astype(dtype, copy=False)
        if values.ndim == 1:
            values = values[:, None]
        count = values.shape[1]
        rank, off = self.shared_locate(addrs, itemsize * count, what)
        self.shared_track(idx, rank, off, itemsize * count, True, what)
        for r in np.unique(rank):
            sel = rank == r
            v = self.smem_view(int(r), dtype)
            v[((off[sel] // itemsize)[:, None] + np.arange(count)).ravel()] = values[sel].ravel()

    # --- generic addresses ---------------------------------------------------

    def is_shared_generic(self, addrs):
        a = np.asarray(addrs, dtype=np.uint64)
        return (a >= np.uint64(SHARED_GENERIC)) & (a < np.uint64(SHARED_GENERIC + (1 << 32)))

    # --- running ------------------------------------------------------------

    def compile(self):
        from . import compiler
        self.code = compiler.compile_kernel(self)
        # straight-line runs of alu instructions, for running them in one step
        n = len(self.code)
        label_at = np.zeros(n + 1, dtype=bool)
        for target in self.kernel.labels.values():
            label_at[target] = True
        self.run_end = np.zeros(n, dtype=np.int64)
        end = n - 1
        for i in range(n - 1, -1, -1):
            c = self.code[i]
            if c.kind != 'alu':
                end = i - 1
                self.run_end[i] = i - 1
                continue
            if i + 1 < n and label_at[i + 1]:
                end = i
            self.run_end[i] = end

    def block(self, idx, why, waker):
        """Blocks threads idx: `waker()` -> bool tells whether they may retry
        their instruction."""
        self.state[idx] = BLOCKED
        for t in idx.tolist():
            self.wait_info[t] = why
        key = id(waker)
        entry = self.blocked_fns.get(key)
        if entry is None:
            self.blocked_fns[key] = [waker, set(idx.tolist())]
        else:
            entry[1].update(idx.tolist())

    def wake(self):
        """Wakes blocked threads whose condition now holds; True if any."""
        woke = False
        for key, (waker, threads) in list(self.blocked_fns.items()):
            if not threads:
                del self.blocked_fns[key]
                continue
            if waker():
                t = np.array(sorted(threads), dtype=np.int64)
                self.state[t] = RUN
                for x in threads:
                    self.wait_info.pop(x, None)
                del self.blocked_fns[key]
                woke = True
        return woke

    def progress_async(self):
        """Lands the oldest in-flight asynchronous work; True if any."""
        for ext in self.extensions.values():
            if ext.progress():
                return True
        return False

    def run_cluster(self):
        code = self.code
        pc, state = self.pc, self.state
        run_end = self.run_end
        rng = None
        if self.opt.schedule != 'lowest-pc':
            import random
            kind, _, seed = self.opt.schedule.partition(':')
            if kind != 'warpgroups':
                raise EmulatorError('schedule %r: lowest-pc or warpgroups[:SEED]'
                                    % self.opt.schedule)
            rng = random.Random('%s/%d' % (seed, self.cluster_index))
        while True:
            self.steps += 1
            if self.steps > self.opt.max_steps:
                raise EmulatorError('more than %d scheduling steps: an endless loop?'
                                    % self.opt.max_steps)
            running = np.flatnonzero(state == RUN)
            if running.size == 0:
                if (state == DONE).all():
                    break
                if self.wake():
                    continue
                if self.progress_async():
                    self.wake()
                    continue
                self.deadlock()
            pcs = pc[running]
            if rng is None:
                p = int(pcs.min())
            else:
                # a random warpgroup's lowest PC: warpgroups drift apart
                wg = self.warpgroup[running]
                pick = rng.choice(np.unique(wg).tolist())
                p = int(pcs[wg == pick].min())
            here = pcs == p
            idx = running[here]
            c = code[p]
            if c.kind == 'alu':
                end = int(run_end[p])
                if idx.size != running.size:
                    later = pcs[(pcs > p) & (pcs <= end)]
                    if later.size:
                        end = int(later.min()) - 1
                for q in range(p, end + 1):
                    cq = code[q]
                    pred = cq.inst.pred
                    if pred is None:
                        cq.fn(idx)
                    else:
                        sel = self._pred(pred, idx, cq)
                        if sel.size:
                            cq.fn(sel)
                pc[idx] = end + 1
                continue
            inst = c.inst
            if inst.pred is not None:
                take = self._pred(inst.pred, idx, c)
                if take.size != idx.size:
                    skip = np.setdiff1d(idx, take, assume_unique=True)
                    pc[skip] = p + 1
                idx = take
                if idx.size == 0:
                    continue
            kind = c.kind
            if kind == 'bra':
                pc[idx] = c.target
            elif kind == 'ret':
                self.exit_threads(idx)
            elif kind == 'block':
                waiting = c.fn(idx)
                if waiting is None or waiting.size == 0:
                    pc[idx] = p + 1
                else:
                    done = np.setdiff1d(idx, waiting, assume_unique=True)
                    pc[done] = p + 1
            elif kind == 'coll':
                self.collective(c, p, idx)
            else:
                raise EmulatorError('bad instruction kind ' + kind)

    def _pred(self, pred, idx, c):
        neg, name = pred
        arr = self.R.get(name)
        if arr is None:
            raise EmulatorError('%r: unknown predicate %s' % (c.inst, name))
        if self.opt.check_registers and name not in self.full:
            if not self.Wm[name][idx].all():
                self.hz.add('reads of unwritten registers', '%s in %r' % (name, c.inst))
        v = arr[idx]
        return idx[~v] if neg else idx[v]

    def unit_of(self, unit, t):
        """The threads of thread t's warp / warpgroup / CTA / cluster."""
        if unit == 'warp':
            b = (t // 32) * 32
            return np.arange(b, min(b + 32, self.N))
        if unit == 'warpgroup':
            b = (t // 128) * 128
            return np.arange(b, min(b + 128, self.N))
        if unit == 'cta':
            b = (t // self.T) * self.T
            return np.arange(b, b + self.T)
        return np.arange(self.N)

    UNIT_SIZE = {'warp': 32, 'warpgroup': 128}

    def collective(self, c, p, idx):
        """Threads idx reached collective c at p: run it for every unit
        whose live threads are all here, block the others."""
        waiting = self.coll_waiting.setdefault(p, np.zeros(self.N, dtype=bool))
        waiting[idx] = True
        size = self.UNIT_SIZE.get(c.unit, self.T if c.unit == 'cta' else self.N)
        for base in np.unique(idx // size * size).tolist():
            u = np.arange(base, min(base + size, self.N))
            live = u[self.state[u] != DONE]
            if waiting[live].all():
                waiting[live] = False
                for x in live.tolist():
                    self.wait_info.pop(x, None)
                if live.size != u.size:
                    self.hz.add('collective instructions not reached by every thread '
                                'of their %s' % c.unit, repr(c.inst))
                self.state[live] = RUN
                c.fn(live)
                self.pc[live] = p + 1
            else:
                # released by the unit's last thread to arrive
                here = u[waiting[u]]
                self.state[here] = BLOCKED
                why = 'the rest of its %s at %r' % (c.unit, c.inst)
                for x in here.tolist():
                    self.wait_info[x] = why

    def exit_threads(self, idx):
        for ext in self.extensions.values():
            ext.on_exit(idx)
        self.state[idx] = DONE
        # a thread that exits no longer holds back its unit's collectives
        for p, waiting in list(self.coll_waiting.items()):
            if not waiting.any():
                continue
            c = self.code[p]
            size = self.UNIT_SIZE.get(c.unit, self.T if c.unit == 'cta' else self.N)
            for base in np.unique(np.flatnonzero(waiting) // size * size).tolist():
                u = np.arange(base, min(base + size, self.N))
                live = u[self.state[u] != DONE]
                if live.size and waiting[live].all():
                    waiting[live] = False
                    self.hz.add('collective instructions not reached by every thread '
                                'of their %s' % c.unit, repr(c.inst))
                    self.state[live] = RUN
                    for x in live.tolist():
                        self.wait_info.pop(x, None)
                    c.fn(live)
                    self.pc[live] = p + 1

    def deadlock(self):
        groups = {}
        for t, why in sorted(self.wait_info.items()):
            groups.setdefault(why, []).append(t)
        lines = ['%d thread(s) (%s) wait for %s' % (
            len(ts), _ranges(ts), why) for why, ts in groups.items()]
        raise EmulatorError('deadlock in cluster %d: nothing can run;\n  ' % self.cluster_index
                            + '\n  '.join(lines[:8]))


def _ranges(ts):
    out, start, prev = [], None, None
    for t in ts:
        if start is None:
            start = prev = t
        elif t == prev + 1:
            prev = t
        else:
            out.append('%d-%d' % (start, prev) if prev != start else str(start))
            start = prev = t
    if start is not None:
        out.append('%d-%d' % (start, prev) if prev != start else str(start))
    return 'threads ' + ', '.join(out[:4]) + (' ...' if len(out) > 4 else '')
