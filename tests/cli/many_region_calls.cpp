// A program that calls one region many times and then ends with an exit status of its own:
// what the regions library must leave alone at exit, whatever writing the reports costs.
//   many_region_calls CALLS STATUS [ADDRESS_SPACE_BYTES]
// With ADDRESS_SPACE_BYTES it limits its own address space first (as `prlimit --as` does). It
// kills itself with SIGALRM after 60 s, so that a hang at exit is a failure, not a stuck test.
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include <hwprof/regions.hpp>

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s CALLS STATUS [ADDRESS_SPACE_BYTES]\n", argv[0]);
    return 2;
  }
  ::alarm(60);
  const long calls = std::strtol(argv[1], nullptr, 10);
  const int status = static_cast<int>(std::strtol(argv[2], nullptr, 10));
  if (argc > 3) {
    const rlimit limit{std::strtoull(argv[3], nullptr, 10), std::strtoull(argv[3], nullptr, 10)};
    if (::setrlimit(RLIMIT_AS, &limit) != 0) {
      std::perror("setrlimit(RLIMIT_AS)");
      return 2;
    }
  }
  volatile double sum = 0.0;
  for (long i = 0; i < calls; ++i) {
    HWPROF_SCOPE_WORK("step", 2.0, 16.0);
    sum = sum + static_cast<double>(i);
  }
  std::printf("%ld calls\n", calls);
  return status;
}
