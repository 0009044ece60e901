#!/usr/bin/env python3
"""Runs a kernel's PTX on the GPU with the command line of the host emulator
(test/Inputs/ptx_emulate.py run), so that one PTX file, edited by hand or
not, runs both emulated and on the device, and ptxas's optimization level
is chosen per run. Assembles the PTX with $CUDA_HOME/bin/ptxas, loads the
cubin through the CUDA driver (ctypes, no build step) and launches it.
ptxas targets the device's chip unless --arch names one.

  ptx_launch.py KERNEL.ptx --grid N --threads N --smem BYTES
      [--ptxas-options "-O3"] [--arch sm_XY] [--sass OUT.sass] [--repeat N]
      [--in P=X.npy:f16|bf16|f32] [--amax P=X.npy] [--out P=Y.npy:COUNT]

Parameters as in ptx_emulate.py: a memref descriptor parameter (an .align 8
.b8 array of 40 bytes: allocated and aligned pointers, offset, size,
stride) gets the buffer, its element count and stride 1; an output that is
a pointer parameter P gets the buffer in P (and in P-1 when that is a
pointer too, the allocated pointer), then offset 0, the count and stride 1
in the three 64-bit parameters after it. Outputs are f32, poisoned with NaN
before each launch. With --repeat N the kernel runs N times (output
re-poisoned each time) and the run says whether every result was
bitwise the same; the last one is saved. --sass writes the cubin's SASS
(cuobjdump -sass, else nvdisasm) for inspection.
"""
import ctypes
import os
import re
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                '..', '..', 'test', 'Inputs'))
import ptx_emulate  # noqa: E402  (npy I/O and the f16/bf16 encodings)

CUDA_HOME = os.environ.get('CUDA_HOME', '/usr/local/cuda')


def check(result, what):
    if result != 0:
        raise SystemExit('ptx_launch.py: %s failed (CUresult %d)' % (what, result))


def entry_params(text):
    """(name, kind, bytes) of each parameter of the PTX's .entry."""
    header = text[text.index('.entry'):]
    header = header[header.index('(') + 1:header.index(')')]
    params = []
    for decl in header.split(','):
        decl = decl.strip()
        if not decl:
            continue
        name = re.search(r'(\w+)(\[\d+\])?$', decl)
        array = re.search(r'\[(\d+)\]$', decl)
        if array:
            params.append((name.group(1), 'struct', int(array.group(1))))
        elif '.f32' in decl:
            params.append((name.group(1), 'f32', 4))
        elif '.u64' in decl or '.b64' in decl or '.s64' in decl:
            params.append((name.group(1), 'ptr' if '.ptr' in decl else 'u64', 8))
        elif '.u32' in decl or '.b32' in decl or '.s32' in decl:
            params.append((name.group(1), 'u32', 4))
        else:
            raise SystemExit('ptx_launch.py: unknown parameter ' + decl)
    return params


def main(args):
    ptx = args[0]
    opts = {'--grid': 1, '--threads': None, '--smem': 0, '--repeat': 1}
    ptxas_options, sass, arch = '-O3', None, None
    ins, amaxes, outs = [], [], []
    i = 1
    while i < len(args):
        key, value = args[i], args[i + 1]
        i += 2
        if key in opts:
            opts[key] = int(value)
        elif key == '--ptxas-options':
            ptxas_options = value
        elif key == '--sass':
            sass = value
        elif key == '--arch':
            arch = value
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
            raise SystemExit('ptx_launch.py: unknown option ' + key)
    text = open(ptx).read()
    kernel = re.search(r'\.entry\s+(\w+)', text).group(1)
    threads = opts['--threads'] or int(re.search(r'\.maxntid (\d+)', text).group(1))
    try:
        cuda = ctypes.CDLL('libcuda.so.1')
    except OSError as error:
        raise SystemExit('ptx_launch.py: no CUDA driver (%s)' % error)
    P, U64, SZ, U32 = ctypes.c_void_p, ctypes.c_uint64, ctypes.c_size_t, ctypes.c_uint
    cuda.cuMemAlloc_v2.argtypes = [ctypes.POINTER(U64), SZ]
    cuda.cuMemcpyHtoD_v2.argtypes = [U64, ctypes.c_char_p, SZ]
    cuda.cuMemcpyDtoH_v2.argtypes = [P, U64, SZ]
    cuda.cuModuleLoadData.argtypes = [ctypes.POINTER(P), ctypes.c_char_p]
    cuda.cuModuleGetFunction.argtypes = [ctypes.POINTER(P), P, ctypes.c_char_p]
    cuda.cuLaunchKernel.argtypes = [P, U32, U32, U32, U32, U32, U32, U32, P,
                                    ctypes.POINTER(P), P]
    check(cuda.cuInit(0), 'cuInit')
    device, context = ctypes.c_int(), ctypes.c_void_p()
    check(cuda.cuDeviceGet(ctypes.byref(device), 0), 'cuDeviceGet')
    check(cuda.cuDevicePrimaryCtxRetain(ctypes.byref(context), device),
          'cuDevicePrimaryCtxRetain')
    check(cuda.cuCtxSetCurrent(context), 'cuCtxSetCurrent')
    # ptxas for the device's chip (the PTX's .target may be older: conv3d-run
    # compiles sm80 kernels for the device's chip, and an sm_80 cubin does
    # not load on an sm_90 GPU).
    major, minor = ctypes.c_int(), ctypes.c_int()
    check(cuda.cuDeviceGetAttribute(ctypes.byref(major), 75, device),
          'cuDeviceGetAttribute (major)')
    check(cuda.cuDeviceGetAttribute(ctypes.byref(minor), 76, device),
          'cuDeviceGetAttribute (minor)')
    arch = arch or 'sm_%d%d' % (major.value, minor.value)
    work = tempfile.mkdtemp()
    cubin = os.path.join(work, 'kernel.cubin')
    subprocess.run([os.path.join(CUDA_HOME, 'bin', 'ptxas'), '-arch=' + arch] +
                   ptxas_options.split() + [ptx, '-o', cubin], check=True)
    if sass:
        for tool in (['cuobjdump', '-sass'], ['nvdisasm', '-c']):
            exe = os.path.join(CUDA_HOME, 'bin', tool[0])
            if os.path.exists(exe):
                with open(sass, 'w') as out:
                    subprocess.run([exe] + tool[1:] + [cubin], stdout=out,
                                   check=False)
                break

    module, function = ctypes.c_void_p(), ctypes.c_void_p()
    image = open(cubin, 'rb').read()
    check(cuda.cuModuleLoadData(ctypes.byref(module), image), 'cuModuleLoadData')
    check(cuda.cuModuleGetFunction(ctypes.byref(function), module,
                                   kernel.encode()), 'cuModuleGetFunction')

    def alloc(data):
        pointer = ctypes.c_uint64()
        check(cuda.cuMemAlloc_v2(ctypes.byref(pointer), max(len(data), 16)),
              'cuMemAlloc')
        check(cuda.cuMemcpyHtoD_v2(pointer, bytes(data), len(data)), 'cuMemcpyHtoD')
        return pointer.value

    params = entry_params(text)
    storage = [bytearray(size) for _, _, size in params]

    def put(index, offset, fmt, value):
        struct.pack_into(fmt, storage[index], offset, value)

    for index, path, dtype in ins:
        _, values = ptx_emulate.load_npy(path)
        if dtype == 'f32':
            data = b''.join(struct.pack('<I', ptx_emulate.rnd32(v)) for v in values)
        else:
            encode = {'f16': ptx_emulate.bits16, 'bf16': ptx_emulate.bits_bf16}[dtype]
            data = b''.join(struct.pack('<H', encode(v)) for v in values)
        address = alloc(data)
        if params[index][1] != 'struct':
            raise SystemExit('ptx_launch.py: --in %d is not a memref descriptor' % index)
        for offset, value in ((0, address), (8, address), (16, 0),
                              (24, len(values)), (32, 1)):
            put(index, offset, '<Q', value)
    for index, path in amaxes:
        _, values = ptx_emulate.load_npy(path)
        put(index, 0, '<I', ptx_emulate.bits32(max(abs(v) for v in values)))
    poison = struct.pack('<I', 0x7fc00000)
    out_buffers = []
    for index, path, count in outs:
        address = alloc(poison * count)
        if params[index][1] == 'struct':
            for offset, value in ((0, address), (8, address), (16, 0),
                                  (24, count), (32, 1)):
                put(index, offset, '<Q', value)
        else:
            put(index, 0, '<Q', address)
            if index > 0 and params[index - 1][1] == 'ptr':
                put(index - 1, 0, '<Q', address)
            for k, value in enumerate((0, count, 1)):
                if index + 1 + k < len(params) and params[index + 1 + k][1] == 'u64':
                    put(index + 1 + k, 0, '<Q', value)
        out_buffers.append((path, count, address))

    holders = [(ctypes.c_char * len(s)).from_buffer(s) for s in storage]
    kernel_params = (ctypes.c_void_p * len(holders))(
        *[ctypes.cast(h, ctypes.c_void_p) for h in holders])
    results = []
    for _ in range(opts['--repeat']):
        for _, count, address in out_buffers:
            check(cuda.cuMemcpyHtoD_v2(ctypes.c_uint64(address), poison * count,
                                       4 * count), 'cuMemcpyHtoD')
        check(cuda.cuLaunchKernel(function, opts['--grid'], 1, 1, threads, 1, 1,
                                  opts['--smem'], None, kernel_params, None),
              'cuLaunchKernel')
        check(cuda.cuCtxSynchronize(), 'cuCtxSynchronize (the kernel)')
        run = []
        for _, count, address in out_buffers:
            host = ctypes.create_string_buffer(4 * count)
            check(cuda.cuMemcpyDtoH_v2(ctypes.cast(host, ctypes.c_void_p),
                                       ctypes.c_uint64(address), 4 * count),
                  'cuMemcpyDtoH')
            run.append(host.raw)
        results.append(run)
    for (path, count, _), raw in zip(out_buffers, results[-1]):
        ptx_emulate.save_npy(path, [count], list(struct.unpack('<%df' % count, raw)))
    distinct = len({b''.join(r) for r in results})
    print('ran %s (ptxas %s) %d time(s) on the GPU: %s' % (
        os.path.basename(ptx), ptxas_options, len(results),
        'every result the same' if distinct == 1 else
        '%d different results' % distinct))
    return 0


if __name__ == '__main__':
    if len(sys.argv) < 2 or sys.argv[1] in ('-h', '--help'):
        raise SystemExit(__doc__)
    sys.exit(main(sys.argv[1:]))
