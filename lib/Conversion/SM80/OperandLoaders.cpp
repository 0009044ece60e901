//===- OperandLoaders.cpp - global to shared memory for the sm80 kernel ---===//
//
// Each thread owns `unitsPerThread` units of a tile (fixed for the whole K
// loop, so their row facts are computed once). A unit is one vector access,
// or, when the input is NVFP4-quantized, one whole quantization block, so
// the thread can take the block's maximum in registers.
//
// Out-of-range elements (padding halo, rows past M, columns past F, k past
// the step's limit) are never read: cp.async copies zero source bytes
// (zero-fill), and register loads read a clamped address and select zero.
//
//===----------------------------------------------------------------------===//

#include "KernelContext.h"

#include "conv3d/IR/ScalarEmitters.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::conv3d;
using namespace mlir::conv3d::sm80;

namespace {

/// The part of a unit's tile position and validity common to all K steps.
struct Unit {
  /// The thread owns this unit. Only false in the tail of the mapping
  /// (fewer units than threads times units per thread): such a thread must
  /// not touch shared memory at all, or it would write past the tile.
  Value exists;
  bool alwaysExists = true;
  Value valid;    ///< exists, and its row is inside the GEMM
  Value row, col; ///< position of the unit's first element in the tile
  SmallVector<Value> facts; ///< operand-specific per-row values
};

/// Where one vector access reads: a flat index into `source` (the operand's
/// flat memref when null) and whether it reads at all. With an input
/// prologue, also whether the values are transformed (an input voxel, not
/// the halo or a history frame), the channel of the first element, and the
/// flat index of the voxel's RMS norm statistic.
struct Access {
  Value index = {}, valid = {};
  Value source = {};
  Value transformed = {}, channel = {}, voxel = {};
};

/// Emits `body` for `unit`, guarded when the unit may not exist.
template <typename Body>
void forExisting(KernelContext &ctx, const Unit &unit, Body body) {
  if (unit.alwaysExists) {
    body();
    return;
  }
  auto guard = scf::IfOp::create(ctx.b, ctx.loc, unit.exists, false);
  OpBuilder::InsertionGuard insertion(ctx.b);
  ctx.b.setInsertionPointToStart(guard.thenBlock());
  body();
}

/// Shared machinery of both loaders; subclasses provide addressing.
class TileLoader : public OperandLoader {
public:
  TileLoader(KernelContext &ctx, const OperandLoad &load,
             const SwizzledTile &tile, Value smem, FlatOperand global)
      : ctx(ctx), load(load), tile(tile), smem(smem), global(global) {}

  bool isAsync() const override { return load.async; }

  /// Work shared by all accesses of one K step (none by default).
  virtual void beginStep(Value k0) {}

  SmallVector<Value> issueAsync(Value k0, Value kLimit, Value stepValid,
                                Value stage) override {
    beginStep(k0);
    // Tokens of guarded copies cannot leave their scf.if; commit_group
    // commits every outstanding copy of the thread anyway, so the group
    // lists the unguarded ones.
    SmallVector<Value> tokens;
    for (const Unit &unit : units)
      forExisting(ctx, unit, [&] {
        KernelMath math = ctx.math();
        for (int64_t v = 0; v < load.unit / load.vector; ++v) {
          Access access = address(unit, v, k0, kLimit, stepValid);
          Value index = access.index, source = access.source;
          Value bytes = math.select(access.valid, math.constant(load.vector),
                                    math.constant(0));
          Value dst = smemIndex(unit, v, stage);
          Value token = nvgpu::DeviceAsyncCopyOp::create(
              ctx.b, ctx.loc,
              nvgpu::DeviceAsyncTokenType::get(ctx.b.getContext()), smem,
              ValueRange{math.toIndex(dst)}, source ? source : global.memref,
              ValueRange{math.toIndex(index)}, ctx.b.getIndexAttr(load.vector),
              math.toIndex(bytes),
              // .cg (L2 only) needs 16-byte copies.
              load.vector == 8 && !load.cacheInL1 ? ctx.b.getUnitAttr()
                                                  : UnitAttr());
          if (unit.alwaysExists)
            tokens.push_back(token);
        }
      });
    return tokens;
  }

  SmallVector<Value> loadToRegisters(Value k0, Value kLimit,
                                     Value stepValid) override {
    beginStep(k0);
    KernelMath math = ctx.math();
    auto vectorType = VectorType::get({load.vector}, elementType());
    Value zeros = arith::ConstantOp::create(
        ctx.b, ctx.loc, vectorType,
        DenseElementsAttr::get(vectorType, ctx.b.getZeroAttr(elementType())));
    SmallVector<Value> values;
    for (const Unit &unit : units)
      for (int64_t v = 0; v < load.unit / load.vector; ++v) {
        Access access = address(unit, v, k0, kLimit, stepValid);
        Value loaded = vector::LoadOp::create(
            ctx.b, ctx.loc, vectorType,
            access.source ? access.source : global.memref,
            ValueRange{math.toIndex(access.index)},
            /*nontemporal=*/false, llvm::MaybeAlign(load.vector * 2));
        values.push_back(math.select(access.valid, loaded, zeros));
        appendRegisterExtras(access, values);
      }
    return values;
  }

  void storeFromRegisters(ArrayRef<Value> values, Value stage) override {
    size_t next = 0;
    int64_t perUnit = load.unit / load.vector;
    for (const Unit &unit : units) {
      ArrayRef<Value> unitValues =
          values.slice(next, perUnit * registersPerAccess());
      next += perUnit * registersPerAccess();
      forExisting(ctx, unit, [&] {
        SmallVector<Value> stored = transform(unitValues);
        for (int64_t v = 0; v < perUnit; ++v)
          vector::StoreOp::create(
              ctx.b, ctx.loc, stored[v], smem,
              ValueRange{ctx.math().toIndex(smemIndex(unit, v, stage))},
              /*nontemporal=*/false, llvm::MaybeAlign(load.vector * 2));
      });
    }
  }

protected:
  /// Global index, validity and source of vector `v` of `unit` for the K
  /// step.
  virtual Access address(const Unit &unit, int64_t v, Value k0, Value kLimit,
                         Value stepValid) = 0;
  /// Register values of one unit as they should be stored (identity, NVFP4
  /// quantization, or the input prologue): one vector per access, from the
  /// unit's registersPerAccess() values per access.
  virtual SmallVector<Value> transform(ArrayRef<Value> unitValues) {
    return llvm::to_vector(unitValues);
  }
  /// Values the register path carries per access from the load to the
  /// store: the loaded vector, then what appendRegisterExtras adds.
  virtual int64_t registersPerAccess() const { return 1; }
  /// Appends the extra values of `access` (loaded before the step's MMAs).
  virtual void appendRegisterExtras(const Access &access,
                                    SmallVectorImpl<Value> &values) {}
  virtual Type elementType() const { return ctx.inElem; }

  /// Thread-to-unit mapping; `perRow` units per tile row.
  void mapUnits(int64_t perRow) {
    units = mapThreadUnits(perRow, load.unit, load.unitsPerTile,
                           load.unitsPerThread);
  }

  /// Units of `width` elements, `perRow` to a tile row, `perTile` in all,
  /// dealt to the threads round-robin, `perThread` each.
  SmallVector<Unit> mapThreadUnits(int64_t perRow, int64_t width,
                                   int64_t perTile, int64_t perThread) {
    KernelMath math = ctx.math();
    SmallVector<Unit> mapped;
    for (int64_t i = 0; i < perThread; ++i) {
      Value id = math.add(ctx.tid, math.constant(i * ctx.plan.threads));
      Unit unit;
      unit.alwaysExists = (i + 1) * ctx.plan.threads <= perTile;
      unit.exists = unit.alwaysExists ? math.trueValue()
                                      : math.ult(id, math.constant(perTile));
      unit.valid = unit.exists;
      unit.row = math.div(id, perRow);
      unit.col = math.mul(math.rem(id, perRow), width);
      mapped.push_back(unit);
    }
    return mapped;
  }

  /// Ring position of vector `v` of `unit` in `stage`.
  Value smemIndex(const Unit &unit, int64_t v, Value stage,
                  std::optional<int64_t> vector = std::nullopt) {
    KernelMath math = ctx.math();
    Value col =
        math.add(unit.col, math.constant(v * vector.value_or(load.vector)));
    return math.add(math.mul(stage, tile.elements()),
                    tile.offset(math, unit.row, col));
  }

  /// Flat index of an element from its logical coordinates (in the operand,
  /// or with `strides`).
  Value flatIndex(ArrayRef<Value> coords,
                  std::optional<ArrayRef<int64_t>> strides = std::nullopt) {
    KernelMath math = ctx.math();
    Value index = math.constant(0);
    for (auto [coord, stride] :
         llvm::zip_equal(coords, strides.value_or(global.strides)))
      index = math.add(index, math.mul(coord, stride));
    return index;
  }

  KernelContext &ctx;
  const OperandLoad &load;
  const SwizzledTile &tile;
  Value smem;
  FlatOperand global;
  SmallVector<Unit> units;
};

/// The implicit im2col A tile: rows are output positions, columns k.
class InputLoader : public TileLoader {
public:
  explicit InputLoader(KernelContext &ctx)
      : TileLoader(ctx, ctx.plan.a, ctx.plan.aTile, ctx.smemA, ctx.ops.input) {
    mapUnits(ctx.plan.tileK / load.unit);
    const ConvGeometry &g = ctx.geometry;
    int64_t taps = g.window[0] * g.window[1] * g.window[2];
    // Tap masks: when a K tile never straddles taps (C a multiple of
    // tile_k) and the window has at most 32 taps, a row's validity for
    // every tap and its base offset are computed once per block; a K step
    // then costs one bit test and one add per access instead of a k
    // decomposition and six bounds checks.
    tapMasks = g.channels % ctx.plan.tileK == 0 && taps <= 32 &&
               ctx.indexType.isInteger(32) &&
               load.unitsPerThread <= kMaxHoistedUnits;
    // The prologue transforms input voxels only (each access needs its
    // voxel, which the tap masks do not give); with no input voxel (every
    // frame from the history) there is nothing to transform.
    prologue = ctx.plan.inputPrologue && ctx.geometry.inputOperandDepth() > 0;
    if (prologue)
      tapMasks = false;
    // With a history, each access chooses its source (the tap masks' one
    // base offset per row cannot); both flat memrefs are viewed as one type
    // so that a select picks between them.
    history = ctx.ops.history;
    if (history) {
      tapMasks = false;
      auto flatType = cast<MemRefType>(global.memref.getType());
      auto anyType = MemRefType::get(
          {ShapedType::kDynamic}, flatType.getElementType(),
          StridedLayoutAttr::get(ctx.b.getContext(), ShapedType::kDynamic, {1}),
          flatType.getMemorySpace());
      inputSource =
          memref::CastOp::create(ctx.b, ctx.loc, anyType, global.memref);
      historySource =
          memref::CastOp::create(ctx.b, ctx.loc, anyType, history.memref);
    }
    // Row facts cost 5 registers per unit: hoisted out of the K loop when a
    // thread owns few units, recomputed per step when it owns many (narrow
    // channel counts), where hoisting would spill.
    hoisted = load.unitsPerThread <= kMaxHoistedUnits;
    if (hoisted)
      for (Unit &unit : units) {
        computeRowFacts(unit);
        if (tapMasks)
          computeTapMask(unit);
      }
    if (ctx.plan.quantizeInShared) {
      int64_t blockSize = *ctx.plan.quantBlockSize;
      quantUnits = mapThreadUnits(ctx.plan.tileK / blockSize, blockSize,
                                  ctx.plan.quantUnitsPerTile,
                                  ctx.plan.quantUnitsPerThread);
    }
  }

  /// Each NVFP4 block of the stage's A tile (a block lies in one row, whole
  /// 16-byte chunks) is read, quantized and written back by one thread.
  void quantizeStage(Value stage) override {
    constexpr int64_t kChunk = 8;
    int64_t perBlock = *ctx.plan.quantBlockSize / kChunk;
    auto chunkType = VectorType::get({kChunk}, ctx.inElem);
    for (const Unit &unit : quantUnits)
      forExisting(ctx, unit, [&] {
        SmallVector<Value> indices, chunks;
        for (int64_t v = 0; v < perBlock; ++v) {
          indices.push_back(
              ctx.math().toIndex(smemIndex(unit, v, stage, kChunk)));
          chunks.push_back(vector::LoadOp::create(
              ctx.b, ctx.loc, chunkType, smem, ValueRange{indices.back()},
              /*nontemporal=*/false, llvm::MaybeAlign(16)));
        }
        SmallVector<Value> quantized = transform(chunks);
        for (int64_t v = 0; v < perBlock; ++v)
          vector::StoreOp::create(ctx.b, ctx.loc, quantized[v], smem,
                                  ValueRange{indices[v]},
                                  /*nontemporal=*/false, llvm::MaybeAlign(16));
      });
  }

  /// The chunks this thread copied for the step, read back from the stage,
  /// transformed as the register path does, and written in place. Only
  /// this thread's own cp.async copies are touched: its wait_group made
  /// them visible to it, and the barrier before the MMAs of the step
  /// publishes the result.
  void transformStage(Value stage, Value k0, Value kLimit,
                      Value stepValid) override {
    if (!prologue)
      return;
    auto vectorType = VectorType::get({load.vector}, ctx.inElem);
    for (const Unit &unit : units)
      forExisting(ctx, unit, [&] {
        for (int64_t v = 0; v < load.unit / load.vector; ++v) {
          Access access = address(unit, v, k0, kLimit, stepValid);
          Value index = ctx.math().toIndex(smemIndex(unit, v, stage));
          SmallVector<Value> values = {vector::LoadOp::create(
              ctx.b, ctx.loc, vectorType, smem, ValueRange{index},
              /*nontemporal=*/false, llvm::MaybeAlign(load.vector * 2))};
          appendRegisterExtras(access, values);
          vector::StoreOp::create(ctx.b, ctx.loc, transform(values).front(),
                                  smem, ValueRange{index},
                                  /*nontemporal=*/false,
                                  llvm::MaybeAlign(load.vector * 2));
        }
      });
  }

  /// Per K step: the step's tap (q, r, s) and channel offset, shared by all
  /// of the thread's accesses (the tile lies inside one tap).
  void beginStep(Value k0) override {
    if (!tapMasks)
      return;
    const ConvGeometry &g = ctx.geometry;
    KernelMath math = ctx.math();
    stepTap = math.div(k0, g.channels);
    stepChannel = math.rem(k0, g.channels);
    auto tap = delinearize<KernelMath, 3>(
        math, stepTap, {g.window[0], g.window[1], g.window[2]});
    // Offset of the tap relative to the row's tap-0 position.
    const SmallVector<int64_t> &strides = global.strides;
    stepOffset = math.constant(0);
    for (unsigned axis = 0; axis < 3; ++axis)
      stepOffset =
          math.add(stepOffset,
                   math.mul(tap[axis], g.dilations[axis] * strides[axis + 1]));
  }

protected:
  static constexpr int64_t kMaxHoistedUnits = 8;

  /// Bit t of the row's mask: tap t reads inside the input; and the flat
  /// offset of the row's tap-0 position (possibly in the halo).
  void computeTapMask(Unit &unit) {
    const ConvGeometry &g = ctx.geometry;
    KernelMath math = ctx.math();
    Value mask = math.constant(0);
    Value one = math.constant(1);
    for (int64_t q = 0; q < g.window[0]; ++q)
      for (int64_t r = 0; r < g.window[1]; ++r)
        for (int64_t s = 0; s < g.window[2]; ++s) {
          std::array<int64_t, 3> tap = {q, r, s};
          Value ok = unit.valid;
          for (unsigned axis = 0; axis < 3; ++axis)
            ok = math.andI(
                ok, math.inRange(
                        math.add(unit.facts[axis + 1],
                                 math.constant(tap[axis] * g.dilations[axis])),
                        g.inputSize[axis]));
          int64_t bit = (q * g.window[1] + r) * g.window[2] + s;
          Value set = math.select(
              ok,
              arith::ShLIOp::create(ctx.b, ctx.loc, one, math.constant(bit)),
              math.constant(0));
          mask = arith::OrIOp::create(ctx.b, ctx.loc, mask, set);
        }
    const SmallVector<int64_t> &strides = global.strides;
    Value base = math.mul(unit.facts[0], strides[0]);
    for (unsigned axis = 0; axis < 3; ++axis)
      base = math.add(base, math.mul(unit.facts[axis + 1], strides[axis + 1]));
    unit.facts.push_back(mask);
    unit.facts.push_back(base);
  }

  /// Validity of the row and (n, tap-0 input coordinates) of its output
  /// position.
  void computeRowFacts(Unit &unit) {
    const ConvGeometry &g = ctx.geometry;
    KernelMath math = ctx.math();
    Value m = math.add(ctx.m0, unit.row);
    unit.valid = math.andI(unit.valid, math.ult(m, math.constant(g.gemmM())));
    auto out = g.decomposeM(math, math.select(unit.valid, m, math.constant(0)));
    Value zero = math.constant(0);
    unit.facts = {out[0], g.inputCoord(math, 0, out[1], zero),
                  g.inputCoord(math, 1, out[2], zero),
                  g.inputCoord(math, 2, out[3], zero)};
  }

  Access address(const Unit &hoistedUnit, int64_t v, Value k0, Value kLimit,
                 Value stepValid) override {
    if (tapMasks) {
      // k < kLimit for the whole tile: K and every slice end are multiples
      // of tile_k here.
      KernelMath math = ctx.math();
      Value bit = arith::AndIOp::create(
          ctx.b, ctx.loc,
          arith::ShRUIOp::create(ctx.b, ctx.loc, hoistedUnit.facts[4], stepTap),
          math.constant(1));
      Value valid =
          math.andI(math.andI(stepValid, hoistedUnit.valid),
                    math.cmp(arith::CmpIPredicate::ne, bit, math.constant(0)));
      Value c = math.add(math.add(stepChannel, hoistedUnit.col),
                         math.constant(v * load.vector));
      Value index = math.add(math.add(hoistedUnit.facts[5], stepOffset),
                             math.mul(c, global.strides[4]));
      return {math.select(valid, index, math.constant(0)), valid, Value()};
    }
    Unit unit = hoistedUnit;
    if (!hoisted)
      computeRowFacts(unit);
    const ConvGeometry &g = ctx.geometry;
    KernelMath math = ctx.math();
    Value k = math.add(math.add(k0, unit.col), math.constant(v * load.vector));
    Value kValid = math.ult(k, kLimit);
    auto tap = g.decomposeK(math, math.select(kValid, k, math.constant(0)));
    Value valid = math.andI(math.andI(stepValid, unit.valid), kValid);
    // The input coordinate along an axis is the row's tap-0 coordinate (a
    // per-unit fact) plus tap * dilation, where the tap comes from a
    // division of k by a constant (mul.hi) shared by all of the thread's
    // units. Neither the validity nor the flat index adds a per-unit value
    // to that quotient: ptxas 13.0 at -O2/-O3 for sm_90 and later folds
    // each `mul.hi + add` into an IMAD.HI with a 64-bit addend, then keeps
    // one of two such IMAD.HIs that differ only in the addend's high half,
    // so every unit took the first unit's depth coordinate (copies from the
    // wrong voxels and wrong halo masks: test/GPU/sm80-nvfp4-straddle.test,
    // wrong by 0.15 on an H100, exact at -O1 and on sm_80 code). The
    // validity compares tap * dilation with per-unit bounds, and the index
    // adds the per-unit part (the row's tap-0 voxel) to the step's part
    // (the taps' offsets), each a sum of products.
    std::array<Value, 3> offsets;
    for (unsigned axis = 0; axis < 3; ++axis) {
      offsets[axis] = math.mul(tap[axis], g.dilations[axis]);
      valid =
          math.andI(valid, offsetInRange(unit.facts[axis + 1], offsets[axis], 0,
                                         g.inputSize[axis]));
    }
    // Flat index, with `strides`, of (n, tap-0 coordinates + offsets, c),
    // the depth shifted by `depthShift`; without the channel when `strides`
    // has four entries.
    auto index = [&](ArrayRef<int64_t> strides, int64_t depthShift) {
      Value base = math.mul(unit.facts[0], strides[0]);
      for (unsigned axis = 0; axis < 3; ++axis)
        base =
            math.add(base, math.mul(unit.facts[axis + 1], strides[axis + 1]));
      if (depthShift)
        base = math.add(base, math.constant(depthShift * strides[1]));
      Value offset =
          strides.size() > 4 ? math.mul(tap[3], strides[4]) : math.constant(0);
      for (unsigned axis = 0; axis < 3; ++axis)
        offset = math.add(offset, math.mul(offsets[axis], strides[axis + 1]));
      return math.add(base, offset);
    };
    if (!history) {
      Access access{
          math.select(valid, index(global.strides, 0), math.constant(0)), valid,
          Value()};
      if (prologue)
        describeTransform(access, valid, tap[3],
                          [&](ArrayRef<int64_t> s) { return index(s, 0); });
      return access;
    }
    // Depth d of concat(history, input): the history's flat index when
    // d < Dh, else the input's at d - Dh; one memref is selected per access
    // (no copy, no branch).
    Value fromHistory =
        offsetInRange(unit.facts[1], offsets[0], 0, g.historyDepth);
    Value flat = math.select(fromHistory, index(history.strides, 0),
                             index(global.strides, -g.historyDepth));
    Value source = arith::SelectOp::create(ctx.b, ctx.loc, fromHistory,
                                           historySource, inputSource);
    Access access{math.select(valid, flat, math.constant(0)), valid, source};
    // History frames were transformed as the previous chunk's input.
    if (prologue)
      describeTransform(
          access,
          math.andI(valid, arith::XOrIOp::create(ctx.b, ctx.loc, fromHistory,
                                                 math.trueValue())),
          tap[3],
          [&](ArrayRef<int64_t> s) { return index(s, -g.historyDepth); });
    return access;
  }

  /// Whether coordinate `base + offset` lies in [lo, hi), decided by
  /// comparing `offset` with bounds that depend on `base` alone (see
  /// address() for why the sum is never formed).
  Value offsetInRange(Value base, Value offset, int64_t lo, int64_t hi) {
    KernelMath math = ctx.math();
    auto boundMinusBase = [&](int64_t bound) {
      return arith::SubIOp::create(ctx.b, ctx.loc, math.constant(bound), base)
          .getResult();
    };
    return math.andI(
        math.cmp(arith::CmpIPredicate::sge, offset, boundMinusBase(lo)),
        math.cmp(arith::CmpIPredicate::slt, offset, boundMinusBase(hi)));
  }

  /// The prologue's facts of an access that is `transformed` (inside the
  /// input operand): its channel, and the flat index of its voxel's RMS
  /// norm statistic (`voxelIndex` of the statistic's four strides).
  template <typename VoxelIndex>
  void describeTransform(Access &access, Value transformed, Value channel,
                         VoxelIndex voxelIndex) {
    KernelMath math = ctx.math();
    access.transformed = transformed;
    access.channel = channel;
    if (ctx.ops.normScale)
      access.voxel = math.select(
          transformed, voxelIndex(ArrayRef<int64_t>(ctx.ops.normScale.strides)),
          math.constant(0));
  }

  int64_t registersPerAccess() const override {
    if (!prologue)
      return 1;
    return ctx.ops.normScale ? 4 : 3;
  }

  /// The transform flag, the channel, and the voxel's statistic: a global
  /// load issued with the input's, so its latency is hidden by the MMAs too.
  void appendRegisterExtras(const Access &access,
                            SmallVectorImpl<Value> &values) override {
    if (!prologue)
      return;
    values.push_back(access.transformed);
    values.push_back(access.channel);
    if (ctx.ops.normScale)
      values.push_back(
          memref::LoadOp::create(ctx.b, ctx.loc, ctx.ops.normScale.memref,
                                 ValueRange{ctx.math().toIndex(access.voxel)}));
  }

  /// `count` channels of the per-channel vector `operand` from `channel`.
  Value loadChannels(const FlatOperand &operand, Value channel, int64_t count) {
    auto type = cast<MemRefType>(operand.memref.getType());
    Type element = type.getElementType();
    return vector::LoadOp::create(
        ctx.b, ctx.loc, VectorType::get({count}, element), operand.memref,
        ValueRange{ctx.math().toIndex(channel)},
        /*nontemporal=*/false,
        llvm::MaybeAlign(element.getIntOrFloatBitWidth() / 8));
  }

  SmallVector<Value> transform(ArrayRef<Value> unitValues) override {
    if (prologue) {
      // Per access: x * rs * gamma (+ beta), then the activation, in f32,
      // rounded to the input type; the halo and history frames as loaded.
      SmallVector<Value> stored;
      int64_t per = registersPerAccess();
      for (int64_t i = 0, e = unitValues.size(); i < e; i += per) {
        Value x = unitValues[i], transformed = unitValues[i + 1];
        Value channel = unitValues[i + 2];
        Value scale = ctx.ops.normScale ? unitValues[i + 3] : Value();
        Value gamma, beta;
        if (scale) {
          gamma = loadChannels(ctx.ops.normGamma, channel, load.vector);
          if (ctx.ops.normBeta)
            beta = loadChannels(ctx.ops.normBeta, channel, load.vector);
        }
        Value y = emitInputPrologueVector(ctx.b, ctx.loc, x, scale, gamma, beta,
                                          ctx.inputActivation);
        stored.push_back(
            arith::SelectOp::create(ctx.b, ctx.loc, transformed, y, x));
      }
      return stored;
    }
    if (!ctx.plan.quantBlockSize)
      return llvm::to_vector(unitValues);
    // The unit is one NVFP4 block: its maximum, scale, and values.
    return emitNVFP4QuantizeVectors(ctx.b, ctx.loc, unitValues, ctx.ops.amax,
                                    ctx.inElem);
  }

  bool hoisted = true;
  bool tapMasks = false;
  /// The accesses carry and apply the input prologue.
  bool prologue = false;
  FlatOperand history;
  Value inputSource, historySource;
  Value stepTap, stepChannel, stepOffset;
  /// The blocks this thread quantizes in place (quantizeInShared).
  SmallVector<Unit> quantUnits;
};

/// The B tile of the filter's K x F view: [k][n] for QRSCF (F contiguous),
/// [n][k] for FQRSC (K contiguous).
class FilterLoader : public TileLoader {
public:
  explicit FilterLoader(KernelContext &ctx)
      : TileLoader(ctx, ctx.plan.b, ctx.plan.bTile, ctx.smemB, ctx.ops.filter) {
    mapUnits(ctx.plan.bTile.cols / load.unit);
  }

protected:
  Access address(const Unit &unit, int64_t v, Value k0, Value kLimit,
                 Value stepValid) override {
    KernelMath math = ctx.math();
    Value along = math.add(unit.col, math.constant(v * load.vector));
    Value kOffset = ctx.plan.bKContiguous ? along : unit.row;
    Value nOffset = ctx.plan.bKContiguous ? unit.row : along;
    Value k = math.add(k0, kOffset);
    Value n = math.add(ctx.n0, nOffset);
    Value valid =
        math.andI(math.andI(stepValid, unit.valid),
                  math.andI(math.ult(k, kLimit),
                            math.ult(n, math.constant(ctx.geometry.filters))));
    return {math.select(valid, flatIndex({k, n}), math.constant(0)), valid,
            Value()};
  }
};

} // namespace

std::unique_ptr<OperandLoader>
mlir::conv3d::sm80::createInputLoader(KernelContext &ctx) {
  return std::make_unique<InputLoader>(ctx);
}

std::unique_ptr<OperandLoader>
mlir::conv3d::sm80::createFilterLoader(KernelContext &ctx) {
  return std::make_unique<FilterLoader>(ctx);
}
