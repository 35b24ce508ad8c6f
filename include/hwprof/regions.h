/* Regions from C, Fortran (bind(C)) and Python (ctypes): the default session of
 * <hwprof/regions.hpp>, by name. The environment controls it the same way (HWPROF_OUTPUT,
 * HWPROF_BACKEND, HWPROF_EVENTS, HWPROF_GROUP, HWPROF_DISABLE).
 *
 *   hwprof_begin("fc1");
 *   hwprof_set_work("fc1", 2.0 * m * n * k, 4.0 * (m * k + k * n + m * n));
 *   sgemm(...);
 *   hwprof_end("fc1");
 *
 * Names are looked up by their text (a per-thread cache makes a repeated name cheap); the
 * string need only live during the call. Link with `pkg-config --libs hwprof-regions`. */
#ifndef HWPROF_REGIONS_H
#define HWPROF_REGIONS_H

#include "hwprof/export.hpp"

#ifdef __cplusplus
extern "C" {
#endif

HWPROF_API void hwprof_begin(const char* name);
/* Ends the innermost region called `name` on this thread (regions opened inside it and not
 * ended are counted as unmatched). */
HWPROF_API void hwprof_end(const char* name);
/* The region's work per call: its floating-point operations and bytes moved (for the roofline). */
HWPROF_API void hwprof_set_work(const char* name, double flops, double bytes);
/* Writes the reports now into `dir`; 0 on success, -1 on error (hwprof_last_error says why). */
HWPROF_API int hwprof_write(const char* dir);
/* Writes HWPROF_OUTPUT's reports now, as they would be written at exit (the same folder, by
 * a forked writer, HWPROF_SAMPLE's sampling stopped first), and not again at exit: for a
 * program about to end without its at-exit handlers (killed by the signal it is handling, a
 * Python KeyboardInterrupt). Returns 0 when written; 1 when there is nothing to write (no
 * HWPROF_OUTPUT, regions disabled, no region entered yet, or written already); -1 when the
 * writing failed (said on stderr); 128 + N when signal N (SIGINT, SIGTERM, SIGHUP) arrived
 * while writing: the writer was stopped, the files it finished are whole, nothing
 * half-written is left, and the signal is not delivered (the caller ends as it was ending). */
HWPROF_API int hwprof_write_output(void);
/* The last error of hwprof_write on this thread, or "" (valid until the next call). */
HWPROF_API const char* hwprof_last_error(void);
/* 1 when regions are measured, 0 with HWPROF_DISABLE=1. */
HWPROF_API int hwprof_enabled(void);
/* Forgets every sample and sum measured so far, keeping the regions (after warm-up steps).
 * Call it while no region is open on any thread. */
HWPROF_API void hwprof_reset(void);
/* Where the report module is (HWPROF_OUTPUT's reports); set from the include flags below, or by
 * a program that links the archive and knows better (docs/regions.md). */
HWPROF_API void hwprof_set_report_module(const char* path);

#ifdef __cplusplus
}
#endif

/* CMake's hwprof::regions_static (and a static hwprof::hwprof) define where the installed
 * report module is, and it is registered before main, so that a program linked with the
 * archive finds it wherever the package was installed; the shared libhwprof_regions.so finds
 * it beside itself (docs/regions.md, "Where the report module is loaded from"). */
#if defined(HWPROF_REPORT_MODULE_PATH) && (defined(__GNUC__) || defined(__clang__))
__attribute__((constructor, used)) static void hwprof_register_report_module_(void) {
  hwprof_set_report_module(HWPROF_REPORT_MODULE_PATH);
}
#endif

#endif
