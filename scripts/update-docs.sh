#!/usr/bin/env bash
# Regenerates the reference pages of docs/reference/ from the .td files
# (the conv3d-doc target, mlir-tblgen -gen-dialect-doc / -gen-pass-doc) and
# copies them into the source tree. Run it after changing an op, attribute
# or pass definition; test/Docs/reference-current.test fails until then.
# Environment: CONV3D_BUILD_DIR (default: build).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${CONV3D_BUILD_DIR:-$root/build}"
cmake --build "$build" --target conv3d-doc
mkdir -p "$root/docs/reference"
cp "$build"/docs/reference/*.md "$root/docs/reference/"
git -C "$root" status --short docs/reference
