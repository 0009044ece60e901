/*===- conv3d.h - C API of conv3d-mlir ----------------------------*- C -*-===*\
|*                                                                            *|
|* A plain C interface to the engine, for languages without C++ bindings     *|
|* (the Python package uses it through ctypes, so it works with any Python). *|
|* Errors are returned as a non-zero status with a message copied into a     *|
|* caller buffer; nothing aborts.                                            *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef CONV3D_CAPI_CONV3D_H
#define CONV3D_CAPI_CONV3D_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Element types. */
enum { CONV3D_BF16 = 0, CONV3D_F16 = 1, CONV3D_F32 = 2 };
/* Filter layouts. */
enum { CONV3D_QRSCF = 0, CONV3D_FQRSC = 1 };
/* Activations of the fused epilogue. */
enum {
  CONV3D_ACT_NONE = 0,
  CONV3D_ACT_RELU = 1,
  CONV3D_ACT_SILU = 2,
  CONV3D_ACT_GELU_TANH = 3
};

/* A convolution: input NDHWC, filter QRSCF/FQRSC, output NDHWF. */
typedef struct conv3d_spec {
  int64_t batch, depth, height, width, channels;
  int64_t window[3]; /* Q, R, S */
  int64_t filters;
  int64_t strides[3], dilations[3];
  int64_t padding[6]; /* d_lo, d_hi, h_lo, h_hi, w_lo, w_hi */
  int32_t filter_layout, input_type, output_type;
  int32_t has_bias, has_residual, accumulate, activation;
  int32_t quant_block_size; /* NVFP4 on the input; 0 = none */
  /* Groups G of a grouped convolution (0 or 1: none): C and F multiples of
   * G, filter f reads the C/G channels of group f / (F/G); the filter's
   * channel dimension is C/G. */
  int32_t groups;
} conv3d_spec;

/* The library's version, "MAJOR.MINOR.PATCH" (the CMake project version). */
const char *conv3d_version(void);

/* The CUDA device the runtime uses (the one of $CONV3D_CUDA_DEVICE, else 0),
 * as the project's runtime sees it. */
typedef struct conv3d_device_info {
  int32_t ordinal;
  int32_t cc_major, cc_minor; /* compute capability */
  int32_t multiprocessors;
  char name[256];
} conv3d_device_info;

/* Fills `info` with the device the runtime uses, initializing the CUDA
 * driver (loaded with dlopen) on first call. Non-zero with the reason in
 * `error` when there is no usable driver or device. */
int conv3d_cuda_device(conv3d_device_info *info, char *error,
                       size_t error_size);

/* The runtime's own stream-ordered memory pool on that device, which holds
 * the temporaries of its calls (prologue prepasses, split-K and Q-slice
 * workspaces) and keeps what they free; allocators of the caller's (such as
 * PyTorch's) never see them. Bytes. */
typedef struct conv3d_pool_memory {
  uint64_t reserved;  /* mapped by the pool */
  uint64_t used;      /* in allocations now */
  uint64_t used_high; /* the most in allocations since the last reset */
  /* The device's CUDA graph memory (the memory nodes of every graph on it):
   * inside a captured graph the runtime's temporaries are graph memory,
   * which the pool does not count. Meaningful where graph_reported is 1. */
  uint64_t graph_used;      /* in graph allocations now */
  uint64_t graph_used_high; /* the most since the last reset */
  int32_t graph_reported;
} conv3d_pool_memory;

/* Fills `memory`; with `reset_high` non-zero, used_high and graph_used_high
 * then start again from the current use. Non-zero with the reason in `error`
 * without a usable driver or device, or where the runtime has no pool of its
 * own (a device or driver without memory pools, the PTX emulator). */
int conv3d_cuda_pool_memory(conv3d_pool_memory *memory, int reset_high,
                            char *error, size_t error_size);

typedef struct conv3d_engine conv3d_engine;
typedef struct conv3d_conv conv3d_conv;

/* An engine whose disk cache of compiled convolutions is $CONV3D_CACHE_DIR
 * (empty or "off": none), else $XDG_CACHE_HOME/conv3d-mlir, else
 * ~/.cache/conv3d-mlir, bounded by $CONV3D_CACHE_MAX_MB (MiB, default 1024,
 * 0: no bound; least recently used entries are evicted). */
conv3d_engine *conv3d_engine_create(void);
/* An engine with the disk cache in `cache_directory`; null or "": none. The
 * bound is $CONV3D_CACHE_MAX_MB's, as above. */
conv3d_engine *conv3d_engine_create_with_cache(const char *cache_directory);
void conv3d_engine_destroy(conv3d_engine *engine);

/* The output shape (N, Do, Ho, Wo, F) and the FLOPs (2*M*N*K) of `spec`,
 * from the library's one geometry (ConvGeometry). Non-zero with a message
 * in `error` for an impossible geometry. */
int conv3d_spec_geometry(const conv3d_spec *spec, int64_t output_shape[5],
                         double *flops, char *error, size_t error_size);

/* Compiles `spec`. `options` holds space-separated key=value pairs:
 * the options of `conv3d-opt --conv3d-gpu-pipeline` with the same spelling
 * (one parser): target=cpu|sm80|sm90 (sm100 code is generated and
 * assembled, never run: compiling it is an error), lowering=igemm|reference,
 * config=tile_m=..,tile_n=..,.. (quoted with "" if it holds spaces),
 * qslice=auto|none|fused|separate, quant-placement=auto|tile|prepass,
 * nvfp4-mode=fake|real (real: the block-scaled sm100 MMA, refused until its
 * kernel is emitted), gpu-chip=sm_90a, cuda-home=/usr/local/cuda (default:
 * $CUDA_HOME, else the configured toolkit), tune=true (time the heuristic's and
 * nearby tile configurations on the device and compile the fastest, remembered
 * in the disk cache; exclusive with config). An unknown key or value is an
 * error naming it. Returns null on error (message in `error`). */
conv3d_conv *conv3d_compile(conv3d_engine *engine, const conv3d_spec *spec,
                            const char *options, char *error,
                            size_t error_size);
/* Milliseconds the compilation took. */
double conv3d_compile_millis(const conv3d_conv *conv);
/* Where the compiled code came from. */
enum {
  CONV3D_COMPILED = 0,
  CONV3D_FROM_MEMORY_CACHE = 1,
  CONV3D_FROM_DISK_CACHE = 2
};
int conv3d_compile_source(const conv3d_conv *conv);
/* The tile configuration the compiled convolution uses, as key=value pairs
 * (the tuner's choice with tune=true); "" when it is the heuristic's. Valid
 * as long as `conv`. */
const char *conv3d_conv_config(const conv3d_conv *conv);
void conv3d_conv_destroy(conv3d_conv *conv);

/* CU_STREAM_LEGACY, the legacy default stream (a 0 CUstream to CUDA). */
#define CONV3D_STREAM_LEGACY ((void *)0x1)

/* Runs on the caller's buffers (host memory for cpu, device memory for GPU
 * targets, where the work is enqueued on `stream`, a CUstream, without
 * waiting for it; when `stream` is null the work runs on an internal stream
 * and the call returns when it is done. To enqueue on the legacy default
 * stream pass CONV3D_STREAM_LEGACY). Returns 0 on success. */
int conv3d_run(const conv3d_conv *conv, const void *input, const void *filter,
               const void *bias, const void *residual, float amax, void *output,
               void *stream, char *error, size_t error_size);

/* conv3d_run's arguments in one block, for callers that run often through a
 * foreign-function layer: they keep one block (one per thread), refill the
 * addresses and pass one pointer instead of ten arguments (the Python
 * package's hit path does, through ctypes). */
typedef struct conv3d_run_args {
  const conv3d_conv *conv;
  const void *input, *filter, *bias, *residual;
  void *output;
  void *stream;
  char *error; /* error_size bytes for the message on failure; may be null */
  size_t error_size;
  float amax;
} conv3d_run_args;

/* conv3d_run(args->conv, args->input, ...). Returns 0 on success, 1 with the
 * message in args->error otherwise (and 1 for a null `args`). `args` need
 * not be aligned (a foreign-function layer may pass the bytes of a packed
 * record, e.g. Python's struct.pack, as a char pointer). */
int conv3d_run_packed(const conv3d_run_args *args);

/* The message of the calling thread's last failed run (conv3d_run,
 * conv3d_run_packed, conv3d_run_ext, conv3d_run_packed_filter,
 * conv3d_run_gradient), kept whether or not the call had an error buffer
 * ("" before any failure). Valid until this thread's next failed run. Lets
 * a caller pass no error buffer and ask only when a run fails. */
const char *conv3d_last_error(void);

/*===----------------------------------------------------------------------===*
 * Training: the data and weight gradients
 *===----------------------------------------------------------------------===*/

/* What a compiled convolution computes. `spec` always describes the forward
 * convolution (its input, window, filters, strides, dilations, padding);
 * output_type is the type of what is written. */
enum { CONV3D_KIND_FPROP = 0, CONV3D_KIND_DGRAD = 1, CONV3D_KIND_WGRAD = 2 };

/* conv3d_compile of `kind`. A gradient takes no bias, activation, residual
 * or quantization (an error names the one given), except a dgrad through an
 * activation: `activation` (CONV3D_ACT_RELU, _SILU, _GELU_TANH) with
 * `has_residual` multiplies the gradient by the activation's derivative at
 * the forward's pre-activation (conv3d_run_dgrad_through_activation passes
 * it). `accumulate` adds the gradient onto the output buffer (gradient
 * accumulation; for such a dgrad, before the derivative applies). */
conv3d_conv *conv3d_compile_kind(conv3d_engine *engine, const conv3d_spec *spec,
                                 int32_t kind, const char *options, char *error,
                                 size_t error_size);

/* The kind a convolution was compiled for (CONV3D_KIND_*). */
int conv3d_conv_kind(const conv3d_conv *conv);

/* Runs a gradient compiled by conv3d_compile_kind on the caller's buffers
 * (memory spaces and `stream` as conv3d_run): dgrad reads `grad_output`
 * (the forward's output shape, input type) and `filter` and writes the
 * input's gradient (N x D x H x W x C) to `output`; wgrad reads `input` and
 * `grad_output` and writes the filter's gradient (the spec's layout) to
 * `output`. The operand the kind does not read must be null: a forward's
 * conv or an operand given to the wrong kind is an error naming it. */
int conv3d_run_gradient(const conv3d_conv *conv, const void *input,
                        const void *filter, const void *grad_output,
                        void *output, void *stream, char *error,
                        size_t error_size);

/* Runs a dgrad compiled with an activation and has_residual: as
 * conv3d_run_gradient's dgrad, the result multiplied by the activation's
 * derivative at `pre_activation` (the input's shape, N x D x H x W x C, of
 * the input type, as grad_output). Any other convolution is an error naming it.
 */
int conv3d_run_dgrad_through_activation(const conv3d_conv *conv,
                                        const void *filter,
                                        const void *grad_output,
                                        const void *pre_activation,
                                        void *output, void *stream, char *error,
                                        size_t error_size);

/*===----------------------------------------------------------------------===*
 * Streaming video decoders: cached frames and an input prologue
 *===----------------------------------------------------------------------===*/

/* What a convolution reads besides `spec`'s input: `history_depth` frames
 * (N x Dh x H x W x C, the input's type) that precede the input along depth
 * (the convolution runs over their concatenation, never materialized, and
 * `spec.depth` is the input's own depth), and a prologue applied to every
 * input voxel as it is loaded: with `has_norm`, x * rsqrt(mean_c(x^2) +
 * norm_eps) * gamma[c] (+ beta[c] with `has_norm_beta`; gamma and beta are C
 * f32 values), then `input_activation` (CONV3D_ACT_*). History frames and
 * the padding halo are not transformed. All zero (norm_eps aside): none. */
typedef struct conv3d_input_ext {
  int64_t history_depth;
  int32_t has_norm, has_norm_beta;
  float norm_eps;
  int32_t input_activation;
} conv3d_input_ext;

/* conv3d_spec_geometry and conv3d_compile with `ext` (null: none). */
int conv3d_spec_geometry_ext(const conv3d_spec *spec,
                             const conv3d_input_ext *ext,
                             int64_t output_shape[5], double *flops,
                             char *error, size_t error_size);
conv3d_conv *conv3d_compile_ext(conv3d_engine *engine, const conv3d_spec *spec,
                                const conv3d_input_ext *ext,
                                const char *options, char *error,
                                size_t error_size);
/* conv3d_run with the history and the norm's gamma and beta (null where the
 * convolution has none). */
int conv3d_run_ext(const conv3d_conv *conv, const void *input,
                   const void *history, const void *filter,
                   const void *norm_gamma, const void *norm_beta,
                   const void *bias, const void *residual, float amax,
                   void *output, void *stream, char *error, size_t error_size);

/* A causal convolution applied to a sequence chunk by chunk along depth
 * (CausalConv3dStream): `spec` has causal depth padding [(Q-1)*dil_d, 0]
 * and its depth is a nominal chunk length; `ext` (null: none) its prologue,
 * without history (the stream keeps the last frames of the transformed
 * input itself). Each step returns exactly the output frames that the
 * full-sequence causal convolution produces for the chunk. The weights are
 * host buffers, copied (to the device for GPU targets); chunks, residuals
 * and outputs are host buffers for the CPU target, device buffers for GPU
 * targets (sm80; sm90 runs such convolutions on the sm80 kernel), where the
 * cache stays on the device. Each weight comes with its size in bytes, which
 * must be exactly what the spec reads (`filter`: the spec's filter in its
 * input type; `bias`: F f32 values; `norm_gamma`, `norm_beta`: C f32 values;
 * an absent one is null with size 0): a buffer of another size is refused,
 * naming it, before anything is read. `engine` must outlive the stream. Null
 * on error (message in `error`). */
typedef struct conv3d_causal_stream conv3d_causal_stream;
conv3d_causal_stream *conv3d_causal_stream_create(
    conv3d_engine *engine, const conv3d_spec *spec, const conv3d_input_ext *ext,
    const char *options, const void *filter, size_t filter_size,
    const void *bias, size_t bias_size, const void *norm_gamma,
    size_t norm_gamma_size, const void *norm_beta, size_t norm_beta_size,
    char *error, size_t error_size);
/* The output frames (depth of the output) the next chunk of `length`
 * frames gives (0 is possible with a depth stride over 1). */
int64_t conv3d_causal_stream_output_frames(const conv3d_causal_stream *stream,
                                           int64_t length);
/* Convolves the next chunk: `chunk` is N x length x H x W x C, `residual`
 * (when the spec has one) and `output` N x output_frames x Ho x Wo x F.
 * On error (non-zero) the stream is unchanged. */
int conv3d_causal_stream_step(conv3d_causal_stream *stream, const void *chunk,
                              int64_t length, const void *residual,
                              void *output, char *error, size_t error_size);
/* conv3d_causal_stream_step enqueued on the CUstream `cu_stream` (GPU
 * targets; returns without synchronizing it; null: a blocking call, as
 * conv3d_causal_stream_step). */
int conv3d_causal_stream_step_async(conv3d_causal_stream *stream,
                                    const void *chunk, int64_t length,
                                    const void *residual, void *output,
                                    void *cu_stream, char *error,
                                    size_t error_size);
/* Forgets the sequence; the next chunk is a first chunk. */
void conv3d_causal_stream_reset(conv3d_causal_stream *stream);
int64_t conv3d_causal_stream_frames_seen(const conv3d_causal_stream *stream);
int64_t conv3d_causal_stream_cached_frames(const conv3d_causal_stream *stream);
void conv3d_causal_stream_destroy(conv3d_causal_stream *stream);

/*===----------------------------------------------------------------------===*
 * A packed NVFP4 filter (../shared/spec/nvfp4.md)
 *===----------------------------------------------------------------------===*/

/* The bytes of `spec`'s filter packed as real NVFP4 (Engine::quantizeFilter):
 * FQRSC, blocks of 16 along C, `codes_bytes` = F*Q*R*S*C/2 (two E2M1 codes
 * per byte, element 2i in the low nibble) and `scales_bytes` = F*Q*R*S*C/16
 * (one E4M3 byte per block). Non-zero with the reason in `error` when the
 * spec cannot have a packed filter: a QRSCF layout, C not a multiple of 16,
 * or an invalid spec. */
int conv3d_packed_filter_sizes(const conv3d_spec *spec, size_t *codes_bytes,
                               size_t *scales_bytes, char *error,
                               size_t error_size);

/* Packs `filter` (host memory, `spec`'s FQRSC filter in its input type) with
 * global amax `filter_amax` (finite, >= 0) into `codes` and `scales` (host
 * buffers of `codes_size` and `scales_size` bytes, at least the sizes
 * conv3d_packed_filter_sizes tells). The packing kernel is compiled for
 * `options`' target (the conv3d_compile spelling; target=cpu runs it on the
 * host, a GPU target on the device with the buffers copied in and out).
 * Returns 0 on success; non-zero with the reason in `error` otherwise (the
 * buffers are then unspecified). */
int conv3d_quantize_filter(conv3d_engine *engine, const conv3d_spec *spec,
                           const void *filter, float filter_amax,
                           const char *options, void *codes, size_t codes_size,
                           void *scales, size_t scales_size, char *error,
                           size_t error_size);

/* What the filter operand of a compiled convolution is. With
 * `packed_filter`, the filter is conv3d_quantize_filter's codes, run with its
 * scales and amax through conv3d_run_packed_filter (needs FQRSC and C a
 * multiple of 16). nvfp4-mode=fake multiplies the dequantized values (the
 * fake-quantized filter); nvfp4-mode=real is the block-scaled sm100 MMA,
 * needs target=sm100 and is refused there as every sm100 compile is (never
 * run: no sm_100 GPU). All zero: an ordinary filter. */
typedef struct conv3d_filter_ext {
  int32_t packed_filter;
} conv3d_filter_ext;

/* conv3d_compile_ext with `filter_ext` (null: an ordinary filter). */
conv3d_conv *conv3d_compile_filter_ext(conv3d_engine *engine,
                                       const conv3d_spec *spec,
                                       const conv3d_input_ext *input_ext,
                                       const conv3d_filter_ext *filter_ext,
                                       const char *options, char *error,
                                       size_t error_size);

/* conv3d_run_packed(args) of a convolution compiled with a packed filter:
 * args->filter holds the codes, `filter_scales` the scales (both in the
 * memory space of the target's other buffers) and `filter_amax` the amax
 * they were packed with. Non-zero with the message in args->error for a
 * convolution whose filter is not packed. */
int conv3d_run_packed_filter(const conv3d_run_args *args,
                             const void *filter_scales, float filter_amax);

/*===----------------------------------------------------------------------===*
 * Why this kernel
 *===----------------------------------------------------------------------===*/

/* Which kernel family runs each convolution of `spec` (with `input_ext` and
 * `filter_ext`, null: none) under `options` (conv3d_compile's) and why: the
 * family and its tile configuration, the predicted time and waves (none
 * until the cost model lands), and every family of the target with its
 * verdict (chosen, declined, refused, not reached) and reason. Runs the
 * graph passes only: any target, no GPU or CUDA toolkit needed. `format`:
 * CONV3D_EXPLAIN_TEXT (what conv3d-run --explain prints) or
 * CONV3D_EXPLAIN_JSON (one object; conv3d-run --explain --json). Returns a
 * string the caller frees with conv3d_string_destroy, or null with the
 * message in `error`. */
enum { CONV3D_EXPLAIN_TEXT = 0, CONV3D_EXPLAIN_JSON = 1 };
char *conv3d_explain(conv3d_engine *engine, const conv3d_spec *spec,
                     const conv3d_input_ext *input_ext,
                     const conv3d_filter_ext *filter_ext, const char *options,
                     int32_t format, char *error, size_t error_size);
/* Frees a string the library returned (conv3d_explain's). */
void conv3d_string_destroy(char *text);

#ifdef __cplusplus
}
#endif

#endif /* CONV3D_CAPI_CONV3D_H */
