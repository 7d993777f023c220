// The generator's command line as tools.md fixes it: outputs, determinism, one-line errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <array>
#include <unistd.h>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config.h"

#include "gen_cli_util.h"

namespace fs = std::filesystem;

namespace {

using gen_cli::expect_module;
using gen_cli::expect_regenerates_identically;
using gen_cli::GenRun;
using gen_cli::run_gen;
using gen_cli::scratch;
using gen_cli::slurp;

}  // namespace

TEST(GenCli, WritesTheDocumentedFiles) {
  const fs::path d = scratch("files");
  ASSERT_EQ(run_gen("--ports 4 --gbps 10 --mhz 200 --module addtree --out " + d.string()).rc, 0);
  for (const char* f : {"panama_fpadd.v", "panama_addtree.v", "filelist.f", "config.json"})
    EXPECT_TRUE(fs::exists(d / f)) << f;
  EXPECT_EQ(slurp(d / "filelist.f"), "panama_fpadd.v\npanama_addtree.v\n");
  const std::string cfg = slurp(d / "config.json");
  for (const char* k :
       {"\"ports\"", "\"gbps\"", "\"mhz\"", "\"format\"", "\"elem_bytes\"", "\"subnormals\"", "\"contexts\"",
        "\"max_elems\"", "\"buffer_bytes\"", "\"bus_bits\"", "\"bypass_bytes\"", "\"lanes\"", "\"top\"",
        "\"addtree_latency\"", "\"agg_latency\"", "\"bypass_latency\"", "\"resources\""})
    EXPECT_NE(cfg.find(k), std::string::npos) << k;
  EXPECT_NE(cfg.find("\"top\": \"panama_addtree\""), std::string::npos);
  fs::remove_all(d);
}

TEST(GenCli, RegeneratingGivesIdenticalFilesAndNoOutputPathInBanner) {
  const fs::path a = scratch("a"), b = scratch("b");
  ASSERT_NO_FATAL_FAILURE(
      expect_regenerates_identically("--ports 5 --gbps 25 --mhz 300 --format bf16 --module addtree --out ", a, b));
  const std::string v = slurp(a / "panama_addtree.v");
  EXPECT_EQ(v.rfind("// panama_addtree:", 0), 0u);
  EXPECT_NE(v.find("// Command: panama-gen --ports 5 --gbps 25 --mhz 300 --format bf16"), std::string::npos);
  fs::remove_all(a);
  fs::remove_all(b);
}

TEST(GenCli, PrefixNamesModulesAndFiles) {
  const fs::path d = scratch("prefix");
  ASSERT_EQ(run_gen("--ports 3 --gbps 10 --mhz 200 --prefix acc0 --module addtree --out " + d.string()).rc, 0);
  expect_module(d, "acc0_addtree", "acc0_fpadd u_");
  fs::remove_all(d);
}

// The written config.json, read back as the model and the testbenches read it, describes the same
// design: parsing the file and writing it again gives the file, and its derived fields are the
// ones tools.md and accelerator.md define (computed here by hand, not by the generator).
TEST(GenCli, ConfigJsonOnDiskReadsBackToItself) {
  const fs::path d = scratch("json");
  ASSERT_EQ(run_gen("--ports 6 --gbps 25 --mhz 312.5 --format fp16 --subnormals ftz --contexts 3 --max-elems 100 "
                    "--prefix acc --module addtree --out " +
                    d.string())
                .rc,
            0);
  const nlohmann::json on_disk = nlohmann::json::parse(slurp(d / "config.json"));
  EXPECT_EQ(panama::Config::from_json(on_disk).to_json(), on_disk);
  EXPECT_EQ(on_disk.at("bus_bits"), 128);  // 25e9 / 312.5e6 = 80 bits -> 128
  EXPECT_EQ(on_disk.at("lanes"), 8);       // 128 / 16
  EXPECT_EQ(on_disk.at("elem_bytes"), 2);
  EXPECT_EQ(on_disk.at("max_elems"), 100);
  EXPECT_EQ(on_disk.at("buffer_bytes"), 65536);
  EXPECT_EQ(on_disk.at("bypass_bytes"), 32768);
  EXPECT_EQ(on_disk.at("top"), "acc_addtree");
  fs::remove_all(d);
}

// The full accelerator (--module top): every file named in filelist.f exists, every Verilog file
// written is named there exactly once, each starts with its banner, and the register map is there.
TEST(GenCli, TopWritesItsFilesAndRegisterMap) {
  const fs::path d = scratch("top");
  ASSERT_EQ(run_gen("--ports 3 --gbps 10 --mhz 200 --contexts 2 --out " + d.string()).rc, 0);
  for (const char* f : {"filelist.f", "config.json", "regmap.json", "regmap.h", "regmap.md"})
    EXPECT_TRUE(fs::exists(d / f)) << f;
  std::istringstream list(slurp(d / "filelist.f"));
  std::vector<std::string> listed;
  for (std::string line; std::getline(list, line);) listed.push_back(line);
  ASSERT_FALSE(listed.empty());
  for (const auto& f : listed) {
    ASSERT_TRUE(fs::exists(d / f)) << f;
    EXPECT_EQ(std::count(listed.begin(), listed.end(), f), 1) << f;
  }
  for (const auto& e : fs::directory_iterator(d)) {
    const std::string name = e.path().filename().string();
    if (e.path().extension() != ".v") continue;
    EXPECT_NE(std::find(listed.begin(), listed.end(), name), listed.end()) << name << " not in filelist.f";
    const std::string v = slurp(e.path());
    EXPECT_EQ(v.rfind("// " + e.path().stem().string() + ":", 0), 0u) << name;
    EXPECT_NE(v.find("// Command: panama-gen --ports 3 --gbps 10 --mhz 200"), std::string::npos) << name;
    EXPECT_NE(v.find("module " + e.path().stem().string()), std::string::npos) << name;
  }
  const nlohmann::json cfg = nlohmann::json::parse(slurp(d / "config.json"));
  EXPECT_EQ(cfg.at("top"), "panama_top");
  EXPECT_EQ(listed.back(), "panama_top.v");  // dependency order: the top comes last
  EXPECT_GT(cfg.at("agg_latency").get<int>(), cfg.at("addtree_latency").get<int>());
  EXPECT_GT(cfg.at("bypass_latency").get<int>(), 0);
  EXPECT_EQ(nlohmann::json::parse(slurp(d / "regmap.json")).at("ports"), 3);
  fs::remove_all(d);
}

TEST(GenCli, TopRegeneratesIdentically) {
  const fs::path a = scratch("ta"), b = scratch("tb");
  ASSERT_NO_FATAL_FAILURE(
      expect_regenerates_identically("--ports 5 --gbps 25 --mhz 250 --format bf16 --contexts 3 --out ", a, b));
  fs::remove_all(a);
  fs::remove_all(b);
}

// Fixed blocks (rtl/*.v, docs/generator.md): copied under the prefix, with the tools.md banner, the
// configuration's parameter defaults and the shared constants inlined; the include is written
// beside them but is not a compilation unit.
TEST(GenCli, FixedBlocksArePrefixedAndSelfContained) {
  const fs::path d = scratch("fixed");
  ASSERT_EQ(run_gen("--ports 3 --gbps 25 --mhz 200 --format fp16 --max-elems 100 --prefix acc0 --out " + d.string()).rc,
            0);
  EXPECT_EQ(slurp(d / "filelist.f"),
            "acc0_fpadd.v\nacc0_addtree.v\nacc0_parser.v\nacc0_regs.v\n"
            "acc0_port_bypass.v\nacc0_port_alloc.v\nacc0_port_admit.v\nacc0_port_queues.v\nacc0_port.v\n"
            "acc0_sched.v\nacc0_core.v\nacc0_top.v\n");
  // The top only names the ports of the core (packed streams, for shells) and sets its parameters.
  const std::string top = slurp(d / "acc0_top.v");
  EXPECT_NE(top.find("acc0_core #(\n"), std::string::npos);
  EXPECT_NE(top.find(") u_core ("), std::string::npos);
  const std::string p = slurp(d / "acc0_parser.v");
  EXPECT_EQ(p.rfind("// acc0_parser: ", 0), 0u);
  EXPECT_NE(p.find("// Generated by panama-gen"), std::string::npos);
  EXPECT_NE(p.find("module acc0_parser #("), std::string::npos);
  EXPECT_EQ(p.find("panama_"), std::string::npos);
  EXPECT_EQ(p.find("`include \""), std::string::npos);
  EXPECT_EQ(p.find("--out"), std::string::npos);
  // 25 Gbit/s at 200 MHz: 128-bit bus; fp16: 2-byte elements.
  EXPECT_NE(p.find("parameter DATA_W = 128,"), std::string::npos);
  EXPECT_NE(p.find("parameter ELEM_BYTES = 2,"), std::string::npos);
  EXPECT_NE(p.find("parameter MAX_ELEMS = 100\n"), std::string::npos);
  // wire-format.md: VID at byte 50, DSCP 56; accelerator register map: CTX_JID at 0x08.
  EXPECT_NE(p.find("localparam integer OFF_VID = 50;"), std::string::npos);
  EXPECT_NE(p.find("localparam [5:0] AGG_DSCP = 6'd56;"), std::string::npos);
  EXPECT_NE(p.find("localparam integer RM_O_CTX_JID = 8;"), std::string::npos);
  const std::string h = slurp(d / "acc0_defs.vh");
  EXPECT_NE(h.find("localparam integer OFF_VID = 50;"), std::string::npos);
  // The port is a fixed block too: its defaults are the configuration's, it hands the parser its
  // own parameters, and the core sets every one of them at the instance.
  const std::string port = slurp(d / "acc0_port.v");
  EXPECT_NE(port.find("module acc0_port #("), std::string::npos);
  EXPECT_EQ(port.find("panama_"), std::string::npos);
  EXPECT_EQ(port.find("`include \""), std::string::npos);
  EXPECT_NE(port.find("parameter ELEM_BYTES = 2,"), std::string::npos);
  EXPECT_NE(port.find("parameter MAX_ELEMS = 100,"), std::string::npos);
  EXPECT_NE(port.find("acc0_parser #(.DATA_W(W), .DESC_STAGES(DESC_STAGES), .ELEM_BYTES(ELEM_BYTES), "
                      ".MAX_ELEMS(MAX_ELEMS)) u_parser"),
            std::string::npos);
  // The core is a fixed block (rtl/panama_core.v): the configuration's defaults, handed on.
  const std::string core = slurp(d / "acc0_core.v");
  EXPECT_NE(core.find("module acc0_core #("), std::string::npos);
  EXPECT_EQ(core.find("panama_"), std::string::npos);
  EXPECT_NE(core.find("parameter ELEM_BYTES = 2,"), std::string::npos);
  EXPECT_NE(core.find("parameter MAX_ELEMS = 100,"), std::string::npos);
  EXPECT_NE(core.find("acc0_port #(\n        .CONTEXTS(CONTEXTS)"), std::string::npos);
  // The scheduler (rtl/panama_sched.v): 264-byte frames are 17 beats, 5 bits; an m_agg FIFO of
  // 17 + 4 + 6 beats rounded up to 32.
  const std::string s = slurp(d / "acc0_sched.v");
  EXPECT_NE(s.find("module acc0_sched #("), std::string::npos);
  EXPECT_EQ(s.find("panama_"), std::string::npos);
  EXPECT_EQ(s.find("`include \""), std::string::npos);
  EXPECT_NE(s.find("parameter PORTS = 3,"), std::string::npos);
  EXPECT_NE(s.find("parameter BEAT_W = 5,"), std::string::npos);
  EXPECT_NE(s.find("parameter FIFO_DEPTH = 32,"), std::string::npos);
  EXPECT_NE(s.find("acc0_addtree u_addtree ("), std::string::npos);
  // The top sets every core parameter at the instance, with the configuration's values (17-beat
  // frames, so the core derives the scheduler's BEAT_W of 5).
  const size_t si = top.find("acc0_core #(\n"), se = top.find(") u_core (", si);
  ASSERT_NE(si, std::string::npos);
  ASSERT_NE(se, std::string::npos);
  const std::string inst = top.substr(si, se - si);
  for (const char* v :
       {".PORTS(3)", ".DATA_W(128)", ".ELEM_BYTES(2)", ".MAX_ELEMS(100)", ".FRAME_BEATS(17)", ".FIFO_DEPTH(32)"})
    EXPECT_NE(inst.find(v), std::string::npos) << v << " in " << inst;
  EXPECT_NE(core.find(".ADDR_W(BW), .BEAT_W(NB)"), std::string::npos);
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
                      "--ports 4 --gbps 0 --mhz 200", "--ports 4 --gbps -10 --mhz 200", "--ports 4 --gbps 10 --mhz 0",
                      "--ports 4 --gbps 10 --mhz -5", "--ports 4 --gbps 1000 --mhz 100",
                      "--ports 4 --gbps 10 --mhz 200 --format fp64", "--ports 4 --gbps 10 --mhz 200 --subnormals daz",
                      "--ports 4 --gbps 10", "--gbps 10 --mhz 200", "--ports four --gbps 10 --mhz 200",
                      "--ports 4 --gbps ten --mhz 200", "--ports 4 --gbps 10 --mhz 200 --contexts 0",
                      "--ports 4 --gbps 10 --mhz 200 --max-elems 0", "--ports 4 --gbps 10 --mhz 200 --max-elems 16372",
                      "--ports 4 --gbps 10 --mhz 200 --contexts 64", "--ports 4 --gbps 10 --mhz 200 --module mux",
                      "--ports 4 --gbps 10 --mhz 200 --bogus 1",
                      // The same checks hold for the full accelerator (the default module).
                      "--ports 4 --gbps 10 --mhz 200 --module top --contexts 0",
                      "--ports 4 --gbps 10 --mhz 200 --module top --buffer-kib 1",
                      "--ports 257 --gbps 10 --mhz 200 --module top"));

// config.json's resource estimate is per module (docs/rtl-timing.md "Resource estimate"): every module
// scripts/timing synthesizes has an entry, with its count in the top, and the top's totals are
// the sum of the blocks it instantiates (each entry includes its submodules).
TEST(GenCli, ResourceEstimateHasEveryModuleAndAddsUp) {
  for (const char* args : {"--ports 4 --gbps 10 --mhz 200", "--ports 8 --gbps 100 --mhz 250 --format bf16",
                           "--ports 3 --gbps 10 --mhz 200 --sum exact"}) {
    SCOPED_TRACE(args);
    const fs::path d = scratch("est");
    ASSERT_EQ(run_gen(std::string(args) + " --out " + d.string()).rc, 0);
    const auto cfg = nlohmann::json::parse(slurp(d / "config.json"));
    const auto& r = cfg.at("resources");
    const auto& m = r.at("modules");
    std::istringstream fl(slurp(d / "filelist.f"));
    for (std::string f; std::getline(fl, f);) {
      const std::string name = f.substr(std::string("panama_").size(), f.size() - std::string("panama_.v").size());
      if (name == "top" || name == "core") continue;
      EXPECT_TRUE(m.contains(name)) << name;
    }
    const long n = cfg.at("ports").get<long>();
    EXPECT_EQ(m.at("port").at("instances").get<long>(), n);
    EXPECT_EQ(m.at("parser").at("instances").get<long>(), n);
    auto sum = [&](const char* k) {
      return n * m.at("port").at(k).get<double>() + m.at("sched").at(k).get<double>() +
             m.at("regs").at(k).get<double>();
    };
    EXPECT_EQ(r.at("luts").get<double>(), sum("luts"));
    EXPECT_EQ(r.at("ffs").get<double>(), sum("ffs"));
    EXPECT_EQ(r.at("lutram_sites").get<double>(), sum("lutram_sites"));
    EXPECT_EQ(r.at("bram36").get<double>(), std::ceil(sum("bram36")));
    // Each entry includes what it instantiates.
    EXPECT_GT(m.at("sched").at("luts").get<long>(), m.at("addtree").at("luts").get<long>());
    EXPECT_GT(m.at("port").at("luts").get<long>(), m.at("parser").at("luts").get<long>());
    if (m.contains("fpadd")) {
      EXPECT_EQ(m.at("addtree").at("luts").get<long>(),
                m.at("fpadd").at("instances").get<long>() * m.at("fpadd").at("luts").get<long>());
    }
    fs::remove_all(d);
  }
}
