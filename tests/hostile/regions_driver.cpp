// A user's program for the hostile suite's `regions` category: it links only hwprof::regions
// and does one hostile thing to it, chosen on the command line, then exits with status 7 (so
// a case can tell the program's own exit status from one hwprof would have made).
//
//   hwprof_hostile_regions calls N            N calls of one region
//   hwprof_hostile_regions names N            N distinct names, each called twice
//   hwprof_hostile_regions work FLOPS BYTES   set_work with these values (strtod: nan, inf, 1e308)
//   hwprof_hostile_regions unmatched          ends without begins, and an end of another name
//   hwprof_hostile_regions fork               a child forked without exec, both with regions
//   hwprof_hostile_regions fork-exec          a child that execs this program (`calls 50`)
//   hwprof_hostile_regions spawn N            N children started with posix_spawn (`calls 50`)
//   hwprof_hostile_regions children N         N forked children at once, all exiting together
//   hwprof_hostile_regions threads N          N threads, each with regions, joined
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "hwprof/regions.h"

extern char** environ;

namespace {

constexpr int kExit = 7;

void calls(const char* name, long n) {
  for (long i = 0; i < n; ++i) {
    hwprof_begin(name);
    hwprof_end(name);
  }
}

void names(long n) {
  char name[64];
  for (int round = 0; round < 2; ++round) {
    for (long i = 0; i < n; ++i) {
      std::snprintf(name, sizeof name, "module%ld.aten::op", i);
      hwprof_begin(name);
      hwprof_end(name);
    }
  }
}

int wait_all(const std::vector<pid_t>& children) {
  int failed = 0;
  for (pid_t c : children) {
    int status = 0;
    if (waitpid(c, &status, 0) != c || !WIFEXITED(status) || WEXITSTATUS(status) != kExit) ++failed;
  }
  if (failed > 0) std::fprintf(stderr, "driver: %d child(ren) did not exit with %d\n", failed, kExit);
  return failed;
}

std::vector<pid_t> forked(long n) {
  std::vector<pid_t> children;
  for (long i = 0; i < n; ++i) {
    const pid_t pid = fork();
    if (pid == 0) {
      calls("child", 20);
      std::exit(kExit);  // exit(), not _exit(): the child's at-exit handlers run, as in real programs
    }
    if (pid > 0) children.push_back(pid);
  }
  return children;
}

std::vector<pid_t> spawned(const char* self, long n, bool use_spawn) {
  std::vector<pid_t> children;
  for (long i = 0; i < n; ++i) {
    char* args[] = {const_cast<char*>(self), const_cast<char*>("calls"), const_cast<char*>("50"), nullptr};
    pid_t pid = -1;
    if (use_spawn) {
      if (posix_spawn(&pid, self, nullptr, nullptr, args, environ) != 0) pid = -1;
    } else if ((pid = fork()) == 0) {
      execv(self, args);
      _exit(127);
    }
    if (pid > 0) children.push_back(pid);
  }
  return children;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string what = argc > 1 ? argv[1] : "";
  const long n = argc > 2 ? std::strtol(argv[2], nullptr, 10) : 1;
  hwprof_begin("main");
  if (what == "calls") {
    calls("step", n);
  } else if (what == "names") {
    names(n);
  } else if (what == "work") {
    hwprof_begin("work");
    hwprof_set_work("work", std::strtod(argv[2], nullptr), argc > 3 ? std::strtod(argv[3], nullptr) : 1.0);
    hwprof_end("work");
  } else if (what == "unmatched") {
    hwprof_end("never-begun");
    hwprof_begin("outer");
    hwprof_end("other-name");
    hwprof_end("outer");
  } else if (what == "fork" || what == "children") {
    calls("parent", 10);
    if (wait_all(forked(what == "fork" ? 1 : n)) != 0) return 1;
  } else if (what == "fork-exec" || what == "spawn") {
    calls("parent", 10);
    if (wait_all(spawned(argv[0], what == "spawn" ? n : 1, what == "spawn")) != 0) return 1;
  } else if (what == "threads") {
    std::vector<std::thread> threads;
    for (long i = 0; i < n; ++i) threads.emplace_back([] { calls("worker", 100); });
    for (std::thread& t : threads) t.join();
  } else {
    std::fprintf(stderr, "driver: unknown scenario '%s'\n", what.c_str());
    return 2;
  }
  hwprof_end("main");
  return kExit;
}
