"""The torch-native hit path: conv3d.conv3d's PyTorch hit in C++ against the
installed PyTorch (_torch_native.cpp says what it takes and why).

It is built once per PyTorch version on the machine that runs it, with
PyTorch's own extension builder (a C++ compiler, ninja and, for CUDA
tensors, the CUDA toolkit's headers; about a minute):

    python -m conv3d --build-torch-native

into $CONV3D_TORCH_NATIVE_DIR (default ~/.cache/conv3d-mlir/torch-native),
one folder per PyTorch and Python version. A process that finds a build
for its PyTorch uses it (CONV3D_TORCH_NATIVE=0: never); the package never
compiles one by itself. `python -m conv3d --info` says whether it is used
and why not.
"""

import importlib.util
import os
import sys
import time

NAME = "conv3d_torch_native"
PROTOCOL = 1

# Why the torch-native path is not used in this process (None: it is, or
# the question has not come up).
status = None


def _source():
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "_torch_native.cpp")


def build_directory(torch):
    """Where the build for this PyTorch and Python lives."""
    root = os.environ.get("CONV3D_TORCH_NATIVE_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "conv3d-mlir", "torch-native")
    tag = "torch%s-py%d%d" % (torch.__version__.replace("+", "_"), sys.version_info[0],
                              sys.version_info[1])
    return os.path.join(root, tag)


def build(verbose=False, log=print):
    """Compiles _torch_native.cpp against the installed PyTorch; returns the
    module's path. Raises what PyTorch's builder raises (no compiler, ...)."""
    import torch
    from torch.utils import cpp_extension
    directory = build_directory(torch)
    os.makedirs(directory, exist_ok=True)
    cuda = torch.cuda.is_available() and cpp_extension.CUDA_HOME is not None
    flags = ["-O2"]
    if cuda:
        flags.append("-DCONV3D_WITH_CUDA")
    log("building %s against torch %s (%s) in %s" % (
        NAME, torch.__version__, "with CUDA streams" if cuda else "CPU tensors only",
        directory))
    start = time.monotonic()
    cpp_extension.load(NAME, [_source()], extra_cflags=flags, build_directory=directory,
                       with_cuda=cuda, verbose=verbose)
    log("built in %.0f s: %s" % (time.monotonic() - start,
                                 os.path.join(directory, NAME + ".so")))
    return os.path.join(directory, NAME + ".so")


def load():
    """The built module for this PyTorch, or None with `status` saying why."""
    global status
    if os.environ.get("CONV3D_TORCH_NATIVE", "1") == "0":
        status = "disabled by CONV3D_TORCH_NATIVE=0"
        return None
    import torch
    if not isinstance(getattr(torch, "__version__", None), str):
        status = "this torch module has no __version__"
        return None
    path = os.path.join(build_directory(torch), NAME + ".so")
    if not os.path.exists(path):
        status = "not built for torch %s (python -m conv3d --build-torch-native)" % (
            torch.__version__)
        return None
    if os.path.getmtime(path) < os.path.getmtime(_source()):
        status = "%s is older than its source (rebuild: python -m conv3d " \
                 "--build-torch-native)" % path
        return None
    try:
        spec = importlib.util.spec_from_file_location(NAME, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    except (ImportError, OSError) as e:
        status = "%s does not load: %s" % (path, e)
        return None
    # The folder is per PyTorch version (build_directory); the protocol is
    # this package's.
    if getattr(module, "PROTOCOL", None) != PROTOCOL:
        status = "%s was built by another version of this package (rebuild)" % path
        return None
    status = None
    return module
