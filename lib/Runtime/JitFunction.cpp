//===- JitFunction.cpp - one JIT-compiled C-interface function ------------===//

#include "JitFunction.h"

#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "llvm/ExecutionEngine/Orc/Mangling.h"
#include "llvm/Support/TargetSelect.h"

#include <cstdlib>
#include <mutex>

using namespace mlir;
using namespace mlir::conv3d;

static void initializeNativeTarget() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
}

llvm::Expected<std::unique_ptr<JitFunction>>
JitFunction::create(ModuleOp module, llvm::StringRef name,
                    std::vector<JitArgument> arguments,
                    llvm::ArrayRef<std::pair<std::string, void *>> symbols) {
  initializeNativeTarget();
  // ExecutionEngineOptions::transformer is a non-owning reference.
  auto transformer = makeOptimizingTransformer(/*optLevel=*/3,
                                               /*sizeLevel=*/0,
                                               /*targetMachine=*/nullptr);
  ExecutionEngineOptions engineOptions;
  engineOptions.transformer = transformer;
  // The perf listener writes a jitdump directory per process (under
  // $JITDUMPDIR or ~/.debug/jit); only profiling wants that.
  // CONV3D_JIT_PERF=1 turns it on.
  const char *perf = std::getenv("CONV3D_JIT_PERF");
  engineOptions.enablePerfNotificationListener =
      perf && llvm::StringRef(perf) == "1";
  engineOptions.jitCodeGenOptLevel = llvm::CodeGenOptLevel::Aggressive;
  auto engine = ExecutionEngine::create(module, engineOptions);
  if (!engine)
    return engine.takeError();
  std::unique_ptr<JitFunction> function(new JitFunction());
  function->engine = std::move(*engine);
  if (!symbols.empty())
    function->engine->registerSymbols(
        [&](llvm::orc::MangleAndInterner interner) {
          llvm::orc::SymbolMap map;
          for (const auto &[symbol, address] : symbols)
            map[interner(symbol)] = {llvm::orc::ExecutorAddr::fromPtr(address),
                                     llvm::JITSymbolFlags::Exported};
          return map;
        });
  // Global constructors (the GPU module load) need the symbols above.
  function->engine->initialize();
  // The packed wrapper of the C interface takes one pointer per argument.
  std::string cInterface = ("_mlir_ciface_" + name).str();
  auto entry = function->engine->lookupPacked(cInterface);
  if (!entry)
    return entry.takeError();
  function->entry = *entry;
  function->arguments = std::move(arguments);
  return function;
}

JitFunction::~JitFunction() = default;

namespace {
/// A ranked strided memref descriptor as the C interface lays it out:
/// {allocated, aligned, offset, sizes[rank], strides[rank]}, all 8 bytes.
struct Descriptor {
  std::vector<int64_t> words;

  Descriptor(void *data, const std::vector<int64_t> &shape) {
    size_t rank = shape.size();
    words.resize(3 + 2 * rank);
    words[0] = reinterpret_cast<int64_t>(data);
    words[1] = reinterpret_cast<int64_t>(data);
    words[2] = 0;
    int64_t stride = 1;
    for (size_t i = rank; i-- > 0;) {
      words[3 + i] = shape[i];
      words[3 + rank + i] = stride;
      stride *= shape[i];
    }
  }
};
} // namespace

llvm::Error JitFunction::call(llvm::ArrayRef<void *> buffers,
                              llvm::ArrayRef<double> scalars) const {
  size_t numBuffers = 0, numScalars = 0;
  for (const JitArgument &arg : arguments)
    (arg.kind == JitArgument::Kind::Buffer ? numBuffers : numScalars)++;
  if (buffers.size() != numBuffers || scalars.size() != numScalars)
    return llvm::createStringError(
        "function takes %zu buffers and %zu scalars, got %zu and %zu",
        numBuffers, numScalars, buffers.size(), scalars.size());

  // Storage that lives until the call returns: descriptors, pointers to
  // them, scalar values, and the packed argument list.
  std::vector<Descriptor> descriptors;
  descriptors.reserve(numBuffers);
  std::vector<void *> descriptorPointers(numBuffers);
  std::vector<float> f32Values(arguments.size());
  std::vector<int64_t> i64Values(arguments.size());
  std::vector<void *> packed;
  size_t nextBuffer = 0, nextScalar = 0;
  for (auto [i, arg] : llvm::enumerate(arguments)) {
    switch (arg.kind) {
    case JitArgument::Kind::Buffer: {
      if (!buffers[nextBuffer])
        return llvm::createStringError("buffer argument %zu is null", i);
      descriptors.emplace_back(buffers[nextBuffer], arg.shape);
      descriptorPointers[nextBuffer] = descriptors.back().words.data();
      packed.push_back(&descriptorPointers[nextBuffer]);
      ++nextBuffer;
      break;
    }
    case JitArgument::Kind::F32:
      f32Values[i] = static_cast<float>(scalars[nextScalar++]);
      packed.push_back(&f32Values[i]);
      break;
    case JitArgument::Kind::I64:
      i64Values[i] = static_cast<int64_t>(scalars[nextScalar++]);
      packed.push_back(&i64Values[i]);
      break;
    }
  }
  entry(packed.data());
  return llvm::Error::success();
}
