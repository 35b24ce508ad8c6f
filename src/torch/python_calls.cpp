// hwprof.torch._native: the Python package's module calls in C (docs/torch.md, "Modules").
// `wrap(Module, original, describe, region, enter, exit)` returns a method descriptor to set as
// torch.nn.Module.__call__: around each module call it enters the module's region
// (libhwprof-torch.so's hwprof_torch_module_enter, by address), calls the original __call__
// (which runs the module's own hooks and forward as before), and leaves the region whether the
// forward returned or raised. A module's region is looked up by its address, made on its first
// call from `describe(module)` -> (name, parameters), and forgotten when the module is freed (a
// weak reference's callback), so that a new module at the same address is named afresh.
//
// Costs a descriptor call, a hash lookup and the two region calls: no Python frame, no ctypes.
// Runs with the GIL held, which guards the table.
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <cstring>
#include <new>
#include <unordered_map>

namespace {

using RegionOf = int (*)(const char*, long long);
using Enter = void (*)(int);
using Exit = void (*)();

struct Known {
  int region = -1;
  PyObject* weak = nullptr;  // a weak reference to the module, whose callback forgets it; owned
};

struct State {
  PyObject* original = nullptr;  // the original Module.__call__; owned
  PyObject* describe = nullptr;  // module -> (name, parameters); owned
  RegionOf region_of = nullptr;
  Enter enter = nullptr;
  Exit exit = nullptr;
  std::unordered_map<const PyObject*, Known>* known = nullptr;
};
State state;

// The weak reference's callback: its `self` is the module's address (an int), its argument the
// dead reference.
PyObject* forget(PyObject* address, PyObject* weak) {
  const auto* module = static_cast<const PyObject*>(PyLong_AsVoidPtr(address));
  if (state.known != nullptr) {
    const auto it = state.known->find(module);
    if (it != state.known->end() && it->second.weak == weak) {
      Py_DECREF(it->second.weak);
      state.known->erase(it);
    }
  }
  Py_RETURN_NONE;
}
PyMethodDef forget_def = {"_forget", reinterpret_cast<PyCFunction>(forget), METH_O, nullptr};

// The module's region: known, or made now from describe(module). -2 with a Python error set.
int region_of(PyObject* module) {
  if (const auto it = state.known->find(module); it != state.known->end()) return it->second.region;
  PyObject* described = PyObject_CallOneArg(state.describe, module);
  if (described == nullptr) return -2;
  const char* name = nullptr;
  long long params = -1;
  if (!PyArg_ParseTuple(described, "sL", &name, &params)) {
    Py_DECREF(described);
    return -2;
  }
  const int region = state.region_of(name, params);
  Py_DECREF(described);
  // Remembered while the module lives; a module that takes no weak reference is looked up by
  // describe() at each call instead (no address is trusted past its owner's life).
  PyObject* address = PyLong_FromVoidPtr(module);
  PyObject* callback = address != nullptr ? PyCFunction_New(&forget_def, address) : nullptr;
  Py_XDECREF(address);
  PyObject* weak = callback != nullptr ? PyWeakref_NewRef(module, callback) : nullptr;
  Py_XDECREF(callback);
  if (weak == nullptr) {
    PyErr_Clear();
    return region;
  }
  try {
    (*state.known)[module] = Known{region, weak};
  } catch (const std::bad_alloc&) {
    Py_DECREF(weak);
  }
  return region;
}

// Module.__call__(self, *args, **kwargs): `args` holds the positional arguments, then the
// keyword arguments' values named by `kwnames`.
PyObject* module_call(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  const int region = region_of(self);
  if (region == -2) return nullptr;
  const Py_ssize_t total = nargs + (kwnames != nullptr ? PyTuple_GET_SIZE(kwnames) : 0);
  PyObject* small[8];
  PyObject** stack = total + 1 <= 8 ? small : static_cast<PyObject**>(PyMem_Malloc(static_cast<std::size_t>(total + 1) * sizeof(PyObject*)));
  if (stack == nullptr) return PyErr_NoMemory();
  stack[0] = self;
  if (total > 0) std::memcpy(stack + 1, args, static_cast<std::size_t>(total) * sizeof(PyObject*));
  state.enter(region);
  PyObject* result = PyObject_Vectorcall(state.original, stack, static_cast<std::size_t>(nargs + 1), kwnames);
  state.exit();
  if (stack != small) PyMem_Free(stack);
  return result;
}
PyMethodDef call_def = {"__call__", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(module_call)), METH_FASTCALL | METH_KEYWORDS,
                        "Calls the module inside its hwprof region (hwprof.torch)."};

void* address_of(PyObject* value) {
  void* p = PyLong_AsVoidPtr(value);
  if (p == nullptr && !PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "a null function address");
  return p;
}

PyObject* wrap(PyObject*, PyObject* args) {
  PyObject* module_type = nullptr;
  PyObject* original = nullptr;
  PyObject* describe = nullptr;
  PyObject* region_address = nullptr;
  PyObject* enter_address = nullptr;
  PyObject* exit_address = nullptr;
  if (!PyArg_ParseTuple(args, "O!OOOOO", &PyType_Type, &module_type, &original, &describe, &region_address, &enter_address, &exit_address)) {
    return nullptr;
  }
  if (state.original != nullptr) {
    PyErr_SetString(PyExc_RuntimeError, "hwprof.torch._native.wrap: Module.__call__ is wrapped already");
    return nullptr;
  }
  void* region = address_of(region_address);
  void* enter = region != nullptr ? address_of(enter_address) : nullptr;
  void* exit = enter != nullptr ? address_of(exit_address) : nullptr;
  if (exit == nullptr) return nullptr;
  try {
    state.known = new std::unordered_map<const PyObject*, Known>;
  } catch (const std::bad_alloc&) {
    return PyErr_NoMemory();
  }
  Py_INCREF(original);
  Py_INCREF(describe);
  state.original = original;
  state.describe = describe;
  state.region_of = reinterpret_cast<RegionOf>(region);
  state.enter = reinterpret_cast<Enter>(enter);
  state.exit = reinterpret_cast<Exit>(exit);
  return PyDescr_NewMethod(reinterpret_cast<PyTypeObject*>(module_type), &call_def);
}

PyMethodDef functions[] = {
    {"wrap", wrap, METH_VARARGS, "wrap(Module, original_call, describe, region, enter, exit) -> the __call__ to set on Module"},
    {nullptr, nullptr, 0, nullptr},
};

PyModuleDef module_def = {PyModuleDef_HEAD_INIT,
                          "_native",
                          "hwprof.torch's module calls in C (docs/torch.md, \"Modules\").",
                          -1,
                          functions,
                          nullptr,
                          nullptr,
                          nullptr,
                          nullptr};

}  // namespace

PyMODINIT_FUNC PyInit__native() {
  return PyModule_Create(&module_def);
}
