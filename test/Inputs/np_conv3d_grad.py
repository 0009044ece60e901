#!/usr/bin/env python3
"""Independent NumPy data and weight gradients of a 3-D convolution.

Shares no code with the project, nor with np_conv3d.py's forward beyond the
formula (its flags, padding widths and report are np_conv3d.py's): every window tap (q, r, s) of the forward reads the strided,
dilated slice xp[:, q*dd : ... : sd, ...] of the zero-padded input, so

    dgrad: that slice of a zero dxp gets dy . w[q, r, s]^T added (a scatter
           back through the forward's taps), dx = dxp without the padding;
    wgrad: dw[q, r, s] = sum over n, do, ho, wo of slice^T . dy;

all in float64. Input NDHWC, filter QRSCF or FQRSC, output NDHWF; padding
per side [d_lo, d_hi, h_lo, h_hi, w_lo, w_hi].

As a script it checks a result .npy (`--output`) of --kind dgrad (from
--grad-output and --filter; the input shape is the result's) or wgrad (from
--input and --grad-output; the filter shape is the result's), with --init
accumulated (and dgrad multiplied by silu' at --silu-pre-activation), and
prints 'PASS rel_l2=...' or 'FAIL rel_l2=...' (exit 1).
"""

import argparse
import sys

import numpy as np

from np_conv3d import geometry, geometry_arguments, pads, rel_l2, report  # noqa: F401


def _taps(shape3, window, strides, dilations, padding):
    """(q, r, s, slices into the padded input) of every forward tap."""
    out = []
    for axis in range(3):
        eff = (window[axis] - 1) * dilations[axis] + 1
        padded = shape3[axis] + padding[2 * axis] + padding[2 * axis + 1]
        out.append((padded - eff) // strides[axis] + 1)
    for q in range(window[0]):
        for r in range(window[1]):
            for s in range(window[2]):
                idx = tuple(
                    slice(t * dilations[a],
                          t * dilations[a] + (out[a] - 1) * strides[a] + 1,
                          strides[a])
                    for a, t in enumerate((q, r, s)))
                yield q, r, s, idx
    return


def dgrad(dy, w, input_shape, strides=(1, 1, 1), dilations=(1, 1, 1),
          padding=(0,) * 6, layout="qrscf"):
    dy = np.asarray(dy, dtype=np.float64)
    w = np.asarray(w, dtype=np.float64)
    if layout == "fqrsc":
        w = np.transpose(w, (1, 2, 3, 4, 0))
    n, d, h, wi, c = input_shape
    padded = [d + padding[0] + padding[1], h + padding[2] + padding[3],
              wi + padding[4] + padding[5]]
    dxp = np.zeros((n, *padded, c), dtype=np.float64)
    for q, r, s, idx in _taps((d, h, wi), w.shape[:3], strides, dilations,
                              padding):
        dxp[(slice(None),) + idx + (slice(None),)] += np.einsum(
            "ndhwf,cf->ndhwc", dy, w[q, r, s])
    return dxp[:, padding[0]:padding[0] + d, padding[2]:padding[2] + h,
               padding[4]:padding[4] + wi, :]


def wgrad(x, dy, filter_shape, strides=(1, 1, 1), dilations=(1, 1, 1),
          padding=(0,) * 6, layout="qrscf"):
    x = np.asarray(x, dtype=np.float64)
    dy = np.asarray(dy, dtype=np.float64)
    if layout == "fqrsc":
        f, q_, r_, s_, c = filter_shape
    else:
        q_, r_, s_, c, f = filter_shape
    xp = np.pad(x, pads(padding), mode="constant", constant_values=0.0)
    dw = np.zeros((q_, r_, s_, c, f), dtype=np.float64)
    for q, r, s, idx in _taps(x.shape[1:4], (q_, r_, s_), strides, dilations,
                              padding):
        patch = xp[(slice(None),) + idx + (slice(None),)]
        dw[q, r, s] = np.einsum("ndhwc,ndhwf->cf", patch, dy)
    if layout == "fqrsc":
        dw = np.transpose(dw, (4, 0, 1, 2, 3))
    return dw


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--kind", required=True, choices=["dgrad", "wgrad"])
    p.add_argument("--grad-output", required=True)
    p.add_argument("--filter", help="dgrad: the forward's filter")
    p.add_argument("--input", help="wgrad: the forward's input")
    p.add_argument("--init", help="accumulated onto (default: zeros)")
    p.add_argument("--silu-pre-activation",
                   help="dgrad: multiply by silu' at this pre-activation "
                        "(after --init is added)")
    geometry_arguments(p)
    a = p.parse_args()
    actual = np.load(a.output)
    dy = np.load(a.grad_output)
    if a.kind == "dgrad":
        expected = dgrad(dy, np.load(a.filter), actual.shape, *geometry(a))
    else:
        expected = wgrad(np.load(a.input), dy, actual.shape, *geometry(a))
    if a.init:
        expected = expected + np.load(a.init).astype(np.float64)
    if a.silu_pre_activation:
        z = np.load(a.silu_pre_activation).astype(np.float64)
        sig = 1.0 / (1.0 + np.exp(-z))
        expected = expected * (sig * (1.0 + z * (1.0 - sig)))
    return report(expected, actual, a.tol)


if __name__ == "__main__":
    sys.exit(main())
