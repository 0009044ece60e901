"""conv3d for PyTorch: a custom op, a drop-in nn.Conv3d and convert().

    import conv3d.torch
    y = conv3d.torch.conv3d(x, w, b, stride=1, padding=1)    # like F.conv3d
    layer = conv3d.torch.Conv3d(64, 64, 3, padding=1)         # like nn.Conv3d
    report = conv3d.torch.convert(model)                      # in place
    print(report)                                             # what was left, and why

`torch.ops.conv3d.conv3d` is a `torch.library` custom op with a fake (meta)
kernel, so `torch.compile` traces models that use it without graph breaks.
It runs on the caller's current CUDA stream and adds no synchronization.
Its backward runs the library's gradient kernels through two more custom
ops with fake kernels, `conv3d::conv3d_input` (dgrad) and
`conv3d::conv3d_weight` (wgrad) (conv3d.autograd); the bias gradient is the
output gradient summed over N, D, H, W, a fused activation's derivative is
taken at the recomputed pre-activation. `conv3d::conv_transpose3d` (the
dgrad kernel) backs ConvTranspose3d. Eager inference calls
(no_grad(), inference_mode(), or nothing requiring grad) go to
conv3d.conv3d directly: the op's dispatch costs more host time than the
convolution's own call.

Importing this module without PyTorch installed works; using anything in it
then raises ImportError. With a PyTorch older than 2.4 (Debian's 1.13, say)
CausalConv3d is there and the rest raises ImportError naming the version.
"""

import sys as _sys

try:
    import torch as _torch
except ImportError:  # keep `import conv3d.torch` working without PyTorch
    _torch = None
    _MISSING = "PyTorch, which is not installed"
else:
    if not hasattr(getattr(_torch, "library", None), "custom_op"):
        _MISSING = "PyTorch 2.4 or newer (torch.library.custom_op); found %s" % (
            _torch.__version__)
        _torch = None
_torch_any = _sys.modules.get("torch")  # PyTorch of any version, or None

import weakref

from . import _functional, _hit, _plan

__all__ = ["conv3d", "Conv3d", "ConvTranspose3d", "convert", "ConvertReport",
           "CausalConv3d", "fallbacks", "reset_fallbacks"]

def _six(padding):
    """The op's padding: 6 ints (d_lo, d_hi, h_lo, h_hi, w_lo, w_hi) or
    [-1] for 'same' (-2 for 'valid')."""
    if isinstance(padding, str):
        return [{"same": -1, "valid": -2}.get(padding, -3)]
    if isinstance(padding, int):
        return [padding] * 6
    padding = list(padding)
    if len(padding) == 3:
        return [padding[0], padding[0], padding[1], padding[1], padding[2], padding[2]]
    return padding


def _from_six(padding):
    if len(padding) == 1 and padding[0] < 0:
        return {-1: "same", -2: "valid"}.get(padding[0], "invalid")
    return tuple(padding)


def _triple(value):
    return [value] * 3 if isinstance(value, int) else list(value)


def _prologue(x, norm_weight, norm_bias, norm_eps, activation):
    """The input prologue in PyTorch on an NCDHW tensor, computed in float32
    and rounded to x's dtype: RMS norm over the channels (times norm_weight,
    plus norm_bias), then the activation."""
    import torch
    from ._torch_dropin import apply_activation
    y = x.float()
    if norm_weight is not None:
        shape = (1, -1, 1, 1, 1)
        y = y * torch.rsqrt(y.pow(2).mean(dim=1, keepdim=True) + norm_eps)
        y = y * norm_weight.float().reshape(shape)
        if norm_bias is not None:
            y = y + norm_bias.float().reshape(shape)
    return apply_activation(y, activation).to(x.dtype)


_compiled_prologue = None
# Below this many elements the eager prologue's few launches cost less than
# a compiled call's guards: on the H100, a 1 x 60 x 104 x 384 chunk ran its
# block 0.67x of eager PyTorch with the compiled pass and 1.19x with the
# eager one; a 4 x 240 x 416 x 192 chunk 1.82x compiled, 1.43x eager.
_COMPILE_PROLOGUE_MIN_ELEMENTS = 1 << 23


def _separate_prologue(x, norm_weight, norm_bias, norm_eps, activation):
    """The unfused prologue as one pass over x: on CUDA, _prologue compiled
    by torch.compile (Inductor fuses its float32 steps into one kernel: one
    read of x, one write; on the H100 about 12x faster than running them
    eagerly on a 4 x 240 x 416 x 192 chunk) for large chunks, else _prologue
    eagerly. Set
    CONV3D_COMPILE_PROLOGUE=0 to always run it eagerly; a compilation that
    fails falls back to eager for the rest of the process, with a warning.
    Chunks under _COMPILE_PROLOGUE_MIN_ELEMENTS run eagerly."""
    global _compiled_prologue
    args = (x, norm_weight, norm_bias, norm_eps, activation)
    if (x.device.type != "cuda" or _compiled_prologue is False
            or x.numel() < _COMPILE_PROLOGUE_MIN_ELEMENTS):
        return _prologue(*args)
    import os
    import warnings
    import torch
    if _compiled_prologue is None:
        if os.environ.get("CONV3D_COMPILE_PROLOGUE", "1") == "0" or not hasattr(
                torch, "compile"):
            _compiled_prologue = False
            return _prologue(*args)
        _compiled_prologue = torch.compile(_prologue, fullgraph=True)
    try:
        return _compiled_prologue(*args)
    except Exception as error:  # noqa: BLE001 (any compiler failure)
        warnings.warn("conv3d: torch.compile of the input prologue failed (%s); "
                      "running it eagerly" % (error,), RuntimeWarning)
        _compiled_prologue = False
        return _prologue(*args)


def _output_size(size, k, stride, dilation, lo, hi):
    # PyTorch's formula, for the fake kernel (which may see symbolic sizes);
    # real runs take the output shape from the library's ConvGeometry.
    return (size + lo + hi - dilation * (k - 1) - 1) // stride + 1


if _torch is None:

    def __getattr__(name):
        if name in __all__:
            raise ImportError("conv3d.torch.%s needs %s (conv3d.conv3d works on any "
                              "DLPack array without it)" % (name, _MISSING))
        raise AttributeError(name)

else:
    from typing import List, Optional

    @_torch.library.custom_op("conv3d::conv3d", mutates_args=())
    def _conv3d_op(input: _torch.Tensor, weight: _torch.Tensor,
                   bias: Optional[_torch.Tensor], stride: List[int], padding: List[int],
                   dilation: List[int], activation: str,
                   residual: Optional[_torch.Tensor], target: str,
                   groups: int = 1) -> _torch.Tensor:
        return _functional.conv3d(input, weight, bias, stride, _from_six(padding), dilation,
                                  groups,
                                  activation=None if activation == "none" else activation,
                                  residual=residual, target=target)

    @_conv3d_op.register_fake
    def _conv3d_fake(input, weight, bias, stride, padding, dilation, activation, residual,
                     target, groups=1):
        if input.dim() != 5 or weight.dim() != 5:
            raise ValueError("conv3d: input and weight must have rank 5")
        window = weight.shape[2:]
        pads = _from_six(padding)
        if pads == "valid":
            pads = (0,) * 6
        elif pads == "same":
            pads = []
            for k, d in zip(window, dilation):
                pads += [d * (k - 1) // 2, d * (k - 1) - d * (k - 1) // 2]
        spatial = [_output_size(input.shape[2 + i], window[i], stride[i], dilation[i],
                                pads[2 * i], pads[2 * i + 1]) for i in range(3)]
        shape = (input.shape[0], weight.shape[0], *spatial)
        # channels_last_3d when the input or the weight is, as in
        # conv3d.conv3d (PyTorch's rule for cuDNN); a weight that is both
        # (one input channel) counts as NCDHW.
        channels_last = (input.is_contiguous(memory_format=_torch.channels_last_3d)
                         or (weight.is_contiguous(memory_format=_torch.channels_last_3d)
                             and not weight.is_contiguous()))
        return _torch.empty(shape, dtype=input.dtype, device=input.device,
                            memory_format=_torch.channels_last_3d if channels_last
                            else _torch.contiguous_format)

    def _explicit_padding(padding, window, dilation):
        """The op's padding (6 ints, or 'same'/'valid' coded) as 6 ints."""
        pads = _from_six(padding)
        if pads == "valid":
            return [0] * 6
        if pads == "same":
            pads = []
            for k, d in zip(window, dilation):
                pads += [d * (k - 1) // 2, d * (k - 1) - d * (k - 1) // 2]
        return list(pads)

    @_torch.library.custom_op("conv3d::conv3d_input", mutates_args=())
    def _conv3d_input_op(input_size: List[int], weight: _torch.Tensor,
                         grad_output: _torch.Tensor, stride: List[int], padding: List[int],
                         dilation: List[int], target: str) -> _torch.Tensor:
        from . import autograd
        return autograd.conv3d_input(input_size, weight, grad_output, stride, padding,
                                     dilation, target)

    @_conv3d_input_op.register_fake
    def _conv3d_input_fake(input_size, weight, grad_output, stride, padding, dilation,
                           target):
        return _torch.empty(input_size, dtype=grad_output.dtype, device=grad_output.device,
                            memory_format=_torch.channels_last_3d)

    @_torch.library.custom_op("conv3d::conv3d_weight", mutates_args=())
    def _conv3d_weight_op(input: _torch.Tensor, weight_size: List[int],
                          grad_output: _torch.Tensor, stride: List[int], padding: List[int],
                          dilation: List[int], target: str) -> _torch.Tensor:
        from . import autograd
        if input.is_cuda and not _torch_dropin._WGRAD_ON_GPU:
            # The library's wgrad is slower than cuDNN's on the GPU
            # (bench/RESULTS.md): PyTorch's (cuDNN's) weight gradient, counted.
            _torch_dropin._count("weight gradient on a GPU")
            # (A custom op runs below autograd: torch.nn.grad's
            # convolution_backward.)
            return autograd.pytorch_conv3d_weight(
                input, weight_size, grad_output, stride,
                _explicit_padding(padding, weight_size[2:], dilation), dilation)
        return autograd.conv3d_weight(input, weight_size, grad_output, stride, padding,
                                      dilation, target)

    @_conv3d_weight_op.register_fake
    def _conv3d_weight_fake(input, weight_size, grad_output, stride, padding, dilation,
                            target):
        return _torch.empty(weight_size, dtype=input.dtype, device=input.device,
                            memory_format=_torch.channels_last_3d)

    def _activation_derivative(z, activation):
        """d act / dz at the pre-activation z (float32)."""
        if activation == "relu":
            return (z > 0).to(z.dtype)
        if activation == "silu":
            s = _torch.sigmoid(z)
            return s * (1 + z * (1 - s))
        # gelu_tanh: 0.5 * z * (1 + tanh(k * (z + 0.044715 z^3))).
        k = 0.7978845608028654
        t = _torch.tanh(k * (z + 0.044715 * z * z * z))
        return 0.5 * (1 + t) + 0.5 * z * (1 - t * t) * k * (1 + 3 * 0.044715 * z * z)

    def _setup_context(ctx, inputs, output):
        (input, weight, bias, stride, padding, dilation, activation, residual, target,
         *rest) = inputs
        ctx.save_for_backward(input, weight, bias)
        ctx.arguments = (list(stride), _explicit_padding(padding, weight.shape[2:], dilation),
                         list(dilation), activation, target, rest[0] if rest else 1)
        ctx.has_bias = bias is not None

    def _grouped_gradients(ctx, input, weight, grad, stride, padding, dilation, groups):
        """(grad_input, grad_weight) of a grouped convolution: the gradient
        kernels are dense, so PyTorch's autograd differentiates F.conv3d of
        the explicitly padded input (asymmetric padding included)."""
        F_ = _torch.nn.functional
        with _torch.enable_grad():
            x = input.detach().requires_grad_(bool(ctx.needs_input_grad[0]))
            w = weight.detach().requires_grad_(bool(ctx.needs_input_grad[1]))
            d_lo, d_hi, h_lo, h_hi, w_lo, w_hi = padding
            y = F_.conv3d(F_.pad(x, (w_lo, w_hi, h_lo, h_hi, d_lo, d_hi)), w, None, stride,
                          0, dilation, groups)
            wanted = [t for t in (x, w) if t.requires_grad]
            grads = list(_torch.autograd.grad(y, wanted, grad)) if wanted else []
        grad_input = grads.pop(0) if x.requires_grad else None
        grad_weight = grads.pop(0) if w.requires_grad else None
        return grad_input, grad_weight

    def _dense_gradient(grad):
        """The output's gradient as the kernels read it. Autograd hands over
        views as they come: the gradient of a channel slice of a
        concatenation (a U-Net's skip connection) is a non-dense
        channels-last view, which conv3d's own ops refuse."""
        if grad.is_contiguous(memory_format=_torch.channels_last_3d) or grad.is_contiguous():
            return grad
        return grad.contiguous(memory_format=_torch.channels_last_3d)

    def _backward(ctx, grad):
        input, weight, bias = ctx.saved_tensors
        stride, padding, dilation, activation, target, groups = ctx.arguments
        grad = _dense_gradient(grad)
        # The residual is added after the activation: its gradient is the
        # output's, before the activation's derivative.
        grad_residual = grad if ctx.needs_input_grad[7] else None
        if activation != "none":
            # The pre-activation is recomputed (one forward without the
            # activation) rather than kept from the forward.
            z = _torch.ops.conv3d.conv3d(input, weight, bias, stride, padding, dilation,
                                         "none", None, target, groups)
            grad = (grad.float() * _activation_derivative(z.float(), activation)).to(
                grad.dtype)
        grad_input = grad_weight = grad_bias = None
        if groups != 1:
            grad_input, grad_weight = _grouped_gradients(ctx, input, weight, grad, stride,
                                                         padding, dilation, groups)
        else:
            if ctx.needs_input_grad[0]:
                grad_input = _torch.ops.conv3d.conv3d_input(list(input.shape), weight, grad,
                                                            stride, padding, dilation, target)
            if ctx.needs_input_grad[1]:
                grad_weight = _torch.ops.conv3d.conv3d_weight(input, list(weight.shape),
                                                              grad, stride, padding,
                                                              dilation, target)
        if ctx.has_bias and ctx.needs_input_grad[2]:
            grad_bias = grad.sum(dim=(0, 2, 3, 4)).to(bias.dtype)
        return (grad_input, grad_weight, grad_bias, None, None, None, None, grad_residual,
                None, None)

    _conv3d_op.register_autograd(_backward, setup_context=_setup_context)

    @_torch.library.custom_op("conv3d::conv_transpose3d", mutates_args=())
    def _conv_transpose3d_op(input: _torch.Tensor, weight: _torch.Tensor,
                             stride: List[int], padding: List[int],
                             output_padding: List[int], dilation: List[int],
                             target: str) -> _torch.Tensor:
        from . import autograd
        size = autograd._transposed_input_size(input, weight, stride, padding,
                                               output_padding, dilation)
        return autograd.conv3d_input(size, weight, input, stride, padding, dilation, target)

    @_conv_transpose3d_op.register_fake
    def _conv_transpose3d_fake(input, weight, stride, padding, output_padding, dilation,
                               target):
        from . import autograd
        size = autograd._transposed_input_size(input, weight, stride, padding,
                                               output_padding, dilation)
        return _torch.empty(size, dtype=input.dtype, device=input.device,
                            memory_format=_torch.channels_last_3d)

    def _transposed_setup_context(ctx, inputs, output):
        input, weight, stride, padding, output_padding, dilation, target = inputs
        ctx.save_for_backward(input, weight)
        ctx.arguments = (list(stride), list(padding), list(dilation), target)

    def _transposed_backward(ctx, grad):
        input, weight = ctx.saved_tensors
        stride, padding, dilation, target = ctx.arguments
        grad = _dense_gradient(grad)
        grad_input = grad_weight = None
        if ctx.needs_input_grad[0]:
            grad_input = _torch.ops.conv3d.conv3d(grad, weight, None, stride, padding,
                                                  dilation, "none", None, target)
        if ctx.needs_input_grad[1]:
            grad_weight = _torch.ops.conv3d.conv3d_weight(grad, list(weight.shape), input,
                                                          stride, padding, dilation, target)
        return grad_input, grad_weight, None, None, None, None, None

    _conv_transpose3d_op.register_autograd(_transposed_backward,
                                           setup_context=_transposed_setup_context)

    from . import _torch_dropin
    from ._capi import Conv3dError

    fallbacks = _torch_dropin.fallbacks
    reset_fallbacks = _torch_dropin.reset_fallbacks
    # What a hit or the general route raises for operands the drop-in may
    # still take (after a copy, or on PyTorch's convolution).
    _CALL_ERRORS = (TypeError, ValueError, Conv3dError)

    def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1, *,
               activation=None, residual=None, target="auto"):
        """torch.nn.functional.conv3d through the conv3d custom op (see
        conv3d.conv3d for the arguments; padding also as a 6-tuple
        (d_lo, d_hi, h_lo, h_hi, w_lo, w_hi), activation None, 'relu',
        'silu' or 'gelu_tanh' fused after the bias, residual added last).
        Eager calls with nothing for autograd to record (under no_grad() or
        inference_mode(), or no operand requiring grad) skip the op's
        dispatch and call conv3d.conv3d directly (_direct).

        A drop-in for F.conv3d: a non-dense view is copied into
        channels_last_3d memory and an unbatched (C, D, H, W) input gets a
        batch of one; what the kernels do not compute (dtypes other than
        bfloat16, float16 and float32, float32 on CUDA, an empty input) runs
        on PyTorch's own convolution, counted by conv3d.torch.fallbacks()
        (_torch_dropin). Grouped convolutions (groups=g) are conv3d's, except
        on a GPU with several channels per group (PyTorch's, counted)."""
        if isinstance(padding, str) and padding not in ("same", "valid"):
            raise ValueError("padding must be an int, a 3-tuple, a 6-tuple, 'valid' or "
                             "'same', got %r" % padding)
        direct = _direct(input, weight, bias, residual) and (
            groups == 1 or not _torch_dropin.fallback_reason(input, weight, bias, groups))
        if direct:
            # conv3d.conv3d's PyTorch hit function itself (the C extension's
            # or _hit._torch_conv3d; one call less); what it refuses is
            # looked at again by _dropin.
            try:
                hit = _hit.paths.get(_torch.Tensor) or _hit.path_for(_torch.Tensor)
                result = hit(input, weight, bias, stride, padding, dilation, groups,
                             activation, residual, None, target)
                if result is not _hit.MISS:
                    return result
                return _functional.conv3d(input, weight, bias, stride, padding, dilation,
                                          groups, activation=activation, residual=residual,
                                          target=target)
            except _CALL_ERRORS:
                if not _dropin_changes(input, weight, bias, residual, groups):
                    raise
        return _dropin(input, weight, bias, stride, padding, dilation, groups, activation,
                       residual, target, direct)

    def _graph_side_copies(weight, bias):
        """(weight, bias) as the kernels read them (a channels_last_3d
        weight, a float32 bias), converted in a traced graph rather than by
        the op at run time, which would cache the copies across calls
        (_plan._parameter_copy): a copy made while CUDA-graph trees record
        (torch.compile's mode="reduce-overhead") lives in their memory pool
        untracked by them, which they refuse ("Data Pointer: ...,
        history: ...")."""
        if bias is not None and bias.dtype != _torch.float32:
            bias = bias.float()
        if not weight.is_contiguous(memory_format=_torch.channels_last_3d):
            weight = weight.contiguous(memory_format=_torch.channels_last_3d)
        return weight, bias

    def _dropin_changes(input, weight, bias, residual, groups):
        """Whether _dropin computes the call otherwise than as given."""
        if _torch_dropin.fallback_reason(input, weight, bias, groups) or input.dim() == 4:
            return True
        copies = _torch_dropin.dense(input, weight, residual)
        return any(a is not b for a, b in zip(copies, (input, weight, residual)))

    def _dropin(input, weight, bias, stride, padding, dilation, groups, activation,
                residual, target, direct):
        """A call as F.conv3d takes it: PyTorch's convolution for what the
        kernels do not compute; otherwise dense operands, then conv3d.conv3d
        (eager, `direct`) or the custom op (traced, or for autograd)."""
        if not (isinstance(input, _torch.Tensor) and isinstance(weight, _torch.Tensor)):
            # The op names what it does not take.
            return _torch.ops.conv3d.conv3d(input, weight, bias, _triple(stride),
                                            _six(padding), _triple(dilation),
                                            activation or "none", residual, target, groups)
        reason = _torch_dropin.fallback_reason(input, weight, bias, groups)
        if reason:
            return _torch_dropin.pytorch_conv3d(reason, input, weight, bias, stride, padding,
                                                dilation, groups, activation, residual)
        if input.dim() == 4:  # unbatched, as F.conv3d takes it
            return _dropin(input.unsqueeze(0), weight, bias, stride, padding, dilation,
                           groups, activation,
                           None if residual is None else residual.unsqueeze(0), target,
                           direct).squeeze(0)
        input, weight, residual = _torch_dropin.dense(input, weight, residual)
        if _is_compiling():
            weight, bias = _graph_side_copies(weight, bias)
        if direct:
            return _functional.conv3d(input, weight, bias, stride, padding, dilation,
                                      groups, activation=activation, residual=residual,
                                      target=target)
        return _torch.ops.conv3d.conv3d(input, weight, bias, _triple(stride), _six(padding),
                                        _triple(dilation), activation or "none", residual,
                                        target, groups)

    _is_compiling = _torch.compiler.is_compiling
    _is_tracing = getattr(_torch._C, "_is_tracing", None) or _torch.jit.is_tracing
    # Tensors as eager code holds them: no FakeTensor, FunctionalTensor or
    # other subclass that a tracer or a dispatch mode works through.
    _PLAIN = (_torch.Tensor, _torch.nn.Parameter)

    def _direct(input, weight, bias, residual):
        """Whether a call may run conv3d.conv3d directly instead of through
        the custom op, whose dispatch costs several times the convolution's
        own host time: in eager mode (not traced by torch.compile,
        torch.export or torch.jit.trace, which must see the op), on plain
        tensors, with no autograd to record (grad disabled, as under
        no_grad() and inference_mode(), or nothing requiring grad: the op's
        autograd registration is what makes backward raise the
        inference-only error). The results are the same: the op runs
        conv3d.conv3d too."""
        if _is_compiling() or _is_tracing():
            return False
        if type(input) not in _PLAIN or type(weight) not in _PLAIN \
                or (bias is not None and type(bias) not in _PLAIN) \
                or (residual is not None and type(residual) not in _PLAIN):
            return False
        return not _torch.is_grad_enabled() or not (
            input.requires_grad or weight.requires_grad
            or (bias is not None and bias.requires_grad)
            or (residual is not None and residual.requires_grad))

    def _ineligible(module):
        """Why an nn.Conv3d cannot run on conv3d, or None."""
        if module.padding_mode != "zeros":
            return "padding_mode=%r (only zeros)" % module.padding_mode
        if module.weight.dtype not in (_torch.float32, _torch.float16, _torch.bfloat16):
            return "dtype %s (bfloat16, float16 or float32 only)" % module.weight.dtype
        if module.weight.device.type not in ("cpu", "cuda"):
            return "device %s" % module.weight.device
        if module.weight.device.type == "cuda" and module.weight.dtype == _torch.float32:
            return ("float32 on a CUDA device (the GPU kernels take bfloat16 or float16: "
                    "convert after .bfloat16() or .half())")
        return None

    # The methods of nn.Conv3d that conv3d's forward replaces: a subclass
    # overriding neither computes what nn.Conv3d computes (torchvision's
    # Conv3DSimple, Conv3DNoTemporal, ... add only static methods).
    _REPLACED_METHODS = ("forward", "_conv_forward")

    def _override(kind):
        """'Owner.method' for the first of _REPLACED_METHODS that `kind` (a
        subclass of nn.Conv3d) overrides, or None."""
        for method in _REPLACED_METHODS:
            if getattr(kind, method) is not getattr(_torch.nn.Conv3d, method):
                owner = next(k for k in kind.__mro__ if method in vars(k))
                return "%s.%s" % (owner.__qualname__, method)
        return None

    # (conv3d class, subclass of nn.Conv3d) -> the class a converted
    # instance of that subclass gets (_converted_class).
    _converted_classes = {}

    def _converted_class(base, kind):
        """The class of a converted `kind` module: `base` (conv3d.torch.Conv3d
        or a subclass) for nn.Conv3d itself; for a subclass of nn.Conv3d, a
        class deriving from both, made once, so that the module stays an
        instance of its class (isinstance, its other methods and
        attributes) and runs conv3d's forward."""
        if kind is _torch.nn.Conv3d or issubclass(base, kind):
            return base
        made = _converted_classes.get((base, kind))
        if made is None:
            made = type(kind.__name__, (base, kind), {
                "__module__": __name__, "__qualname__": kind.__qualname__,
                "__doc__": "%s computed by conv3d (%s)" % (kind.__qualname__,
                                                           base.__qualname__),
                "_conv3d_source": (base, kind)})
            _converted_classes[(base, kind)] = made
        return made

    def _new_converted(base, kind):
        """An empty instance of _converted_class(base, kind), for pickle and
        copy (the class is made at run time: pickle cannot name it)."""
        cls = _converted_class(base, kind)
        return cls.__new__(cls)

    class Conv3d(_torch.nn.Conv3d):
        """A drop-in torch.nn.Conv3d computed by conv3d: the same
        constructor and parameters (its state_dict is interchangeable with
        nn.Conv3d's), plus `activation` (fused after the bias) and `target`.
        The weight is kept in channels_last_3d memory (FQRSC), the layout the
        kernels read; feed channels_last_3d input to avoid a layout copy in
        and out of every call. forward(input, residual=None)."""

        def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                     dilation=1, groups=1, bias=True, padding_mode="zeros", device=None,
                     dtype=None, *, activation=None, target="auto"):
            if padding_mode != "zeros":
                raise ValueError("conv3d.torch.Conv3d: padding_mode=%r is not supported "
                                 "(zeros only)" % padding_mode)
            super().__init__(in_channels, out_channels, kernel_size, stride, padding,
                             dilation, groups, bias, padding_mode, device, dtype)
            self._adopt(activation, target)

        def _adopt(self, activation, target):
            if activation not in (None, "relu", "silu", "gelu_tanh"):
                raise ValueError("activation must be None, 'relu', 'silu' or 'gelu_tanh', "
                                 "got %r" % (activation,))
            self.activation = activation
            self.target = target
            with _torch.no_grad():
                self.weight.data = self.weight.data.contiguous(
                    memory_format=_torch.channels_last_3d)

        @classmethod
        def from_conv(cls, module, activation=None, target="auto"):
            """Turns an nn.Conv3d into a conv3d.torch.Conv3d in place (same
            object, parameters and hooks) and returns it. A subclass of
            nn.Conv3d that overrides neither forward nor _conv_forward is
            converted too, staying an instance of its class
            (_converted_class); one that overrides them is refused, naming
            the method."""
            kind = type(module)
            if not isinstance(module, _torch.nn.Conv3d) or isinstance(module, Conv3d):
                raise TypeError("from_conv takes an nn.Conv3d not yet converted, got %s"
                                % kind.__qualname__)
            override = _override(kind)
            if override:
                raise ValueError("this %s cannot run on conv3d: it overrides %s"
                                 % (kind.__qualname__, override))
            reason = _ineligible(module)
            if reason:
                raise ValueError("this nn.Conv3d cannot run on conv3d: %s" % reason)
            module.__class__ = _converted_class(cls, kind)
            module._adopt(activation, target)
            return module

        def __reduce_ex__(self, protocol):
            # A converted subclass's class is made at run time: rebuild it
            # from the classes it comes from (which pickle can name).
            source = getattr(type(self), "_conv3d_source", None)
            reduced = super().__reduce_ex__(protocol)
            if source is None:
                return reduced
            return (_new_converted, source) + tuple(reduced[2:])

        def forward(self, input, residual=None):
            weight, bias = self.weight, self.bias
            if _direct(input, weight, bias, residual) and (
                    self.groups == 1
                    or not _torch_dropin.fallback_reason(input, weight, bias, self.groups)):
                # As conv3d() does; its own argument checks (groups, padding
                # strings) are the miss's too. What a hit refuses, conv3d()
                # looks at again (the drop-in's copies and fallbacks).
                try:
                    hit = _hit.paths.get(_torch.Tensor) or _hit.path_for(_torch.Tensor)
                    result = hit(input, weight, bias, self.stride, self.padding,
                                 self.dilation, self.groups, self.activation, residual,
                                 None, self.target)
                    if result is not _hit.MISS:
                        return result
                except _CALL_ERRORS:
                    if not _dropin_changes(input, weight, bias, residual, self.groups):
                        raise
                    return _dropin(input, weight, bias, self.stride, self.padding,
                                   self.dilation, self.groups, self.activation, residual,
                                   self.target, True)
            return conv3d(input, weight, bias, self.stride, self.padding, self.dilation,
                          self.groups, activation=self.activation, residual=residual,
                          target=self.target)

        def extra_repr(self):
            text = super().extra_repr()
            if self.activation:
                text += ", activation=%s" % self.activation
            return text

    class ConvTranspose3d(_torch.nn.ConvTranspose3d):
        """A drop-in torch.nn.ConvTranspose3d (groups 1, zeros padding)
        computed by conv3d's data-gradient kernel (the custom op
        conv3d::conv_transpose3d, differentiable and traceable); the same
        constructor, parameters and state_dict, plus `target`."""

        def __init__(self, *args, target="auto", **kwargs):
            super().__init__(*args, **kwargs)
            reason = _transposed_ineligible(self)
            if reason:
                raise ValueError("conv3d.torch.ConvTranspose3d: %s" % reason)
            self.target = target

        @classmethod
        def from_conv(cls, module, target="auto"):
            """Turns a plain nn.ConvTranspose3d into a conv3d.torch.
            ConvTranspose3d in place (same object and parameters)."""
            if type(module) is not _torch.nn.ConvTranspose3d:
                raise TypeError("from_conv takes a plain nn.ConvTranspose3d, got %s"
                                % type(module).__qualname__)
            reason = _transposed_ineligible(module)
            if reason:
                raise ValueError("this nn.ConvTranspose3d cannot run on conv3d: %s" % reason)
            module.__class__ = cls
            module.target = target
            return module

        def forward(self, input, output_size=None):
            output_padding = list(self.output_padding)
            if output_size is not None:
                output_padding = list(self._output_padding(
                    input, output_size, self.stride, self.padding, self.kernel_size, 3,
                    self.dilation))
            out = _torch.ops.conv3d.conv_transpose3d(
                input, self.weight, list(self.stride), _six(list(self.padding)),
                output_padding, list(self.dilation), self.target)
            if self.bias is not None:
                out = out + self.bias.to(out.dtype).reshape(1, -1, 1, 1, 1)
            return out

    def _transposed_ineligible(module):
        """Why an nn.ConvTranspose3d cannot run on conv3d, or None."""
        if module.groups != 1:
            return "grouped (groups=%d)" % module.groups
        if module.padding_mode != "zeros":
            return "padding_mode=%r (only zeros)" % module.padding_mode
        if any(o >= s for o, s in zip(module.output_padding, module.stride)):
            return "output_padding %s not below the stride %s" % (
                tuple(module.output_padding), tuple(module.stride))
        return _ineligible(module)

    class ConvertReport:
        """What convert() did: `converted` (qualified names) and `skipped`
        ((name, reason) pairs)."""

        def __init__(self):
            self.converted = []
            self.skipped = []

        def __str__(self):
            lines = ["conv3d.torch.convert: %d converted, %d left"
                     % (len(self.converted), len(self.skipped))]
            lines += ["  left %s: %s" % (name, reason) for name, reason in self.skipped]
            return "\n".join(lines)

        __repr__ = __str__

    def convert(model, target="auto"):
        """Replaces every eligible torch.nn.Conv3d in `model` (in place; a
        bare nn.Conv3d is converted and returned in the report's `module`)
        by conv3d.torch.Conv3d (grouped ones included) and every plain
        nn.ConvTranspose3d by conv3d.torch.ConvTranspose3d, and reports the
        ones it left: grouped transposed, non-zero padding modes, unsupported dtypes or devices,
        subclasses overriding forward or _conv_forward (named). Subclasses
        that override neither are converted and stay instances of their
        class (Conv3d.from_conv). Modules already on conv3d (Conv3d,
        CausalConv3d) are left as they are, unreported. Returns a
        ConvertReport; the model's state_dict is unchanged."""
        report = ConvertReport()
        for name, module in model.named_modules():
            label = name or type(model).__name__
            if isinstance(module, (Conv3d, CausalConv3d, ConvTranspose3d)):
                continue
            if isinstance(module, _torch.nn.ConvTranspose3d):
                reason = ("subclass %s of nn.ConvTranspose3d" % type(module).__qualname__
                          if type(module) is not _torch.nn.ConvTranspose3d
                          else _transposed_ineligible(module))
                if reason:
                    report.skipped.append((label, reason))
                else:
                    ConvTranspose3d.from_conv(module, target=target)
                    report.converted.append(label)
                continue
            if not isinstance(module, _torch.nn.Conv3d):
                continue
            override = _override(type(module))
            reason = ("subclass %s of nn.Conv3d overrides %s"
                      % (type(module).__qualname__, override)) if override \
                else _ineligible(module)
            if reason:
                report.skipped.append((label, reason))
            else:
                Conv3d.from_conv(module, target=target)
                report.converted.append(label)
        report.module = model
        return report


# CausalConv3d needs only PyTorch itself (no custom op): it is there with
# any PyTorch from 1.13 (Debian's) up, the rest of this module with 2.4 and up.
if _torch_any is not None:
    _T = _torch_any
    _TORCH_DTYPE_NAMES = {_T.bfloat16: "bf16", _T.float16: "f16",
                          _T.float32: "f32"}

    def _differentiable_conv(x, weight, bias, stride, padding, dilation, activation,
                             residual, target):
        """act(conv3d(x, weight) + bias) + residual (padding: 6 ints) through
        conv3d's autograd: conv3d.torch.conv3d (PyTorch 2.4+: the custom
        op, activation and residual fused, torch.compile traces it), else
        conv3d.autograd.conv3d with the activation (in float32) and the
        residual in PyTorch."""
        if _torch is not None:
            return conv3d(x, weight, bias, stride, padding, dilation, activation=activation,
                          residual=residual, target=target)
        from . import autograd
        from ._torch_dropin import apply_activation
        y = autograd.conv3d(x, weight, bias, list(stride), list(padding), list(dilation),
                            target)
        if activation is not None:
            y = apply_activation(y.float(), activation).to(y.dtype)
        return y if residual is None else y + residual.to(y.dtype)

    class CausalConv3d(_T.nn.Conv3d):
        """A convolution that is causal in time, as video VAE decoders
        (WAN 2.x and others) build it, computed by conv3d.

        The constructor is nn.Conv3d's; `padding` = (p_t, p_h, p_w) pads
        height and width by p_h and p_w on both sides and time by 2*p_t
        frames before the input and none after. forward(x, cache=None) takes
        NCDHW `x` and, optionally, `cache`: the frames that precede x (the
        last frames of the previous chunk's input). It gives what
        concatenating cache and x in time, then padding (the time padding
        before the input shortened by the cache's length; a cache longer
        than the padding contributes only its last 2*p_t frames), then
        convolving gives; a cache is ignored when 2*p_t is 0.

        Optionally the input prologue runs fused: `norm_weight` (C values:
        an RMS norm of each voxel over its channels, x * rsqrt(mean(x^2) +
        norm_eps) * norm_weight (+ norm_bias)) and `input_activation`
        ("relu", "silu", "gelu_tanh") apply to x as it is loaded, not to the
        cache (cached frames are taken as they are: pass the previous
        chunk's transformed frames) nor to the padding.

        The cache is read in place as the convolution's history operand (no
        concatenation, no padded copy). `fuse_prologue` chooses where the
        prologue runs: None (the default), in the compiled convolution's own
        prologue prepass (one read and one write of x, each element
        transformed once; then the sm90 kernel on the H100), all in one
        library call; True, in the convolution's loads (the CPU loops or the
        sm80 kernel, also for target sm90; each element transformed once per
        filter tap, which measured 5-10x slower on the H100); False, as one
        PyTorch pass over x before the convolution (on CUDA one kernel made
        by torch.compile, unless CONV3D_COMPILE_PROLOGUE=0 or it fails to
        compile: then eager PyTorch).

        With return_cache=True, forward returns (y, cache) where cache holds
        the frames the next chunk's call takes: the last 2*p_t frames of
        concat(cache, x) after the prologue (x's through the prologue in
        PyTorch, a few frames; the given cache's as they are).

        Training: where autograd records (grad enabled and x, the cache,
        the weight, the bias, norm_weight, norm_bias or the residual
        requiring grad), forward computes the same as its differentiable
        decomposition (_differentiable): the prologue in PyTorch (float32,
        rounded to x's dtype), concat(cache, x) in time, the convolution
        through conv3d's autograd (_differentiable_conv: with PyTorch 2.4+
        conv3d.torch.conv3d, whose backward runs the library's data
        gradient and, on a GPU, PyTorch's weight gradient; with an older
        PyTorch conv3d.autograd.conv3d, both gradients on the library's
        kernels, the output activation and the residual in PyTorch), and
        the returned cache a slice of the concatenation, so gradients reach
        every operand, the cache included (through the next chunk's use of
        a returned cache too). Its results equal inference's up to the
        rounding of the unfused steps. Without autograd (torch.no_grad(),
        torch.inference_mode(), nothing requiring grad) forward is the
        fused inference path above, unchanged.
        """

        def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                     dilation=1, bias=True, device=None, dtype=None, *,
                     activation=None, target="auto", fuse_prologue=None):
            super().__init__(in_channels, out_channels, kernel_size, stride, 0,
                             dilation, 1, bias, "zeros", device, dtype)
            if isinstance(padding, str) or len(_triple(padding)) != 3:
                raise ValueError("CausalConv3d: padding must be an int or (p_t, p_h, p_w), "
                                 "got %r" % (padding,))
            p_t, p_h, p_w = (int(p) for p in _triple(padding))
            self.causal_padding = (2 * p_t, p_h, p_w)
            if activation not in (None, "relu", "silu", "gelu_tanh"):
                raise ValueError("activation must be None, 'relu', 'silu' or 'gelu_tanh', "
                                 "got %r" % (activation,))
            self.activation = activation
            self.target = target
            self.fuse_prologue = fuse_prologue
            self._plans = {}
            self._weights = {}

        def _check_operands(self, x, cache, norm_weight, norm_bias, residual):
            """Every operand against the layer and x, before any pointer is
            handed to the library (which reads them by the spec's shapes):
            ValueError or TypeError naming the operand."""
            if x.dim() != 5:
                raise ValueError("x must be NCDHW, got shape %s" % (tuple(x.shape),))
            n, c, _, h, w = x.shape
            if c != self.in_channels:
                raise ValueError("x has %d channels (shape %s); this layer takes "
                                 "in_channels=%d" % (c, tuple(x.shape), self.in_channels))
            if x.device != self.weight.device:
                raise ValueError("x is on %s, the layer's weight on %s"
                                 % (x.device, self.weight.device))
            if cache is not None:
                if not isinstance(cache, _T.Tensor) or cache.dim() != 5 \
                        or (cache.shape[0], cache.shape[1], cache.shape[3],
                            cache.shape[4]) != (n, c, h, w):
                    raise ValueError(
                        "cache has shape %s; this layer (in_channels=%d) with x of shape "
                        "%s takes a cache of shape (%d, %d, T, %d, %d): N, C, H and W "
                        "of x" % (tuple(getattr(cache, "shape", ())), self.in_channels,
                                  tuple(x.shape), n, c, h, w))
                if cache.dtype != x.dtype:
                    raise TypeError("cache has dtype %s, x %s: they must match (the "
                                    "cache is the previous chunk's frames)"
                                    % (cache.dtype, x.dtype))
                if cache.device != x.device:
                    raise ValueError("cache is on %s, x on %s" % (cache.device, x.device))
            for name, vector in (("norm_weight", norm_weight), ("norm_bias", norm_bias)):
                if vector is None:
                    continue
                if tuple(vector.shape) != (c,):
                    raise ValueError("%s has shape %s; the norm over %d channels takes "
                                     "shape (%d,)" % (name, tuple(vector.shape), c, c))
                if vector.device != x.device:
                    raise ValueError("%s is on %s, x on %s" % (name, vector.device, x.device))
            if residual is not None and residual.device != x.device:
                raise ValueError("residual is on %s, x on %s" % (residual.device, x.device))

        def _history(self, cache):
            front = self.causal_padding[0]
            if cache is None or front == 0 or cache.shape[2] == 0:
                return None, front
            if cache.shape[2] > front:
                cache = cache[:, :, cache.shape[2] - front:]
            return cache, front - cache.shape[2]

        def forward(self, x, cache=None, *, norm_weight=None, norm_bias=None,
                    norm_eps=1e-6, input_activation=None, residual=None,
                    return_cache=False):
            self._check_operands(x, cache, norm_weight, norm_bias, residual)
            if norm_bias is not None and norm_weight is None:
                raise ValueError("norm_bias needs norm_weight")
            if input_activation not in (None, "relu", "silu", "gelu_tanh"):
                raise ValueError("input_activation must be None, 'relu', 'silu' or "
                                 "'gelu_tanh', got %r" % (input_activation,))
            history, front = self._history(cache)
            operands = (x, cache, self.weight, self.bias, norm_weight, norm_bias, residual)
            if _T.is_grad_enabled() and any(t is not None and t.requires_grad
                                            for t in operands):
                return self._differentiable(x, history, front, norm_weight, norm_bias,
                                            norm_eps, input_activation, residual,
                                            return_cache)
            has_prologue = norm_weight is not None or input_activation is not None
            new_cache = None
            if return_cache:
                new_cache = self._next_cache(x, history, norm_weight, norm_bias, norm_eps,
                                             input_activation)
            placement = {None: "prepass", True: "fused"}.get(self.fuse_prologue)
            if placement is None and has_prologue:
                # The prologue in PyTorch: one transformed copy of x, then the
                # convolution with the cache read in place.
                x = _separate_prologue(x, norm_weight, norm_bias, norm_eps,
                                       input_activation)
                norm_weight = norm_bias = input_activation = None
            y = self._forward_fused(x, history, front, norm_weight, norm_bias, norm_eps,
                                    input_activation, residual, placement or "prepass")
            return (y, new_cache) if return_cache else y

        def _differentiable(self, x, history, front, norm_weight, norm_bias, norm_eps,
                            input_activation, residual, return_cache):
            """forward as autograd records it (see the class's docstring):
            y, or (y, the last 2*p_t frames of concat(history, prologue(x))
            in channels_last_3d, None when p_t is 0)."""
            if norm_weight is not None or input_activation is not None:
                x = _prologue(x, norm_weight, norm_bias, norm_eps, input_activation)
            full = x if history is None else _T.cat([history.to(x.dtype), x], dim=2)
            _, p_h, p_w = self.causal_padding
            y = _differentiable_conv(full, self.weight, self.bias, self.stride,
                                     (front, 0, p_h, p_h, p_w, p_w), self.dilation,
                                     self.activation, residual, self.target)
            if not return_cache:
                return y
            keep = self.causal_padding[0]
            if keep == 0:
                return y, None
            tail = full[:, :, max(0, full.shape[2] - keep):]
            return y, tail.contiguous(memory_format=_T.channels_last_3d)

        def _next_cache(self, x, history, norm_weight, norm_bias, norm_eps, activation):
            """The last 2*p_t frames of concat(history, prologue(x)), in
            channels_last_3d (what the next call reads without a copy). x's
            frames go through the prologue as one library call: a 1x1x1
            convolution with the identity filter, whose compiled prologue
            prepass transforms them exactly as the convolution's does (the
            f32 sum of one product and its rounding are exact), as
            CausalConv3dStream does in C++."""
            keep = self.causal_padding[0]
            if keep == 0:
                return None
            tail = x[:, :, max(0, x.shape[2] - keep):]
            old = None
            if tail.shape[2] < keep and history is not None:
                old = history[:, :, max(0, history.shape[2] - (keep - tail.shape[2])):]
            if norm_weight is not None or activation is not None:
                # The frames kept from the old cache ride along as the
                # identity convolution's history, which it copies as they
                # are: the new cache comes out whole, without a cat.
                return self._transform(tail, old, norm_weight, norm_bias, norm_eps,
                                       activation)
            if old is not None:
                tail = _T.cat([old.to(tail.dtype), tail], dim=2)
            return tail.contiguous(memory_format=_T.channels_last_3d)

        def _transform(self, x, history, norm_weight, norm_bias, norm_eps, activation):
            c = x.shape[1]
            ident = self._weights.get(("identity", c, x.dtype, x.device))
            if ident is None:
                # (eye in f32: PyTorch 1.13 has no bf16 eye on the CPU)
                ident = _T.eye(c, device=x.device).to(x.dtype).reshape(c, c, 1, 1, 1)
                self._weights[("identity", c, x.dtype, x.device)] = ident
            return self._run(x, ident, None, history, 0, (0, 0), (1, 1, 1), (1, 1, 1),
                             norm_weight, norm_bias, norm_eps, activation, None, "none",
                             "prepass")

        def _forward_fused(self, x, history, front, norm_weight, norm_bias, norm_eps,
                           input_activation, residual, placement):
            _, p_h, p_w = self.causal_padding
            return self._run(x, self.weight, self.bias, history, front, (p_h, p_w),
                             self.stride, self.dilation, norm_weight, norm_bias, norm_eps,
                             input_activation, residual, self.activation or "none",
                             placement)

        def _converted(self, t):
            """`t` (a parameter) as the library reads it: NDHWC for a 5-D
            weight, f32 for a vector, remembered until it is replaced or
            changed in place (its data pointer or version moves)."""
            state = (t.data_ptr(), t._version, t.dtype, t.device, tuple(t.shape))
            hit = self._weights.get(id(t))
            if hit is not None and hit[0]() is t and hit[1] == state:
                return hit[2]
            if t.dim() == 5:
                v = t.detach().permute(0, 2, 3, 4, 1).contiguous()
            else:
                v = t.detach().float().contiguous()
            self._weights[id(t)] = (weakref.ref(t), state, v)
            return v

        def _run(self, x, weight, bias, history, front, spatial, stride, dilation,
                 norm_weight, norm_bias, norm_eps, input_activation, residual, activation,
                 placement):
            device = ("cpu", -1) if x.device.type == "cpu" else (
                x.device.type, x.device.index if x.device.index is not None else 0)
            target = _plan._resolve_target(self.target, device)
            dtype = _TORCH_DTYPE_NAMES.get(x.dtype)
            if dtype is None or weight.dtype != x.dtype:
                raise TypeError("x and the weight must have the same dtype, bfloat16, "
                                "float16 or float32; got %s and %s"
                                % (x.dtype, weight.dtype))
            p_h, p_w = spatial
            n, c, d, h, w = x.shape
            f = weight.shape[0]
            q, r, s = weight.shape[2:]
            depth = 0 if history is None else history.shape[2]
            key = (tuple(x.shape), tuple(weight.shape), depth, front, p_h, p_w,
                   tuple(stride), tuple(dilation), dtype, norm_weight is not None,
                   norm_bias is not None, float(norm_eps), input_activation,
                   bias is not None, residual is not None, activation, target, placement)
            plan = self._plans.get(key)
            if plan is None:
                from . import Engine, Spec, _stream
                spec = Spec.from_shapes(
                    (n, d, h, w, c), (q, r, s, c, f), strides=stride,
                    dilations=dilation, padding=(front, 0, p_h, p_h, p_w, p_w),
                    filter_layout="fqrsc", dtype=dtype, bias=bias is not None,
                    residual=residual is not None, activation=activation)
                ext = _stream.InputExt(depth, int(norm_weight is not None),
                                       int(norm_bias is not None), float(norm_eps),
                                       {None: 0, "relu": 1, "silu": 2,
                                        "gelu_tanh": 3}[input_activation])
                engine = getattr(CausalConv3d, "_engine", None)
                if engine is None:
                    engine = CausalConv3d._engine = Engine()
                plan = self._plans[key] = _stream.compile_ext(
                    engine, spec, ext, target,
                    placement if norm_weight is not None or input_activation else None)
            # NDHWC views: no copy for channels_last_3d tensors.
            cl = lambda t: t.permute(0, 2, 3, 4, 1).contiguous()  # noqa: E731
            xi, wi = cl(x), self._converted(weight)
            hi = cl(history.to(x.dtype)) if history is not None else None
            conv = lambda t: self._converted(t) if t is not None else None  # noqa: E731
            gamma, beta, bias = conv(norm_weight), conv(norm_bias), conv(bias)
            if residual is not None:
                on, od, oh, ow, of = plan.output_shape
                if tuple(residual.shape) != (on, of, od, oh, ow):
                    raise ValueError("residual has shape %s; the output's is %s"
                                     % (tuple(residual.shape), (on, of, od, oh, ow)))
            res = cl(residual.to(x.dtype)) if residual is not None else None
            out = _T.empty(plan.output_shape, dtype=x.dtype, device=x.device)
            ptr = lambda t: t.data_ptr() if t is not None else None  # noqa: E731
            # GPU work goes on the caller's current stream (0: the legacy one).
            stream = None
            if x.device.type == "cuda":
                stream = _T.cuda.current_stream(x.device).cuda_stream or 1
            plan.run(ptr(xi), ptr(wi), ptr(out), history=ptr(hi), norm_gamma=ptr(gamma),
                     norm_beta=ptr(beta), bias=ptr(bias), residual=ptr(res), stream=stream)
            return out.permute(0, 4, 1, 2, 3)

        def extra_repr(self):
            text = super().extra_repr()
            text += ", causal_padding=%s" % (self.causal_padding,)
            if self.activation:
                text += ", activation=%s" % self.activation
            return text
