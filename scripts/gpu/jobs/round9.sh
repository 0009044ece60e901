#!/usr/bin/env bash
# The ninth session's GPU jobs (bench/RESULTS.md), from the repository root
# with the build carried as .gpu-carry; logs under $OUT:
#   dwprof  Nsight Compute on the depthwise kernel (issue 23): X3D's C=432
#           16x14x14 (both filter layouts: conv3d-run's QRSCF and PyTorch's
#           FQRSC), X3D's C=54 16x56x56 and CSN's C=256 8x28x28, bf16,
#           3x3x3, padding 1: where the time goes against the memory limit.
#   dwtime  the depthwise rows of bench/grouped.py (against cuDNN and the
#           memory limit) with the library before (.gpu-carry/lib-old, a
#           copy of the previous build's libConv3d.so) and after the FQRSC
#           filter relayout, interleaved twice; the four conv3d-run shapes
#           with the new build; mvit_v2_s's convolutions (bench/networks.py).
#   splitk  issue 21's worst layer, the U-Net bottleneck (N=2, C=F=320,
#           4x6x6, 3x3x3), whose split_k=8 configuration the cost model
#           predicts at 17 us and the network bench measured at 76 us:
#           conv3d-run medians of several configurations, then Nsight
#           Compute's kernel list and durations of the chosen one.
set -u
phase="${1:-}"
JOB_BUDGET_S=570 source "$(dirname "${BASH_SOURCE[0]}")/../job-setup.sh"
ncu_sections="--section SpeedOfLight --section LaunchStats --section Occupancy --section WarpStateStats --section MemoryWorkloadAnalysis"
dw() {  # dw NAME INPUT_SHAPE C LAYOUT
  local name="$1" shape="$2" c="$3" layout="$4"
  local args="--target=sm90 --dtype=bf16 --input-shape=$shape --filter-shape=3,3,3,1,$c --groups=$c --padding=1,1,1,1,1,1 --filter-layout=$layout"
  timeout "$(left 60)" conv3d-run $args --repeat=20 > "$out/$name-run.log" 2>&1 || echo "$name run rc=$?"
  grep -E "^run:|^check:" "$out/$name-run.log"
  timeout "$(left 120)" ncu $ncu_sections --launch-count 8 conv3d-run $args --repeat=1 \
    > "$out/$name-ncu.log" 2>&1 || echo "$name ncu rc=$?"
  grep -E "^  [a-zA-Z_0-9]+.*\(|Duration|DRAM Throughput|Memory Throughput|Compute \(SM\)|Registers Per|Block Size|Grid Size|Achieved Occupancy|Theoretical Occupancy|L1/TEX Hit|L2 Hit|Warp Cycles Per Issued|Issue Slots Busy|Executed Ipc A|Stall|Mem Busy|Max Bandwidth" \
    "$out/$name-ncu.log" | head -60
}
case "$phase" in
  dwprof)
    dw x3d432-qrscf 4,16,14,14,432 432 qrscf
    dw x3d432-fqrsc 4,16,14,14,432 432 fqrsc
    dw x3d54-fqrsc 4,16,56,56,54 54 fqrsc
    dw csn256-fqrsc 4,8,28,28,256 256 fqrsc
    elapsed dwprof ;;
  dwtime)
    only="x3d_dw_c432_16x14x14 x3d_dw_c54_16x56x56 csn_dw_c256_8x28x28 mvit_pool_c96_8x56x56_s1 mvit_pool_c96_8x56x56_s188"
    for round in 1 2; do
      for lib in lib-old lib; do
        CONV3D_LIB="$carry/$lib/libConv3d.so" timeout "$(left 90)" python3 bench/grouped.py --target sm90 \
          --only $only --json "$out/grouped-$lib-$round.json" > "$out/grouped-$lib-$round.log" 2>&1 \
          || echo "grouped $lib rc=$?"
        echo "== $lib round $round"; grep -E "^\| (x3d|csn|mvit)" "$out/grouped-$lib-$round.log"
      done
    done
    elapsed grouped
    for spec in "x3d432 4,16,14,14,432 432" "x3d54 4,16,56,56,54 54" "csn256 4,8,28,28,256 256"; do
      set -- $spec
      for layout in qrscf fqrsc; do
        echo "$1 $layout: $(timeout "$(left 60)" conv3d-run --target=sm90 --dtype=bf16 --input-shape=$2 \
          --filter-shape=3,3,3,1,$3 --groups=$3 --padding=1,1,1,1,1,1 --filter-layout=$layout --repeat=20 \
          2>&1 | grep -E "^run:|^check:" | tr '\n' ' ')"
      done
    done
    timeout "$(left 150)" python3 bench/networks.py --networks mvit_v2_s --sizes 224 --wall-reps 3 \
      --out "$out/mvit" > "$out/mvit.log" 2>&1 || echo "mvit rc=$?"
    grep -E "^\| mvit|networks whose|FAIL" "$out/mvit.log" | head
    elapsed dwtime ;;
  splitk)
    args="--target=sm90 --dtype=bf16 --input-shape=2,4,6,6,320 --filter-shape=3,3,3,320,320 --padding=1,1,1,1,1,1 --filter-layout=fqrsc --bias"
    for config in auto "tile_m=128,tile_n=160,tile_k=64,stages=5,warps_m=8,kernel=sm90" \
        "tile_m=128,tile_n=64,tile_k=64,stages=6,warps_m=8,split_k=2,kernel=sm90" \
        "tile_m=128,tile_n=64,tile_k=64,stages=6,warps_m=8,split_k=4,kernel=sm90" \
        "tile_m=128,tile_n=64,tile_k=64,stages=6,warps_m=8,split_k=8,kernel=sm90" \
        "tile_m=64,tile_n=64,tile_k=64,stages=6,warps_m=4,split_k=4,kernel=sm90"; do
      flag="--config=$config"; [ "$config" = auto ] && flag=""
      echo "$config: $(timeout "$(left 60)" conv3d-run $args $flag --repeat=50 2>&1 \
        | grep -E "^run:|^check:|error" | tr '\n' ' ')"
    done
    timeout "$(left 120)" ncu --section SpeedOfLight --section LaunchStats conv3d-run $args --repeat=1 \
      > "$out/splitk-ncu.log" 2>&1 || echo "ncu rc=$?"
    grep -E "^  [a-zA-Z_0-9]+.*\(|Duration|Grid Size|Block Size|Cluster Size|Registers Per|Compute \(SM\)|DRAM Through" \
      "$out/splitk-ncu.log" | head -40
    elapsed splitk ;;
  *) echo "usage: round9.sh dwprof|dwtime|splitk" >&2; exit 2 ;;
esac
