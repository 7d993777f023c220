// Helpers of the panama-gen command-line tests: run the generator, read a file, a scratch folder,
// and the checks several tests share.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <iterator>
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

// Runs the generator with `args` (ending in "--out ") into a and into b: both runs succeed and
// write the same files, byte for byte, none of which names its output folder.
inline void expect_regenerates_identically(const std::string& args, const fs::path& a, const fs::path& b) {
  ASSERT_EQ(run_gen(args + a.string()).rc, 0);
  ASSERT_EQ(run_gen(args + b.string()).rc, 0);
  size_t n = 0;
  for (const auto& e : fs::directory_iterator(a)) {
    const std::string x = slurp(e.path());
    EXPECT_EQ(x, slurp(b / e.path().filename())) << e.path().filename();
    EXPECT_EQ(x.find(a.string()), std::string::npos) << "output path in " << e.path().filename();
    ++n;
  }
  EXPECT_EQ(n, static_cast<size_t>(std::distance(fs::directory_iterator(b), fs::directory_iterator())));
}

// dir/NAME.v exists, defines module NAME and contains `instance` (an instantiation such as
// "acc_top u_core"); returns its text.
inline std::string expect_module(const fs::path& dir, const std::string& name, const std::string& instance) {
  const fs::path f = dir / (name + ".v");
  EXPECT_TRUE(fs::exists(f)) << f;
  const std::string v = slurp(f);
  EXPECT_NE(v.find("module " + name), std::string::npos) << f;
  EXPECT_NE(v.find(instance), std::string::npos) << f;
  return v;
}

}  // namespace gen_cli
