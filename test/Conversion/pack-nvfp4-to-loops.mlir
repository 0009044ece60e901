// conv3d-quantize-to-loops on conv3d.pack_nvfp4: one scf.parallel over the
// blocks; each iteration loads its block with 16-byte vector loads, computes
// the block scale once, and stores the block's codes (blockSize / 2 bytes,
// one vector store) and its scale byte. Other layouts are refused. The
// numerics (bit for bit against the reference packer, on the CPU and on a
// GPU) are in test/Execution/pack-nvfp4.test and test/GPU/pack-nvfp4-run.test.
//
// RUN: conv3d-opt %s -split-input-file -verify-diagnostics -conv3d-quantize-to-loops | FileCheck %s
// RUN: conv3d-opt %s -split-input-file -verify-diagnostics -conv3d-quantize-to-loops=alignment=16 | FileCheck %s --check-prefix=ALIGN

// bf16, blocks of 16: 2*3*64 / 16 = 24 blocks.
// CHECK-LABEL: func.func @pack_bf16
// CHECK-SAME: (%[[X:.*]]: memref<2x3x64xbf16>, %[[AMAX:.*]]: f32, %[[C:.*]]: memref<2x3x32xi8>, %[[S:.*]]: memref<2x3x4xi8>)
// CHECK-DAG: %[[FX:.*]] = memref.collapse_shape %[[X]] {{\[\[}}0, 1, 2]] : memref<2x3x64xbf16> into memref<384xbf16>
// CHECK-DAG: %[[FC:.*]] = memref.collapse_shape %[[C]] {{\[\[}}0, 1, 2]] : memref<2x3x32xi8> into memref<192xi8>
// CHECK-DAG: %[[FS:.*]] = memref.collapse_shape %[[S]] {{\[\[}}0, 1, 2]] : memref<2x3x4xi8> into memref<24xi8>
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[N:.*]] = arith.constant 24 : index
// The E4M3 bits of a normal scale: (f32 bits >> 20) - 960; the E2M1 index
// of a magnitude >= 1: (f32 bits >> 22) - 252.
// CHECK-DAG: %[[C960:.*]] = arith.constant 960 : i32
// CHECK-DAG: %[[C252:.*]] = arith.constant 252 : i32
// CHECK: scf.parallel (%[[B:.*]]) = (%[[C0]]) to (%[[N]]) step (%[[C1]]) {
// CHECK-COUNT-2: vector.load %[[FX]][%{{.*}}] : memref<384xbf16>, vector<8xbf16>
// CHECK: arith.subi %{{.*}}, %[[C960]] : i32
// CHECK: arith.subi %{{.*}}, %[[C252]] : i32
// CHECK: %[[CODES:.*]] = vector.from_elements {{.*}} : vector<8xi8>
// CHECK: vector.store %[[CODES]], %[[FC]][%{{.*}}] : memref<192xi8>, vector<8xi8>
// CHECK: memref.store %{{.*}}, %[[FS]][%[[B]]] : memref<24xi8>
// CHECK: scf.reduce
// CHECK-NOT: conv3d.pack_nvfp4
// ALIGN-LABEL: func.func @pack_bf16
// ALIGN-COUNT-2: vector.load {{.*}} {alignment = 16 : i64} : memref<384xbf16>, vector<8xbf16>
// ALIGN: vector.store {{.*}} {alignment = 8 : i64} : memref<192xi8>, vector<8xi8>
func.func @pack_bf16(%x: memref<2x3x64xbf16>, %amax: f32, %codes: memref<2x3x32xi8>, %scales: memref<2x3x4xi8>) {
  conv3d.pack_nvfp4 #conv3d.nvfp4<block_size = 16> ins(%x : memref<2x3x64xbf16>) amax(%amax) outs(%codes : memref<2x3x32xi8>, %scales : memref<2x3x4xi8>)
  return
}

// -----

// f32, blocks of 32: eight 4-element loads and one 16-byte code store.
// CHECK-LABEL: func.func @pack_f32_block32
// CHECK: scf.parallel
// CHECK-COUNT-8: vector.load %{{.*}} : memref<128xf32>, vector<4xf32>
// CHECK: vector.store %{{.*}} : memref<64xi8>, vector<16xi8>
// CHECK: memref.store %{{.*}} : memref<4xi8>
func.func @pack_f32_block32(%x: memref<2x64xf32>, %amax: f32, %codes: memref<2x32xi8>, %scales: memref<2x2xi8>) {
  conv3d.pack_nvfp4 #conv3d.nvfp4<block_size = 32> ins(%x : memref<2x64xf32>) amax(%amax) outs(%codes : memref<2x32xi8>, %scales : memref<2x2xi8>)
  return
}

// -----

// Padded scale rows (C = 96, blocks of 16: 6 scales in rows of 16 bytes):
// 2 * 6 = 12 blocks; each stores its scale at its row's place, and a row's
// last block (6th) zeros the row's 10 bytes of padding.
// CHECK-LABEL: func.func @pack_padded_scales
// CHECK-DAG: %[[FS:.*]] = memref.collapse_shape %{{.*}} {{\[\[}}0, 1]] : memref<2x16xi8> into memref<32xi8>
// CHECK-DAG: %[[N:.*]] = arith.constant 12 : index
// CHECK: scf.parallel (%[[B:.*]]) = (%{{.*}}) to (%[[N]])
// CHECK: %[[ROW:.*]] = arith.divui %[[B]], %{{.*}} : index
// CHECK: %[[IN:.*]] = arith.remui %[[B]], %{{.*}} : index
// CHECK: memref.store %{{.*}}, %[[FS]][%{{.*}}] : memref<32xi8>
// CHECK: scf.if
// CHECK-COUNT-10: memref.store %{{.*}}, %[[FS]][%{{.*}}] : memref<32xi8>
// CHECK: scf.reduce
func.func @pack_padded_scales(%x: memref<2x96xbf16>, %amax: f32, %codes: memref<2x48xi8>, %scales: memref<2x16xi8>) {
  conv3d.pack_nvfp4 #conv3d.nvfp4<block_size = 16> ins(%x : memref<2x96xbf16>) amax(%amax) outs(%codes : memref<2x48xi8>, %scales : memref<2x16xi8>)
  return
}

// -----

// A strided input has no lowering here.
func.func @pack_strided(%x: memref<4x32xbf16, strided<[64, 1]>>, %amax: f32, %codes: memref<4x16xi8>, %scales: memref<4x2xi8>) {
  // expected-error @+1 {{conv3d-quantize-to-loops needs operands with identity layouts}}
  conv3d.pack_nvfp4 #conv3d.nvfp4<block_size = 16> ins(%x : memref<4x32xbf16, strided<[64, 1]>>) amax(%amax) outs(%codes : memref<4x16xi8>, %scales : memref<4x2xi8>)
  return
}
