// The generator's area estimate of an output, and the adder tree's resolved shape it counts
// (planning, library panama_config).
#pragma once

#include <vector>

#include "config.h"

namespace panama {

// A tree node after the generator resolved which leaves are absent.
enum class NodeKind { leaf, neg_zero, adder, pass };
// levels[0] are the leaves (one per power-of-two slot); levels[k][i] combines levels[k-1][2i], [2i+1].
std::vector<std::vector<NodeKind>> resolve_tree(int ports);

// The generator's own area estimate of a whole output (adder trees, buffers, control).
Resources estimate_resources(const Config& c);

}  // namespace panama
