// The ONNX importer's op table (src/graph/onnx_ops.cpp): every row maps its op or says how the
// op is settled before mapping, and docs/onnx.md's "How ops map" shows the same ops, so the
// table, the importer's messages and the docs cannot drift apart.
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <onnx/defs/schema.h>

#include "graph/onnx_importer.hpp"

namespace hwprof {
namespace {

// The ONNX op types that docs/onnx.md's "How ops map" names in its first column: the words
// that are ops of ONNX's default domain (its schema registry knows them), "Q" or "x" not.
std::set<std::string> ops_the_docs_show() {
  std::ifstream in(HWPROF_ONNX_DOCS);
  std::string line;
  bool in_section = false;
  std::set<std::string> ops;
  const std::regex word("[A-Z][A-Za-z]+");
  while (std::getline(in, line)) {
    if (line.rfind("## ", 0) == 0) in_section = line == "## How ops map";
    if (!in_section || line.rfind("| ", 0) != 0) continue;
    const std::string first = line.substr(2, line.find(" |", 2) - 2);
    for (std::sregex_iterator it(first.begin(), first.end(), word), end; it != end; ++it) {
      if (onnx::OpSchemaRegistry::Schema(it->str(), 17, "") != nullptr) ops.insert(it->str());
    }
  }
  return ops;
}

TEST(OnnxOpTable, EveryRowMapsItsOpOrSaysHowItIsSettled) {
  std::set<std::string> seen;
  for (const graph::OnnxOpRule& rule : graph::Importer::op_rules()) {
    EXPECT_TRUE(seen.insert(std::string(rule.type)).second) << rule.type << " has two rows";
    EXPECT_NE(onnx::OpSchemaRegistry::Schema(std::string(rule.type), 17, ""), nullptr) << rule.type << " is not an ONNX op";
    EXPECT_NE(rule.map != nullptr, !rule.settled.empty()) << rule.type << ": a row either maps the op or says how it is settled, not both";
  }
  EXPECT_GE(seen.size(), 30u);
}

TEST(OnnxOpTable, TheDocsShowTheOpsOfTheTableAndOnlyThoseBesideThePatterns) {
  const std::set<std::string> docs = ops_the_docs_show();
  ASSERT_FALSE(docs.empty()) << HWPROF_ONNX_DOCS << " has no \"How ops map\" table";
  std::set<std::string> table;
  for (const graph::OnnxOpRule& rule : graph::Importer::op_rules()) table.insert(std::string(rule.type));
  for (const std::string& op : table) EXPECT_EQ(docs.count(op), 1u) << op << " is in the table but not in docs/onnx.md's \"How ops map\"";
  // Ops that map only inside a pattern of several nodes (onnx_patterns.cpp).
  const std::set<std::string> in_patterns_only = {"Erf", "Pow", "Sqrt"};
  for (const std::string& op : docs) {
    EXPECT_TRUE(table.count(op) != 0 || in_patterns_only.count(op) != 0) << op << " is in docs/onnx.md's \"How ops map\" but not in the table";
  }
}

}  // namespace
}  // namespace hwprof
