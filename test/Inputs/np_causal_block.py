#!/usr/bin/env python3
"""An unfused float64 NumPy model of a video VAE's causal convolution step.

What a WAN-style decoder does for one chunk, written out step by step with
no code shared with the project (the convolution is np_conv3d.conv3d, which
pads with numpy.pad and sums window taps):

    y = act(rms_norm(x) * gamma + beta)     # the chunk's input, normalized
    z = concat(history, y) along depth      # cached (already normalized)
    z = pad(z, padding)                     # zeros: the halo
    out = conv3d(z, w)

rms_norm(x) = x / sqrt(mean over channels of x^2 + eps), per voxel.

Compares an output .npy with that model and prints 'PASS rel_l2=...' or
'FAIL rel_l2=...' (exit status 1).
"""

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from np_conv3d import conv3d, rel_l2  # noqa: E402


def activation(name, v):
    if name == "none":
        return v
    if name == "relu":
        return np.maximum(v, 0.0)
    if name == "silu":
        return v / (1.0 + np.exp(-v))
    if name == "gelu_tanh":
        return 0.5 * v * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) *
                                        (v + 0.044715 * v ** 3)))
    raise ValueError("unknown activation " + name)


def causal_step(x, history, w, gamma, beta, eps, act, padding,
                strides=(1, 1, 1), dilations=(1, 1, 1)):
    x = np.asarray(x, dtype=np.float64)
    if gamma is not None:
        scale = 1.0 / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps)
        x = x * scale * np.asarray(gamma, dtype=np.float64)
        if beta is not None:
            x = x + np.asarray(beta, dtype=np.float64)
    x = activation(act, x)
    if history is not None:
        x = np.concatenate([np.asarray(history, dtype=np.float64), x], axis=1)
    pads = [(0, 0), (padding[0], padding[1]), (padding[2], padding[3]),
            (padding[4], padding[5]), (0, 0)]
    x = np.pad(x, pads)
    return conv3d(x, w, strides, dilations, (0,) * 6)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--input", required=True)
    ap.add_argument("--history")
    ap.add_argument("--filter", required=True)
    ap.add_argument("--gamma")
    ap.add_argument("--beta")
    ap.add_argument("--eps", type=float, default=1e-6)
    ap.add_argument("--activation", default="none")
    ap.add_argument("--padding", default="0,0,0,0,0,0")
    ap.add_argument("--output", required=True)
    ap.add_argument("--tol", type=float, required=True)
    a = ap.parse_args()
    load = lambda p: np.load(p) if p else None  # noqa: E731
    expected = causal_step(np.load(a.input), load(a.history),
                           np.load(a.filter), load(a.gamma), load(a.beta),
                           a.eps, a.activation,
                           [int(p) for p in a.padding.split(",")])
    actual = np.load(a.output)
    if actual.shape != expected.shape:
        print("FAIL shape %s, expected %s" % (actual.shape, expected.shape))
        return 1
    if not np.all(np.isfinite(actual)):
        print("FAIL non-finite outputs")
        return 1
    e = rel_l2(expected, actual)
    print("%s rel_l2=%.3e shape=%s" % ("PASS" if e <= a.tol else "FAIL", e,
                                       "x".join(map(str, actual.shape))))
    return 0 if e <= a.tol else 1


if __name__ == "__main__":
    sys.exit(main())
