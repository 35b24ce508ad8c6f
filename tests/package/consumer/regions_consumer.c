/* The C API of the installed hwprof, built with `cc` and `pkg-config hwprof-regions`. */
#include <stdio.h>

#include <hwprof/regions.h>

int main(void) {
  enum { n = 1 << 14 };
  static float x[n], y[n];
  for (int i = 0; i < n; ++i) x[i] = (float)i;
  for (int step = 0; step < 10; ++step) {
    hwprof_begin("c_step");
    hwprof_begin("c_scale");
    hwprof_set_work("c_scale", 1.0 * n, 8.0 * n);
    for (int i = 0; i < n; ++i) y[i] = 0.5f * x[i];
    hwprof_end("c_scale");
    hwprof_end("c_step");
  }
  printf("C regions consumer: y[2] = %g, enabled %d\n", (double)y[2], hwprof_enabled());
  return 0;
}
