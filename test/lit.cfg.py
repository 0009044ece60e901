# lit configuration of the conv3d test suite.
#
# Features:
#   cmake-build-tree  this is a CMake build tree (cmake --install, examples)
#   ptxas       the CUDA toolkit's ptxas is available (PTX assembly checks)
#   cuda-driver a CUDA driver and a GPU are present (GPU execution tests)
#   sm90        that GPU is Hopper (sm_90) or newer
#   cuda-sm90   that GPU is exactly compute capability 9.0 (H100, H200): the
#               sm90 target's sm_90a code (wgmma, setmaxnreg) runs on those
#               alone, not on later chips
#   cupy        with cuda-driver: CuPy is importable (python-cupy.test)
#   layer-link-check  the layers are linked as checked shared objects
#   ptx-emulator the PTX emulator (conv3d-run --emulate) can run: its Python
#               package is built and the tests' Python has NumPy
#   long-tests  the run includes the long tests (below)
#   torch       the tests' Python imports PyTorch (any version: CI may install
#               Debian's python3-torch, 1.13; conv3d.models needs only that)
#
# Long tests (`REQUIRES: long-tests`: consumers of the installed package,
# emulated GPU kernels, long sweeps) stay out of check-conv3d, the README's
# test command, and run in check-conv3d-long; CI runs both. The lit
# parameter conv3d_tests selects: `short` (the default: the long tests are
# reported unsupported), `long` (only the long tests), `all`. A short test's
# exhaustive cases can be long-only RUN lines, `%if long-tests %{ ... %}`:
# the short run keeps a sample of each family of cases, the long run all.
import os
import re
import shutil
import subprocess

import lit.formats

config.name = "conv3d"
config.test_format = lit.formats.ShTest(not lit_config.isWindows)
config.suffixes = [".mlir", ".test"]
config.excludes = ["Inputs", "lit.cfg.py", "lit.site.cfg.py", "CMakeLists.txt"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.conv3d_obj_root, "test")

path = os.pathsep.join(
    [config.conv3d_tools_dir, config.llvm_tools_dir, config.environment.get("PATH", os.environ.get("PATH", ""))]
)
config.environment["PATH"] = path
for var in ["HOME", "TMPDIR", "LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES"]:
    if var in os.environ:
        config.environment[var] = os.environ[var]
# Tests compile what they test: no disk cache unless a test names one.
config.environment["CONV3D_CACHE_DIR"] = "off"
# GPU tests compile with the toolkit this build was configured with.
config.environment["CUDA_HOME"] = config.cuda_home

config.substitutions.append(("%python", config.python_executable))
config.substitutions.append(("%inputs", os.path.join(config.test_source_root, "Inputs")))
config.substitutions.append(("%shapes_json", os.path.join(config.conv3d_src_root, "bench", "shapes.json")))
config.substitutions.append(("%cuda_home", config.cuda_home))
config.substitutions.append(("%conv3d_src_root", config.conv3d_src_root))
config.substitutions.append(("%conv3d_obj_root", config.conv3d_obj_root))
# The install test configures the examples with this build's CMake and
# compiler (absent from site configs written by scripts/gpu/run.sh).
if getattr(config, "cmake_command", None):
    config.available_features.add("cmake-build-tree")
    config.substitutions.append(("%cmake_generator", config.cmake_generator))
    config.substitutions.append(("%cmake", config.cmake_command))
    config.substitutions.append(("%cxx", config.cxx_compiler))
config.substitutions.append(
    ("%conv3d_lib", os.path.join(os.path.dirname(config.conv3d_tools_dir), "lib", "libConv3d.so")))

# The PTX emulator's package, where the emulated driver finds it (lib/../share).
ptxemu_dir = os.path.join(os.path.dirname(config.conv3d_tools_dir), "share", "conv3d", "ptx-emulator")
config.substitutions.append(("%ptxemu_dir", ptxemu_dir))
config.substitutions.append(
    ("%emulated_cuda", os.path.join(os.path.dirname(config.conv3d_tools_dir), "lib",
                                    "libconv3d-emulated-cuda.so")))
config.substitutions.append(
    ("%ptxemu", "env PYTHONPATH=%s %s -m ptxemu" % (ptxemu_dir, config.python_executable)))
if os.path.isdir(ptxemu_dir) and subprocess.run(
        [config.python_executable, "-c", "import numpy"], capture_output=True).returncode == 0:
    config.available_features.add("ptx-emulator")

# PyTorch (Debian's python3-torch on the CPU machines): the autograd tests.
if subprocess.run([config.python_executable, "-c", "import torch"],
                  capture_output=True).returncode == 0:
    config.available_features.add("torch")

ptxas = os.path.join(config.cuda_home, "bin", "ptxas")
if os.path.exists(ptxas):
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", ptxas))


def gpu_compute_capability():
    """Major*10+minor of GPU 0, or None without a driver and a GPU."""
    smi = shutil.which("nvidia-smi")
    if not smi:
        return None
    try:
        out = subprocess.run(
            [smi, "--query-gpu=compute_cap", "--format=csv,noheader"],
            capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    if out.returncode != 0 or not out.stdout.strip():
        return None
    major, _, minor = out.stdout.strip().splitlines()[0].partition(".")
    return int(major) * 10 + int(minor or 0)


cc = gpu_compute_capability()
if cc is not None:
    config.available_features.add("cuda-driver")
    if cc >= 90:
        config.available_features.add("sm90")
    if cc == 90:
        config.available_features.add("cuda-sm90")
    # CuPy importable by the tests' Python (GPU machines only: it needs one).
    try:
        if subprocess.run([config.python_executable, "-c", "import cupy"],
                          capture_output=True, timeout=120).returncode == 0:
            config.available_features.add("cupy")
    except (OSError, subprocess.SubprocessError):
        pass

# Found, not imported (importing PyTorch takes seconds).
if subprocess.run([config.python_executable, "-c", "import importlib.util, sys; "
                   "sys.exit(importlib.util.find_spec('torch') is None)"],
                  capture_output=True).returncode == 0:
    config.available_features.add("torch")

# A short test may hold long-only RUN lines (`%if long-tests %{ ... %}`): the
# long run runs such a file whole.
LONG_MARKER = re.compile(r"REQUIRES:.*\blong-tests\b|%if long-tests %\{")
tests_mode = lit_config.params.get("conv3d_tests", "short")
if tests_mode not in ("short", "long", "all"):
    lit_config.fatal("conv3d_tests must be short, long or all, not %r" % tests_mode)
if tests_mode != "short":
    config.available_features.add("long-tests")
# The host JIT's LLVM optimization level (CONV3D_JIT_OPT_LEVEL, default 3):
# the quick run's convolutions are tiny and most of its time was LLVM
# optimizing and generating their host code (98 s at 3, 71 s at 0 on the
# 2-core machine), so it compiles at 0; the long run keeps the default,
# so that CI still runs every sweep and kernel family at 3. A level in the
# environment wins.
if "CONV3D_JIT_OPT_LEVEL" in os.environ:
    config.environment["CONV3D_JIT_OPT_LEVEL"] = os.environ["CONV3D_JIT_OPT_LEVEL"]
elif tests_mode == "short":
    config.environment["CONV3D_JIT_OPT_LEVEL"] = "0"
if tests_mode == "long":
    # lit excludes by file name: every test that is not long, found by its
    # marker (a name shared by a long and a short test would be ambiguous).
    long_names, short_names = set(), set()
    for folder, dirs, files in os.walk(config.test_source_root):
        dirs[:] = [d for d in dirs if d not in config.excludes]
        for name in files:
            if os.path.splitext(name)[1] not in config.suffixes or name in config.excludes:
                continue
            with open(os.path.join(folder, name), encoding="utf-8") as f:
                (long_names if LONG_MARKER.search(f.read()) else short_names).add(name)
    if long_names & short_names:
        lit_config.fatal("long and short tests share the names %s"
                         % ", ".join(sorted(long_names & short_names)))
    config.excludes = list(config.excludes) + sorted(short_names)

# The libFuzzer targets exist in the sanitizer build (CONV3D_SANITIZE).
if os.path.exists(os.path.join(config.conv3d_tools_dir, "conv3d-pass-fuzzer")):
    config.available_features.add("fuzzers")

# The layers' shared objects of the link check (cmake/Conv3dLayers.cmake;
# the sanitizer build has none).
if os.path.isdir(os.path.join(config.conv3d_obj_root, "lib", "layers")):
    config.available_features.add("layer-link-check")
