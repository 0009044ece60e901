//===- EmulatedLaunch.cpp - modules and launches of the emulated driver ---===//
//
// A module is PTX text (the emulator runs PTX; a cubin is refused with a
// message naming gpu-binary-format=isa). A launch writes a description of
// itself (the module's PTX file, the kernel, the extents, each parameter's
// bytes, the arena and its live allocations) and runs the emulator on it,
// `python3 -m ptxemu.launch LAUNCH.json RESULT.json`, synchronously: the
// emulated device has one stream, and every launch has finished when the
// call returns. Hazards the emulator reports fail the launch
// (CUDA_ERROR_LAUNCH_FAILED, the report in the error string) unless
// $CONV3D_EMULATOR_HAZARDS=warn.
//
//===----------------------------------------------------------------------===//

#include "EmulatedDevice.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <spawn.h>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

using namespace conv3d_emulator;

namespace {

std::string readFile(const std::string &path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/// The sizes of `name`'s parameters, from its .entry declaration.
bool parseParams(const std::string &ptx, const std::string &name,
                 std::vector<size_t> &sizes) {
  std::string key = ".entry " + name;
  size_t at = 0;
  while ((at = ptx.find(key, at)) != std::string::npos) {
    size_t after = at + key.size();
    if (after < ptx.size() &&
        (ptx[after] == '(' || ptx[after] == ' ' || ptx[after] == '\n' ||
         ptx[after] == '\t' || ptx[after] == '\r'))
      break;
    at = after;
  }
  if (at == std::string::npos)
    return false;
  size_t open = ptx.find('(', at), close = ptx.find(')', open);
  if (open == std::string::npos || close == std::string::npos)
    return false;
  std::string list = ptx.substr(open + 1, close - open - 1);
  std::stringstream items(list);
  std::string item;
  while (std::getline(items, item, ',')) {
    if (item.find(".param") == std::string::npos)
      continue;
    size_t elem = 0;
    for (auto [type, bytes] : {std::pair{".b8", 1},
                               {".u8", 1},
                               {".s8", 1},
                               {".b16", 2},
                               {".u16", 2},
                               {".s16", 2},
                               {".f16", 2},
                               {".b32", 4},
                               {".u32", 4},
                               {".s32", 4},
                               {".f32", 4},
                               {".b64", 8},
                               {".u64", 8},
                               {".s64", 8},
                               {".f64", 8}})
      if (item.find(std::string(type) + " ") != std::string::npos ||
          item.find(std::string(type) + "\t") != std::string::npos)
        elem = size_t(bytes);
    if (!elem)
      return false;
    size_t count = 1;
    size_t bracket = item.find('[');
    if (bracket != std::string::npos)
      count = size_t(std::strtoul(item.c_str() + bracket + 1, nullptr, 10));
    sizes.push_back(elem * count);
  }
  return true;
}

std::string hex(const void *data, size_t n) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  const auto *p = static_cast<const unsigned char *>(data);
  for (size_t i = 0; i < n; ++i) {
    out += digits[p[i] >> 4];
    out += digits[p[i] & 15];
  }
  return out;
}

/// The value of "key": "..." or "key": [...] in a flat JSON object (the
/// emulator's result); empty if absent.
std::string jsonField(const std::string &json, const std::string &key) {
  size_t at = json.find("\"" + key + "\"");
  if (at == std::string::npos)
    return "";
  at = json.find(':', at) + 1;
  while (at < json.size() && json[at] == ' ')
    ++at;
  if (json[at] == '"') {
    std::string out;
    for (size_t i = at + 1; i < json.size() && json[i] != '"'; ++i) {
      if (json[i] == '\\' && i + 1 < json.size()) {
        char c = json[++i];
        out += c == 'n' ? '\n' : c;
        continue;
      }
      out += json[i];
    }
    return out;
  }
  if (json[at] == '[') {
    int depth = 0;
    size_t i = at;
    for (; i < json.size(); ++i) {
      if (json[i] == '[')
        ++depth;
      else if (json[i] == ']' && --depth == 0)
        break;
    }
    return json.substr(at, i - at + 1);
  }
  size_t end = json.find_first_of(",}", at);
  return json.substr(at, end - at);
}

/// The JSON array of strings `array` as lines.
std::string listLines(const std::string &array) {
  std::string out, cur;
  bool in = false;
  for (size_t i = 0; i < array.size(); ++i) {
    char c = array[i];
    if (!in) {
      if (c == '"')
        in = true;
      continue;
    }
    if (c == '\\' && i + 1 < array.size()) {
      cur += array[++i];
      continue;
    }
    if (c == '"') {
      in = false;
      out += "\n  " + cur;
      cur.clear();
      continue;
    }
    cur += c;
  }
  return out;
}

int runEmulator(Device &dev, const std::string &launchPath,
                const std::string &resultPath) {
  std::string pythonPath = "PYTHONPATH=" + dev.emulatorDir;
  if (const char *old = std::getenv("PYTHONPATH"))
    pythonPath += std::string(":") + old;
  std::vector<std::string> env;
  for (char **e = environ; *e; ++e)
    if (std::strncmp(*e, "PYTHONPATH=", 11) != 0)
      env.push_back(*e);
  env.push_back(pythonPath);
  std::vector<char *> envp;
  for (std::string &s : env)
    envp.push_back(s.data());
  envp.push_back(nullptr);
  std::string module = "ptxemu.launch";
  std::vector<char *> argv = {dev.python.data(),
                              const_cast<char *>("-m"),
                              module.data(),
                              const_cast<char *>(launchPath.c_str()),
                              const_cast<char *>(resultPath.c_str()),
                              nullptr};
  pid_t pid;
  if (posix_spawnp(&pid, dev.python.c_str(), nullptr, nullptr, argv.data(),
                   envp.data()) != 0)
    return -1;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR)
      return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

} // namespace

CUresult conv3d_emulator::launch(Function *function, const unsigned grid[3],
                                 const unsigned block[3],
                                 const unsigned cluster[3],
                                 unsigned sharedBytes, void **params) {
  Device *dev = device();
  if (!dev)
    return fail(CUDA_ERROR_NOT_INITIALIZED, "cuInit was not called");
  if (!function)
    return fail(CUDA_ERROR_INVALID_HANDLE, "no function");
  if (int(sharedBytes) > function->maxDynamicShared)
    return fail(CUDA_ERROR_INVALID_VALUE,
                std::to_string(sharedBytes) +
                    " bytes of dynamic shared memory above the function's "
                    "limit of " +
                    std::to_string(function->maxDynamicShared) +
                    " (cuFuncSetAttribute raises it)");
  std::string launchPath, resultPath;
  std::ostringstream json;
  {
    std::lock_guard<std::mutex> lock(dev->mutex);
    int n = dev->launches++;
    launchPath = dev->workDir + "/launch-" + std::to_string(n) + ".json";
    resultPath = dev->workDir + "/result-" + std::to_string(n) + ".json";
    json << "{\"ptx\": \"" << function->module->path << "\", \"kernel\": \""
         << function->name << "\", \"grid\": [" << grid[0] << ", " << grid[1]
         << ", " << grid[2] << "], \"block\": [" << block[0] << ", " << block[1]
         << ", " << block[2] << "], \"cluster\": [" << cluster[0] << ", "
         << cluster[1] << ", " << cluster[2] << "], \"smem\": " << sharedBytes
         << ", \"arch\": " << dev->ccMajor * 10 + dev->ccMinor
         << ", \"params\": [";
    for (size_t i = 0; i < function->paramSizes.size(); ++i)
      json << (i ? ", " : "") << "\"" << hex(params[i], function->paramSizes[i])
           << "\"";
    json << "], \"arena\": {\"fd\": " << dev->arena.fd()
         << ", \"base\": " << dev->arena.base()
         << ", \"size\": " << dev->arena.size() << "}, \"allocations\": [";
    bool first = true;
    for (auto [at, bytes] : dev->arena.live()) {
      json << (first ? "" : ", ") << "[" << at << ", " << bytes << "]";
      first = false;
    }
    json << "], \"options\": {";
    if (const char *model = std::getenv("CONV3D_EMULATOR_MMA_MODEL"))
      json << "\"mma_model\": \"" << model << "\"";
    json << "}}\n";
  }
  {
    std::ofstream out(launchPath);
    out << json.str();
  }
  int status = runEmulator(*dev, launchPath, resultPath);
  std::string result = readFile(resultPath);
  if (!dev->keepFiles) {
    std::remove(launchPath.c_str());
    std::remove(resultPath.c_str());
  }
  if (status != 0 || result.empty())
    return fail(CUDA_ERROR_LAUNCH_FAILED,
                "the PTX emulator (" + dev->python + " -m ptxemu.launch, " +
                    dev->emulatorDir + ") failed on kernel " + function->name +
                    " (exit status " + std::to_string(status) + ")");
  std::string state = jsonField(result, "status");
  std::string where = "kernel " + function->name + " (grid " +
                      std::to_string(grid[0]) + ", block " +
                      std::to_string(block[0]) + ")";
  if (const char *verbose = std::getenv("CONV3D_EMULATOR_VERBOSE");
      verbose && *verbose)
    std::fprintf(stderr, "conv3d emulator: %s: %s in %s s%s\n", where.c_str(),
                 state.c_str(), jsonField(result, "seconds").c_str(),
                 listLines(jsonField(result, "approximate")).c_str());
  if (state == "ok")
    return CUDA_SUCCESS;
  if (state == "hazards") {
    std::string report = "the PTX emulator found hazards in " + where + ":" +
                         listLines(jsonField(result, "hazards"));
    const char *mode = std::getenv("CONV3D_EMULATOR_HAZARDS");
    if (mode && std::string(mode) == "warn") {
      std::fprintf(stderr, "conv3d emulator: warning: %s\n", report.c_str());
      return CUDA_SUCCESS;
    }
    return fail(CUDA_ERROR_LAUNCH_FAILED, report);
  }
  std::string before = listLines(jsonField(result, "hazards"));
  return fail(CUDA_ERROR_LAUNCH_FAILED,
              "the PTX emulator stopped in " + where + ": " +
                  jsonField(result, "message") +
                  (before.empty() ? "" : "\nhazards found before:" + before));
}

//===----------------------------------------------------------------------===//
// Modules and functions
//===----------------------------------------------------------------------===//

extern "C" {

CUresult cuModuleLoadData(CUmodule *module, const void *image) {
  Device *dev = device();
  if (!dev)
    return fail(CUDA_ERROR_NOT_INITIALIZED, "cuInit was not called");
  const char *text = static_cast<const char *>(image);
  if (!text ||
      std::memcmp(text,
                  "\x7f"
                  "ELF",
                  4) == 0 ||
      std::strstr(text, ".entry") == nullptr)
    return fail(CUDA_ERROR_INVALID_IMAGE,
                "the emulated device runs PTX, not cubins or fatbins "
                "(compile with gpu-binary-format=isa; conv3d-run --emulate "
                "does)");
  auto *m = new Module;
  m->ptx = text;
  {
    std::lock_guard<std::mutex> lock(dev->mutex);
    static int count = 0;
    m->path = dev->workDir + "/module-" + std::to_string(count++) + ".ptx";
  }
  std::ofstream(m->path) << m->ptx;
  *module = reinterpret_cast<CUmodule>(m);
  return CUDA_SUCCESS;
}

CUresult cuModuleLoadDataEx(CUmodule *module, const void *image,
                            unsigned int count, CUjit_option *options,
                            void **values) {
  // Clear the JIT's log buffers the caller handed in.
  for (unsigned i = 0; i < count; ++i)
    if (options[i] == CU_JIT_ERROR_LOG_BUFFER && values[i])
      static_cast<char *>(values[i])[0] = 0;
  return cuModuleLoadData(module, image);
}

CUresult cuModuleUnload(CUmodule module) {
  delete reinterpret_cast<Module *>(module);
  return CUDA_SUCCESS;
}

CUresult cuModuleGetFunction(CUfunction *function, CUmodule module,
                             const char *name) {
  auto *m = reinterpret_cast<Module *>(module);
  if (!m)
    return fail(CUDA_ERROR_INVALID_HANDLE, "no module");
  auto f = std::make_unique<Function>();
  f->module = m;
  f->name = name;
  if (!parseParams(m->ptx, name, f->paramSizes))
    return fail(CUDA_ERROR_NOT_FOUND,
                std::string("no .entry ") + name + " in the module");
  *function = reinterpret_cast<CUfunction>(f.get());
  m->functions.push_back(std::move(f));
  return CUDA_SUCCESS;
}

CUresult cuFuncSetAttribute(CUfunction function, CUfunction_attribute attr,
                            int value) {
  auto *f = reinterpret_cast<Function *>(function);
  if (!f)
    return fail(CUDA_ERROR_INVALID_HANDLE, "no function");
  if (attr == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) {
    if (value > 232448)
      return fail(CUDA_ERROR_INVALID_VALUE,
                  "more dynamic shared memory than the device's 232448");
    f->maxDynamicShared = value;
  }
  return CUDA_SUCCESS;
}

CUresult cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy,
                        unsigned int gz, unsigned int bx, unsigned int by,
                        unsigned int bz, unsigned int sharedBytes, CUstream,
                        void **params, void **extra) {
  if (extra)
    return fail(CUDA_ERROR_NOT_SUPPORTED, "'extra' launch parameters");
  unsigned grid[3] = {gx, gy, gz}, block[3] = {bx, by, bz},
           cluster[3] = {1, 1, 1};
  return conv3d_emulator::launch(reinterpret_cast<Function *>(f), grid, block,
                                 cluster, sharedBytes, params);
}

CUresult cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f,
                          void **params, void **extra) {
  if (extra)
    return fail(CUDA_ERROR_NOT_SUPPORTED, "'extra' launch parameters");
  unsigned grid[3] = {config->gridDimX, config->gridDimY, config->gridDimZ};
  unsigned block[3] = {config->blockDimX, config->blockDimY, config->blockDimZ};
  unsigned cluster[3] = {1, 1, 1};
  for (unsigned i = 0; i < config->numAttrs; ++i)
    if (config->attrs[i].id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION) {
      cluster[0] = config->attrs[i].value.clusterDim.x;
      cluster[1] = config->attrs[i].value.clusterDim.y;
      cluster[2] = config->attrs[i].value.clusterDim.z;
    }
  return conv3d_emulator::launch(reinterpret_cast<Function *>(f), grid, block,
                                 cluster, config->sharedMemBytes, params);
}

} // extern "C"
