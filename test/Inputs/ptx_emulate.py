#!/usr/bin/env python3
"""Executes a conv3d sm80 kernel's PTX on the host, to check what the PTX
computes without a GPU (test/GPU/sm80-emulate.test).

An interpreter of the PTX subset the sm80 lowering emits (integer and f32
arithmetic, f16/bf16 conversions, cp.async, ldmatrix, mma.sync, bar.sync).
Threads run independently between collective instructions; ldmatrix and
mma.sync execute when all 32 lanes of a warp reach them, bar.sync when all
threads of the block do. cp.async copies complete at the cp.async.wait_group
that retires them, the latest moment the PTX memory model allows, so a
missing wait reads stale data. Besides the result it reports, as errors:
shared-memory races (two threads touching a byte between the same two
barriers, one of them writing; a copy counts as writing from its issue to
its completion), a thread's own accesses to the destination of its cp.async
before the wait_group that retires it (the copy may land at any moment in
between, so such a read sees either bytes and such a write may be lost),
reads of shared memory nothing wrote, reads of registers nothing wrote, and
misaligned 16-byte accesses.

  ptx_emulate.py randn SHAPE SEED STDDEV OUT.npy
      normal float32 data, rounded to f16 (so every consumer sees the same
      values)
  ptx_emulate.py rmsscale X.npy C EPS OUT.npy
      the RMS norm statistic rsqrt(mean(x^2) + eps) of every voxel of X
      (C channels each), summed in f32 in channel order as the prepass does
  ptx_emulate.py run KERNEL.ptx --grid N --threads N --smem BYTES
      [--module NAME] [--in P=X.npy:f16|bf16|f32] [--amax P=X.npy]
      [--out P=Y.npy:COUNT]
      runs the kernel (of module NAME of a multi-module `--emit=ptx`
      output); P is a kernel parameter index (a memref descriptor
      parameter's pointers, or a pointer parameter); --amax passes max |x|
      as an f32 parameter; --out is an f32 buffer poisoned with NaN, saved
      after the run
  ptx_emulate.py compare REF.npy Y.npy TOLERANCE
      relative L2 error; exit status 1 above the tolerance
"""
import math
import random
import re
import struct
import sys



def f32(bits):
    return struct.unpack('<f', struct.pack('<I', bits & 0xffffffff))[0]


def bits32(x):
    try:
        return struct.unpack('<I', struct.pack('<f', x))[0]
    except OverflowError:
        return 0x7f800000 if x > 0 else 0xff800000


def rnd32(x):
    # Round a double to f32 (round to nearest even), with overflow to inf.
    if math.isnan(x):
        return 0x7fffffff
    return bits32(x)


def f16(bits):
    return struct.unpack('<e', struct.pack('<H', bits & 0xffff))[0]


def bits16(x):
    if math.isnan(x):
        return 0x7e00
    try:
        return struct.unpack('<H', struct.pack('<e', x))[0]
    except OverflowError:
        return 0x7c00 if x > 0 else 0xfc00


WIDTH = {'%rs': 16, '%rd': 64, '%r': 32, '%p': 1}


def regwidth(name):
    for p in ('%rs', '%rd', '%r', '%p'):
        if name.startswith(p):
            return WIDTH[p]
    raise ValueError(name)


def parse(text):
    body = text[text.index('{', text.index('.entry')) + 1:]
    body = re.sub(r'//[^\n]*', '', body)
    insts, labels = [], {}
    for stmt in re.split(r';', body):
        stmt = stmt.strip()
        while True:
            m = re.match(r'^(\$\w+):\s*(.*)$', stmt, re.S)
            if not m:
                break
            labels[m.group(1)] = len(insts)
            stmt = m.group(2).strip()
        if not stmt or stmt.startswith('.reg') or stmt.startswith('.shared') or stmt == '}':
            continue
        pred = None
        m = re.match(r'^@(!?)(%p\d+)\s+(.*)$', stmt, re.S)
        if m:
            pred = (m.group(1) == '!', m.group(2))
            stmt = m.group(3)
        parts = stmt.split(None, 1)
        op = parts[0]
        args = []
        if len(parts) > 1:
            rest = parts[1]
            # split on commas outside braces / brackets
            depth, cur = 0, ''
            for ch in rest:
                if ch in '{[':
                    depth += 1
                elif ch in '}]':
                    depth -= 1
                if ch == ',' and depth == 0:
                    args.append(cur.strip())
                    cur = ''
                else:
                    cur += ch
            if cur.strip():
                args.append(cur.strip())
        insts.append((op, args, pred))
    return insts, labels


class Memory:
    def __init__(self):
        self.regions = []  # (base, bytearray)

    def add(self, base, data):
        self.regions.append((base, data))

    def find(self, addr, n):
        for base, data in self.regions:
            if base <= addr and addr + n <= base + len(data):
                return data, addr - base
        raise IndexError('bad address %#x (+%d)' % (addr, n))

    def read(self, addr, n):
        d, o = self.find(addr, n)
        return bytes(d[o:o + n])

    def write(self, addr, b):
        d, o = self.find(addr, len(b))
        d[o:o + len(b)] = b


class Thread:
    def __init__(self, tid):
        self.tid = tid
        self.regs = {}
        self.pc = 0
        self.done = False
        self.pending = []   # current uncommitted copies
        self.groups = []    # committed groups (lists of copies)


class Block:
    def __init__(self, insts, labels, params, gmem, shared_bytes, nthreads):
        self.insts, self.labels, self.params = insts, labels, params
        self.gmem = gmem
        self.smem = bytearray(shared_bytes)
        self.written = bytearray(shared_bytes)
        self.uninit = []
        self.threads = [Thread(t) for t in range(nthreads)]
        self.shmem_base = 0
        self.ctaid = 0
        self.undef = set()
        self.epoch = 0
        self.acc = {}   # (epoch, byte) -> list of (kind, tid, pc)
        self.cur = None
        self.races = []
        self.own = []   # accesses to the thread's own in-flight copies

    def check_own(self, th, kind, a, n, pc):
        """A thread's access to bytes its own cp.async has not landed yet
        (issued, not retired by a wait_group): a read sees the old or the
        new bytes and a write may be overwritten, as the copy lands anywhere
        between its issue and the wait. Another thread's access to them is
        a race (note); this is the same hazard within one thread."""
        for group in [th.pending] + th.groups:
            for copy in group:
                dst, cn, cpc = copy[0], copy[2], copy[5]
                if dst < a + n and a < dst + cn:
                    self.own.append((kind, th.tid, pc, 'copy at %d' % cpc))
                    return

    def note(self, kind, a, n, tid, pc, epochs=None):
        for e in (epochs if epochs is not None else [self.epoch]):
            for b in range(a, a + n):
                lst = self.acc.setdefault((e, b), [])
                for k2, t2, p2 in lst:
                    if t2 != tid and ('w' in (kind, k2)):
                        self.races.append((e, b, (k2, t2, p2), (kind, tid, pc)))
                lst.append((kind, tid, pc))

    # --- operand helpers -------------------------------------------------
    def val(self, th, a, width=32):
        if a.startswith('%'):
            if a == '%tid.x':
                return th.tid
            if a == '%ctaid.x':
                return self.ctaid
            if a not in th.regs:
                self.undef.add((a, th.pc - 1))
            return th.regs.get(a, 0)
        if a.startswith('0f'):
            return int(a[2:], 16)
        if a.startswith('0d'):
            return int(a[2:], 16)
        if a == '__dynamic_shmem__0':
            return self.shmem_base
        v = int(a, 0)
        return v & ((1 << width) - 1)

    def setr(self, th, r, v):
        w = regwidth(r)
        th.regs[r] = v & ((1 << w) - 1) if w > 1 else int(bool(v))

    def addr(self, th, a):
        m = re.match(r'^\[([^\]+]+)(?:\+(-?\d+))?\]$', a)
        base = m.group(1)
        off = int(m.group(2) or 0)
        if base.startswith('conv3d_kernel_param'):
            return ('param', base, off)
        return self.val(th, base, 64) + off

    # --- memory ------------------------------------------------------------
    def sread(self, a, n):
        if a < 0 or a + n > len(self.smem):
            raise IndexError('shared read out of range %d' % a)
        if not all(self.written[a:a + n]):
            self.uninit.append(a)
        return bytes(self.smem[a:a + n])

    def swrite(self, a, b):
        if a < 0 or a + len(b) > len(self.smem):
            raise IndexError('shared write out of range %d' % a)
        self.smem[a:a + len(b)] = b
        self.written[a:a + len(b)] = b'\x01' * len(b)

    def complete(self, copy):
        dst, src, n, srcsize, tid, pc, e0 = copy
        self.note('w', dst, n, tid, pc, range(e0, self.epoch + 1))
        data = self.gmem.read(src, srcsize) if srcsize else b''
        data = data + bytes(n - len(data))
        self.swrite(dst, data)

    # --- execution ---------------------------------------------------------
    COLLECTIVE = ('ldmatrix', 'mma.sync', 'bar.sync')

    def run_thread(self, th):
        """Runs until a collective instruction (returns its index) or the end."""
        while True:
            op, args, pred = self.insts[th.pc]
            if pred is not None:
                neg, p = pred
                take = bool(self.val(th, p)) != neg
                if not take:
                    th.pc += 1
                    continue
            if op.startswith(self.COLLECTIVE):
                return th.pc
            if op == 'ret':
                th.done = True
                return None
            self.execute(th, op, args)

    def execute(self, th, op, args):
        v = lambda a, w=32: self.val(th, a, w)
        d = args[0] if args else None
        base = op.split('.')[0]
        th.pc += 1
        if op == 'bra.uni' or op == 'bra':
            th.pc = self.labels[args[0]]
            return
        if op.startswith('ld.param'):
            a = self.addr(th, args[1])
            key = (a[1], a[2])
            if key not in self.params:
                raise RuntimeError('kernel reads %s+%d, which no option maps' % key)
            self.setr(th, d, self.params[key])
            return
        if op == 'mov.b32' and d.startswith('{'):
            regs = [r.strip() for r in d.strip('{}').split(',')]
            x = v(args[1])
            self.setr(th, regs[0], x & 0xffff)
            self.setr(th, regs[1], x >> 16)
            return
        if op == 'mov.b32' and args[1].startswith('{'):
            regs = [r.strip() for r in args[1].strip('{}').split(',')]
            self.setr(th, d, (v(regs[0]) & 0xffff) | ((v(regs[1]) & 0xffff) << 16))
            return
        if op == 'mov.u32' or op == 'mov.b32' or op == 'mov.b64':
            self.setr(th, d, v(args[1], regwidth(d)))
            return
        if op.startswith('cvta.to.global'):
            self.setr(th, d, v(args[1], 64))
            return
        if op.startswith('cp.async.cg.shared.global') or op.startswith('cp.async.ca.shared.global'):
            dst = self.addr(th, args[0])
            src = self.addr(th, args[1])
            n = int(args[2])
            srcsize = v(args[3]) if len(args) > 3 else n
            copy = (dst, src, n, srcsize, th.tid, th.pc - 1, self.epoch)
            if dst % n or (srcsize and src % n):
                raise RuntimeError('misaligned cp.async dst=%d src=%#x' % (dst, src))
            self.check_own(th, 'copy', dst, n, th.pc - 1)
            th.pending.append(copy)
            return
        if op == 'cp.async.commit_group':
            th.groups.append(th.pending)
            th.pending = []
            return
        if op == 'cp.async.wait_group':
            n = int(args[0])
            while len(th.groups) > n:
                for c in th.groups.pop(0):
                    self.complete(c)
            return
        if op.startswith('ld.shared'):
            a = self.addr(th, args[1])
            self.check_own(th, 'r', a, 16 if '.v4' in op else 8 if '.v2' in op else 4,
                           th.pc - 1)
            self.note('r', a, 16 if '.v4' in op else 8 if '.v2' in op else 4, th.tid, th.pc - 1)
            if op.endswith('.v4.b32') or op.endswith('.v2.b32'):
                regs = [r.strip() for r in d.strip('{}').split(',')]
                data = self.sread(a, 4 * len(regs))
                for i, r in enumerate(regs):
                    self.setr(th, r, struct.unpack_from('<I', data, 4 * i)[0])
            elif op.endswith('.b32'):
                self.setr(th, d, struct.unpack('<I', self.sread(a, 4))[0])
            else:
                raise NotImplementedError(op)
            return
        if op.startswith('st.shared'):
            a = self.addr(th, args[0])
            nregs = len(args[1].strip('{}').split(',')) if '.v' in op else 1
            self.check_own(th, 'w', a, 4 * nregs, th.pc - 1)
            self.note('w', a, 4 * nregs, th.tid, th.pc - 1)
            if '.v' in op:
                regs = [r.strip() for r in args[1].strip('{}').split(',')]
                self.swrite(a, b''.join(struct.pack('<I', v(r)) for r in regs))
            elif op.endswith('.b32'):
                self.swrite(a, struct.pack('<I', v(args[1])))
            else:
                raise NotImplementedError(op)
            return
        if op.startswith('ld.global'):
            a = self.addr(th, args[1])
            if op.endswith('.b32') and '.v' in op:
                regs = [r.strip() for r in d.strip('{}').split(',')]
                if a % (4 * len(regs)):
                    raise RuntimeError('misaligned %s at %#x' % (op, a))
                data = self.gmem.read(a, 4 * len(regs))
                for i, r in enumerate(regs):
                    self.setr(th, r, struct.unpack_from('<I', data, 4 * i)[0])
            elif op.endswith('.b32'):
                self.setr(th, d, struct.unpack('<I', self.gmem.read(a, 4))[0])
            else:
                raise NotImplementedError(op)
            return
        if op.startswith('st.global'):
            a = self.addr(th, args[0])
            if op.endswith('.b32'):
                self.gmem.write(a, struct.pack('<I', v(args[1])))
            else:
                raise NotImplementedError(op)
            return
        if base == 'setp':
            _, cmp, ty = op.split('.')
            a, b = args[1], args[2]
            if ty == 'f32':
                x, y = f32(v(a)), f32(v(b))
                if math.isnan(x) or math.isnan(y):
                    r = False  # lt, le, gt, ge, eq, ne are ordered
                else:
                    r = {'lt': x < y, 'le': x <= y, 'gt': x > y, 'ge': x >= y,
                         'eq': x == y, 'ne': x != y}[cmp]
            else:
                w = int(ty[1:])
                x, y = v(a, w) & ((1 << w) - 1), v(b, w) & ((1 << w) - 1)
                if ty[0] == 's':
                    if x >> (w - 1):
                        x -= 1 << w
                    if y >> (w - 1):
                        y -= 1 << w
                r = {'lt': x < y, 'le': x <= y, 'gt': x > y, 'ge': x >= y,
                     'eq': x == y, 'ne': x != y}[cmp]
            self.setr(th, d, r)
            return
        if base == 'selp':
            w = regwidth(d)
            self.setr(th, d, v(args[1], w) if self.val(th, args[3]) else v(args[2], w))
            return
        if op in ('and.pred', 'or.pred'):
            x, y = self.val(th, args[1]), self.val(th, args[2])
            self.setr(th, d, (x and y) if op == 'and.pred' else (x or y))
            return
        # float ops
        if op.endswith('.f32') and base in ('mul', 'add', 'sub', 'div', 'fma', 'abs', 'neg', 'max', 'min', 'rcp'):
            x = f32(v(args[1]))
            if base == 'abs':
                self.setr(th, d, v(args[1]) & 0x7fffffff)
                return
            if base == 'neg':
                self.setr(th, d, v(args[1]) ^ 0x80000000)
                return
            if base == 'rcp':
                assert op == 'rcp.rn.f32'
                r = math.inf if x == 0 else 1.0 / x
                if x == 0 and math.copysign(1, x) < 0:
                    r = -math.inf
                self.setr(th, d, rnd32(r))
                return
            y = f32(v(args[2]))
            if base == 'mul':
                r = x * y
            elif base == 'add':
                r = x + y
            elif base == 'sub':
                r = x - y
            elif base == 'div':
                assert op == 'div.rn.f32'
                if y == 0:
                    r = math.nan if x == 0 or math.isnan(x) else math.copysign(math.inf, x) * math.copysign(1, y)
                else:
                    r = x / y
            elif base == 'fma':
                assert op in ('fma.rn.f32', 'fma.rm.f32'), op
                from fractions import Fraction
                z = f32(v(args[3]))
                if any(map(math.isinf, (x, y, z))) or any(map(math.isnan, (x, y, z))):
                    r = x * y + z
                else:
                    exact = Fraction(x) * Fraction(y) + Fraction(z)
                    r = float(exact)
                    if op == 'fma.rm.f32':
                        b = rnd32(r)
                        if Fraction(f32(b)) > exact:
                            b = b - 1 if f32(b) > 0 else b + 1
                        self.setr(th, d, b)
                        return
            elif base == 'max':
                assert op == 'max.f32'
                r = y if math.isnan(x) else x if math.isnan(y) else max(x, y)
            elif base == 'min':
                assert op == 'min.NaN.f32'
                r = math.nan if (math.isnan(x) or math.isnan(y)) else min(x, y)
            else:
                raise NotImplementedError(op)
            if math.isinf(r) or math.isnan(r):
                self.setr(th, d, 0x7fffffff if math.isnan(r) else (0x7f800000 if r > 0 else 0xff800000))
            else:
                self.setr(th, d, rnd32(r))
            return
        if op == 'cvt.f32.f16':
            self.setr(th, d, rnd32(f16(v(args[1], 16))))
            return
        if op == 'cvt.rn.f16x2.f32':
            hi = bits16(f32(v(args[1])))
            lo = bits16(f32(v(args[2])))
            self.setr(th, d, (hi << 16) | lo)
            return
        if op == 'cvt.sat.f32.f32':
            x = f32(v(args[1]))
            r = 0.0 if math.isnan(x) else min(max(x, 0.0), 1.0)
            self.setr(th, d, rnd32(r))
            return
        if op == 'ex2.approx.ftz.f32':
            x = f32(v(args[1]))
            try:
                r = 2.0 ** x
            except OverflowError:
                r = math.inf
            self.setr(th, d, 0x7f800000 if math.isinf(r) else rnd32(r))
            return
        if op == 'cvt.rni.f32.f32':
            x = f32(v(args[1]))
            r = x if (math.isinf(x) or math.isnan(x)) else float(round(x))  # ties to even
            self.setr(th, d, rnd32(r))
            return
        if op.startswith('cvt.'):
            parts = op.split('.')
            dt, st = parts[-2], parts[-1]
            x = v(args[1], int(st[1:]))
            sw = int(st[1:])
            x &= (1 << sw) - 1
            if st[0] == 's' and x >> (sw - 1):
                x -= 1 << sw
            self.setr(th, d, x)
            return
        # integer ops
        m = re.match(r'^(add|sub|mul|mad|shl|shr|and|or|xor|max|min|bfe|not)\.(?:(lo|hi|wide)\.)?([subp])(\d+)$', op)
        if m:
            kind, mode, sign, w = m.group(1), m.group(2), m.group(3), int(m.group(4))
            mask = (1 << w) - 1

            def sv(a):
                x = v(a, w) & mask
                if sign == 's' and x >> (w - 1):
                    x -= 1 << w
                return x
            if kind == 'add':
                r = sv(args[1]) + sv(args[2])
            elif kind == 'sub':
                r = sv(args[1]) - sv(args[2])
            elif kind == 'mul':
                p = sv(args[1]) * sv(args[2])
                r = p >> w if mode == 'hi' else p
            elif kind == 'mad':
                r = sv(args[1]) * sv(args[2]) + (v(args[3], 2 * w if mode == 'wide' else w))
            elif kind == 'shl':
                s = v(args[2])
                r = (sv(args[1]) << s) if s < w else 0
            elif kind == 'shr':
                s = v(args[2])
                r = sv(args[1]) >> min(s, w)
            elif kind == 'and':
                r = sv(args[1]) & sv(args[2])
            elif kind == 'or':
                r = sv(args[1]) | sv(args[2])
            elif kind == 'xor':
                r = sv(args[1]) ^ sv(args[2])
            elif kind == 'max':
                r = max(sv(args[1]), sv(args[2]))
            elif kind == 'min':
                r = min(sv(args[1]), sv(args[2]))
            elif kind == 'bfe':
                pos, ln = v(args[2]), v(args[3])
                r = (sv(args[1]) >> pos) & ((1 << ln) - 1)
            else:
                raise NotImplementedError(op)
            self.setr(th, d, r)
            return
        raise NotImplementedError('%s %s' % (op, args))

    def collective(self, warp, pc):
        op, args, _ = self.insts[pc]
        if op.startswith('ldmatrix'):
            assert '.trans' not in op
            n = int(re.search(r'\.x(\d)', op).group(1))
            regs = [r.strip() for r in args[0].strip('{}').split(',')]
            addrs = [self.addr(th, args[1]) for th in warp]
            for x in addrs[:8 * n]:
                if x % 16:
                    raise RuntimeError('misaligned ldmatrix row %d' % x)
            for i in range(n):
                for lane, th in enumerate(warp):
                    row = lane // 4
                    a = addrs[i * 8 + row] + (lane % 4) * 4
                    self.note('r', a, 4, th.tid, pc)
                    self.check_own(th, 'r', a, 4, pc)
                    self.setr(th, regs[i], struct.unpack('<I', self.sread(a, 4))[0])
        elif op.startswith('mma.sync'):
            dregs = [r.strip() for r in args[0].strip('{}').split(',')]
            aregs = [r.strip() for r in args[1].strip('{}').split(',')]
            bregs = [r.strip() for r in args[2].strip('{}').split(',')]
            cregs = [r.strip() for r in args[3].strip('{}').split(',')]
            A = [[0.0] * 16 for _ in range(16)]
            B = [[0.0] * 8 for _ in range(16)]
            C = [[0.0] * 8 for _ in range(16)]
            for lane, th in enumerate(warp):
                g, t = lane // 4, lane % 4
                for i, r in enumerate(aregs):
                    x = self.val(th, r)
                    row = g + (8 if i % 2 else 0)
                    col = t * 2 + (8 if i >= 2 else 0)
                    A[row][col] = f16(x & 0xffff)
                    A[row][col + 1] = f16(x >> 16)
                for i, r in enumerate(bregs):
                    x = self.val(th, r)
                    k = t * 2 + (8 if i else 0)
                    B[k][g] = f16(x & 0xffff)
                    B[k + 1][g] = f16(x >> 16)
                for i, r in enumerate(cregs):
                    row = g + (8 if i >= 2 else 0)
                    col = t * 2 + (i % 2)
                    C[row][col] = f32(self.val(th, r))
            D = [[C[i][j] + sum(A[i][k] * B[k][j] for k in range(16)) for j in range(8)] for i in range(16)]
            for lane, th in enumerate(warp):
                g, t = lane // 4, lane % 4
                for i, r in enumerate(dregs):
                    row = g + (8 if i >= 2 else 0)
                    col = t * 2 + (i % 2)
                    self.setr(th, r, rnd32(D[row][col]))
        else:
            raise NotImplementedError(op)
        for th in warp:
            th.pc = pc + 1

    def run(self):
        nwarps = len(self.threads) // 32
        warps = [self.threads[w * 32:(w + 1) * 32] for w in range(nwarps)]
        while True:
            stops = []
            for w in warps:
                pcs = set()
                for th in w:
                    if th.done:
                        pcs.add(None)
                    else:
                        pcs.add(self.run_thread(th))
                if len(pcs) != 1:
                    raise RuntimeError('warp diverged at a collective: %s' % pcs)
                stops.append(pcs.pop())
            if all(s is None for s in stops):
                return
            # warp collectives first
            progressed = False
            for w, s in zip(warps, stops):
                if s is not None and not self.insts[s][0].startswith('bar.sync'):
                    self.collective(w, s)
                    progressed = True
            if progressed:
                continue
            if not all(s is not None and self.insts[s][0].startswith('bar.sync') for s in stops):
                raise RuntimeError('barrier mismatch %s' % stops)
            for th in self.threads:
                th.pc += 1
            self.epoch += 1


def load_npy(path):
    """(shape, values) of a little-endian float32/float64 .npy file."""
    data = open(path, 'rb').read()
    if data[:6] != b'\x93NUMPY':
        raise ValueError('%s: not a .npy file' % path)
    if data[6] == 1:
        length, offset = struct.unpack('<H', data[8:10])[0], 10
    else:
        length, offset = struct.unpack('<I', data[8:12])[0], 12
    header = data[offset:offset + length].decode('latin1')
    descr = re.search(r"'descr':\s*'([^']*)'", header).group(1)
    shape = tuple(int(x) for x in re.search(r"'shape':\s*\(([^)]*)\)",
                                             header).group(1).split(',') if x.strip())
    if "'fortran_order': True" in header:
        raise ValueError('%s: Fortran order is not supported' % path)
    fmt = {'<f4': 'f', '<f8': 'd'}[descr]
    body = data[offset + length:]
    count = len(body) // struct.calcsize(fmt)
    return shape, list(struct.unpack('<%d%s' % (count, fmt), body))


def save_npy(path, shape, values):
    dims = ', '.join(str(d) for d in shape) + (',' if len(shape) == 1 else '')
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }" % dims
    header += ' ' * ((64 - (10 + len(header) + 1) % 64) % 64) + '\n'
    with open(path, 'wb') as out:
        out.write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(header)))
        out.write(header.encode('latin1'))
        out.write(struct.pack('<%df' % len(values), *values))


def bits_bf16(x):
    b = bits32(x)
    if math.isnan(x):
        return 0x7fc0
    return ((b + 0x7fff + ((b >> 16) & 1)) >> 16) & 0xffff


def cmd_randn(args):
    shape = [int(d) for d in args[0].split(',')]
    rng = random.Random(int(args[1]))
    std = float(args[2])
    values = [f16(bits16(rng.gauss(0.0, 1.0) * std))
              for _ in range(math.prod(shape))]
    save_npy(args[3], shape, values)


def cmd_run(args):
    ptx = args[0]
    opts = {'--grid': 1, '--threads': None, '--smem': 0}
    module = None
    ins, amaxes, outs = [], [], []
    i = 1
    while i < len(args):
        key, value = args[i], args[i + 1]
        i += 2
        if key in opts:
            opts[key] = int(value)
        elif key == '--module':
            module = value
        elif key == '--in':
            index, _, rest = value.partition('=')
            path, _, dtype = rest.partition(':')
            ins.append((int(index), path, dtype))
        elif key == '--amax':
            index, _, path = value.partition('=')
            amaxes.append((int(index), path))
        elif key == '--out':
            index, _, rest = value.partition('=')
            path, _, count = rest.partition(':')
            outs.append((int(index), path, int(count)))
        else:
            raise SystemExit('ptx_emulate.py run: unknown option ' + key)
    memory = Memory()
    params = {}
    base = 0x10000000

    def bind(index, address):
        for offset in (0, 8):  # a descriptor's allocated and aligned pointers
            params[('conv3d_kernel_param_%d' % index, offset)] = address

    for index, path, dtype in ins:
        _, values = load_npy(path)
        if dtype == 'f32':
            data = b''.join(struct.pack('<I', rnd32(v)) for v in values)
        else:
            encode = {'f16': bits16, 'bf16': bits_bf16}[dtype]
            data = b''.join(struct.pack('<H', encode(v)) for v in values)
        memory.add(base, bytearray(data))
        bind(index, base)
        base += 0x10000000
    for index, path in amaxes:
        _, values = load_npy(path)
        params[('conv3d_kernel_param_%d' % index, 0)] = bits32(
            max(abs(v) for v in values))
    out_buffers = []
    for index, path, count in outs:
        buffer = bytearray(struct.pack('<I', 0x7fc00000) * count)
        memory.add(base, buffer)
        bind(index, base)
        out_buffers.append((path, count, buffer))
        base += 0x10000000
    text = open(ptx).read()
    if module is not None:
        marker = '// conv3d: gpu.module @'
        chunks = {c.partition('\n')[0].strip(): c.partition('\n')[2]
                  for c in text.split(marker)[1:]}
        if module not in chunks:
            raise SystemExit('ptx_emulate.py run: no module %s (have %s)' % (
                module, ', '.join(sorted(chunks))))
        text = chunks[module]
    threads = opts['--threads']
    if threads is None:
        threads = int(re.search(r'\.maxntid (\d+)', text).group(1))
    insts, labels = parse(text)
    problems = 0
    for block_id in range(opts['--grid']):
        block = Block(insts, labels, params, memory, opts['--smem'], threads)
        block.ctaid = block_id
        block.run()
        for what, found in (('shared-memory races', block.races),
                            ('accesses to the thread\'s own in-flight cp.async '
                             'destination', block.own),
                            ('reads of unwritten shared memory', block.uninit),
                            ('reads of unwritten registers', sorted(block.undef))):
            if found:
                problems += 1
                print('block %d: %d %s, e.g. %s' % (block_id, len(found), what,
                                                    list(found)[:3]))
    for path, count, buffer in out_buffers:
        save_npy(path, [count], list(struct.unpack('<%df' % count, bytes(buffer))))
    print('emulated %d block(s) of %d threads: %s' % (
        opts['--grid'], threads, 'problems found' if problems else 'no races, '
        'no uninitialized reads'))
    return 1 if problems else 0


def cmd_rmsscale(args):
    shape, values = load_npy(args[0])
    channels = int(args[1])
    eps = f32(rnd32(float(args[2])))
    scales = []
    for v in range(len(values) // channels):
        total = 0.0
        for x in values[v * channels:(v + 1) * channels]:
            total = f32(rnd32(total + f32(rnd32(x * x))))
        mean = f32(rnd32(total / channels))
        scales.append(f32(rnd32(1.0 / math.sqrt(f32(rnd32(mean + eps))))))
    save_npy(args[3], [len(scales)], scales)


def cmd_compare(args):
    _, ref = load_npy(args[0])
    _, got = load_npy(args[1])
    tolerance = float(args[2])
    if len(ref) != len(got):
        print('sizes differ: %d vs %d' % (len(ref), len(got)))
        return 1
    if any(math.isnan(v) for v in got):
        print('NaN in %s' % args[1])
        return 1
    error = math.sqrt(sum((a - b) ** 2 for a, b in zip(ref, got))) / max(
        math.sqrt(sum(a * a for a in ref)), 1e-300)
    verdict = 'PASS' if error <= tolerance else 'FAIL'
    print('rel. L2 error %.3e (tolerance %.1e): %s' % (error, tolerance, verdict))
    return 0 if verdict == 'PASS' else 1


if __name__ == '__main__':
    commands = {'randn': cmd_randn, 'run': cmd_run, 'compare': cmd_compare,
                'rmsscale': cmd_rmsscale}
    if len(sys.argv) < 2 or sys.argv[1] not in commands:
        raise SystemExit(__doc__)
    sys.exit(commands[sys.argv[1]](sys.argv[2:]) or 0)
