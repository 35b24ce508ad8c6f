/* hwprof::torch (libhwprof-torch.so): the PyTorch observer, registered when the library is
 * loaded and the environment asks for output, a backend or counters (HWPROF_OUTPUT,
 * HWPROF_BACKEND, HWPROF_EVENTS, HWPROF_GROUP; docs/torch.md). Nothing needs calling: linking
 * the library is enough. For C, C++ and Python (ctypes). */
#ifndef HWPROF_TORCH_H
#define HWPROF_TORCH_H

#include "hwprof/export.hpp"

#ifdef __cplusplus
extern "C" {
#endif

/* 1 when the observer sees PyTorch's ops (asked for, regions not disabled, and libtorch took
 * the callback), else 0. */
HWPROF_API int hwprof_torch_observing(void);

/* A model's module, entered around its forward (the Python package's global forward hooks
 * call these): a region named `name` (its path, "ResNet.layer1.0.conv1"), shown as a module,
 * to which the backward of the ops it runs is attributed ("ResNet.layer1.0.conv1 (backward)").
 * Each begin is closed by one end on the same thread. Nothing while the observer is not
 * observing. */
HWPROF_API void hwprof_torch_module_begin(const char* name);
HWPROF_API void hwprof_torch_module_end(void);

#ifdef __cplusplus
}
#endif

#endif
