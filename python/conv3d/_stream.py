"""Causal convolution over a sequence fed chunk by chunk (video VAEs).

    stream = conv3d.CausalConv3dStream(weight, bias, padding_hw=(1, 1, 1, 1),
                                       norm_gamma=gamma, input_activation="silu")
    for chunk in chunks:            # N x L x H x W x C arrays, any L >= 1
        y = stream.step(chunk)      # N x Lo x Ho x Wo x F
    stream.reset()

Each step returns exactly the output frames the full-sequence causal
convolution (depth padding (Q-1)*dilation before, 0 after) gives for the
chunk; the library keeps the last frames of the transformed input and hands
them to the compiled convolution as its history operand, never concatenating
them with the chunk. The CPU target takes host arrays (NumPy, or PyTorch CPU
tensors in NDHWC order); GPU targets (target="sm80", or "sm90", whose
kernel reads the cache in place after the compiled prologue prepass) take PyTorch CUDA tensors for the
chunks and return CUDA tensors, keep the cache on the
device, and enqueue the work on PyTorch's current stream. The weights are
host arrays either way. See CausalConv3dStream in conv3d/Runtime.
"""

import ctypes
import sys

from . import Conv3dError, Engine, Spec
from . import _arrays
from ._capi import ACTIVATIONS as _ACTIVATIONS, DTYPES as _DTYPES, LAYOUTS as _LAYOUTS
from ._capi import InputExt
from ._capi import library as _lib

__all__ = ["CausalConv3dStream", "InputExt", "ConvExt", "compile_ext"]


class ConvExt:
    """A convolution compiled with an InputExt (history frames, input
    prologue): run() on buffer addresses, like Conv.run."""

    def __init__(self, handle, spec, ext):
        self._handle = handle
        self.spec = spec
        self.ext = ext
        shape = (ctypes.c_int64 * 5)()
        flops = ctypes.c_double()
        error = ctypes.create_string_buffer(4096)
        if _lib().conv3d_spec_geometry_ext(ctypes.byref(spec), ctypes.byref(ext), shape,
                                           ctypes.byref(flops), error, len(error)):
            raise Conv3dError(error.value.decode())
        self.output_shape = tuple(shape)

    def run(self, input, filter, output, history=None, norm_gamma=None, norm_beta=None,
            bias=None, residual=None, stream=None):
        error = ctypes.create_string_buffer(4096)
        if _lib().conv3d_run_ext(self._handle, input, history, filter, norm_gamma,
                                 norm_beta, bias, residual, ctypes.c_float(0.0), output,
                                 stream, error, len(error)):
            raise Conv3dError(error.value.decode())

    def __del__(self):
        if getattr(self, "_handle", None):
            try:
                _lib().conv3d_conv_destroy(self._handle)
            except Exception:  # noqa: BLE001 - interpreter shutdown
                pass
            self._handle = None


def compile_ext(engine, spec, ext, target="cpu", prologue_placement=None):
    """Compiles `spec` (whose depth is the input's own) with `ext`;
    prologue_placement: "prepass" (the compiler's default) or "fused"."""
    error = ctypes.create_string_buffer(16384)
    options = "target=%s" % target
    if prologue_placement:
        options += " prologue-placement=%s" % prologue_placement
    handle = _lib().conv3d_compile_ext(engine._handle, ctypes.byref(spec), ctypes.byref(ext),
                                       options.encode(), error, len(error))
    if not handle:
        raise Conv3dError(error.value.decode())
    return ConvExt(handle, spec, ext)


def _triple(value, what):
    if isinstance(value, int):
        return (value,) * 3
    value = tuple(int(v) for v in value)
    if len(value) != 3:
        raise ValueError("%s must be an int or 3 ints, got %r" % (what, value))
    return value


def _contiguous_view(a, what, rank, device="cpu"):
    v = _arrays.view(a, what)
    if v.device[0] != device:
        if device == "cpu":
            raise Conv3dError("%s is on %s: it must be a host array here (the CPU "
                              "target's data, and the weights of every target)"
                              % (what, v.device[0]))
        raise Conv3dError("%s is on %s: a GPU target's stream takes CUDA arrays"
                          % (what, v.device[0]))
    if len(v.shape) != rank:
        raise ValueError("%s must have rank %d, got shape %s" % (what, rank, tuple(v.shape)))
    if not _arrays.is_dense(v.shape, v.strides):
        raise ValueError("%s must be contiguous (row-major), got strides %s (elements) "
                         "for shape %s" % (what, v.strides, v.shape))
    return v


def _nbytes(v):
    count = 1
    for extent in v.shape:
        count *= extent
    return count * v.itemsize


def _empty_like(sample, shape, dtype_name):
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(sample, torch.Tensor):
        dtypes = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32}
        return torch.empty(shape, dtype=dtypes[dtype_name], device=sample.device)
    import numpy
    return numpy.empty(shape, dtype=_arrays.numpy_dtype(dtype_name))


class CausalConv3dStream:
    """A causal 3-D convolution applied chunk by chunk along depth.

    weight: (Q, R, S, C, F) for filter_layout="qrscf", (F, Q, R, S, C) for
    "fqrsc"; bias: F float32 values. The depth padding is causal; padding_hw
    = (h_lo, h_hi, w_lo, w_hi). The input prologue, applied to every input
    frame (the cached frames are kept transformed): norm_gamma (C float32,
    an RMS norm over the channels with norm_eps) with an optional norm_beta,
    then input_activation. The epilogue: bias, activation, then a residual
    passed to step() when residual=True. The spec (batch, height, width,
    dtype) is taken from the first chunk.
    """

    def __init__(self, weight, bias=None, *, stride=1, dilation=1,
                 padding_hw=(0, 0, 0, 0), filter_layout="qrscf", activation="none",
                 residual=False, norm_gamma=None, norm_beta=None, norm_eps=1e-6,
                 input_activation="none", output_dtype=None, engine=None,
                 target="cpu"):
        if filter_layout not in _LAYOUTS:
            raise ValueError("filter_layout must be qrscf or fqrsc, got %r" % filter_layout)
        for name, value in (("activation", activation),
                            ("input_activation", input_activation)):
            if value not in _ACTIVATIONS:
                raise ValueError("%s must be one of %s, got %r"
                                 % (name, ", ".join(_ACTIVATIONS), value))
        if norm_beta is not None and norm_gamma is None:
            raise ValueError("norm_beta needs norm_gamma")
        if output_dtype is not None and output_dtype not in _DTYPES:
            raise ValueError("output_dtype must be None or one of %s, got %r"
                             % (", ".join(_DTYPES), output_dtype))
        self._weight = _contiguous_view(weight, "weight", 5)
        if self._weight.dtype not in _arrays.SUPPORTED_DTYPES:
            raise TypeError("the weight has dtype %s: conv3d computes in bf16, f16 or f32"
                            % self._weight.dtype)
        shape = tuple(self._weight.shape)
        channels, filters = (shape[3], shape[4]) if filter_layout == "qrscf" \
            else (shape[4], shape[0])
        # Every vector is read whole by the library: its length is checked
        # here (and again by conv3d_causal_stream_create, which takes it).
        self._vectors = {}
        for name, value, length, per in (("bias", bias, filters, "filter"),
                                         ("norm_gamma", norm_gamma, channels, "channel"),
                                         ("norm_beta", norm_beta, channels, "channel")):
            if value is not None:
                v = _contiguous_view(value, name, 1)
                if v.dtype != "f32":
                    raise TypeError("%s must be float32, got %s" % (name, v.dtype))
                if v.shape[0] != length:
                    raise ValueError("%s has %d values; the weight %s needs %d (one per %s)"
                                     % (name, v.shape[0], "x".join(map(str, shape)),
                                        length, per))
                self._vectors[name] = v
        self._stride = _triple(stride, "stride")
        self._dilation = _triple(dilation, "dilation")
        self._padding_hw = tuple(int(p) for p in padding_hw)
        if len(self._padding_hw) != 4:
            raise ValueError("padding_hw must be (h_lo, h_hi, w_lo, w_hi)")
        self._layout = filter_layout
        self._activation = activation
        self._residual = bool(residual)
        self._norm_eps = float(norm_eps)
        self._input_activation = input_activation
        self._output_dtype = output_dtype
        self._engine = engine or Engine()
        self._target = target
        self._handle = None
        self._dtype = None

    def _create(self, chunk):
        n, _, h, w, c = chunk.shape
        shape = tuple(self._weight.shape)
        if self._layout == "qrscf":
            q, r, s, wc, f = shape
        else:
            f, q, r, s, wc = shape
        if wc != c:
            raise Conv3dError("the weight has C = %d, the chunk C = %d" % (wc, c))
        if self._weight.dtype != chunk.dtype:
            raise Conv3dError("the weight is %s, the chunk %s"
                              % (self._weight.dtype, chunk.dtype))
        span = (q - 1) * self._dilation[0]
        spec = Spec.from_shapes(
            (n, 1, h, w, c), (q, r, s, c, f), strides=self._stride,
            dilations=self._dilation, padding=(span, 0) + self._padding_hw,
            filter_layout=self._layout, dtype=chunk.dtype,
            output_dtype=self._output_dtype or chunk.dtype,
            bias="bias" in self._vectors, residual=self._residual,
            activation=self._activation)
        ext = InputExt(0, int("norm_gamma" in self._vectors),
                       int("norm_beta" in self._vectors), self._norm_eps,
                       _ACTIVATIONS[self._input_activation])
        buffers = [self._weight.ptr, _nbytes(self._weight)]
        for name in ("bias", "norm_gamma", "norm_beta"):
            v = self._vectors.get(name)
            buffers += [None, 0] if v is None else [v.ptr, _nbytes(v)]
        error = ctypes.create_string_buffer(16384)
        handle = _lib().conv3d_causal_stream_create(
            self._engine._handle, ctypes.byref(spec), ctypes.byref(ext),
            ("target=%s" % self._target).encode(), *buffers, error, len(error))
        if not handle:
            raise Conv3dError(error.value.decode())
        self._handle, self._spec, self._dtype = handle, spec, chunk.dtype
        self._out_hw = spec.output_shape()[2:]

    def output_frames(self, length):
        """The output frames the next chunk of `length` frames gives."""
        if self._handle is None:
            stride = self._stride[0]
            return -(-int(length) // stride)
        return _lib().conv3d_causal_stream_output_frames(self._handle, int(length))

    def step(self, chunk, residual=None):
        """Convolves the next chunk (N x L x H x W x C, contiguous) and
        returns the output frames whose windows end in it."""
        device = "cpu" if self._target == "cpu" else "cuda"
        torch = sys.modules.get("torch")
        if device == "cuda" and (torch is None or not isinstance(chunk, torch.Tensor)):
            raise Conv3dError("target=%s takes PyTorch CUDA tensors as chunks, got %s"
                              % (self._target, type(chunk).__name__))
        v = _contiguous_view(chunk, "chunk", 5, device)
        if self._handle is None:
            self._create(v)
            self._frame_shape = (v.shape[0],) + tuple(v.shape[2:])
        elif v.dtype != self._dtype:
            raise Conv3dError("the chunk is %s, the stream's input %s" % (v.dtype, self._dtype))
        elif (v.shape[0],) + tuple(v.shape[2:]) != self._frame_shape:
            n, h, w, c = self._frame_shape
            raise Conv3dError("the chunk is %s; the stream takes N x L x H x W x C = "
                              "%d x L x %d x %d x %d" % ("x".join(map(str, v.shape)),
                                                         n, h, w, c))
        length = v.shape[1]
        frames = self.output_frames(length)
        out_dtype = self._output_dtype or self._dtype
        out = _empty_like(chunk, (v.shape[0], frames) + tuple(self._out_hw), out_dtype)
        out_ptr = _arrays.view(out, "output").ptr
        res_ptr = None
        if residual is not None:
            r = _contiguous_view(residual, "residual", 5, device)
            if tuple(r.shape) != tuple(out.shape) or r.dtype != out_dtype:
                raise Conv3dError("the residual is %s %s; the step needs %s %s"
                                  % (tuple(r.shape), r.dtype, tuple(out.shape), out_dtype))
            res_ptr = r.ptr
        # GPU work goes on PyTorch's current stream when there is one (the
        # legacy default stream's handle 0 is passed as 1), else it blocks.
        stream = None
        if device == "cuda":
            stream = torch.cuda.current_stream(chunk.device).cuda_stream or 1
        error = ctypes.create_string_buffer(16384)
        if _lib().conv3d_causal_stream_step_async(self._handle, v.ptr, length, res_ptr,
                                                  out_ptr, stream, error, len(error)):
            raise Conv3dError(error.value.decode())
        return out

    def reset(self):
        """Forgets the sequence: the next chunk is a first chunk."""
        if self._handle is not None:
            _lib().conv3d_causal_stream_reset(self._handle)

    @property
    def frames_seen(self):
        return _lib().conv3d_causal_stream_frames_seen(self._handle) if self._handle else 0

    @property
    def cached_frames(self):
        return _lib().conv3d_causal_stream_cached_frames(self._handle) if self._handle else 0

    def __del__(self):
        if getattr(self, "_handle", None) and _arrays is not None:
            try:
                _lib().conv3d_causal_stream_destroy(self._handle)
            except Exception:  # noqa: BLE001 - interpreter shutdown
                pass
            self._handle = None
