#!/usr/bin/env bash
# The eighth session's checks (bench/RESULTS.md), from the repository root
# with the build carried as .gpu-carry; logs and results.tgz under $OUT:
#   check  the GPU unit tests, each test's time printed (the seventh
#          session's binaries ran past a 60 s limit on an H200), then the
#          two GPU sweeps that failed there on accumulate cases (sm80 seed
#          71, sm90 seed 41; a synchronous upload racing the runtime's
#          non-blocking stream), three times each, then every GPU execution
#          lit test;
#   lit    every GPU execution lit test alone;
#   unet   the U-Net training step with the output layout rule of f450770
#          alone (its weight-gradient change reverted), ten kernels per
#          class and by op: where the "other" kernels that grew by 7 ms
#          with both changes come from (issue 22).
set -u
phase="${1:-}"
JOB_BUDGET_S=570 source "$(dirname "${BASH_SOURCE[0]}")/../job-setup.sh"
case "$phase" in
  check)
    bash scripts/gpu/run.sh info > "$out/info.log" 2>&1
    timeout "$(left 200)" "$carry/unittests/Conv3dUnitTests" --gtest_print_time=1 \
      > "$out/unit.log" 2>&1 || echo "unit rc=$?"
    grep -E "^\[  (FAILED|PASSED|SKIPPED) |tests? ran|^\[ +OK \].*\(([0-9]{4,}) ms\)" "$out/unit.log" | tail -25
    elapsed unit
    for round in 1 2 3; do
      timeout "$(left 250)" "$carry/bin/conv3d-sweep" --target=sm80 --count=40 --dtypes=bf16,f16 --seed=71 \
        --variants=packed,epilogue,accumulate,quant,config,qslice 2>&1 | tail -3
      timeout "$(left 230)" "$carry/bin/conv3d-sweep" --target=sm90 --count=40 --dtypes=bf16,f16 --seed=41 \
        --geometries=tma-rank4 --variants=epilogue,accumulate,fqrsc,qslice,config 2>&1 | tail -3
    done
    elapsed sweeps
    LIT_FILTER='GPU/.*(-run|cupy|host-overhead)' OUT="$out" timeout "$(left 300)" \
      bash scripts/gpu/run.sh lit > "$out/lit-all.log" 2>&1 || echo "lit rc=$?"
    grep -E "^(FAIL|  Passed|  Failed|  Unsup)" "$out/lit.log" | tail -30
    elapsed lit ;;
  lit)
    LIT_FILTER='GPU/.*(-run|cupy|host-overhead)' OUT="$out" timeout "$(left 400)" \
      bash scripts/gpu/run.sh lit > "$out/lit-all.log" 2>&1 || echo "lit rc=$?"
    grep -E "^(FAIL|  Passed|  Failed|  Unsup)" "$out/lit.log" | tail -30
    elapsed lit ;;
  unet)
    timeout -s ABRT "$(left 300)" python3 -X faulthandler -u bench/train_step.py --models unet \
      --reps 3 --warmup 1 --profile-reps 1 --top 10 --json "$out/train_step-unet.json" \
      > "$out/train_step-unet.log" 2>&1 || echo "unet rc=$?"
    grep -E "CHECK|speed|step |by op|\[other\]|\[conv glue\]" "$out/train_step-unet.log" | cut -c1-2500
    elapsed unet ;;
  *) echo "usage: round8.sh check|lit|unet" >&2; exit 2 ;;
esac
tar -C "$out" -czf /tmp/results.tgz . && mv /tmp/results.tgz "$out/results.tgz"
