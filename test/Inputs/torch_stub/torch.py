"""A stand-in for the few PyTorch APIs conv3d's PyTorch paths use, backed by
NumPy, CPU only (float32 and float16). CI has no PyTorch: this lets
test/Python/hit-path-torch-stub.test run the PyTorch hit path's Python
(_hit._torch_conv3d: signature, miss, layout steps, allocation, address
checks, launch) on the CPU target. It checks the package's logic against
this model of PyTorch, not PyTorch itself: scripts/gpu/torch_check.py does
that on the GPU machine."""
import numpy as np

class _Dtype:
    def __init__(self, name, np_dtype): self.name, self.np = name, np_dtype
    def __repr__(self): return "torch." + self.name
float32 = _Dtype("float32", np.float32)
float16 = _Dtype("float16", np.float16)
bfloat16 = _Dtype("bfloat16", None)
class _Layout:
    def __repr__(self): return "torch.strided"
strided = _Layout()
channels_last_3d = "channels_last_3d"
class device:
    def __init__(self, spec): self.type, self.index = spec, None
    def __eq__(self, o): return isinstance(o, device) and (self.type, self.index) == (o.type, o.index)
    def __hash__(self): return hash((self.type, self.index))
_DT = {np.dtype(np.float32): float32, np.dtype(np.float16): float16}

class Size(tuple):
    pass

class Tensor:
    _version = 0  # no in-place operations in the stand-in
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
    def stride(self): return tuple(s // self.a.itemsize for s in self.a.strides)
    def data_ptr(self): return self.a.ctypes.data
    def element_size(self): return self.a.itemsize
    def get_device(self): return -1
    def new_empty_strided(self, shape, strides):
        isz = self.a.itemsize
        n = 1 + sum((e - 1) * s for e, s in zip(shape, strides))
        base = np.empty(max(n, 1), self.a.dtype)
        return Tensor(np.lib.stride_tricks.as_strided(base, shape, [s * isz for s in strides]))
    def contiguous(self, memory_format=None):
        if memory_format == channels_last_3d:
            return Tensor(np.ascontiguousarray(self.a.transpose(0, 2, 3, 4, 1)).transpose(0, 4, 1, 2, 3))
        return Tensor(np.ascontiguousarray(self.a))
    def float(self): return Tensor(self.a.astype(np.float32))

def empty(*shape, dtype=None, device=None, memory_format=None):
    if len(shape) == 1 and isinstance(shape[0], tuple): shape = shape[0]
    if memory_format == channels_last_3d:
        n, c, d, h, w = shape
        return Tensor(np.empty((n, d, h, w, c), dtype.np).transpose(0, 4, 1, 2, 3))
    return Tensor(np.empty(shape, dtype.np))

class _C: pass

__version__ = "0.0+stub"
