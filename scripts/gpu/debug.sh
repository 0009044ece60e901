#!/usr/bin/env bash
# Focused GPU experiments: each argument line is run under compute-sanitizer
# memcheck and plainly. Usage: scripts/gpu/debug.sh "<conv3d-run args>" ...
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
source scripts/gpu/env.sh
for args in "$@"; do
  echo "=== $args"
  /usr/local/cuda/bin/compute-sanitizer --tool memcheck --print-limit 5 \
    conv3d-run --quiet --target=sm80 $args 2>&1 | grep -v "^=========     " | head -30
  echo "--- plain"
  conv3d-run --quiet --target=sm80 $args 2>&1 | tail -2
done
