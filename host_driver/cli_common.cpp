#include <climits>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "cli.h"
#include "parse_num.h"

namespace panama::host::cli {

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> v;
  std::stringstream ss(s);
  std::string x;
  while (std::getline(ss, x, ',')) v.push_back(x);
  return v;
}

std::vector<int> int_list(const std::string& s, const char* what) {
  std::vector<int> v;
  for (const auto& x : split(s)) {
    const auto n = parse_unsigned(x, 10, INT_MAX);
    if (!n) throw std::runtime_error(std::string(what) + ": '" + x + "' is not a number");
    v.push_back(static_cast<int>(*n));
  }
  return v;
}

bool can_create_tmp(const std::string& path) {
  const std::string tmp = path + ".tmp";
  std::ofstream probe(tmp, std::ios::binary);
  if (!probe) return false;
  probe.close();
  std::remove(tmp.c_str());
  return true;
}

}  // namespace panama::host::cli
