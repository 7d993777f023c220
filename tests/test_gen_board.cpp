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
  ASSERT_EQ(gen("--board sume --insecure-dev-key --out " + d.string()).rc, 0);
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
  ASSERT_EQ(gen("--board sume --insecure-dev-key --out " + d2.string()).rc, 0);
  for (const auto& e : fs::directory_iterator(d))
    EXPECT_EQ(slurp(e.path()), slurp(d2 / e.path().filename())) << e.path().filename();
  fs::remove_all(d);
  fs::remove_all(d2);
}

TEST(GenBoard, PrefixAppliesToTheShell) {
  const fs::path d = scratch("prefix");
  ASSERT_EQ(gen("--board u250 --insecure-dev-key --prefix acc --out " + d.string()).rc, 0);
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
  const GenResult r = gen("--board u250 --insecure-dev-key --ports 3 --out " + d.string());
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

// --mgmt-*: the values land in the board top's parameters, config.json records them without the
// key, and the development key is announced on stderr.
TEST(GenBoard, ManagementOptionsSetTheTop) {
  const fs::path d = scratch("mgmt");
  const fs::path key = scratch("mgmt_key");
  std::ofstream(key) << "00112233445566778899aabbccddeeff\n";
  fs::permissions(key, fs::perms::owner_read | fs::perms::owner_write);
  const GenResult r =
      gen("--board sume --mgmt-ports 1,3 --mgmt-key " + key.string() +
          " --mgmt-ip 192.168.57.2 --mgmt-mac 02:11:22:33:44:55 --mgmt-udp-port 7000 --out " + d.string());
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.err.find("warning"), std::string::npos) << r.err;
  const std::string top = slurp(d / "panama_sume_top.v");
  // Key bytes 00 11 .. ff: SipHash k0 = bytes 0..7 little-endian in bits 63:0.
  for (const char* want : {"MGMT_PORTS = 4'b1010,", "MGMT_KEY = 128'hffeeddccbbaa99887766554433221100,",
                           "MGMT_MAC = 48'h021122334455,", "MGMT_IP = 32'hc0a83902,", "MGMT_UDP_PORT = 16'd7000 "})
    EXPECT_NE(top.find(want), std::string::npos) << want;
  const std::string cfg = slurp(d / "config.json");
  EXPECT_NE(cfg.find("\"ip\": \"192.168.57.2\""), std::string::npos) << cfg;
  EXPECT_NE(cfg.find("\"udp_port\": 7000"), std::string::npos) << cfg;
  EXPECT_EQ(cfg.find("ffeedd"), std::string::npos);
  EXPECT_EQ(cfg.find("00112233"), std::string::npos);
  for (const char* f : {"panama_mgmt_eth.v", "panama_mgmt_match.v", "panama_mgmt.v", "panama_siphash.v"})
    EXPECT_NE(slurp(d / "filelist.f").find(f), std::string::npos) << f;
  fs::remove_all(d);
  const GenResult dev = gen("--board sume --insecure-dev-key --out " + d.string());
  ASSERT_EQ(dev.rc, 0);
  EXPECT_NE(dev.err.find("warning: --insecure-dev-key"), std::string::npos) << dev.err;
  EXPECT_NE(slurp(d / "panama_sume_top.v").find("MGMT_KEY = 128'h0f0e0d0c0b0a09080706050403020100,"),
            std::string::npos);
  fs::remove_all(d);
  fs::remove(key);
}

// A secret never defaults to a public value: --board without --mgmt-key is a usage error unless
// --insecure-dev-key asks for the development key, and a key file others may read is refused.
TEST(GenBoard, NoPublicKeyByDefaultAndPrivateKeyFiles) {
  const fs::path d = scratch("mgmt_nokey");
  const GenResult none = gen("--board sume --out " + d.string());
  EXPECT_EQ(none.rc, 2) << none.err;
  EXPECT_EQ(std::count(none.err.begin(), none.err.end(), '\n'), 1) << none.err;
  EXPECT_NE(none.err.find("--mgmt-key"), std::string::npos) << none.err;
  EXPECT_NE(none.err.find("--insecure-dev-key"), std::string::npos) << none.err;
  EXPECT_FALSE(fs::exists(d));
  const fs::path key = scratch("mgmt_openkey");
  std::ofstream(key) << "00112233445566778899aabbccddeeff\n";
  fs::permissions(key, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read | fs::perms::others_read);
  const GenResult open = gen("--board sume --mgmt-key " + key.string() + " --out " + d.string());
  EXPECT_EQ(open.rc, 1) << open.err;
  EXPECT_EQ(std::count(open.err.begin(), open.err.end(), '\n'), 1) << open.err;
  EXPECT_NE(open.err.find("mode 644"), std::string::npos) << open.err;
  EXPECT_NE(open.err.find("chmod 600"), std::string::npos) << open.err;
  EXPECT_EQ(open.err.find("0011223344"), std::string::npos) << "the key must never be printed: " << open.err;
  EXPECT_FALSE(fs::exists(d));
  const GenResult both = gen("--board sume --insecure-dev-key --mgmt-key " + key.string() + " --out " + d.string());
  EXPECT_NE(both.rc, 0);
  fs::remove(key);
}

TEST(GenBoard, BadManagementOptionsFailInOneLine) {
  const fs::path d = scratch("mgmt_bad");
  const fs::path key = scratch("mgmt_badkey");
  std::ofstream(key) << "0011\n";
  fs::permissions(key, fs::perms::owner_read | fs::perms::owner_write);  // private: the content is what is wrong
  for (const std::string& args :
       {std::string("--mgmt-ports 4"), std::string("--mgmt-ports 0,0"), std::string("--mgmt-ports ''"),
        std::string("--mgmt-ip 10.0.0"), std::string("--mgmt-ip 224.0.0.1"),
        std::string("--mgmt-mac 01:00:5e:00:00:01"), std::string("--mgmt-mac 02:00:00:00:00"),
        std::string("--mgmt-udp-port 9056"), std::string("--mgmt-udp-port 70000"), "--mgmt-key " + key.string(),
        std::string("--mgmt-key /no/such/file")}) {
    // Without a key the development key must be asked for, or the run stops before these checks.
    const std::string dev = args.find("--mgmt-key") == std::string::npos ? " --insecure-dev-key" : "";
    const GenResult r = gen("--board sume" + dev + " " + args + " --out " + d.string());
    EXPECT_EQ(r.rc, 1) << args;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args << ": " << r.err;
    EXPECT_NE(r.err.find("--mgmt-"), std::string::npos) << args << ": " << r.err;
    EXPECT_FALSE(fs::exists(d)) << args;
  }
  const GenResult nb = gen("--ports 4 --gbps 10 --mhz 200 --mgmt-ports 1 --out " + d.string());
  EXPECT_NE(nb.rc, 0);
  EXPECT_NE(nb.err.find("needs --board"), std::string::npos) << nb.err;
  fs::remove(key);
}

// config.json "board"."shell" (what panama-host switch --shell simulates) says what the board top
// wires: the port that carries m_agg, the crossing FIFOs' depth, and the MAC user clock its XDC
// names.
TEST(GenBoard, ShellFactsMatchTheBoardTop) {
  for (const std::string b : {"sume", "u250"}) {
    const fs::path d = scratch("shell_" + b);
    ASSERT_EQ(gen("--board " + b + " --insecure-dev-key --out " + d.string()).rc, 0) << b;
    const std::string cfg = slurp(d / "config.json"), top = slurp(d / ("panama_" + b + "_top.v"));
    const std::string xdc = slurp(d / ("panama_" + b + ".xdc"));
    auto num_after = [](const std::string& text, const std::string& key) {
      const size_t at = text.find(key);
      return at == std::string::npos
                 ? std::string("missing")
                 : text.substr(at + key.size(), text.find_first_of(",)\n}", at + key.size()) - at - key.size());
    };
    EXPECT_EQ(num_after(cfg, "\"agg_port\": "), num_after(top, "parameter AGG_PORT = ")) << b;
    EXPECT_EQ(num_after(cfg, "\"fifo_aw\": "), num_after(top, ".FIFO_ADDR_W(")) << b;
    const std::string mhz = num_after(cfg, "\"mac_mhz\": ");
    EXPECT_NE(xdc.find("MAC user clock"), std::string::npos) << b;
    EXPECT_NE(xdc.find(mhz + " MHz"), std::string::npos) << b << ": XDC does not name a " << mhz << " MHz MAC clock";
    fs::remove_all(d);
  }
}

// --standalone: the switch functions in the shell (docs/fpga.md "Standalone"), set in the board
// top and recorded in config.json; without it the shell is the switch-attached one; it needs
// --board.
TEST(GenBoard, StandaloneSetsTheShell) {
  const fs::path d = scratch("standalone"), d0 = scratch("attached");
  ASSERT_EQ(gen("--board sume --insecure-dev-key --standalone --out " + d.string()).rc, 0);
  ASSERT_EQ(gen("--board sume --insecure-dev-key --out " + d0.string()).rc, 0);
  EXPECT_NE(slurp(d / "panama_sume_top.v").find("parameter STANDALONE = 1,"), std::string::npos);
  EXPECT_NE(slurp(d0 / "panama_sume_top.v").find("parameter STANDALONE = 0,"), std::string::npos);
  EXPECT_NE(slurp(d / "config.json").find("\"standalone\": true"), std::string::npos);
  EXPECT_NE(slurp(d0 / "config.json").find("\"standalone\": false"), std::string::npos);
  EXPECT_NE(slurp(d / "filelist.f").find("panama_l2sw.v\n"), std::string::npos);
  // The core's shape is written into the top: contexts and register-file address bits.
  const fs::path d2 = scratch("contexts");
  ASSERT_EQ(gen("--board sume --insecure-dev-key --contexts 3 --out " + d2.string()).rc, 0);
  EXPECT_NE(slurp(d2 / "panama_sume_top.v").find("parameter CONTEXTS = 3,"), std::string::npos);
  const GenResult r = gen("--ports 4 --gbps 10 --mhz 200 --standalone --out " + scratch("nob").string());
  EXPECT_NE(r.rc, 0);
  EXPECT_NE(r.err.find("--standalone needs --board"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  for (const auto& p : {d, d0, d2}) fs::remove_all(p);
}
