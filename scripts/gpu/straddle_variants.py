#!/usr/bin/env python3
"""Discriminates the causes of the sm80 NVFP4 straddle failure
(test/GPU/sm80-nvfp4-straddle.test) on the GPU machine: the kernel's PTX
(the test's flags without --accumulate, which fails too) is edited by hand
in ways that each rule a hypothesis in or out, assembled by ptxas at a
chosen level, run on the GPU (scripts/gpu/ptx_launch.py) and compared with
the CPU target on the same data. Each variant also runs several times, to
tell a race (results that differ run to run) from a deterministic
miscompilation. With --emulate, the variants run in the host emulator
instead (test/Inputs/ptx_emulate.py; no GPU): every edit that keeps the
arithmetic must stay race-free and exact there.

  scripts/gpu/straddle_variants.py [--emulate] [--out DIR] [--only NAME,...]
                                   [--ptx KERNEL.ptx]

--ptx runs a given PTX of the kernel (e.g. one emitted by an older build)
instead of conv3d-run's.

Needs conv3d-run on PATH (source scripts/gpu/env.sh on the GPU machine);
DIR (default $OUT or /tmp/straddle-variants) receives the PTX variants, the
SASS at -O1 and -O3, and the outputs.
"""
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, '..', '..')
EMULATOR = os.path.join(ROOT, 'test', 'Inputs', 'ptx_emulate.py')
LAUNCHER = os.path.join(HERE, 'ptx_launch.py')

FLAGS = ['--input-shape=1,9,4,3,48', '--filter-shape=3,3,3,48,3',
         '--padding=3,3,2,1,0,2', '--filter-layout=fqrsc', '--stride=2,1,1',
         '--dilation=1,3,1', '--dtype=f16', '--output-dtype=f32',
         '--activation=silu', '--quantize-input=nvfp4', '--block-size=32',
         '--quant-placement=tile', '--qslice=none']
LAUNCH = ['--grid', '1', '--threads', '64', '--smem', '18432']
OUTPUTS = 63  # 21 output voxels x 3 filters


def in_loop(lines, pattern):
    """Indices of the lines matching `pattern` in the main loop: after the
    first mma.sync (the prologue's quantization comes before it) and
    before the drain (the wait for every group); LLVM lays the loop's
    blocks out in either order."""
    first = next(i for i, l in enumerate(lines) if 'mma.sync' in l)
    drain = next(i for i, l in enumerate(lines)
                 if re.match(r'\s*cp\.async\.wait_group\s+0;', l))
    return [i for i in range(first, drain) if re.search(pattern, lines[i])]


def insert_after(lines, index, text):
    return lines[:index + 1] + ['\t' + text] + lines[index + 1:]


def insert_before(lines, index, text):
    return lines[:index] + ['\t' + text] + lines[index:]


def v_bar_after_quant(lines):
    # A second barrier after the in-place quantization's stores.
    return insert_after(lines, in_loop(lines, r'st\.shared\.v4')[-1], 'bar.sync 0;')


def v_bar_before_quant(lines):
    # A barrier between the MMAs and the quantization's loads.
    return insert_before(lines, in_loop(lines, r'ld\.shared\.v4')[0], 'bar.sync 0;')


def v_wait_all(lines):
    # The loop waits for every copy, not all but the newest group.
    return [re.sub(r'cp\.async\.wait_group\s+1;', 'cp.async.wait_group 0;', l)
            for l in lines]


def v_volatile(lines):
    # The quantization's shared accesses volatile: ptxas may not reorder,
    # merge or drop them.
    return [l.replace('ld.shared.v4.b32', 'ld.volatile.shared.v4.b32')
             .replace('st.shared.v4.b32', 'st.volatile.shared.v4.b32')
            for l in lines]


def v_fast_math(lines):
    # No IEEE division or reciprocal: ptxas calls a slow-path subroutine
    # for them (data-dependent warp divergence inside the quantization).
    # Changes the arithmetic slightly (expect an error near 1e-3 or below,
    # not 0.4, if the slow path is the culprit).
    return [l.replace('div.rn.f32', 'div.full.f32')
             .replace('rcp.rn.f32', 'rcp.approx.ftz.f32') for l in lines]


def v_warp_sync(lines):
    # Explicit warp reconvergence before every ldmatrix group, the barrier
    # and the quantization's stores.
    out = []
    for l in lines:
        if re.match(r'\s*(ldmatrix|bar\.sync|st\.shared\.v4)', l):
            out.append('\tbar.warp.sync -1;')
        out.append(l)
    return out


def v_fence(lines):
    # A CTA fence after the copies land and after the quantization.
    lines = insert_after(lines, in_loop(lines, r'st\.shared\.v4')[-1], 'fence.acq_rel.cta;')
    return [l + '\n\tfence.acq_rel.cta;' if re.match(r'\s*cp\.async\.wait_group', l)
            else l for l in lines]


IDENTITY = None
VARIANTS = [
    # name, edit, ptxas options, arithmetic unchanged
    ('O0', IDENTITY, '-O0', True),
    ('O1', IDENTITY, '-O1', True),
    ('O2', IDENTITY, '-O2', True),
    ('O3', IDENTITY, '-O3', True),
    ('O3-no-expensive', IDENTITY, '-O3 --allow-expensive-optimizations false', True),
    ('O3-bar-after-quant', v_bar_after_quant, '-O3', True),
    ('O3-bar-before-quant', v_bar_before_quant, '-O3', True),
    ('O3-wait-all', v_wait_all, '-O3', True),
    ('O3-volatile-quant', v_volatile, '-O3', True),
    ('O3-warp-sync', v_warp_sync, '-O3', True),
    ('O3-fence', v_fence, '-O3', True),
    ('O3-no-slow-path', v_fast_math, '-O3', False),
]


def wrong_voxels(reference, result):
    """Output voxels (rows of the GEMM) off by more than 1e-3 of the
    reference's largest magnitude, to show which rows (threads, warps) go
    wrong."""
    sys.path.insert(0, os.path.dirname(EMULATOR))
    import ptx_emulate
    _, ref = ptx_emulate.load_npy(reference)
    _, got = ptx_emulate.load_npy(result)
    scale = max(abs(v) for v in ref) or 1.0
    return sorted({i // 3 for i, (a, b) in enumerate(zip(ref, got))
                   if not abs(a - b) <= 1e-3 * scale})


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def main(args):
    emulate = '--emulate' in args
    out = os.environ.get('OUT', '/tmp/straddle-variants')
    only, given = None, None
    for i, a in enumerate(args):
        if a == '--ptx':
            given = args[i + 1]
        if a == '--out':
            out = args[i + 1]
        if a == '--only':
            only = set(args[i + 1].split(','))
    os.makedirs(out, exist_ok=True)
    p = lambda name: os.path.join(out, name)
    chip = [] if not emulate else ['--gpu-chip=sm_80']
    ptx = open(given).read() if given else run(
        ['conv3d-run', '--target=sm80', '--emit=ptx'] + chip + FLAGS,
        check=True).stdout
    open(p('base.ptx'), 'w').write(ptx)
    py = sys.executable
    run([py, EMULATOR, 'randn', '1,9,4,3,48', '1', '1.0', p('in.npy')], check=True)
    run([py, EMULATOR, 'randn', '3,3,3,3,48', '2', '0.027777778', p('filter.npy')], check=True)
    cpu = run(['conv3d-run', '--quiet', '--target=cpu'] + FLAGS +
              ['--input=' + p('in.npy'), '--filter=' + p('filter.npy'),
               '--output=' + p('cpu.npy')])
    print('CPU target: ' + cpu.stdout.strip().splitlines()[-1])
    io = ['--in', '0=' + p('in.npy') + ':f16', '--in', '1=' + p('filter.npy') + ':f16',
          '--amax', '2=' + p('in.npy')]
    base = ptx.splitlines()
    print('%-22s %-45s %s' % ('variant', 'ptxas', 'result'))
    for name, edit, options, exact in VARIANTS:
        if only and name not in only:
            continue
        lines = edit(base) if edit else base
        variant = p(name + '.ptx')
        open(variant, 'w').write('\n'.join(lines) + '\n')
        result = p(name + '.npy')
        if os.path.exists(result):
            os.remove(result)
        if emulate:
            if options != '-O3' and edit is None:
                continue
            step = run([py, EMULATOR, 'run', variant] + LAUNCH + io +
                       ['--out', '4=%s:%d' % (result, OUTPUTS)])
        else:
            extra = ['--sass', p(name + '.sass')] if name in ('O1', 'O3') else []
            step = run([py, LAUNCHER, variant, '--ptxas-options', options,
                        '--repeat', '20'] + LAUNCH + io + extra +
                       ['--out', '4=%s:%d' % (result, OUTPUTS)])
        text = (step.stdout + step.stderr).strip().splitlines()
        status = text[-1] if text else '?'
        if os.path.exists(result) and (step.returncode == 0 or emulate):
            cmp = run([py, EMULATOR, 'compare', p('cpu.npy'), result, '1e-5'])
            status = cmp.stdout.strip() + ('' if exact else ' (arithmetic changed)') + \
                '; ' + status
            if cmp.returncode:
                status += '; wrong voxels %s' % wrong_voxels(p('cpu.npy'), result)
        print('%-22s %-45s %s' % (name, options, status), flush=True)
    masked_filters(p, py, io, ptx_variant=p('O3.ptx'), emulate=emulate)
    return 0


def tap_of(k):
    """(q, r, s) of GEMM column k of the filter (C = 48 channels fastest)."""
    tap = k // 48
    return (tap // 9, tap // 3 % 3, tap % 3)


def masked_filters(p, py, io, ptx_variant, emulate):
    """The O3 kernel with the filter zero but on some K columns: the taps
    that read inside the input (r = 1; the localization script's, exact
    on the H100), the taps that only ever read the halo (their A columns
    are zero-filled, so the exact output is silu(0) = 0 whatever their
    filter values), and each K step (32 columns) of halo taps alone. A
    nonzero output from halo taps alone means the MMAs saw nonzero A
    where the copies zero-fill (stale stage contents)."""
    sys.path.insert(0, os.path.dirname(EMULATOR))
    import ptx_emulate
    shape, values = ptx_emulate.load_npy(p('filter.npy'))
    k_total = 27 * 48
    steps = sorted({k // 32 for k in range(k_total) if tap_of(k)[1] != 1})
    cases = [('valid taps', lambda k: tap_of(k)[1] == 1),
             ('halo taps', lambda k: tap_of(k)[1] != 1)]
    cases += [('halo step %d' % t, (lambda t: lambda k: k // 32 == t and
                                    tap_of(k)[1] != 1)(t)) for t in steps]
    print('\nO3 kernel, filter zero but on some K columns (exact output: '
          'the CPU target on the same filter):')
    for name, keep in cases:
        masked = [v if keep(i % k_total) else 0.0 for i, v in enumerate(values)]
        ptx_emulate.save_npy(p('masked.npy'), shape, masked)
        ref = run(['conv3d-run', '--quiet', '--target=cpu'] + FLAGS +
                  ['--input=' + p('in.npy'), '--filter=' + p('masked.npy'),
                   '--output=' + p('masked-cpu.npy')])
        mio = [x.replace(p('filter.npy'), p('masked.npy')) for x in io]
        if emulate:
            step = run([py, EMULATOR, 'run', ptx_variant] + LAUNCH + mio +
                       ['--out', '4=%s:%d' % (p('masked-out.npy'), OUTPUTS)])
        else:
            step = run([py, LAUNCHER, ptx_variant, '--ptxas-options', '-O3'] +
                       LAUNCH + mio + ['--out', '4=%s:%d' % (p('masked-out.npy'), OUTPUTS)])
        if step.returncode and not emulate:
            print('  %-14s %s' % (name, (step.stdout + step.stderr).strip()[-200:]))
            continue
        _, want = ptx_emulate.load_npy(p('masked-cpu.npy'))
        _, got = ptx_emulate.load_npy(p('masked-out.npy'))
        diff = max(abs(a - b) for a, b in zip(want, got))
        print('  %-14s max |reference| %.3e, max |difference| %.3e%s' % (
            name, max(abs(a) for a in want), diff,
            ', wrong voxels %s' % wrong_voxels(p('masked-cpu.npy'), p('masked-out.npy'))
            if diff > 1e-5 * max(max(abs(a) for a in want), 1e-3) else ''), flush=True)


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
