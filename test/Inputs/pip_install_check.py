#!/usr/bin/env python3
"""`pip install` of the Python package into a temporary prefix, offline
(--no-index) and with pip's build isolation, whose build environment holds
no setuptools and no wheel (what a plain venv has): the package's own
build backend (python/backend) needs neither. The wheel ships a copy of the
library found at build time ($CONV3D_LIB). Then, in a fresh process that
sees only that prefix and no CONV3D_LIB: import, `python -m conv3d --info`
(the shipped library and C hit path), and a CPU convolution checked against
the independent float64 NumPy convolution on fresh random data with a
poisoned output. Last, the backend without a library to ship: a pure
wheel, and an sdist.

usage: pip_install_check.py SOURCE_PYTHON_DIR WORK_DIR
(the package is copied into WORK_DIR first, away from any build tree; the
backend writes nothing into the tree it builds, and tests never write into
the source tree)
"""

import glob
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile

CHECK = r'''
import os, sys
import numpy as np
import conv3d
prefix = os.environ["PREFIX"]
assert os.path.realpath(conv3d.__file__).startswith(os.path.realpath(prefix)), conv3d.__file__
sys.path.insert(0, os.environ["INPUTS"])
import np_conv3d
rng = np.random.default_rng()
x = np.ascontiguousarray(rng.standard_normal((1, 5, 6, 7, 4)).astype(np.float32))  # NDHWC
w = (rng.standard_normal((6, 3, 3, 3, 4)) * 0.2).astype(np.float32)                  # FQRSC
out = np.full((1, 5, 6, 7, 6), np.nan, np.float32)
y = conv3d.conv3d(x.transpose(0, 4, 1, 2, 3), w.transpose(0, 4, 1, 2, 3), padding=(2, 0, 1, 1, 1, 1),
                  out=out.transpose(0, 4, 1, 2, 3))
ref = np_conv3d.conv3d(x, w, padding=(2, 0, 1, 1, 1, 1), layout="fqrsc")
err = np.linalg.norm(out - ref) / np.linalg.norm(ref)
assert np.isfinite(out).all() and err < 1e-5, err
print("installed package: conv3d %s from the prefix, rel_l2=%.2e" % (conv3d.__version__, err))
print("CONV3D_LIB set:", "CONV3D_LIB" in os.environ, "| library in the package:",
      conv3d.library_path() == os.path.join(os.path.dirname(conv3d.__file__), "_lib",
                                            "libConv3d.so"))
# The torch-native path's source ships with the package (it is compiled
# against the user's PyTorch).
print("torch-native source installed:",
      os.path.isfile(os.path.join(os.path.dirname(conv3d.__file__), "_torch_native.cpp")))
'''


def main():
    source, work = sys.argv[1], sys.argv[2]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    tree = os.path.join(work, "src")
    shutil.copytree(source, tree, ignore=shutil.ignore_patterns("build", "*.egg-info",
                                                                "__pycache__"))
    prefix = os.path.join(work, "prefix")
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-index", "--no-deps",
                    "--disable-pip-version-check", "--no-warn-script-location", "--quiet",
                    "--prefix", prefix, tree], check=True, cwd=work)
    found = glob.glob(os.path.join(prefix, "**", "conv3d", "__init__.py"), recursive=True)
    assert len(found) == 1, found
    site = os.path.dirname(os.path.dirname(found[0]))
    print("installed into", os.path.relpath(site, work), flush=True)
    env = dict(os.environ, PYTHONPATH=site, PREFIX=prefix,
               INPUTS=os.path.dirname(os.path.abspath(__file__)))
    env.pop("CONV3D_LIB")  # the installed package finds its own copy
    info = subprocess.run([sys.executable, "-m", "conv3d", "--info"], env=env, cwd=work,
                          check=True, capture_output=True, text=True).stdout
    print(info.replace(work, "WORK"), end="", flush=True)
    subprocess.run([sys.executable, "-c", CHECK], env=env, cwd=work, check=True)
    # --build-torch-native says when PyTorch is missing (hidden here: a
    # machine may have one).
    build = subprocess.run([sys.executable, "-c", HIDE_TORCH], env=env, cwd=work,
                           capture_output=True, text=True)
    print("--build-torch-native: status %d: %s" % (build.returncode, build.stderr.strip()))
    # The backend with no library to ship: a pure wheel; and an sdist.
    backend = "import sys; sys.path.insert(0, %r); import conv3d_backend as b; " % (
        os.path.join(tree, "backend"))
    out = os.path.join(work, "dist")
    os.makedirs(out)
    for hook in ("build_wheel", "build_sdist"):
        built = subprocess.run([sys.executable, "-c", backend + "print(b.%s(%r))" % (hook, out)],
                               env=env, cwd=work, check=True, capture_output=True, text=True)
        name = built.stdout.strip()
        print("%s: %s (%s)" % (hook, name, built.stderr.strip() or "quiet"))
        path = os.path.join(out, name)
        if name.endswith(".whl"):
            with zipfile.ZipFile(path) as wheel:
                names = wheel.namelist()
        else:
            with tarfile.open(path) as sdist:
                names = sdist.getnames()
        print("  %d files; library inside: %s; backend inside: %s" % (
            len(names), any("libConv3d.so" in n for n in names),
            any(n.endswith("conv3d_backend.py") for n in names)))
    print("PIP-INSTALL-OK")
    return 0


HIDE_TORCH = """import sys
sys.modules["torch"] = None  # as if PyTorch were not installed
from conv3d.__main__ import main
sys.exit(main(["--build-torch-native"]))"""


if __name__ == "__main__":
    sys.exit(main())
