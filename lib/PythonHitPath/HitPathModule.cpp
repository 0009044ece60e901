//===- HitPathModule.cpp - conv3d.conv3d's PyTorch hit path in C ---------===//
//
// The Python extension module `_conv3d_hit`: the hit path of conv3d.conv3d
// on PyTorch tensors (python/conv3d/_hit.py, `_torch_conv3d`) with its
// interpreter work moved to C. Host time per call is what the Python
// package is judged on (issue 10: under 15 us on a cached kernel); on the
// GPU machine a third of a hit was bytecode, ctypes and struct packing
// around the signature, the allocation and the launch.
//
// What stays in Python is passed to init() as callables, so that every
// check and message has one implementation: the miss (_hit._miss, which
// runs the general route's checks and stores the entry), layout steps
// (_hit._torch_with_steps, _hit._torch_parameters), out= overlap
// (_hit._check_out), misaligned addresses (_hit._check_addresses, which
// raises) and failures (_hit._failed). An entry is the tuple _hit._entry
// makes: (plan, steps, handle, alignment, empty, stream, extents).
//
// The signature is this module's own tuple (torch_signature); _hit.py uses
// it for the entries it stores when the module is loaded, so a miss and a
// later hit agree. No object is keyed by identity.
//
// Built against the limited API of Python 3.11 (`.abi3.so`), so one build
// loads into 3.11 and later interpreters (Debian's 3.11, the GPU machine's
// 3.12). It does not link libConv3d.so: init() is given the address of
// conv3d_run_packed from the library the package has loaded.
//
//===----------------------------------------------------------------------===//

#define Py_LIMITED_API 0x030B0000
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "conv3d/CAPI/conv3d.h"

#include <cstdint>
#include <cstring>

namespace {

/// What init() was given; strong references held for the process.
struct State {
  PyObject *miss = nullptr;           // _hit.MISS
  PyObject *signatures = nullptr;     // _hit.signatures (a dict)
  PyObject *missEntry = nullptr;      // _hit._torch_miss(signature, *call)
  PyObject *withSteps = nullptr;      // _hit._torch_with_steps
  PyObject *parameters = nullptr;     // _hit._torch_parameters
  PyObject *checkOut = nullptr;       // _hit._check_out
  PyObject *checkAddresses = nullptr; // _hit._check_addresses
  PyObject *failed = nullptr;         // _hit._failed
  PyObject *argumentsKey = nullptr;   // _plan._arguments_key
  int (*runPacked)(const conv3d_run_args *) = nullptr;
  // Interned attribute names.
  PyObject *dtype = nullptr, *layout = nullptr, *device = nullptr,
           *shape = nullptr, *stride = nullptr, *dataPtr = nullptr;
};

State state;

/// A new reference to the tuple (type, dtype, layout, device, shape,
/// stride()) of `t`, as _hit._torch_signature builds it; null with a Python
/// error set.
PyObject *operandSignature(PyObject *t) {
  PyObject *items[6] = {nullptr};
  items[0] = reinterpret_cast<PyObject *>(Py_TYPE(t));
  Py_INCREF(items[0]);
  PyObject *result = nullptr;
  if ((items[1] = PyObject_GetAttr(t, state.dtype)) &&
      (items[2] = PyObject_GetAttr(t, state.layout)) &&
      (items[3] = PyObject_GetAttr(t, state.device)) &&
      (items[4] = PyObject_GetAttr(t, state.shape)) &&
      (items[5] = PyObject_CallMethodObjArgs(t, state.stride, nullptr))) {
    if ((result = PyTuple_New(6))) {
      for (int i = 0; i < 6; ++i)
        PyTuple_SetItem(result, i, items[i]); // steals
      return result;
    }
  }
  for (PyObject *item : items)
    Py_XDECREF(item);
  return nullptr;
}

/// operandSignature, or a new reference to None for an absent operand.
PyObject *optionalSignature(PyObject *t) {
  if (t == Py_None) {
    Py_INCREF(Py_None);
    return Py_None;
  }
  return operandSignature(t);
}

bool isExactInt(PyObject *o) { return Py_TYPE(o) == &PyLong_Type; }

/// The call's signature (a new reference) from the arguments of
/// conv3d.conv3d: input, weight, bias, stride, padding, dilation, groups,
/// activation, residual, out, target. Null with AttributeError,
/// RuntimeError (stride() of a non-strided tensor) or TypeError set.
PyObject *signatureOf(PyObject *const *a) {
  PyObject *input = a[0], *weight = a[1], *bias = a[2];
  PyObject *stride = a[3], *padding = a[4], *dilation = a[5], *groups = a[6];
  PyObject *residual = a[8], *out = a[9];
  PyObject *items[7] = {nullptr};
  // The arguments: as given when all four are plain ints (the common case),
  // otherwise _arguments_key's normal form, which tells 1, True and 1.0
  // apart.
  if (isExactInt(stride) && isExactInt(padding) && isExactInt(dilation) &&
      isExactInt(groups))
    items[5] = PyTuple_Pack(4, stride, padding, dilation, groups);
  else
    items[5] = PyObject_CallFunctionObjArgs(state.argumentsKey, stride, padding,
                                            dilation, groups, nullptr);
  PyObject *result = nullptr;
  if (items[5] && (items[0] = operandSignature(input)) &&
      (items[1] = operandSignature(weight)) &&
      (items[2] = optionalSignature(bias)) &&
      (items[3] = optionalSignature(residual)) &&
      (items[4] = optionalSignature(out))) {
    // (input, weight, bias, residual, out, arguments, activation, target)
    result = PyTuple_New(8);
    if (result) {
      for (int i = 0; i < 6; ++i)
        PyTuple_SetItem(result, i, items[i]);
      Py_INCREF(a[7]);
      PyTuple_SetItem(result, 6, a[7]);
      Py_INCREF(a[10]);
      PyTuple_SetItem(result, 7, a[10]);
      return result;
    }
  }
  for (PyObject *item : items)
    Py_XDECREF(item);
  return nullptr;
}

constexpr Py_ssize_t callArity = 11;

/// Whether `function` may run with `n` arguments (init() was called, the
/// call's arity); false with a Python error set.
bool callable(const char *function, Py_ssize_t n) {
  if (!state.runPacked) {
    PyErr_Format(PyExc_RuntimeError, "_conv3d_hit.%s before init()", function);
    return false;
  }
  if (n == callArity)
    return true;
  PyErr_Format(PyExc_TypeError, "%s takes %d arguments, got %zd", function,
               int(callArity), n);
  return false;
}

/// torch_signature(input, weight, bias, stride, padding, dilation, groups,
/// activation, residual, out, target): the signature a call is stored and
/// found under.
PyObject *torchSignature(PyObject *, PyObject *const *args, Py_ssize_t n) {
  if (!callable("torch_signature", n))
    return nullptr;
  return signatureOf(args);
}

/// An integer address (data_ptr(), the stream) as uintptr_t; false with a
/// Python error set.
bool toAddress(PyObject *value, uintptr_t &address) {
  address = uintptr_t(PyLong_AsUnsignedLongLong(value));
  return !(address == uintptr_t(-1) && PyErr_Occurred());
}

/// t.data_ptr() of an operand (0 for None); false with an error set.
bool dataPtr(PyObject *t, uintptr_t &address) {
  if (t == Py_None) {
    address = 0;
    return true;
  }
  PyObject *value = PyObject_CallMethodObjArgs(t, state.dataPtr, nullptr);
  if (!value)
    return false;
  bool ok = toAddress(value, address);
  Py_DECREF(value);
  return ok;
}

/// The launch of a found entry whose steps are done (see torchConv3d);
/// `weight` and `bias` may be converted copies. Returns the result (a new
/// reference) or null with an error set.
PyObject *launch(PyObject *entry, PyObject *input, PyObject *weight,
                 PyObject *bias, PyObject *residual, PyObject *out) {
  PyObject *handleObj = PyTuple_GetItem(entry, 2);
  PyObject *alignmentObj = PyTuple_GetItem(entry, 3);
  PyObject *empty = PyTuple_GetItem(entry, 4);
  PyObject *stream = PyTuple_GetItem(entry, 5);
  PyObject *extents = PyTuple_GetItem(entry, 6);
  if (!extents)
    return nullptr;
  uintptr_t handle, x, w, b, r;
  if (!toAddress(handleObj, handle))
    return nullptr;
  long long alignment = PyLong_AsLongLong(alignmentObj);
  if (alignment <= 0) {
    if (!PyErr_Occurred())
      PyErr_SetString(PyExc_RuntimeError, "an entry's alignment is not > 0");
    return nullptr;
  }
  if (!dataPtr(input, x) || !dataPtr(weight, w) || !dataPtr(bias, b) ||
      !dataPtr(residual, r))
    return nullptr;
  PyObject *result;
  uintptr_t o, allocated = 0;
  if (out == Py_None) {
    if (!(result = PyObject_CallNoArgs(empty)))
      return nullptr;
    if (!dataPtr(result, o)) {
      Py_DECREF(result);
      return nullptr;
    }
    allocated = o;
  } else {
    result = out;
    Py_INCREF(result);
    PyObject *checked = nullptr;
    if (dataPtr(out, o)) {
      PyObject *args =
          Py_BuildValue("(KOOKKKK)", (unsigned long long)o, alignmentObj,
                        extents, (unsigned long long)x, (unsigned long long)w,
                        (unsigned long long)b, (unsigned long long)r);
      if (args) {
        checked = PyObject_CallObject(state.checkOut, args);
        Py_DECREF(args);
      }
    }
    if (!checked) {
      Py_DECREF(result);
      return nullptr;
    }
    Py_DECREF(checked);
  }
  uintptr_t a = uintptr_t(alignment);
  if ((x | w | r | o) % a || b % 4) {
    // _check_addresses raises, naming the first misaligned operand.
    PyObject *raised = PyObject_CallFunction(
        state.checkAddresses, "OKKKKK", alignmentObj, (unsigned long long)x,
        (unsigned long long)w, (unsigned long long)b, (unsigned long long)r,
        (unsigned long long)allocated);
    Py_DECREF(result);
    Py_XDECREF(raised);
    if (!PyErr_Occurred())
      PyErr_SetString(PyExc_RuntimeError, "misaligned operand not reported");
    return nullptr;
  }
  // The stream: the entry's query (None on the CPU target); 0, the legacy
  // default stream, is passed as CU_STREAM_LEGACY (1), as _hit.py does.
  uintptr_t streamAddress = 0;
  if (stream != Py_None) {
    PyObject *value = PyObject_CallNoArgs(stream);
    if (!value || !toAddress(value, streamAddress)) {
      Py_XDECREF(value);
      Py_DECREF(result);
      return nullptr;
    }
    Py_DECREF(value);
    if (!streamAddress)
      streamAddress = 1;
  }
  conv3d_run_args run;
  std::memset(&run, 0, sizeof(run));
  run.conv = reinterpret_cast<const conv3d_conv *>(handle);
  run.input = reinterpret_cast<const void *>(x);
  run.filter = reinterpret_cast<const void *>(w);
  run.bias = reinterpret_cast<const void *>(b);
  run.residual = reinterpret_cast<const void *>(r);
  run.output = reinterpret_cast<void *>(o);
  run.stream = reinterpret_cast<void *>(streamAddress);
  if (state.runPacked(&run)) {
    Py_DECREF(result);
    PyObject *error = PyObject_CallNoArgs(state.failed);
    if (error) {
      PyErr_SetObject(reinterpret_cast<PyObject *>(Py_TYPE(error)), error);
      Py_DECREF(error);
    }
    return nullptr;
  }
  return result;
}

/// torch_conv3d(input, weight, bias, stride, padding, dilation, groups,
/// activation, residual, out, target): conv3d.conv3d on PyTorch tensors,
/// as _hit._torch_conv3d; MISS when the general route must take the call.
PyObject *torchConv3d(PyObject *, PyObject *const *args, Py_ssize_t n) {
  if (!callable("torch_conv3d", n))
    return nullptr;
  PyObject *signature = signatureOf(args);
  if (!signature) {
    // An operand that is not a tensor, stride() of a sparse tensor, an
    // unhashable argument: the general route names the problem.
    if (PyErr_ExceptionMatches(PyExc_AttributeError) ||
        PyErr_ExceptionMatches(PyExc_RuntimeError) ||
        PyErr_ExceptionMatches(PyExc_TypeError)) {
      PyErr_Clear();
      Py_INCREF(state.miss);
      return state.miss;
    }
    return nullptr;
  }
  // Borrowed from the dict, which may drop it (clear_cache) while Python
  // code runs below: hold a reference.
  PyObject *entry = PyDict_GetItemWithError(state.signatures, signature);
  if (entry) {
    Py_INCREF(entry);
  } else if (PyErr_Occurred()) {
    Py_DECREF(signature);
    if (!PyErr_ExceptionMatches(PyExc_TypeError))
      return nullptr;
    PyErr_Clear();
    Py_INCREF(state.miss);
    return state.miss;
  } else {
    // The miss: _hit._torch_miss(signature, *call) returns the stored entry,
    // or None when the general route must take the call.
    PyObject *call = PyTuple_New(1 + callArity);
    if (!call) {
      Py_DECREF(signature);
      return nullptr;
    }
    PyTuple_SetItem(call, 0, signature); // steals
    for (Py_ssize_t i = 0; i < callArity; ++i) {
      Py_INCREF(args[i]);
      PyTuple_SetItem(call, 1 + i, args[i]);
    }
    entry = PyObject_CallObject(state.missEntry, call);
    Py_DECREF(call);
    if (!entry)
      return nullptr;
    if (entry == Py_None) {
      Py_DECREF(entry);
      Py_INCREF(state.miss);
      return state.miss;
    }
    signature = nullptr;
  }
  Py_XDECREF(signature);
  PyObject *input = args[0], *weight = args[1], *bias = args[2];
  PyObject *residual = args[8], *out = args[9];
  PyObject *result = nullptr;
  long steps = PyLong_AsLong(PyTuple_GetItem(entry, 1));
  if (steps == -1 && PyErr_Occurred()) {
    Py_DECREF(entry);
    return nullptr;
  }
  if (steps == 2) {
    // Copies of the input, residual or output: _torch_with_steps.
    result = PyObject_CallFunctionObjArgs(state.withSteps,
                                          PyTuple_GetItem(entry, 0), input,
                                          weight, bias, residual, out, nullptr);
  } else if (steps == 1) {
    // Converted weight or bias copies, reused while the tensors are
    // unchanged.
    PyObject *converted = PyObject_CallFunctionObjArgs(
        state.parameters, PyTuple_GetItem(entry, 0), weight, bias, nullptr);
    if (converted) {
      PyObject *w = PyTuple_GetItem(converted, 0);
      PyObject *b = PyTuple_GetItem(converted, 1);
      if (w && b)
        result = launch(entry, input, w, b, residual, out);
      Py_DECREF(converted);
    }
  } else {
    result = launch(entry, input, weight, bias, residual, out);
  }
  Py_DECREF(entry);
  return result;
}

/// init(miss, signatures, torch_miss, torch_with_steps,
/// torch_parameters, check_out, check_addresses, failed, arguments_key,
/// run_packed_address).
PyObject *init(PyObject *, PyObject *args) {
  State s;
  unsigned long long run = 0;
  if (!PyArg_ParseTuple(args, "OO!OOOOOOOK:init", &s.miss, &PyDict_Type,
                        &s.signatures, &s.missEntry, &s.withSteps,
                        &s.parameters, &s.checkOut, &s.checkAddresses,
                        &s.failed, &s.argumentsKey, &run))
    return nullptr;
  if (!run) {
    PyErr_SetString(PyExc_ValueError, "init: null conv3d_run_packed");
    return nullptr;
  }
  PyObject *callables[] = {s.missEntry,   s.withSteps,      s.parameters,
                           s.checkOut,    s.checkAddresses, s.failed,
                           s.argumentsKey};
  for (PyObject *c : callables)
    if (!PyCallable_Check(c)) {
      PyErr_SetString(PyExc_TypeError, "init: expected a callable");
      return nullptr;
    }
  s.runPacked = reinterpret_cast<int (*)(const conv3d_run_args *)>(run);
  s.dtype = PyUnicode_InternFromString("dtype");
  s.layout = PyUnicode_InternFromString("layout");
  s.device = PyUnicode_InternFromString("device");
  s.shape = PyUnicode_InternFromString("shape");
  s.stride = PyUnicode_InternFromString("stride");
  s.dataPtr = PyUnicode_InternFromString("data_ptr");
  if (!s.dtype || !s.layout || !s.device || !s.shape || !s.stride || !s.dataPtr)
    return nullptr;
  PyObject *held[] = {s.miss,           s.signatures, s.missEntry,
                      s.withSteps,      s.parameters, s.checkOut,
                      s.checkAddresses, s.failed,     s.argumentsKey};
  for (PyObject *o : held)
    Py_INCREF(o);
  // A second init() (a reloaded package) replaces the first; the old
  // references are kept alive: a call may still be running on them.
  state = s;
  Py_RETURN_NONE;
}

PyMethodDef methods[] = {
    {"init", init, METH_VARARGS,
     "init(miss, signatures, torch_miss, torch_with_steps, "
     "torch_parameters, check_out, check_addresses, failed, arguments_key, "
     "run_packed_address)"},
    {"torch_signature", reinterpret_cast<PyCFunction>(torchSignature),
     METH_FASTCALL,
     "torch_signature(input, weight, bias, stride, padding, dilation, "
     "groups, activation, residual, out, target)"},
    {"torch_conv3d", reinterpret_cast<PyCFunction>(torchConv3d), METH_FASTCALL,
     "torch_conv3d(input, weight, bias, stride, padding, dilation, groups, "
     "activation, residual, out, target)"},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef moduleDef = {PyModuleDef_HEAD_INIT,
                         "_conv3d_hit",
                         "conv3d.conv3d's PyTorch hit path in C (see "
                         "python/conv3d/_hit.py).",
                         -1,
                         methods,
                         nullptr,
                         nullptr,
                         nullptr,
                         nullptr};

} // namespace

PyMODINIT_FUNC PyInit__conv3d_hit(void) {
  PyObject *module = PyModule_Create(&moduleDef);
  if (module && PyModule_AddIntConstant(module, "PROTOCOL", 1) < 0) {
    Py_DECREF(module);
    return nullptr;
  }
  return module;
}
