//===- CausalConv3dStream.h - chunked causal 3-D convolution ----*- C++ -*-===//
//
// A causal convolution along depth (time) applied to a sequence chunk by
// chunk, as video VAE decoders run it: each step convolves the chunk
// together with the frames cached from the previous ones, given to the
// compiled convolution as its history operand (never concatenated), and
// returns exactly the output frames that the full-sequence causal
// convolution produces for that chunk.
//
//   ConvSpec spec = ...;            // causal depth padding: [(Q-1)*dil, 0]
//   auto stream = CausalConv3dStream::create(engine, spec, options, weights);
//   for (const HostTensor &chunk : chunks)
//     llvm::Expected<HostTensor> y = (*stream)->step(chunk);
//   (*stream)->reset();             // a new sequence
//
// With depth stride s, output t of the full sequence is the window ending at
// frame t*s; a chunk of frames [T, T + L) produces the outputs whose window
// ends inside it, t in [ceil(T/s), ceil((T+L)/s)), possibly none. The cache
// holds the frames those later windows still need (at most (Q-1)*dil): the
// last frames of the input after the prologue (the history operand is taken
// as it is), copied from the chunk, never the whole chunk.
//
// Chunks of any length, shorter than the cache included, give the same
// outputs. Each distinct (cache depth, chunk length, leading padding) is
// compiled once by the engine and then served from its cache.
//
// On GPU targets (sm80, or sm90, whose kernel reads the history in place
// and takes the prologue from the compiled prepass that
// conv3d-place-prologue places before it) the weights are uploaded once,
// the cache lives in
// device memory (two buffers of the largest cache, used in turn), and the
// pointer form of step() takes device buffers: the chunk is read in place
// by the convolution; the frames the cache keeps are copied device to
// device (old cache frames) or written by a 1x1x1 identity convolution with
// the stream's prologue (the chunk's last frames, transformed by the same
// code that transforms the input), never the whole chunk.
//
//===----------------------------------------------------------------------===//

#ifndef CONV3D_RUNTIME_CAUSALCONV3DSTREAM_H
#define CONV3D_RUNTIME_CAUSALCONV3DSTREAM_H

#include "conv3d/Runtime/Engine.h"
#include "conv3d/Support/HostTensor.h"

#include "llvm/Support/Error.h"

#include <array>
#include <memory>
#include <optional>

namespace mlir::conv3d {

/// The constant operands of a stream's convolution (copied at creation).
struct CausalConvWeights {
  const HostTensor *filter = nullptr;    ///< in spec.filterLayout
  const HostTensor *bias = nullptr;      ///< F f32 values, when spec.hasBias
  const HostTensor *normGamma = nullptr; ///< C f32 values, when spec.hasNorm
  const HostTensor *normBeta = nullptr;  ///< C f32, when spec.hasNormBeta
};

class CausalConv3dStream {
public:
  /// A stream of `spec`'s convolution: its depth padding must be causal,
  /// [(Q-1)*dilation, 0]; its input depth is only the nominal chunk length
  /// (every chunk may differ). No history (the stream supplies it), no
  /// accumulation, no NVFP4 input quantization. On GPU targets the CUDA
  /// driver must be available (the weights go to the device here).
  static llvm::Expected<std::unique_ptr<CausalConv3dStream>>
  create(Engine &engine, const ConvSpec &spec, const CompileOptions &options,
         const CausalConvWeights &weights);
  ~CausalConv3dStream();

  /// Convolves the next chunk (N x L x H x W x C, the spec's input type,
  /// L >= 1), with `residual` (the output's shape and type) added when the
  /// spec has one. Returns the N x Lo x Ho x Wo x F output frames of the
  /// full-sequence causal convolution whose windows end in this chunk (Lo
  /// may be 0 with a depth stride over 1). On error the stream is
  /// unchanged. Host tensors on every target (GPU targets copy them to the
  /// device and the output back).
  llvm::Expected<HostTensor> step(const HostTensor &chunk,
                                  const HostTensor *residual = nullptr);

  /// step() on the caller's buffers (host memory for the CPU target, device
  /// memory for GPU targets): `chunk` holds N x `length` x H x W x C
  /// elements of the input type, `residual` (when the spec has one) and
  /// `output` N x outputFramesFor(length) x Ho x Wo x F elements of the
  /// output type. The chunk is read in place (only the frames the cache
  /// keeps are copied). GPU targets enqueue the work on the CUstream
  /// `stream` and return without synchronizing it (null: a blocking call).
  llvm::Error step(const void *chunk, int64_t length, const void *residual,
                   void *output, void *stream = nullptr);

  /// The number of output frames the next chunk of `length` frames gives.
  int64_t outputFramesFor(int64_t length) const;

  /// Forgets the sequence: the next chunk is a first chunk.
  void reset();

  /// Frames consumed since creation or reset().
  int64_t framesSeen() const { return seen; }
  /// Frames held in the cache (after the prologue).
  int64_t cachedFrames() const;

private:
  CausalConv3dStream(Engine &engine, ConvSpec spec, CompileOptions options);

  bool onDevice() const { return options.target != Target::cpu; }
  /// The compiled convolution of a step: `length` frames after
  /// `historyDepth` cached ones, the window of the first of `outputs`
  /// outputs starting at frame `windowStart` of the sequence.
  llvm::Expected<std::shared_ptr<const CompiledConv>>
  compileStep(int64_t length, int64_t windowStart, int64_t historyDepth,
              int64_t outputs);
  /// GPU targets: the weights on the device, the two cache buffers.
  llvm::Error uploadWeights();
  /// GPU targets: writes the next cache, frames [keepFrom, total) of the
  /// sequence, into the cache buffer not in use.
  llvm::Error updateDeviceCache(const void *chunk, int64_t length,
                                int64_t keepFrom, int64_t total, void *stream);

  Engine &engine;
  ConvSpec spec;
  CompileOptions options;
  HostTensor filter, bias, normGamma, normBeta;
  /// The cached frames, N x cacheDepth x H x W x C (none before the first
  /// chunk).
  std::optional<HostTensor> cache;
  int64_t seen = 0;

  /// GPU targets: device copies of the weights (null where unused), the
  /// C x C identity filter of the cache's transform (with a prologue), the
  /// cache buffers (each N x (Q-1)*dil x H x W x C), which one holds the
  /// cache, and its depth.
  void *deviceFilter = nullptr, *deviceBias = nullptr, *deviceGamma = nullptr,
       *deviceBeta = nullptr, *deviceIdentity = nullptr;
  std::array<void *, 2> deviceCache = {nullptr, nullptr};
  int cacheSlot = 0;
  int64_t deviceCacheDepth = 0;
};

} // namespace mlir::conv3d

#endif // CONV3D_RUNTIME_CAUSALCONV3DSTREAM_H
