// Helpers for the tests of a parsed or imported Graph, defined once so that the graph tests
// can also be compiled together (the ci and release presets build with CMAKE_UNITY_BUILD).
#pragma once

#include <string>
#include <vector>

#include "hwprof/engine/graph.hpp"

namespace hwprof::test {

// The graph's node names, in node order.
inline std::vector<std::string> names_of(const Graph& graph) {
  std::vector<std::string> names;
  for (const Node& node : graph.nodes) names.push_back(node.name);
  return names;
}

}  // namespace hwprof::test
