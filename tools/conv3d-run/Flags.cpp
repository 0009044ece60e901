//===- Flags.cpp - conv3d-run command line --------------------------------===//
//
// The flags are an interface scripts rely on: names and meanings are fixed
// by the project's issues and documented in README.md.
//
//===----------------------------------------------------------------------===//

#include "Flags.h"

#include "conv3d/IR/Conv3dAttrs.h"
#include "conv3d/Runtime/BenchmarkSuite.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir::conv3d;
namespace cl = llvm::cl;

namespace {
cl::OptionCategory runCategory("conv3d-run options");
cl::OptionCategory specCategory("Convolution (spec mode)");
cl::OptionCategory compileCategory("Compilation");
cl::OptionCategory moduleCategory("Module mode");

cl::opt<std::string>
    target("target",
           cl::desc("cpu; sm80 (mma.sync, runs on any sm_80+ GPU); sm90 "
                    "(TMA im2col + wgmma, H100/H200; falls back to the sm80 "
                    "kernel, with a remark, for convolutions it cannot "
                    "take); sm100 (TMA im2col + tcgen05, sm_100a, same "
                    "fallback): generated and assembled with --emit, never "
                    "run"),
           cl::init("cpu"), cl::cat(compileCategory));
cl::opt<std::string> gpuChip(
    "gpu-chip",
    cl::desc("GPU chip to generate code for (default: the device's, or the "
             "target's without a driver), e.g. sm_80, sm_90"),
    cl::cat(compileCategory));
cl::opt<std::string> cudaHome(
    "cuda-home",
    cl::desc("CUDA toolkit with ptxas and libdevice for GPU targets "
             "(default: $CUDA_HOME, else the one the project was configured "
             "with)"),
    cl::cat(compileCategory));
cl::opt<std::string> ptxasOptions(
    "ptxas-options",
    cl::desc("Extra ptxas options for GPU targets, after the compiler's own "
             "(e.g. -O0 to compare with the default -O3 when isolating a "
             "code-generation problem)"),
    cl::cat(compileCategory));
cl::opt<std::string>
    kind("kind",
         cl::desc("What to compute, with the forward's geometry flags: fprop "
                  "(the convolution), dgrad (the input's gradient from "
                  "--grad-output and --filter) or wgrad (the filter's gradient "
                  "from --input and --grad-output); --output-dtype is the "
                  "gradient's type"),
         cl::init("fprop"), cl::cat(specCategory));
cl::opt<std::string>
    gradOutputFile("grad-output",
                   cl::desc("dgrad, wgrad: the output's gradient (.npy, "
                            "float32/64, the forward's output shape)"),
                   cl::cat(specCategory));
cl::opt<std::string> dtype("dtype",
                           cl::desc("Input and filter dtype: bf16, f16, f32"),
                           cl::init("bf16"), cl::cat(specCategory));
cl::opt<std::string>
    outputDtype("output-dtype",
                cl::desc("Output dtype: bf16, f16, f32 (default: --dtype)"),
                cl::cat(specCategory));
cl::opt<std::string> inputShape("input-shape",
                                cl::desc("Input shape N,D,H,W,C (NDHWC)"),
                                cl::cat(specCategory));
cl::opt<std::string>
    filterShape("filter-shape",
                cl::desc("Filter shape Q,R,S,C/G,F (whatever the layout; "
                         "C/G the channels of one group, C without "
                         "--groups)"),
                cl::cat(specCategory));
cl::opt<int64_t>
    groups("groups",
           cl::desc("Groups G of a grouped convolution (G = C: depthwise); "
                    "C and F must be multiples of G"),
           cl::init(1), cl::cat(specCategory));
cl::opt<std::string> filterLayout("filter-layout",
                                  cl::desc("Filter layout: qrscf or fqrsc"),
                                  cl::init("qrscf"), cl::cat(specCategory));
cl::opt<std::string> stride("stride", cl::desc("Strides d,h,w"),
                            cl::init("1,1,1"), cl::cat(specCategory));
cl::opt<std::string> dilation("dilation", cl::desc("Dilations d,h,w"),
                              cl::init("1,1,1"), cl::cat(specCategory));
cl::opt<std::string>
    padding("padding",
            cl::desc("Padding dlo,dhi,hlo,hhi,wlo,whi (causal: 2,0,...)"),
            cl::init("0,0,0,0,0,0"), cl::cat(specCategory));
cl::opt<bool> bias("bias", cl::desc("Add a per-filter f32 bias"),
                   cl::cat(specCategory));
cl::opt<std::string>
    activation("activation",
               cl::desc("Fused activation: none, relu, silu, gelu_tanh. With "
                        "--kind=dgrad: the activation before the forward "
                        "convolution, whose derivative at the pre-activation "
                        "multiplies the gradient"),
               cl::init("none"), cl::cat(specCategory));
cl::opt<std::string> preActivationFile(
    "pre-activation",
    cl::desc("dgrad with --activation: the forward's input before the "
             "activation (.npy, float32/64, the input's shape; default "
             "random)"),
    cl::cat(specCategory));
cl::opt<bool> residual("residual",
                       cl::desc("Add a residual of the output's shape"),
                       cl::cat(specCategory));
cl::opt<bool> accumulate(
    "accumulate",
    cl::desc("Accumulate onto the output buffer (result = output + conv)"),
    cl::cat(specCategory));
cl::opt<std::string>
    quantizeInput("quantize-input",
                  cl::desc("Fake-quantize the input operand: nvfp4"),
                  cl::cat(specCategory));
cl::opt<float> amax("amax",
                    cl::desc("NVFP4 amax of the input (default: max |x|)"),
                    cl::cat(specCategory));
cl::opt<int> blockSize("block-size",
                       cl::desc("NVFP4 block size: 16, 32, 64, 128, 256"),
                       cl::init(16), cl::cat(specCategory));
cl::opt<std::string> quantizeFilter(
    "quantize-filter",
    cl::desc("Quantize the filter offline (in the K order per output "
             "channel) before running: nvfp4. With --nvfp4-mode=real the "
             "filter is packed instead (Engine::quantizeFilter, FQRSC, "
             "block 16) and the convolution takes its codes and scales"),
    cl::cat(specCategory));
cl::opt<bool> packedFilter(
    "packed-filter",
    cl::desc("With --quantize-filter=nvfp4: hand the convolution the filter "
             "packed to real NVFP4 (Engine::quantizeFilter: FQRSC, block 16, "
             "E2M1 codes and E4M3 scales; checked against the reference "
             "packer) instead of its fake-quantized values. With "
             "--nvfp4-mode=fake (every target) the compiled code unpacks it; "
             "--nvfp4-mode=real implies it"),
    cl::cat(specCategory));
cl::opt<float> filterAmax("filter-amax",
                          cl::desc("NVFP4 amax of the filter (default: max "
                                   "|w|)"),
                          cl::cat(specCategory));
cl::opt<bool> packNVFP4(
    "pack-nvfp4",
    cl::desc("Instead of running the convolution, pack its input to real "
             "NVFP4 (E2M1 codes and E4M3 block scales, the packing prepass "
             "of the block-scaled sm100 path) on --target and compare the "
             "bytes with the reference packer; uses --block-size and "
             "--amax (default: max |x|). With --filter-layout=fqrsc the "
             "filter (K-major) is packed and checked too, with block 16 by "
             "Engine::quantizeFilter, the offline filter quantization of "
             "real NVFP4 (--filter-amax, "
             "default max |w|). Runs on cpu and on any sm_80+ GPU "
             "(--target=sm80 or sm90)"),
    cl::cat(specCategory));
cl::opt<int64_t> historyDepth(
    "history-depth",
    cl::desc("Cached frames preceding the input along depth (a history "
             "operand of N x Dh x H x W x C; the conv reads "
             "concat(history, input), padding applies to it)"),
    cl::init(0), cl::cat(specCategory));
cl::opt<bool> rmsNorm("rms-norm",
                      cl::desc("Input prologue: RMS norm of each input voxel "
                               "over its channels with a per-channel f32 "
                               "scale"),
                      cl::cat(specCategory));
cl::opt<bool> normBeta("norm-beta",
                       cl::desc("Add a per-channel f32 shift after the RMS "
                                "norm (needs --rms-norm)"),
                       cl::cat(specCategory));
cl::opt<float> normEps("norm-eps",
                       cl::desc("Epsilon of the RMS norm (needs --rms-norm)"),
                       cl::init(1e-6f), cl::cat(specCategory));
cl::opt<std::string> inputActivation(
    "input-activation",
    cl::desc("Input prologue activation, after the norm: none, relu, silu, "
             "gelu_tanh"),
    cl::init("none"), cl::cat(specCategory));
cl::opt<std::string> preset("preset",
                            cl::desc("Take the shape from --suite by name"),
                            cl::cat(specCategory));
cl::opt<std::string> suite("suite", cl::desc("Benchmark suite JSON"),
                           cl::init("bench/shapes.json"),
                           cl::cat(specCategory));
cl::opt<std::string> inputFile("input",
                               cl::desc("Input data (.npy, float32/64)"),
                               cl::cat(specCategory));
cl::opt<std::string> filterFile("filter",
                                cl::desc("Filter data (.npy, float32/64)"),
                                cl::cat(specCategory));
cl::opt<std::string> outputFile("output",
                                cl::desc("Write the output (.npy, float32)"),
                                cl::cat(runCategory));

cl::opt<std::string> lowering(
    "lowering",
    cl::desc("CPU computation: igemm (implicit-GEMM tiles) or reference "
             "(direct loops)"),
    cl::init("igemm"), cl::cat(compileCategory));
cl::opt<std::string> config(
    "config",
    cl::desc("Force a tile config: tile_m=..,tile_n=..,tile_k=..[,stages=..,"
             "warps_m=..,warps_n=..,k_order=taps_outer|qslice_outer,"
             "split_k=..]"),
    cl::cat(compileCategory));
cl::opt<bool> tune(
    "tune",
    cl::desc("Choose the tile configuration by timing the heuristic's and "
             "nearby ones on the device (the host for --target=cpu), each "
             "checked against the heuristic's result; the choice is kept in "
             "the disk cache, so later runs compile it directly. Exclusive "
             "with --config"),
    cl::cat(compileCategory));
cl::opt<bool> listConfigs(
    "list-configs",
    cl::desc("Instead of running: print the heuristic's tile configuration "
             "(as the graph pipeline attaches it) and the other candidates "
             "--tune would time, one key=value configuration a line (with "
             "--json: one JSON object); needs no GPU. Each can be given to "
             "--config"),
    cl::cat(compileCategory));
cl::opt<std::string> qslice("qslice",
                            cl::desc("Q-slice decomposition: auto (fused when "
                                     "depth padding makes slices skippable), "
                                     "none, fused, separate"),
                            cl::init("auto"), cl::cat(compileCategory));
cl::opt<std::string>
    quantPlacement("quant-placement",
                   cl::desc("NVFP4 placement: auto (cost model), tile, "
                            "prepass"),
                   cl::init("auto"), cl::cat(compileCategory));
cl::opt<std::string> prologuePlacement(
    "prologue-placement",
    cl::desc("Input prologue (--rms-norm, --input-activation) placement: "
             "prepass (a separate pass over the input, then a plain "
             "convolution on any kernel) or fused (in the CPU and sm80 "
             "loads, once per filter tap and N tile)"),
    cl::init("prepass"), cl::cat(compileCategory));
cl::opt<std::string> wgradFold(
    "wgrad-fold",
    cl::desc("--kind=wgrad: how the output positions become the forward "
             "form's channels: auto (the fold the target's cost model "
             "prices cheaper; width on cpu), width (Wo x N channels, a "
             "window of Do x Ho taps) or height-width (Ho x Wo x N "
             "channels, a window of Do taps, R x S gathered copies of the "
             "input)"),
    cl::init("auto"), cl::cat(compileCategory));
cl::opt<std::string> selection(
    "selection",
    cl::desc("How the tile configuration is chosen without --config: model "
             "(the default; sm90: the candidate the cost model predicts "
             "fastest among the heuristic's and the tuner's) or heuristic "
             "(the kernel families' rules)"),
    cl::init("model"), cl::cat(compileCategory));
cl::opt<std::string> nvfp4Mode(
    "nvfp4-mode",
    cl::desc("How NVFP4 operands are multiplied: fake (quantize, dequantize, "
             "bf16/f16 MMA; every target) or real (E2M1 codes and E4M3 "
             "scales into the block-scaled tcgen05.mma of sm100: compiled "
             "(--emit=ptx), never run; an NVFP4 convolution the kernel "
             "cannot take is refused with its reason)"),
    cl::init("fake"), cl::cat(compileCategory));
cl::opt<std::string> cacheDir(
    "cache-dir",
    cl::desc("Disk cache of compiled convolutions (default: "
             "$CONV3D_CACHE_DIR, else $XDG_CACHE_HOME/conv3d-mlir, else "
             "~/.cache/conv3d-mlir); bounded by $CONV3D_CACHE_MAX_MB "
             "(MiB, default 1024, 0: no bound), least recently used "
             "entries evicted first"),
    cl::cat(compileCategory));
cl::opt<bool> noCache("no-cache",
                      cl::desc("Compile even when the disk cache holds the "
                               "convolution, and do not store it"),
                      cl::cat(compileCategory));
cl::opt<bool> explain(
    "explain",
    cl::desc("Print which kernel family runs the convolution and why instead "
             "of running it: the family and its configuration, the predicted "
             "time and waves (none for the cpu kernel, which the cost model "
             "does not cover) and every "
             "family of the target with its verdict and reason (refusals "
             "included); JSON with --json. Any target, no GPU needed"),
    cl::cat(compileCategory));
cl::opt<std::string> emit(
    "emit",
    cl::desc("Print a stage instead of running: mlir (the conv3d module), "
             "lowered (after the conv3d passes), llvm (LLVM IR of the host "
             "code), ptx (GPU targets: the kernels' PTX)"),
    cl::cat(compileCategory));

cl::opt<bool> check("check",
                    cl::desc("Compare with the reference; exit 1 if the "
                             "relative L2 error exceeds the dtype's "
                             "tolerance"),
                    cl::init(true), cl::cat(runCategory));
cl::opt<long long> checkRows(
    "check-rows",
    cl::desc("Check only this many output rows (voxels, all F outputs "
             "each) against the reference instead of the whole output: "
             "the first and last, those where the flat output offset "
             "crosses 2^31 and 2^32, and random ones (--seed). For "
             "outputs too large for the whole float64 reference (0: all)"),
    cl::init(0), cl::cat(runCategory));
cl::opt<int> repeat("repeat", cl::desc("Timed runs (median reported)"),
                    cl::init(1), cl::cat(runCategory));
cl::opt<bool> json("json", cl::desc("Print one JSON result line"),
                   cl::cat(runCategory));
cl::opt<unsigned long long> seed("seed", cl::desc("Random data seed"),
                                 cl::init(1), cl::cat(runCategory));
cl::opt<bool> quiet("quiet",
                    cl::desc("No progress messages on stderr, and of the "
                             "result only its last line (the check's "
                             "verdict, or the run time without a check; "
                             "nothing in module mode); errors still print"),
                    cl::cat(runCategory));
cl::opt<bool> emulate(
    "emulate",
    cl::desc("Run the GPU target's kernels in the PTX emulator on the host "
             "(no GPU: the emulated driver lib/libconv3d-emulated-cuda.so, "
             "kernels compiled to PTX); sm90 and sm100 included. Hazards the "
             "emulator finds (races, data read before its TMA load landed, "
             "phase misuse) fail the run"),
    cl::cat(runCategory));

cl::opt<std::string> moduleFile("module",
                                cl::desc("Run a function of this .mlir file"),
                                cl::cat(moduleCategory));
cl::opt<std::string> entry("entry", cl::desc("Function to run"),
                           cl::init("main"), cl::cat(moduleCategory));
cl::list<std::string>
    args("arg",
         cl::desc("Argument: .npy file for a buffer, a number for a scalar "
                  "(repeat in order)"),
         cl::cat(moduleCategory));
cl::list<std::string> results("result",
                              cl::desc("Write result i to this .npy file "
                                       "(repeat in order)"),
                              cl::cat(moduleCategory));
} // namespace

static llvm::Error flagError(llvm::StringRef flag, const llvm::Twine &what) {
  return llvm::createStringError(("--" + flag + ": " + what).str());
}

/// Parses `count` comma-separated integers.
static llvm::Expected<std::vector<int64_t>>
parseInts(llvm::StringRef flag, llvm::StringRef text, size_t count) {
  llvm::SmallVector<llvm::StringRef> parts;
  text.split(parts, ',');
  if (parts.size() != count)
    return flagError(flag, llvm::formatv("expected {0} comma-separated "
                                         "integers, got '{1}'",
                                         count, text));
  std::vector<int64_t> values;
  for (llvm::StringRef part : parts) {
    int64_t value;
    if (part.trim().getAsInteger(10, value))
      return flagError(flag, "'" + part + "' is not an integer");
    values.push_back(value);
  }
  return values;
}

static llvm::Expected<ElementType> parseDtype(llvm::StringRef flag,
                                              llvm::StringRef text) {
  if (std::optional<ElementType> type = parseElementType(text))
    return *type;
  return flagError(flag, "expected bf16, f16 or f32, got '" + text + "'");
}

static llvm::Error checkChoice(llvm::StringRef flag, llvm::StringRef value,
                               llvm::ArrayRef<llvm::StringRef> choices) {
  if (llvm::is_contained(choices, value))
    return llvm::Error::success();
  return flagError(flag, "expected one of " + llvm::join(choices, ", ") +
                             ", got '" + value + "'");
}

/// Fills the geometry from --preset or the shape flags.
static llvm::Error parseGeometry(conv3d_run::RunRequest &request) {
  ConvSpec &spec = request.spec;
  if (!preset.empty()) {
    if (!inputShape.empty() || !filterShape.empty() ||
        groups.getNumOccurrences())
      return flagError("preset", "cannot be combined with --input-shape, "
                                 "--filter-shape or --groups");
    llvm::Expected<BenchmarkShape> shape = loadBenchmarkShape(suite, preset);
    if (!shape)
      return shape.takeError();
    spec.geometry = shape->geometry;
    request.presetName = shape->name;
    return llvm::Error::success();
  }
  if (inputShape.empty() || filterShape.empty())
    return llvm::createStringError(
        "give --input-shape and --filter-shape, or --preset (see --help)");
  if (groups < 1)
    return flagError(
        "groups", llvm::formatv("must be positive, got {0}", int64_t(groups)));
  auto in = parseInts("input-shape", inputShape, 5);
  if (!in)
    return in.takeError();
  auto w = parseInts("filter-shape", filterShape, 5);
  if (!w)
    return w.takeError();
  auto s = parseInts("stride", stride, 3);
  if (!s)
    return s.takeError();
  auto d = parseInts("dilation", dilation, 3);
  if (!d)
    return d.takeError();
  auto p = parseInts("padding", padding, 6);
  if (!p)
    return p.takeError();
  if (groups == 1 && (*w)[3] != (*in)[4])
    return flagError("filter-shape",
                     llvm::formatv("filter has C = {0} but the input has C "
                                   "= {1}",
                                   (*w)[3], (*in)[4]));
  if (groups != 1 && ((*in)[4] % groups != 0 || (*in)[4] / groups != (*w)[3]))
    return flagError("filter-shape",
                     llvm::formatv("filter has C/G = {0} channels per group "
                                   "but the input has C = {1} in {2} groups",
                                   (*w)[3], (*in)[4], int64_t(groups)));
  ConvGeometry &g = spec.geometry;
  g.batch = (*in)[0];
  g.inputSize = {(*in)[1], (*in)[2], (*in)[3]};
  g.channels = (*in)[4];
  g.window = {(*w)[0], (*w)[1], (*w)[2]};
  g.filters = (*w)[4];
  g.groups = groups;
  g.strides = {(*s)[0], (*s)[1], (*s)[2]};
  g.dilations = {(*d)[0], (*d)[1], (*d)[2]};
  g.padLow = {(*p)[0], (*p)[2], (*p)[4]};
  g.padHigh = {(*p)[1], (*p)[3], (*p)[5]};
  return llvm::Error::success();
}

/// The compilation flags, parsed by the pipelines' one options parser
/// (parsePipelineOptions, as conv3d-opt's pipelines and the C API take
/// them): each flag given becomes its `key="value"` pair, and an unknown
/// value is an error naming the flag and the value.
static llvm::Error parseCompileOptions(CompileOptions &options) {
  struct Flag {
    const cl::opt<std::string> &option;
    const char *key;
  };
  const Flag flags[] = {{target, "target"},
                        {lowering, "lowering"},
                        {config, "config"},
                        {qslice, "qslice"},
                        {quantPlacement, "quant-placement"},
                        {prologuePlacement, "prologue-placement"},
                        {wgradFold, "wgrad-fold"},
                        {gpuChip, "gpu-chip"},
                        {cudaHome, "cuda-home"},
                        {ptxasOptions, "ptxas-options"},
                        {nvfp4Mode, "nvfp4-mode"},
                        {selection, "selection"}};
  std::string text;
  for (const Flag &flag : flags) {
    if (!flag.option.getNumOccurrences())
      continue;
    const std::string &value = flag.option;
    // The value is passed quoted; a quote inside it cannot be.
    if (value.find('"') != std::string::npos)
      return flagError(flag.option.ArgStr, "a value cannot contain '\"'");
    text += llvm::formatv("{0}=\"{1}\" ", flag.key, value).str();
  }
  if (tune)
    text += "tune=true";
  llvm::Expected<PipelineOptions> parsed = parsePipelineOptions(text);
  if (!parsed)
    // The parser's messages start with the option's key: `key=value: ...`.
    return llvm::createStringError("--" + llvm::toString(parsed.takeError()));
  options = std::move(*parsed);
  return llvm::Error::success();
}

/// --kind and the data flags that go with it: a gradient reads two of
/// --input, --filter and --grad-output and runs on no packed, quantized or
/// tuned path (ConvSpec::validate names the forward-only features).
static llvm::Error parseKind(conv3d_run::RunRequest &request) {
  std::optional<ConvKind> parsed = symbolizeConvKind(kind);
  if (!parsed)
    return flagError("kind",
                     "expected one of fprop, dgrad, wgrad, got '" + kind + "'");
  request.spec.kind = *parsed;
  if (*parsed != ConvKind::dgrad && preActivationFile.getNumOccurrences())
    return flagError("pre-activation", "needs --kind=dgrad and --activation");
  if (*parsed == ConvKind::fprop) {
    if (gradOutputFile.getNumOccurrences())
      return flagError("grad-output", "needs --kind=dgrad or --kind=wgrad");
    return llvm::Error::success();
  }
  if (*parsed == ConvKind::dgrad) {
    // dgrad's residual operand is the pre-activation of its --activation.
    if (residual)
      return flagError("residual",
                       "--kind=dgrad adds another path's gradient with "
                       "--accumulate (onto --output's contents)");
    request.spec.hasResidual = request.spec.activation != Activation::none;
    if (preActivationFile.getNumOccurrences() && !request.spec.hasResidual)
      return flagError("pre-activation", "needs --activation");
  }
  if (*parsed == ConvKind::dgrad && inputFile.getNumOccurrences())
    return flagError("input", "--kind=dgrad reads --grad-output and "
                              "--filter (the input is what it computes)");
  if (*parsed == ConvKind::wgrad && filterFile.getNumOccurrences())
    return flagError("filter", "--kind=wgrad reads --input and "
                               "--grad-output (the filter is what it "
                               "computes)");
  const cl::Option *forwardOnly[] = {&listConfigs, &packNVFP4, &checkRows};
  for (const cl::Option *option : forwardOnly)
    if (option->getNumOccurrences())
      return flagError(option->ArgStr, "is for --kind=fprop only");
  if (request.options.tune)
    return flagError("tune", "is for --kind=fprop only");
  return llvm::Error::success();
}

llvm::Expected<conv3d_run::RunRequest>
conv3d_run::parseCommandLine(int argc, char **argv) {
  cl::HideUnrelatedOptions(
      {&runCategory, &specCategory, &compileCategory, &moduleCategory});
  cl::ParseCommandLineOptions(
      argc, argv,
      "conv3d-run: compile a 3-D convolution, run it on random or given "
      "data, check it against the reference and time it.\n\n"
      "  conv3d-run --input-shape=1,10,32,32,64 --filter-shape=3,3,3,64,64 \\\n"
      "             --padding=2,0,1,1,1,1 --dtype=bf16 --repeat=5\n"
      "  conv3d-run --preset=wan_mid_full --suite=bench/shapes.json\n"
      "  conv3d-run --module=f.mlir --entry=main --arg=a.npy --result=r.npy\n\n"
      "Exit status: 0 success, 1 check failed, 2 bad flags, impossible "
      "geometry or compile error.\n\n"
      "Compile errors name their problem; CONV3D_DUMP_IR_ON_ERROR=1 adds the "
      "IR of the operation each error is about.\n\n"
      "CONV3D_JIT_OPT_LEVEL=0..3 (default 3) sets the LLVM optimization "
      "level the host code is JIT-compiled at: lower compiles faster and "
      "runs slower.\n");

  RunRequest request;
  request.check = check;
  request.checkRows = checkRows;
  request.repeat = repeat;
  request.json = json;
  request.emit = emit;
  request.seed = seed;
  request.quiet = quiet || json;
  if (repeat < 1)
    return flagError("repeat", "must be at least 1");
  if (checkRows < 0)
    return flagError("check-rows", "must be non-negative");
  if (!emit.empty())
    if (llvm::Error e =
            checkChoice("emit", emit, {"mlir", "lowered", "llvm", "ptx"}))
      return std::move(e);

  if (llvm::Error e = parseCompileOptions(request.options))
    return std::move(e);
  CompileOptions &options = request.options;
  if (emulate) {
    request.emulate = true;
    if (llvm::Error e = enableEmulation(options, argv[0]))
      return flagError("emulate", llvm::toString(std::move(e)));
    // The checked run only: timing emulated kernels means nothing.
    if (!repeat.getNumOccurrences())
      request.repeat = 0;
  }
  request.cache = CacheOptions::fromEnvironment();
  if (cacheDir.getNumOccurrences())
    request.cache.directory = cacheDir;
  if (noCache) {
    if (cacheDir.getNumOccurrences())
      return flagError("no-cache", "contradicts --cache-dir");
    request.cache.directory.clear();
  }
  if (!options.config.empty()) {
    // Validate here so a typo is a flag error, not a compile error.
    mlir::MLIRContext context;
    std::string error;
    if (!parseIGemmConfig(&context, options.config, error))
      return flagError("config", error);
  }
  if (options.tune && !emit.empty())
    return flagError("tune", "times kernels and cannot be combined with "
                             "--emit");
  if (listConfigs && (options.tune || !options.config.empty() || !emit.empty()))
    return flagError("list-configs",
                     "lists the configurations instead of compiling one; "
                     "drop --tune, --config and --emit");
  request.listConfigs = listConfigs;
  request.explain = explain;
  if (explain && (!emit.empty() || packNVFP4 || listConfigs))
    return flagError("explain", "cannot be combined with --emit, "
                                "--pack-nvfp4 or --list-configs");

  if (!moduleFile.empty()) {
    // Flags that describe a convolution have no meaning for a module.
    const cl::Option *specOnly[] = {&inputShape,
                                    &filterShape,
                                    &groups,
                                    &dtype,
                                    &outputDtype,
                                    &filterLayout,
                                    &stride,
                                    &dilation,
                                    &padding,
                                    &bias,
                                    &activation,
                                    &residual,
                                    &accumulate,
                                    &quantizeInput,
                                    &amax,
                                    &blockSize,
                                    &quantizeFilter,
                                    &filterAmax,
                                    &preset,
                                    &inputFile,
                                    &filterFile,
                                    &outputFile,
                                    &emit,
                                    &historyDepth,
                                    &rmsNorm,
                                    &normBeta,
                                    &normEps,
                                    &inputActivation,
                                    &packNVFP4,
                                    &packedFilter,
                                    &listConfigs,
                                    &explain,
                                    &kind,
                                    &gradOutputFile,
                                    &preActivationFile};
    for (const cl::Option *option : specOnly)
      if (option->getNumOccurrences())
        return flagError(option->ArgStr,
                         "describes a convolution and cannot be used with "
                         "--module");
    request.modulePath = moduleFile;
    request.entry = entry;
    request.argPaths.assign(args.begin(), args.end());
    request.resultPaths.assign(results.begin(), results.end());
    return request;
  }
  if (!args.empty() || !results.empty())
    return flagError("arg", "--arg and --result need --module");

  ConvSpec &spec = request.spec;
  if (llvm::Error e = parseGeometry(request))
    return std::move(e);
  auto in = parseDtype("dtype", dtype);
  if (!in)
    return in.takeError();
  spec.inputType = *in;
  auto out = parseDtype("output-dtype", outputDtype.empty()
                                            ? std::string(dtype)
                                            : std::string(outputDtype));
  if (!out)
    return out.takeError();
  spec.outputType = *out;
  if (filterLayout == "qrscf")
    spec.filterLayout = FilterLayout::qrscf;
  else if (filterLayout == "fqrsc")
    spec.filterLayout = FilterLayout::fqrsc;
  else
    return flagError("filter-layout",
                     "expected qrscf or fqrsc, got '" + filterLayout + "'");
  std::optional<Activation> act = symbolizeActivation(activation);
  if (!act || isActivationDerivative(*act))
    return flagError("activation", "expected none, relu, silu or gelu_tanh, "
                                   "got '" +
                                       activation + "'");
  spec.activation = *act;
  if (historyDepth < 0)
    return flagError("history-depth", "must be >= 0");
  spec.geometry.addHistory(historyDepth);
  if (spec.geometry.inputSize[0] == ConvGeometry::kDynamic)
    return flagError("history-depth",
                     "the input depth plus the history depth overflows int64");
  std::optional<Activation> inAct = symbolizeActivation(inputActivation);
  if (!inAct || isActivationDerivative(*inAct))
    return flagError("input-activation",
                     "expected none, relu, silu or gelu_tanh, got '" +
                         inputActivation + "'");
  spec.inputActivation = *inAct;
  if (!rmsNorm && (normBeta || normEps.getNumOccurrences()))
    return flagError(normBeta ? "norm-beta" : "norm-eps", "needs --rms-norm");
  spec.hasNorm = rmsNorm;
  spec.hasNormBeta = normBeta;
  spec.normEps = normEps;
  spec.hasBias = bias;
  spec.hasResidual = residual;
  spec.accumulate = accumulate;
  if (!quantizeInput.empty()) {
    if (quantizeInput != "nvfp4")
      return flagError("quantize-input",
                       "expected nvfp4, got '" + quantizeInput + "'");
    spec.inputQuantBlockSize = blockSize;
    if (amax.getNumOccurrences())
      request.amax = amax;
  }
  if (packNVFP4) {
    if (!quantizeInput.empty() || !quantizeFilter.empty())
      return flagError("pack-nvfp4", "packs the input instead of running the "
                                     "convolution; drop --quantize-input and "
                                     "--quantize-filter");
    if (!emit.empty() || tune || listConfigs)
      return flagError("pack-nvfp4", "cannot be combined with --emit, "
                                     "--tune or --list-configs");
    if (!isValidNVFP4BlockSize(blockSize))
      return flagError("block-size",
                       llvm::formatv("NVFP4 block size must be 16, 32, 64, 128 "
                                     "or 256, got {0}",
                                     int(blockSize)));
    request.packBlockSize = blockSize;
    if (amax.getNumOccurrences())
      request.amax = amax;
    if (filterAmax.getNumOccurrences())
      request.filterAmax = filterAmax;
  }
  if (quantizeInput.empty() && amax.getNumOccurrences() && !packNVFP4)
    return flagError("amax", "needs --quantize-input");
  if (quantizeFilter.empty() && filterAmax.getNumOccurrences() && !packNVFP4)
    return flagError("filter-amax", "needs --quantize-filter or --pack-nvfp4");
  if (quantizeInput.empty() && quantizeFilter.empty() && !packNVFP4 &&
      blockSize.getNumOccurrences())
    return flagError("block-size",
                     "needs --quantize-input, --quantize-filter or "
                     "--pack-nvfp4");
  if (packedFilter && quantizeFilter.empty())
    return flagError("packed-filter", "needs --quantize-filter=nvfp4");
  if (!quantizeFilter.empty()) {
    if (quantizeFilter != "nvfp4")
      return flagError("quantize-filter",
                       "expected nvfp4, got '" + quantizeFilter + "'");
    // The input's block size is checked with the spec; this one is not in it.
    if (!isValidNVFP4BlockSize(blockSize))
      return flagError("block-size",
                       llvm::formatv("NVFP4 block size must be 16, 32, 64, 128 "
                                     "or 256, got {0}",
                                     int(blockSize)));
    // Real NVFP4 packs the filter (Engine::quantizeFilter) and hands the
    // convolution its codes and scales (filter_quant) instead of a
    // fake-quantized filter.
    if (request.options.nvfp4Mode == NVFP4Mode::Real || packedFilter) {
      if (blockSize != 16)
        return flagError("block-size",
                         llvm::formatv("{0} packs the filter in blocks of 16 "
                                       "(kind::mxf4nvf4 block16), got {1}",
                                       packedFilter ? "--packed-filter"
                                                    : "--nvfp4-mode=real",
                                       int(blockSize)));
      spec.packedFilter = true;
    }
    request.filterQuantBlockSize = blockSize;
    if (filterAmax.getNumOccurrences())
      request.filterAmax = filterAmax;
  }
  auto checkAmax = [](llvm::StringRef flag,
                      std::optional<float> value) -> llvm::Error {
    if (value && !(*value >= 0.0f && std::isfinite(*value)))
      return flagError(flag, "must be a finite value >= 0");
    return llvm::Error::success();
  };
  if (llvm::Error e = checkAmax("amax", request.amax))
    return std::move(e);
  if (llvm::Error e = checkAmax("filter-amax", request.filterAmax))
    return std::move(e);
  if (llvm::Error e = parseKind(request))
    return std::move(e);
  if (llvm::Error e = spec.validate())
    return std::move(e);
  request.inputPath = inputFile;
  request.filterPath = filterFile;
  request.gradOutputPath = gradOutputFile;
  request.preActivationPath = preActivationFile;
  request.outputPath = outputFile;
  return request;
}
