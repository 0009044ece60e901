"""The gradients through the Python package's lower level on NumPy arrays
(no PyTorch): Spec.from_shapes(kind=...), Engine.compile, Conv.run_gradient
on the CPU target, against the independent float64 NumPy gradients
(np_conv3d_grad.py) with NaN-poisoned outputs; then the refusals."""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import conv3d  # noqa: E402
from np_conv3d_grad import dgrad, wgrad, rel_l2  # noqa: E402

rng = np.random.default_rng(22)
engine = conv3d.Engine(cache_dir=None)
geometry = dict(strides=(2, 1, 3), dilations=(1, 2, 1), padding=(1, 2, 0, 1, 2, 0))
np_geometry = ((2, 1, 3), (1, 2, 1), (1, 2, 0, 1, 2, 0), "fqrsc")
x = rng.standard_normal((2, 7, 6, 9, 5)).astype(np.float32)
w = rng.standard_normal((6, 3, 2, 3, 5)).astype(np.float32)  # FQRSC
for kind, fold in (("dgrad", None), ("wgrad", None), ("wgrad", "height-width")):
    spec = conv3d.Spec.from_shapes(x.shape, (3, 2, 3, 5, 6), filter_layout="fqrsc",
                                   dtype="f32", kind=kind, **geometry)
    dy = rng.standard_normal(spec.output_shape()).astype(np.float32)
    conv = engine.compile(spec, wgrad_fold=fold)
    if kind == "dgrad":
        out = np.full(x.shape, np.nan, np.float32)
        conv.run_gradient(dy.ctypes.data, out.ctypes.data, filter=w.ctypes.data)
        expected = dgrad(dy, w, x.shape, *np_geometry)
    else:
        out = np.full(w.shape, np.nan, np.float32)
        conv.run_gradient(dy.ctypes.data, out.ctypes.data, input=x.ctypes.data)
        expected = wgrad(x, dy, w.shape, *np_geometry)
    err = rel_l2(expected, out)
    print("%s (%s, fold %s): rel_l2 %s" % (kind, conv.kind, fold or "auto",
                                           "OK" if err < 2e-5 else "%.2e" % err))

# dgrad through SiLU, accumulated onto another path's gradient (the init):
# silu'(z) * (init + dx).
spec = conv3d.Spec.from_shapes(x.shape, (3, 2, 3, 5, 6), filter_layout="fqrsc",
                               dtype="f32", kind="dgrad", activation="silu",
                               residual=True, accumulate=True, **geometry)
dy = rng.standard_normal(spec.output_shape()).astype(np.float32)
z = rng.standard_normal(x.shape).astype(np.float32)
init = rng.standard_normal(x.shape).astype(np.float32)
out = init.copy()
through_silu = engine.compile(spec)
through_silu.run_gradient(dy.ctypes.data, out.ctypes.data, filter=w.ctypes.data,
                          pre_activation=z.ctypes.data)
sig = 1 / (1 + np.exp(-z.astype(np.float64)))
expected = (init + dgrad(dy, w, x.shape, *np_geometry)) * sig * (1 + z * (1 - sig))
err = rel_l2(expected, out)
print("dgrad through silu: rel_l2 %s" % ("OK" if err < 2e-5 else "%.2e" % err))

calls = [
    ("no pre-activation", lambda: through_silu.run_gradient(1, 1, filter=1)),
    ("pre-activation of a plain dgrad", lambda: engine.compile(conv3d.Spec.from_shapes(
        x.shape, (3, 2, 3, 5, 6), dtype="f32", kind="dgrad")).run_gradient(
            1, 1, filter=1, pre_activation=1)),
    ("activation without pre-activation", lambda: engine.compile(conv3d.Spec.from_shapes(
        x.shape, (3, 2, 3, 5, 6), activation="relu", kind="dgrad"))),
    ("kind", lambda: conv3d.Spec.from_shapes(x.shape, (3, 2, 3, 5, 6), kind="xgrad")),
    ("bias", lambda: engine.compile(conv3d.Spec.from_shapes(
        x.shape, (3, 2, 3, 5, 6), bias=True, kind="dgrad"))),
    ("tune", lambda: engine.compile(conv3d.Spec.from_shapes(
        x.shape, (3, 2, 3, 5, 6), kind="wgrad"), tune=True)),
    ("forward run", lambda: engine.compile(conv3d.Spec.from_shapes(
        x.shape, (3, 2, 3, 5, 6), dtype="f32")).run_gradient(1, 1, filter=1)),
    ("fold", lambda: engine.compile(conv3d.Spec.from_shapes(
        x.shape, (3, 2, 3, 5, 6), kind="wgrad"), wgrad_fold="depth")),
    ("wrong operand", lambda: engine.compile(conv3d.Spec.from_shapes(
        x.shape, (3, 2, 3, 5, 6), dtype="f32", kind="wgrad")).run_gradient(
            1, 1, input=1, filter=1)),
]
for name, call in calls:
    try:
        call()
        print(name, "NO ERROR")
    except (ValueError, conv3d.Conv3dError) as e:
        print(name, type(e).__name__ + ":", e)
