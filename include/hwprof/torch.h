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

/* The same by id, for a caller that calls modules often (the Python package, docs/torch.md,
 * "Modules"): hwprof_torch_module_region registers a module's region once, with its parameters
 * (shared ones once; -1: not said), and returns its id (-1 while not observing);
 * hwprof_torch_module_enter(id) and hwprof_torch_module_exit() enter and leave it around each
 * call. A module entered inside a backward function is a forward recomputed for the backward
 * pass (activation checkpointing): its own row, "<module> (recompute)". */
HWPROF_API int hwprof_torch_module_region(const char* name, long long params);
HWPROF_API void hwprof_torch_module_enter(int module);
HWPROF_API void hwprof_torch_module_exit(void);

/* The end of a training step, said by the program (hwprof.torch.profile's step()): steps are
 * then the program's, no longer the optimizer's. */
HWPROF_API void hwprof_torch_step(void);
/* The program's module calls are observed (the Python package, from the start): what runs
 * before the first module call is its setup, one row. */
HWPROF_API void hwprof_torch_modules_observed(void);
/* What ran until now was setup (building the model): later ops are rows of their own. */
HWPROF_API void hwprof_torch_setup_over(void);
/* The op calls observed so far (0 when none, or not observing; -1 when it cannot be said). */
HWPROF_API long long hwprof_torch_observed_ops(void);

#ifdef __cplusplus
}
#endif

#endif
