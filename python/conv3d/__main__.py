"""python -m conv3d --info: what this installation of conv3d finds."""

import argparse
import sys

import conv3d


def _info():
    print("conv3d package %s (%s)" % (conv3d.__version__, conv3d.__file__))
    try:
        path = conv3d.library_path()
    except conv3d.Conv3dError as e:
        print("library: %s" % e)
        return 1
    print("library: %s" % path)
    print("library version: %s" % conv3d.library_version())
    from conv3d import _hit
    module = _hit.extension()
    print("PyTorch hit path: %s" % ("C, %s" % module.__file__ if module else
                                    "pure Python: %s" % _hit.extension_status))
    if "torch" in sys.modules or _importable("torch"):
        from conv3d import _torch_native
        native = _torch_native.load()
        print("torch-native hit path: %s" % (native.__file__ if native else
                                             "not used: %s" % _torch_native.status))
    print("NumPy bfloat16: %s" % _ml_dtypes())
    print("targets: cpu, sm80 (CUDA compute capability 8.0+), sm90 (9.0: H100, H200)")
    try:
        device = conv3d.cuda_device()
        auto = "sm90" if (device.cc_major, device.cc_minor) == (9, 0) else "sm80"
        print("CUDA device %d: %s, compute capability %d.%d, %d multiprocessors "
              "(target='auto' picks %s for its arrays)"
              % (device.ordinal, device.name.decode(), device.cc_major, device.cc_minor,
                 device.multiprocessors, auto))
    except conv3d.Conv3dError as e:
        print("CUDA device: none (%s); host arrays run on the cpu target"
              % str(e).splitlines()[0])
    return 0


def _ml_dtypes():
    """Where bfloat16 NumPy arrays come from: ml_dtypes, or what to install."""
    try:
        import ml_dtypes
    except ImportError:
        from conv3d._arrays import ML_DTYPES_MISSING
        return "unavailable: " + ML_DTYPES_MISSING
    return "ml_dtypes %s" % getattr(ml_dtypes, "__version__", "(version unknown)")


def _importable(name):
    try:
        __import__(name)
        return True
    except ImportError:
        return False


def _build_torch_native():
    from conv3d import _torch_native
    try:
        _torch_native.build(log=lambda line: print("conv3d: " + line, flush=True))
    except ImportError as e:
        print("conv3d: --build-torch-native needs PyTorch: %s" % e, file=sys.stderr)
        return 1
    except Exception as e:  # noqa: BLE001 - the builder's errors, reported
        print("conv3d: building the torch-native hit path failed: %s" % e, file=sys.stderr)
        return 1
    native = _torch_native.load()
    if native is None:
        print("conv3d: built, but it does not load: %s" % _torch_native.status,
              file=sys.stderr)
        return 1
    print("conv3d: torch-native hit path ready: %s" % native.__file__)
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m conv3d",
                                     description="conv3d-mlir's Python package")
    parser.add_argument("--info", action="store_true",
                        help="print the library, its version, the targets and the CUDA "
                        "device found")
    parser.add_argument("--build-torch-native", action="store_true",
                        help="compile the torch-native hit path (C++ against the installed "
                        "PyTorch; about a minute) into $CONV3D_TORCH_NATIVE_DIR (default "
                        "~/.cache/conv3d-mlir/torch-native)")
    args = parser.parse_args(argv)
    if args.build_torch_native:
        return _build_torch_native()
    if not args.info:
        parser.print_help()
        return 0
    return _info()


if __name__ == "__main__":
    sys.exit(main())
