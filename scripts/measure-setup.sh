#!/usr/bin/env bash
# Measures the README's two set-up figures as a newcomer meets them: clones
# the repository into a fresh folder, runs `scripts/setup.sh` and then the
# README's test command, each under `time`, and prints both (wall time, and
# the CPU time user + sys) with setup.sh's own phases (packages, tools built,
# example run, rest built).
#
#   scripts/measure-setup.sh [SOURCE [DEST]]
#
# SOURCE: what to clone (default: this checkout's committed HEAD); DEST: the
# clone's folder (default: a new temporary folder; it must not exist). Meant
# for a fresh, otherwise idle 2-core machine: on a machine whose packages are
# installed the package phase measures nothing, and the compiler cache is
# bypassed (CCACHE_DISABLE=1) so that the build is compiled, not fetched.
# Environment: CONV3D_JOBS (default: number of cores), passed to setup.sh.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source="${1:-$here}"
dest="${2:-$(mktemp -d)/conv3d-mlir}"
[[ -e "$dest" ]] && { echo "measure-setup: $dest exists" >&2; exit 2; }
export CCACHE_DISABLE=1

git clone -q "$source" "$dest"
cd "$dest"
log="$dest/measure-setup.log"

# One command under bash's `time` (GNU time and bc are not on a fresh
# Debian): wall and CPU seconds into the named variables.
measure() {
  local wall_var=$1 cpu_var=$2 t wall user sys
  shift 2
  t=$(mktemp)
  { TIMEFORMAT='%R %U %S'; time "$@" 2>&1 | tee -a "$log"; } 2> "$t"
  read -r wall user sys < "$t"
  rm -f "$t"
  printf -v "$wall_var" '%.0f' "$wall"
  printf -v "$cpu_var" '%.0f' "$(awk -v u="$user" -v s="$sys" 'BEGIN { print u + s }')"
}

measure setup_wall setup_cpu scripts/setup.sh
measure test_wall test_cpu cmake --build build --target check-conv3d

echo
echo "machine: $(nproc) cores, $(uname -r), $(date -u +%Y-%m-%dT%H:%MZ)"
echo "commit:  $(git rev-parse --short HEAD)"
grep -E '^\[setup\] .* in [0-9]+ s$' "$log" | sed 's/^/  /'
echo "set-up (scripts/setup.sh):                    ${setup_wall} s wall, ${setup_cpu} s CPU"
echo "test command (check-conv3d):                  ${test_wall} s wall, ${test_cpu} s CPU"
echo "README: set-up about $(( (setup_wall + 30) / 60 )) minutes, the test suite about ${test_wall} seconds"
