"""The general route of conv3d.conv3d: every check of a call, and its plan.

A call (a miss of the hit path, _hit.py, or any call the hit paths do not
take) describes each operand as an ArrayView, checks everything and finds
its plan in a table keyed by everything that decides the compiled kernel
and the layout steps (library, dtypes, shapes, strides, device,
arguments). A plan holds the compiled convolution (compiled once per spec
by the engine, which also keeps it in its memory and disk caches) and which
layout steps the operands need; _hit.run_views runs it on any operands.
"""

import threading
import weakref

from . import _arrays
from . import Conv3dError, Engine, Spec, cuda_device

_ACTIVATIONS = (None, "none", "relu", "silu", "gelu_tanh")
_TARGETS = ("auto", "cpu", "sm80", "sm90", "sm100")
# Buffers of GPU kernels must be 16-byte aligned (README: GPU targets).
_GPU_ALIGNMENT = 16

_engine = None
_engine_lock = threading.Lock()
_plans = {}
_device = None


def _default_engine():
    global _engine
    with _engine_lock:
        if _engine is None:
            _engine = Engine()
        return _engine


# Converted copies of PyTorch weights and biases (the layout step, the
# float32 bias), reused while the source tensor lives, keeps its storage and
# is not modified in place (its version counter): a model's parameters are
# converted once instead of on every call. Entries go with their tensors.
_converted = {}


def _parameter_copy(library, array, convert, what):
    if library.name != "torch":
        return convert(array)
    try:
        state = (array._version, array.data_ptr())
    except RuntimeError:  # inference-mode tensors have no version counter
        return convert(array)
    key = (id(array), what)
    entry = _converted.get(key)
    if entry is not None and entry[0]() is array and entry[1] == state:
        return entry[2]
    copy = convert(array)
    _converted[key] = (weakref.ref(array, lambda _, key=key: _converted.pop(key, None)),
                       state, copy)
    return copy


# Argument normalization ------------------------------------------------------


def _int(value, what):
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise TypeError("%s must be an int or a tuple of ints, got %r" % (what, value))
    return value.__index__()


def _triple(value, what, minimum):
    if isinstance(value, (tuple, list)):
        if len(value) != 3:
            raise ValueError("%s must be an int or a 3-tuple (depth, height, width), got "
                             "%d values" % (what, len(value)))
        values = tuple(_int(v, what) for v in value)
    else:
        values = (_int(value, what),) * 3
    if any(v < minimum for v in values):
        raise ValueError("%s must be >= %d, got %s" % (what, minimum, values))
    return values


def _padding(value, window, stride, dilation):
    """(d_lo, d_hi, h_lo, h_hi, w_lo, w_hi) from an int, a 3-tuple, a 6-tuple
    or "valid"/"same"."""
    if isinstance(value, str):
        if value == "valid":
            return (0,) * 6
        if value == "same":
            if stride != (1, 1, 1):
                raise ValueError("padding='same' needs stride 1 (as in PyTorch), got "
                                 "stride=%s" % (stride,))
            pads = []
            for k, d in zip(window, dilation):
                total = d * (k - 1)
                pads += [total // 2, total - total // 2]
            return tuple(pads)
        raise ValueError("padding must be an int, a 3-tuple, a 6-tuple, 'valid' or "
                         "'same', got %r" % value)
    if isinstance(value, (tuple, list)):
        if len(value) == 3:
            d, h, w = (_int(v, "padding") for v in value)
            values = (d, d, h, h, w, w)
        elif len(value) == 6:
            values = tuple(_int(v, "padding") for v in value)
        else:
            raise ValueError("padding must be an int, a 3-tuple (d, h, w) or a 6-tuple "
                             "(d_lo, d_hi, h_lo, h_hi, w_lo, w_hi), got %d values"
                             % len(value))
    else:
        values = (_int(value, "padding"),) * 6
    if any(v < 0 for v in values):
        raise ValueError("padding must be >= 0, got %s" % (values,))
    return values


def _dtype_text(dtype):
    return {"bf16": "bfloat16", "f16": "float16", "f32": "float32"}.get(dtype, dtype)


def _argument_key(value):
    """`value` as a plan key that tells apart what the checks tell apart:
    True, 1.0 and 1 are equal in a dict but only 1 is a valid int argument."""
    kind = type(value)
    if kind is int or kind is str or value is None:
        return value
    if kind is tuple or kind is list:
        return (kind, tuple(map(type, value)), tuple(value))
    return (kind, value)


# Memory layouts --------------------------------------------------------------


# Dimension orders, outermost to innermost in memory (_arrays.is_dense).
_CHANNELS_LAST = (0, 2, 3, 4, 1)   # (N, C, D, H, W) stored NDHWC; (F, C, Q, R, S) as FQRSC
_CONTIGUOUS = (0, 1, 2, 3, 4)      # NCDHW; FCQRS
_QRSCF = (2, 3, 4, 1, 0)           # (F, C, Q, R, S) stored QRSCF


def _check_strides(v, what):
    if any(s < 0 for s in v.strides):
        raise ValueError("%s has negative strides %s: conv3d takes dense arrays "
                         "(make a copy)" % (what, v.strides))


def _layout_error(v, what, wanted):
    return ValueError(
        "%s of shape %s has strides %s (elements): not %s. Pass a dense array "
        "(for PyTorch: .contiguous(memory_format=torch.channels_last_3d))"
        % (what, v.shape, v.strides, wanted))


def _rank5_layout(v, what):
    _check_strides(v, what)
    if _arrays.is_dense(v.shape, v.strides, _CHANNELS_LAST):
        return "channels_last"
    if _arrays.is_dense(v.shape, v.strides, _CONTIGUOUS):
        return "contiguous"
    raise _layout_error(v, what, "channels_last_3d (NDHWC in memory) or contiguous "
                        "(NCDHW)")


# Plans -----------------------------------------------------------------------


class _Plan:
    __slots__ = ("conv", "handle", "output_shape", "input_step", "weight_step",
                 "bias_step", "residual_step", "steps", "output_back", "gpu", "device",
                 "alignment", "target")


def _view_or_none(a, what):
    return None if a is None else _arrays.view(a, what)


def _describe(v):
    return None if v is None else (v.library, v.dtype, v.shape, v.strides, v.device)


def _describe_out(v):
    """_describe, and whether a NumPy out= is writeable (checked too)."""
    if v is None:
        return None
    return _describe(v) + (v.library != "numpy" or v.array.flags.writeable,)


def _resolve_target(target, device):
    if target not in _TARGETS:
        raise ValueError("target must be one of %s, got %r" % (", ".join(_TARGETS), target))
    if device[0] == "cpu":
        if target not in ("auto", "cpu"):
            raise ValueError("target=%r runs on a CUDA device, but the arrays are in host "
                             "memory (use target='cpu' or 'auto')" % target)
        return "cpu"
    if target == "cpu":
        raise ValueError("target='cpu' runs on host memory, but the arrays are on CUDA "
                         "device %d" % device[1])
    global _device
    if _device is None:
        _device = cuda_device()
    if device[1] != _device.ordinal:
        raise Conv3dError(
            "the arrays are on CUDA device %d, but the conv3d runtime uses device %d "
            "(set CONV3D_CUDA_DEVICE=%d before the first GPU call)"
            % (device[1], _device.ordinal, device[1]))
    cc = (_device.cc_major, _device.cc_minor)
    if target == "auto":
        return "sm90" if cc == (9, 0) else "sm80"
    if target == "sm90" and cc != (9, 0):
        raise Conv3dError("target='sm90' runs on compute capability 9.0 (H100, H200); "
                          "device %d is %d.%d (use target='sm80' or 'auto')"
                          % (device[1], cc[0], cc[1]))
    return target


def _make_plan(x, w, b, res, out, stride, padding, dilation, groups, activation,
               target):
    if type(groups) is not int or groups < 1:
        raise ValueError("groups must be a positive int, got %r" % (groups,))
    if activation not in _ACTIVATIONS:
        raise ValueError("activation must be None, 'relu', 'silu' or 'gelu_tanh', got %r"
                         % (activation,))
    for v, what in ((x, "input"), (w, "weight")):
        if len(v.shape) != 5:
            raise ValueError("%s must have rank 5 (%s), got shape %s"
                             % (what, "N, C, D, H, W" if what == "input" else "F, C, Q, R, S",
                                v.shape))
    if x.dtype not in _arrays.SUPPORTED_DTYPES:
        raise TypeError("input has dtype %s: conv3d takes bfloat16, float16 or float32"
                        % _dtype_text(x.dtype))
    if w.dtype != x.dtype:
        raise TypeError("weight has dtype %s but input has %s: they must match"
                        % (_dtype_text(w.dtype), _dtype_text(x.dtype)))
    n, c, d, h, wd = x.shape
    f, wc, q, r, s = w.shape
    if groups == 1 and wc != c:
        raise ValueError("weight has C = %d input channels (shape %s) but input has C = %d "
                         "(shape %s)" % (wc, w.shape, c, x.shape))
    if groups != 1 and (c % groups or f % groups):
        raise ValueError("groups=%d must divide the input's C = %d and the weight's F = %d"
                         % (groups, c, f))
    if groups != 1 and wc * groups != c:
        raise ValueError("weight has C/groups = %d channels per group (shape %s) but input "
                         "has C = %d in %d groups (shape %s)"
                         % (wc, w.shape, c, groups, x.shape))
    stride = _triple(stride, "stride", 1)
    dilation = _triple(dilation, "dilation", 1)
    pads = _padding(padding, (q, r, s), stride, dilation)

    operands = [(x, "input"), (w, "weight"), (b, "bias"), (res, "residual"), (out, "out")]
    for v, what in operands[1:]:
        if v is not None and v.device != x.device:
            raise ValueError("%s is on %s but input is on %s: all operands must be on one "
                             "device" % (what, _device_name(v.device), _device_name(x.device)))
    if x.device[0] not in ("cpu", "cuda"):
        raise ValueError("input is on device %s: conv3d runs on the CPU and CUDA devices"
                         % _device_name(x.device))
    resolved = _resolve_target(target, x.device)
    if resolved != "cpu" and x.dtype == "f32":
        raise TypeError("input has dtype float32: the GPU targets compute bfloat16 and "
                        "float16 (on the tensor cores); float32 runs on the CPU target")

    plan = _Plan()
    plan.target = resolved
    plan.device = x.device
    plan.gpu = resolved != "cpu"
    # GPU kernels use 16-byte accesses; host loops need element alignment.
    plan.alignment = _GPU_ALIGNMENT if plan.gpu else x.itemsize

    x_layout = _rank5_layout(x, "input")
    plan.input_step = x_layout == "contiguous"
    _check_strides(w, "weight")
    if _arrays.is_dense(w.shape, w.strides, _CHANNELS_LAST):
        filter_layout, plan.weight_step = "fqrsc", False
    elif _arrays.is_dense(w.shape, w.strides, _QRSCF):
        filter_layout, plan.weight_step = "qrscf", False
    elif _arrays.is_dense(w.shape, w.strides, _CONTIGUOUS):
        filter_layout, plan.weight_step = "fqrsc", True
    else:
        raise _layout_error(w, "weight", "channels_last_3d (FQRSC in memory), QRSCF or "
                            "contiguous (FCQRS)")

    plan.bias_step = False
    if b is not None:
        if b.shape != (f,):
            raise ValueError("bias must have shape (%d,) (one value per filter), got %s"
                             % (f, b.shape))
        if b.dtype not in ("f32", "f16", "bf16"):
            raise TypeError("bias has dtype %s: conv3d takes a floating-point bias "
                            "(float32 is used directly)" % _dtype_text(b.dtype))
        _check_strides(b, "bias")
        plan.bias_step = b.dtype != "f32" or (f > 1 and b.strides[0] != 1)

    spec = Spec.from_shapes(input_shape=(n, d, h, wd, c), filter_shape=(q, r, s, wc, f),
                            groups=groups,
                            strides=stride, dilations=dilation, padding=pads,
                            filter_layout=filter_layout, dtype=x.dtype,
                            bias=b is not None, residual=res is not None,
                            activation=activation or "none")
    on, od, oh, ow, of = spec.output_shape()  # Conv3dError for an impossible geometry
    plan.output_shape = (on, of, od, oh, ow)

    plan.residual_step = False
    if res is not None:
        if res.shape != plan.output_shape:
            raise ValueError("residual must have the output's shape %s, got %s"
                             % (plan.output_shape, res.shape))
        if res.dtype != x.dtype:
            raise TypeError("residual has dtype %s; it must have the output's dtype %s"
                            % (_dtype_text(res.dtype), _dtype_text(x.dtype)))
        plan.residual_step = _rank5_layout(res, "residual") == "contiguous"

    # The result's layout follows PyTorch's rule for its cuDNN convolutions:
    # channels_last_3d when the input or the weight is. An NCDHW input with
    # a channels_last_3d weight (every conv3d.torch module's) gives a
    # channels-last result, with no copy back (a U-Net step copied 28
    # outputs back, for the next layer's norm to make its own copy).
    weight_channels_last = (filter_layout == "fqrsc" and not plan.weight_step
                            and not _arrays.is_dense(w.shape, w.strides, _CONTIGUOUS))
    plan.output_back = plan.input_step and not weight_channels_last
    if out is not None:
        if out.shape != plan.output_shape:
            raise ValueError("out must have the output's shape %s, got %s"
                             % (plan.output_shape, out.shape))
        if out.dtype != x.dtype:
            raise TypeError("out has dtype %s; the output's dtype is %s"
                            % (_dtype_text(out.dtype), _dtype_text(x.dtype)))
        _check_strides(out, "out")
        if out.library == "numpy" and not out.array.flags.writeable:
            raise ValueError("out is a read-only NumPy array: the kernels write into it")
        if not _arrays.is_dense(out.shape, out.strides, _CHANNELS_LAST):
            raise _layout_error(out, "out", "channels_last_3d (NDHWC in memory), which "
                                "the kernels write")
        plan.output_back = False

    plan.steps = (plan.input_step or plan.weight_step or plan.bias_step
                  or plan.residual_step)
    plan.conv = _default_engine().compile(spec, target=resolved)
    plan.handle = plan.conv._handle
    return plan


def _device_name(device):
    return "cpu" if device[0] == "cpu" else "%s:%d" % device


def _check_address(ptr, what, alignment):
    if ptr % alignment:
        raise ValueError("%s starts at address 0x%x, not %d-byte aligned: the kernels "
                         "need %d-byte aligned buffers (make a copy)"
                         % (what, ptr, alignment, alignment))


def _check_alignment(v, what, alignment):
    _check_address(v.ptr, what, alignment)


def _span(ptr, shape, strides, itemsize):
    """The [first, last) bytes of a dense array's memory."""
    extent = 1 + sum((e - 1) * st for e, st in zip(shape, strides))
    return ptr, ptr + extent * itemsize


def _spans_intersect(a, b):
    return a[0] < b[1] and b[0] < a[1]


def _overlaps(a, b):
    """Whether the memory spans of two views on one device intersect."""
    return _spans_intersect(_span(a.ptr, a.shape, a.strides, a.itemsize),
                            _span(b.ptr, b.shape, b.strides, b.itemsize))


def _checked_plan(input, weight, bias, residual, out, stride, padding, dilation, groups,
                  activation, target):
    """The plan of a call and its operands' views, after every check."""
    views = (_arrays.view(input, "input"), _arrays.view(weight, "weight"),
             _view_or_none(bias, "bias"), _view_or_none(residual, "residual"),
             _view_or_none(out, "out"))
    return _plan_for(*views, stride, padding, dilation, groups, activation,
                     target), views


def _plan_for(x, w, b, res, o, stride, padding, dilation, groups, activation, target):
    """The plan of checked views and arguments, made (every check) on a miss."""
    key = (_describe(x), _describe(w), _describe(b), _describe(res), _describe_out(o),
           _arguments_key(stride, padding, dilation, groups), activation, target)
    try:
        plan = _plans.get(key)
    except TypeError:  # an unhashable argument: let the checks name it
        key, plan = None, None
    if plan is None:
        plan = _make_plan(x, w, b, res, o, stride, padding, dilation, groups,
                          activation, target)
        if key is not None:
            _plans[key] = plan
    return plan


_INT = {int}


def _arguments_key(stride, padding, dilation, groups):
    """The arguments as a plan key that tells apart what the checks tell
    apart (see _argument_key)."""
    if type(stride) is int and type(padding) is int and type(dilation) is int \
            and type(groups) is int:  # the common case, at a glance
        return stride, padding, dilation, groups
    if type(stride) is tuple and type(padding) is tuple and type(dilation) is tuple \
            and type(groups) is int and set(map(type, stride + padding + dilation)) == _INT:
        # nn.Conv3d's form: tuples of ints as they are. No other form's key
        # equals it: an int is not a tuple, and _argument_key's tuples for
        # sequences start with their type.
        return stride, padding, dilation, groups
    return (_argument_key(stride), _argument_key(padding), _argument_key(dilation),
            _argument_key(groups))
