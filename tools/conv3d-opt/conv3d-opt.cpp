//===- conv3d-opt.cpp - the conv3d optimizer driver -----------------------===//
//
// mlir-opt with the conv3d dialect and passes: every upstream dialect and
// pass is available too, so whole pipelines can be written and tested here.
//
// Errors name their problem without the generic IR of the operation they are
// about (upstream's default), which the engine and conv3d-run leave out too:
// CONV3D_DUMP_IR_ON_ERROR=1, or upstream's --mlir-print-op-on-diagnostic,
// brings it back.
//
//===----------------------------------------------------------------------===//

#include "conv3d/Registration.h"
#include "conv3d/Support/IRDumps.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

static constexpr llvm::StringLiteral kPrintOpFlag =
    "mlir-print-op-on-diagnostic";

/// Whether the command line sets upstream's flag itself.
static bool setsPrintOpFlag(llvm::ArrayRef<char *> args) {
  return llvm::any_of(args, [](const char *arg) {
    return llvm::StringRef(arg).ltrim('-').starts_with(kPrintOpFlag);
  });
}

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::conv3d::registerAllDialects(registry);
  mlir::conv3d::registerAllPasses();

  llvm::SmallVector<char *> args(argv, argv + argc);
  bool dumpIR = mlir::conv3d::dumpIROnErrorRequested();
  bool ownDefault = !dumpIR && !setsPrintOpFlag(args);
  std::string noDump = ("--" + kPrintOpFlag + "=false").str();
  if (ownDefault)
    args.insert(args.begin() + 1, noDump.data());
  llvm::LogicalResult result =
      mlir::MlirOptMain(int(args.size()), args.data(),
                        "conv3d optimizer driver\n\nSet "
                        "CONV3D_DUMP_IR_ON_ERROR=1 to see the IR of the "
                        "operation each error is about.\n",
                        registry);
  if (llvm::failed(result) && ownDefault)
    llvm::errs() << "conv3d-opt: " << mlir::conv3d::dumpIROnErrorHint() << "\n";
  return mlir::asMainReturnCode(result);
}
