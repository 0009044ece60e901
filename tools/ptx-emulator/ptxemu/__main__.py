"""Command line of the PTX emulator's helpers (the emulator itself runs
behind the emulated CUDA driver: conv3d-run --emulate).

  python3 -m ptxemu compare A.npy B.npy
      bit for bit: exit status 0 if the arrays are identical (NaNs
      included), else 1, printing how many elements differ and by how many
      units in the last place of f32 at most
"""
import sys

import numpy as np


def compare(argv):
    if len(argv) != 2:
        raise SystemExit(__doc__)
    a, b = (np.load(p) for p in argv)
    if a.shape != b.shape or a.dtype != b.dtype:
        print('differ: %s %s vs %s %s' % (a.shape, a.dtype, b.shape, b.dtype))
        return 1
    if a.dtype.itemsize not in (2, 4, 8):
        raise SystemExit('compare: unsupported dtype %s' % a.dtype)
    view = {2: np.int16, 4: np.int32, 8: np.int64}[a.dtype.itemsize]
    ia, ib = a.view(view).ravel().astype(np.int64), b.view(view).ravel().astype(np.int64)
    diff = ia != ib
    if not diff.any():
        print('bit-identical: %d elements' % a.size)
        return 0
    print('%d of %d elements differ, by at most %d ulp' % (
        int(diff.sum()), a.size, int(np.abs(ia - ib)[diff].max())))
    return 1


def main(argv):
    commands = {'compare': compare}
    if not argv or argv[0] not in commands:
        raise SystemExit(__doc__)
    return commands[argv[0]](argv[1:])


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
