// panama-dcsim's results.json and its summary.
#pragma once

#include <nlohmann/json.hpp>

namespace dcsim {

// The summary of a results.json: flow completion times, long-flow throughput, iteration times.
nlohmann::json summary(const nlohmann::json& r, double short_bytes, int servers);

}  // namespace dcsim
