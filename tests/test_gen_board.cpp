// panama-gen --board / --list-boards (docs/fpga.md): files, prefix, config.json, one-line errors.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "gen_cli_util.h"

namespace fs = std::filesystem;

namespace {

using gen_cli::scratch;
using gen_cli::slurp;
using GenResult = gen_cli::GenRun;
GenResult gen(const std::string& args) { return gen_cli::run_gen(args); }

}  // namespace

TEST(GenBoard, ListsTheBoards) {
  const GenResult r = gen("--list-boards");
  EXPECT_EQ(r.rc, 0);
  EXPECT_NE(r.out.find("sume"), std::string::npos);
  EXPECT_NE(r.out.find("xc7vx690tffg1761-3"), std::string::npos);
  EXPECT_NE(r.out.find("u250"), std::string::npos);
  EXPECT_NE(r.out.find("xcu250-figd2104-2L-e"), std::string::npos);
}

TEST(GenBoard, WritesTheShellNextToTheCore) {
  const fs::path d = scratch("sume");
  ASSERT_EQ(gen("--board sume --out " + d.string()).rc, 0);
  for (const char* f :
       {"panama_top.v", "panama_sume_top.v", "panama_sume_ip_stubs.v", "panama_sume.xdc", "panama_cdc.xdc", "build.tcl",
        "board.tcl", "panama_axis_async_fifo.v", "panama_reset_sync.v", "regmap.json"})
    EXPECT_TRUE(fs::exists(d / f)) << f;
  const std::string fl = slurp(d / "filelist.f");
  // Core first, the board top last, the stubs listed so any tool elaborates the top.
  EXPECT_EQ(fl.rfind("panama_sume_top.v\n"), fl.size() - std::string("panama_sume_top.v\n").size());
  EXPECT_LT(fl.find("panama_top.v"), fl.find("panama_port_cdc.v"));
  EXPECT_NE(fl.find("panama_sume_ip_stubs.v"), std::string::npos);
  const std::string cfg = slurp(d / "config.json");
  EXPECT_NE(cfg.find("\"part\": \"xc7vx690tffg1761-3\""), std::string::npos);
  EXPECT_NE(cfg.find("\"top\": \"panama_sume_top\""), std::string::npos);
  EXPECT_NE(cfg.find("\"name\": \"sume\""), std::string::npos);
  // The board fixes the core: 4 ports of 10G at 200 MHz.
  EXPECT_NE(cfg.find("\"ports\": 4"), std::string::npos);
  EXPECT_NE(cfg.find("\"bus_bits\": 64"), std::string::npos);
  // Deterministic.
  const fs::path d2 = scratch("sume2");
  ASSERT_EQ(gen("--board sume --out " + d2.string()).rc, 0);
  for (const auto& e : fs::directory_iterator(d))
    EXPECT_EQ(slurp(e.path()), slurp(d2 / e.path().filename())) << e.path().filename();
  fs::remove_all(d);
  fs::remove_all(d2);
}

TEST(GenBoard, PrefixAppliesToTheShell) {
  const fs::path d = scratch("prefix");
  ASSERT_EQ(gen("--board u250 --prefix acc --out " + d.string()).rc, 0);
  gen_cli::expect_module(d, "acc_u250_top", "acc_board_shell #(");
  EXPECT_NE(slurp(d / "acc_board_shell.v").find("acc_core u_core"), std::string::npos);
  EXPECT_NE(slurp(d / "board.tcl").find("acc_u250_top"), std::string::npos);
  for (const auto& e : fs::directory_iterator(d)) {
    if (e.path().extension() == ".v") {
      EXPECT_EQ(slurp(e.path()).find("module panama_"), std::string::npos) << e.path().filename();
    }
  }
  fs::remove_all(d);
}

TEST(GenBoard, RefusesAConflictingCoreInOneLine) {
  const fs::path d = scratch("conflict");
  const GenResult r = gen("--board u250 --ports 3 --out " + d.string());
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("--board u250"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(d));
  const GenResult u = gen("--board nosuch --out " + d.string());
  EXPECT_NE(u.rc, 0);
  EXPECT_EQ(std::count(u.err.begin(), u.err.end(), '\n'), 1) << u.err;
  EXPECT_NE(u.err.find("sume"), std::string::npos) << u.err;
  EXPECT_FALSE(fs::exists(d));
}
