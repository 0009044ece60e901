#!/usr/bin/env python3
"""The PTX emulator against the H100, bit for bit, on random sm90 cases.

  emulator_check.py cases [--count N] [--seed S]
      print the cases (conv3d-run flags)
  emulator_check.py gpu DIR [--count N] [--seed S]
      run them on the GPU (conv3d-run --target=sm90, checked against the
      float64 reference), outputs and results into DIR
  emulator_check.py emulate DIR [--jobs J]
      run DIR's cases in the emulator (conv3d-run --emulate, the same
      inputs: conv3d-run makes them from --seed) and compare each output
      with the GPU's, bit for bit
  emulator_check.py both DIR [...]
      gpu, then emulate
  emulator_check.py sm100 DIR [--count N] [--real N] [--seed S] [--jobs J]
      no GPU: random sm100 cases (the tcgen05 kernel; --real of them real
      NVFP4, the block-scaled kernel) run in the emulator on an emulated
      sm_100 device and checked against the float64 reference by
      conv3d-run (no sm_100 GPU has run these kernels, so there are no
      bits to compare with)

The cases cover the sm90 kernel's mainloops (TMA im2col over the volume,
per depth slice, the halo mainloop), schedules (cooperative, ping-pong,
2-block clusters), split-K (2 splits: the f32 atomics of two partial sums
commute, so the result is deterministic), history operands, NVFP4 (in the
tile and as a prepass), the epilogues (TMA store and staged; bias,
activations, residual, accumulation, f32 output), f16 and bf16, both
filter layouts. Cases whose kernels use approximate instructions (ex2,
rsqrt: SiLU, GELU, the RMS-norm prologue) are reported apart: the ISA
bounds their error instead of defining their bits, and the emulator
rounds them correctly. Exit status 1 if any other case differs.
Environment: CONV3D_RUN (default: conv3d-run on PATH).
"""
import argparse
import concurrent.futures
import json
import os
import random
import shutil
import subprocess
import sys
import time

import numpy as np

SCENARIOS = ['im2col', 'f16', 'epilogue', 'splitk2', 'pingpong', 'cluster', 'halo',
             'slices', 'history', 'nvfp4-tile', 'nvfp4-prepass', 'qrscf', 'f32out',
             'accumulate', 'residual', 'silu', 'qslice-fused', 'strided', 'dilated',
             'rmsnorm', 'gelu', 'halo-bias']


def make_case(rng, scenario):
    """conv3d-run flags of one random case of `scenario`."""
    n = rng.choice([1, 1, 2])
    d = rng.randint(3, 6)
    h = rng.randint(5, 11)
    w = rng.randint(5, 11)
    c = rng.choice([64, 64, 72, 96, 128])
    f = rng.choice([32, 40, 64, 96, 128])
    q, r, s = rng.choice([(3, 3, 3), (3, 3, 3), (1, 3, 3), (3, 1, 1), (2, 3, 3)])
    stride = [1, 1, 1]
    dil = [1, 1, 1]
    pad = []
    for k in (q, r, s):
        lo = rng.randint(0, k - 1)
        pad += [lo, rng.randint(0, k - 1)]
    flags = []
    dtype = 'bf16'
    layout = 'fqrsc'
    config = None
    if scenario == 'f16':
        dtype = 'f16'
    elif scenario == 'epilogue':
        flags += ['--bias', '--activation=relu']
    elif scenario == 'splitk2':
        config = 'tile_m=128,tile_n=64,tile_k=64,stages=4,warps_m=8,warps_n=1,split_k=2'
    elif scenario == 'pingpong':
        config = 'tile_m=128,tile_n=%d,tile_k=64,stages=4,warps_m=4,warps_n=1,schedule=pingpong' \
            % rng.choice([64, 128])
        flags += ['--bias']
    elif scenario == 'cluster':
        config = 'tile_m=128,tile_n=%d,tile_k=64,stages=4,warps_m=8,warps_n=1,cluster_m=2' \
            % rng.choice([64, 96])
    elif scenario in ('halo', 'halo-bias'):
        c = rng.choice([32, 48, 64, 96])
        w = rng.randint(8, 20)
        config = 'tile_m=256,tile_n=%d,tile_k=64,stages=4,warps_m=8,warps_n=1,mainloop=halo' \
            % rng.choice([32, 64, 96])
        if scenario == 'halo-bias':
            flags += ['--bias', '--activation=relu']
    elif scenario == 'slices':
        q, r, s = 3, 3, 3
        pad = [rng.randint(17, 20), rng.randint(0, 2), 1, 1, 1, 1]
    elif scenario == 'history':
        q = 3
        pad[0], pad[1] = 2, 0
        flags += ['--history-depth=%d' % rng.choice([1, 2])]
    elif scenario == 'nvfp4-tile':
        c = rng.choice([64, 96, 128])
        block = rng.choice([b for b in (16, 32, 64) if c % b == 0])
        flags += ['--quantize-input=nvfp4', '--quant-placement=tile', '--block-size=%d' % block]
    elif scenario == 'nvfp4-prepass':
        c = rng.choice([64, 96, 128])
        flags += ['--quantize-input=nvfp4', '--quant-placement=prepass', '--block-size=16']
    elif scenario == 'qrscf':
        layout = 'qrscf'
    elif scenario == 'f32out':
        flags += ['--output-dtype=f32', '--bias']
    elif scenario == 'accumulate':
        flags += ['--accumulate']
    elif scenario == 'residual':
        flags += ['--residual', '--bias']
    elif scenario == 'silu':
        flags += ['--activation=silu', '--bias']
    elif scenario == 'gelu':
        flags += ['--activation=gelu_tanh']
    elif scenario == 'qslice-fused':
        q = 3
        pad[0], pad[1] = 2, 0
        flags += ['--qslice=fused']
    elif scenario == 'strided':
        stride = [rng.choice([1, 2]), 2, rng.choice([1, 2])]
    elif scenario == 'dilated':
        dil = [rng.choice([1, 2]), 2, 2]
        pad = [dil[0], dil[0], 2, 2, 2, 2]
    elif scenario == 'rmsnorm':
        flags += ['--rms-norm']
    out = [(x + a + b - dd * (k - 1) - 1) // st + 1 for x, a, b, dd, k, st in
           zip((d, h, w), pad[0::2], pad[1::2], dil, (q, r, s), stride)]
    if min(out) < 1:
        pad = [k - 1 for k in (q, q, r, r, s, s)]
        dil = [1, 1, 1]
    flags = ['--input-shape=%d,%d,%d,%d,%d' % (n, d, h, w, c),
             '--filter-shape=%d,%d,%d,%d,%d' % (q, r, s, c, f),
             '--padding=' + ','.join(map(str, pad)),
             '--stride=' + ','.join(map(str, stride)),
             '--dilation=' + ','.join(map(str, dil)),
             '--dtype=' + dtype, '--filter-layout=' + layout] + flags
    if config:
        flags.append('--config=' + config)
    return flags


SM80_SCENARIOS = ['im2col', 'epilogue', 'f16', 'nvfp4-tile', 'history', 'small-c']


def make_sm80_case(rng, scenario):
    if scenario == 'small-c':
        flags = make_case(rng, 'im2col')
        c = rng.choice([8, 16, 24])
        return [f.replace(',%s' % f.split(',')[-1], ',%d' % c) if f.startswith('--input-shape')
                else f for f in flags if not f.startswith('--filter-shape')] + \
            ['--filter-shape=3,3,3,%d,%d' % (c, rng.choice([8, 16, 40]))]
    return make_case(rng, scenario)


SM100_SCENARIOS = ['base', 'f16', 'cta2', 'tile-n', 'splitk2', 'qslice', 'epilogue',
                   'f32out', 'residual', 'accumulate', 'silu', 'gelu', 'f16-residual',
                   'nvfp4-prepass', 'strided', 'dilated', 'rmsnorm', 'stages']


def _tcgen05_n(rng, tile_m):
    """A tile_n tcgen05.mma kind::f16 takes for tile_m (M = 128: N % 16,
    M = 256: N % 32; both up to 256)."""
    return rng.choice([n for n in (16, 32, 48, 64, 96, 128, 160, 256)
                       if n % (16 if tile_m == 128 else 32) == 0])


def make_sm100_case(rng, scenario):
    """conv3d-run flags of one random case of the sm100 (tcgen05) kernel."""
    n = rng.choice([1, 1, 2])
    d = rng.randint(2, 4)
    h = rng.randint(4, 8)
    w = rng.randint(4, 8)
    # (C >= 64: the sm100 kernel loads 64-channel TMA boxes; narrower C
    # goes to the sm80 kernel)
    c = rng.choice([64, 64, 72, 96, 128])
    f = rng.choice([16, 32, 40, 64, 96])
    q, r, s = rng.choice([(3, 3, 3), (1, 3, 3), (3, 1, 1), (2, 3, 3)])
    stride, dil = [1, 1, 1], [1, 1, 1]
    pad = []
    for k in (q, r, s):
        pad += [rng.randint(0, k - 1), rng.randint(0, k - 1)]
    flags = []
    dtype = 'bf16'
    tile_m, tile_n, stages, extra = 128, rng.choice([32, 64, 128]), 4, ''
    if scenario == 'f16':
        dtype = 'f16'
    elif scenario == 'cta2':
        tile_m, tile_n = 256, _tcgen05_n(rng, 256)
    elif scenario == 'tile-n':
        tile_m = rng.choice([128, 256])
        tile_n = _tcgen05_n(rng, tile_m)
        f = rng.choice([tile_n, tile_n + 8, 2 * tile_n - 8])
    elif scenario == 'splitk2':
        extra = ',split_k=2'
        flags += ['--output-dtype=f32']
    elif scenario == 'qslice':
        q = 3
        pad[0], pad[1] = 2, 0
        flags += ['--qslice=fused']
    elif scenario == 'epilogue':
        flags += ['--bias', '--activation=relu']
    elif scenario == 'f32out':
        flags += ['--output-dtype=f32', '--bias']
    elif scenario == 'residual':
        flags += ['--residual', '--bias']
    elif scenario == 'accumulate':
        flags += ['--accumulate']
    elif scenario == 'silu':
        flags += ['--activation=silu', '--bias']
    elif scenario == 'gelu':
        flags += ['--activation=gelu_tanh']
    elif scenario == 'f16-residual':
        dtype = 'f16'
        flags += ['--residual', '--activation=silu']
    elif scenario == 'nvfp4-prepass':
        c = rng.choice([64, 96, 128])
        flags += ['--quantize-input=nvfp4', '--quant-placement=prepass', '--block-size=16']
    elif scenario == 'strided':
        stride = [rng.choice([1, 2]), 2, rng.choice([1, 2])]
    elif scenario == 'dilated':
        dil = [rng.choice([1, 2]), 2, 2]
        pad = [dil[0], dil[0], 2, 2, 2, 2]
    elif scenario == 'rmsnorm':
        flags += ['--rms-norm']
    elif scenario == 'stages':
        stages = rng.choice([2, 3, 6])
    out = [(x + a + b - dd * (k - 1) - 1) // st + 1 for x, a, b, dd, k, st in
           zip((d, h, w), pad[0::2], pad[1::2], dil, (q, r, s), stride)]
    if min(out) < 1:
        pad = [k - 1 for k in (q, q, r, r, s, s)]
        dil = [1, 1, 1]
    config = 'tile_m=%d,tile_n=%d,tile_k=64,stages=%d,warps_m=4,warps_n=1%s' % (
        tile_m, tile_n, stages, extra)
    return ['--input-shape=%d,%d,%d,%d,%d' % (n, d, h, w, c),
            '--filter-shape=%d,%d,%d,%d,%d' % (q, r, s, c, f),
            '--padding=' + ','.join(map(str, pad)),
            '--stride=' + ','.join(map(str, stride)),
            '--dilation=' + ','.join(map(str, dil)),
            '--dtype=' + dtype, '--filter-layout=fqrsc', '--config=' + config] + flags


REAL_CHANNELS = [96, 192, 384, 128, 320, 256, 32, 160, 512, 64]


def make_real_case(rng, i):
    """conv3d-run flags of one real-NVFP4 case (the block-scaled kernel):
    C cycles through multiples of 32, 256 and not."""
    c = REAL_CHANNELS[i % len(REAL_CHANNELS)]
    n = rng.choice([1, 1, 2])
    d, h, w = rng.randint(2, 4), rng.randint(4, 7), rng.randint(4, 7)
    q, r, s = rng.choice([(3, 3, 3), (1, 3, 3), (1, 1, 1), (2, 3, 3)])
    pad = []
    for k in (q, r, s):
        pad += [rng.randint(0, k - 1), rng.randint(0, k - 1)]
    tile_n = rng.choice([32, 64, 96, 128, 256])
    f = rng.choice([16, 32, 48, 64, 96])
    flags = ['--input-shape=%d,%d,%d,%d,%d' % (n, d, h, w, c),
             '--filter-shape=%d,%d,%d,%d,%d' % (q, r, s, c, f),
             '--padding=' + ','.join(map(str, pad)),
             '--quantize-input=nvfp4', '--quantize-filter=nvfp4', '--nvfp4-mode=real',
             '--filter-layout=fqrsc',
             '--config=tile_m=128,tile_n=%d,tile_k=64,stages=%d,warps_m=4,warps_n=1' % (
                 tile_n, rng.choice([2, 3, 4]))]
    extra = rng.choice([[], [], ['--bias', '--activation=relu'], ['--dtype=f32'],
                        ['--output-dtype=f32'], ['--residual']])
    return flags + extra


def sm100_cases(count, real, seed):
    rng = random.Random(seed + 100)
    out = []
    for i in range(count):
        scenario = SM100_SCENARIOS[i % len(SM100_SCENARIOS)]
        out.append({'id': i, 'scenario': scenario, 'seed': seed * 1000 + 500 + i,
                    'target': 'sm100', 'flags': make_sm100_case(rng, scenario)})
    for j in range(real):
        out.append({'id': count + j, 'scenario': 'real-c%d' % REAL_CHANNELS[j % len(REAL_CHANNELS)],
                    'seed': seed * 1000 + 500 + count + j, 'target': 'sm100',
                    'flags': make_real_case(rng, j)})
    return out


def cases(count, seed, sm80_count=0):
    rng = random.Random(seed)
    out = []
    for i in range(count):
        scenario = SCENARIOS[i % len(SCENARIOS)]
        out.append({'id': i, 'scenario': scenario, 'seed': seed * 1000 + i, 'target': 'sm90',
                    'flags': make_case(rng, scenario)})
    for j in range(sm80_count):
        scenario = SM80_SCENARIOS[j % len(SM80_SCENARIOS)]
        out.append({'id': count + j, 'scenario': 'sm80-' + scenario, 'seed': seed * 1000 + count + j,
                    'target': 'sm80', 'flags': make_sm80_case(rng, scenario)})
    return out


def conv3d_run():
    return os.environ.get('CONV3D_RUN') or shutil.which('conv3d-run') or 'conv3d-run'


def run_case(case, directory, emulate, timeout):
    tag = 'emu' if emulate else 'gpu'
    output = os.path.join(directory, '%s-%d.npy' % (tag, case['id']))
    cmd = [conv3d_run(), '--quiet', '--json', '--target=' + case.get('target', 'sm90'),
           '--seed=%d' % case['seed'],
           '--output=' + output] + case['flags']
    env = dict(os.environ)
    if emulate:
        cmd.insert(1, '--emulate')
        env['CONV3D_EMULATOR_VERBOSE'] = '1'
    start = time.time()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
        code, stdout, stderr = p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        code, stdout, stderr = -1, '', 'timeout after %d s' % timeout
    seconds = time.time() - start
    result = {'id': case['id'], 'code': code, 'seconds': round(seconds, 2),
              'stderr': stderr[-2000:]}
    for line in stdout.splitlines():
        if line.startswith('{'):
            try:
                # (conv3d-run before the fix printed inf for an untimed run)
                result['json'] = json.loads(line.replace(':inf,', ':0,'))
            except ValueError:
                pass
    if emulate:
        approx = sorted({ln.strip() for ln in stderr.splitlines()
                         if ln.startswith('  ') and 'approx' in ln})
        result['approximate'] = approx
        result['kernels'] = [ln.split(': ')[1] for ln in stderr.splitlines()
                             if ln.startswith('conv3d emulator: kernel')]
    with open(os.path.join(directory, '%s-%d.json' % (tag, case['id'])), 'w') as f:
        json.dump(result, f, indent=1)
    return result


def compare(directory, case):
    """(identical, mismatches, max distance in units of the output type's
    last place) of the GPU's and the emulator's outputs."""
    g = os.path.join(directory, 'gpu-%d.npy' % case['id'])
    e = os.path.join(directory, 'emu-%d.npy' % case['id'])
    if not (os.path.exists(g) and os.path.exists(e)):
        return None
    a = np.load(g).astype(np.float32).view(np.uint32).ravel()
    b = np.load(e).astype(np.float32).view(np.uint32).ravel()
    if a.shape != b.shape:
        return (False, -1, -1)
    diff = a != b
    out_dtype = 'f32' if '--output-dtype=f32' in case['flags'] else \
        ('f16' if '--dtype=f16' in case['flags'] else 'bf16')
    if not diff.any():
        return (True, 0, 0)
    if out_dtype == 'f32':
        ia, ib = a.view(np.int32).astype(np.int64), b.view(np.int32).astype(np.int64)
    elif out_dtype == 'bf16':
        ia, ib = (a >> 16).astype(np.int64), (b >> 16).astype(np.int64)
    else:
        ia = a.view(np.float32).astype(np.float16).view(np.int16).astype(np.int64)
        ib = b.view(np.float32).astype(np.float16).view(np.int16).astype(np.int64)
    return (False, int(diff.sum()), int(np.abs(ia - ib)[diff].max()))


def run_sm100(args):
    todo = sm100_cases(args.count, args.real, args.seed)
    with open(os.path.join(args.dir, 'cases.json'), 'w') as f:
        json.dump(todo, f, indent=1)
    if args.only:
        todo = [c for c in todo if c['id'] in args.only]
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        results = list(pool.map(lambda c: run_case(c, args.dir, True, args.timeout), todo))
    failures = []
    for case, r in zip(todo, results):
        j = r.get('json', {})
        if r['code'] == 0 and j.get('status') == 'ok':
            verdict = 'PASS rel. L2 %.3e (tolerance %.1e)' % (j.get('rel_l2', 0),
                                                             j.get('tolerance', 0))
        else:
            verdict = 'FAILED (%d, %s): %s' % (r['code'], j.get('status', '-'),
                                               r['stderr'].strip()[-400:])
            failures.append(case['id'])
        print('case %2d %-14s emulated in %6.1f s: %s' % (case['id'], case['scenario'],
                                                          r['seconds'], verdict), flush=True)
        if verdict.startswith('FAILED'):
            print('  ' + ' '.join(case['flags']))
    print('%d of %d sm100 cases pass the reference check in the emulator; %d failed%s' % (
        len(todo) - len(failures), len(todo), len(failures),
        (': ' + ' '.join(map(str, failures))) if failures else ''))
    return 1 if failures else 0


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('mode', choices=['cases', 'gpu', 'emulate', 'both', 'sm100'])
    ap.add_argument('dir', nargs='?')
    ap.add_argument('--count', type=int, default=36)
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('--sm80', type=int, default=0, help='sm80-kernel cases besides')
    ap.add_argument('--real', type=int, default=10, help='sm100 mode: real-NVFP4 cases besides')
    ap.add_argument('--jobs', type=int, default=max(1, (os.cpu_count() or 2) - 1))
    ap.add_argument('--timeout', type=int, default=1800)
    ap.add_argument('--only', type=int, nargs='*')
    args = ap.parse_args(argv)
    if args.mode == 'cases':
        for case in cases(args.count, args.seed, args.sm80):
            print(case['id'], case['scenario'], ' '.join(case['flags']))
        return 0
    os.makedirs(args.dir, exist_ok=True)
    if args.mode == 'sm100':
        return run_sm100(args)
    listing = os.path.join(args.dir, 'cases.json')
    if args.mode in ('gpu', 'both'):
        todo = cases(args.count, args.seed, args.sm80)
        with open(listing, 'w') as f:
            json.dump(todo, f, indent=1)
        bad = 0
        for case in todo:
            r = run_case(case, args.dir, False, 300)
            ok = r['code'] == 0
            bad += not ok
            print('gpu case %2d %-14s %s %5.1f s %s' % (
                case['id'], case['scenario'], 'ok' if ok else 'FAILED (%d)' % r['code'],
                r['seconds'], r.get('json', {}).get('rel_l2', '')), flush=True)
            if not ok:
                print(r['stderr'][-600:])
        if args.mode == 'gpu':
            return 1 if bad else 0
    with open(listing) as f:
        todo = json.load(f)
    if args.only:
        todo = [c for c in todo if c['id'] in args.only]
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        results = list(pool.map(lambda c: run_case(c, args.dir, True, args.timeout), todo))
    exact = approx_ok = 0
    failures = []
    for case, r in zip(todo, results):
        cmp = compare(args.dir, case)
        approximate = bool(r.get('approximate'))
        if r['code'] != 0 or cmp is None:
            verdict = 'EMULATION FAILED (%d): %s' % (r['code'], r['stderr'].strip()[-300:])
            failures.append(case['id'])
        elif cmp[0]:
            verdict = 'bit-identical'
            exact += 1
        elif approximate:
            verdict = '%d outputs differ (at most %d ulp): approximate instructions %s' % (
                cmp[1], cmp[2], ', '.join(r['approximate']))
            approx_ok += 1
        else:
            verdict = '%d outputs DIFFER (at most %d ulp)' % (cmp[1], cmp[2])
            failures.append(case['id'])
        print('case %2d %-14s emulated in %6.1f s: %s' % (case['id'], case['scenario'],
                                                          r['seconds'], verdict), flush=True)
    sm90 = [c['id'] for c in todo if c.get('target', 'sm90') == 'sm90']
    print('sm90: %d of %d cases bit-identical' % (
        sum(1 for c, r in zip(todo, results) if c['id'] in sm90 and compare(args.dir, c)
            and compare(args.dir, c)[0]), len(sm90)))
    print('%d of %d cases bit-identical to the GPU; %d differ only through approximate '
          'instructions; %d failed%s' % (exact, len(todo), approx_ok, len(failures),
                                         (': ' + ' '.join(map(str, failures))) if failures else ''))
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
