// conv3d-select-config with the cost model (selection=model, the default):
// on a late, low-resolution layer (M = 196 rows, K = 13824) the model takes
// split-K, which the rules never choose; selection=heuristic keeps the
// rules' 128 x 256 tiles. Other targets keep their
// rules whatever the selection.
//
// RUN: conv3d-opt %s -conv3d-select-config="target=sm90" | FileCheck %s --check-prefix=MODEL
// RUN: conv3d-opt %s -conv3d-select-config="target=sm90 selection=heuristic" | FileCheck %s --check-prefix=RULES
// RUN: conv3d-opt %s -conv3d-select-config="target=sm80" > %t.model80
// RUN: conv3d-opt %s -conv3d-select-config="target=sm80 selection=heuristic" > %t.rules80
// RUN: diff %t.model80 %t.rules80
// RUN: not conv3d-opt %s -conv3d-select-config="target=sm90 selection=fastest" 2>&1 | FileCheck %s --check-prefix=BAD

// MODEL: #conv3d.igemm_config<tile_m = 64, {{.*}}split_k = {{[0-9]+}}, kernel = sm90>
// RULES: #conv3d.igemm_config<tile_m = 128, tile_n = 256, tile_k = 64, stages = 3, warps_m = 8, kernel = sm90>
// BAD: Cannot find option named 'fastest'

func.func @late(%x: tensor<2x4x9x9x512xbf16>, %w: tensor<512x3x3x3x512xbf16>, %i: tensor<2x2x7x7x512xbf16>) -> tensor<2x2x7x7x512xbf16> {
  %0 = conv3d.conv ins(%x, %w : tensor<2x4x9x9x512xbf16>, tensor<512x3x3x3x512xbf16>) outs(%i : tensor<2x2x7x7x512xbf16>) overwrite filter_layout = fqrsc -> tensor<2x2x7x7x512xbf16>
  return %0 : tensor<2x2x7x7x512xbf16>
}

// A forced fused Q-slice strategy needs k_order = qslice_outer: where the
// model's pick needs the flat K order (split-K), the rules' is taken.
// RUN: conv3d-opt %s -conv3d-qslice="strategy=fused target=sm90" | FileCheck %s --check-prefix=FUSED
// FUSED: #conv3d.igemm_config<tile_m = 128, tile_n = 256, tile_k = 64, stages = 3, warps_m = 8, k_order = qslice_outer, kernel = sm90>

// In the pipelines, a forced fused strategy selects with the rules (the
// conv3d-select-config before conv3d-qslice would otherwise attach split-K).
// RUN: conv3d-opt %s --conv3d-cpu-pipeline="target=sm90 qslice=fused" --mlir-print-ir-after=conv3d-qslice 2>&1 | FileCheck %s --check-prefix=PIPE
// PIPE: k_order = qslice_outer, kernel = sm90
// PIPE-NOT: split_k
