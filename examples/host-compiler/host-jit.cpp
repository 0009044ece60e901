//===- host-jit.cpp - a host compiler lowering and running linalg convs ---===//
//
//   host-jit conv.mlir [--print-llvm]
//
// What an embedding compiler does with conv3d: parse a module holding
// `linalg.conv_3d_ndhwc_dhwcf` (in a context that knows only func, linalg,
// tensor, arith and conv3d), build conv3d's import pass and CPU pipeline on
// its own pass manager with the host's hooks (which convolutions conv3d
// takes, the tile configuration of each), check that only the LLVM dialect
// is left, JIT the module and run function @conv (input, filter) -> output
// on random data, comparing with direct loops in double.
//
//===----------------------------------------------------------------------===//

#include "Registration.h"

#include "conv3d/IR/Conv3dAttrs.h"
#include "conv3d/IR/Conv3dOps.h"
#include "conv3d/Pipelines/Pipelines.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/ExecutionEngine/CRunnerUtils.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <random>
#include <set>
#include <vector>

using namespace mlir;

namespace {
/// A row-major f32 buffer with its memref descriptor.
struct Buffer {
  std::vector<float> data;
  StridedMemRefType<float, 5> descriptor;

  explicit Buffer(llvm::ArrayRef<int64_t> shape) {
    int64_t size = 1;
    for (int i = 4; i >= 0; --i) {
      descriptor.sizes[i] = shape[i];
      descriptor.strides[i] = size;
      size *= shape[i];
    }
    data.resize(size);
    descriptor.basePtr = descriptor.data = data.data();
    descriptor.offset = 0;
  }
};

llvm::SmallVector<int64_t> shapeOf(Type type) {
  auto shaped = llvm::cast<ShapedType>(type);
  return llvm::SmallVector<int64_t>(shaped.getShape());
}
} // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    llvm::errs() << "usage: host-jit FILE.mlir [--print-llvm]\n";
    return 2;
  }
  bool printLlvm = argc > 2 && llvm::StringRef(argv[2]) == "--print-llvm";

  DialectRegistry registry;
  registerHostCompiler(registry);
  MLIRContext context(registry);
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(argv[1], &context);
  if (!module)
    return 1;
  auto function = module->lookupSymbol<func::FuncOp>("conv");
  if (!function || function.getNumArguments() != 2 ||
      function.getNumResults() != 1) {
    llvm::errs() << "expected func.func @conv(input, filter) -> output\n";
    return 1;
  }
  // Its buffers and the direct loops it compares with are f32: a function
  // of another element type would read them as garbage (a bf16 module gave
  // "rel_l2 = nan: FAIL").
  for (Type type : llvm::concat<const Type>(function.getArgumentTypes(),
                                            function.getResultTypes())) {
    auto shaped = llvm::dyn_cast<RankedTensorType>(type);
    if (!shaped || shaped.getRank() != 5 || !shaped.getElementType().isF32() ||
        !shaped.hasStaticShape()) {
      llvm::errs() << "host-jit runs f32 convolutions of static shape "
                      "(its buffers and its check are f32); @conv has a "
                   << type << "\n";
      return 1;
    }
  }
  // Shapes before lowering: NDHWC input, DHWCF (QRSCF) filter, NDHWF result.
  auto inShape = shapeOf(function.getArgumentTypes()[0]);
  auto wShape = shapeOf(function.getArgumentTypes()[1]);
  auto outShape = shapeOf(function.getResultTypes()[0]);
  function->setAttr("llvm.emit_c_interface", UnitAttr::get(&context));

  // The host's decisions, as IREE's ConvolutionToIGEMM takes them: conv3d
  // takes the convolutions with at least 4 input channels (a host would
  // keep the others for its own lowering), and each gets a tile
  // configuration of the host's choosing (a null attribute would leave it
  // to conv3d's heuristic).
  std::set<Operation *> imported;
  int configured = 0;
  conv3d::ConvolutionHooks hooks;
  hooks.shouldConvert = [&](Operation *op) {
    auto input = llvm::cast<ShapedType>(op->getOperand(0).getType());
    bool take = input.getShape().back() >= 4;
    if (take)
      imported.insert(op);
    return take;
  };
  hooks.selectConfig = [&](conv3d::ConvOp conv) {
    std::string error;
    conv3d::IGemmConfigAttr config = conv3d::parseIGemmConfig(
        conv.getContext(), "tile_m=32,tile_n=8,tile_k=36", error);
    configured += bool(config);
    return config;
  };

  // conv3d's pieces on the host's pass manager: import, then the CPU
  // pipeline with results turned into out-parameters for the JIT.
  PassManager pm(&context);
  conv3d::buildConv3dImportPipeline(pm, hooks);
  conv3d::PipelineOptions options;
  options.target = conv3d::Target::cpu;
  options.resultsToOutParams = true;
  conv3d::buildConv3dCpuPipeline(pm, options, hooks);
  if (failed(pm.run(*module))) {
    llvm::errs() << "the conv3d pipeline failed\n";
    return 1;
  }
  llvm::outs() << "host-jit: hooks imported " << imported.size()
               << " convolution(s) and configured " << configured
               << " (tile_m=32,tile_n=8,tile_k=36)\n";
  bool onlyLlvm = true;
  module->walk([&](Operation *op) {
    StringRef ns = op->getDialect() ? op->getDialect()->getNamespace() : "";
    if (ns != "llvm" && ns != "builtin") {
      llvm::errs() << "left after the pipeline: " << op->getName() << "\n";
      onlyLlvm = false;
    }
  });
  if (!onlyLlvm)
    return 1;
  if (printLlvm)
    module->print(llvm::outs());

  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  auto engine = ExecutionEngine::create(*module);
  if (!engine) {
    llvm::errs() << "JIT: " << llvm::toString(engine.takeError()) << "\n";
    return 1;
  }

  Buffer input(inShape), filter(wShape), output(outShape);
  unsigned seed = std::random_device{}();
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal;
  for (float &v : input.data)
    v = normal(rng);
  for (float &v : filter.data)
    v = 0.2f * normal(rng);
  std::fill(output.data.begin(), output.data.end(), NAN);

  auto *in = &input.descriptor, *w = &filter.descriptor,
       *out = &output.descriptor;
  if (llvm::Error e = (*engine)->invoke("conv", in, w, out)) {
    llvm::errs() << "run: " << llvm::toString(std::move(e)) << "\n";
    return 1;
  }

  // Direct loops in double; the padding of conv.mlir (causal along depth,
  // 1 along height and width) is read from the shapes: the output keeps the
  // input's spatial size with a 3x3x3 window.
  int64_t N = inShape[0], D = inShape[1], H = inShape[2], W = inShape[3],
          C = inShape[4], Q = wShape[0], R = wShape[1], S = wShape[2],
          F = wShape[4];
  int64_t padD = Q - 1, padH = (R - 1) / 2, padW = (S - 1) / 2;
  double num = 0, den = 0;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t d = 0; d < outShape[1]; ++d)
      for (int64_t h = 0; h < outShape[2]; ++h)
        for (int64_t x = 0; x < outShape[3]; ++x)
          for (int64_t f = 0; f < F; ++f) {
            double sum = 0;
            for (int64_t q = 0; q < Q; ++q)
              for (int64_t r = 0; r < R; ++r)
                for (int64_t s = 0; s < S; ++s)
                  for (int64_t c = 0; c < C; ++c) {
                    int64_t id = d + q - padD, ih = h + r - padH,
                            iw = x + s - padW;
                    if (id < 0 || id >= D || ih < 0 || ih >= H || iw < 0 ||
                        iw >= W)
                      continue;
                    sum +=
                        double(
                            input.data[(((n * D + id) * H + ih) * W + iw) * C +
                                       c]) *
                        filter.data[(((q * R + r) * S + s) * C + c) * F + f];
                  }
            double got =
                output.data[(((n * outShape[1] + d) * outShape[2] + h) *
                                 outShape[3] +
                             x) *
                                F +
                            f];
            num += (got - sum) * (got - sum);
            den += sum * sum;
          }
  double relL2 = std::sqrt(num / den);
  bool ok = std::isfinite(relL2) && relL2 < 1e-5;
  llvm::outs() << "host-jit: linalg.conv_3d_ndhwc_dhwcf " << N << "x" << D
               << "x" << H << "x" << W << "x" << C << " * " << Q << "x" << R
               << "x" << S << "x" << C << "x" << F << ", seed " << seed
               << ", rel_l2 = " << llvm::format("%.2e", relL2) << ": "
               << (ok ? "PASS" : "FAIL") << "\n";
  return ok ? 0 : 1;
}
