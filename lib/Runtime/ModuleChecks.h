//===- ModuleChecks.h - preparing a module's function to run ----*- C++ -*-===//
//
// What Engine::compileFunction does to an arbitrary module before compiling
// one of its functions (conv3d-run --module): refuse what cannot run safely,
// and compile a function of dynamic shapes for the shapes it is called with.
//
//===----------------------------------------------------------------------===//

#ifndef CONV3D_LIB_RUNTIME_MODULECHECKS_H
#define CONV3D_LIB_RUNTIME_MODULECHECKS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <vector>

namespace mlir::conv3d {

/// An error naming the function when a function `entry` reaches through
/// calls is recursive (directly or through others), or calls through a
/// function value (func.call_indirect), which the JIT'ed code would run
/// until the stack overflows.
llvm::Error checkNoRecursion(func::FuncOp entry);

/// Compiles `func` for the shapes it is called with: each tensor or memref
/// argument of dynamic sizes that `shapes` gives a shape for (one entry per
/// argument; none leaves it) takes the static type, cast back to the
/// declared type for its uses; canonicalization then carries the sizes
/// through the body, and results that become static are returned as such
/// (when no other function calls `func`). An error names an argument whose
/// rank or static sizes differ from its shape.
llvm::Error specializeArgumentShapes(
    func::FuncOp func,
    llvm::ArrayRef<std::optional<std::vector<int64_t>>> shapes);

} // namespace mlir::conv3d

#endif // CONV3D_LIB_RUNTIME_MODULECHECKS_H
