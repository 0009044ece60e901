//===- JitFunction.h - one JIT-compiled C-interface function ----*- C++ -*-===//

#ifndef CONV3D_LIB_RUNTIME_JITFUNCTION_H
#define CONV3D_LIB_RUNTIME_JITFUNCTION_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <vector>

namespace mlir {
class ExecutionEngine;
} // namespace mlir

namespace mlir::conv3d {

/// How one argument of a JIT-compiled function is passed.
struct JitArgument {
  enum class Kind { Buffer, F32, I64 } kind = Kind::Buffer;
  std::vector<int64_t> shape; ///< buffers: static, row-major contiguous
};

/// Checks that `module` (LLVM dialect) defines `name` and its C interface
/// with exactly the parameters of `arguments` (a descriptor of the right
/// rank per buffer, f32 and i64 scalars), so that a call cannot pass the
/// wrong number or kind of words. The error names the first difference.
llvm::Error verifyJitSignature(ModuleOp module, llvm::StringRef name,
                               llvm::ArrayRef<JitArgument> arguments);

/// A function with `llvm.emit_c_interface` in an LLVM-dialect module,
/// compiled by mlir::ExecutionEngine and called through its packed wrapper.
class JitFunction {
public:
  /// Compiles `module` (LLVM dialect) and looks up `name`, after checking
  /// its signature against `arguments` (verifyJitSignature). `symbols` are
  /// extra runtime functions the code calls (name -> address).
  static llvm::Expected<std::unique_ptr<JitFunction>>
  create(ModuleOp module, llvm::StringRef name,
         std::vector<JitArgument> arguments,
         llvm::ArrayRef<std::pair<std::string, void *>> symbols = {});
  ~JitFunction();

  /// `buffers` holds one data pointer per buffer argument, `scalars` one
  /// value per scalar argument, both in argument order.
  llvm::Error call(llvm::ArrayRef<void *> buffers,
                   llvm::ArrayRef<double> scalars) const;

private:
  JitFunction() = default;
  std::unique_ptr<ExecutionEngine> engine;
  void (*entry)(void **) = nullptr;
  std::vector<JitArgument> arguments;
};

} // namespace mlir::conv3d

#endif // CONV3D_LIB_RUNTIME_JITFUNCTION_H
