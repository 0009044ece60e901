#!/usr/bin/env python3
"""Drives the Python package (python/conv3d, ctypes over the C API) on the
CPU target: compile, run on NumPy buffers with a poisoned output, and compare
with the independent NumPy convolution (np_conv3d.py) in float64; then the
disk cache (a second engine loads the kernel) and error reporting.

usage: python_api_check.py CACHE_DIR
"""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import np_conv3d  # noqa: E402
import conv3d  # noqa: E402


def run_and_check(conv, spec, rng, padding, strides):
    n, d, h, w, c = spec.batch, spec.depth, spec.height, spec.width, spec.channels
    q, r, s = spec.window
    f = spec.filters
    x = rng.standard_normal((n, d, h, w, c)).astype(np.float32)
    wt = (rng.standard_normal((q, r, s, c, f)) / np.sqrt(q * r * s * c)).astype(np.float32)
    bias = rng.standard_normal(f).astype(np.float32)
    out = np.full(spec.output_shape(), np.nan, dtype=np.float32)
    conv.run(x.ctypes.data, wt.ctypes.data, out.ctypes.data, bias=bias.ctypes.data)
    ref = np.maximum(np_conv3d.conv3d(x, wt, strides=strides, padding=padding) + bias, 0.0)
    err = np.linalg.norm(out - ref) / np.linalg.norm(ref)
    return err if np.isfinite(out).all() else float("inf")


def main():
    cache_dir = sys.argv[1]
    rng = np.random.default_rng(5)
    padding, strides = (2, 0, 1, 1, 0, 2), (1, 2, 1)
    spec = conv3d.Spec.from_shapes(input_shape=(2, 5, 7, 6, 5), filter_shape=(3, 3, 2, 5, 9),
                                   strides=strides, padding=padding, dtype="f32",
                                   bias=True, activation="relu")
    assert spec.output_shape() == (2, 5, 4, 7, 9), spec.output_shape()

    first = conv3d.Engine(cache_dir=cache_dir).compile(spec, target="cpu")
    err = run_and_check(first, spec, rng, padding, strides)
    print(f"first: {first.compile_source}, rel_l2={err:.2e}")
    assert first.compile_source == "compiled" and err < 1e-5, err

    second = conv3d.Engine(cache_dir=cache_dir).compile(spec, target="cpu")
    err = run_and_check(second, spec, rng, padding, strides)
    print(f"second engine: {second.compile_source}, rel_l2={err:.2e}")
    assert second.compile_source == "disk cache" and err < 1e-5, err

    uncached = conv3d.Engine(cache_dir=None).compile(spec, target="cpu", config="tile_m=16,tile_n=8,tile_k=8")
    err = run_and_check(uncached, spec, rng, padding, strides)
    print(f"no disk cache, forced config: {uncached.compile_source}, rel_l2={err:.2e}")
    assert uncached.compile_source == "compiled" and err < 1e-5, err

    # Tuning: the configuration is chosen by timing, checked like any other
    # compilation, and remembered in the disk cache for the next engine.
    tuned = conv3d.Engine(cache_dir=cache_dir).compile(spec, target="cpu", tune=True)
    err = run_and_check(tuned, spec, rng, padding, strides)
    print(f"tuned: {tuned.config}, rel_l2={err:.2e}")
    assert err < 1e-5, err
    again = conv3d.Engine(cache_dir=cache_dir).compile(spec, target="cpu", tune=True)
    assert again.config == tuned.config, (again.config, tuned.config)
    print("tuned again: same config")
    try:
        conv3d.Engine(cache_dir=None).compile(spec, target="cpu", tune=True, config="tile_m=16,tile_n=8,tile_k=8")
        print("FAIL: tune with a forced config compiled")
        return 1
    except conv3d.Conv3dError as e:
        assert "tune" in str(e), str(e)
        print("error:", str(e).splitlines()[0])

    try:
        bad = conv3d.Spec.from_shapes(input_shape=(1, 2, 2, 2, 4), filter_shape=(3, 3, 3, 4, 4))
        conv3d.Engine(cache_dir=None).compile(bad, target="cpu")
        print("FAIL: an empty output compiled")
        return 1
    except conv3d.Conv3dError as e:
        print("error:", str(e).splitlines()[0])
    # Options go through the pipelines' one parser: a bad value is an error
    # naming it, not a silent default.
    try:
        conv3d.Engine(cache_dir=None).compile(spec, target="cpu", qslice="sliced")
        print("FAIL: an unknown qslice strategy compiled")
        return 1
    except conv3d.Conv3dError as e:
        assert "qslice=sliced" in str(e), str(e)
        print("error:", str(e).splitlines()[0])
    # Output shape and FLOPs come from the library's geometry.
    assert spec.output_shape()[0] == spec.batch and spec.flops() > 0
    print("PYTHON-API-OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
