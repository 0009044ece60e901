//===- JitFunction.cpp - one JIT-compiled C-interface function ------------===//

#include "JitFunction.h"

#include "conv3d/Pipelines/Pipelines.h"
#include "conv3d/Support/HostTensor.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMTypes.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "llvm/ADT/bit.h"
#include "llvm/ExecutionEngine/Orc/Mangling.h"
#include "llvm/Support/FormatVariadic.h"
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

/// The host JIT's LLVM optimization level: CONV3D_JIT_OPT_LEVEL (0-3; 3,
/// the default, is what the CPU target is tuned and measured with). Lower
/// levels compile faster and run slower: the quick test suite, whose
/// convolutions are tiny and whose time is mostly LLVM's optimizer and
/// code generator, runs at 0 (test/lit.cfg.py); the long suite at 3.
static llvm::Expected<unsigned> jitOptLevelFromEnvironment() {
  const char *value = std::getenv("CONV3D_JIT_OPT_LEVEL");
  if (!value || !*value)
    return 3;
  llvm::StringRef text(value);
  unsigned level = 0;
  if (text.getAsInteger(10, level) || level > 3)
    return llvm::createStringError(
        "CONV3D_JIT_OPT_LEVEL must be 0, 1, 2 or 3 (the host JIT's LLVM "
        "optimization level), not '%s'",
        value);
  return level;
}

static llvm::CodeGenOptLevel codeGenOptLevel(unsigned level) {
  switch (level) {
  case 0:
    return llvm::CodeGenOptLevel::None;
  case 1:
    return llvm::CodeGenOptLevel::Less;
  case 2:
    return llvm::CodeGenOptLevel::Default;
  default:
    return llvm::CodeGenOptLevel::Aggressive;
  }
}

/// float -> bf16, rounded to nearest even (a NaN stays a quiet NaN): the
/// libcall `__truncsfbf2` that LLVM's x86 back end emits for an f32 -> bf16
/// truncation without AVX512-BF16 (at -O3 it re-forms the truncation from
/// arith-expand's bit arithmetic). The compiler runtimes that define it
/// (libgcc from GCC 13, MLIR's libmlir_float16_utils) are not always in
/// the JIT's global lookup: Debian 12's libgcc lacks it, and a library
/// loaded by Python's ctypes is loaded locally. So every JIT gets this one.
/// The bf16 is returned in the low 16 bits of the floating-point return
/// register, as the ABI returns a __bf16: a float with those bits.
static float truncF32ToBF16(float value) {
  uint32_t bits = llvm::bit_cast<uint32_t>(value);
  uint32_t bf16;
  if ((bits & 0x7fffffffu) > 0x7f800000u)
    bf16 = (bits >> 16) | 0x40u;
  else
    bf16 = (bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16;
  return llvm::bit_cast<float>(bf16);
}

static std::string describe(const JitArgument &arg) {
  switch (arg.kind) {
  case JitArgument::Kind::Buffer:
    return "a rank-" + std::to_string(arg.shape.size()) + " buffer";
  case JitArgument::Kind::F32:
    return "f32";
  case JitArgument::Kind::I64:
    return "i64";
  }
  return "?";
}

llvm::Error
mlir::conv3d::verifyJitSignature(ModuleOp module, llvm::StringRef name,
                                 llvm::ArrayRef<JitArgument> arguments) {
  auto mismatch = [&](const llvm::Twine &why) {
    return llvm::createStringError("function '" + name +
                                   "' does not match its spec: " + why);
  };
  std::string cInterface = ("_mlir_ciface_" + name).str();
  auto wrapper = module.lookupSymbol<LLVM::LLVMFuncOp>(cInterface);
  auto function = module.lookupSymbol<LLVM::LLVMFuncOp>(name);
  if (!wrapper || wrapper.isExternal() || !function || function.isExternal())
    return mismatch("no definition of it and of its C interface");
  LLVM::LLVMFunctionType wrapperType = wrapper.getFunctionType();
  if (!isa<LLVM::LLVMVoidType>(wrapperType.getReturnType()))
    return mismatch("it returns a value");
  if (wrapperType.getNumParams() != arguments.size())
    return mismatch(llvm::formatv("{0} parameters, expected {1}",
                                  wrapperType.getNumParams(), arguments.size())
                        .str());
  // The C interface takes a pointer to each buffer's descriptor; the
  // function itself the descriptor's words, whose count gives the rank.
  llvm::ArrayRef<Type> words = function.getFunctionType().getParams();
  Type i64 = IntegerType::get(module.getContext(), 64);
  for (auto [i, arg] : llvm::enumerate(arguments)) {
    Type param = wrapperType.getParamType(i);
    auto wrong = [&, i = i, &arg = arg] {
      return mismatch(
          llvm::formatv("parameter {0} is not {1}", i, describe(arg)).str());
    };
    switch (arg.kind) {
    case JitArgument::Kind::Buffer: {
      size_t rank = arg.shape.size(), count = 3 + 2 * rank;
      if (!isa<LLVM::LLVMPointerType>(param) || words.size() < count ||
          !isa<LLVM::LLVMPointerType>(words[0]) ||
          !isa<LLVM::LLVMPointerType>(words[1]) ||
          llvm::any_of(words.slice(2, count - 2),
                       [&](Type t) { return t != i64; }))
        return wrong();
      words = words.drop_front(count);
      break;
    }
    case JitArgument::Kind::F32:
    case JitArgument::Kind::I64: {
      Type expected = arg.kind == JitArgument::Kind::F32
                          ? Type(Float32Type::get(module.getContext()))
                          : i64;
      if (param != expected || words.empty() || words.front() != expected)
        return wrong();
      words = words.drop_front();
      break;
    }
    }
  }
  if (!words.empty())
    return mismatch("more parameters than its spec has");
  return llvm::Error::success();
}

llvm::Expected<std::unique_ptr<JitFunction>>
JitFunction::create(ModuleOp module, llvm::StringRef name,
                    std::vector<JitArgument> arguments,
                    llvm::ArrayRef<std::pair<std::string, void *>> symbols) {
  if (llvm::Error error = verifyJitSignature(module, name, arguments))
    return std::move(error);
  // What the code's own memref.allocs need at most (conv3d-check-allocations
  // recorded it), checked against this machine before it can run out of
  // memory inside malloc.
  if (auto bytes =
          module->getAttrOfType<IntegerAttr>(kHostAllocationBytesAttrName))
    if (llvm::Error error = checkHostMemory(
            bytes.getInt(), "the compiled code (its memref.alloc temporaries)"))
      return std::move(error);
  llvm::Expected<unsigned> optLevel = jitOptLevelFromEnvironment();
  if (!optLevel)
    return optLevel.takeError();
  initializeNativeTarget();
  // ExecutionEngineOptions::transformer is a non-owning reference.
  auto transformer = makeOptimizingTransformer(*optLevel,
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
  engineOptions.jitCodeGenOptLevel = codeGenOptLevel(*optLevel);
  auto engine = ExecutionEngine::create(module, engineOptions);
  if (!engine)
    return engine.takeError();
  std::unique_ptr<JitFunction> function(new JitFunction());
  function->engine = std::move(*engine);
  function->engine->registerSymbols([&](llvm::orc::MangleAndInterner interner) {
    llvm::orc::SymbolMap map;
    map[interner("__truncsfbf2")] = {
        llvm::orc::ExecutorAddr::fromPtr(&truncF32ToBF16),
        llvm::JITSymbolFlags::Exported};
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

/// Writes a ranked strided memref descriptor as the C interface lays it
/// out, {allocated, aligned, offset, sizes[rank], strides[rank]} (8 bytes
/// each), for a row-major contiguous buffer, into `words`.
static void writeDescriptor(void *data, llvm::ArrayRef<int64_t> shape,
                            llvm::MutableArrayRef<int64_t> words) {
  size_t rank = shape.size();
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

llvm::Error JitFunction::call(llvm::ArrayRef<void *> buffers,
                              llvm::ArrayRef<double> scalars) const {
  size_t numBuffers = 0, numScalars = 0, numWords = 0;
  for (const JitArgument &arg : arguments) {
    bool buffer = arg.kind == JitArgument::Kind::Buffer;
    (buffer ? numBuffers : numScalars)++;
    if (buffer)
      numWords += 3 + 2 * arg.shape.size();
  }
  if (buffers.size() != numBuffers || scalars.size() != numScalars)
    return llvm::createStringError(
        "function takes %zu buffers and %zu scalars, got %zu and %zu",
        numBuffers, numScalars, buffers.size(), scalars.size());

  // Storage that lives until the call returns: descriptors, pointers to
  // them, scalar values, and the packed argument list. Each is sized before
  // a pointer into it is taken, so nothing moves; the inline capacities hold
  // a convolution's arguments (up to 7 of rank 5), so a call on the hot path
  // allocates nothing.
  llvm::SmallVector<int64_t, 96> words(numWords);
  llvm::SmallVector<void *, 8> descriptorPointers(numBuffers);
  llvm::SmallVector<float, 8> f32Values(arguments.size());
  llvm::SmallVector<int64_t, 8> i64Values(arguments.size());
  llvm::SmallVector<void *, 8> packed;
  packed.reserve(arguments.size());
  size_t nextBuffer = 0, nextScalar = 0, nextWord = 0;
  for (auto [i, arg] : llvm::enumerate(arguments)) {
    switch (arg.kind) {
    case JitArgument::Kind::Buffer: {
      if (!buffers[nextBuffer])
        return llvm::createStringError("buffer argument %zu is null", i);
      size_t count = 3 + 2 * arg.shape.size();
      llvm::MutableArrayRef<int64_t> descriptor(&words[nextWord], count);
      writeDescriptor(buffers[nextBuffer], arg.shape, descriptor);
      nextWord += count;
      descriptorPointers[nextBuffer] = descriptor.data();
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
