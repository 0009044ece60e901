// conv3d-lower-to-cpu: each implicit-GEMM tile op becomes scf.for loops
// over its tile with memref loads and stores; conv3d.epilogue on memrefs
// becomes a linalg.generic; anything else of the dialect is an error.
//
// RUN: split-file %s %t
// RUN: conv3d-opt %t/tiles.mlir -split-input-file -conv3d-lower-to-cpu | FileCheck %s
// RUN: conv3d-opt %t/conv.mlir -conv3d-implicit-gemm -conv3d-lower-to-cpu | FileCheck %s --check-prefix=CONV
// RUN: conv3d-opt %t/errors.mlir -split-input-file -conv3d-lower-to-cpu -verify-diagnostics

//--- tiles.mlir

// The im2col gather: rows m0 + i of the tile are output positions (n, do,
// ho, wo) of a 4x4x4 output (M = 64), columns k0 + j are taps (q, r, s, c)
// of a 3x3x3 window over C = 16. Rows past M and columns past the limit are
// zero; every input coordinate is clamped into the tensor for the load, and
// a select zeroes the halo.

// CHECK-LABEL: func.func @im2col
// CHECK-SAME: (%[[X:.*]]: memref<1x4x4x4x16xbf16>, %[[T:.*]]: memref<8x16xbf16>, %[[M0:.*]]: index, %[[K0:.*]]: index, %[[KEND:.*]]: index)
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : bf16
// CHECK-DAG: %[[CM2:.*]] = arith.constant -2 : index
// CHECK-DAG: %[[CM1:.*]] = arith.constant -1 : index
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C3:.*]] = arith.constant 3 : index
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG: %[[C8:.*]] = arith.constant 8 : index
// CHECK-DAG: %[[C16:.*]] = arith.constant 16 : index
// CHECK-DAG: %[[C64:.*]] = arith.constant 64 : index
// CHECK: scf.for %[[I:.*]] = %[[C0]] to %[[C8]] step
// CHECK-NEXT: %[[M:.*]] = arith.addi %[[M0]], %[[I]] : index
// CHECK-NEXT: %[[MVALID:.*]] = arith.cmpi ult, %[[M]], %[[C64]] : index
// CHECK-NEXT: %[[MSAFE:.*]] = arith.select %[[MVALID]], %[[M]], %[[C0]] : index
// CHECK: scf.for %[[J:.*]] = %[[C0]] to %[[C16]] step
// CHECK-NEXT: %[[K:.*]] = arith.addi %[[K0]], %[[J]] : index
// CHECK-NEXT: %[[KVALID:.*]] = arith.cmpi ult, %[[K]], %[[KEND]] : index
// CHECK-NEXT: %[[KSAFE:.*]] = arith.select %[[KVALID]], %[[K]], %[[C0]] : index
// CHECK-NEXT: %[[CH:.*]] = arith.remui %[[KSAFE]], %[[C16]] : index
// Depth: do - 2 + q, in [0, 4) or halo; clamped to [0, 3].
// CHECK: %[[DBASE:.*]] = arith.addi %{{.*}}, %[[CM2]] : index
// CHECK-NEXT: %[[D:.*]] = arith.addi %[[DBASE]], %{{.*}} : index
// CHECK-NEXT: %[[DGE:.*]] = arith.cmpi sge, %[[D]], %[[C0]] : index
// CHECK-NEXT: %[[DLT:.*]] = arith.cmpi slt, %[[D]], %[[C4]] : index
// CHECK-NEXT: %[[DIN:.*]] = arith.andi %[[DGE]], %[[DLT]] : i1
// CHECK-NEXT: %{{.*}} = arith.andi %{{.*}}, %[[DIN]] : i1
// CHECK-NEXT: %[[DLO:.*]] = arith.maxsi %[[D]], %[[C0]] : index
// CHECK-NEXT: %[[DC:.*]] = arith.minsi %[[DLO]], %[[C3]] : index
// Height and width: - 1 + tap.
// CHECK: arith.addi %{{.*}}, %[[CM1]] : index
// CHECK: %[[HC:.*]] = arith.minsi %{{.*}}, %[[C3]] : index
// CHECK-NEXT: %[[WBASE:.*]] = arith.addi %{{.*}}, %[[CM1]] : index
// CHECK-NEXT: %[[WCOORD:.*]] = arith.addi %[[WBASE]], %{{.*}} : index
// CHECK-NEXT: %[[WGE:.*]] = arith.cmpi sge, %[[WCOORD]], %[[C0]] : index
// CHECK-NEXT: %[[WLT:.*]] = arith.cmpi slt, %[[WCOORD]], %[[C4]] : index
// CHECK-NEXT: %[[WIN:.*]] = arith.andi %[[WGE]], %[[WLT]] : i1
// CHECK-NEXT: %[[VALID:.*]] = arith.andi %{{.*}}, %[[WIN]] : i1
// CHECK-NEXT: %[[WLO:.*]] = arith.maxsi %[[WCOORD]], %[[C0]] : index
// CHECK-NEXT: %[[WC:.*]] = arith.minsi %[[WLO]], %[[C3]] : index
// CHECK-NEXT: %[[V:.*]] = memref.load %[[X]][%{{.*}}, %[[DC]], %[[HC]], %[[WC]], %[[CH]]] : memref<1x4x4x4x16xbf16>
// CHECK-NEXT: %[[VZ:.*]] = arith.select %[[VALID]], %[[V]], %[[ZERO]] : bf16
// CHECK-NEXT: memref.store %[[VZ]], %[[T]][%[[I]], %[[J]]] : memref<8x16xbf16>
// CHECK-NOT: conv3d.
// CHECK: return
func.func @im2col(%x: memref<1x4x4x4x16xbf16>, %t: memref<8x16xbf16>, %m0: index, %k0: index, %k1: index) {
  conv3d.load_im2col_tile %x[%m0, %k0] limit %k1 into %t window = [3, 3, 3] padding = [2, 0, 1, 1, 1, 1] : memref<1x4x4x4x16xbf16>, memref<8x16xbf16>
  return
}

// -----

// With quantization, each row is then quantized in blocks of 16 columns:
// a block-maximum reduction (maxnumf of |x|), the E4M3 block scale and the
// E2M1 rounding (roundeven), rounded back to bf16 in place.

// CHECK-LABEL: func.func @im2col_quantized
// CHECK-SAME: (%[[X:.*]]: memref<1x4x4x4x16xbf16>, %[[T:.*]]: memref<8x32xbf16>, %[[AMAX:.*]]: f32,
// CHECK-DAG: %[[FZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG: %[[C16:.*]] = arith.constant 16 : index
// The gather, as above.
// CHECK: memref.load %[[X]]
// CHECK: memref.store %{{.*}}, %[[T]]
// Then per row, per block:
// CHECK: scf.for %[[ROW:.*]] = {{.*}} {
// CHECK-NEXT: scf.for %[[BLK:.*]] = %{{.*}} to %[[C2]] step
// CHECK-NEXT: %[[START:.*]] = arith.muli %[[BLK]], %[[C16]] : index
// CHECK-NEXT: %[[BMAX:.*]] = scf.for %{{.*}} = %{{.*}} to %[[C16]] step %{{.*}} iter_args(%[[PARTIAL:.*]] = %[[FZERO]]) -> (f32) {
// CHECK: %[[E:.*]] = memref.load %[[T]][%[[ROW]], %{{.*}}] : memref<8x32xbf16>
// CHECK-NEXT: %[[EF:.*]] = arith.extf %[[E]] : bf16 to f32
// CHECK-NEXT: %[[ABS:.*]] = math.absf %[[EF]] : f32
// CHECK-NEXT: %[[NEWMAX:.*]] = arith.maxnumf %[[PARTIAL]], %[[ABS]] : f32
// CHECK-NEXT: scf.yield %[[NEWMAX]] : f32
// CHECK: arith.divf %[[AMAX]],
// CHECK: arith.divf %[[BMAX]],
// CHECK: math.roundeven
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[C16]] step
// CHECK: memref.load %[[T]][%[[ROW]],
// CHECK: arith.addf
// CHECK-NEXT: arith.subf
// CHECK-NEXT: arith.minimumf
// CHECK: math.copysign
// CHECK: %[[Q:.*]] = arith.truncf %{{.*}} : f32 to bf16
// CHECK-NEXT: memref.store %[[Q]], %[[T]][%[[ROW]], %{{.*}}] : memref<8x32xbf16>
func.func @im2col_quantized(%x: memref<1x4x4x4x16xbf16>, %t: memref<8x32xbf16>, %amax: f32, %m0: index, %k0: index, %k1: index) {
  conv3d.load_im2col_tile %x[%m0, %k0] limit %k1 into %t quantize(#conv3d.nvfp4<block_size = 16>, %amax) window = [1, 1, 1] : memref<1x4x4x4x16xbf16>, memref<8x32xbf16>
  return
}

// -----

// The filter tile: rows k0 + i are taps (q, r, s, c), columns n0 + j
// filters; FQRSC loads filter[f, q, r, s, c]. Out-of-range rows and columns
// are zero (the load itself uses clamped indices).

// CHECK-LABEL: func.func @filter_fqrsc
// CHECK-SAME: (%[[W:.*]]: memref<8x3x3x3x16xbf16>, %[[T:.*]]: memref<16x8xbf16>, %[[K0:.*]]: index, %[[N0:.*]]: index, %[[KEND:.*]]: index)
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : bf16
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C8:.*]] = arith.constant 8 : index
// CHECK-DAG: %[[C16:.*]] = arith.constant 16 : index
// CHECK: scf.for %[[I:.*]] = %[[C0]] to %[[C16]] step
// CHECK-NEXT: %[[K:.*]] = arith.addi %[[K0]], %[[I]] : index
// CHECK-NEXT: %[[KVALID:.*]] = arith.cmpi ult, %[[K]], %[[KEND]] : index
// CHECK-NEXT: %[[KSAFE:.*]] = arith.select %[[KVALID]], %[[K]], %[[C0]] : index
// CHECK-NEXT: %[[C:.*]] = arith.remui %[[KSAFE]], %[[C16]] : index
// CHECK-NEXT: %[[RSQ:.*]] = arith.divui %[[KSAFE]], %[[C16]] : index
// CHECK-NEXT: %[[S:.*]] = arith.remui %[[RSQ]], %{{.*}} : index
// CHECK-NEXT: %[[RQ:.*]] = arith.divui %[[RSQ]], %{{.*}} : index
// CHECK-NEXT: %[[R:.*]] = arith.remui %[[RQ]], %{{.*}} : index
// CHECK-NEXT: %[[Q:.*]] = arith.divui %[[RQ]], %{{.*}} : index
// CHECK-NEXT: scf.for %[[J:.*]] = %[[C0]] to %[[C8]] step
// CHECK-NEXT: %[[F:.*]] = arith.addi %[[N0]], %[[J]] : index
// CHECK-NEXT: %[[FVALID:.*]] = arith.cmpi ult, %[[F]], %[[C8]] : index
// CHECK-NEXT: %[[FSAFE:.*]] = arith.select %[[FVALID]], %[[F]], %[[C0]] : index
// CHECK-NEXT: %[[V:.*]] = memref.load %[[W]][%[[FSAFE]], %[[Q]], %[[R]], %[[S]], %[[C]]] : memref<8x3x3x3x16xbf16>
// CHECK-NEXT: %[[VALID:.*]] = arith.andi %[[KVALID]], %[[FVALID]] : i1
// CHECK-NEXT: %[[VZ:.*]] = arith.select %[[VALID]], %[[V]], %[[ZERO]] : bf16
// CHECK-NEXT: memref.store %[[VZ]], %[[T]][%[[I]], %[[J]]] : memref<16x8xbf16>
func.func @filter_fqrsc(%w: memref<8x3x3x3x16xbf16>, %t: memref<16x8xbf16>, %k0: index, %n0: index, %k1: index) {
  conv3d.load_filter_tile %w[%k0, %n0] limit %k1 into %t filter_layout = fqrsc : memref<8x3x3x3x16xbf16>, memref<16x8xbf16>
  return
}

// -----

// QRSCF loads filter[q, r, s, c, f].

// CHECK-LABEL: func.func @filter_qrscf
// CHECK-SAME: (%[[W:.*]]: memref<3x3x3x16x8xf32>,
// CHECK: memref.load %[[W]][%{{.*}}, %{{.*}}, %{{.*}}, %[[C:.*]], %[[F:.*]]] : memref<3x3x3x16x8xf32>
func.func @filter_qrscf(%w: memref<3x3x3x16x8xf32>, %t: memref<16x8xf32>, %k0: index, %n0: index, %k1: index) {
  conv3d.load_filter_tile %w[%k0, %n0] limit %k1 into %t : memref<3x3x3x16x8xf32>, memref<16x8xf32>
  return
}

// -----

// The MMA: i, k, j loops; products and sums in f32.

// CHECK-LABEL: func.func @mma
// CHECK-SAME: (%[[A:.*]]: memref<4x8xbf16>, %[[B:.*]]: memref<8x2xbf16>, %[[ACC:.*]]: memref<4x2xf32>)
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG: %[[C8:.*]] = arith.constant 8 : index
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %[[C4]] step
// CHECK-NEXT: scf.for %[[K:.*]] = %{{.*}} to %[[C8]] step
// CHECK-NEXT: %[[AV:.*]] = memref.load %[[A]][%[[I]], %[[K]]] : memref<4x8xbf16>
// CHECK-NEXT: %[[AF:.*]] = arith.extf %[[AV]] : bf16 to f32
// CHECK-NEXT: scf.for %[[J:.*]] = %{{.*}} to %[[C2]] step
// CHECK-NEXT: %[[BV:.*]] = memref.load %[[B]][%[[K]], %[[J]]] : memref<8x2xbf16>
// CHECK-NEXT: %[[BF:.*]] = arith.extf %[[BV]] : bf16 to f32
// CHECK-NEXT: %[[OLD:.*]] = memref.load %[[ACC]][%[[I]], %[[J]]] : memref<4x2xf32>
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[AF]], %[[BF]] : f32
// CHECK-NEXT: %[[SUM:.*]] = arith.addf %[[OLD]], %[[P]] : f32
// CHECK-NEXT: memref.store %[[SUM]], %[[ACC]][%[[I]], %[[J]]] : memref<4x2xf32>
func.func @mma(%a: memref<4x8xbf16>, %b: memref<8x2xbf16>, %acc: memref<4x2xf32>) {
  conv3d.tile_mma %a, %b, %acc : memref<4x8xbf16>, memref<8x2xbf16>, memref<4x2xf32>
  return
}

// -----

// The output store, guarded per element by m < M and f < F, applies the
// epilogue: bias (widened), silu (with math.exp), residual, and the cast.

// CHECK-LABEL: func.func @store_overwrite_silu
// CHECK-SAME: (%[[ACC:.*]]: memref<4x8xf32>, %[[O:.*]]: memref<1x2x2x2x8xbf16>, %[[B:.*]]: memref<8xbf16>, %[[R:.*]]: memref<1x2x2x2x8xf32>, %[[M0:.*]]: index, %[[N0:.*]]: index)
// CHECK-DAG: %[[C8:.*]] = arith.constant 8 : index
// CHECK: scf.for %[[I:.*]] =
// CHECK-NEXT: %[[ROW:.*]] = arith.addi %[[M0]], %[[I]] : index
// CHECK-NEXT: %[[ROWOK:.*]] = arith.cmpi ult, %[[ROW]], %[[C8]] : index
// CHECK-NEXT: scf.for %[[J:.*]] =
// CHECK-NEXT: %[[F:.*]] = arith.addi %[[N0]], %[[J]] : index
// CHECK-NEXT: %[[FOK:.*]] = arith.cmpi ult, %[[F]], %[[C8]] : index
// CHECK-NEXT: %[[OK:.*]] = arith.andi %[[ROWOK]], %[[FOK]] : i1
// CHECK-NEXT: scf.if %[[OK]] {
// CHECK: %[[A:.*]] = memref.load %[[ACC]][%[[I]], %[[J]]] : memref<4x8xf32>
// CHECK-NEXT: %[[BV:.*]] = memref.load %[[B]][%[[F]]] : memref<8xbf16>
// CHECK-NEXT: %[[RV:.*]] = memref.load %[[R]][%[[N:.*]], %[[D:.*]], %[[H:.*]], %[[W:.*]], %[[F]]] : memref<1x2x2x2x8xf32>
// CHECK-NEXT: %[[BF:.*]] = arith.extf %[[BV]] : bf16 to f32
// CHECK-NEXT: %[[X:.*]] = arith.addf %[[A]], %[[BF]] : f32
// CHECK-NEXT: %[[NEG:.*]] = arith.negf %[[X]] : f32
// CHECK-NEXT: %[[EXP:.*]] = math.exp %[[NEG]] : f32
// CHECK-NEXT: %[[DEN:.*]] = arith.addf %[[EXP]], %{{.*}} : f32
// CHECK-NEXT: %[[SILU:.*]] = arith.divf %[[X]], %[[DEN]] : f32
// CHECK-NEXT: %[[Y:.*]] = arith.addf %[[SILU]], %[[RV]] : f32
// CHECK-NEXT: %[[YB:.*]] = arith.truncf %[[Y]] : f32 to bf16
// CHECK-NEXT: memref.store %[[YB]], %[[O]][%[[N]], %[[D]], %[[H]], %[[W]], %[[F]]] : memref<1x2x2x2x8xbf16>
func.func @store_overwrite_silu(%acc: memref<4x8xf32>, %o: memref<1x2x2x2x8xbf16>, %b: memref<8xbf16>, %r: memref<1x2x2x2x8xf32>, %m0: index, %n0: index) {
  conv3d.store_output_tile %acc into %o[%m0, %n0] bias(%b : memref<8xbf16>) residual(%r : memref<1x2x2x2x8xf32>) mode = overwrite activation = silu : memref<4x8xf32>, memref<1x2x2x2x8xbf16>
  return
}

// -----

// accumulate: the destination is read, widened and added first.

// CHECK-LABEL: func.func @store_accumulate_relu
// CHECK-SAME: (%[[ACC:.*]]: memref<4x8xf32>, %[[O:.*]]: memref<1x2x2x2x8xbf16>,
// CHECK: scf.if
// CHECK: %[[A:.*]] = memref.load %[[ACC]]
// CHECK-NEXT: %[[OLD:.*]] = memref.load %[[O]][%[[N:.*]], %[[D:.*]], %[[H:.*]], %[[W:.*]], %[[F:.*]]] : memref<1x2x2x2x8xbf16>
// CHECK-NEXT: %[[OLDF:.*]] = arith.extf %[[OLD]] : bf16 to f32
// CHECK-NEXT: %[[SUM:.*]] = arith.addf %[[A]], %[[OLDF]] : f32
// CHECK-NEXT: %[[RELU:.*]] = arith.maximumf %[[SUM]], %{{.*}} : f32
// CHECK-NEXT: %[[YB:.*]] = arith.truncf %[[RELU]] : f32 to bf16
// CHECK-NEXT: memref.store %[[YB]], %[[O]][%[[N]], %[[D]], %[[H]], %[[W]], %[[F]]]
func.func @store_accumulate_relu(%acc: memref<4x8xf32>, %o: memref<1x2x2x2x8xbf16>, %m0: index, %n0: index) {
  conv3d.store_output_tile %acc into %o[%m0, %n0] mode = accumulate activation = relu : memref<4x8xf32>, memref<1x2x2x2x8xbf16>
  return
}

// -----

// partial: the f32 partial sums stored into slab `split` of the workspace,
// no epilogue, no atomics.

// CHECK-LABEL: func.func @store_partial
// CHECK-SAME: (%[[ACC:.*]]: memref<4x8xf32>, %[[O:.*]]: memref<3x1x2x2x2x8xf32>, %{{.*}}: index, %{{.*}}: index, %[[S:.*]]: index)
// CHECK: scf.if
// CHECK: %[[A:.*]] = memref.load %[[ACC]]
// CHECK-NEXT: memref.store %[[A]], %[[O]][%[[S]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] : memref<3x1x2x2x2x8xf32>
// CHECK-NEXT: }
// CHECK-NOT: memref.atomic_rmw
func.func @store_partial(%acc: memref<4x8xf32>, %o: memref<3x1x2x2x2x8xf32>, %m0: index, %n0: index, %s: index) {
  conv3d.store_output_tile %acc into %o[%m0, %n0] split(%s) mode = partial : memref<4x8xf32>, memref<3x1x2x2x2x8xf32>
  return
}

// -----

// conv3d.epilogue of a stack of split-K partial sums: one input per slab,
// added in split order, then the epilogue (here accumulating onto the
// destination).

// CHECK-LABEL: func.func @epilogue_slabs
// CHECK-SAME: (%[[S:.*]]: memref<3x1x2x2x2x8xf32>, %[[O:.*]]: memref<1x2x2x2x8xf32>)
// CHECK: %[[S0:.*]] = memref.subview %[[S]][0, 0, 0, 0, 0, 0] [1, 1, 2, 2, 2, 8] [1, 1, 1, 1, 1, 1]
// CHECK: %[[S1:.*]] = memref.subview %[[S]][1, 0, 0, 0, 0, 0] [1, 1, 2, 2, 2, 8] [1, 1, 1, 1, 1, 1]
// CHECK: %[[S2:.*]] = memref.subview %[[S]][2, 0, 0, 0, 0, 0] [1, 1, 2, 2, 2, 8] [1, 1, 1, 1, 1, 1]
// CHECK: linalg.generic {{.*}} ins(%[[S0]], %[[S1]], %[[S2]] : {{.*}}) outs(%[[O]] : memref<1x2x2x2x8xf32>) {
// CHECK-NEXT: ^bb0(%[[A0:.*]]: f32, %[[A1:.*]]: f32, %[[A2:.*]]: f32, %[[OV:.*]]: f32):
// CHECK-NEXT: %[[P01:.*]] = arith.addf %[[A0]], %[[A1]] : f32
// CHECK-NEXT: %[[P012:.*]] = arith.addf %[[P01]], %[[A2]] : f32
// CHECK-NEXT: %[[ACC:.*]] = arith.addf %[[P012]], %[[OV]] : f32
// CHECK-NEXT: linalg.yield %[[ACC]] : f32
func.func @epilogue_slabs(%s: memref<3x1x2x2x2x8xf32>, %o: memref<1x2x2x2x8xf32>) {
  conv3d.epilogue ins(%s : memref<3x1x2x2x2x8xf32>) outs(%o : memref<1x2x2x2x8xf32>)
  return
}

// -----

// conv3d.epilogue on memrefs (split-K's last step): one linalg.generic over
// the sum, the bias (broadcast along F) and the destination, which it reads
// when not `overwrite`.

// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
// CHECK-DAG: #[[CH:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d4)>
// CHECK-LABEL: func.func @epilogue_memref
// CHECK-SAME: (%[[S:.*]]: memref<1x2x2x2x8xf32>, %[[B:.*]]: memref<8xf32>, %[[O:.*]]: memref<1x2x2x2x8xbf16>)
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[CH]], #[[ID]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%[[S]], %[[B]] : memref<1x2x2x2x8xf32>, memref<8xf32>) outs(%[[O]] : memref<1x2x2x2x8xbf16>) {
// CHECK-NEXT: ^bb0(%[[SV:.*]]: f32, %[[BV:.*]]: f32, %[[OV:.*]]: bf16):
// CHECK-NEXT: %[[OF:.*]] = arith.extf %[[OV]] : bf16 to f32
// CHECK-NEXT: %[[ACC:.*]] = arith.addf %[[SV]], %[[OF]] : f32
// CHECK-NEXT: %[[X:.*]] = arith.addf %[[ACC]], %[[BV]] : f32
// CHECK: math.tanh
// CHECK: %[[Y:.*]] = arith.truncf %{{.*}} : f32 to bf16
// CHECK-NEXT: linalg.yield %[[Y]] : bf16
// CHECK-NOT: conv3d.epilogue
func.func @epilogue_memref(%s: memref<1x2x2x2x8xf32>, %b: memref<8xf32>, %o: memref<1x2x2x2x8xbf16>) {
  conv3d.epilogue ins(%s : memref<1x2x2x2x8xf32>) bias(%b : memref<8xf32>) outs(%o : memref<1x2x2x2x8xbf16>) activation = gelu_tanh
  return
}

// -----

// CHECK-LABEL: func.func @epilogue_memref_overwrite
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : memref<1x2x2x2x8xf32>) outs(%{{.*}} : memref<1x2x2x2x8xf32>) {
// CHECK-NEXT: ^bb0(%[[SV:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: linalg.yield %[[SV]] : f32
func.func @epilogue_memref_overwrite(%s: memref<1x2x2x2x8xf32>, %o: memref<1x2x2x2x8xf32>) {
  conv3d.epilogue ins(%s : memref<1x2x2x2x8xf32>) outs(%o : memref<1x2x2x2x8xf32>) overwrite
  return
}

//--- conv.mlir

// conv3d-implicit-gemm then conv3d-lower-to-cpu: nothing of the dialect is
// left, the grid stays an scf.forall with its config, and a split-K conv
// ends with its partial sums stored into the workspace slabs and the
// epilogue generic that adds them.

// CONV-LABEL: func.func @split_k
// CONV: %[[WS:.*]] = memref.alloc() : memref<2x1x2x2x2x8xf32>
// CONV: scf.forall ({{.*}}) in (2, 1, 1) {
// CONV: arith.mulf
// CONV-NOT: memref.atomic_rmw
// CONV: memref.store %{{.*}}, %[[WS]]
// CONV: } {conv3d.igemm_config = #conv3d.igemm_config<tile_m = 8, tile_n = 8, tile_k = 64, split_k = 2>}
// CONV: linalg.generic
// CONV: arith.maximumf
// CONV-NOT: conv3d.
// CONV: return
func.func @split_k(%x: memref<1x4x4x4x16xbf16>, %w: memref<3x3x3x16x8xbf16>, %b: memref<8xf32>, %o: memref<1x2x2x2x8xbf16>) {
  conv3d.conv ins(%x, %w : memref<1x4x4x4x16xbf16>, memref<3x3x3x16x8xbf16>) bias(%b : memref<8xf32>) outs(%o : memref<1x2x2x2x8xbf16>) overwrite activation = relu config = #conv3d.igemm_config<tile_m = 8, tile_n = 8, tile_k = 64, split_k = 2>
  return
}

//--- errors.mlir

// A convolution that was not tiled.
func.func @leftover_conv(%x: memref<1x4x4x4x16xf32>, %w: memref<1x1x1x16x8xf32>, %o: memref<1x4x4x4x8xf32>) {
  // expected-error @below {{conv3d-lower-to-cpu cannot lower 'conv3d.conv' here: convolutions must be tiled by conv3d-implicit-gemm, and tensor-level ops lowered by conv3d-to-linalg, first}}
  conv3d.conv ins(%x, %w : memref<1x4x4x4x16xf32>, memref<1x1x1x16x8xf32>) outs(%o : memref<1x4x4x4x8xf32>)
  return
}

// -----

func.func @leftover_tensor_conv(%x: tensor<1x4x4x4x16xf32>, %w: tensor<1x1x1x16x8xf32>, %i: tensor<1x4x4x4x8xf32>) -> tensor<1x4x4x4x8xf32> {
  // expected-error @below {{conv3d-lower-to-cpu cannot lower 'conv3d.conv' here}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x4x4x16xf32>, tensor<1x1x1x16x8xf32>) outs(%i : tensor<1x4x4x4x8xf32>) overwrite -> tensor<1x4x4x4x8xf32>
  return %0 : tensor<1x4x4x4x8xf32>
}

// -----

// The tensor form of conv3d.epilogue is conv3d-to-linalg's.
func.func @tensor_epilogue(%s: tensor<1x2x2x2x8xf32>, %o: tensor<1x2x2x2x8xbf16>) -> tensor<1x2x2x2x8xbf16> {
  // expected-error @below {{conv3d-lower-to-cpu cannot lower 'conv3d.epilogue' here: convolutions must be tiled by conv3d-implicit-gemm, and tensor-level ops lowered by conv3d-to-linalg, first}}
  %0 = conv3d.epilogue ins(%s : tensor<1x2x2x2x8xf32>) outs(%o : tensor<1x2x2x2x8xbf16>) overwrite -> tensor<1x2x2x2x8xbf16>
  return %0 : tensor<1x2x2x2x8xbf16>
}

// -----

func.func @tensor_quantize(%x: tensor<1x2x2x2x16xbf16>, %amax: f32, %e: tensor<1x2x2x2x16xbf16>) -> tensor<1x2x2x2x16xbf16> {
  // expected-error @below {{conv3d-lower-to-cpu cannot lower 'conv3d.quantize' here}}
  %0 = conv3d.quantize #conv3d.nvfp4<block_size = 16> axes = [4] ins(%x : tensor<1x2x2x2x16xbf16>) amax(%amax) outs(%e : tensor<1x2x2x2x16xbf16>) -> tensor<1x2x2x2x16xbf16>
  return %0 : tensor<1x2x2x2x16xbf16>
}

// -----

// Only the first op of the dialect that is left is reported.
func.func @first_only(%x: memref<1x4x4x4x16xf32>, %w: memref<1x1x1x16x8xf32>, %o: memref<1x4x4x4x8xf32>) {
  // expected-error @below {{conv3d-lower-to-cpu cannot lower 'conv3d.conv' here}}
  conv3d.conv ins(%x, %w : memref<1x4x4x4x16xf32>, memref<1x1x1x16x8xf32>) outs(%o : memref<1x4x4x4x8xf32>)
  conv3d.conv ins(%x, %w : memref<1x4x4x4x16xf32>, memref<1x1x1x16x8xf32>) outs(%o : memref<1x4x4x4x8xf32>)
  return
}
