"""What conv3d.torch does to be a drop-in for torch.nn.functional.conv3d on
calls the conv3d kernels do not take (imported by conv3d.torch with
PyTorch present).

Two kinds of calls are not computed as given:
- operands the kernels take after a copy: a non-dense view (a channel
  slice, a strided view) is copied into channels_last_3d memory, an
  unbatched (C, D, H, W) input gets a batch of one; then conv3d computes;
- calls the kernels do not compute at all go to PyTorch's own convolution
  (F.conv3d, then the activation and the residual in PyTorch):
  fallback_reason() names them (a dtype other than bfloat16,
  float16 or float32, float32 on a CUDA device, an empty input, another
  device). Each eager fallback is counted by reason (conv3d.torch.fallbacks())
  and the first of each reason warns once. A call traced by torch.compile
  has the fallback in its graph (not counted: it runs as compiled code).

conv3d.conv3d keeps its errors for all of these: it never falls back.
"""

import warnings

import torch

F = torch.nn.functional

__all__ = ["fallback_reason", "pytorch_conv3d", "apply_activation", "dense", "fallbacks",
           "reset_fallbacks"]

_KERNEL_DTYPES = (torch.bfloat16, torch.float16, torch.float32)
# Constant reason texts (torch.compile traces this module: no formatting
# of tensor attributes here).
_DTYPE_REASONS = {torch.float64: "float64", torch.complex64: "complex64",
                  torch.complex128: "complex128", torch.int8: "int8", torch.uint8: "uint8",
                  torch.int16: "int16", torch.int32: "int32", torch.int64: "int64"}

_counts = {}
_warned = set()

# Grouped convolutions on a GPU, stated once. Which kernel computes one is
# lib/Target's choice (takesDepthwiseKernel): groups whose channels and
# filters are multiples of 8 (SM80Family::kGroupedChannelMultiple) run on
# the sm80 kernel's grouped implicit GEMM (tensor cores), the others on the
# depthwise kernel (CUDA cores). conv3d.torch takes:
# - one channel per group (depthwise, channel multipliers): the depthwise
#   kernel, 5-10x faster than cuDNN (bench/RESULTS.md);
# - not the depthwise kernel with several channels per group: measured at
#   14x and 46x cuDNN's time with 8 and 16 (before the grouped GEMM);
# - not yet the grouped implicit GEMM: pending its measurement on a GPU
#   (scripts/gpu/jobs/grouped-tc.sh). Set _GROUPED_GEMM_ON_GPU once it
#   beats cuDNN there.
_GROUPED_GEMM_CHANNEL_MULTIPLE = 8
_GROUPED_GEMM_ON_GPU = False

# conv3d.torch's weight gradient on a GPU: PyTorch's (cuDNN's) while the
# library's is slower there (bench/RESULTS.md; bench/train_step.py
# --library-wgrad measures the library's in a training step).
_WGRAD_ON_GPU = False


def _gpu_grouped_reason(channels_per_group, filters_per_group):
    """Why PyTorch computes a grouped convolution on a GPU, or None."""
    if channels_per_group == 1:
        return None
    if (_GROUPED_GEMM_ON_GPU and channels_per_group % _GROUPED_GEMM_CHANNEL_MULTIPLE == 0
            and filters_per_group % _GROUPED_GEMM_CHANNEL_MULTIPLE == 0):
        return None
    return "grouped with several channels per group on a GPU"


def fallback_reason(input, weight, bias, groups):
    """Why PyTorch's convolution computes this call, or None when conv3d's
    kernels do (possibly after dense copies: dense()). Grouped convolutions
    are conv3d's on the CPU, and on a GPU where each group has one input
    channel (depthwise, channel multipliers included)."""
    dtype = input.dtype
    if dtype not in _KERNEL_DTYPES:
        return _DTYPE_REASONS.get(dtype, "unsupported dtype")
    if weight.dtype != dtype or (bias is not None and bias.dtype not in _KERNEL_DTYPES):
        return "mixed dtypes"
    device = input.device
    if device.type not in ("cpu", "cuda") or weight.device != device \
            or (bias is not None and bias.device != device):
        return "device"
    if input.dim() not in (4, 5) or weight.dim() != 5:
        return "rank"
    if input.numel() == 0:
        return "empty input"
    if device.type == "cuda" and dtype == torch.float32:
        return "float32 on a CUDA device"
    if device.type == "cuda" and groups != 1:
        return _gpu_grouped_reason(weight.shape[1], weight.shape[0] // groups)
    return None


def _padded(input, padding):
    """(input, padding) for F.conv3d: a 6-tuple (d_lo, d_hi, h_lo, h_hi,
    w_lo, w_hi) becomes an explicit zero padding of the input."""
    if isinstance(padding, (tuple, list)) and len(padding) == 6:
        d_lo, d_hi, h_lo, h_hi, w_lo, w_hi = padding
        return F.pad(input, (w_lo, w_hi, h_lo, h_hi, d_lo, d_hi)), 0
    return input, padding


def pytorch_conv3d(reason, input, weight, bias, stride, padding, dilation, groups,
                   activation, residual):
    """The call computed by PyTorch: F.conv3d, the activation, the residual
    (in the input's dtype, as PyTorch computes); counted under `reason`
    and warned about once per reason, in eager mode."""
    if not torch.compiler.is_compiling():
        _count(reason)
    input, padding = _padded(input, padding)
    y = apply_activation(F.conv3d(input, weight, bias, stride, padding, dilation, groups),
                         activation)
    return y if residual is None else y + residual


def apply_activation(y, activation):
    """`activation` (None, "none", "relu", "silu", "gelu_tanh": conv3d's
    activations) applied to `y` in PyTorch."""
    if activation == "relu":
        return F.relu(y)
    if activation == "silu":
        return F.silu(y)
    if activation == "gelu_tanh":
        return F.gelu(y, approximate="tanh")
    return y


def _count(reason):
    _counts[reason] = _counts.get(reason, 0) + 1
    if reason not in _warned:
        _warned.add(reason)
        warnings.warn("conv3d.torch: a convolution with %s runs on PyTorch's own "
                      "convolution (docs/python.md lists what the conv3d kernels take "
                      "and why); conv3d.torch.fallbacks() counts them" % reason,
                      RuntimeWarning, stacklevel=4)


def fallbacks():
    """{reason: calls} of the eager calls PyTorch's convolution computed."""
    return dict(_counts)


def reset_fallbacks():
    """Forgets the counts (and warns again for the next fallback of each
    reason)."""
    _counts.clear()
    _warned.clear()


def _dense_rank5(t):
    """`t` if its memory is dense in a layout the kernels take (NCDHW,
    channels_last_3d), else a channels_last_3d copy."""
    if t.is_contiguous(memory_format=torch.channels_last_3d) or t.is_contiguous():
        return t
    return t.contiguous(memory_format=torch.channels_last_3d)


def dense(input, weight, residual):
    """(input, weight, residual) in memory the kernels read: a non-dense
    view copied into channels_last_3d (a weight stored QRSCF, F innermost,
    is read in place too)."""
    if not (weight.is_contiguous(memory_format=torch.channels_last_3d)
            or weight.is_contiguous()
            or weight.permute(2, 3, 4, 1, 0).is_contiguous()):
        weight = weight.contiguous(memory_format=torch.channels_last_3d)
    return (_dense_rank5(input), weight,
            None if residual is None else _dense_rank5(residual))
