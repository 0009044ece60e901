"""conv3d.conv3d: torch.nn.functional.conv3d's interface on any DLPack array.

The first call with a signature (a miss) describes each operand as an
ArrayView, checks everything and finds its plan in a table keyed by
everything that decides the compiled kernel and the layout steps (library,
dtypes, shapes, strides, device, arguments). A plan holds the compiled
convolution (compiled once per spec by the engine, which also keeps it in
its memory and disk caches) and which layout steps the operands need.

Later calls with the same signature take the hit path (_hit.py): NumPy
arrays, PyTorch tensors and CuPy arrays are looked up by their own
attributes, so a hit costs the signature tuple, one dictionary lookup, the
addresses, the output allocation and one ctypes call. Other DLPack
producers' arrays have a hit path keyed by what their capsules say (made
and read on every call: their dtype, shape and strides are known no other
way). Mixed calls take the general route (_plan.py) on every call, which
launches the same way (_hit.run_views).

The modules, from the bottom: _capi (the C API), _arrays (operands as
ArrayViews), _plan (the checks and plans), _hit (the hit paths and the
launch), this one (the public function).
"""

from . import _hit, _plan

__all__ = ["conv3d", "clear_cache", "cached_plans"]


def clear_cache():
    """Forgets the compiled plans of conv3d.conv3d (the engine's own memory
    and disk caches are unaffected)."""
    _plan._plans.clear()
    _hit.clear()


def cached_plans():
    """How many (spec, layout) plans conv3d.conv3d holds."""
    return len(_plan._plans)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1, *,
           activation=None, residual=None, out=None, target="auto"):
    """A 3-D convolution shaped like torch.nn.functional.conv3d, on any
    DLPack array (PyTorch or CuPy on a CUDA device, NumPy on the host).

    input: (N, C, D, H, W); weight: (F, C, Q, R, S); bias: (F,) or None.
    stride, dilation: an int or a (d, h, w) tuple. padding: an int, a
    (d, h, w) tuple, a 6-tuple (d_lo, d_hi, h_lo, h_hi, w_lo, w_hi) for
    asymmetric (causal) padding, or 'valid' / 'same'. groups: a grouped
    convolution (C and F multiples of it; weight (F, C/groups, Q, R, S)),
    computed by the cpu target; the GPU targets refuse it (Conv3dError).
    activation: None, 'relu', 'silu' or 'gelu_tanh', applied after the bias;
    residual: an array of the output's shape added after the activation:
    result = act(conv + bias) + residual, computed in float32 and rounded
    once to the input's dtype.

    Memory layouts: channels_last_3d operands (NDHWC in memory; FQRSC for
    the weight) are used in place. NCDHW-contiguous input (and residual,
    weight) are copied into channels_last first; the output is copied back
    to NCDHW unless the weight is channels_last_3d (PyTorch's rule for its
    cuDNN convolutions: a channels-last input or weight gives a
    channels-last output): each copy is one read and one write of the
    tensor (PyTorch weights and
    biases are converted once and reused until modified). out=: a
    channels_last array of the output's shape and dtype to write into.

    target: 'auto' (sm90 on a compute capability 9.0 GPU, sm80 on other CUDA
    GPUs, cpu for host arrays), 'cpu', 'sm80' or 'sm90'. GPU work is
    enqueued on the array library's current stream, without synchronizing.

    Returns an array of the input's library on its device. Raises TypeError
    or ValueError for bad arguments and Conv3dError for what the compiler
    refuses."""
    hit = _hit_paths.get(type(input))
    if hit is None:
        hit = _hit.path_for(type(input))
    if hit:
        result = hit(input, weight, bias, stride, padding, dilation, groups, activation,
                     residual, out, target)
        if result is not _MISS:
            return result
    plan, views = _plan._checked_plan(input, weight, bias, residual, out, stride, padding,
                                      dilation, groups, activation, target)
    return _hit.run_views(plan, input, weight, bias, residual, out, views)


_hit_paths = _hit.paths
_MISS = _hit.MISS
