#!/usr/bin/env python3
"""Writes a random normal .npy file: make_npy.py PATH SHAPE DTYPE SEED [SCALE].

SHAPE is comma-separated (1,4,6,6,8); DTYPE a NumPy dtype (float32, float64),
or bf16: float32 values that bfloat16 represents exactly (rounded to nearest
even), so that a bf16 computation and a float64 reference read the same
numbers.
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
    values = (rng.standard_normal(shape) * scale).astype(
        "float32" if dtype == "bf16" else dtype)
    if dtype == "bf16":
        bits = values.view(np.uint32).astype(np.uint64)
        bits += 0x7FFF + ((bits >> 16) & 1)
        values = (bits & 0xFFFF0000).astype(np.uint32).view(np.float32)
    np.save(path, values)


if __name__ == "__main__":
    main()
