#!/usr/bin/env python3
"""Writes a random normal .npy file: make_npy.py PATH SHAPE DTYPE SEED [SCALE].

SHAPE is comma-separated (1,4,6,6,8); DTYPE a NumPy dtype (float32, float64).
"""

import sys

import numpy as np


def main():
    if len(sys.argv) not in (5, 6):
        sys.exit(__doc__)
    path, shape, dtype, seed = sys.argv[1:5]
    scale = float(sys.argv[5]) if len(sys.argv) == 6 else 1.0
    shape = tuple(int(s) for s in shape.split(","))
    rng = np.random.default_rng(int(seed))
    np.save(path, (rng.standard_normal(shape) * scale).astype(dtype))


if __name__ == "__main__":
    main()
