#!/usr/bin/env python3
"""The PyTorch hit path (conv3d._hit._torch_conv3d) on a NumPy-backed
stand-in for torch (test/Inputs/torch_stub), CPU target: hits compute what
the NumPy route computes, the signature function the benchmarks time finds
the plan the call made, layout steps and out= work on hits, and a hit
refuses what a miss refuses."""

import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "torch_stub"))

import torch  # noqa: E402  (the stand-in)

import conv3d  # noqa: E402
from conv3d import _hit, _plan  # noqa: E402

assert torch.__file__.startswith(os.path.join(HERE, "torch_stub")), torch.__file__
rng = np.random.default_rng(int.from_bytes(os.urandom(4), "little"))


def channels_last(a):
    return np.ascontiguousarray(a.transpose(0, 2, 3, 4, 1)).transpose(0, 4, 1, 2, 3)


x = torch.Tensor(channels_last(rng.standard_normal((2, 8, 3, 5, 5)).astype(np.float32)))
w = torch.Tensor(channels_last(rng.standard_normal((4, 8, 3, 3, 3)).astype(np.float32)))
b = torch.Tensor(rng.standard_normal(4).astype(np.float32))
ref = conv3d.conv3d(x.a, w.a, b.a, 1, 1)  # the NumPy route, same library
before = len(_hit.signatures)
miss = conv3d.conv3d(x, w, b, 1, 1)
hit = conv3d.conv3d(x, w, b, 1, 1)
print("one PyTorch signature:", len(_hit.signatures) == before + 1)
# Which hit path ran: the C extension's (beside the library) unless
# CONV3D_HIT_EXTENSION=0 turned it off.
print("hit path:", "C" if _hit.paths[torch.Tensor] is not _hit._torch_conv3d else
      "Python (%s)" % _hit.extension_status)
print("miss and hit equal the NumPy route:", type(hit) is torch.Tensor,
      np.array_equal(miss.a, ref), np.array_equal(hit.a, ref))
print("hit output channels_last:", hit.stride() == (300, 1, 100, 20, 4))
key = _hit.torch_signature(x, w, b, None, None, 1, 1, 1, 1, None, "auto")
print("torch_signature finds the plan:", _hit.signatures.get(key) is not None)
# Tuple arguments (keyed in _arguments_key's normal form, a second entry)
# and an operand of another library (the general route takes the call).
tuples = [conv3d.conv3d(x, w, b, (1, 1, 1), [1, 1, 1]) for _ in range(2)]
print("tuple arguments, miss and hit:", all(np.array_equal(t.a, ref) for t in tuples),
      len(_hit.signatures) == before + 2)
mixed = conv3d.conv3d(x, w.a, b, 1, 1)
print("a NumPy weight with a tensor input:", type(mixed).__name__,
      np.array_equal(np.asarray(mixed.a if hasattr(mixed, "a") else mixed), ref))

xc = torch.Tensor(np.ascontiguousarray(x.a))
for _ in range(2):
    y = conv3d.conv3d(xc, w, b, 1, 1)
# A channels_last_3d weight makes the output channels-last (PyTorch's rule
# for cuDNN); with an NCDHW weight too, the output is copied back to NCDHW.
print("NCDHW input (layout step), hit:", np.array_equal(y.a, ref),
      y.stride() == (300, 1, 100, 20, 4))
xcw = torch.Tensor(np.ascontiguousarray(w.a))
for _ in range(2):
    y = conv3d.conv3d(xc, xcw, b, 1, 1)
print("NCDHW input and weight, hit:", np.array_equal(y.a, ref),
      y.stride() == (300, 75, 25, 5, 1))
# A contiguous (FCQRS) weight and a float16 bias: converted once, reused by
# hits, which then launch directly.
wc = torch.Tensor(np.ascontiguousarray(w.a))
b16 = torch.Tensor(b.a.astype(np.float16))
ref16 = conv3d.conv3d(x.a, w.a, b16.a.astype(np.float32), 1, 1)
results = [conv3d.conv3d(x, wc, b16, 1, 1) for _ in range(3)]
copies = {key[1]: entry[2] for key, entry in _plan._converted.items()
          if entry[0]() in (wc, b16)}
print("converted weight and bias, hits:", all(np.array_equal(r.a, ref16) for r in results),
      sorted(copies), _hit.signatures[_hit.torch_signature(
          x, wc, b16, None, None, 1, 1, 1, 1, None, "auto")][1] == _hit.PARAMETERS)
y = conv3d.conv3d(x, wc, b16, 1, 1)
print("the copies are reused:", all(
    _plan._converted[(id(t), what)][2] is copies[what]
    for t, what in ((wc, "weight"), (b16, "bias"))))
out = torch.Tensor(channels_last(np.full(ref.shape, np.nan, np.float32)))
for _ in range(2):
    y = conv3d.conv3d(x, w, b, 1, 1, out=out)
print("out= (poisoned), hit:", y is out, np.array_equal(out.a, ref))

# An out= with the previous out='s signature (a hit) over the input's memory.
overlapping = torch.Tensor(
    x.a.transpose(0, 2, 3, 4, 1).reshape(-1)[:600].reshape(2, 3, 5, 5, 4).transpose(
        0, 4, 1, 2, 3))
for args, kwargs in (((x, w, b, True, 1), {}),
                     ((x, w, b, 1, 1), {"out": torch.Tensor(x.a[:, :4])}),
                     ((x, w, b, 1, 1), {"out": overlapping})):
    try:
        conv3d.conv3d(*args, **kwargs)
        print("no error")
    except (TypeError, ValueError) as e:
        print("%s: %s" % (type(e).__name__, e))
# An input 2 bytes off alignment, with the hit's signature.
raw = np.empty(x.a.size * 4 + 2, np.uint8)[2:].view(np.float32)
odd = torch.Tensor(raw.reshape(2, 3, 5, 5, 8).transpose(0, 4, 1, 2, 3))
before = len(_hit.signatures)
try:
    conv3d.conv3d(odd, w, b, 1, 1)
    print("no error")
except ValueError as e:
    print("ValueError: %s (a hit: %s)" % (e, len(_hit.signatures) == before))
# An unhashable argument: no signature, the general route names it.
try:
    conv3d.conv3d(x, w, b, 1, 1, activation=["relu"])
    print("no error")
except ValueError as e:
    print("ValueError: %s" % e)
# The C function checks its own arguments.
module = _hit.extension()
if module is not None:
    try:
        module.torch_conv3d(x, w)
        print("no error")
    except TypeError as e:
        print("C function: TypeError: %s" % e)
# The torch-native path's diagnostics (it is built against a real PyTorch
# on the machine that runs it; none here): not built, a file that is no
# module, a build older than its source, turned off.
import tempfile  # noqa: E402

from conv3d import _torch_native  # noqa: E402

print("torch-native in use:", _hit._native is not None)
with tempfile.TemporaryDirectory() as folder:
    os.environ["CONV3D_TORCH_NATIVE_DIR"] = folder
    print("torch-native:", _torch_native.load(), "|", _torch_native.status)
    built = os.path.join(_torch_native.build_directory(torch), _torch_native.NAME + ".so")
    os.makedirs(os.path.dirname(built))
    with open(built, "wb") as f:
        f.write(b"not a shared object")
    print("torch-native:", _torch_native.load(), "|", _torch_native.status)
    os.utime(built, (0, 0))
    print("torch-native:", _torch_native.load(), "|", _torch_native.status)
    os.environ["CONV3D_TORCH_NATIVE"] = "0"
    print("torch-native:", _torch_native.load(), "|", _torch_native.status)
print("TORCH-STUB-OK")
