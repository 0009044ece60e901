//===- PassEnums.cpp - the string tables of the pass enums ----------------===//

#include "conv3d/Transforms/PassEnums.h"

#include "llvm/ADT/StringSwitch.h"

#include "conv3d/Transforms/PassEnums.cpp.inc"
