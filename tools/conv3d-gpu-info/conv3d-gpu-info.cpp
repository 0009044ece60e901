//===- conv3d-gpu-info.cpp - what the CUDA runtime sees -------------------===//
//
// Prints the device the project's CUDA runtime would use (CONV3D_CUDA_DEVICE
// chooses), or why there is none, and exits 0 or 1. With --symbols it also
// lists the driver functions the loaded libcuda lacks.
//
//===----------------------------------------------------------------------===//

#include "conv3d/Runtime/CudaDriver.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;
using namespace mlir::conv3d;

static cl::OptionCategory infoCategory("conv3d-gpu-info options");
static cl::opt<bool> jsonOutput("json", cl::desc("Print one JSON object"),
                                cl::cat(infoCategory));
static cl::opt<bool>
    symbols("symbols",
            cl::desc("Also check that libcuda.so.1 exports every driver "
                     "function the runtime uses"),
            cl::cat(infoCategory));

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(infoCategory);
  cl::ParseCommandLineOptions(
      argc, argv,
      "conv3d-gpu-info: the GPU the conv3d CUDA runtime finds\n\n"
      "Exits 0 with the device's properties, or 1 with the reason there is "
      "no usable driver or device. CONV3D_CUDA_DEVICE selects the device.\n");

  std::vector<std::string> missing;
  if (symbols) {
    Expected<std::vector<std::string>> found =
        CudaDriver::findMissingSymbols("libcuda.so.1");
    if (!found) {
      WithColor::error(errs(), "conv3d-gpu-info")
          << toString(found.takeError()) << "\n";
      return 1;
    }
    missing = std::move(*found);
  }

  Expected<CudaDriver &> driver = CudaDriver::get();
  Expected<DeviceInfo> info =
      driver ? driver->deviceInfo() : Expected<DeviceInfo>(driver.takeError());
  if (!info) {
    std::string message = toString(info.takeError());
    if (jsonOutput)
      outs() << formatv("{0}\n", json::Value(json::Object{{"error", message}}));
    else
      WithColor::error(errs(), "conv3d-gpu-info") << message << "\n";
    return 1;
  }

  if (jsonOutput) {
    json::Object object{
        {"ordinal", info->ordinal},
        {"name", info->name},
        {"chip", info->chip()},
        {"computeCapability", formatv("{0}.{1}", info->ccMajor, info->ccMinor)},
        {"multiprocessors", info->multiprocessors},
        {"maxSharedMemoryPerBlockOptin", info->maxSharedMemoryPerBlockOptin},
        {"totalMemory", int64_t(info->totalMemory)},
        {"driverVersion", info->driverVersion}};
    if (symbols)
      object["missingSymbols"] = json::Array(missing);
    outs() << formatv("{0:2}\n", json::Value(std::move(object)));
    return 0;
  }
  outs() << "device " << info->ordinal << ": " << info->name << "\n"
         << "  chip:                       " << info->chip() << "\n"
         << "  compute capability:         " << info->ccMajor << "."
         << info->ccMinor << "\n"
         << "  multiprocessors:            " << info->multiprocessors << "\n"
         << "  shared memory/block, opt-in: "
         << info->maxSharedMemoryPerBlockOptin << " bytes\n"
         << "  memory:                     "
         << format("%.2f", double(info->totalMemory) / double(1ull << 30))
         << " GiB\n"
         << "  driver API version:         " << info->driverVersion << "\n";
  if (symbols) {
    if (missing.empty())
      outs() << "  driver symbols:             all present\n";
    for (const std::string &name : missing)
      outs() << "  missing driver symbol:      " << name << "\n";
  }
  return 0;
}
