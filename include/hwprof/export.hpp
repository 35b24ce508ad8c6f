/* Which of hwprof's symbols a shared libhwprof exports: the public API only. The library is
 * built with hidden visibility; the public headers mark their declarations with HWPROF_API, or
 * wrap them in HWPROF_API_BEGIN / HWPROF_API_END. Valid C and C++. */
#ifndef HWPROF_EXPORT_HPP
#define HWPROF_EXPORT_HPP

#if defined(__GNUC__) || defined(__clang__)
#define HWPROF_API __attribute__((visibility("default")))
#define HWPROF_API_BEGIN _Pragma("GCC visibility push(default)")
#define HWPROF_API_END _Pragma("GCC visibility pop")
#else
#define HWPROF_API
#define HWPROF_API_BEGIN
#define HWPROF_API_END
#endif

#endif
