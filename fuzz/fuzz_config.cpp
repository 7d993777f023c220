// A design's config.json (gen/config/config.h Config::from_json) on any JSON text: a Config, or one
// ConfigError. A Config read writes back the same, and its register map loads in the controller
// (host_driver/controller.h parse_regmap).
#include <string>

#include "config.h"
#include "controller.h"
#include "fuzz.h"
#include "regmap.h"

using namespace panama;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(data, data + size);
  } catch (const nlohmann::json::exception&) {
    return 0;  // not JSON: the callers' one line (testbench/panama_sim.cpp load_config)
  }
  try {
    const Config c = Config::from_json(j);
    FUZZ_CHECK(c.in.ports >= 2 && c.in.ports <= 256);
    FUZZ_CHECK(Config::from_json(c.to_json()).to_json() == c.to_json());
    const host::RegLayout l = host::parse_regmap(regmap_json(c), "regmap.json");
    FUZZ_CHECK(l.ports == c.in.ports && l.contexts == c.in.contexts);
  } catch (const ConfigError& e) {
    fuzz_check_message(e.what());
  }
  return 0;
}
