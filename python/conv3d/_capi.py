"""The C API of libConv3d.so (include/conv3d/CAPI/conv3d.h) for ctypes: its
enums, its structures, every function's prototype, and finding and loading
the library. The one place that mirrors conv3d.h: a C function the package
calls is declared in _PROTOTYPES below (and nowhere else), and a structure
here has conv3d.h's fields in conv3d.h's order.

The library is loaded on first use (importing the package does not load
it) from $CONV3D_LIB, the copy a wheel ships inside the package, the
install prefix, a build tree or the loader's path (library_candidates); a
file that loads but is not conv3d-mlir's library (or is one of another
version, lacking a function declared here) is refused in one line.
"""

import ctypes
import os

__all__ = ["Conv3dError", "DTYPES", "LAYOUTS", "ACTIVATIONS", "KINDS", "STREAM_LEGACY",
           "SpecFields", "RunArgs", "FilterExt", "DeviceInfo", "PoolMemory", "InputExt", "library",
           "library_path", "library_candidates", "LIBRARY_NAME", "PACKAGED_LIBRARY_DIR"]


class Conv3dError(RuntimeError):
    """An error reported by the engine (bad spec, compile or run failure)."""


Conv3dError.__module__ = "conv3d"  # its public name: conv3d.Conv3dError


# conv3d.h's enums, by the names the package uses.
DTYPES = {"bf16": 0, "f16": 1, "f32": 2}
LAYOUTS = {"qrscf": 0, "fqrsc": 1}
ACTIVATIONS = {"none": 0, "relu": 1, "silu": 2, "gelu_tanh": 3}
KINDS = {"fprop": 0, "dgrad": 1, "wgrad": 2}
# CONV3D_STREAM_LEGACY (CU_STREAM_LEGACY): what a 0 CUstream means to CUDA.
STREAM_LEGACY = 1


# Structures -------------------------------------------------------------------


class SpecFields(ctypes.Structure):
    """conv3d_spec's fields (conv3d.Spec adds the Python side)."""

    _fields_ = [
        ("batch", ctypes.c_int64), ("depth", ctypes.c_int64),
        ("height", ctypes.c_int64), ("width", ctypes.c_int64),
        ("channels", ctypes.c_int64), ("window", ctypes.c_int64 * 3),
        ("filters", ctypes.c_int64), ("strides", ctypes.c_int64 * 3),
        ("dilations", ctypes.c_int64 * 3), ("padding", ctypes.c_int64 * 6),
        ("filter_layout", ctypes.c_int32), ("input_type", ctypes.c_int32),
        ("output_type", ctypes.c_int32), ("has_bias", ctypes.c_int32),
        ("has_residual", ctypes.c_int32), ("accumulate", ctypes.c_int32),
        ("activation", ctypes.c_int32), ("quant_block_size", ctypes.c_int32),
        ("groups", ctypes.c_int32),
    ]


class RunArgs(ctypes.Structure):
    """conv3d_run_args (conv3d_run_packed)."""

    _fields_ = [("conv", ctypes.c_void_p), ("input", ctypes.c_void_p),
                ("filter", ctypes.c_void_p), ("bias", ctypes.c_void_p),
                ("residual", ctypes.c_void_p), ("output", ctypes.c_void_p),
                ("stream", ctypes.c_void_p), ("error", ctypes.c_void_p),
                ("error_size", ctypes.c_size_t), ("amax", ctypes.c_float)]


class FilterExt(ctypes.Structure):
    """conv3d_filter_ext."""

    _fields_ = [("packed_filter", ctypes.c_int32)]


class DeviceInfo(ctypes.Structure):
    """conv3d_device_info."""

    _fields_ = [("ordinal", ctypes.c_int32), ("cc_major", ctypes.c_int32),
                ("cc_minor", ctypes.c_int32), ("multiprocessors", ctypes.c_int32),
                ("name", ctypes.c_char * 256)]


class PoolMemory(ctypes.Structure):
    """conv3d_pool_memory."""

    _fields_ = [("reserved", ctypes.c_uint64), ("used", ctypes.c_uint64),
                ("used_high", ctypes.c_uint64), ("graph_used", ctypes.c_uint64),
                ("graph_used_high", ctypes.c_uint64), ("graph_reported", ctypes.c_int32)]


class InputExt(ctypes.Structure):
    """conv3d_input_ext."""

    _fields_ = [("history_depth", ctypes.c_int64), ("has_norm", ctypes.c_int32),
                ("has_norm_beta", ctypes.c_int32), ("norm_eps", ctypes.c_float),
                ("input_activation", ctypes.c_int32)]


# Prototypes -------------------------------------------------------------------

_p, _size, _int, _str = ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_char_p
_i64, _f32, _f64 = ctypes.c_int64, ctypes.c_float, ctypes.c_double
_spec = ctypes.POINTER(SpecFields)
_ext = ctypes.POINTER(InputExt)
_err = [_str, _size]  # (char *error, size_t error_size), last in most functions

# name: (restype, argtypes), in conv3d.h's order. A new C function the
# package calls gets its line here: library() declares every one when it
# loads the library, and refuses a library that lacks one.
_PROTOTYPES = {
    "conv3d_version": (_str, []),
    "conv3d_cuda_device": (_int, [ctypes.POINTER(DeviceInfo)] + _err),
    "conv3d_cuda_pool_memory": (_int, [ctypes.POINTER(PoolMemory), ctypes.c_int] + _err),
    "conv3d_engine_create": (_p, []),
    "conv3d_engine_create_with_cache": (_p, [_str]),
    "conv3d_engine_destroy": (None, [_p]),
    "conv3d_spec_geometry": (_int, [_spec, ctypes.POINTER(_i64), ctypes.POINTER(_f64)]
                             + _err),
    "conv3d_compile": (_p, [_p, _spec, _str] + _err),
    "conv3d_compile_millis": (_f64, [_p]),
    "conv3d_compile_source": (_int, [_p]),
    "conv3d_conv_config": (_str, [_p]),
    "conv3d_conv_destroy": (None, [_p]),
    "conv3d_run": (_int, [_p, _p, _p, _p, _p, _f32, _p, _p] + _err),
    "conv3d_run_packed": (_int, [ctypes.POINTER(RunArgs)]),
    "conv3d_last_error": (_str, []),
    # Training: the gradients.
    "conv3d_compile_kind": (_p, [_p, _spec, ctypes.c_int32, _str] + _err),
    "conv3d_conv_kind": (_int, [_p]),
    "conv3d_run_gradient": (_int, [_p, _p, _p, _p, _p, _p] + _err),
    "conv3d_run_dgrad_through_activation": (_int, [_p, _p, _p, _p, _p, _p] + _err),
    # Streaming video decoders.
    "conv3d_spec_geometry_ext": (_int, [_spec, _ext, ctypes.POINTER(_i64),
                                        ctypes.POINTER(_f64)] + _err),
    "conv3d_compile_ext": (_p, [_p, _spec, _ext, _str] + _err),
    "conv3d_run_ext": (_int, [_p] + [_p] * 7 + [_f32, _p, _p] + _err),
    # filter, bias, norm_gamma and norm_beta, each with its size in bytes.
    "conv3d_causal_stream_create": (_p, [_p, _spec, _ext, _str] + [_p, _size] * 4 + _err),
    "conv3d_causal_stream_output_frames": (_i64, [_p, _i64]),
    "conv3d_causal_stream_step": (_int, [_p, _p, _i64, _p, _p] + _err),
    "conv3d_causal_stream_step_async": (_int, [_p, _p, _i64, _p, _p, _p] + _err),
    "conv3d_causal_stream_reset": (None, [_p]),
    "conv3d_causal_stream_frames_seen": (_i64, [_p]),
    "conv3d_causal_stream_cached_frames": (_i64, [_p]),
    "conv3d_causal_stream_destroy": (None, [_p]),
    # Packed NVFP4 filters.
    "conv3d_packed_filter_sizes": (_int, [_spec, ctypes.POINTER(_size),
                                          ctypes.POINTER(_size)] + _err),
    "conv3d_quantize_filter": (_int, [_p, _spec, _p, _f32, _str, _p, _size, _p, _size]
                               + _err),
    "conv3d_compile_filter_ext": (_p, [_p, _spec, _p, ctypes.POINTER(FilterExt), _str]
                                  + _err),
    "conv3d_run_packed_filter": (_int, [ctypes.POINTER(RunArgs), _p, _f32]),
}


# Finding and loading the library ----------------------------------------------

LIBRARY_NAME = "libConv3d.so"
# Where a wheel built by python/build_backend ships the library (and the
# C hit path's module beside it), inside the package.
PACKAGED_LIBRARY_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_lib")


def library_candidates():
    """Where libConv3d.so is looked for, in order: $CONV3D_LIB (the file, or
    a folder holding it); the copy shipped inside the package (a wheel built
    where the library was found, python/build_backend); the install prefix
    the package sits in (PREFIX/lib/libConv3d.so for
    PREFIX/lib/python3.../conv3d, as `cmake --install` lays them out); a
    build tree beside a source checkout (python/conv3d -> build/lib); then
    the system's loader path (LD_LIBRARY_PATH, ldconfig)."""
    env = os.environ.get("CONV3D_LIB", "")
    if env:
        yield os.path.join(env, LIBRARY_NAME) if os.path.isdir(env) else env
        return
    yield os.path.join(PACKAGED_LIBRARY_DIR, LIBRARY_NAME)
    folder = os.path.dirname(os.path.abspath(__file__))
    while True:
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
        yield os.path.join(folder, "lib", LIBRARY_NAME)
        yield os.path.join(folder, "build", "lib", LIBRARY_NAME)
        yield os.path.join(folder, ".gpu-carry", "lib", LIBRARY_NAME)
    yield LIBRARY_NAME


def _declare(lib, path):
    """Declares every prototype on `lib`; Conv3dError in one line for a
    library that is not conv3d-mlir's or lacks a function."""
    origin = "CONV3D_LIB=%s" % path if os.environ.get("CONV3D_LIB") else path
    missing = [name for name in _PROTOTYPES if not hasattr(lib, name)]
    if "conv3d_version" in missing:
        raise Conv3dError("%s is not conv3d-mlir's library (it has no conv3d_version "
                          "function): point CONV3D_LIB at build/lib/libConv3d.so"
                          % origin)
    if missing:
        raise Conv3dError("%s is conv3d-mlir %s, which lacks %s: this package needs "
                          "the library built from the same sources"
                          % (origin, _version_of(lib), ", ".join(missing)))
    for name, (restype, argtypes) in _PROTOTYPES.items():
        function = getattr(lib, name)
        function.restype = restype
        function.argtypes = argtypes


def _version_of(lib):
    lib.conv3d_version.restype = ctypes.c_char_p
    lib.conv3d_version.argtypes = []
    return lib.conv3d_version().decode(errors="replace")


def _load():
    tried = []
    for path in library_candidates():
        if os.sep not in path or os.path.exists(path):
            try:
                lib = ctypes.CDLL(path)
            except OSError as e:
                tried.append("%s (%s)" % (path, e))
                continue
            _declare(lib, path)
            return lib, os.path.abspath(path) if os.sep in path else path
        tried.append(path)
    raise Conv3dError("libConv3d.so not found (set CONV3D_LIB to its path); tried: "
                      + "; ".join(tried))


_lib = None
_lib_path = None


def library():
    """libConv3d.so, loaded and declared (once)."""
    global _lib, _lib_path
    if _lib is None:
        _lib, _lib_path = _load()
    return _lib


def library_path():
    """The libConv3d.so in use (see library_candidates)."""
    library()
    return _lib_path


def loaded():
    """The library if it is loaded, else None (for destructors, which must
    not load it)."""
    return _lib
