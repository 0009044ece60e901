"""The hit path of conv3d.conv3d: a call whose signature was seen before.

A call's signature is everything the checks of its first call (the miss:
_plan's ArrayViews and _make_plan) read from it: each operand's type,
dtype, shape and strides (PyTorch tensors: also layout and device; CuPy
arrays: also the device), the arguments as _arguments_key tells them apart
(1, True and 1.0 differ), the activation and the target. Those checks
depend on nothing else but the operands' addresses, which every call checks
again (alignment, out= overlap), so a hit accepts exactly what a miss
accepts. Nothing is keyed by object identity.

A signature maps to an entry, a tuple unpacked in one step:
(plan, steps, handle, alignment, empty, stream, extents) -- the
_plan._Plan; which layout steps a hit runs (DIRECT: none; PARAMETERS:
only the weight's and bias's conversions, which PyTorch hits reuse while
the tensors are unchanged (_plan._parameter_copy) and then launch
directly; ALL: copies of the input, residual or output, through the general
route's launch); the compiled convolution's C handle; the address
alignment the kernels need; a callable allocating the output (NDHWC memory,
logical NCDHW); a callable answering the current CUstream (None on the CPU
target); the bytes each operand spans from its address (for the out=
overlap check: a function of dtype, shape and strides, so of the
signature).

A hit costs the signature tuple, one dictionary lookup, the addresses, the
output allocation and one ctypes call: conv3d_run_packed given the bytes of
a conv3d_run_args record packed by struct (no ctypes structure to fill, no
per-thread block, no argument conversion: a bytes object goes to C as a
char pointer), without an error buffer (conv3d_last_error names a failure).

PyTorch tensors take the C extension's hit function when it loads
(_conv3d_hit.torch_conv3d, lib/PythonHitPath/HitPathModule.cpp, built
beside libConv3d.so; off with CONV3D_HIT_EXTENSION=0): the same steps
without bytecode, ctypes or struct (it calls conv3d_run_packed through the
address the package gives it), and for everything else (the miss, layout
steps, out= overlap, misaligned addresses, failures) the functions below.
Its signature tuple is its own (torch_signature is then its function):
entries stored by one path are found by that path only. _torch_conv3d is
the pure-Python equivalent, used when the extension is absent. In front
of both, when built for the installed PyTorch, the torch-native path
(_torch_native.py) takes the common calls in C++ and hands the others to
whichever of them is in use (_native_describe gives it a key's entry).

NumPy arrays, PyTorch tensors and CuPy arrays have a hit path when all
operands belong to the input's library. Inputs of other DLPack producers
have one too: their dtype, shape and strides are known only from a
capsule, so each operand's is made and read on every call (the signature
is the producer's type and what the capsule says), but no ArrayView, plan
table key or Library is made; a hit with out= launches directly, one
without allocates through the general route's Library. Other calls take
the general route (_plan.py), which finds its plan by the operands'
ArrayViews and launches the same way.
"""

import ctypes
import functools
import struct
import sys

from . import _arrays, _plan
from ._capi import Conv3dError, RunArgs
from ._capi import library as _library
from ._plan import (_arguments_key, _check_address, _check_alignment, _overlaps,
                    _parameter_copy, _span, _view_or_none)

__all__ = ["MISS", "signatures", "paths", "path_for", "clear", "run_packed",
           "pack_run_args", "last_error", "run_views", "torch_signature", "extension",
           "extension_status"]

# A hit function's answer for a call it leaves to the general route.
MISS = object()
# signature -> entry (see the module's docstring), for every library.
signatures = {}
# type(input) -> its library's hit function, or False for types without one.
paths = {}

_NDHWC_TO_NCDHW = (0, 4, 1, 2, 3)


def clear():
    signatures.clear()
    # The torch-native path's keys name compiled convolutions' handles.
    if _native is not None:
        _native.clear()


def path_for(kind):
    """The hit function for inputs of type `kind` (now registered in
    `paths`), or False."""
    path = False
    numpy = sys.modules.get("numpy")
    torch = sys.modules.get("torch")
    cupy = sys.modules.get("cupy")
    if numpy is not None and issubclass(kind, numpy.ndarray):
        path = _numpy_conv3d
    elif torch is not None and issubclass(kind, torch.Tensor):
        path = _torch_path()
    elif cupy is not None and issubclass(kind, cupy.ndarray):
        path = _cupy_conv3d
    elif hasattr(kind, "__dlpack__") and hasattr(kind, "__dlpack_device__"):
        path = _dlpack_conv3d
    paths[kind] = path
    return path


# The C call ------------------------------------------------------------------

# The conv3d_run_args record up to its stream (seven pointers), then zeros:
# no error buffer (error, error_size) and amax 0.
_POINTERS = 7
assert RunArgs.stream.offset == 8 * (_POINTERS - 1) and ctypes.sizeof(ctypes.c_void_p) == 8
pack_run_args = struct.Struct("=%dQ%dx" % (_POINTERS, ctypes.sizeof(RunArgs)
                                           - 8 * _POINTERS)).pack
assert len(pack_run_args(*range(_POINTERS))) == ctypes.sizeof(RunArgs)


def run_packed(record):
    """conv3d_run_packed(record), `record` the bytes of pack_run_args. The
    first call loads the library (importing conv3d does not) and replaces
    this function with the C function itself: a ctypes function without
    argtypes, to which ctypes passes the bytes as a char pointer, checking
    no argument (the check was about a third of the call's cost)."""
    global run_packed
    lib = _library()
    run = lib._FuncPtr(("conv3d_run_packed", lib))
    run.restype = ctypes.c_int
    run_packed = run
    return run(record)


def last_error():
    """conv3d_last_error(): the calling thread's last failed run's message."""
    return _library().conv3d_last_error().decode(errors="replace")


def _failed():
    return Conv3dError(last_error())


def run_views(plan, input, weight, bias, residual, out, views=None, steps_done=False):
    """Runs `plan` (checked for these operands) on any DLPack arrays through
    their views: the layout steps (unless `steps_done`: the operands are
    their results), the output allocation, the address checks and the
    launch (as a hit launches: run_packed)."""
    x, w, b, res, o = views or (
        _arrays.view(input, "input"), _arrays.view(weight, "weight"),
        _view_or_none(bias, "bias"), _view_or_none(residual, "residual"),
        _view_or_none(out, "out"))
    library = _arrays.Library(x.library, _arrays.array_of(x))
    if plan.steps and not steps_done:
        if plan.input_step:
            x = _arrays.view(library.to_channels_last(input), "input")
        if plan.weight_step:
            w = _arrays.view(_parameter_copy(library, weight, library.to_channels_last,
                                             "weight"), "weight")
        if plan.bias_step:
            b = _arrays.view(_parameter_copy(library, bias, library.to_float32, "bias"),
                             "bias")
        if plan.residual_step:
            res = _arrays.view(library.to_channels_last(residual), "residual")
    alignment = plan.alignment
    if o is None:
        result = library.empty_channels_last(plan.output_shape, x.dtype, plan.device)
        out_ptr = library.data_ptr(result)
        if out_ptr % alignment:
            raise Conv3dError("the allocated output is not %d-byte aligned" % alignment)
    else:
        result = out
        out_ptr = o.ptr
        for v, what in ((x, "input"), (w, "weight"), (b, "bias"), (res, "residual")):
            if v is not None and _overlaps(v, o):
                raise ValueError("out overlaps %s in memory" % what)
        _check_alignment(o, "out", alignment)
    if x.ptr % alignment:
        _check_alignment(x, "input", alignment)
    if w.ptr % alignment:
        _check_alignment(w, "weight", alignment)
    if res is not None:
        _check_alignment(res, "residual", alignment)
    if b is not None:
        _check_alignment(b, "bias", 4)
    stream = library.stream(plan.device) if plan.gpu else 0
    if run_packed(pack_run_args(plan.handle, x.ptr, w.ptr,
                                          0 if b is None else b.ptr,
                                          0 if res is None else res.ptr, out_ptr, stream)):
        raise Conv3dError(last_error())
    if plan.output_back:
        result = library.to_contiguous(result)
    return result


# The C hit path --------------------------------------------------------------

# Why the PyTorch hit path is pure Python in this process (None: it is the
# C extension's, or the question has not come up yet); `python -m conv3d
# --info` prints it.
extension_status = None
_EXTENSION_FILE = "_conv3d_hit.abi3.so"
_EXTENSION_PROTOCOL = 1


_NOT_LOADED = object()
_extension = _NOT_LOADED


def extension():
    """The _conv3d_hit module beside libConv3d.so, initialized (loaded
    once); None (with `extension_status` saying why) when it is disabled
    ($CONV3D_HIT_EXTENSION=0), absent (the library was built without
    Python's development headers) or does not load."""
    global _extension
    if _extension is _NOT_LOADED:
        _extension = _load_extension()
    return _extension


def _load_extension():
    global extension_status
    import importlib.util
    import os
    if os.environ.get("CONV3D_HIT_EXTENSION", "1") == "0":
        extension_status = "disabled by CONV3D_HIT_EXTENSION=0"
        return None
    lib = _library()
    from ._capi import library_path
    path = os.path.join(os.path.dirname(library_path()), _EXTENSION_FILE)
    if not os.path.exists(path):
        extension_status = "no %s beside the library" % path
        return None
    try:
        spec = importlib.util.spec_from_file_location("conv3d._conv3d_hit", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    except ImportError as e:
        extension_status = "%s does not load: %s" % (path, e)
        return None
    if getattr(module, "PROTOCOL", None) != _EXTENSION_PROTOCOL:
        extension_status = "%s speaks protocol %s, this package %d (another build)" % (
            path, getattr(module, "PROTOCOL", None), _EXTENSION_PROTOCOL)
        return None
    module.init(MISS, signatures, _torch_miss, _torch_with_steps, _torch_parameters,
                _check_out, _check_addresses, _failed, _arguments_key,
                ctypes.cast(lib.conv3d_run_packed, ctypes.c_void_p).value)
    extension_status = None
    return module


# The torch-native module in use (_torch_native.py), or None.
_native = None
# _torch_path's answer, decided once per process (every tensor type gets it).
_torch_hit = None


def _torch_path():
    """The hit function for PyTorch tensors: the torch-native module's when
    a build for this PyTorch exists (_torch_native.py), which hands what it
    does not take to the next one: the C extension's when it loads (its
    signatures then key the entries: torch_signature is replaced too), else
    _torch_conv3d."""
    global _torch_hit
    if _torch_hit is None:
        _torch_hit = _choose_torch_path()
    return _torch_hit


def _choose_torch_path():
    global torch_signature, _native
    module = extension()
    if module is None:
        path = _torch_conv3d
    else:
        torch_signature = _c_torch_signature(module.torch_signature)
        path = module.torch_conv3d
    from . import _torch_native
    native = _torch_native.load()
    if native is None:
        return path
    torch = sys.modules["torch"]
    native.init(ctypes.cast(_library().conv3d_run, ctypes.c_void_p).value, path,
                _native_describe, _torch_parameters, torch.Tensor, torch.nn.Parameter)
    _native = native
    return native.conv3d


def _native_describe(input, weight, bias, stride, padding, dilation, groups, activation,
                     residual, out, target):
    """For the torch-native path, a call it has not seen: its entry (made by
    the miss, with every check, when there is none) as (handle, alignment,
    output sizes, output strides, gpu, device ordinal, the plan (which
    keeps the compiled convolution alive), whether its weight or bias is
    converted (_torch_parameters)), or None when the plan copies the input,
    residual or output (the next hit function takes those calls)."""
    signature = torch_signature(input, weight, bias, residual, out, stride, padding,
                                dilation, groups, activation, target)
    entry = signatures.get(signature) or _torch_miss(
        signature, input, weight, bias, stride, padding, dilation, groups, activation,
        residual, out, target)
    if entry is None or entry[1] == ALL:
        return None
    plan, empty = entry[0], entry[4]
    sizes, strides = empty.args
    return (entry[2], entry[3], sizes, strides, plan.gpu,
            plan.device[1] if plan.gpu else 0, plan, entry[1] == PARAMETERS)


def _c_torch_signature(signature):
    """torch_signature's argument order on the C module's function (whose
    order is conv3d.conv3d's)."""
    def torch_signature(input, weight, bias, residual, out, stride, padding, dilation,
                        groups, activation, target):
        return signature(input, weight, bias, stride, padding, dilation, groups,
                         activation, residual, out, target)
    return torch_signature


def _check_addresses(alignment, x_ptr, w_ptr, b_ptr, res_ptr, allocated_ptr=0):
    """Raises for the first misaligned address, naming it (0: absent)."""
    if allocated_ptr % alignment:
        raise Conv3dError("the allocated output is not %d-byte aligned" % alignment)
    _check_address(x_ptr, "input", alignment)
    _check_address(w_ptr, "weight", alignment)
    _check_address(res_ptr, "residual", alignment)
    _check_address(b_ptr, "bias", 4)


def _miss(signature, library, make_entry, input, weight, bias, residual, out, stride,
          padding, dilation, groups, activation, target):
    """The entry of a call not seen before, through every check of the
    general route; remembered under `signature` when all operands are
    instances of `library` (their type is part of the signature). Returns
    None when they are not: the call then takes the general route."""
    plan, views = _plan._checked_plan(input, weight, bias, residual, out, stride, padding,
                                   dilation, groups, activation, target)
    if not all(isinstance(a, library) for a in (input, weight, bias, residual, out)
               if a is not None):
        return None
    entry = make_entry(plan, input) + (_extents(plan, views),)
    signatures[signature] = entry
    return entry


# An entry's layout steps.
DIRECT, PARAMETERS, ALL = 0, 1, 2


def _entry(plan, empty, stream):
    """An entry, but for its extents (_miss adds them)."""
    if plan.input_step or plan.residual_step or plan.output_back:
        steps = ALL
    elif plan.weight_step or plan.bias_step:
        steps = PARAMETERS
    else:
        steps = DIRECT
    return (plan, steps, plan.handle, plan.alignment, empty,
            stream if plan.gpu else None)


def _extents(plan, views):
    """The bytes each operand's memory spans from its address (None: absent,
    or replaced by a converted copy, which out= cannot overlap), input,
    weight, bias, residual, out: a function of the dtypes, shapes and
    strides, which the signature holds."""
    converted = (False, plan.weight_step, plan.bias_step, False, False)
    return tuple(None if v is None or replaced
                 else _span(0, v.shape, v.strides, v.itemsize)[1]
                 for v, replaced in zip(views, converted))


_OPERANDS = ("input", "weight", "bias", "residual")


def _check_out(out_ptr, alignment, extents, x_ptr, w_ptr, b_ptr, res_ptr):
    """out= must not overlap an operand (by the entry's extents) and must be
    aligned."""
    out_end = out_ptr + extents[4]
    for ptr, extent, what in zip((x_ptr, w_ptr, b_ptr, res_ptr), extents, _OPERANDS):
        if extent is not None and ptr < out_end and out_ptr < ptr + extent:
            raise ValueError("out overlaps %s in memory" % what)
    _check_address(out_ptr, "out", alignment)


# NumPy -----------------------------------------------------------------------


def _numpy_entry(plan, x):
    n, f, d, h, w = plan.output_shape
    return _entry(plan, functools.partial(sys.modules["numpy"].empty, (n, d, h, w, f),
                                          x.dtype), None)


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
        entry = signatures.get(signature)
    except (AttributeError, TypeError):
        # An operand that is no NumPy array, an unhashable argument: the
        # general route's checks name the problem.
        return MISS
    if entry is None:
        entry = _miss(signature, sys.modules["numpy"].ndarray, _numpy_entry, input, weight,
                      bias, residual, out, stride, padding, dilation, groups, activation,
                      target)
        if entry is None:
            return MISS
    plan, steps, handle, alignment, empty, _, extents = entry
    if steps:
        return run_views(plan, input, weight, bias, residual, out)
    address = _arrays.numpy_address
    x_ptr = address(input)
    w_ptr = address(weight)
    b_ptr = 0 if bias is None else address(bias)
    res_ptr = 0 if residual is None else address(residual)
    allocated = 0
    if out is None:
        result = empty()
        out_ptr = allocated = address(result)
        result = result.transpose(_NDHWC_TO_NCDHW)
    else:
        result = out
        out_ptr = address(out)
        _check_out(out_ptr, alignment, extents, x_ptr, w_ptr, b_ptr, res_ptr)
    if (x_ptr | w_ptr | res_ptr | out_ptr) % alignment or b_ptr % 4:
        _check_addresses(alignment, x_ptr, w_ptr, b_ptr, res_ptr, allocated)
    if run_packed(pack_run_args(handle, x_ptr, w_ptr, b_ptr, res_ptr, out_ptr, 0)):
        raise _failed()
    return result


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


# PyTorch's conversions (they need no sample array).
_TORCH = _arrays.Library("torch", None)


def _channels_last_strides(shape):
    """The strides of a (N, C, D, H, W) tensor with NDHWC memory, as
    torch.channels_last_3d gives them (extents of 0 count as 1)."""
    n, c, d, h, w = shape
    sw = max(c, 1)
    sh = sw * max(w, 1)
    sd = sh * max(h, 1)
    return (sd * max(d, 1), 1, sd, sh, sw)


def _torch_entry(plan, x):
    """The entry of a plan on PyTorch tensors like `x`: what a hit needs
    without asking the tensors or the Library again."""
    torch = sys.modules["torch"]
    stream = None
    if plan.gpu:
        # As Library.stream does.
        raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
        ordinal = plan.device[1]
        stream = functools.partial(raw, ordinal) if raw else (
            lambda: torch.cuda.current_stream(ordinal).cuda_stream)
    # The output: new_empty_strided of a tensor with the input's dtype and
    # device (a hit has the miss's input signature) takes positional
    # arguments only, no keywords to parse. The template is an empty plain
    # tensor (no memory; no subclass of the caller's to dispatch through).
    template = torch.empty(0, dtype=x.dtype, device=x.device)
    empty = functools.partial(template.new_empty_strided, plan.output_shape,
                              _channels_last_strides(plan.output_shape))
    return _entry(plan, empty, stream)


def _torch_conv3d(input, weight, bias, stride, padding, dilation, groups, activation,
                  residual, out, target):
    """conv3d for PyTorch tensors: a hit reads each tensor's attributes once
    (signature and data_ptr()), checks the addresses and launches on the
    current stream. The hot path of the package: torch_signature is written
    out inline here (a Python call costs as much as a tensor attribute); it
    must build the same tuple."""
    try:
        if type(stride) is int and type(padding) is int and type(dilation) is int \
                and type(groups) is int:
            arguments = stride, padding, dilation, groups
        else:
            arguments = _arguments_key(stride, padding, dilation, groups)
        signature = (
            type(input), input.dtype, input.layout, input.device, input.shape,
            input.stride(),
            type(weight), weight.dtype, weight.layout, weight.device, weight.shape,
            weight.stride(),
            None if bias is None else (type(bias), bias.dtype, bias.layout, bias.device,
                                       bias.shape, bias.stride()),
            None if residual is None else _torch_signature(residual),
            None if out is None else _torch_signature(out),
            arguments, activation, target)
        entry = signatures.get(signature)
    except (AttributeError, RuntimeError, TypeError):
        # An operand that is not a tensor, stride() of a sparse or other
        # non-strided tensor, an unhashable argument: the general route's
        # checks name the problem.
        return MISS
    if entry is None:
        entry = _miss(signature, sys.modules["torch"].Tensor, _torch_entry, input, weight,
                      bias, residual, out, stride, padding, dilation, groups, activation,
                      target)
        if entry is None:
            return MISS
    plan, steps, handle, alignment, empty, stream, extents = entry
    if steps:
        if steps == ALL:
            return _torch_with_steps(plan, input, weight, bias, residual, out)
        weight, bias = _torch_parameters(plan, weight, bias)
    x_ptr = input.data_ptr()
    w_ptr = weight.data_ptr()
    b_ptr = 0 if bias is None else bias.data_ptr()
    res_ptr = 0 if residual is None else residual.data_ptr()
    allocated = 0
    if out is None:
        result = empty()
        out_ptr = allocated = result.data_ptr()
    else:
        result = out
        out_ptr = out.data_ptr()
        _check_out(out_ptr, alignment, extents, x_ptr, w_ptr, b_ptr, res_ptr)
    # One test for the usual case (all aligned); the checks in order, naming
    # the operand, otherwise.
    if (x_ptr | w_ptr | res_ptr | out_ptr) % alignment or b_ptr % 4:
        _check_addresses(alignment, x_ptr, w_ptr, b_ptr, res_ptr, allocated)
    if run_packed(pack_run_args(handle, x_ptr, w_ptr, b_ptr, res_ptr, out_ptr,
                                (stream() or 1) if stream else 0)):
        raise _failed()
    return result


def _torch_parameters(plan, weight, bias):
    """(weight, bias) for a plan with the PARAMETERS steps: the weight's or
    bias's converted copy, made once per tensor state."""
    if plan.weight_step:
        weight = _parameter_copy(_TORCH, weight, _TORCH.to_channels_last, "weight")
    if plan.bias_step:
        bias = _parameter_copy(_TORCH, bias, _TORCH.to_float32, "bias")
    return weight, bias


def _torch_miss(signature, input, weight, bias, stride, padding, dilation, groups,
                activation, residual, out, target):
    """The entry of a PyTorch call not seen before (see _miss), for the C
    hit path (_conv3d_hit.torch_conv3d), which found no entry under
    `signature`; None when the general route must take the call."""
    return _miss(signature, sys.modules["torch"].Tensor, _torch_entry, input, weight, bias,
                 residual, out, stride, padding, dilation, groups, activation, target)


def _torch_with_steps(plan, input, weight, bias, residual, out):
    """A hit whose plan has layout steps or copies its output back: the
    steps (PyTorch weights and biases converted once, see
    _plan._parameter_copy), then the general route's launch."""
    library = _arrays.Library("torch", input)
    if plan.input_step:
        input = library.to_channels_last(input)
    if plan.weight_step:
        weight = _parameter_copy(library, weight, library.to_channels_last, "weight")
    if plan.bias_step:
        bias = _parameter_copy(library, bias, library.to_float32, "bias")
    if plan.residual_step:
        residual = library.to_channels_last(residual)
    return run_views(plan, input, weight, bias, residual, out, steps_done=True)


# CuPy ------------------------------------------------------------------------


def _cupy_signature(a):
    return type(a), a.dtype, a.shape, a.strides, a.device.id


def _cupy_entry(plan, x):
    """The entry of a plan on CuPy arrays like `x`: allocation and the
    current stream on the plan's device (made current for the call when
    another one is: a fresh Device each time, as a Device's context keeps a
    stack of its own that threads must not share)."""
    cupy = sys.modules["cupy"]
    n, f, d, h, w = plan.output_shape
    shape, dtype, ordinal = (n, d, h, w, f), x.dtype, plan.device[1]
    current = cupy.cuda.runtime.getDevice
    get_stream = cupy.cuda.get_current_stream

    def empty():
        if current() == ordinal:
            return cupy.empty(shape, dtype)
        with cupy.cuda.Device(ordinal):
            return cupy.empty(shape, dtype)

    def stream():
        if current() == ordinal:
            return get_stream().ptr
        with cupy.cuda.Device(ordinal):
            return get_stream().ptr

    return _entry(plan, empty, stream)


def _cupy_conv3d(input, weight, bias, stride, padding, dilation, groups, activation,
                 residual, out, target):
    """conv3d for CuPy arrays: the attributes _arrays reads for the miss
    (type, dtype, shape, byte strides, device) are the signature; a hit
    allocates on the plan's device and launches on CuPy's current stream
    there. Calls with layout steps take the general route with the plan
    found here."""
    try:
        signature = (_cupy_signature(input), _cupy_signature(weight),
                     None if bias is None else _cupy_signature(bias),
                     None if residual is None else _cupy_signature(residual),
                     None if out is None else _cupy_signature(out),
                     _arguments_key(stride, padding, dilation, groups), activation, target)
        entry = signatures.get(signature)
    except (AttributeError, TypeError):
        return MISS
    if entry is None:
        entry = _miss(signature, sys.modules["cupy"].ndarray, _cupy_entry, input, weight,
                      bias, residual, out, stride, padding, dilation, groups, activation,
                      target)
        if entry is None:
            return MISS
    plan, steps, handle, alignment, empty, stream, extents = entry
    if steps:
        return run_views(plan, input, weight, bias, residual, out)
    x_ptr = input.data.ptr
    w_ptr = weight.data.ptr
    b_ptr = 0 if bias is None else bias.data.ptr
    res_ptr = 0 if residual is None else residual.data.ptr
    allocated = 0
    if out is None:
        result = empty()
        out_ptr = allocated = result.data.ptr
        result = result.transpose(_NDHWC_TO_NCDHW)
    else:
        result = out
        out_ptr = out.data.ptr
        _check_out(out_ptr, alignment, extents, x_ptr, w_ptr, b_ptr, res_ptr)
    if (x_ptr | w_ptr | res_ptr | out_ptr) % alignment or b_ptr % 4:
        _check_addresses(alignment, x_ptr, w_ptr, b_ptr, res_ptr, allocated)
    if run_packed(pack_run_args(handle, x_ptr, w_ptr, b_ptr, res_ptr, out_ptr,
                                stream() or 1)):
        raise _failed()
    return result


# Other DLPack producers ------------------------------------------------------


def _dlpack_entry(plan, x):
    return _entry(plan, None, (lambda: _arrays._STREAM_LEGACY) if plan.gpu else None)


def _dlpack_conv3d(input, weight, bias, stride, padding, dilation, groups, activation,
                   residual, out, target):
    """conv3d for other DLPack producers' arrays (any mix of them; NumPy,
    PyTorch or CuPy operands are read through DLPack too): the signature
    is each operand's type and what its capsule says (device, dtype, shape,
    strides), read on every call, as the address is."""
    read = _arrays.read_dlpack
    try:
        x = read(input)
        w = read(weight)
        b = None if bias is None else read(bias)
        r = None if residual is None else read(residual)
        o = None if out is None else read(out)
        signature = (type(input), x[:4], type(weight), w[:4],
                     None if b is None else (type(bias), b[:4]),
                     None if r is None else (type(residual), r[:4]),
                     None if o is None else (type(out), o[:4]),
                     _arguments_key(stride, padding, dilation, groups), activation, target)
        entry = signatures.get(signature)
    except Exception:  # noqa: BLE001
        # Not a DLPack array, an export refused (PyTorch: a tensor requiring
        # grad), an unhashable argument: the general route, which reads
        # the operands its own way, names the problem.
        return MISS
    if entry is None:
        entry = _miss(signature, object, _dlpack_entry, input, weight, bias, residual, out,
                      stride, padding, dilation, groups, activation, target)
    plan, steps, handle, alignment, _, stream, extents = entry
    if steps or out is None:
        view = _arrays.dlpack_view
        return run_views(plan, input, weight, bias, residual, out, (
            view(input, x), view(weight, w), None if b is None else view(bias, b),
            None if r is None else view(residual, r), None if o is None else view(out, o)))
    x_ptr, w_ptr, out_ptr = x[4], w[4], o[4]
    b_ptr = 0 if b is None else b[4]
    res_ptr = 0 if r is None else r[4]
    _check_out(out_ptr, alignment, extents, x_ptr, w_ptr, b_ptr, res_ptr)
    if (x_ptr | w_ptr | res_ptr) % alignment or b_ptr % 4:
        _check_addresses(alignment, x_ptr, w_ptr, b_ptr, res_ptr)
    # The capsules (x, w, b, r, o) hold the exports until the call returns.
    if run_packed(pack_run_args(handle, x_ptr, w_ptr, b_ptr, res_ptr, out_ptr,
                                stream() if stream else 0)):
        raise _failed()
    return out
