"""The PEP 517 build backend of the conv3d package (pyproject.toml names it).

Why not setuptools: the package is pure Python plus, when one is found, a
copy of libConv3d.so, and setuptools of Debian 12 (66) builds wheels only
with the `wheel` package installed, which a plain venv lacks ("invalid
command 'bdist_wheel'"), while fetching newer setuptools needs a network.
This backend needs nothing beyond the standard library (tomllib: Python
3.11, or the tomli package), so `pip install ./python` works offline in a
plain venv, with or without build isolation.

The wheel holds python/conv3d and, when the build finds the library, a
copy of it in conv3d/_lib (libConv3d.so and the C hit path's
_conv3d_hit.abi3.so beside it), where the installed package looks first
after $CONV3D_LIB: an installed package then needs no CONV3D_LIB. The
library is looked for in $CONV3D_LIB (the file or its folder) at build
time, else in the build tree beside the source (python/../build/lib). A
wheel with the library is tagged for this platform; one without is pure
and finds the library at run time (see conv3d/_capi.py). Editable installs
(pip install -e) put the source folder on sys.path through a .pth file.
"""

import base64
import hashlib
import io
import os
import sys
import sysconfig
import tarfile
import zipfile

__all__ = ["build_wheel", "build_sdist", "build_editable"]

SOURCE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = "conv3d"
LIBRARY_FILES = ("libConv3d.so", "_conv3d_hit.abi3.so")
# What the sdist holds besides the package.
SDIST_FILES = ("pyproject.toml", "README.md", "backend/conv3d_backend.py")


def _project():
    """pyproject.toml's [project] table."""
    try:
        import tomllib
    except ImportError:  # Python < 3.11
        try:
            import tomli as tomllib
        except ImportError:
            raise RuntimeError("building conv3d-mlir needs Python 3.11 or newer "
                               "(tomllib), or the tomli package") from None
    with open(os.path.join(SOURCE, "pyproject.toml"), "rb") as f:
        return tomllib.load(f)["project"]


def _metadata(project):
    """The core metadata (METADATA, PKG-INFO) of `project`."""
    lines = ["Metadata-Version: 2.1", "Name: %s" % project["name"],
             "Version: %s" % project["version"]]
    if "description" in project:
        lines.append("Summary: %s" % project["description"])
    if "requires-python" in project:
        lines.append("Requires-Python: %s" % project["requires-python"])
    for requirement in project.get("dependencies", []):
        lines.append("Requires-Dist: %s" % requirement)
    for extra, requirements in sorted(project.get("optional-dependencies", {}).items()):
        lines.append("Provides-Extra: %s" % extra)
        for requirement in requirements:
            lines.append('Requires-Dist: %s; extra == "%s"' % (requirement, extra))
    readme = project.get("readme")
    if not readme:
        return "\n".join(lines) + "\n"
    lines.append("Description-Content-Type: text/markdown")
    with open(os.path.join(SOURCE, readme), encoding="utf-8") as f:
        return "\n".join(lines) + "\n\n" + f.read()


def _library_folder():
    """The folder holding the libConv3d.so to ship, or None."""
    env = os.environ.get("CONV3D_LIB", "")
    candidates = ([env if os.path.isdir(env) else os.path.dirname(env)] if env
                  else [os.path.join(os.path.dirname(SOURCE), "build", "lib")])
    for folder in candidates:
        if os.path.isfile(os.path.join(folder, LIBRARY_FILES[0])):
            return os.path.abspath(folder)
    return None


def _package_files():
    """(path in the wheel, path on disk) of the package's files."""
    root = os.path.join(SOURCE, PACKAGE)
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in ("__pycache__", "_lib"))
        for name in sorted(files):
            if name.endswith((".py", ".cpp")):
                path = os.path.join(folder, name)
                yield os.path.relpath(path, SOURCE).replace(os.sep, "/"), path


class _Wheel:
    """A wheel being written: files, then the dist-info with its RECORD."""

    def __init__(self, directory, project, tag):
        self.name = project["name"].replace("-", "_")
        self.version = project["version"]
        self.filename = "%s-%s-%s.whl" % (self.name, self.version, tag)
        self.zip = zipfile.ZipFile(os.path.join(directory, self.filename), "w",
                                   zipfile.ZIP_DEFLATED)
        self.records = []
        self.tag = tag

    def add(self, arcname, data, mode=0o644):
        info = zipfile.ZipInfo(arcname, date_time=(2020, 1, 1, 0, 0, 0))
        info.external_attr = (0o100000 | mode) << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        self.zip.writestr(info, data)
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
        self.records.append("%s,sha256=%s,%d" % (arcname, digest.decode(), len(data)))

    def add_file(self, arcname, path):
        with open(path, "rb") as f:
            mode = 0o755 if os.access(path, os.X_OK) else 0o644
            self.add(arcname, f.read(), mode)

    def close(self, metadata):
        info = "%s-%s.dist-info" % (self.name, self.version)
        pure = self.tag.endswith("-any")
        self.add(info + "/METADATA", metadata.encode())
        self.add(info + "/WHEEL", ("Wheel-Version: 1.0\nGenerator: conv3d_backend\n"
                                   "Root-Is-Purelib: %s\nTag: %s\n"
                                   % ("true" if pure else "false", self.tag)).encode())
        record = info + "/RECORD"
        self.zip.writestr(zipfile.ZipInfo(record, date_time=(2020, 1, 1, 0, 0, 0)),
                          "\n".join(self.records + [record + ",,"]) + "\n")
        self.zip.close()
        return self.filename


def _platform_tag():
    return "py3-none-" + sysconfig.get_platform().replace("-", "_").replace(".", "_")


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    project = _project()
    library = _library_folder()
    wheel = _Wheel(wheel_directory, project, _platform_tag() if library else "py3-none-any")
    for arcname, path in _package_files():
        wheel.add_file(arcname, path)
    if library:
        for name in LIBRARY_FILES:
            path = os.path.join(library, name)
            if os.path.isfile(path):
                wheel.add_file("%s/_lib/%s" % (PACKAGE, name), path)
        print("conv3d_backend: shipping %s in the wheel" % library, file=sys.stderr)
    else:
        print("conv3d_backend: no libConv3d.so found (set CONV3D_LIB, or build the "
              "project first): the installed package will look for it at run time "
              "($CONV3D_LIB, the install prefix, the loader's path)", file=sys.stderr)
    return wheel.close(_metadata(project))


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    """A wheel whose .pth file puts this source folder on sys.path: the
    package runs from the checkout and finds the build tree's library."""
    project = _project()
    wheel = _Wheel(wheel_directory, project, "py3-none-any")
    wheel.add(project["name"].replace("-", "_") + ".pth", (SOURCE + "\n").encode())
    return wheel.close(_metadata(project))


def build_sdist(sdist_directory, config_settings=None):
    project = _project()
    base = "%s-%s" % (project["name"].replace("-", "_"), project["version"])
    filename = base + ".tar.gz"
    with tarfile.open(os.path.join(sdist_directory, filename), "w:gz",
                      format=tarfile.PAX_FORMAT) as tar:
        def add(arcname, data):
            info = tarfile.TarInfo("%s/%s" % (base, arcname))
            info.size, info.mode, info.mtime = len(data), 0o644, 0
            tar.addfile(info, io.BytesIO(data))
        add("PKG-INFO", _metadata(project).encode())
        files = [(name, os.path.join(SOURCE, name)) for name in SDIST_FILES]
        for arcname, path in files + list(_package_files()):
            with open(path, "rb") as f:
                add(arcname, f.read())
    return filename
