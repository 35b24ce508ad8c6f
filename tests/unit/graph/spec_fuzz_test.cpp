// Robustness of the spec parser and the cost model against damaged specs: every shipped model,
// mutated a few thousand ways (seeded, so a failure reproduces), must come back from
// parse_model() and analyze() either as a result or as an error whose message names the file.
// Crashes, hangs and sanitizer reports are what this file is looking for.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "hwprof/engine/cost.hpp"
#include "hwprof/engine/graph.hpp"

namespace hwprof {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

struct ModelText {
  std::string file;  // e.g. "resnet18.json"
  std::string text;
};

std::vector<ModelText> shipped_models() {
  std::vector<ModelText> models;
  for (const auto& entry : std::filesystem::directory_iterator(HWPROF_MODELS_DIR)) {
    if (entry.path().extension() != ".json") continue;
    std::ifstream in(entry.path(), std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    models.push_back({entry.path().filename().string(), text.str()});
  }
  std::sort(models.begin(), models.end(), [](const ModelText& a, const ModelText& b) { return a.file < b.file; });
  return models;
}

// Runs one damaged spec through both stages. Returns an empty string when it came back as the
// contract says, otherwise what went wrong.
std::string check_returns_cleanly(const std::string& text, const std::string& source) {
  auto graph = parse_model(text, source);
  std::string message;
  if (!graph.ok()) {
    message = graph.error().message;
  } else if (auto cost = analyze(*graph); !cost.ok()) {
    message = cost.error().message;
  } else {
    return {};
  }
  if (message.size() <= source.size() || message.compare(0, source.size(), source) != 0)
    return "message does not start with the source name: '" + message + "'";
  return {};
}

// One model's mutations and the failures among them (only the first few are kept in full).
class Fuzzer {
 public:
  Fuzzer(const ModelText& model, std::uint32_t seed) : model_(model), random_(seed) {}

  void run(const std::string& mutation, const std::string& text) {
    ++runs_;
    const std::string problem = check_returns_cleanly(text, "fuzz/" + model_.file);
    if (problem.empty()) return;
    ++failures_;
    if (failures_ <= 5) ADD_FAILURE() << model_.file << ", " << mutation << ": " << problem;
  }

  std::size_t position(std::size_t size) { return std::uniform_int_distribution<std::size_t>(0, size - 1)(random_); }
  std::size_t length(std::size_t max) { return std::uniform_int_distribution<std::size_t>(1, max)(random_); }
  int byte() { return std::uniform_int_distribution<int>(0, 255)(random_); }

  const std::string& text() const { return model_.text; }
  int runs() const { return runs_; }

 private:
  const ModelText& model_;
  std::mt19937 random_;
  int runs_ = 0;
  int failures_ = 0;
};

// Characters that keep a mutation inside JSON's own alphabet more often than a random byte.
constexpr std::string_view kJsonAlphabet = "{}[]\":,-.eE0123456789 \ntrufalsn$";

// [begin, end) of every number token outside strings.
std::vector<std::pair<std::size_t, std::size_t>> number_tokens(const std::string& text) {
  std::vector<std::pair<std::size_t, std::size_t>> tokens;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      std::size_t end = i + 1;
      while (end < text.size() && std::string_view("0123456789.eE+-").find(text[end]) != std::string_view::npos) ++end;
      tokens.emplace_back(i, end);
      i = end - 1;
    }
  }
  return tokens;
}

class SpecFuzz : public ::testing::Test {
 protected:
  void SetUp() override {
    models_ = shipped_models();
    ASSERT_GE(models_.size(), 6U) << "expected the shipped models in " << HWPROF_MODELS_DIR;
  }

  // A total shared out among the models, so that adding models does not add time.
  int per_model(int total) const { return std::max(10, total / static_cast<int>(models_.size())); }

  // Each mutation kind, over every model, with a seed of its own so that a failure names
  // everything needed to repeat it.
  template <class Mutate>
  int for_each_model(std::uint32_t seed, Mutate mutate) {
    int runs = 0;
    for (std::size_t m = 0; m < models_.size(); ++m) {
      Fuzzer fuzzer(models_[m], seed + static_cast<std::uint32_t>(m));
      mutate(fuzzer);
      runs += fuzzer.runs();
    }
    return runs;
  }

  std::vector<ModelText> models_;
};

TEST_F(SpecFuzz, ShippedModelsParseAndAnalyze) {
  for (const ModelText& model : models_) {
    auto graph = parse_model(model.text, model.file);
    ASSERT_TRUE(graph.ok()) << graph.error().message;
    auto cost = analyze(*graph);
    EXPECT_TRUE(cost.ok()) << cost.error().message;
  }
}

TEST_F(SpecFuzz, ByteFlips) {
  const int flips = per_model(1500);
  const int runs = for_each_model(1001, [&](Fuzzer& f) {
    for (int k = 0; k < flips; ++k) {
      std::string text = f.text();
      const std::size_t at = f.position(text.size());
      if (k % 2 == 0) {
        text[at] = static_cast<char>(text[at] ^ (1 << (f.byte() % 8)));  // may leave invalid UTF-8
      } else {
        text[at] = kJsonAlphabet[static_cast<std::size_t>(f.byte()) % kJsonAlphabet.size()];
      }
      f.run("byte " + std::to_string(at) + " changed (flip " + std::to_string(k) + ")", text);
    }
  });
  EXPECT_GE(runs, 1400);
}

TEST_F(SpecFuzz, SpanDeletions) {
  const int deletions = per_model(1000);
  for_each_model(2001, [&](Fuzzer& f) {
    for (int k = 0; k < deletions; ++k) {
      std::string text = f.text();
      const std::size_t at = f.position(text.size());
      const std::size_t n = std::min(f.length(64), text.size() - at);
      text.erase(at, n);
      f.run("deleted " + std::to_string(n) + " bytes at " + std::to_string(at), text);
    }
  });
}

TEST_F(SpecFuzz, SpanDuplications) {
  const int duplications = per_model(1000);
  for_each_model(3001, [&](Fuzzer& f) {
    for (int k = 0; k < duplications; ++k) {
      std::string text = f.text();
      const std::size_t at = f.position(text.size());
      const std::size_t n = std::min(f.length(200), text.size() - at);
      text.insert(at + n, text.substr(at, n));
      f.run("duplicated " + std::to_string(n) + " bytes at " + std::to_string(at), text);
    }
  });
}

TEST_F(SpecFuzz, TruncationsAtEvery97thByte) {
  for_each_model(4001, [](Fuzzer& f) {
    for (std::size_t at = 0; at < f.text().size(); at += 97) f.run("truncated at " + std::to_string(at), f.text().substr(0, at));
  });
}

TEST_F(SpecFuzz, NumbersReplacedByExtremes) {
  const std::vector<std::string> extremes = {"0", "-1", "9223372036854775807", "9223372036854775808", "4611686018427387904", "1e308", "1e400", "2.5"};
  const auto sample = static_cast<std::size_t>(per_model(200));
  for_each_model(5001, [&](Fuzzer& f) {
    auto tokens = number_tokens(f.text());
    ASSERT_FALSE(tokens.empty());
    // Every number of the small models; a deterministic sample of the large ones.
    std::shuffle(tokens.begin(), tokens.end(), std::mt19937(5001));
    if (tokens.size() > sample) tokens.resize(sample);
    for (const auto& [begin, end] : tokens) {
      for (const std::string& value : extremes) {
        std::string text = f.text();
        text.replace(begin, end - begin, value);
        f.run("number at " + std::to_string(begin) + " replaced by " + value, text);
      }
    }
  });
}

// Each parse of 100000 levels costs a quarter second under ASan: one per model, the models
// taking turns between a balanced nest in place of a value and an unterminated one.
TEST_F(SpecFuzz, DeeplyNestedArrays) {
  const std::string open(100000, '[');
  const std::string deep = open + std::string(100000, ']');
  bool balanced = true;
  const int runs = for_each_model(6001, [&](Fuzzer& f) {
    std::string text = f.text();
    if (balanced) {
      const auto tokens = number_tokens(text);
      ASSERT_FALSE(tokens.empty());
      const auto [begin, end] = tokens[f.position(tokens.size())];
      text.replace(begin, end - begin, deep);
      f.run("number at " + std::to_string(begin) + " replaced by 100000 nested arrays", text);
    } else {
      const std::size_t at = f.position(text.size());
      text.insert(at, open);
      f.run("100000 '[' inserted at " + std::to_string(at), text);
    }
    balanced = !balanced;
  });
  EXPECT_EQ(runs, static_cast<int>(models_.size()));
}

TEST(SpecFuzzLoad, MissingFile) {
  const std::string path = std::string(HWPROF_MODELS_DIR) + "/no_such_model.json";
  auto graph = load_model(path);
  ASSERT_FALSE(graph.ok());
  EXPECT_THAT(graph.error().message, StartsWith(path + ": cannot open the model spec"));
  EXPECT_THAT(graph.error().message, HasSubstr("No such file or directory"));
}

TEST(SpecFuzzLoad, Directory) {
  auto graph = load_model(HWPROF_MODELS_DIR);
  ASSERT_FALSE(graph.ok());
  EXPECT_EQ(graph.error().message, std::string(HWPROF_MODELS_DIR) + ": is a directory, not a model spec; give a regular file or a pipe");
}

TEST(SpecFuzzLoad, EmptyFile) {
  const std::filesystem::path path = std::filesystem::path(::testing::TempDir()) / "hwprof_spec_fuzz_empty.json";
  { std::ofstream create(path, std::ios::binary | std::ios::trunc); }
  auto graph = load_model(path.string());
  std::filesystem::remove(path);
  ASSERT_FALSE(graph.ok());
  EXPECT_EQ(graph.error().message, path.string() + ":1:1: invalid JSON: the file is empty; expected a model spec object");
}

TEST(SpecFuzzLoad, ShippedModelLoadsUnderItsPath) {
  const std::string path = std::string(HWPROF_MODELS_DIR) + "/lenet5.json";
  auto graph = load_model(path);
  ASSERT_TRUE(graph.ok()) << graph.error().message;
  EXPECT_EQ(graph->name, "lenet5");
  EXPECT_EQ(graph->source.file(), path);
}

}  // namespace
}  // namespace hwprof
