//===- EmulatedDriver.cpp - the emulated device, contexts, streams --------===//
//
// One device, its primary context, and streams and events that are plain
// handles: every operation completes before its call returns.
//
// Environment:
//   CONV3D_EMULATOR_ARCH       the compute capability to report: 90 (default,
//                              an H100-like sm_90 device) or 100 (sm_100)
//   CONV3D_EMULATOR_SMS        multiprocessors to report (default 4): the
//                              persistent kernels launch this many CTAs
//   CONV3D_EMULATOR_MEMORY_MB  the arena's size (default 8192, sparse)
//   CONV3D_EMULATOR_PYTHON     the interpreter (default: the one the project
//                              was configured with), which needs NumPy
//   CONV3D_EMULATOR_PATH       the folder holding the ptxemu package
//                              (default: share/conv3d/ptx-emulator beside
//                              this library's lib/ folder)
//   CONV3D_EMULATOR_KEEP       keep the PTX and launch files (their folder
//                              is printed)
//   CONV3D_EMULATOR_HAZARDS    warn: report hazards without failing launches
//   CONV3D_EMULATOR_VERBOSE    print each launch's status and time
//
//===----------------------------------------------------------------------===//

#include "EmulatedDevice.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <dlfcn.h>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

#ifndef CONV3D_EMULATOR_DEFAULT_PYTHON
#define CONV3D_EMULATOR_DEFAULT_PYTHON "python3"
#endif

using namespace conv3d_emulator;

namespace {
Device *theDevice = nullptr;
thread_local std::string lastMessage;
int contextToken = 0;

int envInt(const char *name, int fallback) {
  const char *v = std::getenv(name);
  if (!v || !*v)
    return fallback;
  return std::atoi(v);
}

/// The folder of this library, from dladdr.
std::string libraryDir() {
  Dl_info info;
  if (!dladdr(reinterpret_cast<void *>(&libraryDir), &info) || !info.dli_fname)
    return ".";
  std::string path = info.dli_fname;
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

/// Removes the work folder and the files this process made in it.
void removeWorkDir() {
  if (!theDevice || theDevice->keepFiles || theDevice->workDir.empty())
    return;
  if (DIR *dir = opendir(theDevice->workDir.c_str())) {
    while (dirent *entry = readdir(dir)) {
      std::string name = entry->d_name;
      if (name.rfind("module-", 0) == 0 || name.rfind("launch-", 0) == 0 ||
          name.rfind("result-", 0) == 0)
        std::remove((theDevice->workDir + "/" + name).c_str());
    }
    closedir(dir);
  }
  rmdir(theDevice->workDir.c_str());
}
} // namespace

Device *conv3d_emulator::device() { return theDevice; }

void conv3d_emulator::setLastError(const std::string &message) {
  lastMessage = message;
}

const char *conv3d_emulator::lastError() { return lastMessage.c_str(); }

CUresult conv3d_emulator::fail(CUresult result, const std::string &message) {
  lastMessage = message;
  return result;
}

extern "C" {

CUresult cuGetErrorName(CUresult error, const char **name) {
  switch (error) {
  case CUDA_SUCCESS:
    *name = "CUDA_SUCCESS";
    break;
  case CUDA_ERROR_INVALID_VALUE:
    *name = "CUDA_ERROR_INVALID_VALUE";
    break;
  case CUDA_ERROR_OUT_OF_MEMORY:
    *name = "CUDA_ERROR_OUT_OF_MEMORY";
    break;
  case CUDA_ERROR_NOT_INITIALIZED:
    *name = "CUDA_ERROR_NOT_INITIALIZED";
    break;
  case CUDA_ERROR_INVALID_IMAGE:
    *name = "CUDA_ERROR_INVALID_IMAGE";
    break;
  case CUDA_ERROR_INVALID_HANDLE:
    *name = "CUDA_ERROR_INVALID_HANDLE";
    break;
  case CUDA_ERROR_NOT_FOUND:
    *name = "CUDA_ERROR_NOT_FOUND";
    break;
  case CUDA_ERROR_LAUNCH_FAILED:
    *name = "CUDA_ERROR_LAUNCH_FAILED";
    break;
  case CUDA_ERROR_NOT_SUPPORTED:
    *name = "CUDA_ERROR_NOT_SUPPORTED";
    break;
  default:
    *name = "CUDA_ERROR_UNKNOWN";
  }
  return CUDA_SUCCESS;
}

CUresult cuGetErrorString(CUresult error, const char **text) {
  *text = error == CUDA_SUCCESS ? "no error" : lastError();
  return CUDA_SUCCESS;
}

CUresult cuInit(unsigned int) {
  if (theDevice)
    return CUDA_SUCCESS;
  auto *dev = new Device;
  int arch = envInt("CONV3D_EMULATOR_ARCH", 90);
  if (arch != 80 && arch != 90 && arch != 100) {
    delete dev;
    return fail(CUDA_ERROR_INVALID_VALUE,
                "CONV3D_EMULATOR_ARCH must be 80, 90 or 100");
  }
  dev->ccMajor = arch / 10;
  dev->ccMinor = arch % 10;
  dev->multiprocessors = envInt("CONV3D_EMULATOR_SMS", 4);
  if (dev->multiprocessors < 1)
    dev->multiprocessors = 1;
  dev->name = "conv3d PTX emulator (sm_" + std::to_string(arch) + ")";
  std::string error;
  size_t megabytes = size_t(envInt("CONV3D_EMULATOR_MEMORY_MB", 8192));
  if (!dev->arena.open(megabytes << 20, error)) {
    delete dev;
    return fail(CUDA_ERROR_OUT_OF_MEMORY,
                "the emulated device's memory: " + error);
  }
  const char *python = std::getenv("CONV3D_EMULATOR_PYTHON");
  dev->python = python && *python ? python : CONV3D_EMULATOR_DEFAULT_PYTHON;
  const char *path = std::getenv("CONV3D_EMULATOR_PATH");
  dev->emulatorDir = path && *path
                         ? std::string(path)
                         : libraryDir() + "/../share/conv3d/ptx-emulator";
  const char *keep = std::getenv("CONV3D_EMULATOR_KEEP");
  dev->keepFiles = keep && *keep;
  const char *tmp = std::getenv("TMPDIR");
  std::string pattern =
      std::string(tmp && *tmp ? tmp : "/tmp") + "/conv3d-emulator-XXXXXX";
  if (!mkdtemp(pattern.data())) {
    delete dev;
    return fail(CUDA_ERROR_INVALID_VALUE,
                "cannot make a folder for the emulator's files under " +
                    pattern);
  }
  dev->workDir = pattern;
  if (dev->keepFiles)
    std::fprintf(stderr, "conv3d emulator: files in %s\n",
                 dev->workDir.c_str());
  theDevice = dev;
  std::atexit(removeWorkDir);
  return CUDA_SUCCESS;
}

CUresult cuDriverGetVersion(int *version) {
  *version = 13000;
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetCount(int *count) {
  *count = theDevice ? 1 : 0;
  return CUDA_SUCCESS;
}

CUresult cuDeviceGet(CUdevice *device, int ordinal) {
  if (ordinal != 0)
    return fail(CUDA_ERROR_INVALID_VALUE, "the emulator has one device");
  *device = 0;
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetName(char *name, int length, CUdevice) {
  if (!theDevice)
    return fail(CUDA_ERROR_NOT_INITIALIZED, "cuInit was not called");
  std::snprintf(name, size_t(length), "%s", theDevice->name.c_str());
  return CUDA_SUCCESS;
}

CUresult cuDeviceTotalMem(size_t *bytes, CUdevice) {
  *bytes = theDevice ? theDevice->arena.size() : 0;
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetAttribute(int *value, CUdevice_attribute attribute,
                              CUdevice) {
  if (!theDevice)
    return fail(CUDA_ERROR_NOT_INITIALIZED, "cuInit was not called");
  switch (attribute) {
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
    *value = theDevice->ccMajor;
    break;
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
    *value = theDevice->ccMinor;
    break;
  case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
    *value = theDevice->multiprocessors;
    break;
  case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN:
    *value = theDevice->ccMajor >= 9 ? 232448 : 166912;
    break;
  case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
    *value = 1024;
    break;
  case CU_DEVICE_ATTRIBUTE_WARP_SIZE:
    *value = 32;
    break;
  default:
    *value = 0; // memory pools and the rest: not supported
  }
  return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRetain(CUcontext *context, CUdevice) {
  *context = reinterpret_cast<CUcontext>(&contextToken);
  return CUDA_SUCCESS;
}

namespace {
thread_local CUcontext currentContext = nullptr;
}

CUresult cuCtxGetCurrent(CUcontext *context) {
  *context = currentContext;
  return CUDA_SUCCESS;
}
CUresult cuCtxSetCurrent(CUcontext context) {
  currentContext = context;
  return CUDA_SUCCESS;
}
CUresult cuCtxPushCurrent(CUcontext context) {
  currentContext = context;
  return CUDA_SUCCESS;
}
CUresult cuCtxPopCurrent(CUcontext *context) {
  if (context)
    *context = currentContext;
  currentContext = reinterpret_cast<CUcontext>(&contextToken);
  return CUDA_SUCCESS;
}
CUresult cuCtxSynchronize() { return CUDA_SUCCESS; }

// Streams: every operation has completed when its call returns.
CUresult cuStreamCreate(CUstream *stream, unsigned int) {
  *stream = reinterpret_cast<CUstream>(new int(0));
  return CUDA_SUCCESS;
}
CUresult cuStreamDestroy(CUstream stream) {
  delete reinterpret_cast<int *>(stream);
  return CUDA_SUCCESS;
}
CUresult cuStreamSynchronize(CUstream) { return CUDA_SUCCESS; }
CUresult cuStreamWaitEvent(CUstream, CUevent, unsigned int) {
  return CUDA_SUCCESS;
}

// Events record the host time (what an emulated run's timing shows).
using Clock = std::chrono::steady_clock;
CUresult cuEventCreate(CUevent *event, unsigned int) {
  *event = reinterpret_cast<CUevent>(new Clock::time_point(Clock::now()));
  return CUDA_SUCCESS;
}
CUresult cuEventDestroy(CUevent event) {
  delete reinterpret_cast<Clock::time_point *>(event);
  return CUDA_SUCCESS;
}
CUresult cuEventRecord(CUevent event, CUstream) {
  *reinterpret_cast<Clock::time_point *>(event) = Clock::now();
  return CUDA_SUCCESS;
}
CUresult cuEventSynchronize(CUevent) { return CUDA_SUCCESS; }
CUresult cuEventQuery(CUevent) { return CUDA_SUCCESS; }
CUresult cuEventElapsedTime(float *ms, CUevent start, CUevent end) {
  auto *a = reinterpret_cast<Clock::time_point *>(start);
  auto *b = reinterpret_cast<Clock::time_point *>(end);
  *ms = std::chrono::duration<float, std::milli>(*b - *a).count();
  return CUDA_SUCCESS;
}

} // extern "C"
