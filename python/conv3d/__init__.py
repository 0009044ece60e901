"""conv3d-mlir from Python.

torch.nn.functional.conv3d's interface on any DLPack array (PyTorch and
CuPy on a CUDA GPU, NumPy on the CPU target), compiled once per spec::

    import conv3d
    y = conv3d.conv3d(x, w, b, stride=1, padding=(2, 0, 1, 1, 1, 1), activation="silu")

conv3d.torch adds a PyTorch custom op, a drop-in nn.Conv3d and convert().
The lower level compiles a Spec and runs it on raw addresses::

    engine = conv3d.Engine()
    conv = engine.compile(conv3d.Spec.from_shapes(
        input_shape=(1, 10, 32, 32, 64), filter_shape=(3, 3, 3, 64, 96),
        padding=(2, 0, 1, 1, 1, 1), filter_layout="fqrsc"), target="sm80")
    conv.run(x.data_ptr(), w.data_ptr(), y.data_ptr(),
             stream=torch.cuda.current_stream().cuda_stream)

The package talks to libConv3d.so through its C API (ctypes), so it works
with any Python 3 without compiled bindings. The library is found through
$CONV3D_LIB, the copy a wheel ships inside the package, the install prefix,
a build tree or the loader's path (_capi.library_candidates); `python -m
conv3d --info` shows which. _capi holds the C API's ctypes side.
"""

import ctypes

from ._capi import (ACTIVATIONS as _ACTIVATIONS, DTYPES as _DTYPES, KINDS as _KINDS,
                    LAYOUTS as _LAYOUTS,
                    STREAM_LEGACY as _STREAM_LEGACY, Conv3dError, DeviceInfo, FilterExt,
                    RunArgs, SpecFields)
from . import _capi
from ._capi import library as _library

__all__ = ["Engine", "Conv", "Spec", "Conv3dError", "conv3d", "clear_cache",
           "cached_plans", "library_path", "library_version", "cuda_device",
           "cuda_pool_memory",
           "CausalConv3dStream", "explain", "__version__"]

# The package's version; libConv3d.so reports its own (library_version()),
# the CMake project version, and `python -m conv3d --info` shows both.
__version__ = "0.1.0"


def _choice(table, value, what):
    """table[value] for an enum argument, ValueError naming the choices."""
    try:
        return table[value]
    except (KeyError, TypeError):
        raise ValueError("%s must be one of %s, got %r"
                         % (what, ", ".join(table), value)) from None


class Spec(SpecFields):
    """conv3d_spec of conv3d/CAPI/conv3d.h (the fields: _capi.SpecFields)."""

    @classmethod
    def from_shapes(cls, input_shape, filter_shape, strides=(1, 1, 1),
                    dilations=(1, 1, 1), padding=(0,) * 6, filter_layout="qrscf",
                    dtype="bf16", output_dtype=None, bias=False, residual=False,
                    accumulate=False, activation="none", quant_block_size=0,
                    groups=1, kind="fprop"):
        """input_shape = (N, D, H, W, C); filter_shape = (Q, R, S, C/groups,
        F) whatever the layout; padding = (d_lo, d_hi, h_lo, h_hi, w_lo, w_hi);
        groups: a grouped convolution (C and F multiples of it).
        dtype, output_dtype: "bf16", "f16" or "f32" (ValueError naming the
        choices otherwise; output_dtype None: dtype's). kind: what
        Engine.compile compiles by default, "fprop" (the convolution),
        "dgrad" or "wgrad" (its data or weight gradient; the shapes stay
        the forward's). The C struct has no kind (conv3d_compile_kind takes
        it), so it is kept beside the fields."""
        n, d, h, w, c = input_shape
        q, r, s, fc, f = filter_shape
        if groups == 1 and fc != c:
            raise Conv3dError(f"filter has C = {fc}, input has C = {c}")
        if groups != 1 and fc * groups != c:
            raise Conv3dError(f"filter has C/groups = {fc} channels per group, input "
                              f"has C = {c} in {groups} groups")
        spec = cls()
        spec.batch, spec.depth, spec.height, spec.width, spec.channels = n, d, h, w, c
        spec.window[:] = (q, r, s)
        spec.filters = f
        spec.strides[:] = strides
        spec.dilations[:] = dilations
        spec.padding[:] = padding
        spec.filter_layout = _choice(_LAYOUTS, filter_layout, "filter_layout")
        spec.input_type = _choice(_DTYPES, dtype, "dtype")
        spec.output_type = _choice(_DTYPES, dtype if output_dtype is None else output_dtype,
                                   "output_dtype")
        spec.has_bias, spec.has_residual = int(bias), int(residual)
        spec.accumulate = int(accumulate)
        spec.activation = _choice(_ACTIVATIONS, activation, "activation")
        spec.quant_block_size = quant_block_size
        spec.groups = groups
        _choice(_KINDS, kind, "kind")
        spec.kind = kind
        return spec

    def _geometry(self):
        # The library's geometry (ConvGeometry), not a second formula here.
        shape = (ctypes.c_int64 * 5)()
        flops = ctypes.c_double()
        error = ctypes.create_string_buffer(1024)
        if _library().conv3d_spec_geometry(ctypes.byref(self), shape, ctypes.byref(flops),
                                           error, len(error)):
            raise Conv3dError(error.value.decode())
        return tuple(shape), flops.value

    def output_shape(self):
        """(N, Do, Ho, Wo, F)."""
        return self._geometry()[0]

    def flops(self):
        """2*M*N*K."""
        return self._geometry()[1]


def library_path():
    """The libConv3d.so this package uses (see _capi.library_candidates)."""
    return _capi.library_path()


def library_version():
    """The version libConv3d.so reports (the CMake project version)."""
    return _library().conv3d_version().decode()


def cuda_device():
    """The CUDA device the runtime uses (CONV3D_CUDA_DEVICE, else 0), as a
    DeviceInfo; Conv3dError naming the reason without a driver or device."""
    info = DeviceInfo()
    error = ctypes.create_string_buffer(1024)
    if _library().conv3d_cuda_device(ctypes.byref(info), error, len(error)):
        raise Conv3dError(error.value.decode())
    return info


def cuda_pool_memory(reset=False):
    """What the runtime's own memory pool on its CUDA device holds, in
    bytes: {"reserved", "used", "used_high"} (used_high: the most in use
    since the last reset), and the device's CUDA graph memory,
    {"graph_used", "graph_used_high"} (None where the driver does not report
    it). The pool holds the temporaries of the library's calls (prologue
    prepasses, split-K and Q-slice workspaces), which PyTorch's allocator
    never sees: a peak of PyTorch's max_memory_allocated leaves them out.
    Inside captured CUDA graphs those temporaries are graph memory (the
    memory nodes of every graph on the device), which the pool does not
    count. reset=True starts both high-water marks again from the current
    use, after reading them. Conv3dError naming the reason
    without a driver or device, or where the runtime has no pool of its own
    (no memory pools on the device or driver, the PTX emulator)."""
    memory = _capi.PoolMemory()
    error = ctypes.create_string_buffer(1024)
    if _library().conv3d_cuda_pool_memory(ctypes.byref(memory), int(bool(reset)), error,
                                          len(error)):
        raise Conv3dError(error.value.decode())
    graph = bool(memory.graph_reported)
    return {"reserved": memory.reserved, "used": memory.used,
            "used_high": memory.used_high,
            "graph_used": memory.graph_used if graph else None,
            "graph_used_high": memory.graph_used_high if graph else None}


class Conv:
    """A compiled convolution."""

    def __init__(self, handle, spec, packed_filter=False):
        self._handle = handle
        self.spec = spec
        # "fprop", "dgrad" or "wgrad" (Engine.compile's kind).
        self.kind = {v: k for k, v in _KINDS.items()}[
            _library().conv3d_conv_kind(handle)]
        # Whether the filter operand is Engine.quantize_filter's codes.
        self.packed_filter = packed_filter
        self.compile_millis = _library().conv3d_compile_millis(handle)
        # "compiled", "memory cache" or "disk cache".
        self.compile_source = ("compiled", "memory cache", "disk cache")[
            _library().conv3d_compile_source(handle)]
        # The tile configuration (key=value pairs; the tuner's choice with
        # tune=True), or "heuristic".
        self.config = _library().conv3d_conv_config(handle).decode() or "heuristic"

    def run(self, input, filter, output, bias=None, residual=None, amax=0.0,
            stream=None, filter_scales=None, filter_amax=0.0):
        """Runs on buffer addresses (ints): host memory for cpu, device
        memory for GPU targets. GPU work is enqueued on `stream`, a CUstream
        handle such as torch.cuda.current_stream().cuda_stream, without
        waiting for it; 0 is the legacy default stream (PyTorch's default).
        With stream=None the call runs on an internal stream and returns
        when the work is done. A convolution compiled with
        packed_filter=True takes the codes as `filter`, and the scales'
        address and the amax they were packed with as `filter_scales` and
        `filter_amax` (Engine.quantize_filter)."""
        if stream is not None and int(stream) == 0:
            stream = _STREAM_LEGACY
        error = ctypes.create_string_buffer(4096)
        if self.packed_filter:
            if not filter_scales:
                raise ValueError("this convolution has a packed filter: pass "
                                 "filter_scales (and filter_amax)")
            args = RunArgs(self._handle, input, filter, bias, residual, output,
                           stream, ctypes.cast(error, ctypes.c_void_p), len(error),
                           amax)
            if _library().conv3d_run_packed_filter(ctypes.byref(args), filter_scales,
                                                   ctypes.c_float(filter_amax)):
                raise Conv3dError(error.value.decode())
            return
        if filter_scales is not None:
            raise ValueError("filter_scales is given but the convolution was "
                             "compiled without packed_filter=True")
        status = _library().conv3d_run(self._handle, input, filter, bias,
                                       residual, ctypes.c_float(amax), output,
                                       stream, error, len(error))
        if status:
            raise Conv3dError(error.value.decode())

    def run_gradient(self, grad_output, output, input=None, filter=None, stream=None,
                     pre_activation=None):
        """Runs a gradient compiled with kind="dgrad" (reads `grad_output`
        and `filter`, writes the input's gradient, N x D x H x W x C, to
        `output`) or kind="wgrad" (reads `input` and `grad_output`, writes
        the filter's gradient in the spec's layout), on buffer addresses as
        run() takes them; the operand the kind does not read stays None.
        A dgrad compiled through an activation (Spec.from_shapes(kind="dgrad",
        activation=..., residual=True)) also reads `pre_activation` (the
        input's shape and dtype, as grad_output's) and multiplies the gradient by the
        activation's derivative there."""
        if stream is not None and int(stream) == 0:
            stream = _STREAM_LEGACY
        error = ctypes.create_string_buffer(4096)
        if pre_activation is not None:
            if input is not None:
                raise ValueError("a dgrad through an activation reads grad_output, "
                                 "filter and pre_activation; input must be None")
            status = _library().conv3d_run_dgrad_through_activation(
                self._handle, filter, grad_output, pre_activation, output, stream, error,
                len(error))
        else:
            status = _library().conv3d_run_gradient(self._handle, input, filter,
                                                    grad_output, output, stream, error,
                                                    len(error))
        if status:
            raise Conv3dError(error.value.decode())

    def __del__(self, _loaded=_capi.loaded):
        # (_loaded bound at definition: module globals may be gone at exit.)
        lib = _loaded()
        if self._handle and lib is not None:
            lib.conv3d_conv_destroy(self._handle)
            self._handle = None


class Engine:
    """Compiles convolutions (see conv3d/Runtime/Engine.h)."""

    _DEFAULT_CACHE = object()

    def __init__(self, cache_dir=_DEFAULT_CACHE):
        """cache_dir: the disk cache of compiled convolutions; by default
        $CONV3D_CACHE_DIR, else $XDG_CACHE_HOME/conv3d-mlir, else
        ~/.cache/conv3d-mlir; None or "": no disk cache."""
        if cache_dir is Engine._DEFAULT_CACHE:
            self._handle = _library().conv3d_engine_create()
        else:
            self._handle = _library().conv3d_engine_create_with_cache(
                (cache_dir or "").encode())

    def compile(self, spec, target="cpu", config=None, qslice=None,
                quant_placement=None, lowering=None, gpu_chip=None, tune=False,
                packed_filter=False, nvfp4_mode=None, prologue_placement=None,
                selection=None, kind=None, wgrad_fold=None):
        """Compiles `spec` (cached per spec and options). tune=True times the
        heuristic's and nearby tile configurations on the device (the host
        for "cpu") once per convolution and compiles the fastest; the choice
        is kept in the disk cache, like cudnn.benchmark. packed_filter=True:
        the filter operand is quantize_filter's packed NVFP4 filter (FQRSC,
        C a multiple of 16); nvfp4_mode "fake" multiplies its dequantized
        values, "real" (the block-scaled sm100 MMA, never run: no sm_100
        GPU) needs target="sm100", where compiling is refused as for every
        sm100 convolution. prologue_placement: where a spec's input prologue
        (RMS norm, activation) runs, "prepass" (the default: one pass over
        the input, then a plain convolution on any kernel) or "fused" (in
        the loads of the CPU and sm80 kernels). selection: how the tile
        configuration is chosen without `config`, "model" (the default: on
        sm90 the candidate the cost model predicts fastest) or "heuristic"
        (the kernel families' rules). kind: "fprop" (the convolution),
        "dgrad" or "wgrad" (its data or weight gradient: `spec` describes
        the forward; run with Conv.run_gradient); None: the spec's own
        (Spec.from_shapes(kind=...), "fprop" by default). wgrad_fold: how a
        weight gradient's output positions become its forward convolution's
        channels, "auto" (the default: the fold the target's cost model
        prices cheaper), "width" or "height-width" (docs/python.md)."""
        if kind is None:
            kind = getattr(spec, "kind", "fprop")
        kind_code = _choice(_KINDS, kind, "kind")
        options = [f"target={target}"]
        if tune:
            options.append("tune=true")
        for key, value in (("config", config), ("qslice", qslice),
                           ("quant-placement", quant_placement),
                           ("lowering", lowering), ("gpu-chip", gpu_chip),
                           ("nvfp4-mode", nvfp4_mode),
                           ("prologue-placement", prologue_placement),
                           ("selection", selection), ("wgrad-fold", wgrad_fold)):
            if value:
                options.append(f"{key}={value}")
        error = ctypes.create_string_buffer(16384)
        if kind_code != _KINDS["fprop"]:
            if packed_filter:
                raise ValueError("a gradient (kind=%r) takes no packed filter" % kind)
            handle = _library().conv3d_compile_kind(
                self._handle, ctypes.byref(spec), kind_code, " ".join(options).encode(),
                error, len(error))
        elif packed_filter:
            handle = _library().conv3d_compile_filter_ext(
                self._handle, ctypes.byref(spec), None, ctypes.byref(FilterExt(1)),
                " ".join(options).encode(), error, len(error))
        else:
            handle = _library().conv3d_compile(self._handle, ctypes.byref(spec),
                                               " ".join(options).encode(), error,
                                               len(error))
        if not handle:
            raise Conv3dError(error.value.decode())
        return Conv(handle, spec, packed_filter=bool(packed_filter))

    def quantize_filter(self, spec, w, amax, target="cpu"):
        """Packs `w`, the FQRSC filter of `spec` (a C-contiguous NumPy array
        of shape (F, Q, R, S, C) in the spec's dtype), as real NVFP4 with
        global amax `amax`, blocks of 16 along C: returns (codes, scales),
        uint8 arrays of shapes (F, Q, R, S, C/2) (two E2M1 codes a byte,
        element 2i in the low nibble) and (F, Q, R, S, C/16) (E4M3 bytes).
        The packing kernel runs on `target` (the host for "cpu"); the arrays
        are host memory either way."""
        import numpy
        from ._arrays import _numpy_dtype_name, numpy_address, numpy_dtype
        if not isinstance(w, numpy.ndarray):
            raise TypeError("quantize_filter takes a NumPy array, got %s"
                            % type(w).__name__)
        lib = _library()
        error = ctypes.create_string_buffer(4096)
        codes_bytes, scales_bytes = ctypes.c_size_t(), ctypes.c_size_t()
        if lib.conv3d_packed_filter_sizes(ctypes.byref(spec), ctypes.byref(codes_bytes),
                                          ctypes.byref(scales_bytes), error, len(error)):
            raise Conv3dError(error.value.decode())
        dtype = {v: k for k, v in _DTYPES.items()}[spec.input_type]
        if _numpy_dtype_name(w.dtype) != dtype:
            hint = ""
            if dtype == "bf16":
                try:
                    numpy_dtype(dtype)
                except TypeError as e:
                    hint = " (%s)" % e
            raise TypeError("the filter is %s, the spec's dtype %s%s"
                            % (_numpy_dtype_name(w.dtype), dtype, hint))
        shape = (spec.filters, spec.window[0], spec.window[1], spec.window[2],
                 spec.channels)
        if tuple(w.shape) != shape:
            raise ValueError("the filter is %s; the spec's FQRSC filter is F x Q x R "
                             "x S x C = %s" % ("x".join(map(str, w.shape)),
                                               " x ".join(map(str, shape))))
        if not w.flags.c_contiguous:
            raise ValueError("the filter must be C-contiguous")
        codes = numpy.empty(shape[:4] + (shape[4] // 2,), dtype=numpy.uint8)
        scales = numpy.empty(shape[:4] + (shape[4] // 16,), dtype=numpy.uint8)
        assert codes.nbytes == codes_bytes.value and scales.nbytes == scales_bytes.value
        if lib.conv3d_quantize_filter(self._handle, ctypes.byref(spec), numpy_address(w),
                                      ctypes.c_float(amax), f"target={target}".encode(),
                                      numpy_address(codes), codes.nbytes,
                                      numpy_address(scales), scales.nbytes, error,
                                      len(error)):
            raise Conv3dError(error.value.decode())
        return codes, scales

    def __del__(self, _loaded=_capi.loaded):
        lib = _loaded()
        if self._handle and lib is not None:
            lib.conv3d_engine_destroy(self._handle)
            self._handle = None


from ._functional import cached_plans, clear_cache, conv3d  # noqa: E402
from ._stream import CausalConv3dStream  # noqa: E402
from ._explain import explain  # noqa: E402
