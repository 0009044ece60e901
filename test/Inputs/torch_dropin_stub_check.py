#!/usr/bin/env python3
"""conv3d.torch as a drop-in, on the NumPy-backed stand-in for torch
(test/Inputs/torch_stub; CI has no PyTorch), CPU target, fresh random data
against the independent float64 NumPy convolution:

1. convert() converts nn.Conv3d subclasses that keep nn.Conv3d's forward and
   _conv_forward (as torchvision's Conv3DSimple does) and leaves those that
   override either, naming the method; a converted subclass stays an
   instance of its class, computes through conv3d, and survives pickle and
   deepcopy; from_conv refuses an override.
2. conv3d.torch.conv3d and a converted module compute what the kernels do
   not take on PyTorch's convolution (the stand-in's F.conv3d), counted by
   reason with one warning per reason: float64, an empty batch, groups;
   a non-dense channel slice and an unbatched input are computed by conv3d;
   conv3d.conv3d keeps its errors for all of them.
3. A call traced by torch.compile hands the custom op a float32 bias and a
   channels_last weight converted in the graph: no converted copy is cached
   by the op (what CUDA-graph trees, mode="reduce-overhead", refused).
4. CausalConv3d refuses a cache, x, norm weight or residual that does not
   fit the layer, naming it, before anything runs.
"""

import copy
import os
import pickle
import sys
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "torch_stub"))
sys.path.insert(0, HERE)

import torch  # noqa: E402  (the stand-in)

import conv3d  # noqa: E402
import conv3d.torch as ct  # noqa: E402
import np_conv3d  # noqa: E402
from conv3d import _plan  # noqa: E402

assert torch.__file__.startswith(os.path.join(HERE, "torch_stub")), torch.__file__
rng = np.random.default_rng(int.from_bytes(os.urandom(4), "little"))


def tensor(shape, dtype=np.float32, channels_last=True, scale=1.0):
    a = (rng.standard_normal(shape) * scale).astype(dtype)
    if channels_last and a.ndim == 5:
        a = np.ascontiguousarray(a.transpose(0, 2, 3, 4, 1)).transpose(0, 4, 1, 2, 3)
    return torch.Tensor(a)


def reference(x, w, b=None, stride=1, padding=1, groups=1):
    """float64 NCDHW convolution (np_conv3d works in NDHWC, QRSCF)."""
    p = padding
    y = np_conv3d.conv3d(x.a.transpose(0, 2, 3, 4, 1), w.a.transpose(2, 3, 4, 1, 0),
                         (stride,) * 3, (1, 1, 1), (p, p, p, p, p, p), groups=groups)
    if b is not None:
        y = y + b.a.astype(np.float64)
    return y.transpose(0, 4, 1, 2, 3)


def rel_l2(y, ref):
    y = np.asarray(y.a, np.float64)
    return np.linalg.norm(y - ref) / np.linalg.norm(ref) if np.isfinite(y).all() \
        else float("inf")


def expect(name, call, error=Exception):
    try:
        call()
        print("%s: no error" % name)
    except error as e:
        print("%s: %s: %s" % (name, type(e).__name__, str(e).splitlines()[0]))


# F.conv3d calls: the stand-in's convolution is PyTorch's fallback.
pytorch_calls = [0]
_pytorch_conv3d = torch.nn.functional.conv3d


def counted_conv3d(*args, **kwargs):
    pytorch_calls[0] += 1
    return _pytorch_conv3d(*args, **kwargs)


torch.nn.functional.conv3d = counted_conv3d


# 1. convert() ----------------------------------------------------------------

class Conv3DSimple(torch.nn.Conv3d):
    """As torchvision's: a static method, nn.Conv3d's forward."""

    def __init__(self, in_planes, out_planes):
        super().__init__(in_planes, out_planes, (3, 3, 3), padding=1, bias=False)

    @staticmethod
    def get_downsample_stride(stride):
        return stride, stride, stride


class OwnForward(torch.nn.Conv3d):
    def forward(self, input):
        return super().forward(input)


class OwnConvForward(torch.nn.Conv3d):
    def _conv_forward(self, input, weight, bias):
        return super()._conv_forward(input, weight, bias)


class InheritsForward(OwnForward):
    pass


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.plain = torch.nn.Conv3d(8, 8, 3, padding=1)
        self.simple = Conv3DSimple(8, 8)
        self.forward_override = OwnForward(8, 8, 3, padding=1)
        self.conv_forward_override = OwnConvForward(8, 8, 3, padding=1)
        self.inherited = InheritsForward(8, 8, 3, padding=1)
        self.grouped = torch.nn.Conv3d(8, 8, 3, padding=1, groups=2)
        self.transposed = torch.nn.ConvTranspose3d(8, 8, 3)
        self.transposed_grouped = torch.nn.ConvTranspose3d(8, 8, 3, groups=2)
        self.causal = ct.CausalConv3d(8, 8, 3, padding=1)


net = Net()
print(ct.convert(net))
simple = net.simple
print("simple stays a Conv3DSimple:", isinstance(simple, Conv3DSimple),
      "| is a conv3d Conv3d:", isinstance(simple, ct.Conv3d),
      "| class name:", type(simple).__name__,
      "| static method:", simple.get_downsample_stride(2))
x = tensor((2, 8, 4, 6, 5))
before = pytorch_calls[0]
y = simple(x)
print("converted subclass: rel_l2 %s, PyTorch's convolution calls: %d"
      % ("OK" if rel_l2(y, reference(x, simple.weight)) < 1e-5 else "FAIL",
         pytorch_calls[0] - before))
for how, clone in (("pickle", pickle.loads(pickle.dumps(simple))),
                   ("deepcopy", copy.deepcopy(simple))):
    print("%s: same class: %s, same result: %s" % (
        how, type(clone) is type(simple), np.array_equal(clone(x).a, y.a)))
expect("from_conv of an override",
       lambda: ct.Conv3d.from_conv(OwnForward(8, 8, 3)), ValueError)
expect("from_conv of a converted module", lambda: ct.Conv3d.from_conv(simple), TypeError)


# 2. Fallbacks and copies -----------------------------------------------------

ct.reset_fallbacks()
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    x64 = tensor((1, 8, 4, 5, 6), np.float64, channels_last=False)
    w64 = tensor((4, 8, 3, 3, 3), np.float64, channels_last=False, scale=0.2)
    b64 = tensor((4,), np.float64)
    for _ in range(2):
        y = ct.conv3d(x64, w64, b64, padding=1)
    print("float64: PyTorch's result: %s, rel_l2 %s" % (
        np.array_equal(y.a, _pytorch_conv3d(x64, w64, b64, 1, 1).a),
        "OK" if rel_l2(y, reference(x64, w64, b64)) < 1e-12 else "FAIL"))
    w32 = tensor((4, 8, 3, 3, 3), scale=0.2)
    empty = ct.conv3d(tensor((0, 8, 4, 5, 6)), w32, padding=1)
    print("empty batch: output shape", tuple(empty.shape))
    x = tensor((2, 8, 4, 5, 6))
    wg = tensor((4, 4, 3, 3, 3), scale=0.2)
    before = pytorch_calls[0]
    grouped = ct.conv3d(x, wg, padding=1, groups=2)
    print("groups=2: output shape %s, rel_l2 %s, PyTorch's convolution calls: %d" % (
        tuple(grouped.shape),
        "OK" if rel_l2(grouped, reference(x, wg, groups=2)) < 1e-5 else "FAIL",
        pytorch_calls[0] - before))
    before = pytorch_calls[0]
    y = net.grouped(x)
    print("converted grouped layer: rel_l2 %s, PyTorch's convolution calls: %d" % (
        "OK" if rel_l2(y, reference(x, net.grouped.weight, net.grouped.bias, groups=2))
        < 1e-5 else "FAIL", pytorch_calls[0] - before))
    layer = ct.Conv3d(8, 4, 3, padding=1, dtype=torch.float64)
    layer(x64)
    expect("a float32 layer on float64 input (PyTorch's error)",
           lambda: net.plain(x64), RuntimeError)
    before = pytorch_calls[0]
    base = tensor((1, 16, 4, 5, 6))
    sliced = base[:, 4:12]  # channels_last memory, every 16th value: not dense
    print("channel slice: dense: %s, conv3d rel_l2 %s" % (
        sliced.is_contiguous(memory_format=torch.channels_last_3d) or sliced.is_contiguous(),
        "OK" if rel_l2(ct.conv3d(sliced, w32, padding=1),
                       reference(sliced, w32)) < 1e-5 else "FAIL"))
    unbatched = ct.conv3d(x[0], w32, padding=1)
    print("unbatched input: shape %s, rel_l2 %s" % (
        tuple(unbatched.shape),
        "OK" if np.linalg.norm(unbatched.a - reference(x, w32)[0])
        / np.linalg.norm(reference(x, w32)[0]) < 1e-5 else "FAIL"))
    print("PyTorch's convolution for the slice and the unbatched input: %d calls"
          % (pytorch_calls[0] - before))
print("fallbacks:", sorted(ct.fallbacks().items()))
print("warnings: %d, one per reason: %s" % (
    len(caught), sorted({str(w.message).split(" with ")[1].split(" runs ")[0]
                         for w in caught})))
for name, args in (("float64", (x64, w64)), ("empty batch", (tensor((0, 8, 4, 5, 6)), w32)),
                   ("channel slice", (sliced, w32))):
    expect("conv3d.conv3d, %s" % name, lambda: conv3d.conv3d(*args, padding=1))


# 3. A traced call converts parameters in the graph ---------------------------

wc = tensor((4, 8, 3, 3, 3), channels_last=False, scale=0.2)   # FCQRS: converted
b16 = tensor((4,), np.float16)                                 # f16 bias: converted
x = tensor((2, 8, 4, 5, 6))
cached = len(_plan._converted)
calls = len(torch.ops.conv3d.conv3d.calls)
torch._compiling[0] = True  # as under torch.compile's tracing
try:
    y = ct.conv3d(x, wc, b16, padding=1)
finally:
    torch._compiling[0] = False
args = torch.ops.conv3d.conv3d.calls[calls]
print("traced call: through the op: %s; its weight channels_last: %s, its bias %s; "
      "copies cached: %d; rel_l2 %s" % (
          len(torch.ops.conv3d.conv3d.calls) == calls + 1,
          args[1].is_contiguous(memory_format=torch.channels_last_3d), args[2].dtype,
          len(_plan._converted) - cached,
          "OK" if rel_l2(y, reference(x, wc, b16)) < 1e-5 else "FAIL"))
wdw = tensor((16, 1, 3, 3, 3), scale=0.3)  # depthwise with a multiplier of 2
calls = len(torch.ops.conv3d.conv3d.calls)
torch._compiling[0] = True
try:
    y = ct.conv3d(x, wdw, padding=1, groups=8)
finally:
    torch._compiling[0] = False
print("traced grouped call: through the op: %s, its groups: %s; rel_l2 %s" % (
    len(torch.ops.conv3d.conv3d.calls) == calls + 1,
    torch.ops.conv3d.conv3d.calls[calls][-1],
    "OK" if rel_l2(y, reference(x, wdw, groups=8)) < 1e-5 else "FAIL"))


# 4. CausalConv3d's operand checks --------------------------------------------

layer = ct.CausalConv3d(16, 16, 3, padding=1)
x = tensor((1, 16, 3, 8, 8), channels_last=False)
for name, call in (
        ("cache of 8 channels", lambda: layer(x, torch.Tensor(np.zeros((1, 8, 2, 8, 8),
                                                                        np.float32)))),
        ("cache of another width", lambda: layer(x, torch.Tensor(
            np.zeros((1, 16, 2, 8, 4), np.float32)))),
        ("cache of another dtype", lambda: layer(x, torch.Tensor(
            np.zeros((1, 16, 2, 8, 8), np.float16)))),
        ("cache of rank 4", lambda: layer(x, torch.Tensor(np.zeros((16, 2, 8, 8),
                                                                    np.float32)))),
        ("x of 8 channels", lambda: layer(tensor((1, 8, 3, 8, 8)))),
        ("norm_weight of 8 values", lambda: layer(x, norm_weight=tensor((8,))))):
    expect(name, call, (ValueError, TypeError))
print("TORCH-DROPIN-STUB-OK")
