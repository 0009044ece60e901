//===- ModuleChecks.cpp - preparing a module's function to run ------------===//

#include "ModuleChecks.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::conv3d;

static std::string quoted(func::FuncOp func) {
  return ("'" + func.getSymName() + "'").str();
}

llvm::Error mlir::conv3d::checkNoRecursion(func::FuncOp entry) {
  // Depth-first over the call graph from `entry`, with an explicit stack (a
  // hostile module may chain many functions); a call back into a function
  // still on the stack closes a cycle.
  struct Frame {
    func::FuncOp func;
    SmallVector<func::FuncOp> callees;
    size_t next = 0;
  };
  std::string indirectCaller;
  auto makeFrame = [&](func::FuncOp func) {
    Frame frame{func, {}, 0};
    func.walk([&](Operation *op) {
      if (isa<func::CallIndirectOp>(op) && indirectCaller.empty())
        indirectCaller = quoted(func);
      if (auto call = dyn_cast<CallOpInterface>(op))
        if (auto callee =
                dyn_cast_or_null<func::FuncOp>(call.resolveCallable()))
          frame.callees.push_back(callee);
    });
    return frame;
  };
  enum class State { OnStack, Done };
  llvm::DenseMap<Operation *, State> state;
  std::vector<Frame> stack;
  stack.push_back(makeFrame(entry));
  state[entry] = State::OnStack;
  while (!stack.empty()) {
    if (!indirectCaller.empty())
      return llvm::createStringError(
          "function " + indirectCaller +
          " calls through a function value (func.call_indirect), which may "
          "recurse without bound: only direct calls are run");
    Frame &top = stack.back();
    if (top.next == top.callees.size()) {
      state[top.func] = State::Done;
      stack.pop_back();
      continue;
    }
    func::FuncOp callee = top.callees[top.next++];
    auto it = state.find(callee);
    if (it == state.end()) {
      state[callee] = State::OnStack;
      stack.push_back(makeFrame(callee));
      continue;
    }
    if (it->second == State::Done)
      continue;
    std::string cycle;
    bool inCycle = false;
    for (Frame &frame : stack) {
      inCycle |= frame.func == callee;
      if (inCycle)
        cycle += frame.func.getSymName().str() + " -> ";
    }
    cycle += callee.getSymName().str();
    return llvm::createStringError(
        "function " + quoted(callee) + " is recursive (" + cycle +
        "): the compiled code would run until the stack overflows, so "
        "recursive functions are refused");
  }
  return llvm::Error::success();
}

static std::string formatShape(ArrayRef<int64_t> shape) {
  std::string text;
  for (int64_t size : shape)
    text += (text.empty() ? "" : "x") +
            (ShapedType::isDynamic(size) ? "?" : std::to_string(size));
  return text.empty() ? "scalar" : text;
}

/// `type` with the sizes of `shape`; null for types that are not ranked
/// tensors or memrefs with identity layouts.
static Type withShape(Type type, ArrayRef<int64_t> shape) {
  if (auto tensor = dyn_cast<RankedTensorType>(type))
    return tensor.clone(shape);
  if (auto memref = dyn_cast<MemRefType>(type);
      memref && memref.getLayout().isIdentity())
    return MemRefType::get(shape, memref.getElementType(),
                           MemRefLayoutAttrInterface(),
                           memref.getMemorySpace());
  return Type();
}

/// The static type every return of `func` gives result `index`, looking
/// through the casts to its (dynamic) declared type; null if there is none.
static Type staticResultType(func::FuncOp func, unsigned index) {
  Type found;
  bool agree = true;
  func.walk([&](func::ReturnOp ret) {
    Value value = ret.getOperand(index);
    if (auto cast = value.getDefiningOp<tensor::CastOp>())
      value = cast.getSource();
    else if (auto cast = value.getDefiningOp<memref::CastOp>())
      value = cast.getSource();
    auto shaped = dyn_cast<ShapedType>(value.getType());
    if (!shaped || !shaped.hasStaticShape() || (found && found != shaped))
      agree = false;
    found = shaped;
  });
  return agree ? found : Type();
}

llvm::Error mlir::conv3d::specializeArgumentShapes(
    func::FuncOp func,
    llvm::ArrayRef<std::optional<std::vector<int64_t>>> shapes) {
  if (func.isExternal())
    return llvm::Error::success();
  MLIRContext *context = func.getContext();
  Block &body = func.front();
  OpBuilder builder = OpBuilder::atBlockBegin(&body);
  SmallVector<Type> inputs(func.getArgumentTypes());
  bool specialized = false;
  for (auto [i, arg] : llvm::enumerate(body.getArguments())) {
    auto type = dyn_cast<ShapedType>(arg.getType());
    if (i >= shapes.size() || !shapes[i] || !type || !type.hasRank() ||
        type.hasStaticShape())
      continue;
    ArrayRef<int64_t> shape = *shapes[i];
    bool fits = int64_t(shape.size()) == type.getRank();
    for (size_t dim = 0; fits && dim < shape.size(); ++dim)
      fits = type.isDynamicDim(dim) || type.getDimSize(dim) == shape[dim];
    if (!fits)
      return llvm::createStringError(
          llvm::formatv("argument {0} of {1} has type {2}; its value has "
                        "shape {3}",
                        i, quoted(func), type, formatShape(shape))
              .str());
    Type staticType = withShape(type, shape);
    if (!staticType)
      continue;
    arg.setType(staticType);
    Value declared;
    if (isa<RankedTensorType>(type))
      declared = tensor::CastOp::create(builder, func.getLoc(), type, arg);
    else
      declared = memref::CastOp::create(builder, func.getLoc(), type, arg);
    arg.replaceAllUsesExcept(declared, declared.getDefiningOp());
    inputs[i] = staticType;
    specialized = true;
  }
  if (!specialized)
    return llvm::Error::success();
  func.setFunctionType(
      FunctionType::get(context, inputs, func.getResultTypes()));

  // The casts fold into their users (tensor.dim, tensor.empty, DPS ops such
  // as conv3d.conv and linalg's), which then take static types.
  PassManager pm(context, func::FuncOp::getOperationName());
  pm.addPass(createCanonicalizerPass());
  if (failed(pm.run(func)))
    return llvm::createStringError("cannot specialize " + quoted(func) +
                                   " to its arguments' shapes");

  // Results: the caller reads them with the sizes they now have. A function
  // other functions call keeps its type.
  auto module = func->getParentOfType<ModuleOp>();
  if (module && !SymbolTable::symbolKnownUseEmpty(func, module))
    return llvm::Error::success();
  SmallVector<Type> results(func.getResultTypes());
  for (unsigned j = 0; j < results.size(); ++j) {
    Type type = staticResultType(func, j);
    if (!type || type == results[j] ||
        isa<TensorType>(type) != isa<TensorType>(results[j]))
      continue;
    results[j] = type;
    func.walk([&](func::ReturnOp ret) {
      Value value = ret.getOperand(j);
      if (auto cast = value.getDefiningOp<tensor::CastOp>())
        ret.setOperand(j, cast.getSource());
      else if (auto cast = value.getDefiningOp<memref::CastOp>())
        ret.setOperand(j, cast.getSource());
    });
  }
  func.setFunctionType(FunctionType::get(context, inputs, results));
  return llvm::Error::success();
}
