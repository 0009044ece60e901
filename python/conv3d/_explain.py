"""conv3d.explain: which kernel family runs a convolution, and why.

A thin wrapper of the C API's conv3d_explain (conv3d/CAPI/conv3d.h): the
graph passes run as for a compilation, nothing is compiled to a binary or
run, so any target can be explained on any machine, without a GPU.
"""

import ctypes
import json as _json

_TEXT, _JSON = 0, 1


def _prototype(lib):
    """conv3d_explain's and conv3d_string_destroy's ctypes prototypes."""
    if getattr(lib, "_conv3d_explain_declared", False):
        return
    lib.conv3d_explain.restype = ctypes.c_void_p
    lib.conv3d_explain.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                                   ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int32,
                                   ctypes.c_char_p, ctypes.c_size_t]
    lib.conv3d_string_destroy.restype = None
    lib.conv3d_string_destroy.argtypes = [ctypes.c_void_p]
    lib._conv3d_explain_declared = True


def explain(spec, target="cpu", packed_filter=False, json=False, engine=None,
            **options):
    """Which kernel family runs `spec` (a conv3d.Spec) on `target` and why:
    the family and its tile configuration, the predicted time and waves
    (none for the cpu kernel, which the cost model does not cover), and
    every family of the target with its verdict (chosen, declined,
    refused, not reached) and reason.
    `options` are Engine.compile's (config, qslice, quant_placement,
    nvfp4_mode, prologue_placement, tune, ...; underscores for the dashes of
    the option names). Returns the text conv3d-run --explain prints, or with
    json=True the same as a dict."""
    from . import Conv3dError, Engine, FilterExt, _library
    lib = _library()
    _prototype(lib)
    engine = engine or Engine(cache_dir=None)
    words = [f"target={target}"]
    for key, value in options.items():
        if value is None or value is False:
            continue
        value = "true" if value is True else value
        words.append(f"{key.replace('_', '-')}={value}")
    filter_ext = ctypes.byref(FilterExt(1)) if packed_filter else None
    error = ctypes.create_string_buffer(16384)
    text = lib.conv3d_explain(engine._handle, ctypes.byref(spec), None, filter_ext,
                              " ".join(words).encode(), _JSON if json else _TEXT,
                              error, len(error))
    if not text:
        raise Conv3dError(error.value.decode())
    try:
        result = ctypes.string_at(text).decode()
    finally:
        lib.conv3d_string_destroy(text)
    return _json.loads(result) if json else result
