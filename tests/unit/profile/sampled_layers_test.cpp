// A profile run's samples joined with its layers (src/placement/sampled_layers.cpp): rows by the
// region open when each sample was taken, a pool worker's samples to its launching thread's
// layer, each row's functions with their shares, stacks rooted at the row; samples of another
// process (a forked child) left out.
#include "placement/sampled_layers.hpp"

#include "placement/process_samples.hpp"

#include <linux/perf_event.h>

#include <map>
#include <vector>

#include <gtest/gtest.h>
#include "common/stages.hpp"

namespace hwprof::profile {
namespace {

void add(SampleStore& store, std::uint32_t pid, std::uint32_t tid, std::uint64_t time, std::vector<std::uint64_t> callers_leaf_first) {
  SampleRecord r;
  r.pid = pid;
  r.tid = tid;
  r.time_ns = time;
  r.ip = callers_leaf_first.front();
  r.ip_context = FrameContext::user;
  std::vector<std::uint64_t> raw{PERF_CONTEXT_USER};
  raw.insert(raw.end(), callers_leaf_first.begin(), callers_leaf_first.end());
  ASSERT_TRUE(store.add_sample(r, raw));
}

TEST(SampledLayers, EachLayersSamplesByFunctionWithItsStacks) {
  // The model thread 10 runs the pass (region 1) and in it conv1 (2) over [100, 400] and fc (3)
  // over [500, 600]; thread 11 is a BLAS worker that enters no region.
  const std::vector<RegionSpan> spans = {{10, 1, 0, 0, 1000}, {10, 2, 1, 100, 400}, {10, 3, 1, 500, 600}};
  SampleStore store;
  for (int i = 0; i < 3; ++i) add(store, 77, 10, 200 + static_cast<std::uint64_t>(i), {0x1000, 0x9000});  // im2col, called by run
  for (int i = 0; i < 5; ++i) add(store, 77, 11, 300 + static_cast<std::uint64_t>(i), {0x2000, 0x8000});  // the worker's kernel
  add(store, 77, 10, 550, {0x3000, 0x9000});                                                              // fc's gemv
  add(store, 77, 10, 800, {0x8fff});                                                                      // between layers
  add(store, 77, 10, 810, {0x8fff, 0xdead, 0x9000});  // a chain that breaks at 0xdead (in no mapping): cut there
  add(store, 78, 12, 200, {0x1000});                  // another process
  const RowOfRegion rows = [](int region) -> std::optional<SampledRow> {
    if (region == 1) return SampledRow{"(the pass, between layers)", -1};
    if (region == 2) return SampledRow{"conv1", 0};
    if (region == 3) return SampledRow{"fc", 1};
    return std::nullopt;
  };
  const std::map<std::uint64_t, FrameName> known = {{0x1000, {"im2col", "libhwprof.so"}},
                                                    {0x2000, {"sgemm_kernel_HASWELL", "libopenblas.so.0"}},
                                                    {0x3000, {"sgemv_t", "libopenblas.so.0"}},
                                                    // callers are named by their return address - 1
                                                    {0x7fff, {"blas_thread_server", "libopenblas.so.0"}},
                                                    {0x8fff, {"run", "hwprof"}}};
  const NameOfAddress names = [&](std::uint64_t a) {
    const auto it = known.find(a);
    return it != known.end() ? it->second : FrameName{"[unknown]", "", false};
  };
  SamplingProfile p;
  add_sampled_layers(store, 77, spans, rows, names, 5, p);
  EXPECT_EQ(p.samples, 11u);
  ASSERT_EQ(p.layers.size(), 3u);
  const SampledLayer& conv = p.layers[0];
  EXPECT_EQ(conv.name, "conv1");
  EXPECT_EQ(conv.layer, 0);
  EXPECT_EQ(conv.samples, 8u);
  EXPECT_EQ(conv.by_pool_workers, 5u);
  EXPECT_FALSE(conv.enough);  // 8 samples: too few to say
  ASSERT_EQ(conv.top.size(), 2u);
  EXPECT_EQ(conv.top[0].function, "sgemm_kernel_HASWELL");
  EXPECT_EQ(conv.top[0].module, "libopenblas.so.0");
  EXPECT_DOUBLE_EQ(conv.top[0].share, 5.0 / 8.0);
  EXPECT_LT(conv.top[0].low, conv.top[0].share);
  EXPECT_EQ(conv.top[1].function, "im2col");
  // Its parts of the code: the kernel's 5 samples, im2col's 3.
  ASSERT_EQ(conv.parts.size(), 2u);
  EXPECT_EQ(conv.parts[0].part, "GEMM kernel");
  EXPECT_EQ(conv.parts[0].samples, 5u);
  EXPECT_EQ(conv.parts[1].part, "im2col");
  EXPECT_DOUBLE_EQ(conv.parts[1].share, 3.0 / 8.0);
  EXPECT_EQ(p.layers[2].parts.at(0).part, "BLAS other");  // fc's sgemv_t
  EXPECT_EQ(p.layers[1].samples, 2u);                     // the pass's own row (between layers), then fc
  EXPECT_EQ(p.layers[2].name, "fc");
  EXPECT_EQ(p.outside, 0u);
  // Stacks, root first: the row, the outermost caller, the leaf.
  std::map<std::vector<std::string>, std::uint64_t> stacks;
  for (const SampledStackRow& s : p.stacks) {
    std::vector<std::string> named;
    for (int f : s.frames) named.push_back(p.frame_names[static_cast<std::size_t>(f)]);
    stacks[named] += s.samples;
  }
  EXPECT_EQ((stacks[{"conv1", "run", "im2col"}]), 3u);
  EXPECT_EQ((stacks[{"conv1", "blas_thread_server", "sgemm_kernel_HASWELL"}]), 5u);
  EXPECT_EQ((stacks[{"(the pass, between layers)", "run"}]), 1u);
  EXPECT_EQ((stacks[{"(the pass, between layers)", "[callers unknown: the frame-pointer chain broke]", "run"}]), 1u);
}

// The samples inside the traced passes become instants for the trace: at their time from the
// trace's origin, on the lane of the thread whose layer they belong to (a pool worker's on its
// launching thread's), named by their row and leaf; past the cap, counted.
TEST(SampledLayers, SamplesInsideTracedPassesBecomeInstantsOnTheirLayersLane) {
  const std::vector<RegionSpan> spans = {{10, 1, 0, 0, 1000}, {10, 2, 1, 100, 400}, {10, 3, 1, 500, 600}, {10, 1, 0, 2000, 3000}};
  SampleStore store;
  add(store, 77, 10, 200, {0x1000});   // conv1, own thread
  add(store, 77, 11, 300, {0x2000});   // conv1, a pool worker
  add(store, 77, 10, 550, {0x3000});   // fc
  add(store, 77, 10, 800, {0x1000});   // between layers, after the traced pass's last layer
  add(store, 77, 10, 2500, {0x1000});  // a pass that was not traced
  const RowOfRegion rows = [](int region) -> std::optional<SampledRow> {
    if (region == 1) return SampledRow{"(the pass, between layers)", -1};
    if (region == 2) return SampledRow{"conv1", 0};
    if (region == 3) return SampledRow{"fc", 1};
    return std::nullopt;
  };
  const std::map<std::uint64_t, FrameName> known = {
      {0x1000, {"im2col", "libhwprof.so"}}, {0x2000, {"sgemm_kernel_HASWELL", "libopenblas.so.0"}}, {0x3000, {"sgemv_t", "libopenblas.so.0"}}};
  const NameOfAddress names = [&](std::uint64_t a) { return known.at(a); };
  TraceWindow window;
  window.origin_ns = 100;
  window.passes = {{100, 600}};
  window.lane_of = [](std::int64_t tid) { return tid == 10 ? 2 : 5; };
  SamplingProfile p;
  add_sampled_layers(store, 77, spans, rows, names, 5, p, &window);
  ASSERT_EQ(p.instants.size(), 3u);
  EXPECT_EQ(p.instants_left_out, 0u);
  const auto name = [&](int id) { return p.frame_names.at(static_cast<std::size_t>(id)); };
  EXPECT_DOUBLE_EQ(p.instants[0].time_us, 0.1);
  EXPECT_EQ(p.instants[0].thread, 2);
  EXPECT_EQ(name(p.instants[0].row), "conv1");
  EXPECT_EQ(name(p.instants[0].frame), "im2col");
  EXPECT_EQ(p.instants[1].thread, 2);  // the worker's sample, on its launching thread's lane
  EXPECT_EQ(name(p.instants[1].frame), "sgemm_kernel_HASWELL");
  EXPECT_EQ(name(p.instants[2].row), "fc");
  ASSERT_EQ(p.frame_modules.size(), p.frame_names.size());
  EXPECT_EQ(p.frame_modules.at(static_cast<std::size_t>(p.instants[2].frame)), "libopenblas.so.0");
  // A cap of two: the third is counted, not kept.
  window.most = 2;
  SamplingProfile capped;
  add_sampled_layers(store, 77, spans, rows, names, 5, capped, &window);
  EXPECT_EQ(capped.instants.size(), 2u);
  EXPECT_EQ(capped.instants_left_out, 1u);
  // Without a window, none.
  SamplingProfile none;
  add_sampled_layers(store, 77, spans, rows, names, 5, none);
  EXPECT_TRUE(none.instants.empty());
}

// Samples in anonymous executable memory (JIT code without a perf map) are one frame, and past
// 1 % of the samples a warning gives the fix.
TEST(SampledLayers, AnonymousCodeIsOneFrameAndPastOnePercentSaysHowToNameIt) {
  SamplingProfile s;
  s.samples = 100;
  s.frame_names = {"conv1", std::string(kAnonymousCodeFrame), "sgemm_kernel_HASWELL"};
  s.stacks = {{{0, 1}, 3}, {{0, 2}, 97}};
  EXPECT_NE(anonymous_code_hint(s).find("3 samples (3%) landed in anonymous executable memory"), std::string::npos) << anonymous_code_hint(s);
  EXPECT_NE(anonymous_code_hint(s).find("ONEDNN_JIT_PROFILE=2"), std::string::npos);
  s.stacks = {{{0, 1}, 0}, {{0, 2}, 100}};
  EXPECT_EQ(anonymous_code_hint(s), "");
  s.frame_names.pop_back();
  s.frame_names[1] = "other";
  EXPECT_EQ(anonymous_code_hint(s), "");
}

}  // namespace
}  // namespace hwprof::profile
