"""The hit path of conv3d.conv3d: a call whose signature was seen before.

A call's signature is everything the checks of its first call (the miss:
_functional's ArrayViews and _make_plan) read from it: each operand's type,
dtype, shape and strides (PyTorch tensors: also layout and device), the
arguments as _arguments_key tells them apart (1, True and 1.0 differ), the
activation and the target. Those checks depend on nothing else but the
operands' addresses, which every call checks again (alignment, out=
overlap), so a hit accepts exactly what a miss accepts. A hit costs the
signature tuple, one dictionary lookup, reading the addresses, the output
allocation and one ctypes call (conv3d_run_packed, its arguments in a
per-thread block: one pointer to marshal instead of ten arguments).

Only calls whose operands all belong to the input's library have a hit path
(NumPy arrays; PyTorch tensors); other calls take _functional's general
route, which finds its compiled plan by the operands' ArrayViews.
"""

import ctypes
import functools
import sys
import threading

from . import _arrays
from . import _functional as _f
from . import _STREAM_LEGACY, Conv3dError, RunArgs, _library
from ._functional import _arguments_key, _check_address, _parameter_copy, _span
from ._functional import _spans_intersect

__all__ = ["MISS", "signatures", "paths", "path_for", "clear"]

# A hit function's answer for a call it leaves to the general route.
MISS = object()
# signature -> _functional._Plan, for every library.
signatures = {}
# type(input) -> its library's hit function, or False for types without one.
paths = {}

_NDHWC_TO_NCDHW = (0, 4, 1, 2, 3)


def clear():
    signatures.clear()


def path_for(kind):
    """The hit function for inputs of type `kind` (now registered in
    `paths`), or False."""
    path = False
    numpy = sys.modules.get("numpy")
    torch = sys.modules.get("torch")
    if numpy is not None and issubclass(kind, numpy.ndarray):
        path = _numpy_conv3d
    elif torch is not None and issubclass(kind, torch.Tensor):
        path = _torch_conv3d
    paths[kind] = path
    return path


# The C call ------------------------------------------------------------------

# Each thread's conv3d_run_args block (conv3d_run_packed): a hit fills in
# the handle and the addresses and passes one pointer. One attribute of the
# thread-local object: (block, a pointer to it, the error buffer).
_blocks = threading.local()


def _new_block():
    block = RunArgs()
    error = ctypes.create_string_buffer(4096)
    block.error, block.error_size = ctypes.addressof(error), len(error)
    _blocks.state = state = (block, ctypes.byref(block), error)
    return state


_packed = []


def _packed_run():
    """conv3d_run_packed as a ctypes function without argtypes: given only
    this module's byref() of a RunArgs block, it skips ctypes' argument
    check (about a third of the call's cost in Python). The plans' `run`."""
    if not _packed:
        lib = _library()
        run = lib._FuncPtr(("conv3d_run_packed", lib))
        run.restype = ctypes.c_int
        _packed.append(run)
    return _packed[0]


def _launch(plan, x_ptr, w_ptr, b_ptr, res_ptr, out_ptr, stream):
    try:
        block, ref, error = _blocks.state
    except AttributeError:
        block, ref, error = _new_block()
    block.conv = plan.handle
    block.input = x_ptr
    block.filter = w_ptr
    block.bias = b_ptr
    block.residual = res_ptr
    block.output = out_ptr
    block.stream = stream
    if plan.run(ref):
        raise Conv3dError(error.value.decode())


def _check_addresses(alignment, x_ptr, w_ptr, b_ptr, res_ptr):
    if x_ptr % alignment:
        _check_address(x_ptr, "input", alignment)
    if w_ptr % alignment:
        _check_address(w_ptr, "weight", alignment)
    if res_ptr is not None:
        _check_address(res_ptr, "residual", alignment)
    if b_ptr is not None:
        _check_address(b_ptr, "bias", 4)


def _miss(signature, library, prepare, input, weight, bias, residual, out, stride,
          padding, dilation, groups, activation, target):
    """The plan of a call not seen before, through every check of the general
    route; it is remembered under `signature` when all operands are
    instances of `library` (their type is part of the signature), after
    prepare(plan, input) gave it what the library's hit path needs (before
    another thread can find it). Returns None when they are not: the call
    then takes the general route."""
    plan = _f._checked_plan(input, weight, bias, residual, out, stride, padding,
                            dilation, groups, activation, target)[0]
    if not all(isinstance(a, library) for a in (input, weight, bias, residual, out)
               if a is not None):
        return None
    if plan.empty is None:  # not prepared yet (prepare sets `empty` last)
        plan.run = _packed_run()
        prepare(plan, input)
    signatures[signature] = plan
    return plan


# NumPy -----------------------------------------------------------------------


def _prepare_numpy(plan, x):
    n, f, d, h, w = plan.output_shape
    plan.empty = functools.partial(sys.modules["numpy"].empty, (n, d, h, w, f), x.dtype)


def _numpy_signature(a):
    return type(a), a.dtype, a.shape, a.strides


def _numpy_conv3d(input, weight, bias, stride, padding, dilation, groups, activation,
                  residual, out, target):
    """conv3d for NumPy arrays (the CPU target). Calls with layout steps take
    the general route with the plan found here."""
    try:
        signature = ((type(input), input.dtype, input.shape, input.strides),
                     (type(weight), weight.dtype, weight.shape, weight.strides),
                     None if bias is None else _numpy_signature(bias),
                     None if residual is None else _numpy_signature(residual),
                     # out= also by writeability, which the miss checks.
                     None if out is None else (type(out), out.dtype, out.shape, out.strides,
                                               out.flags.writeable),
                     _arguments_key(stride, padding, dilation, groups), activation, target)
        plan = signatures.get(signature)
    except (AttributeError, TypeError):
        # An operand that is no NumPy array, an unhashable argument: the
        # general route's checks name the problem.
        return MISS
    if plan is None:
        plan = _miss(signature, sys.modules["numpy"].ndarray, _prepare_numpy, input, weight,
                     bias, residual, out, stride, padding, dilation, groups, activation,
                     target)
        if plan is None:
            return MISS
    if plan.steps:
        return _f._run_views(plan, input, weight, bias, residual, out)
    address = _arrays.numpy_address
    x_ptr = address(input)
    w_ptr = address(weight)
    b_ptr = None if bias is None else address(bias)
    res_ptr = None if residual is None else address(residual)
    alignment = plan.alignment
    if out is None:
        result = plan.empty()
        out_ptr = address(result)
        if out_ptr % alignment:
            raise Conv3dError("the allocated output is not %d-byte aligned" % alignment)
        result = result.transpose(_NDHWC_TO_NCDHW)
    else:
        result = out
        out_ptr = address(out)
        out_span = _numpy_span(out, out_ptr)
        for a, ptr, what in ((input, x_ptr, "input"), (weight, w_ptr, "weight"),
                             (bias, b_ptr, "bias"), (residual, res_ptr, "residual")):
            if a is not None and _spans_intersect(_numpy_span(a, ptr), out_span):
                raise ValueError("out overlaps %s in memory" % what)
        _check_address(out_ptr, "out", alignment)
    _check_addresses(alignment, x_ptr, w_ptr, b_ptr, res_ptr)
    _launch(plan, x_ptr, w_ptr, b_ptr, res_ptr, out_ptr, None)
    return result


def _numpy_span(a, ptr):
    """The [first, last) bytes of dense NumPy array `a` at `ptr` (its strides
    are in bytes and, past the miss's checks, not negative)."""
    return ptr, ptr + a.itemsize + sum((e - 1) * s for e, s in zip(a.shape, a.strides))


# PyTorch ---------------------------------------------------------------------


def _torch_signature(t):
    return type(t), t.dtype, t.layout, t.device, t.shape, t.stride()


def torch_signature(input, weight, bias, residual, out, stride, padding, dilation, groups,
                    activation, target):
    """The signature of a call on PyTorch tensors: one flat tuple of the
    input's and the weight's attributes (no tuple per tensor for the two
    always there), the optional operands', the arguments and the rest.
    AttributeError, RuntimeError (stride() of a sparse or other non-strided
    tensor) or TypeError (an unhashable argument, on lookup) when the
    general route must name the problem."""
    if type(stride) is int and type(padding) is int and type(dilation) is int \
            and type(groups) is int:  # the common case, at a glance
        arguments = stride, padding, dilation, groups
    else:
        arguments = _arguments_key(stride, padding, dilation, groups)
    return (type(input), input.dtype, input.layout, input.device, input.shape,
            input.stride(),
            type(weight), weight.dtype, weight.layout, weight.device, weight.shape,
            weight.stride(),
            None if bias is None else _torch_signature(bias),
            None if residual is None else _torch_signature(residual),
            None if out is None else _torch_signature(out),
            arguments, activation, target)


def _channels_last_strides(shape):
    """The strides of a (N, C, D, H, W) tensor with NDHWC memory, as
    torch.channels_last_3d gives them (extents of 0 count as 1)."""
    n, c, d, h, w = shape
    sw = max(c, 1)
    sh = sw * max(w, 1)
    sd = sh * max(h, 1)
    return (sd * max(d, 1), 1, sd, sh, sw)


def _prepare_torch(plan, x):
    """What a plan needs to run on PyTorch tensors like `x` without asking
    the tensors or the Library again."""
    torch = sys.modules["torch"]
    # As Library.stream and Library.empty_channels_last do; `empty` last:
    # _miss takes a plan with one as prepared.
    plan.stream = None
    if plan.gpu:
        raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
        ordinal = plan.device[1]
        plan.stream = functools.partial(raw, ordinal) if raw else (
            lambda: torch.cuda.current_stream(ordinal).cuda_stream)
    # The output: new_empty_strided of a tensor with the input's dtype and
    # device (a hit has the miss's input signature) takes positional
    # arguments only, no keywords to parse. The template is an empty plain
    # tensor (no memory; no subclass of the caller's to dispatch through).
    template = torch.empty(0, dtype=x.dtype, device=x.device)
    plan.empty = functools.partial(template.new_empty_strided, plan.output_shape,
                                   _channels_last_strides(plan.output_shape))


def _torch_conv3d(input, weight, bias, stride, padding, dilation, groups, activation,
                  residual, out, target):
    """conv3d for PyTorch tensors: a hit reads each tensor's attributes once
    (signature and data_ptr()), checks the addresses and launches on the
    current stream. The hot path of the package: torch_signature and
    _launch are written out inline here (a Python call costs as much as a
    tensor attribute); torch_signature must build the same tuple."""
    try:
        if type(stride) is int and type(padding) is int and type(dilation) is int \
                and type(groups) is int:
            arguments = stride, padding, dilation, groups
        else:
            arguments = _arguments_key(stride, padding, dilation, groups)
        signature = (type(input), input.dtype, input.layout, input.device, input.shape,
                     input.stride(),
                     type(weight), weight.dtype, weight.layout, weight.device, weight.shape,
                     weight.stride(),
                     None if bias is None else (type(bias), bias.dtype, bias.layout,
                                                bias.device, bias.shape, bias.stride()),
                     None if residual is None else _torch_signature(residual),
                     None if out is None else _torch_signature(out),
                     arguments, activation, target)
        plan = signatures.get(signature)
    except (AttributeError, RuntimeError, TypeError):
        # An operand that is not a tensor, stride() of a sparse or other
        # non-strided tensor, an unhashable argument: the general route's
        # checks name the problem.
        return MISS
    if plan is None:
        plan = _miss(signature, sys.modules["torch"].Tensor, _prepare_torch, input, weight,
                     bias, residual, out, stride, padding, dilation, groups, activation,
                     target)
        if plan is None:
            return MISS

    if plan.steps:
        library = _arrays.Library("torch", input)
        if plan.input_step:
            input = library.to_channels_last(input)
        if plan.weight_step:
            weight = _parameter_copy(library, weight, library.to_channels_last, "weight")
        if plan.bias_step:
            bias = _parameter_copy(library, bias, library.to_float32, "bias")
        if plan.residual_step:
            residual = library.to_channels_last(residual)
    alignment = plan.alignment
    x_ptr = input.data_ptr()
    w_ptr = weight.data_ptr()
    b_ptr = None if bias is None else bias.data_ptr()
    res_ptr = None if residual is None else residual.data_ptr()
    if out is None:
        result = plan.empty()
        out_ptr = result.data_ptr()
        if out_ptr % alignment:
            raise Conv3dError("the allocated output is not %d-byte aligned" % alignment)
    else:
        result = out
        out_ptr = out.data_ptr()
        out_span = _span(out_ptr, out.shape, out.stride(), out.element_size())
        for t, ptr, what in ((input, x_ptr, "input"), (weight, w_ptr, "weight"),
                             (bias, b_ptr, "bias"), (residual, res_ptr, "residual")):
            if t is not None and _spans_intersect(
                    _span(ptr, t.shape, t.stride(), t.element_size()), out_span):
                raise ValueError("out overlaps %s in memory" % what)
        _check_address(out_ptr, "out", alignment)
    # One test for the usual case (all aligned); the checks in order, naming
    # the operand, otherwise.
    if (x_ptr | w_ptr | (res_ptr or 0)) % alignment or (b_ptr or 0) % 4:
        _check_addresses(alignment, x_ptr, w_ptr, b_ptr, res_ptr)
    try:
        block, ref, error = _blocks.state
    except AttributeError:
        block, ref, error = _new_block()
    block.conv = plan.handle
    block.input = x_ptr
    block.filter = w_ptr
    block.bias = b_ptr
    block.residual = res_ptr
    block.output = out_ptr
    block.stream = (plan.stream() or _STREAM_LEGACY) if plan.gpu else None
    if plan.run(ref):
        raise Conv3dError(error.value.decode())
    if plan.output_back:
        result = result.contiguous()
    return result
