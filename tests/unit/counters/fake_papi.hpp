// A PAPI in miniature behind the PapiCalls seam (src/counters/papi_calls.hpp), so that the
// PAPI backend's code runs on machines whose PAPI cannot count (no PMU). It keeps the rules of
// PAPI 7.0 that the backend relies on: an event set must be created from PAPI_NULL, given a
// component before it is attached or multiplexed, emptied before it is destroyed; PAPI_start
// zeroes its counts; a multiplexed set reads counts PAPI has scaled. Everything else is what a
// test tells it: the events and components, the threads, the counts each thread makes, which
// call fails with which error, and the clock.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <sys/types.h>

#include <papi.h>

#include "common/stages.hpp"
#include "counters/papi_calls.hpp"

namespace hwprof::counters {

class FakePapi {
 public:
  static constexpr pid_t kCallingThread = 100;  // the tid of an event set attached to no thread
  static constexpr int kPerfEvent = 0;          // component indices
  static constexpr int kUncore = 1;
  static constexpr int kPowercap = 2;  // cannot attach or inherit

  struct Event {
    int code = 0;
    int component = kPerfEvent;
    std::string units;          // PAPI_event_info_t.units
    int query_error = PAPI_OK;  // PAPI_query_event's answer
    int add_error = PAPI_OK;    // PAPI_add_event's answer
  };

  struct Eventset {
    int component = -1;
    unsigned long attached = 0;  // tid; 0 for the calling thread
    int inherit = 0;
    bool multiplex = false;
    std::vector<int> codes;
    bool running = false;
    bool destroyed = false;
    int starts = 0;
    std::vector<long long> at_start;  // the thread's counts when PAPI_start zeroed the set's
  };

  // Installs itself as PAPI until destroyed (one at a time).
  FakePapi();
  ~FakePapi();
  FakePapi(const FakePapi&) = delete;
  FakePapi& operator=(const FakePapi&) = delete;

  // What PAPI answers.
  int library_init_answer = PAPI_VER_CURRENT;
  int multiplex_init_answer = PAPI_OK;
  int lib_version = PAPI_VERSION_NUMBER(7, 0, 1, 0);
  std::vector<PAPI_component_info_t> components;
  std::map<std::string, Event> events;  // by name
  std::map<pid_t, int> attach_errors;   // PAPI_attach's answer for a thread
  std::map<pid_t, int> start_errors;    // PAPI_start's answer for a set attached to a thread
  int inherit_error = PAPI_OK;
  int read_error = PAPI_OK;       // every PAPI_read's answer while set
  pid_t read_error_thread = 0;    // with read_error: only the set attached to this thread fails (0: all)
  long long read_cost = 0;        // what each PAPI_read itself adds to every event of the set it reads
  long long multiplex_scale = 1;  // a multiplexed set reads count × this (PAPI's enabled / running)

  // The machine beside PAPI.
  std::map<pid_t, std::vector<std::vector<pid_t>>> listings = {{0, {{kCallingThread}}}};  // per pid: each listing in turn, the last repeated
  std::set<pid_t> ended;                                                                  // threads that ended after they were listed
  bool hardware_pmu = true;
  std::uint64_t clock_ns = 1'000'000;

  // Thread `tid` counts `n` more of event `name`.
  void work(pid_t tid, const std::string& name, long long n) { counts_[{tid, events.at(name).code}] += n; }
  int code_of(const std::string& name) const { return events.at(name).code; }

  // What the backend did.
  std::map<std::string, int> calls;  // by PAPI function name
  unsigned long (*thread_id_function)() = nullptr;
  std::vector<Eventset> eventsets;  // by handle
  std::vector<std::string> order;   // the first call of each function, in order
  int live_eventsets() const;
  std::vector<const Eventset*> running_eventsets() const;

 private:
  friend struct FakePapiCalls;  // the functions of the table, in fake_papi.cpp
  void called(const char* name);
  Eventset* find(int handle);
  long long count(pid_t tid, int code) { return counts_[{tid, code}]; }
  pid_t thread_of(const Eventset& set) const { return set.attached == 0 ? kCallingThread : static_cast<pid_t>(set.attached); }

  std::map<std::pair<pid_t, int>, long long> counts_;
  std::map<pid_t, std::size_t> listing_calls_;
  bool initialised_ = false;
  ScopedPapiCalls scope_;  // last: PAPI is this fake from here on
};

}  // namespace hwprof::counters
