"""Training through conv3d-mlir's kernels: the data and weight gradients,
a differentiable conv3d and the transposed convolution, for PyTorch.

    import conv3d.autograd as ca
    y = ca.conv3d(x, w, b, stride=2, padding=1)        # differentiable
    y.sum().backward()                                 # dgrad + wgrad kernels
    dx = ca.conv3d_input(x.shape, w, dy, stride=2, padding=1)  # torch.nn.grad's
    dw = ca.conv3d_weight(x, w.shape, dy, stride=2, padding=1)
    z = ca.conv_transpose3d(x, w, b, stride=2, padding=1, output_padding=1)

The backward of conv3d runs the library's data gradient (kind "dgrad": the
forward convolutions of its stride phases) and weight gradient (kind
"wgrad"); the bias gradient is the output gradient summed over N, D, H, W.
A transposed convolution is the data gradient's computation with its own
shape rules (output_padding included); its backward is a forward
convolution (input gradient) and a weight gradient.

Tensors are NCDHW PyTorch tensors (any memory format; the kernels read
channels-last copies) on the CPU (target "cpu") or a CUDA device ("sm80",
"sm90", "auto"), of dtype bfloat16, float16 or float32; float64 is computed
in float32 and returned as float64 (what torch.autograd.gradcheck feeds).
Works with PyTorch 1.13 and later (torch.autograd.Function);
conv3d.torch builds its custom ops' autograd (torch.compile) on the same
functions. Every mismatch of shapes, dtypes or devices between the forward's
spec and the gradients is a ValueError or TypeError naming it.
"""

import threading

import torch

from . import Spec, _plan

__all__ = ["conv3d", "conv3d_input", "conv3d_weight", "conv_transpose3d",
           "Conv3d", "ConvTranspose3d"]

_DTYPES = {torch.bfloat16: "bf16", torch.float16: "f16", torch.float32: "f32"}
_compiled = {}
_lock = threading.Lock()


def _triple(value, what, minimum):
    values = [value] * 3 if isinstance(value, int) else list(value)
    if len(values) != 3 or any(not isinstance(v, int) or v < minimum for v in values):
        raise ValueError("%s must be an int or 3 ints >= %d, got %r" % (what, minimum, value))
    return values


def _six(padding):
    """(d_lo, d_hi, h_lo, h_hi, w_lo, w_hi) from an int, 3 or 6 ints."""
    values = [padding] * 3 if isinstance(padding, int) else list(padding)
    if len(values) == 3:
        values = [values[0], values[0], values[1], values[1], values[2], values[2]]
    if len(values) != 6 or any(not isinstance(v, int) or v < 0 for v in values):
        raise ValueError("padding must be an int, 3 or 6 non-negative ints "
                         "(d_lo, d_hi, h_lo, h_hi, w_lo, w_hi), got %r" % (padding,))
    return values


def _output_size(size, k, stride, dilation, lo, hi):
    return (size + lo + hi - dilation * (k - 1) - 1) // stride + 1


def _forward_output_shape(input_shape, weight_shape, stride, padding, dilation):
    n, _, d, h, w = input_shape
    f = weight_shape[0]
    return (n, f) + tuple(
        _output_size((d, h, w)[i], weight_shape[2 + i], stride[i], dilation[i],
                     padding[2 * i], padding[2 * i + 1]) for i in range(3))


def _check_tensor(t, what, rank=5):
    if not isinstance(t, torch.Tensor):
        raise TypeError("%s must be a torch.Tensor, got %s" % (what, type(t).__name__))
    if t.dim() != rank:
        raise ValueError("%s must have rank %d, got shape %s"
                         % (what, rank, tuple(t.shape)))


def _common(tensors):
    """The dtype and device all named tensors share (TypeError/ValueError
    naming the first that differs)."""
    (first_name, first), rest = tensors[0], tensors[1:]
    for name, t in rest:
        if t.dtype != first.dtype:
            raise TypeError("%s is %s but %s is %s: the gradients take one dtype"
                            % (name, t.dtype, first_name, first.dtype))
        if t.device != first.device:
            raise ValueError("%s is on %s but %s is on %s" % (name, t.device, first_name,
                                                             first.device))
    if first.dtype != torch.float64 and first.dtype not in _DTYPES:
        raise TypeError("the kernels compute bfloat16, float16 and float32 (float64 in "
                        "float32), got %s" % first.dtype)
    return first.dtype, first.device


def _target(target, device):
    dev = ("cpu", -1) if device.type == "cpu" else (device.type, device.index or 0)
    if dev[0] not in ("cpu", "cuda"):
        raise ValueError("the tensors are on %s; conv3d runs on the CPU and CUDA" % device)
    return _plan._resolve_target(target, dev)


def _compile(kind, input_shape, weight_shape, stride, padding, dilation, dtype,
             target, bias=False):
    """The compiled `kind` of the forward convolution of an NCDHW input of
    `input_shape` by an (F, C, Q, R, S) weight, cached per spec."""
    n, c, d, h, w = input_shape
    f, wc, q, r, s = weight_shape
    if wc != c:
        raise ValueError("the weight has C = %d input channels but the input has %d"
                         % (wc, c))
    key = (kind, tuple(input_shape), tuple(weight_shape), tuple(stride), tuple(padding),
           tuple(dilation), dtype, target, bias)
    with _lock:
        conv = _compiled.get(key)
    if conv is None:
        spec = Spec.from_shapes(input_shape=(n, d, h, w, c), filter_shape=(q, r, s, c, f),
                                strides=stride, dilations=dilation, padding=padding,
                                filter_layout="fqrsc", dtype=dtype, bias=bias)
        conv = _plan._default_engine().compile(spec, target=target, kind=kind)
        with _lock:
            _compiled[key] = conv
    return conv


def _channels_last(t, compute):
    """t (N, C, ...) as a contiguous (N, ..., C) tensor of `compute` dtype."""
    return t.to(compute).permute(0, 2, 3, 4, 1).contiguous()


def _stream(device):
    return torch.cuda.current_stream(device).cuda_stream if device.type == "cuda" else None


def _compute_dtype(dtype):
    return torch.float32 if dtype == torch.float64 else dtype


def _fprop(input, weight, bias, stride, padding, dilation, target):
    dtype, device = _common([("input", input), ("weight", weight)]
                            + ([("bias", bias)] if bias is not None and
                               bias.dtype == input.dtype else []))
    compute = _compute_dtype(dtype)
    resolved = _target(target, device)
    out_shape = _forward_output_shape(input.shape, weight.shape, stride, padding, dilation)
    conv = _compile("fprop", input.shape, weight.shape, stride, padding, dilation,
                    _DTYPES[compute], resolved, bias=bias is not None)
    x = _channels_last(input, compute)
    wt = _channels_last(weight, compute)
    b = None if bias is None else bias.to(device=device, dtype=torch.float32).contiguous()
    y = torch.empty((out_shape[0],) + out_shape[2:] + (out_shape[1],), dtype=compute,
                    device=device)
    conv.run(x.data_ptr(), wt.data_ptr(), y.data_ptr(),
             bias=None if b is None else b.data_ptr(), stream=_stream(device))
    return y.permute(0, 4, 1, 2, 3).to(dtype)


# kind -> (the operand besides grad_output, the size argument, its form,
# the keyword Conv.run_gradient reads the operand by)
_GRADIENTS = {"dgrad": ("weight", "input_size", "(N, C, D, H, W)", "filter"),
              "wgrad": ("input", "weight_size", "(F, C, Q, R, S)", "input")}


def _gradient(kind, size, operand, grad_output, stride, padding, dilation, target):
    """The library's `kind` kernel: dgrad (operand: the weight) gives the
    input's gradient of `size`, wgrad (operand: the input) the weight's;
    every argument checked against the forward's spec first."""
    operand_name, size_name, size_form, keyword = _GRADIENTS[kind]
    stride, dilation = _triple(stride, "stride", 1), _triple(dilation, "dilation", 1)
    padding = _six(padding)
    _check_tensor(operand, operand_name)
    _check_tensor(grad_output, "grad_output")
    size = tuple(int(v) for v in size)
    if len(size) != 5:
        raise ValueError("%s must be %s, got %r" % (size_name, size_form, size))
    named = [("grad_output", grad_output), (operand_name, operand)]
    dtype, device = _common(named if kind == "dgrad" else named[::-1])
    input_shape, weight_shape = ((size, tuple(operand.shape)) if kind == "dgrad"
                                 else (tuple(operand.shape), size))
    expected = _forward_output_shape(input_shape, weight_shape, stride, padding, dilation)
    if tuple(grad_output.shape) != expected:
        raise ValueError("grad_output has shape %s but the forward convolution of an input "
                         "of %s by a weight of %s (stride %s, padding %s, dilation %s) "
                         "outputs %s" % (tuple(grad_output.shape), input_shape, weight_shape,
                                         stride, padding, dilation, expected))
    compute = _compute_dtype(dtype)
    conv = _compile(kind, input_shape, weight_shape, stride, padding, dilation,
                    _DTYPES[compute], _target(target, device))
    dy = _channels_last(grad_output, compute)
    other = _channels_last(operand, compute)
    # The result channels-last: (N, D, H, W, C) or (F, Q, R, S, C).
    result = torch.empty((size[0],) + size[2:] + (size[1],), dtype=compute, device=device)
    conv.run_gradient(dy.data_ptr(), result.data_ptr(), stream=_stream(device),
                      **{keyword: other.data_ptr()})
    return result.permute(0, 4, 1, 2, 3).to(dtype)


def conv3d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1,
                 target="auto"):
    """The input's gradient of conv3d (torch.nn.grad.conv3d_input's
    arguments; padding also as 6 ints): the library's dgrad kernel."""
    return _gradient("dgrad", input_size, weight, grad_output, stride, padding, dilation,
                     target)


def conv3d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1,
                  target="auto"):
    """The weight's gradient of conv3d (torch.nn.grad.conv3d_weight's
    arguments; padding also as 6 ints): the library's wgrad kernel."""
    return _gradient("wgrad", weight_size, input, grad_output, stride, padding, dilation,
                     target)


def pytorch_conv3d_weight(input, weight_size, grad_output, stride=1, padding=0,
                          dilation=1):
    """The weight gradient by PyTorch's own convolution (cuDNN on a GPU),
    conv3d_weight's arguments (padding also as 6 ints): what conv3d.torch
    runs where the library's wgrad is slower. Symmetric padding is passed
    to PyTorch rather than materialized (an explicit pad copies the whole
    activation: 4 ms of a U-Net training step's conv glue on the H100), and
    both operands are read in one memory format (the input's)."""
    pads = _six(padding)
    stride = _triple(stride, "stride", 1)
    dilation = _triple(dilation, "dilation", 1)
    lows, highs = pads[0::2], pads[1::2]
    if lows != highs:
        # Asymmetric (causal, 'same' with an even window): pad explicitly.
        input = torch.nn.functional.pad(
            input, (pads[4], pads[5], pads[2], pads[3], pads[0], pads[1]))
        lows = [0, 0, 0]
    # Channels-last unless the input is NCDHW only (a 1-channel input is
    # both: its channels-last "copy" is itself).
    layout = (torch.contiguous_format
              if input.is_contiguous()
              and not input.is_contiguous(memory_format=torch.channels_last_3d)
              else torch.channels_last_3d)
    input = input.contiguous(memory_format=layout)
    grad_output = grad_output.contiguous(memory_format=layout)
    # convolution_backward rather than torch.nn.grad.conv3d_weight: that
    # one describes the weight by a stride-0 expand, which leaves cuDNN no
    # channels-last weight to write; an empty weight in the operands'
    # layout (never read) gives it one. An NCDHW input stays NCDHW: cuDNN
    # then transposes the operands itself (46 NCHW-to-NHWC kernels, 3.8 ms,
    # in a U-Net step on an H200), which costs less than PyTorch's copies
    # into channels_last_3d (50 copies, 7.9 ms, in the same step when this
    # read both operands channels-last as PyTorch's own backward does).
    weight = torch.empty(list(weight_size), dtype=input.dtype, device=input.device,
                         memory_format=layout)
    _, grad_weight, _ = torch.ops.aten.convolution_backward(
        grad_output, input, weight, None, stride, lows, dilation, False, [0, 0, 0], 1,
        [False, True, False])
    return grad_weight.contiguous(memory_format=torch.channels_last_3d)


class _Conv3dFunction(torch.autograd.Function):
    """conv3d with the library's kernels forward and backward."""

    @staticmethod
    def forward(ctx, input, weight, bias, stride, padding, dilation, target):
        ctx.save_for_backward(input, weight)
        ctx.geometry = (stride, padding, dilation, target)
        ctx.has_bias = bias is not None
        return _fprop(input, weight, bias, stride, padding, dilation, target)

    @staticmethod
    def backward(ctx, grad):
        input, weight = ctx.saved_tensors
        stride, padding, dilation, target = ctx.geometry
        grad_input = grad_weight = grad_bias = None
        if ctx.needs_input_grad[0]:
            grad_input = conv3d_input(input.shape, weight, grad, stride, padding, dilation,
                                      target)
        if ctx.needs_input_grad[1]:
            grad_weight = conv3d_weight(input, weight.shape, grad, stride, padding,
                                        dilation, target)
        if ctx.has_bias and ctx.needs_input_grad[2]:
            grad_bias = grad.sum(dim=(0, 2, 3, 4))
        return grad_input, grad_weight, grad_bias, None, None, None, None


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, target="auto"):
    """torch.nn.functional.conv3d (groups 1; padding also as 6 ints),
    differentiable: backward runs the library's dgrad and wgrad kernels."""
    _check_tensor(input, "input")
    _check_tensor(weight, "weight")
    if bias is not None and (bias.dim() != 1 or bias.shape[0] != weight.shape[0]):
        raise ValueError("bias must have shape (%d,), got %s"
                         % (weight.shape[0], tuple(bias.shape)))
    return _Conv3dFunction.apply(input, weight, bias, _triple(stride, "stride", 1),
                                 _six(padding), _triple(dilation, "dilation", 1), target)


def _transposed_input_size(input, weight, stride, padding, output_padding, dilation):
    """The forward input (N, C_out, D, H, W) whose output a transposed
    convolution's input is: (Di - 1) * stride - pad_lo - pad_hi +
    dilation * (k - 1) + 1 + output_padding per axis (ConvGeometry::
    fromTransposed; the library checks the result against its own
    geometry)."""
    sizes = []
    for i in range(3):
        if not 0 <= output_padding[i] < stride[i]:
            raise ValueError("output_padding must lie in [0, stride) on every axis, got "
                             "%s for stride %s" % (output_padding, stride))
        sizes.append((input.shape[2 + i] - 1) * stride[i] - padding[2 * i]
                     - padding[2 * i + 1] + dilation[i] * (weight.shape[2 + i] - 1) + 1
                     + output_padding[i])
    if min(sizes) <= 0:
        raise ValueError("the transposed convolution's output would be empty: %s" % sizes)
    return (input.shape[0], weight.shape[1]) + tuple(sizes)


class _ConvTranspose3dFunction(torch.autograd.Function):
    """The transposed convolution: the dgrad kernel forward; backward the
    forward convolution (input gradient) and the wgrad kernel."""

    @staticmethod
    def forward(ctx, input, weight, stride, padding, output_padding, dilation, target):
        ctx.save_for_backward(input, weight)
        ctx.geometry = (stride, padding, dilation, target)
        size = _transposed_input_size(input, weight, stride, padding, output_padding,
                                      dilation)
        return conv3d_input(size, weight, input, stride, padding, dilation, target)

    @staticmethod
    def backward(ctx, grad):
        input, weight = ctx.saved_tensors
        stride, padding, dilation, target = ctx.geometry
        grad_input = grad_weight = None
        if ctx.needs_input_grad[0]:
            grad_input = _fprop(grad, weight, None, stride, padding, dilation, target)
        if ctx.needs_input_grad[1]:
            grad_weight = conv3d_weight(grad, weight.shape, input, stride, padding,
                                        dilation, target)
        return grad_input, grad_weight, None, None, None, None, None


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0,
                     dilation=1, target="auto"):
    """torch.nn.functional.conv_transpose3d (groups 1; weight (C_in, C_out,
    Q, R, S); padding also as 6 ints), differentiable."""
    _check_tensor(input, "input")
    _check_tensor(weight, "weight")
    if input.shape[1] != weight.shape[0]:
        raise ValueError("the input has %d channels but the weight's first dimension "
                         "(C_in) is %d" % (input.shape[1], weight.shape[0]))
    out = _ConvTranspose3dFunction.apply(
        input, weight, _triple(stride, "stride", 1), _six(padding),
        _triple(output_padding, "output_padding", 0), _triple(dilation, "dilation", 1),
        target)
    if bias is not None:
        if bias.dim() != 1 or bias.shape[0] != weight.shape[1]:
            raise ValueError("bias must have shape (%d,), got %s"
                             % (weight.shape[1], tuple(bias.shape)))
        out = out + bias.to(out.dtype).reshape(1, -1, 1, 1, 1)
    return out


def _module_padding(module):
    if isinstance(module.padding, str):
        raise ValueError("padding=%r is not supported; give the amounts" % module.padding)
    return list(module.padding)


class Conv3d(torch.nn.Conv3d):
    """torch.nn.Conv3d (groups 1, zeros padding) whose forward and backward
    run on the library's kernels."""

    target = "auto"

    def forward(self, input):
        if self.groups != 1 or self.padding_mode != "zeros":
            raise ValueError("conv3d.autograd.Conv3d takes groups=1 and "
                             "padding_mode='zeros'")
        return conv3d(input, self.weight, self.bias, list(self.stride),
                      _module_padding(self), list(self.dilation), self.target)


class ConvTranspose3d(torch.nn.ConvTranspose3d):
    """torch.nn.ConvTranspose3d (groups 1) on the library's kernels: the
    dgrad kernel forward, fprop and wgrad backward."""

    target = "auto"

    def forward(self, input, output_size=None):
        if self.groups != 1 or self.padding_mode != "zeros":
            raise ValueError("conv3d.autograd.ConvTranspose3d takes groups=1 and "
                             "padding_mode='zeros'")
        output_padding = list(self.output_padding)
        if output_size is not None:
            output_padding = list(self._output_padding(
                input, output_size, self.stride, self.padding, self.kernel_size, 3,
                self.dilation))
        return conv_transpose3d(input, self.weight, self.bias, list(self.stride),
                                _module_padding(self), output_padding,
                                list(self.dilation), self.target)
