"""What the emulator reports besides results: hazards of the kernel.

Shared-memory races are found with vector clocks (happens-before, as
FastTrack does), so they do not depend on the order the emulator happens
to run threads in. The agents are the threads of a cluster and, per
thread, the asynchronous operations it issues (TMA copies, wgmma and
tcgen05 operations), which are ordered with the threads only through what
the PTX memory model orders them by: mbarrier phases (arrive = release,
a successful wait = acquire, a TMA transfer's complete_tx releases the
copy), bar.sync, cluster barriers, wgmma.wait_group and
cp.async.bulk.wait_group. Async-proxy reads of data written through the
generic proxy also need that writer's fence.proxy.async.
"""
import numpy as np


class Hazards:
    """Hazards by category, with a count and the first examples."""

    LIMIT = 3

    def __init__(self):
        self.found = {}   # category -> [count, examples]

    def add(self, category, example, count=1):
        entry = self.found.setdefault(category, [0, []])
        entry[0] += count
        if len(entry[1]) < self.LIMIT:
            entry[1].append(example)

    def __bool__(self):
        return bool(self.found)

    def report(self):
        lines = []
        for category, (count, examples) in self.found.items():
            lines.append('%d %s, e.g. %s' % (count, category, '; '.join(map(str, examples))))
        return lines

    def merge(self, other):
        for category, (count, examples) in other.found.items():
            entry = self.found.setdefault(category, [0, []])
            entry[0] += count
            entry[1].extend(examples[:self.LIMIT - len(entry[1])])


class Clocks:
    """Vector clocks of `n` threads over the threads and their async agents.

    Agent n * (1 + k) + t is the async operations of kind k that thread t
    issues: 0 TMA loads and cp.async copies, 1 bulk stores (TMA stores),
    2 MMAs (wgmma, tcgen05). Each kind completes through its own mechanism
    (mbarriers, bulk groups, wgmma groups), so a thread that waited for one
    kind is not taken to have waited for another."""

    KINDS = {'load': 0, 'store': 1, 'mma': 2}

    def __init__(self, n):
        self.n = n
        self.width = n * (1 + len(self.KINDS))
        self.vc = np.zeros((n, self.width), dtype=np.int32)
        self.vc[np.arange(n), np.arange(n)] = 1
        self.async_count = np.zeros(self.width, dtype=np.int32)

    def epoch(self, agents):
        return self.vc[agents, agents]

    def release(self, threads):
        """The joined clocks of `threads` (a release of each), then their
        own clocks advance."""
        threads = np.asarray(threads)
        joined = self.vc[threads].max(axis=0)
        self.vc[threads, threads] += 1
        return joined

    def acquire(self, threads, clock):
        threads = np.asarray(threads)
        self.vc[threads] = np.maximum(self.vc[threads], clock[None, :])

    def sync(self, threads):
        """bar.sync: every participant acquires every participant's release."""
        joined = self.release(threads)
        self.acquire(threads, joined)

    def issue(self, thread, kind='load'):
        """A new async operation of `thread`: (its agent, its epoch, the
        clock it happens after). Its agent component is what the thread
        has acquired of its own earlier operations, not the new one, so two
        operations of one thread are unordered until it waits for them."""
        agent = self.n * (1 + self.KINDS[kind]) + thread
        self.async_count[agent] += 1
        epoch = int(self.async_count[agent])
        vc = self.vc[thread].copy()
        self.vc[thread, thread] += 1
        return agent, epoch, vc

    @staticmethod
    def completion(agent, epoch, vc):
        """What an async operation's completion releases."""
        rel = vc.copy()
        rel[agent] = max(rel[agent], epoch)
        return rel


class SharedShadow:
    """Per byte of one CTA's shared memory: the last write and read (agent,
    clock), whether anything wrote it, in-flight async writes (TMA loads
    not landed) and reads (wgmma, TMA stores not retired), generic writes
    not yet fenced for the async proxy, and mbarrier objects."""

    def __init__(self, size, n_threads):
        self.size = size
        self.n = n_threads
        self.w_agent = np.zeros(size, dtype=np.int32)
        self.w_clock = np.zeros(size, dtype=np.int32)
        self.r_agent = np.zeros(size, dtype=np.int32)
        self.r_clock = np.zeros(size, dtype=np.int32)
        self.written = np.zeros(size, dtype=bool)
        self.pending_w = np.zeros(size, dtype=np.int16)
        self.pending_r = np.zeros(size, dtype=np.int16)
        self.unfenced = np.zeros(size, dtype=bool)
        self.barrier = np.zeros(size, dtype=bool)

    def access(self, hz, offsets, agents, epochs, hb, write, what, async_read=False,
               uninit_ok=False):
        """Checks and records an access of bytes `offsets` by `agents`
        (per byte) at `epochs`; hb(prev_agents) gives, per byte, the
        accessor's clock of those agents. `what` names the instruction."""
        if offsets.size == 0:
            return
        if self.barrier[offsets].any():
            hz.add('generic accesses to mbarrier objects', what)
        pa = self.w_agent[offsets]
        pc = self.w_clock[offsets]
        seen = hb(pa)
        race = pc > seen
        if race.any():
            i = int(np.flatnonzero(race)[0])
            hz.add('shared-memory races (%s after an unordered write)' % ('write' if write else 'read'),
                   '%s at smem+%d vs. a write by %s' % (what, int(offsets[i]), _agent(pa[i], self.n)),
                   int(race.sum()))
        if self.pending_w[offsets].any():
            i = int(np.flatnonzero(self.pending_w[offsets])[0])
            hz.add('accesses to async-copy destinations before the copy completed',
                   '%s at smem+%d' % (what, int(offsets[i])))
        if write:
            ra = self.r_agent[offsets]
            rc = self.r_clock[offsets]
            seen_r = hb(ra)
            war = rc > seen_r
            if war.any():
                i = int(np.flatnonzero(war)[0])
                hz.add('shared-memory races (write after an unordered read)',
                       '%s at smem+%d vs. a read by %s' % (what, int(offsets[i]), _agent(ra[i], self.n)),
                       int(war.sum()))
            if self.pending_r[offsets].any():
                i = int(np.flatnonzero(self.pending_r[offsets])[0])
                hz.add('writes to shared memory an in-flight wgmma or TMA store reads',
                       '%s at smem+%d' % (what, int(offsets[i])))
            if agents.size > 1:
                order = np.argsort(offsets, kind='stable')
                so, sa = offsets[order], agents[order]
                dup = (so[1:] == so[:-1]) & (sa[1:] != sa[:-1])
                if dup.any():
                    hz.add('shared-memory races (two threads write one byte in one instruction)',
                           '%s at smem+%d' % (what, int(so[1:][dup][0])), int(dup.sum()))
            self.w_agent[offsets] = agents
            self.w_clock[offsets] = epochs
            self.written[offsets] = True
            self.unfenced[offsets] = agents < self.n
        else:
            # (uninit_ok: a copy that carries the unwritten marks along,
            # reported where its destination's bytes are used)
            if not uninit_ok and not self.written[offsets].all():
                i = int(np.flatnonzero(~self.written[offsets])[0])
                hz.add('reads of unwritten shared memory', '%s at smem+%d' % (what, int(offsets[i])))
            if async_read:
                unf = self.unfenced[offsets]
                if unf.any():
                    i = int(np.flatnonzero(unf)[0])
                    hz.add('async-proxy reads of generic writes without fence.proxy.async',
                           '%s at smem+%d (written by %s)' % (what, int(offsets[i]),
                                                             _agent(self.w_agent[offsets][i], self.n)))
            self.r_agent[offsets] = agents
            self.r_clock[offsets] = epochs

    def fence_proxy(self, threads):
        """fence.proxy.async by `threads`: their generic writes so far are
        visible to the async proxy."""
        mask = self.unfenced & np.isin(self.w_agent, threads)
        self.unfenced[mask] = False


def _agent(a, n):
    a = int(a)
    if a < n:
        return 'thread %d' % a
    kind = ('a TMA load or cp.async', 'a TMA store', 'an MMA')[a // n - 1]
    return '%s of thread %d' % (kind, a % n)
