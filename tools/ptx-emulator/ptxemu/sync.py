"""Synchronization: named barriers (bar.sync), mbarriers with phases and
transaction counts, cluster barriers, proxy fences, warp shuffles and
votes, setmaxnreg.

mbarrier semantics (PTX ISA, "Parallel Synchronization and Communication
Instructions: mbarrier"): init sets the expected arrival count; a phase
completes when its pending arrivals and its transaction count are both
zero, and the next phase starts with the expected count again.
arrive.expect_tx raises the transaction count, then arrives; a TMA copy's
complete_tx lowers it by the bytes it wrote. try_wait.parity P succeeds
once the phase of parity P has completed, that is while the current
phase's parity differs from P.
"""
import numpy as np

from .compiler import address_of
from .errors import EmulatorError
from .machine import BLOCKED, DONE, RUN, Compiled
from .memory import OFFSET_MASK, RANK_SHIFT, SHARED_GENERIC


def install(ctx):
    ctx.extensions['sync'] = Sync(ctx)


class MBarrier:
    __slots__ = ('count', 'pending', 'tx', 'phase', 'vc', 'cum_vc', 'init_agent',
                 'init_clock', 'key')

    def __init__(self, key, count, n2, init_agent, init_clock):
        self.key = key
        self.count = count
        self.pending = count
        self.tx = 0
        self.phase = 0
        self.vc = np.zeros(n2, dtype=np.int32)
        self.cum_vc = np.zeros(n2, dtype=np.int32)
        self.init_agent, self.init_clock = init_agent, init_clock


class Sync:
    def __init__(self, ctx):
        self.ctx = ctx
        self.reset()

    def reset(self):
        self.barriers = {}           # (rank, offset) -> MBarrier
        self.named = {}              # (rank, id) -> {'arrived': [threads], 'count': n}
        self.cluster_arrivals = np.zeros(self.ctx.N, dtype=np.int64)
        self.cluster_vc = {}         # generation -> joined clock
        self.regcap = {}             # warpgroup -> registers per thread

    def progress(self):
        return False

    def on_exit(self, idx):
        ctx = self.ctx
        # the CTA's last thread: its barriers must be quiet
        if (ctx.state[np.setdiff1d(np.arange(ctx.N), idx)] == DONE).all():
            for key, bar in self.barriers.items():
                if bar.tx != 0:
                    ctx.hz.add('mbarriers with transactions outstanding at exit',
                               'smem+%d: tx-count %d' % (key[1], bar.tx))

    # --- compile ---------------------------------------------------------

    def compile(self, inst):
        m = inst.mods
        what = repr(inst)
        if m[0] == 'bar' and len(m) > 1 and m[1] == 'warp':
            return self._bar_warp(inst, what)
        if m[0] in ('bar', 'barrier') and (len(m) < 2 or m[1] != 'cluster'):
            return self._bar(inst, what)
        if m[0] == 'barrier' and m[1] == 'cluster':
            return self._cluster_barrier(inst, what)
        if m[0] == 'mbarrier':
            return self._mbarrier(inst, what)
        if m[0] == 'fence' or m[0] == 'membar':
            if 'proxy' in m and 'async' in m:
                return Compiled('alu', inst, fn=self._fence_proxy)
            return Compiled('alu', inst, fn=lambda idx: None)
        if m[0] == 'shfl':
            return self._shfl(inst, what)
        if m[0] == 'vote':
            return self._vote(inst, what)
        if m[0] == 'setmaxnreg':
            return self._setmaxnreg(inst, what)
        if m[0] == 'elect':
            return self._elect(inst, what)
        if m[0] == 'mapa':
            return self._mapa(inst, what)
        return None

    # --- bar.sync ------------------------------------------------------------

    def _bar(self, inst, what):
        ctx = self.ctx
        m = inst.mods
        if 'red' in m:
            raise EmulatorError('instruction not emulated: %s' % what)
        arrive_only = 'arrive' in m
        rid = ctx.reader(inst.args[0], 32, what)
        rcount = ctx.reader(inst.args[1], 32, what) if len(inst.args) > 1 else None
        named = self.named

        def bar(idx):
            ids = rid(idx)
            counts = rcount(idx) if rcount is not None else np.full(idx.size, ctx.T, np.uint32)
            blocked = []
            for key in sorted(set(zip((ctx.rank[idx]).tolist(), ids.tolist()))):
                sel = (ctx.rank[idx] == key[0]) & (ids == key[1])
                t = idx[sel]
                cnt = set(counts[sel].tolist())
                if len(cnt) != 1:
                    ctx.hz.add('bar.sync with different thread counts', what)
                count = max(cnt)
                if count % 32 or count > ctx.T or count == 0:
                    raise EmulatorError('%s: thread count %d' % (what, count))
                entry = named.setdefault(key, {'arrived': [], 'waiting': [], 'count': count})
                if entry['count'] != count:
                    ctx.hz.add('bar.sync with different thread counts', what)
                entry['arrived'].extend(t.tolist())
                if not arrive_only:
                    entry['waiting'].extend(t.tolist())
                if len(entry['arrived']) >= entry['count']:
                    parts = np.array(entry['arrived'], dtype=np.int64)
                    if len(set(entry['arrived'])) != len(entry['arrived']):
                        ctx.hz.add('threads arriving twice at one barrier generation', what)
                    ctx.clocks.sync(parts)
                    waiters = np.array(entry['waiting'], dtype=np.int64)
                    # threads blocked earlier resume after the barrier
                    early = np.setdiff1d(waiters, t)
                    if early.size:
                        ctx.state[early] = RUN
                        ctx.pc[early] += 1
                        for x in early.tolist():
                            ctx.wait_info.pop(x, None)
                    if len(entry['arrived']) > entry['count']:
                        ctx.hz.add('more threads than the barrier count arriving', what)
                    del named[key]
                elif not arrive_only:
                    blocked.extend(t.tolist())
                    ctx.state[t] = BLOCKED
                    for x in t.tolist():
                        ctx.wait_info[x] = 'barrier %d of CTA %d (%d of %d threads arrived)' % (
                            key[1], key[0], len(entry['arrived']), count)
            # blocked threads stay at this instruction; the releasing call
            # advances them
            return np.array(blocked, dtype=np.int64)
        return Compiled('block', inst, fn=self._bar_wrap(bar))

    def _bar_wrap(self, bar):
        ctx = self.ctx

        def run(idx):
            blocked = bar(idx)
            # blocked threads were set BLOCKED by bar(); they are released by
            # the last arrival, which advances their pc itself
            return blocked
        return run

    # --- cluster barrier ---------------------------------------------------------

    def _cluster_barrier(self, inst, what):
        ctx = self.ctx
        m = inst.mods
        if 'arrive' in m:
            def arrive(idx):
                self.cluster_arrivals[idx] += 1
                for gen in np.unique(self.cluster_arrivals[idx]).tolist():
                    t = idx[self.cluster_arrivals[idx] == gen]
                    joined = ctx.clocks.release(t)
                    prev = self.cluster_vc.get(gen)
                    self.cluster_vc[gen] = joined if prev is None else np.maximum(prev, joined)
            return Compiled('alu', inst, fn=arrive)
        if 'wait' in m:
            def ready(gen):
                live = ctx.state != DONE
                return (self.cluster_arrivals[live] >= gen).all()

            def wait(idx):
                waiting = []
                for gen in np.unique(self.cluster_arrivals[idx]).tolist():
                    t = idx[self.cluster_arrivals[idx] == gen]
                    if gen == 0:
                        ctx.hz.add('barrier.cluster.wait without an arrive', what)
                        continue
                    if ready(gen):
                        ctx.clocks.acquire(t, self.cluster_vc[gen])
                    else:
                        waiting.extend(t.tolist())
                        ctx.block(t, 'the cluster barrier (generation %d)' % gen,
                                  lambda g=gen: ready(g))
                return np.array(waiting, dtype=np.int64)
            return Compiled('block', inst, fn=wait)
        raise EmulatorError('instruction not emulated: %s' % what)

    # --- fences --------------------------------------------------------------------

    def _fence_proxy(self, idx):
        ctx = self.ctx
        for r in np.unique(ctx.rank[idx]).tolist():
            ctx.shadow[r].fence_proxy(idx[ctx.rank[idx] == r])

    # --- mbarrier ------------------------------------------------------------------

    def barrier_key(self, addr, what, rank_of=None):
        """(rank, offset) of an mbarrier's shared-window address."""
        ctx = self.ctx
        a = int(addr)
        if a >= SHARED_GENERIC:
            a -= SHARED_GENERIC
        rank = a >> RANK_SHIFT
        off = (a & OFFSET_MASK) - ctx.smem_base
        if rank >= ctx.ncta or off < 0 or off + 8 > ctx.smem_size or off % 8:
            raise EmulatorError('%s: %#x is not an mbarrier address' % (what, int(addr)))
        return (rank, off)

    def _keys(self, idx, raddr, what, local):
        a = raddr(idx)
        if local:
            # .shared::cta: the executing CTA's barrier
            rank = ctx_rank = self.ctx.rank[idx].astype(np.uint64)
            a = np.where(a >= np.uint64(SHARED_GENERIC), a - np.uint64(SHARED_GENERIC), a)
            a = (a & np.uint64(OFFSET_MASK)) | (rank << np.uint64(RANK_SHIFT))
        return [self.barrier_key(x, what) for x in a.tolist()]

    def get(self, key, what, agent_clock=None):
        bar = self.barriers.get(key)
        if bar is None:
            raise EmulatorError('%s: the mbarrier at smem+%d of CTA %d was never initialized'
                                % (what, key[1], key[0]))
        return bar

    def check_init_order(self, bar, seen, what):
        """`seen`: the user's clock of the initializing thread."""
        if seen < bar.init_clock:
            self.ctx.hz.add('mbarrier uses not ordered after its mbarrier.init',
                            '%s on smem+%d' % (what, bar.key[1]))

    def arrive(self, bar, threads, count, what, remote=False):
        ctx = self.ctx
        for t in threads:
            self.check_init_order(bar, ctx.clocks.vc[t, bar.init_agent], what)
        joined = ctx.clocks.release(np.asarray(threads))
        bar.vc = np.maximum(bar.vc, joined)
        state = bar.phase
        bar.pending -= count
        if bar.pending < 0:
            ctx.hz.add('mbarrier arrivals beyond the expected count', what)
            bar.pending = 0
        self.maybe_complete(bar)
        return state

    def expect_tx(self, bar, nbytes):
        bar.tx += nbytes

    def complete_tx(self, bar, nbytes, release_vc, what):
        ctx = self.ctx
        bar.tx -= nbytes
        bar.vc = np.maximum(bar.vc, release_vc)
        if bar.tx < 0:
            ctx.hz.add('mbarrier transaction counts below zero (more bytes than expected)',
                       '%s on smem+%d' % (what, bar.key[1]))
        self.maybe_complete(bar)

    def maybe_complete(self, bar):
        if bar.pending == 0 and bar.tx <= 0:
            if bar.tx < 0:
                bar.tx = 0
            bar.cum_vc = bar.vc   # the phase just completed
            bar.vc = np.zeros_like(bar.vc)
            bar.phase += 1
            bar.pending = bar.count

    def _mbarrier(self, inst, what):
        ctx = self.ctx
        m = inst.mods
        kind = m[1]
        local = 'shared::cluster' not in m
        if kind == 'init':
            raddr = address_of(ctx, inst.args[0], what)
            rcount = ctx.reader(inst.args[1], 32, what)

            def init(idx):
                keys = self._keys(idx, raddr, what, local)
                counts = rcount(idx)
                for t, key, c in zip(idx.tolist(), keys, counts.tolist()):
                    old = self.barriers.get(key)
                    if old is not None and (old.pending != old.count or old.tx):
                        ctx.hz.add('mbarriers re-initialized while in use', what)
                    if c < 1 or c >= (1 << 20):
                        raise EmulatorError('%s: count %d' % (what, c))
                    self.barriers[key] = MBarrier(key, c, ctx.clocks.width, t, int(ctx.clocks.vc[t, t]))
                    ctx.shadow[key[0]].barrier[key[1]:key[1] + 8] = True
                    ctx.shadow[key[0]].written[key[1]:key[1] + 8] = True
            return Compiled('alu', inst, fn=init)
        if kind == 'inval':
            raddr = address_of(ctx, inst.args[0], what)

            def inval(idx):
                for key in self._keys(idx, raddr, what, local):
                    self.barriers.pop(key, None)
                    ctx.shadow[key[0]].barrier[key[1]:key[1] + 8] = False
            return Compiled('alu', inst, fn=inval)
        if kind == 'arrive' or kind == 'arrive_drop':
            expect = 'expect_tx' in m
            if 'noComplete' in m:
                raise EmulatorError('instruction not emulated: %s' % what)
            d = inst.args[0]
            wr = ctx.writer(d, what)
            raddr = address_of(ctx, inst.args[1], what)
            rextra = ctx.reader(inst.args[2], 32, what) if len(inst.args) > 2 else None

            def arrive(idx):
                keys = self._keys(idx, raddr, what, local)
                extra = rextra(idx) if rextra is not None else None
                states = np.zeros(idx.size, dtype=np.uint64)
                for i, (t, key) in enumerate(zip(idx.tolist(), keys)):
                    bar = self.get(key, what)
                    if key[0] != ctx.rank[t] and local:
                        raise EmulatorError('%s: another CTA\'s barrier' % what)
                    if expect:
                        self.expect_tx(bar, int(extra[i]))
                        count = 1
                    else:
                        count = int(extra[i]) if extra is not None else 1
                    if kind == 'arrive_drop':
                        bar.count -= count
                    states[i] = self.arrive(bar, [t], count, what)
                wr(idx, states)
            return Compiled('alu', inst, fn=arrive)
        if kind == 'expect_tx':
            raddr = address_of(ctx, inst.args[0], what)
            rtx = ctx.reader(inst.args[1], 32, what)

            def expect(idx):
                for key, n in zip(self._keys(idx, raddr, what, local), rtx(idx).tolist()):
                    self.expect_tx(self.get(key, what), n)
            return Compiled('alu', inst, fn=expect)
        if kind in ('try_wait', 'test_wait'):
            parity = 'parity' in m
            d = inst.args[0]
            wr = ctx.writer(d, what)
            raddr = address_of(ctx, inst.args[1], what)
            rphase = ctx.reader(inst.args[2], 64 if not parity else 32, what)

            def done(bar, want):
                if parity:
                    return (bar.phase & 1) != (want & 1)
                return bar.phase > want

            def wait(idx):
                keys = self._keys(idx, raddr, what, local)
                want = rphase(idx).tolist()
                ok = np.zeros(idx.size, dtype=bool)
                waiting = {}
                for i, (t, key, w) in enumerate(zip(idx.tolist(), keys, want)):
                    bar = self.get(key, what)
                    self.check_init_order(bar, ctx.clocks.vc[t, bar.init_agent], what)
                    if done(bar, w):
                        ok[i] = True
                    else:
                        waiting.setdefault((key, w), []).append(t)
                got = idx[ok]
                if got.size:
                    for key in set(k for k, o in zip(keys, ok) if o):
                        sel = np.array([k == key for k in keys]) & ok
                        ctx.clocks.acquire(idx[sel], self.barriers[key].cum_vc)
                    wr(got, np.ones(got.size, dtype=bool))
                blocked = []
                for (key, w), ts in waiting.items():
                    bar = self.barriers[key]
                    t = np.array(ts, dtype=np.int64)
                    blocked.extend(ts)
                    ctx.block(t, 'mbarrier smem+%d of CTA %d (phase %d, waiting for parity %d)'
                              % (key[1], key[0], bar.phase, w) if parity else
                              'mbarrier smem+%d of CTA %d (phase %d)' % (key[1], key[0], bar.phase),
                              lambda b=bar, w=w: done(b, w))
                return np.array(blocked, dtype=np.int64)
            return Compiled('block', inst, fn=wait)
        if kind == 'complete_tx':
            raddr = address_of(ctx, inst.args[0], what)
            rtx = ctx.reader(inst.args[1], 32, what)

            def complete(idx):
                for t, key, n in zip(idx.tolist(), self._keys(idx, raddr, what, local),
                                     rtx(idx).tolist()):
                    self.complete_tx(self.get(key, what), n, ctx.clocks.release([t]), what)
            return Compiled('alu', inst, fn=complete)
        raise EmulatorError('instruction not emulated: %s' % what)

    def _mapa(self, inst, what):
        ctx = self.ctx
        d, a, r = inst.args
        wr = ctx.writer(d, what)
        w = ctx.reg_width(d) or 64
        ra = ctx.reader(a, 64, what)
        rr = ctx.reader(r, 32, what)

        def mapa(idx):
            addr = ra(idx)
            if 'shared' not in inst.mods[1]:
                raise EmulatorError('%s: generic mapa' % what)
            addr = np.where(addr >= np.uint64(SHARED_GENERIC), addr - np.uint64(SHARED_GENERIC), addr)
            rank = rr(idx).astype(np.uint64)
            if (rank >= ctx.ncta).any():
                raise EmulatorError('%s: rank %d outside the cluster of %d'
                                    % (what, int(rank.max()), ctx.ncta))
            wr(idx, (addr & np.uint64(OFFSET_MASK)) | (rank << np.uint64(RANK_SHIFT)))
        return Compiled('alu', inst, fn=mapa)

    # --- warp collectives ------------------------------------------------------

    def _shfl(self, inst, what):
        ctx = self.ctx
        mode = inst.mods[2] if inst.mods[1] == 'sync' else inst.mods[1]
        d, a, b, c, mask = inst.args
        if d.kind == 'reg' and '|' in d.name:
            raise EmulatorError('%s: shfl with a predicate destination' % what)
        wr = ctx.writer(d, what)
        ra, rb, rc, rm = (ctx.reader(x, 32, what) for x in (a, b, c, mask))

        def shfl(idx):
            lanes = ctx.laneid[idx]
            members = rm(idx)
            for lane, mem in zip(lanes.tolist(), members.tolist()):
                if not (mem >> lane) & 1:
                    ctx.hz.add('shfl.sync by a thread outside its membermask', what)
            present = np.zeros(32, dtype=bool)
            present[lanes] = True
            if any(((int(members[0]) >> l) & 1) and not present[l] for l in range(32)):
                ctx.hz.add('shfl.sync with membermask lanes that did not execute it', what)
            vals = np.zeros(32, dtype=np.uint32)
            vals[lanes] = ra(idx)
            bval = (rb(idx) & np.uint32(0x1F)).astype(np.int64)
            cval = rc(idx).astype(np.int64)
            segmask = (cval >> 8) & 0x1F
            maxlane = (lanes & segmask) | (cval & 0x1F & ~segmask)
            minlane = lanes & segmask
            if mode == 'up':
                j = lanes - bval
                ok = j >= maxlane
            elif mode == 'down':
                j = lanes + bval
                ok = j <= maxlane
            elif mode == 'bfly':
                j = lanes ^ bval
                ok = j <= maxlane
            else:
                j = minlane | (bval & ~segmask)
                ok = j <= maxlane
            j = np.where(ok, j, lanes)
            if not present[j].all():
                ctx.hz.add('shfl.sync reading lanes that did not execute it', what)
            wr(idx, vals[j])
        return Compiled('coll', inst, fn=shfl, unit='warp')

    def _vote(self, inst, what):
        ctx = self.ctx
        mode = [x for x in inst.mods[1:] if x in ('all', 'any', 'uni', 'ballot')][0]
        d, a, mask = inst.args
        wr = ctx.writer(d, what)
        ra = ctx.reader(a, 1, what)

        def vote(idx):
            p = ra(idx)
            if mode == 'ballot':
                bits = np.uint32(0)
                for lane, v in zip(ctx.laneid[idx].tolist(), p.tolist()):
                    if v:
                        bits |= np.uint32(1 << lane)
                wr(idx, np.full(idx.size, bits, dtype=np.uint32))
            elif mode == 'all':
                wr(idx, np.full(idx.size, p.all()))
            elif mode == 'any':
                wr(idx, np.full(idx.size, p.any()))
            else:
                wr(idx, np.full(idx.size, p.all() or not p.any()))
        return Compiled('coll', inst, fn=vote, unit='warp')

    def _elect(self, inst, what):
        """elect.sync d|p, membermask: the lowest lane of the mask that
        executes it is the leader (p true there), every lane gets its id."""
        ctx = self.ctx
        d = inst.args[0]
        if d.kind != 'reg' or '|' not in d.name:
            raise EmulatorError('%s: expected d|p' % what)
        rname, pname = d.name.split('|')
        from .parse import Operand
        wr = ctx.writer(Operand('reg', name=rname), what) if rname != '_' else None
        wp = ctx.writer(Operand('reg', name=pname), what)
        rm = ctx.reader(inst.args[1], 32, what)

        def elect(idx):
            lanes = ctx.laneid[idx]
            mask = int(rm(idx)[0])
            members = [l for l in lanes.tolist() if (mask >> l) & 1]
            if not members:
                raise EmulatorError('%s: no lane of the mask executes it' % what)
            leader = min(members)
            if wr is not None:
                wr(idx, np.full(idx.size, leader, dtype=np.uint32))
            wp(idx, lanes == leader)
        return Compiled('coll', inst, fn=elect, unit='warp')

    def _bar_warp(self, inst, what):
        """bar.warp.sync membermask: the warp's lanes meet (a barrier of the
        warp for the memory model too)."""
        ctx = self.ctx

        def sync(idx):
            ctx.clocks.sync(idx)
        return Compiled('coll', inst, fn=sync, unit='warp')

    def _setmaxnreg(self, inst, what):
        ctx = self.ctx
        inc = 'inc' in inst.mods
        n = inst.args[0].value

        def setmaxnreg(idx):
            if n < 24 or n > 256 or n % 8:
                raise EmulatorError('%s: register count %d' % (what, n))
            wg = int(ctx.warpgroup[idx[0]])
            prev = self.regcap.get(wg)
            if prev is not None and ((inc and n < prev) or (not inc and n > prev)):
                ctx.hz.add('setmaxnreg moving the register count the wrong way', what)
            self.regcap[wg] = n
            per_cta = {}
            for g, regs in self.regcap.items():
                r = (g * 128) // ctx.T
                per_cta[r] = per_cta.get(r, 0) + regs * 128
            for r, total in per_cta.items():
                # warpgroups that have not set a count keep theirs: unknown,
                # so only the counts set are summed
                if total > 65536:
                    ctx.hz.add('setmaxnreg counts exceeding the 64K registers of a '
                               'multiprocessor', '%s: %d registers in CTA %d' % (what, total, r))
        return Compiled('coll', inst, fn=setmaxnreg, unit='warpgroup')
