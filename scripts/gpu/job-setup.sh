# Sourced first by the GPU scripts (run.sh, jobs/*.sh): strict mode
# (set -uo pipefail), the repository root as the working directory, the
# carried build's environment (env.sh), "$out" made ($OUT, default
# /tmp/conv3d-out) and status=0; and `left N`: N seconds, or what is left
# of the job's budget ($JOB_BUDGET_S seconds from the source, default 340)
# when that is less, for `timeout "$(left N)" ...`.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
source scripts/gpu/env.sh
out="${OUT:-/tmp/conv3d-out}"
mkdir -p "$out"
status=0
deadline=$(( $(date +%s) + ${JOB_BUDGET_S:-340} ))
left() {
  local l=$(( deadline - $(date +%s) ))
  if [ "$l" -lt "$1" ]; then echo $(( l > 1 ? l : 1 )); else echo "$1"; fi
}
