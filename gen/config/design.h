// A generated design's folder (panama-gen --out DIR) as every reader takes it: DIR/config.json
// through Config::from_json (re-derived, so a hand-edited derived field changes nothing) and the
// register map derived from it. The stand-in, the worker, the controller and panama_torch load a
// design only through load_design.
#pragma once

#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "config.h"
#include "regmap.h"

namespace panama {

// A missing folder, a folder without config.json, or a config.json Config refuses; what() is one
// line starting with the path.
struct DesignError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Design {
  std::string dir;
  Config config;
  nlohmann::json json;  // config.json as written (its "board" entry, ...)
  RegMap regmap;        // RegMap::from(config): the map regmap.json publishes
};

// Throws DesignError: "DIR: no config.json there (not a panama-gen output directory)" or
// "DIR/config.json: <the parse or configuration error>".
Design load_design(const std::string& dir);

}  // namespace panama
