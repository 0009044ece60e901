// conv3d.conv3d's PyTorch hit path against PyTorch's own C++ API (the
// optional "torch-native" path, python/conv3d/_torch_native.py).
//
// Built on the user's machine against the PyTorch installed there
// (`python -m conv3d --build-torch-native`, torch.utils.cpp_extension), so
// it reads tensor metadata from at::Tensor, allocates the output with
// at::empty_strided and asks c10 for the current stream without a Python
// call each: on the H100 machine those Python calls were most of a hit's
// host time (the signature's 15 attribute reads, new_empty_strided), which
// the pure-Python and the limited-API C hit paths (_hit.py,
// lib/PythonHitPath) must make.
//
// Only the common call is taken here: plain tensors (torch.Tensor or
// nn.Parameter), int or int-tuple arguments, no out=, a plan without layout
// steps or with the weight's and bias's conversions only (their cached
// copies come from `parameters`, the package's _torch_parameters).
// Everything else goes to `fallback` (the package's hit function, which
// runs every check); a key it has not seen asks `describe` (the package's
// entry for the call, made by its miss) once and remembers the answer,
// eligible or not. A launch that fails is handed to the fallback too,
// which raises the package's error.

#include <torch/extension.h>

#ifdef CONV3D_WITH_CUDA
#include <c10/cuda/CUDAStream.h>
#endif

#include <cstring>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace {

// conv3d_run of include/conv3d/CAPI/conv3d.h (the package passes its
// address, as it passes the others to ctypes).
using RunFn = int (*)(const void *conv, const void *input, const void *filter,
                      const void *bias, const void *residual, float amax,
                      void *output, void *stream, char *error,
                      size_t errorSize);

struct Entry {
  bool eligible = false;
  uintptr_t handle = 0;
  uint64_t alignment = 1;
  std::vector<int64_t> sizes, strides;
  bool gpu = false;
  int64_t deviceIndex = 0;
  // The package's plan: it owns the compiled convolution `handle` names.
  py::object plan;
  // Whether the weight or bias is converted (their copies come from
  // `parameters`).
  bool convertParameters = false;
};

struct State {
  RunFn run = nullptr;
  py::object fallback, describe, parameters, tensorType, parameterType;
  // Shared: a call holds its entry while Python code it calls may let
  // another thread clear the map (conv3d.clear_cache); the entry's plan
  // keeps the compiled convolution alive until the launch is enqueued.
  std::unordered_map<std::string, std::shared_ptr<const Entry>> entries;
};

State &state() {
  static State *s = new State(); // never destroyed: no teardown order issues
  return *s;
}

void append(std::string &key, int64_t value) {
  key.append(reinterpret_cast<const char *>(&value), sizeof(value));
}

/// Appends a tensor's metadata (or a marker for None); false for an operand
/// this path does not take (not a plain tensor, not strided).
bool appendTensor(std::string &key, PyObject *object, at::Tensor *tensor) {
  if (object == Py_None) {
    append(key, -1);
    return true;
  }
  PyObject *type = reinterpret_cast<PyObject *>(Py_TYPE(object));
  int typeTag;
  if (type == state().tensorType.ptr())
    typeTag = 0;
  else if (type == state().parameterType.ptr())
    typeTag = 1;
  else
    return false;
  const at::Tensor &t = THPVariable_Unpack(object);
  if (t.layout() != at::kStrided)
    return false;
  append(key, typeTag);
  append(key, int64_t(t.scalar_type()));
  append(key, int64_t(t.device().type()));
  append(key, int64_t(t.device().index()));
  append(key, t.dim());
  for (int64_t s : t.sizes())
    append(key, s);
  for (int64_t s : t.strides())
    append(key, s);
  *tensor = t;
  return true;
}

/// An int argument or a tuple of ints, tagged (1 and (1, 1, 1) differ, as
/// in the package's _arguments_key); false for anything else (bool, float,
/// list, str: the package's route keys and checks those).
bool appendArgument(std::string &key, PyObject *value) {
  if (Py_TYPE(value) == &PyLong_Type) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(value, &overflow);
    if (overflow)
      return false;
    append(key, 0);
    append(key, v);
    return true;
  }
  if (Py_TYPE(value) != &PyTuple_Type)
    return false;
  Py_ssize_t n = PyTuple_GET_SIZE(value);
  append(key, 1);
  append(key, n);
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject *item = PyTuple_GET_ITEM(value, i);
    if (Py_TYPE(item) != &PyLong_Type)
      return false;
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(item, &overflow);
    if (overflow)
      return false;
    append(key, v);
  }
  return true;
}

/// None or an exact str (the activation, the target).
bool appendName(std::string &key, PyObject *value) {
  if (value == Py_None) {
    append(key, -1);
    return true;
  }
  if (Py_TYPE(value) != &PyUnicode_Type)
    return false;
  Py_ssize_t size = 0;
  const char *text = PyUnicode_AsUTF8AndSize(value, &size);
  if (!text) {
    PyErr_Clear();
    return false;
  }
  append(key, size);
  key.append(text, size_t(size));
  return true;
}

py::object callFallback(py::args &args) { return state().fallback(*args); }

/// conv3d(input, weight, bias, stride, padding, dilation, groups,
/// activation, residual, out, target), conv3d.conv3d's hit function.
py::object conv3d(py::args args) {
  State &s = state();
  if (!s.run)
    throw std::runtime_error("conv3d_torch_native: init() was not called");
  if (args.size() != 11)
    throw py::type_error("conv3d takes 11 arguments, got " +
                         std::to_string(args.size()));
  PyObject *a[11];
  for (size_t i = 0; i < 11; ++i)
    a[i] = args[i].ptr();
  // out= is the package's (it checks overlap and layout).
  if (a[9] != Py_None)
    return callFallback(args);
  std::string key;
  key.reserve(512);
  at::Tensor input, weight, bias, residual;
  if (a[0] == Py_None || a[1] == Py_None || !appendTensor(key, a[0], &input) ||
      !appendTensor(key, a[1], &weight) || !appendTensor(key, a[2], &bias) ||
      !appendTensor(key, a[8], &residual) || !appendArgument(key, a[3]) ||
      !appendArgument(key, a[4]) || !appendArgument(key, a[5]) ||
      !appendArgument(key, a[6]) || !appendName(key, a[7]) ||
      !appendName(key, a[10]))
    return callFallback(args);
  auto found = s.entries.find(key);
  if (found == s.entries.end()) {
    // describe(*call): None (not for this path) or (handle, alignment,
    // output sizes, output strides, gpu, device index, plan, whether the
    // weight or bias is converted).
    py::object described = s.describe(*args);
    auto made = std::make_shared<Entry>();
    Entry &entry = *made;
    if (!described.is_none()) {
      auto t = described.cast<py::tuple>();
      entry.eligible = true;
      entry.handle = t[0].cast<uintptr_t>();
      entry.alignment = t[1].cast<uint64_t>();
      entry.sizes = t[2].cast<std::vector<int64_t>>();
      entry.strides = t[3].cast<std::vector<int64_t>>();
      entry.gpu = t[4].cast<bool>();
      entry.deviceIndex = t[5].cast<int64_t>();
      entry.plan = t[6];
      entry.convertParameters = t[7].cast<bool>();
      if (!entry.alignment)
        entry.alignment = 1;
    }
    found = s.entries.emplace(std::move(key), std::move(made)).first;
  }
  std::shared_ptr<const Entry> held = found->second;
  const Entry &entry = *held;
  if (!entry.eligible)
    return callFallback(args);
  // The converted weight and bias copies (made once per tensor state); the
  // tuple holds them until the launch is enqueued.
  py::object converted;
  if (entry.convertParameters) {
    converted = s.parameters(entry.plan, args[1], args[2]);
    auto pair = converted.cast<py::tuple>();
    weight = THPVariable_Unpack(pair[0].ptr());
    bias = pair[1].is_none() ? at::Tensor() : THPVariable_Unpack(pair[1].ptr());
  }
  auto address = [](const at::Tensor &t) {
    return t.defined() ? reinterpret_cast<uintptr_t>(t.data_ptr()) : 0;
  };
  uintptr_t x = address(input), w = address(weight), b = address(bias),
            r = address(residual);
  // Misaligned operands: the package names the first one.
  if ((x | w | r) % entry.alignment || b % 4)
    return callFallback(args);
  at::Tensor output =
      at::empty_strided(entry.sizes, entry.strides, input.options());
  uintptr_t o = address(output);
  if (o % entry.alignment)
    return callFallback(args);
  void *stream = nullptr;
  if (entry.gpu) {
#ifdef CONV3D_WITH_CUDA
    stream =
        c10::cuda::getCurrentCUDAStream(c10::DeviceIndex(entry.deviceIndex))
            .stream();
    // PyTorch's default stream is CUDA's legacy default stream (handle 0),
    // which the runtime takes as CU_STREAM_LEGACY, as the package passes it.
    if (!stream)
      stream = reinterpret_cast<void *>(uintptr_t(1));
#else
    return callFallback(args);
#endif
  }
  if (s.run(
          reinterpret_cast<const void *>(entry.handle),
          reinterpret_cast<const void *>(x), reinterpret_cast<const void *>(w),
          reinterpret_cast<const void *>(b), reinterpret_cast<const void *>(r),
          0.0f, reinterpret_cast<void *>(o), stream, nullptr, 0))
    return callFallback(args); // raises the package's error
  return py::reinterpret_steal<py::object>(THPVariable_Wrap(std::move(output)));
}

void init(uintptr_t run, py::object fallback, py::object describe,
          py::object parameters, py::object tensorType,
          py::object parameterType) {
  State &s = state();
  if (!run)
    throw py::value_error("init: null conv3d_run");
  s.run = reinterpret_cast<RunFn>(run);
  s.fallback = std::move(fallback);
  s.describe = std::move(describe);
  s.parameters = std::move(parameters);
  s.tensorType = std::move(tensorType);
  s.parameterType = std::move(parameterType);
  s.entries.clear();
}

void clear() { state().entries.clear(); }

} // namespace

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.doc() = "conv3d.conv3d's PyTorch hit path in C++ (see _torch_native.py)";
  m.attr("PROTOCOL") = 1;
  m.def("init", &init);
  m.def("clear", &clear, "forget every key (conv3d.clear_cache)");
  m.def("conv3d", &conv3d);
}
