// Scenario traffic for the regression: per-port pcaps and CTX.json (testbench/traffic.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config.h"

namespace panama::traffic {

const std::vector<std::string>& scenarios();
// Writes DIR/ctx.json and DIR/in/portNN.pcap (and DIR/in/portNN.tkeep: keep_io.h). Throws std::runtime_error on an
// unknown scenario.
void generate(const Config& cfg, const std::string& scenario, uint64_t seed, int vectors, const std::string& dir);

}  // namespace panama::traffic
