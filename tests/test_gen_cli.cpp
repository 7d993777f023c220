// The generator's command line as tools.md fixes it: outputs, determinism, one-line errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <unistd.h>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace fs = std::filesystem;

namespace {

struct GenRun {
  int rc;
  std::string err;
};

GenRun run_gen(const std::string& args) {
  const fs::path errf = fs::temp_directory_path() / ("panama_gen_err_" + std::to_string(::getpid()));
  const std::string cmd = std::string(PANAMA_GEN) + " " + args + " 2>" + errf.string() + " >/dev/null";
  const int st = std::system(cmd.c_str());
  std::ifstream f(errf);
  std::stringstream ss;
  ss << f.rdbuf();
  fs::remove(errf);
  return {WEXITSTATUS(st), ss.str()};
}

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

fs::path scratch(const std::string& name) {
  fs::path p = fs::temp_directory_path() / ("panama_gen_test_" + std::to_string(::getpid()) + "_" + name);
  fs::remove_all(p);
  return p;
}

}  // namespace

TEST(GenCli, WritesTheDocumentedFiles) {
  const fs::path d = scratch("files");
  ASSERT_EQ(run_gen("--ports 4 --gbps 10 --mhz 200 --module addtree --out " + d.string()).rc, 0);
  for (const char* f : {"panama_fpadd.v", "panama_addtree.v", "filelist.f", "config.json"})
    EXPECT_TRUE(fs::exists(d / f)) << f;
  EXPECT_EQ(slurp(d / "filelist.f"), "panama_fpadd.v\npanama_addtree.v\n");
  const std::string cfg = slurp(d / "config.json");
  for (const char* k : {"\"ports\"", "\"gbps\"", "\"mhz\"", "\"format\"", "\"elem_bytes\"", "\"subnormals\"",
                        "\"contexts\"", "\"max_elems\"", "\"buffer_bytes\"", "\"bus_bits\"", "\"bypass_bytes\"",
                        "\"lanes\"", "\"top\"", "\"addtree_latency\"", "\"agg_latency\"", "\"bypass_latency\"",
                        "\"resources\""})
    EXPECT_NE(cfg.find(k), std::string::npos) << k;
  EXPECT_NE(cfg.find("\"top\": \"panama_addtree\""), std::string::npos);
  fs::remove_all(d);
}

TEST(GenCli, RegeneratingGivesIdenticalFilesAndNoOutputPathInBanner) {
  const fs::path a = scratch("a"), b = scratch("b");
  const std::string args = "--ports 5 --gbps 25 --mhz 300 --format bf16 --module addtree --out ";
  ASSERT_EQ(run_gen(args + a.string()).rc, 0);
  ASSERT_EQ(run_gen(args + b.string()).rc, 0);
  for (const auto& e : fs::directory_iterator(a)) {
    const std::string x = slurp(e.path()), y = slurp(b / e.path().filename());
    EXPECT_EQ(x, y) << e.path().filename();
    EXPECT_EQ(x.find(a.string()), std::string::npos) << "output path in " << e.path().filename();
  }
  const std::string v = slurp(a / "panama_addtree.v");
  EXPECT_EQ(v.rfind("// panama_addtree:", 0), 0u);
  EXPECT_NE(v.find("// Command: panama-gen --ports 5 --gbps 25 --mhz 300 --format bf16"), std::string::npos);
  fs::remove_all(a);
  fs::remove_all(b);
}

TEST(GenCli, PrefixNamesModulesAndFiles) {
  const fs::path d = scratch("prefix");
  ASSERT_EQ(run_gen("--ports 3 --gbps 10 --mhz 200 --prefix acc0 --module addtree --out " + d.string()).rc, 0);
  EXPECT_TRUE(fs::exists(d / "acc0_addtree.v"));
  EXPECT_NE(slurp(d / "acc0_addtree.v").find("module acc0_addtree"), std::string::npos);
  EXPECT_NE(slurp(d / "acc0_addtree.v").find("acc0_fpadd u_"), std::string::npos);
  fs::remove_all(d);
}

// Every invalid input: non-zero exit, exactly one line on stderr, nothing written.
class GenCliError : public ::testing::TestWithParam<std::string> {};

TEST_P(GenCliError, OneLineAndNothingWritten) {
  const fs::path d = scratch("err");
  const GenRun r = run_gen(GetParam() + " --out " + d.string());
  EXPECT_NE(r.rc, 0);
  ASSERT_FALSE(r.err.empty());
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_EQ(r.err.rfind("panama-gen: ", 0), 0u) << r.err;
  EXPECT_FALSE(fs::exists(d)) << GetParam();
}

INSTANTIATE_TEST_SUITE_P(
    Invalid, GenCliError,
    ::testing::Values("--ports 1 --gbps 10 --mhz 200", "--ports 300 --gbps 10 --mhz 200",
                      "--ports 4 --gbps 0 --mhz 200", "--ports 4 --gbps -10 --mhz 200",
                      "--ports 4 --gbps 10 --mhz 0", "--ports 4 --gbps 10 --mhz -5",
                      "--ports 4 --gbps 1000 --mhz 100", "--ports 4 --gbps 10 --mhz 200 --format fp64",
                      "--ports 4 --gbps 10 --mhz 200 --subnormals daz", "--ports 4 --gbps 10",
                      "--gbps 10 --mhz 200", "--ports four --gbps 10 --mhz 200",
                      "--ports 4 --gbps ten --mhz 200", "--ports 4 --gbps 10 --mhz 200 --contexts 0",
                      "--ports 4 --gbps 10 --mhz 200 --max-elems 0",
                      "--ports 4 --gbps 10 --mhz 200 --max-elems 16372",
                      "--ports 4 --gbps 10 --mhz 200 --contexts 64",
                      "--ports 4 --gbps 10 --mhz 200 --module mux",
                      "--ports 4 --gbps 10 --mhz 200 --bogus 1"));
