// A profile's sampling in the files people use (docs/sampling.md, "Outputs"): sampling.csv with
// its fields quoted, report.html's section with the layer selector and each layer's data, and
// the samples on trace.json's lanes as thread-scoped instants.
#include "report/sampling_outputs.hpp"

#include <set>
#include <string>
#include <utility>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "hwprof/engine/report.hpp"
#include "report/flamegraph.hpp"
#include "report/outputs.hpp"
#include "report/sampling_report.hpp"
#include "synthetic_profile.hpp"

namespace hwprof {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr const char* kPushBack = "std::vector<int, std::allocator<int> >::push_back";

Profile sampled_profile() {
  Profile p = test::synthetic_profile();
  SamplingProfile s;
  s.spec = "cpu-clock@1000";
  s.rate = "1000 Hz";
  s.samples = 110;
  s.sampled_passes = 1;
  s.unsampled_passes = 1;
  s.frame_names = {"conv1", "run", kPushBack, "sgemm_kernel_HASWELL", "fc \"big\""};
  s.frame_modules = {"", "hwprof", "hwprof", "libopenblas.so.0", ""};
  s.stacks = {{{0, 1, 2}, 40}, {{0, 3}, 60}, {{4, 1}, 10}};
  s.layers = {SampledLayer{"conv1",
                           0,
                           100,
                           60,
                           true,
                           {{kPushBack, "hwprof", 40, 0.4, 0.31, 0.5}, {"sgemm_kernel_HASWELL", "libopenblas.so.0", 60, 0.6, 0.5, 0.69}},
                           0,
                           {},
                           false},
              SampledLayer{"fc \"big\"", 1, 10, 0, false, {{"run", "hwprof", 10, 1.0, 0.72, 1.0}}, 0, {}, false}};
  s.layers[0].rest = 0;
  s.instants = {{5.0, 0, 0, 2}, {7.25, 1, 0, 3}, {900.0, 0, 4, 1}};
  s.instants_left_out = 4;
  p.sampling = s;
  return p;
}

TEST(SamplingCsv, OneRowPerLayerAndFunctionAndTheRestQuoted) {
  const std::string csv = report::sampling_csv(sampled_profile());
  EXPECT_EQ(csv.substr(0, csv.find('\n')), "layer,layer_samples,enough,function,module,samples,share,share_low,share_high");
  EXPECT_THAT(csv, HasSubstr("conv1,100,true,\"std::vector<int, std::allocator<int> >::push_back\",hwprof,40,0.400000,0.310000,0.500000\n"));
  EXPECT_THAT(csv, HasSubstr("conv1,100,true,sgemm_kernel_HASWELL,libopenblas.so.0,60,"));
  EXPECT_THAT(csv, HasSubstr("conv1,100,true,[other functions],,0,0.000000,0.000000,"));
  EXPECT_THAT(csv, HasSubstr("\"fc \"\"big\"\"\",10,false,run,hwprof,10,1.000000,0.720000,1.000000\n"));
  // Header only without sampling; the registry neither writes nor prints it then.
  EXPECT_EQ(report::sampling_csv(test::synthetic_profile()), "layer,layer_samples,enough,function,module,samples,share,share_low,share_high\n");
  const auto* output = report::find_output(report::profile_outputs(), "sampling-csv");
  ASSERT_NE(output, nullptr);
  EXPECT_EQ(output->file_name, "sampling.csv");
  const Profile plain = test::synthetic_profile();
  const Profile with = sampled_profile();
  EXPECT_FALSE(report::output_applies(*output, report::ProfileSubject{plain, {}}));
  EXPECT_TRUE(report::output_applies(*output, report::ProfileSubject{with, {}}));
}

TEST(SamplingHtml, TheSectionHasTheSelectorEachLayersTableAndTheStacks) {
  const std::string html = html_report(sampled_profile());
  EXPECT_THAT(html, HasSubstr("<h2>Where inside the layers</h2>"));
  EXPECT_THAT(html, HasSubstr("<select id=\"flame-layer\"><option value=\"all\" data-root=\"-1\">all layers (110 samples)</option>"
                              "<option value=\"0\" data-root=\"0\">conv1 (100 samples)</option>"
                              "<option value=\"1\" data-root=\"4\">fc &quot;big&quot; (10 samples)</option></select>"));
  EXPECT_THAT(html, HasSubstr("data-stacks=\"[[40,0,1,2],[60,0,3],[10,4,1]]\""));
  EXPECT_THAT(html,
              HasSubstr("data-names=\"[&quot;conv1&quot;,&quot;run&quot;,&quot;std::vector&lt;int, std::allocator&lt;int&gt; &gt;::push_back&quot;"));
  EXPECT_THAT(html, HasSubstr("<table id=\"flame-top-0\" hidden=\"hidden\">"));
  EXPECT_THAT(html, HasSubstr("<td>std::vector&lt;int, std::allocator&lt;int&gt; &gt;::push_back</td><td>hwprof</td><td class=\"num\">40</td>"
                              "<td class=\"num\">40.0%</td><td class=\"num\">31.0%–50.0%</td>"));
  EXPECT_THAT(html, HasSubstr("<table id=\"flame-top-1\" hidden=\"hidden\">"));
  EXPECT_THAT(html, HasSubstr("too few samples to say"));
  EXPECT_THAT(html, HasSubstr("getElementById('flame-layer')"));
  // Nothing of it without sampling.
  const std::string plain = html_report(test::synthetic_profile());
  EXPECT_THAT(plain, Not(HasSubstr("flame-layer")));
}

TEST(SamplingTrace, SamplesAreThreadScopedInstantsOnTheirLanes) {
  const nlohmann::json j = nlohmann::json::parse(chrome_trace(sampled_profile()));
  std::vector<nlohmann::json> instants;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] == "i") instants.push_back(e);
  }
  ASSERT_EQ(instants.size(), 3u);
  EXPECT_EQ(instants[0]["name"], kPushBack);
  EXPECT_EQ(instants[0]["cat"], "sample");
  EXPECT_EQ(instants[0]["s"], "t");
  EXPECT_DOUBLE_EQ(instants[0]["ts"].get<double>(), 5.0);
  EXPECT_EQ(instants[0]["tid"], 0);
  EXPECT_EQ(instants[0]["args"]["layer"], "conv1");
  EXPECT_EQ(instants[0]["args"]["function"], kPushBack);
  EXPECT_EQ(instants[0]["args"]["module"], "hwprof");
  EXPECT_EQ(instants[1]["tid"], 1);
  EXPECT_EQ(instants[1]["args"]["module"], "libopenblas.so.0");
  EXPECT_EQ(instants[2]["args"]["layer"], "fc \"big\"");
  EXPECT_EQ(j["otherData"]["sample_instants"], 3);
  EXPECT_EQ(j["otherData"]["sample_instants_left_out"], 4);
  // Each instant's lane is a named lane of the trace.
  std::set<int> named;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_name") named.insert(e["tid"].get<int>());
  }
  for (const auto& i : instants) EXPECT_TRUE(named.count(i["tid"].get<int>())) << i.dump();
}

// The stacks' files are registry entries of both subjects (report/outputs.hpp): a profile with
// sampling and a program `hwprof record` ran write the same three, titled by what was sampled.
TEST(SamplingOutputs, TheStacksFilesAreRegisteredForProfilesWithSamplingAndForRecordedPrograms) {
  const Profile with = sampled_profile();
  const Profile without = test::synthetic_profile();
  const report::ProfileSubject sampled{with, {}};
  const report::ProfileSubject plain{without, {}};
  const std::vector<report::SampledStack> stacks = report::sampled_stacks(*with.sampling);
  const std::string title = with.model + " (cpu-clock@1000)";
  const std::pair<const char*, std::string> expected[] = {
      {"flamegraph", report::flamegraph_svg(title, with.sampling->frame_names, stacks, 1200.0, true)},
      {"folded", report::folded_stacks(with.sampling->frame_names, stacks)},
      {"speedscope", report::speedscope_json(title, with.sampling->frame_names, stacks)},
  };
  for (const auto& [format, text] : expected) {
    const auto* output = report::find_output(report::profile_outputs(), format);
    ASSERT_NE(output, nullptr) << format;
    EXPECT_TRUE(report::output_applies(*output, sampled)) << format;
    EXPECT_FALSE(report::output_applies(*output, plain)) << format;
    EXPECT_FALSE(output->printable) << format;
    EXPECT_EQ(report::render_output(*output, sampled), text) << format;
  }
  const auto* folded = report::find_output(report::profile_outputs(), "folded");
  ASSERT_NE(folded, nullptr);
  EXPECT_EQ(folded->file_name, "samples.folded");

  const std::vector<std::string> command{"python3", "train.py"};
  const report::RecordSubject recorded{*with.sampling, command, 3, 1.5, "python3 train.py (cpu-clock@1000)"};
  EXPECT_THAT(report::printable_formats(report::record_outputs()), ::testing::ElementsAre("json"));
  std::set<std::string_view> files;
  for (const auto& o : report::record_outputs()) files.insert(o.file_name);
  EXPECT_EQ(files, (std::set<std::string_view>{"sampling.json", "flamegraph.svg", "samples.folded", "samples.speedscope.json"}));
  const auto* json_output = report::find_output(report::record_outputs(), "json");
  const auto* speedscope = report::find_output(report::record_outputs(), "speedscope");
  ASSERT_NE(json_output, nullptr);
  ASSERT_NE(speedscope, nullptr);
  const auto j = nlohmann::json::parse(report::render_output(*json_output, recorded));
  EXPECT_EQ(j["command"], nlohmann::json(command));
  EXPECT_EQ(j["exit_code"], 3);
  EXPECT_EQ(j["wall_seconds"], 1.5);
  EXPECT_EQ(j["sampling"]["spec"], "cpu-clock@1000");
  EXPECT_EQ(report::render_output(*speedscope, recorded),
            report::speedscope_json("python3 train.py (cpu-clock@1000)", with.sampling->frame_names, stacks));
}

}  // namespace
}  // namespace hwprof
