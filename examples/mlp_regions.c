/* The same regions from C: hwprof_begin / hwprof_end by name, hwprof_set_work for the
 * roofline. Run with HWPROF_OUTPUT=DIR. */
#include <stdio.h>
#include <stdlib.h>

#include <hwprof/regions.h>

int main(int argc, char** argv) {
  const int steps = argc > 1 ? atoi(argv[1]) : 50;
  enum { n = 1 << 16 };
  static float a[n], b[n], c[n];
  for (int i = 0; i < n; ++i) a[i] = b[i] = (float)i * 1e-3f;
  float sum = 0.0f;
  for (int step = 0; step < steps; ++step) {
    hwprof_begin("step");
    hwprof_begin("triad");
    hwprof_set_work("triad", 2.0 * n, 12.0 * n);
    for (int i = 0; i < n; ++i) c[i] = a[i] + 0.5f * b[i];
    hwprof_end("triad");
    hwprof_begin("reduce");
    hwprof_set_work("reduce", 1.0 * n, 4.0 * n);
    for (int i = 0; i < n; ++i) sum += c[i];
    hwprof_end("reduce");
    hwprof_end("step");
  }
  printf("%d steps, sum %g\n", steps, (double)sum);
  return hwprof_enabled() ? 0 : 0;
}
