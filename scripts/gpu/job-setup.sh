# Sourced first by the GPU scripts (run.sh, jobs/*.sh): strict mode
# (set -uo pipefail), the repository root as the working directory, the
# carried build's environment (env.sh), "$out" made ($OUT, default
# /tmp/conv3d-out) and status=0; and `left N`: N seconds, or what is left
# of the job's budget ($JOB_BUDGET_S seconds from the source, default 340)
# when that is less, for `timeout "$(left N)" ...`; `elapsed WHAT` (seconds
# since the source) and `train MODEL SECONDS` (bench/train_step.py on one
# model, its log and JSON under $out, a Python traceback if it runs out of
# time) for the round jobs.
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
t0=$(date +%s)
elapsed() { echo "$1 done at $(( $(date +%s) - t0 )) s"; }
train() {  # train MODEL SECONDS
  timeout -s ABRT "$(left "$2")" python3 -X faulthandler -u bench/train_step.py --models "$1" \
    --reps 3 --warmup 1 --profile-reps 1 --json "$out/train_step-$1.json" \
    > "$out/train_step-$1.log" 2>&1 || echo "$1 rc=$?"
  grep -E "CHECK|speed|peak|step |fallbacks" "$out/train_step-$1.log" | cut -c1-300 | head -20
  elapsed "$1"
}
