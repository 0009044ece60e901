#!/usr/bin/env python3
"""An independent NumPy 3-D convolution for the execution tests.

It shares no code with the project: the input is zero-padded explicitly
(numpy.pad), and every window tap (q, r, s) adds the strided, dilated slice
of the padded input times the tap's C x F matrix, accumulated in float64.

    out[n, do, ho, wo, f] = sum_{q, r, s, c}
        xp[n, do*sd + q*dd, ho*sh + r*dh, wo*sw + s*dw, c] * w[q, r, s, c, f]

Input NDHWC, filter QRSCF or FQRSC, output NDHWF; padding per side as
[d_lo, d_hi, h_lo, h_hi, w_lo, w_hi]. A grouped convolution (groups > 1;
the filter's C is C/groups) is computed as `groups` dense ones on the
channel slices, concatenated along F.

As a script it compares an output .npy with the convolution of an input and
a filter .npy and prints 'PASS rel_l2=...' or 'FAIL rel_l2=...' (exit 1).
np_conv3d_grad.py's script takes the same geometry flags and reports the
same way (geometry_arguments, geometry, report).
"""

import argparse
import sys

import numpy as np


def conv3d(x, w, strides=(1, 1, 1), dilations=(1, 1, 1), padding=(0,) * 6,
           layout="qrscf", groups=1):
    x = np.asarray(x, dtype=np.float64)
    w = np.asarray(w, dtype=np.float64)
    if layout == "fqrsc":
        w = np.transpose(w, (1, 2, 3, 4, 0))  # -> QRSCF
    elif layout != "qrscf":
        raise ValueError("layout must be qrscf or fqrsc")
    if groups != 1:
        c, f = x.shape[4], w.shape[4]
        assert c % groups == 0 and f % groups == 0, "groups must divide C and F"
        cg, fg = c // groups, f // groups
        return np.concatenate(
            [conv3d(x[..., g * cg:(g + 1) * cg], w[..., g * fg:(g + 1) * fg],
                    strides, dilations, padding)
             for g in range(groups)], axis=4)
    assert x.ndim == 5 and w.ndim == 5, "rank-5 operands expected"
    n, _, _, _, c = x.shape
    q_, r_, s_, wc, f = w.shape
    assert wc == c, "filter C %d != input C %d" % (wc, c)
    xp = np.pad(x, pads(padding), mode="constant", constant_values=0.0)
    window = (q_, r_, s_)
    out_size = []
    for axis in range(3):
        eff = (window[axis] - 1) * dilations[axis] + 1
        span = xp.shape[axis + 1] - eff
        assert span >= 0, "window larger than the padded input"
        out_size.append(span // strides[axis] + 1)
    od, oh, ow = out_size
    sd, sh, sw = strides
    dd, dh, dw = dilations
    out = np.zeros((n, od, oh, ow, f), dtype=np.float64)
    for q in range(q_):
        for r in range(r_):
            for s in range(s_):
                d0, h0, w0 = q * dd, r * dh, s * dw
                patch = xp[:,
                           d0:d0 + (od - 1) * sd + 1:sd,
                           h0:h0 + (oh - 1) * sh + 1:sh,
                           w0:w0 + (ow - 1) * sw + 1:sw, :]
                out += np.einsum("ndhwc,cf->ndhwf", patch, w[q, r, s])
    return out


def pads(padding):
    """numpy.pad's widths of an NDHWC array for [d_lo, d_hi, h_lo, h_hi,
    w_lo, w_hi]."""
    return [(0, 0), (padding[0], padding[1]), (padding[2], padding[3]),
            (padding[4], padding[5]), (0, 0)]


def rel_l2(reference, actual):
    reference = np.asarray(reference, dtype=np.float64)
    actual = np.asarray(actual, dtype=np.float64)
    if reference.shape != actual.shape:
        raise SystemExit("shape mismatch: expected %s, got %s"
                         % (reference.shape, actual.shape))
    num = np.linalg.norm((actual - reference).ravel())
    den = np.linalg.norm(reference.ravel())
    return num / den if den > 0 else num


def ints(text, count):
    values = [int(v) for v in text.split(",")]
    if len(values) != count:
        raise argparse.ArgumentTypeError("expected %d integers" % count)
    return values


def geometry_arguments(parser):
    """The flags of the checked convolution's geometry, the result and the
    tolerance."""
    parser.add_argument("--output", required=True, help="the result to check")
    parser.add_argument("--stride", default="1,1,1")
    parser.add_argument("--dilation", default="1,1,1")
    parser.add_argument("--padding", default="0,0,0,0,0,0")
    parser.add_argument("--filter-layout", default="qrscf")
    parser.add_argument("--tol", type=float, default=1e-5)


def geometry(args):
    """(strides, dilations, padding, layout) of geometry_arguments' flags."""
    return (ints(args.stride, 3), ints(args.dilation, 3), ints(args.padding, 6),
            args.filter_layout)


def report(expected, actual, tol):
    """Prints 'PASS rel_l2=... shape=...' or 'FAIL ...'; the exit status."""
    err = rel_l2(expected, actual)
    ok = np.all(np.isfinite(actual)) and err <= tol
    print("%s rel_l2=%.3e shape=%s" % ("PASS" if ok else "FAIL", err,
                                        "x".join(map(str, actual.shape))))
    return 0 if ok else 1


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--input", required=True)
    p.add_argument("--filter", required=True)
    geometry_arguments(p)
    p.add_argument("--groups", type=int, default=1)
    p.add_argument("--bias", help="a per-filter bias .npy added to the sum")
    p.add_argument("--activation", default="none", choices=["none", "relu"])
    a = p.parse_args()
    expected = conv3d(np.load(a.input), np.load(a.filter), *geometry(a), a.groups)
    if a.bias:
        expected = expected + np.load(a.bias).astype(np.float64)
    if a.activation == "relu":
        expected = np.maximum(expected, 0.0)
    return report(expected, np.load(a.output), a.tol)


if __name__ == "__main__":
    sys.exit(main())
