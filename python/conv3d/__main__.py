"""python -m conv3d --info: what this installation of conv3d finds."""

import argparse
import sys

import conv3d


def _info():
    print("conv3d package %s (%s)" % (conv3d.__version__, conv3d.__file__))
    try:
        path = conv3d.library_path()
    except conv3d.Conv3dError as e:
        print("library: not found: %s" % e)
        return 1
    print("library: %s" % path)
    print("library version: %s" % conv3d.library_version())
    from conv3d import _hit
    module = _hit.extension()
    print("PyTorch hit path: %s" % ("C, %s" % module.__file__ if module else
                                    "pure Python: %s" % _hit.extension_status))
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


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m conv3d",
                                     description="conv3d-mlir's Python package")
    parser.add_argument("--info", action="store_true",
                        help="print the library, its version, the targets and the CUDA "
                        "device found")
    args = parser.parse_args(argv)
    if not args.info:
        parser.print_help()
        return 0
    return _info()


if __name__ == "__main__":
    sys.exit(main())
