#include "design.h"

#include <fstream>

namespace panama {

Design load_design(const std::string& dir) {
  const std::string path = dir + "/config.json";
  std::ifstream in(path);
  if (!in) throw DesignError(dir + ": no config.json there (not a panama-gen output directory)");
  try {
    nlohmann::json j = nlohmann::json::parse(in);
    Config c = Config::from_json(j);
    RegMap m = RegMap::from(c);
    return Design{dir, std::move(c), std::move(j), std::move(m)};
  } catch (const std::exception& e) {
    throw DesignError(path + ": " + e.what());
  }
}

}  // namespace panama
