"""Running one kernel launch described by the emulated driver.

  python3 -m ptxemu.launch LAUNCH.json RESULT.json

LAUNCH.json (written by lib/Emulator's cuLaunchKernel): the PTX file and
kernel name, grid / block / cluster extents, dynamic shared memory bytes,
each kernel parameter's bytes (hex, in the kernel's order), the device
memory arena (a file descriptor inherited from the driver's process, its
address there and size) with the live allocations, and options. The kernel
runs one cluster at a time (a CTA without clusters is a cluster of one);
RESULT.json gets the status ("ok", "hazards" or "error"), the hazards
found, and the approximate instructions the kernel used.
"""
import json
import os
import re
import sys
import time

from . import compiler
from .errors import EmulatorError
from .machine import Context, Launch, Options
from .memory import GlobalMemory
from .parse import parse_module


def apply_edits(text, spec):
    """The PTX with the edits of $CONV3D_EMULATOR_PTX_EDIT applied: a JSON
    list of [pattern, replacement, count, skip] (Python regular
    expressions, multiline; count, optional: at most that many
    replacements, 0 for all; skip, optional: leave the first `skip`
    matches alone), for tests that break a kernel on purpose and expect the
    emulator to report it. Returns (text, replacements made)."""
    if not spec:
        return text, 0
    try:
        edits = json.loads(spec)
    except ValueError as e:
        raise EmulatorError('CONV3D_EMULATOR_PTX_EDIT is not JSON: %s' % e)
    made = 0
    for edit in edits:
        pattern, replacement = edit[0], edit[1]
        count = edit[2] if len(edit) > 2 else 0
        skip = edit[3] if len(edit) > 3 else 0
        seen = [0]

        def replace(m):
            seen[0] += 1
            if seen[0] <= skip or (count and seen[0] > skip + count):
                return m.group(0)
            return m.expand(replacement)
        text, n = re.subn(pattern, replace, text, flags=re.M)
        made += max(0, min(n - skip, count or n))
    return text, made


def run_launch(desc, memory=None, log=None):
    """Runs the launch `desc` (a dict as in LAUNCH.json); returns the result
    dict."""
    start = time.time()
    result = {'status': 'ok', 'hazards': [], 'message': ''}
    ctx = None
    try:
        with open(desc['ptx']) as f:
            text = f.read()
        text, result['edits'] = apply_edits(text, os.environ.get('CONV3D_EMULATOR_PTX_EDIT'))
        kernels = parse_module(text)
        name = desc['kernel']
        if name not in kernels:
            raise EmulatorError('no kernel %s in the module' % name)
        kernel = kernels[name]
        if len(desc['params']) != len(kernel.params):
            raise EmulatorError('%d parameters passed, the kernel has %d'
                                % (len(desc['params']), len(kernel.params)))
        params = {}
        for p, hexbytes in zip(kernel.params, desc['params']):
            data = bytes.fromhex(hexbytes)
            if len(data) != p.size:
                raise EmulatorError('parameter %s: %d bytes passed, %d declared'
                                    % (p.name, len(data), p.size))
            params[p.name] = data
        if memory is None:
            arena = desc['arena']
            memory = GlobalMemory.from_fd(arena['fd'], arena['base'], arena['size'],
                                          [tuple(a) for a in desc.get('allocations', [])])
        memory.new_launch()
        opts = dict(desc.get('options', {}))
        if os.environ.get('CONV3D_EMULATOR_SCHEDULE'):
            opts['schedule'] = os.environ['CONV3D_EMULATOR_SCHEDULE']
        options = Options(arch=desc.get('arch', 90), **opts)
        cluster = tuple(desc.get('cluster') or (1, 1, 1))
        if kernel.cluster_dim and cluster == (1, 1, 1):
            cluster = tuple(kernel.cluster_dim + [1] * (3 - len(kernel.cluster_dim)))
        launch = Launch(desc['grid'], desc['block'], desc['smem'], params, cluster)
        ntid = kernel.reqntid or kernel.maxntid
        threads = launch.block[0] * launch.block[1] * launch.block[2]
        if kernel.maxntid and threads > kernel.maxntid[0] * (kernel.maxntid + [1, 1])[1] * \
                (kernel.maxntid + [1, 1])[2]:
            raise EmulatorError('%d threads per block exceed .maxntid %s' % (threads, kernel.maxntid))
        ctx = Context(kernel, launch, memory, options)
        ctx.compile()
        gx, gy, gz = launch.grid
        cx, cy, cz = launch.cluster
        clusters = (gx // cx) * (gy // cy) * (gz // cz)
        for c in range(clusters):
            ctx.reset(c)
            ctx.run_cluster()
            if log:
                log('cluster %d of %d done (%.1f s)' % (c + 1, clusters, time.time() - start))
        for addr, a, b in memory.conflicts[:1]:
            ctx.hz.add('global bytes written by two CTAs without atomics',
                       '%#x by CTAs %d and %d' % (addr, a, b), len(memory.conflicts))
        result['hazards'] = ctx.hz.report()
        if ctx.hz:
            result['status'] = 'hazards'
        approx = sorted(compiler.APPROXIMATE)
        result['approximate'] = approx
        result['steps'] = ctx.steps
    except EmulatorError as e:
        result['status'] = 'error'
        result['message'] = str(e)
        if ctx is not None and ctx.hz:
            # what went wrong before it stopped, often the cause
            result['hazards'] = ctx.hz.report()
    result['seconds'] = round(time.time() - start, 3)
    return result


def main(argv):
    if len(argv) != 2:
        raise SystemExit(__doc__)
    with open(argv[0]) as f:
        desc = json.load(f)
    log = None
    if os.environ.get('CONV3D_EMULATOR_VERBOSE'):
        log = lambda s: print('ptxemu: ' + s, file=sys.stderr, flush=True)
    if os.environ.get('CONV3D_EMULATOR_PROFILE'):
        import cProfile
        import pstats
        profile = cProfile.Profile()
        result = profile.runcall(run_launch, desc, log=log)
        pstats.Stats(profile, stream=sys.stderr).sort_stats('cumulative').print_stats(30)
    else:
        result = run_launch(desc, log=log)
    with open(argv[1] + '.tmp', 'w') as f:
        json.dump(result, f)
    os.replace(argv[1] + '.tmp', argv[1])
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
