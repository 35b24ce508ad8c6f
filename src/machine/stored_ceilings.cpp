#include "machine/stored_ceilings.hpp"

#include <utility>
#include "common/stages.hpp"

namespace hwprof::machine {
namespace {

Result<Ceilings> from_file(const std::string& file) {
  auto machine = load_machine(file);
  if (!machine) return machine.error();
  if (auto why = foreign_cpu(machine->cpu, describe_this_cpu())) {
    return Error{file + ": measured on another CPU (" + *why + "); its ceilings do not describe this machine. Run `hwprof calibrate` here."};
  }
  return Ceilings{std::move(*machine), file};
}

}  // namespace

Result<Ceilings> ceilings_from_store(const std::string& stored, const std::string& host, const MachineCpu& here) {
  auto machine = load_stored_machine(host, here);
  if (!machine) return machine.error();
  return Ceilings{std::move(*machine), stored};
}

Result<Ceilings> find_stored_ceilings(const std::string& file) {
  if (!file.empty()) return from_file(file);
  const std::string host = this_host_name();
  const MachineCpu here = describe_this_cpu();
  return ceilings_from_store(machine_store_path(host, here), host, here);
}

}  // namespace hwprof::machine
