#!/usr/bin/env python3
"""Which MMA model reproduces the H100's wgmma: compares the results of
scripts/gpu/wgmma_numerics.cu (run on the GPU) with the PTX emulator's
models (tools/ptx-emulator/ptxemu/mma_model.py) on the same inputs, made
here by the same counter-based hash.

  wgmma_numerics_fit.py OUT.bin [--mma-sync] [MODEL ...]

--mma-sync fits the mma.sync.m16n8k16 results instead of wgmma's. MODEL: a name of mma_model.MODELS or block:bits:rz|rn[:lead]; without one,
a sweep of blocks 4, 8, 16, 23..28 kept bits, both roundings and both
alignments. Prints,
per model, the mismatching results per input type and distribution; exit
status 0 if the first model given matches everything.
"""
import os
import struct
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..', '..', 'tools', 'ptx-emulator'))
from ptxemu import mma_model, numerics as fp  # noqa: E402

M, N, K = 64, 16, 16
DISTS = ['normal', 'wide', 'cancel', 'tiny-c', 'huge-c', 'chained', 'no-c']
TYPES = ['bf16', 'f16']
MASK = (1 << 64) - 1


def splitmix(x):
    x = np.asarray(x, dtype=np.uint64)
    with np.errstate(over='ignore'):
        z = x + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def key(t, d, trial, which, index):
    base = (((t * 8 + d) * 65536 + trial) * 4 + which) << 16
    return np.uint64(base) + np.asarray(index, dtype=np.uint64)


def elements(t, d, trial, which, count):
    h = splitmix(key(t, d, trial, which, np.arange(count)))
    sign = (h & np.uint64(1)).astype(np.uint32)
    wide = DISTS[d] == 'wide'
    if t == 0:
        e = ((h >> np.uint64(8)) % np.uint64(41)).astype(np.int64) - 20 if wide else \
            ((h >> np.uint64(8)) % np.uint64(7)).astype(np.int64) - 4
        bits = (sign << 15) | ((127 + e).astype(np.uint32) << 7) | \
            ((h >> np.uint64(1)) & np.uint64(0x7F)).astype(np.uint32)
    else:
        e = ((h >> np.uint64(12)) % np.uint64(25)).astype(np.int64) - 12 if wide else \
            ((h >> np.uint64(12)) % np.uint64(7)).astype(np.int64) - 4
        bits = (sign << 15) | ((15 + e).astype(np.uint32) << 10) | \
            ((h >> np.uint64(1)) & np.uint64(0x3FF)).astype(np.uint32)
    return bits.astype(np.uint16)


def to64(t, bits):
    if t == 0:
        return fp.f32(fp.bf16_to_f32(bits)).astype(np.float64)
    return bits.view(np.float16).astype(np.float64)


def accumulators(t, d, trial, a, b):
    name = DISTS[d]
    if name == 'no-c':
        return np.full(M * N, 0x7FC00000, dtype=np.uint32)
    if name == 'cancel':
        A = to64(t, a).reshape(M, K)
        B = to64(t, b).reshape(N, K)
        s = np.zeros((M, N))
        for k in range(K):   # the probe's order, in double
            s = s + A[:, k][:, None] * B[:, k][None, :]
        return (-s).astype(np.float32).view(np.uint32).ravel()
    h = splitmix(key(t, d, trial, 2, np.arange(M * N)))
    sign = (h & np.uint64(1)).astype(np.uint32)
    if name == 'wide':
        e = ((h >> np.uint64(24)) % np.uint64(61)).astype(np.int64) - 30
    elif name == 'tiny-c':
        e = np.full(M * N, -40)
    elif name == 'huge-c':
        e = np.full(M * N, 20)
    else:
        e = ((h >> np.uint64(24)) % np.uint64(11)).astype(np.int64) - 5
    return (sign << 31) | ((127 + e).astype(np.uint32) << 23) | \
        ((h >> np.uint64(1)) & np.uint64(0x7FFFFF)).astype(np.uint32)


def load(path):
    data = open(path, 'rb').read()
    header = struct.unpack_from('<8I', data, 0)
    if header[0] != 0x574d4d41:
        raise SystemExit('%s: not a wgmma_numerics output' % path)
    trials = header[1]
    off = 32
    results = {}
    for t in range(2):
        for d in range(len(DISTS)):
            n = trials * M * N
            results[t, d] = np.frombuffer(data, dtype=np.uint32, count=n, offset=off).reshape(trials, M, N)
            off += 4 * n
    sync = {}
    for t in range(2):
        for d in range(len(DISTS)):
            n = trials * M * N
            sync[t, d] = np.frombuffer(data, dtype=np.uint32, count=n, offset=off).reshape(trials, M, N)
            off += 4 * n
    checks = {}
    for t in range(2):
        for d in range(len(DISTS)):
            kt = 2 * K if DISTS[d] == 'chained' else K
            na, nb = M * kt * 2, N * kt * 2
            a = np.frombuffer(data, dtype=np.uint16, count=M * kt, offset=off)
            b = np.frombuffer(data, dtype=np.uint16, count=N * kt, offset=off + na)
            c = np.frombuffer(data, dtype=np.uint32, count=M * N, offset=off + na + nb)
            checks[t, d] = (a, b, c)
            off += na + nb + M * N * 4
    return trials, {'wgmma': results, 'mma.sync': sync}, checks


def inputs(t, d, trial):
    kt = 2 * K if DISTS[d] == 'chained' else K
    a = elements(t, d, trial, 0, M * kt)
    b = elements(t, d, trial, 1, N * kt)
    return a, b, accumulators(t, d, trial, a, b), kt


def predict(model, t, d, trial):
    a, b, c, kt = inputs(t, d, trial)
    A = to64(t, a).reshape(M, kt)
    B = to64(t, b).reshape(N, kt)
    C = c.reshape(M, N).astype(np.uint32)
    use_c = DISTS[d] != 'no-c'
    D = C
    for k0 in range(0, kt, K):     # one wgmma per k16, chained through f32
        D = model.mma(D, A[:, k0:k0 + K], B[:, k0:k0 + K], use_c or k0 > 0, TYPES[t])
    return D


def main(argv):
    if not argv:
        raise SystemExit(__doc__)
    which = 'wgmma'
    if '--mma-sync' in argv:
        argv = [a for a in argv if a != '--mma-sync']
        which = 'mma.sync'
    trials, all_results, checks = load(argv[0])
    results = all_results[which]
    for (t, d), (a, b, c) in checks.items():
        ga, gb, gc, _ = inputs(t, d, 0)
        if not (np.array_equal(a, ga) and np.array_equal(b, gb) and np.array_equal(c, gc)):
            raise SystemExit('the input generator differs from the probe\'s (%s, %s)'
                             % (TYPES[t], DISTS[d]))
    print('inputs reproduced: %d trials x %d types x %d distributions; fitting %s'
          % (trials, 2, len(DISTS), which))
    names = argv[1:]
    if not names:
        names = ['%d:%d:%s%s' % (blk, bits, r, a) for blk in (16, 8, 4) for bits in range(23, 29)
                 for r in ('rz', 'rn') for a in ('', ':lead')]
    first_ok = None
    limit = int(os.environ.get('FIT_TRIALS', trials))
    for name in names:
        model = mma_model.get(name, which)
        bad = {}
        total = 0
        for t in range(2):
            for d in range(len(DISTS)):
                n = 0
                for trial in range(min(trials, limit)):
                    got = results[t, d][trial]
                    want = predict(model, t, d, trial)
                    n += int((got != want).sum())
                bad[t, d] = n
                total += n
        line = ' '.join('%s/%s=%d' % (TYPES[t], DISTS[d], n) for (t, d), n in bad.items() if n)
        print('%-12s mismatches %8d  %s' % (name, total, line or '(all equal)'))
        if first_ok is None:
            first_ok = total == 0
    return 0 if first_ok else 1


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
