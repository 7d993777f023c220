// The one format type (numerics/format.h), the design loader (gen/config/design.h), the job policy
// (host_driver/job.h) and the backend table (host_driver/backends.h), and the worker's refusal of
// a format it does not know: an unknown name is an error everywhere, never another format.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <string>

#include <sys/wait.h>
#include <unistd.h>

#include "backends.h"
#include "design.h"
#include "format.h"
#include "job.h"
#include "protocol.h"

namespace panama {
namespace {

std::string scratch() {
  const std::string d = testing::TempDir() + "/host_format_" + std::to_string(getpid());
  (void)std::system(("mkdir -p " + d).c_str());
  return d;
}

// A design folder with config.json only (what the readers take of it).
std::string design_dir(const std::string& name, Format f) {
  const std::string d = scratch() + "/" + name;
  (void)std::system(("mkdir -p " + d).c_str());
  Inputs in;
  in.ports = 4;
  in.gbps = 10;
  in.mhz = 200;
  in.format = f;
  std::ofstream(d + "/config.json") << Config::derive(in).to_json().dump(2);
  return d;
}

struct Run {
  int rc;
  std::string err;
};

Run cli(const std::string& args) {
  const std::string tmp = scratch() + "/stderr.txt";
  const int st = std::system((std::string(PANAMA_HOST) + " " + args + " >/dev/null 2>" + tmp).c_str());
  std::ifstream in(tmp);
  return {WIFEXITED(st) ? WEXITSTATUS(st) : 128,
          std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>())};
}

void expect_error(const std::string& args, const std::string& needle) {
  const Run r = cli(args);
  EXPECT_NE(r.rc, 0) << args;
  EXPECT_NE(r.err.find(needle), std::string::npos) << args << "\n" << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args << "\n" << r.err;
}

TEST(HostFormat, NamesCodesAndSizes) {
  // numerics.md's formats and the FORMAT register's codes (accelerator.md).
  const struct {
    const char* name;
    Format f;
    uint32_t code;
    int bytes, exp, frac;
  } rows[] = {
      {"fp32", Format::fp32, 0, 4, 8, 23}, {"bf16", Format::bf16, 1, 2, 8, 7}, {"fp16", Format::fp16, 2, 2, 5, 10}};
  for (const auto& r : rows) {
    EXPECT_EQ(parse_format(r.name), r.f);
    EXPECT_EQ(to_string(r.f), r.name);
    EXPECT_EQ(rtl_code(r.f), r.code);
    EXPECT_EQ(format_from_code(r.code), r.f);
    EXPECT_EQ(elem_bytes(r.f), r.bytes);
    EXPECT_EQ(elem_bits(r.f), 8 * r.bytes);
    EXPECT_EQ(exp_bits(r.f), r.exp);
    EXPECT_EQ(frac_bits(r.f), r.frac);
  }
  for (const char* bad : {"fp8", "FP32", "", "fp32 ", "float"}) {
    try {
      parse_format(bad);
      ADD_FAILURE() << "'" << bad << "' was taken";
    } catch (const FormatError& e) {
      EXPECT_EQ(std::string(e.what()), "unknown format '" + std::string(bad) + "' (expected fp32, bf16 or fp16)");
    }
  }
  EXPECT_THROW(format_from_code(3), FormatError);
}

TEST(HostFormat, DesignLoaderReadsTheFolderOrSaysWhy) {
  const std::string d = design_dir("bf16", Format::bf16);
  const Design g = load_design(d);
  EXPECT_EQ(g.config.in.format, Format::bf16);
  EXPECT_EQ(g.config.in.ports, 4);
  EXPECT_EQ(g.json.at("format"), "bf16");
  EXPECT_EQ(g.regmap.ports, 4);
  try {
    load_design(scratch() + "/nothing");
    ADD_FAILURE() << "no error";
  } catch (const DesignError& e) {
    EXPECT_EQ(std::string(e.what()), scratch() + "/nothing: no config.json there (not a panama-gen output directory)");
  }
  const std::string bad = scratch() + "/fp8";
  (void)std::system(("mkdir -p " + bad).c_str());
  {
    nlohmann::json j = g.json;
    j["format"] = "fp8";
    std::ofstream(bad + "/config.json") << j.dump();
  }
  try {
    load_design(bad);
    ADD_FAILURE() << "no error";
  } catch (const DesignError& e) {
    EXPECT_EQ(std::string(e.what()), bad + "/config.json: unknown format 'fp8' (expected fp32, bf16 or fp16)");
  }
}

TEST(HostFormat, JobPolicyAndBackendTable) {
  host::JobParams p;
  p.trees = 2;
  p.window.max = 0;
  p.window.init = 0;
  host::set_vector_shape(p, Format::fp16, 1500, 0);
  host::default_window(p);
  EXPECT_EQ(p.format, Format::fp16);
  EXPECT_EQ(p.elem_bytes, 2);
  EXPECT_EQ(host::default_max_elems(Format::fp16), proto::kDefaultPayloadBytes / 2);
  EXPECT_EQ(p.count, host::JobParams::count_for(1500, proto::kDefaultPayloadBytes / 2, 2));
  EXPECT_EQ(p.window.max, 6);  // floor(12 / T)
  EXPECT_EQ(p.window.init, 4);
  host::set_vector_shape(p, Format::fp32, 1500, 100);
  EXPECT_EQ(p.count, 100);
  EXPECT_EQ(host::backend_names(), "udp, tins, dpdk or xdp");
  for (const char* b : {"udp", "tins", "dpdk", "xdp"}) EXPECT_NE(host::find_backend(b), nullptr) << b;
  EXPECT_EQ(host::find_backend("rdma"), nullptr);
}

TEST(HostFormat, WorkerRefusesAnUnknownFormat) {
  const std::string d = scratch();
  {
    std::ofstream g(d + "/g.bin", std::ios::binary);
    const float x[4] = {1, 2, 3, 4};
    g.write(reinterpret_cast<const char*>(x), sizeof x);
    std::ofstream(d + "/fp8.json") << R"({"ports": 4, "max_elems": 362, "format": "fp8"})";
  }
  const std::string base =
      "worker --iface lo --mtu 1500 --job 1 --rank 0 --world 2 --agg-ip 127.0.0.2 "
      "--group-ip 239.9.9.9 --in " +
      d + "/g.bin --out " + d + "/never.bin ";
  expect_error(base + "--format fp8", "--format: unknown format 'fp8' (expected fp32, bf16 or fp16)");
  expect_error(base + "--format FP16", "--format: unknown format 'FP16'");
  expect_error(base + "--job-desc " + d + "/fp8.json", "unknown format 'fp8' (expected fp32, bf16 or fp16)");
  // The design's folder as the job description: its format, and one line for a folder without one.
  const std::string bf16 = design_dir("worker_bf16", Format::bf16);
  expect_error(base + "--job-desc " + bf16 + " --format fp16", "--format fp16, but the design's FORMAT is bf16");
  expect_error(base + "--job-desc " + d, "no config.json there");
  std::ifstream never(d + "/never.bin");
  EXPECT_FALSE(never.good()) << "nothing written";
}

}  // namespace
}  // namespace panama
