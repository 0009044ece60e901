"""What conv3d needs to know about an array, from any library.

An operand is described by an `ArrayView`: its library ("numpy", "torch",
"cupy", or "dlpack" for any other DLPack producer), element type, logical
shape, strides in elements, data address and device. NumPy, PyTorch and CuPy
arrays are read through their own attributes (cheaper than a DLPack capsule
per call, and NumPy refuses to export read-only arrays through DLPack); every
other array through `__dlpack__` / `__dlpack_device__`, parsed with ctypes.

The few things conv3d asks of an array's library (allocate, change the
memory layout, convert the bias to float32, find the current stream) are the
`Library` methods below; a generic DLPack producer supports what its array
API namespace (`__array_namespace__`) offers, and is refused by name
otherwise.
"""

import ctypes
import sys

# DLPack device types (dlpack.h).
_DL_CPU, _DL_CUDA, _DL_CUDA_HOST, _DL_CUDA_MANAGED = 1, 2, 3, 13
# DLPack type codes.
_DL_INT, _DL_UINT, _DL_FLOAT, _DL_BFLOAT = 0, 1, 2, 4

# Element types conv3d computes in, by name.
SUPPORTED_DTYPES = ("bf16", "f16", "f32")

_STREAM_LEGACY = 1  # CU_STREAM_LEGACY


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8),
                ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice),
                ("ndim", ctypes.c_int32), ("dtype", _DLDataType),
                # Addresses of int64 arrays (read whole by _int64s).
                ("shape", ctypes.c_void_p), ("strides", ctypes.c_void_p),
                ("byte_offset", ctypes.c_uint64)]


_int64_arrays = {}


def _int64s(address, count):
    """The `count` int64 values at `address`, as a tuple (one ctypes array
    instead of an object per element)."""
    kind = _int64_arrays.get(count)
    if kind is None:
        kind = _int64_arrays[count] = ctypes.c_int64 * count
    return tuple(kind.from_address(address))


_capsule_get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_get_pointer.restype = ctypes.c_void_p
_capsule_get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


class _PyArrayInterface(ctypes.Structure):
    """NumPy's PyArrayInterface, what an array's __array_struct__ capsule
    points to (the array interface protocol, C version)."""

    _fields_ = [("two", ctypes.c_int), ("nd", ctypes.c_int), ("typekind", ctypes.c_char),
                ("itemsize", ctypes.c_int), ("flags", ctypes.c_int),
                ("shape", ctypes.c_void_p), ("strides", ctypes.c_void_p),
                ("data", ctypes.c_void_p), ("descr", ctypes.c_void_p)]


_INTERFACE_DATA = _PyArrayInterface.data.offset
_pointer_at = ctypes.c_void_p.from_address


def numpy_address(a):
    """The data address of NumPy array `a`: a.ctypes.data without building
    a.ctypes (a Python object per call; this is about 3x cheaper)."""
    return _pointer_at(_capsule_get_pointer(a.__array_struct__, None)
                       + _INTERFACE_DATA).value or 0


class ArrayView:
    """One operand: library, dtype name (or a description of an unsupported
    one), shape, strides (elements), address, device ("cpu", -1) or
    ("cuda", ordinal), and the array itself."""

    __slots__ = ("library", "dtype", "shape", "strides", "ptr", "device",
                 "array", "itemsize")

    def __init__(self, library, dtype, shape, strides, ptr, device, array,
                 itemsize):
        self.library = library
        self.dtype = dtype
        self.shape = tuple(shape)
        self.strides = tuple(strides)
        self.ptr = ptr
        self.device = device
        self.array = array
        self.itemsize = itemsize


def _dtype_name(code, bits, lanes=1):
    if lanes == 1:
        if code == _DL_BFLOAT and bits == 16:
            return "bf16"
        if code == _DL_FLOAT and bits in (16, 32, 64):
            return "f%d" % bits
        kind = {_DL_INT: "int", _DL_UINT: "uint", _DL_FLOAT: "float",
                _DL_BFLOAT: "bfloat"}.get(code, "type code %d " % code)
        return "%s%d" % (kind, bits)
    return "vector of %d x type code %d/%d bits" % (lanes, code, bits)


_NUMPY_DTYPES = {"float16": "f16", "float32": "f32", "bfloat16": "bf16"}
_NUMPY_NAMES = {"f16": "float16", "f32": "float32", "bf16": "bfloat16"}
_TORCH_DTYPES = {"torch.float16": "f16", "torch.float32": "f32",
                 "torch.bfloat16": "bf16"}


_torch_dtype_names = None
_torch_strided = None


def _torch_view(t):
    global _torch_dtype_names, _torch_strided
    if _torch_dtype_names is None:
        torch = sys.modules["torch"]
        _torch_dtype_names = {torch.float16: "f16", torch.float32: "f32",
                              torch.bfloat16: "bf16"}
        _torch_strided = torch.strided
    if t.layout is not _torch_strided:
        raise TypeError("a tensor with layout %s: conv3d takes dense (strided) tensors"
                        % t.layout)
    dtype = _torch_dtype_names.get(t.dtype) or str(t.dtype).replace("torch.", "")
    if t.is_cuda:
        dev = ("cuda", t.get_device())
    else:
        device = t.device
        dev = ("cpu", -1) if device.type == "cpu" else (
            device.type, device.index if device.index is not None else 0)
    return ArrayView("torch", dtype, t.shape, t.stride(), t.data_ptr(), dev, t,
                     t.element_size())


_numpy_dtype_names = {}


def _numpy_dtype_name(dtype):
    # dtype.name is slow (microseconds); dtypes hash, so cache by dtype.
    name = _numpy_dtype_names.get(dtype)
    if name is None:
        if dtype.isnative:
            name = _NUMPY_DTYPES.get(dtype.name, dtype.name)
        else:
            name = "%s in non-native byte order (%s)" % (dtype.name, dtype.str)
        _numpy_dtype_names[dtype] = name
    return name


def _numpy_view(a):
    itemsize = a.itemsize
    strides = a.strides
    if any(s % itemsize for s in strides):
        raise ValueError("array strides %s (bytes) are not multiples of the element "
                         "size %d" % (strides, itemsize))
    return ArrayView("numpy", _numpy_dtype_name(a.dtype), a.shape,
                     tuple(s // itemsize for s in strides), numpy_address(a), ("cpu", -1), a,
                     itemsize)


def _cupy_view(a):
    itemsize = a.itemsize
    strides = a.strides
    if any(s % itemsize for s in strides):
        raise ValueError("array strides %s (bytes) are not multiples of the element "
                         "size %d" % (strides, itemsize))
    return ArrayView("cupy", _numpy_dtype_name(a.dtype), a.shape, tuple(s // itemsize for s in strides),
                     a.data.ptr, ("cuda", a.device.id), a, itemsize)


def read_dlpack(a):
    """What a DLPack producer's array is: (device, (type code, bits, lanes),
    shape, strides in elements or None for compact row-major, address,
    capsule). The capsule owns the exported DLManagedTensor (its destructor
    calls the producer's deleter): keep it while the address is used.
    TypeError or ValueError naming the problem."""
    try:
        device_type, device_id = a.__dlpack_device__()
    except Exception as e:  # noqa: BLE001 - the producer's own error, named
        raise TypeError("%s.__dlpack_device__() failed: %s" % (type(a).__name__, e))
    device_type = int(device_type)
    if device_type in (_DL_CPU, _DL_CUDA_HOST):
        dev = ("cpu", -1)
    elif device_type in (_DL_CUDA, _DL_CUDA_MANAGED):
        dev = ("cuda", int(device_id))
    else:
        raise ValueError("%s lives on DLPack device type %d: conv3d runs on the CPU "
                         "and CUDA devices" % (type(a).__name__, device_type))
    try:
        # The consumer's stream for CUDA producers: the legacy default
        # stream, which conv3d then runs on (see Library.stream).
        capsule = a.__dlpack__(stream=_STREAM_LEGACY) if dev[0] == "cuda" \
            else a.__dlpack__()
    except BufferError as e:
        raise ValueError("%s cannot be exported through DLPack: %s"
                         % (type(a).__name__, e))
    t = _DLTensor.from_address(_capsule_get_pointer(capsule, b"dltensor"))
    ndim = t.ndim
    strides = None
    if ndim <= 0:
        shape = strides = ()
    elif not t.shape:
        raise ValueError("%s exported a DLPack tensor of rank %d without a shape"
                         % (type(a).__name__, ndim))
    else:
        shape = _int64s(t.shape, ndim)
        if t.strides:
            strides = _int64s(t.strides, ndim)
    dtype = t.dtype
    return (dev, (dtype.code, dtype.bits, dtype.lanes), shape, strides,
            (t.data or 0) + t.byte_offset, capsule)


def is_dense(shape, strides, order=None):
    """Whether `strides` (elements) are those of a dense array whose
    dimensions, from outermost to innermost in memory, are `order` (default:
    row-major). The one layout test of the package: a dimension of extent 1
    may have any stride (NumPy, PyTorch and DLPack call such arrays
    contiguous: x[:, 2:5] of a batch-1 array keeps its batch stride), and an
    array without elements is dense in every order (NumPy gives it zero
    strides)."""
    if 0 in shape:
        return True
    expected = 1
    for dim in reversed(range(len(shape)) if order is None else order):
        if shape[dim] != 1 and strides[dim] != expected:
            return False
        expected *= shape[dim]
    return True


def numpy_dtype(name):
    """The NumPy dtype of element type `name` ("bf16", "f16", "f32"):
    bfloat16 is ml_dtypes' (NumPy has none); TypeError naming ml_dtypes when
    it is not installed."""
    numpy = sys.modules.get("numpy") or __import__("numpy")
    if name == "bf16":
        try:
            import ml_dtypes
        except ImportError:
            raise TypeError(ML_DTYPES_MISSING) from None
        return numpy.dtype(ml_dtypes.bfloat16)
    return numpy.dtype(_NUMPY_NAMES[name])


ML_DTYPES_MISSING = ("bfloat16 NumPy arrays need the ml_dtypes package (NumPy has no "
                     "bfloat16), which is not installed: pip install ml_dtypes")


def _compact_strides(shape):
    strides, step = [], 1
    for extent in reversed(shape):
        strides.insert(0, step)
        step *= extent
    return tuple(strides)


def _dlpack_view(a, stream):
    return dlpack_view(a, read_dlpack(a))


def dlpack_view(a, fields):
    """The ArrayView of `a` from read_dlpack(a)'s `fields`."""
    dev, (code, bits, lanes), shape, strides, ptr, capsule = fields
    if strides is None:
        strides = _compact_strides(shape)
    view = ArrayView("dlpack", _dtype_name(code, bits, lanes), shape, strides, ptr, dev, a,
                     max(1, bits // 8))
    # The capsule stays alive while `view` holds it.
    view.array = (a, capsule)
    return view


def view(a, what):
    """The ArrayView of operand `what` (named in errors)."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(a, torch.Tensor):
        return _torch_view(a)
    numpy = sys.modules.get("numpy")
    if numpy is not None and isinstance(a, numpy.ndarray):
        return _numpy_view(a)
    cupy = sys.modules.get("cupy")
    if cupy is not None and isinstance(a, cupy.ndarray):
        return _cupy_view(a)
    if hasattr(a, "__dlpack__") and hasattr(a, "__dlpack_device__"):
        return _dlpack_view(a, None)
    raise TypeError("%s must be an array supporting DLPack (__dlpack__ and "
                    "__dlpack_device__), such as a NumPy, PyTorch or CuPy array; "
                    "got %s" % (what, type(a).__name__))


def array_of(v):
    """The array a view describes (a DLPack view holds it with its capsule)."""
    return v.array[0] if v.library == "dlpack" else v.array


class Library:
    """What conv3d asks of the library of the input array."""

    def __init__(self, name, sample):
        self.name = name
        self.sample = sample  # an array of the library, for its namespace

    # Allocation -----------------------------------------------------------
    def empty_channels_last(self, shape_ncdhw, dtype, device):
        """A new array of logical shape (N, C, D, H, W) with NDHWC memory."""
        n, c, d, h, w = shape_ncdhw
        if self.name == "torch":
            torch = sys.modules["torch"]
            return torch.empty(shape_ncdhw, dtype=self.sample.dtype,
                               device=self.sample.device,
                               memory_format=torch.channels_last_3d)
        if self.name == "numpy":
            numpy = sys.modules["numpy"]
            return numpy.empty((n, d, h, w, c), dtype=self.sample.dtype).transpose(0, 4, 1, 2, 3)
        if self.name == "cupy":
            cupy = sys.modules["cupy"]
            with cupy.cuda.Device(device[1]):
                return cupy.empty((n, d, h, w, c), dtype=self.sample.dtype).transpose(
                    0, 4, 1, 2, 3)
        if device[0] == "cpu" and not hasattr(self.sample, "__array_namespace__"):
            # A host array of an unknown library: the result is a NumPy array.
            numpy = sys.modules.get("numpy") or __import__("numpy")
            return numpy.empty((n, d, h, w, c), dtype=numpy_dtype(dtype)
                               ).transpose(0, 4, 1, 2, 3)
        xp = self._namespace("allocate the output (pass out=)")
        out = xp.empty((n, d, h, w, c), dtype=self.sample.dtype, device=self.sample.device)
        return xp.permute_dims(out, (0, 4, 1, 2, 3))

    def data_ptr(self, a):
        """The address of an array this library allocated."""
        if self.name == "torch":
            return a.data_ptr()
        if self.name == "numpy":
            return numpy_address(a)
        if self.name == "cupy":
            return a.data.ptr
        return view(a, "out").ptr

    # Layout steps ---------------------------------------------------------
    def to_channels_last(self, a):
        """A copy of a rank-5 array with NDHWC (FQRSC) memory."""
        if self.name == "torch":
            return a.contiguous(memory_format=sys.modules["torch"].channels_last_3d)
        if self.name in ("numpy", "cupy"):
            xp = sys.modules[self.name]
            return xp.ascontiguousarray(a.transpose(0, 2, 3, 4, 1)).transpose(0, 4, 1, 2, 3)
        raise ValueError(self._refusal("convert NCDHW memory to channels_last (NDHWC)"))

    def to_contiguous(self, a):
        """A row-major copy (the output back in the input's NCDHW layout)."""
        if self.name == "torch":
            return a.contiguous()
        if self.name in ("numpy", "cupy"):
            return sys.modules[self.name].ascontiguousarray(a)
        raise ValueError(self._refusal("convert the output to NCDHW memory"))

    def to_float32(self, a):
        if self.name == "torch":
            return a.float().contiguous()
        if self.name in ("numpy", "cupy"):
            xp = sys.modules[self.name]
            return xp.ascontiguousarray(a, dtype=xp.float32)
        raise ValueError(self._refusal("convert the bias to float32"))

    # Streams ----------------------------------------------------------------
    def stream(self, device):
        """The CUstream to enqueue on for `device`: the library's current
        stream (legacy default stream for a 0 handle); for other DLPack
        producers the legacy default stream, on which they were asked to make
        the data ready (__dlpack__(stream=1))."""
        if self.name == "torch":
            torch = sys.modules["torch"]
            raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
            handle = raw(device[1]) if raw else torch.cuda.current_stream(device[1]).cuda_stream
        elif self.name == "cupy":
            cupy = sys.modules["cupy"]
            with cupy.cuda.Device(device[1]):
                handle = cupy.cuda.get_current_stream().ptr
        else:
            handle = 0
        return handle or _STREAM_LEGACY

    def _namespace(self, purpose):
        if hasattr(self.sample, "__array_namespace__"):
            return self.sample.__array_namespace__()
        raise ValueError(self._refusal(purpose))

    def _refusal(self, purpose):
        return ("conv3d cannot %s for arrays of type %s (only NumPy, PyTorch and "
                "CuPy arrays, or array-API arrays, can be allocated and converted): "
                "pass channels_last (NDHWC) operands, a float32 bias and out="
                % (purpose, type(self.sample).__name__))
