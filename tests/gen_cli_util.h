// Helpers of the panama-gen command-line tests: run the generator, read a file, a scratch folder.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace gen_cli {

namespace fs = std::filesystem;

inline std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

struct GenRun {
  int rc;
  std::string out, err;
};

// Runs PANAMA_GEN with args; its exit code, standard output and standard error.
inline GenRun run_gen(const std::string& args) {
  const std::string base = (fs::temp_directory_path() / ("panama_gen_run_" + std::to_string(::getpid()))).string();
  const std::string cmd = std::string(PANAMA_GEN) + " " + args + " >" + base + ".out 2>" + base + ".err";
  const int st = std::system(cmd.c_str());
  GenRun r{WIFEXITED(st) ? WEXITSTATUS(st) : -1, slurp(base + ".out"), slurp(base + ".err")};
  fs::remove(base + ".out");
  fs::remove(base + ".err");
  return r;
}

// A fresh, empty-to-be path under the temporary directory, unique per process and name.
inline fs::path scratch(const std::string& name) {
  fs::path p = fs::temp_directory_path() / ("panama_gen_test_" + std::to_string(::getpid()) + "_" + name);
  fs::remove_all(p);
  return p;
}

}  // namespace gen_cli
