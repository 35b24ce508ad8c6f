#include <fmt/format.h>

#include "common/stages.hpp"
#include "placement/sample_attribution.hpp"
#include "report/sampling_outputs.hpp"

namespace hwprof::report {
namespace {

// A CSV field (RFC 4180): quoted when it holds a comma, a quote or a line break; a demangled
// C++ name often holds commas ("std::vector<int, std::allocator<int> >::push_back").
std::string sampling_csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char ch : s) out += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return out + "\"";
}

std::string sampling_csv_row(const SampledLayer& l, const std::string& function, const std::string& module, const Share& share) {
  return fmt::format("{},{},{},{},{},{},{:.6f},{:.6f},{:.6f}\n", sampling_csv_field(l.name), l.samples, l.enough ? "true" : "false",
                     sampling_csv_field(function), sampling_csv_field(module), share.samples, share.share, share.low, share.high);
}

}  // namespace

std::string sampling_csv(const Profile& p) {
  std::string out = "layer,layer_samples,enough,function,module,samples,share,share_low,share_high\n";
  if (!p.sampling) return out;
  for (const SampledLayer& l : p.sampling->layers) {
    for (const SampledFunction& f : l.top) out += sampling_csv_row(l, f.function, f.module, {f.samples, l.samples, f.share, f.low, f.high});
    // The functions not listed, together: their share, with its interval (docs/sampling.md, "Attribution").
    out += sampling_csv_row(l, "[other functions]", "", share_of(l.rest, l.samples));
  }
  return out;
}

}  // namespace hwprof::report
