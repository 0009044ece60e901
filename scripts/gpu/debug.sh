#!/usr/bin/env bash
# Focused GPU experiments: each argument line is run under compute-sanitizer
# (the tools in $TOOLS, default memcheck; e.g. TOOLS="memcheck racecheck
# synccheck initcheck") and plainly, on $TARGET (default sm80). Usage:
#   scripts/gpu/debug.sh "<conv3d-run args>" ...
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
source scripts/gpu/env.sh
for args in "$@"; do
  echo "=== $args"
  for tool in ${TOOLS:-memcheck}; do
    echo "--- $tool"
    /usr/local/cuda/bin/compute-sanitizer --tool "$tool" --print-limit 5 \
      conv3d-run --quiet --no-cache --target="${TARGET:-sm80}" $args 2>&1 |
      grep -v "^=========     " | head -30
  done
  echo "--- plain"
  conv3d-run --quiet --no-cache --target="${TARGET:-sm80}" $args 2>&1 | tail -2
done
