"""A stand-in for the few PyTorch APIs conv3d's PyTorch paths use, backed by
NumPy, CPU only (float64, float32 and float16). CI has no PyTorch: this lets
test/Python/*torch-stub*.test run the package's PyTorch code on the CPU
target: the hit path (_hit._torch_conv3d: signature, miss, layout steps,
allocation, address checks, launch) and conv3d.torch (the custom op's
registration, convert() over nn.Module trees, the drop-in's fallbacks and
copies, CausalConv3d's operand checks). It checks the package's logic
against this model of PyTorch, not PyTorch itself:
scripts/gpu/torch_check.py does that on the GPU machine. F.conv3d here is
the independent NumPy convolution (np_conv3d), in float64 rounded to the
input's dtype."""
import contextlib
import os
import sys
import types

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import np_conv3d  # noqa: E402  (test/Inputs)


class _Dtype:
    def __init__(self, name, np_dtype): self.name, self.np = name, np_dtype
    def __repr__(self): return "torch." + self.name
float64 = _Dtype("float64", np.float64)
float32 = _Dtype("float32", np.float32)
float16 = _Dtype("float16", np.float16)
bfloat16 = _Dtype("bfloat16", None)
complex64 = _Dtype("complex64", np.complex64)
complex128 = _Dtype("complex128", np.complex128)
int8, uint8 = _Dtype("int8", np.int8), _Dtype("uint8", np.uint8)
int16, int32, int64 = (_Dtype("int16", np.int16), _Dtype("int32", np.int32),
                       _Dtype("int64", np.int64))
_DT = {np.dtype(d.np): d for d in (float64, float32, float16, complex64, complex128, int8,
                                   uint8, int16, int32, int64)}
class _Layout:
    def __repr__(self): return "torch.strided"
strided = _Layout()
channels_last_3d = "channels_last_3d"
contiguous_format = "contiguous_format"
class device:
    def __init__(self, spec): self.type, self.index = spec, None
    def __eq__(self, o): return isinstance(o, device) and (self.type, self.index) == (o.type, o.index)
    def __hash__(self): return hash((self.type, self.index))
    def __repr__(self): return "device(type='%s')" % self.type

class Size(tuple):
    pass

_grad = [False]

def is_grad_enabled(): return _grad[0]

@contextlib.contextmanager
def no_grad():
    saved, _grad[0] = _grad[0], False
    try:
        yield
    finally:
        _grad[0] = saved

class Tensor:
    _version = 0  # no in-place operations in the stand-in
    requires_grad = False
    def __init__(self, a): self.a = a
    @property
    def dtype(self): return _DT[self.a.dtype]
    @property
    def layout(self): return strided
    @property
    def device(self): return device("cpu")
    @property
    def is_cuda(self): return False
    @property
    def shape(self): return Size(self.a.shape)
    @property
    def data(self): return Tensor(self.a)
    def dim(self): return self.a.ndim
    def numel(self): return self.a.size
    def stride(self): return tuple(s // self.a.itemsize for s in self.a.strides)
    def data_ptr(self): return self.a.ctypes.data
    def element_size(self): return self.a.itemsize
    def get_device(self): return -1
    def new_empty_strided(self, shape, strides):
        isz = self.a.itemsize
        n = 1 + sum((e - 1) * s for e, s in zip(shape, strides))
        base = np.empty(max(n, 1), self.a.dtype)
        return Tensor(np.lib.stride_tricks.as_strided(base, shape, [s * isz for s in strides]))
    def is_contiguous(self, memory_format=contiguous_format):
        a = self.a.transpose(0, 2, 3, 4, 1) if memory_format == channels_last_3d else self.a
        return a.flags.c_contiguous
    def contiguous(self, memory_format=None):
        if memory_format == channels_last_3d:
            return Tensor(np.ascontiguousarray(self.a.transpose(0, 2, 3, 4, 1)).transpose(0, 4, 1, 2, 3))
        return Tensor(np.ascontiguousarray(self.a))
    def permute(self, *dims): return Tensor(self.a.transpose(*dims))
    def unsqueeze(self, dim): return Tensor(np.expand_dims(self.a, dim))
    def squeeze(self, dim): return Tensor(np.squeeze(self.a, dim))
    def float(self): return Tensor(self.a.astype(np.float32))
    def __getitem__(self, index): return Tensor(self.a[index])
    def __add__(self, other): return Tensor(self.a + other.a)

class _C: pass

def empty(*shape, dtype=None, device=None, memory_format=None):
    if len(shape) == 1 and isinstance(shape[0], tuple): shape = shape[0]
    if memory_format == channels_last_3d:
        n, c, d, h, w = shape
        return Tensor(np.empty((n, d, h, w, c), dtype.np).transpose(0, 4, 1, 2, 3))
    return Tensor(np.empty(shape, dtype.np))


# torch.compiler, torch.jit ---------------------------------------------------

_compiling = [False]
compiler = types.SimpleNamespace(is_compiling=lambda: _compiling[0])
jit = types.SimpleNamespace(is_tracing=lambda: False)


# torch.library.custom_op and torch.ops ---------------------------------------

class _CustomOp:
    """custom_op's result: calling it (or torch.ops.NS.NAME) runs the
    function; registrations are recorded."""
    def __init__(self, name, function):
        self.name, self.function, self.fake, self.autograd = name, function, None, None
        self.calls = []
    def __call__(self, *args):
        self.calls.append(args)
        return self.function(*args)
    def register_fake(self, function):
        self.fake = function
        return function
    def register_autograd(self, backward, setup_context=None):
        self.autograd = backward

ops = types.SimpleNamespace()

def _custom_op(name, mutates_args=()):
    def wrap(function):
        namespace, _, op_name = name.partition("::")
        op = _CustomOp(name, function)
        if not hasattr(ops, namespace):
            setattr(ops, namespace, types.SimpleNamespace())
        setattr(getattr(ops, namespace), op_name, op)
        return op
    return wrap

library = types.SimpleNamespace(custom_op=_custom_op)


# torch.nn --------------------------------------------------------------------

class Parameter(Tensor):
    requires_grad = True
    def __init__(self, data, requires_grad=True):
        super().__init__(data.a if isinstance(data, Tensor) else data)
        self.requires_grad = requires_grad
    @property
    def data(self): return Tensor(self.a)
    @data.setter
    def data(self, value): self.a = value.a

class Module:
    def __init__(self):
        object.__setattr__(self, "_modules", {})
    def __setattr__(self, name, value):
        if isinstance(value, Module):
            self._modules[name] = value
        object.__setattr__(self, name, value)
    def named_modules(self, prefix=""):
        yield prefix, self
        for name, child in self._modules.items():
            yield from child.named_modules(prefix + ("." if prefix else "") + name)
    def __call__(self, *args, **kwargs): return self.forward(*args, **kwargs)
    def __setstate__(self, state): self.__dict__.update(state)
    def extra_repr(self): return ""

def _triple(v): return tuple(v) if isinstance(v, (tuple, list)) else (v,) * 3

class Conv3d(Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 dilation=1, groups=1, bias=True, padding_mode="zeros", device=None,
                 dtype=None):
        super().__init__()
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size, self.stride = _triple(kernel_size), _triple(stride)
        self.padding = padding if isinstance(padding, str) else _triple(padding)
        self.dilation, self.groups, self.padding_mode = _triple(dilation), groups, padding_mode
        rng = np.random.default_rng(in_channels * 1000 + out_channels)
        np_dtype = (dtype or float32).np
        shape = (out_channels, in_channels // groups) + self.kernel_size
        fan_in = in_channels // groups * int(np.prod(self.kernel_size))
        self.weight = Parameter((rng.standard_normal(shape) / fan_in ** 0.5).astype(np_dtype))
        self.bias = Parameter(rng.standard_normal(out_channels).astype(np_dtype)) if bias \
            else None
    def _conv_forward(self, input, weight, bias):
        return functional.conv3d(input, weight, bias, self.stride, self.padding, self.dilation,
                                 self.groups)
    def forward(self, input):
        return self._conv_forward(input, self.weight, self.bias)

class ConvTranspose3d(Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 output_padding=0, groups=1, bias=True, dilation=1, padding_mode="zeros",
                 device=None, dtype=None):
        super().__init__()
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size, self.stride = _triple(kernel_size), _triple(stride)
        self.padding, self.output_padding = _triple(padding), _triple(output_padding)
        self.dilation, self.groups, self.padding_mode = _triple(dilation), groups, padding_mode
        shape = (in_channels, out_channels // groups) + self.kernel_size
        self.weight = Parameter(np.zeros(shape, (dtype or float32).np))
        self.bias = Parameter(np.zeros(out_channels, (dtype or float32).np)) if bias else None


def _conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """PyTorch's F.conv3d (NCDHW, FCQRS weight, groups; padding an int or a
    3-tuple): the NumPy reference per group, rounded to the input's dtype."""
    x, w = input.a, weight.a
    if x.dtype != w.dtype:
        raise RuntimeError("Input type (%s) and weight type (%s) should be the same"
                           % (x.dtype, w.dtype))
    pd, ph, pw = _triple(padding)
    c, f = x.shape[1] // groups, w.shape[0] // groups
    parts = []
    for g in range(groups):
        xg = x[:, g * c:(g + 1) * c].transpose(0, 2, 3, 4, 1)
        wg = w[g * f:(g + 1) * f].transpose(2, 3, 4, 1, 0)
        if x.shape[0] == 0:
            size = [(x.shape[2 + i] + 2 * p - _triple(dilation)[i] * (k - 1) - 1)
                    // _triple(stride)[i] + 1
                    for i, (p, k) in enumerate(zip((pd, ph, pw), w.shape[2:]))]
            parts.append(np.zeros([0] + size + [f]))
            continue
        parts.append(np_conv3d.conv3d(xg, wg, _triple(stride), _triple(dilation),
                                      (pd, pd, ph, ph, pw, pw)))
    y = np.concatenate(parts, axis=-1)
    if bias is not None:
        y = y + bias.a
    return Tensor(np.ascontiguousarray(y.transpose(0, 4, 1, 2, 3)).astype(x.dtype))


def _pad(input, pads, value=0.0):
    w_lo, w_hi, h_lo, h_hi, d_lo, d_hi = pads
    return Tensor(np.pad(input.a, [(0, 0), (0, 0), (d_lo, d_hi), (h_lo, h_hi), (w_lo, w_hi)]))


functional = types.SimpleNamespace(
    conv3d=_conv3d, pad=_pad,
    relu=lambda t: Tensor(np.maximum(t.a, 0)),
    silu=lambda t: Tensor(t.a / (1 + np.exp(-t.a))))
nn = types.SimpleNamespace(Module=Module, Conv3d=Conv3d, ConvTranspose3d=ConvTranspose3d,
                           Parameter=Parameter, functional=functional)

__version__ = "0.0+stub"
