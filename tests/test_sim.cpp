// panama-sim replay --engine model: the conformance example, tshark, and the error contract
// (one line on stderr, non-zero exit, nothing half-written).
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "pcap_io.h"
#include "wire.h"

using namespace panama::wire;

namespace {

const std::string kConf = std::string(PANAMA_CONFORMANCE) + "/basic-4port";

struct Proc {
  int rc;
  std::string err;
};

Proc sh(const std::string& cmd, const std::string& errfile) {
  const int st = std::system((cmd + " 2> '" + errfile + "'").c_str());
  std::ifstream e(errfile);
  std::stringstream ss;
  ss << e.rdbuf();
  return {WIFEXITED(st) ? WEXITSTATUS(st) : -1, ss.str()};
}

bool exists(const std::string& p) { return std::ifstream(p).good(); }

std::string slurp(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<Bytes> frames(const std::string& p) {
  std::vector<Bytes> v;
  for (auto& r : read_pcap(p)) v.push_back(std::move(r.data));
  return v;
}

// Per context in order and as a multiset (contexts may interleave differently).
void expect_agg_equivalent(const std::vector<Bytes>& want, const std::vector<Bytes>& got) {
  auto by_ctx = [](const std::vector<Bytes>& v) {
    std::map<std::pair<uint16_t, uint8_t>, std::vector<Bytes>> m;
    for (const auto& f : v) {
      const AggHeader h = parse_header(f);
      m[{h.jid, h.tid}].push_back(f);
    }
    return m;
  };
  EXPECT_EQ(by_ctx(want), by_ctx(got));
  std::multiset<Bytes> a(want.begin(), want.end()), b(got.begin(), got.end());
  EXPECT_EQ(a, b);
}

// stderr without the RTL engine's progress lines ("verilating ... (first use; ...)"), which only
// a cold cache prints: the run is otherwise silent.
std::string without_build_progress(const std::string& err) {
  std::istringstream in(err);
  std::string out;
  for (std::string l; std::getline(in, l);)
    if (l.rfind("verilating ", 0) != 0) out += l + "\n";
  return out;
}

class Sim : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(exists(kConf + "/ctx.json")) << kConf << " not found (tests/conformance/ is part of the repository)";
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir = std::string(::testing::TempDir()) + "/panama_sim_" + info->name();
    std::system(("rm -rf '" + dir + "' && mkdir -p '" + dir + "'").c_str());
    const Proc g = sh(std::string(PANAMA_GEN) + " --ports 4 --gbps 10 --mhz 200 --out '" + dir + "/D' > /dev/null",
                      dir + "/gen.err");
    ASSERT_EQ(g.rc, 0) << g.err;
  }
  Proc replay(const std::string& out, const std::string& extra = "", const std::string& ctx = "",
              const std::string& in = "") {
    return sh(std::string(PANAMA_SIM) + " replay --rtl '" + dir + "/D' --engine " + engine + " --contexts '" +
                  (ctx.empty() ? kConf + "/ctx.json" : ctx) + "' --in-dir '" + (in.empty() ? kConf + "/in" : in) +
                  "' --out-dir '" + out + "' " + extra,
              dir + "/sim.err");
  }
  void expect_one_line_error(const Proc& r, const std::string& needle) {
    EXPECT_NE(r.rc, 0);
    ASSERT_FALSE(r.err.empty());
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
    EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
  }
  // Every frame and counter of the conformance example, from the engine under test.
  void check_conformance() {
    const std::string out = dir + "/OUT";
    const Proc r = replay(out);
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(without_build_progress(r.err), "") << r.err;
    for (int p = 0; p < 4; ++p) {
      char n[16];
      std::snprintf(n, sizeof n, "port%02d.pcap", p);
      const auto want = frames(kConf + "/expected/" + n), got = frames(out + "/" + n);
      EXPECT_EQ(want.size(), got.size()) << n;
      for (size_t i = 0; i < std::min(want.size(), got.size()); ++i)
        EXPECT_EQ(want[i], got[i]) << n << " frame " << i + 1;
    }
    expect_agg_equivalent(frames(kConf + "/expected/agg.pcap"), frames(out + "/agg.pcap"));
    EXPECT_EQ(nlohmann::json::parse(slurp(kConf + "/expected/counters.json")),
              nlohmann::json::parse(slurp(out + "/counters.json")));
  }
  // Replays the traffic into A plainly and into B with `timing` (seed, idle cycles,
  // back-pressure): timing changes, contents do not.
  void check_timing_keeps_contents(const std::string& timing) {
    const Proc a = replay(dir + "/A");
    const Proc b = replay(dir + "/B", timing);
    ASSERT_EQ(a.rc, 0) << a.err;
    ASSERT_EQ(b.rc, 0) << b.err;
    for (const char* n : {"port00.pcap", "port01.pcap", "port02.pcap", "port03.pcap"})
      EXPECT_EQ(frames(dir + "/A/" + n), frames(dir + "/B/" + n)) << n;
    expect_agg_equivalent(frames(dir + "/A/agg.pcap"), frames(dir + "/B/agg.pcap"));
    EXPECT_EQ(slurp(dir + "/A/counters.json"), slurp(dir + "/B/counters.json"));
  }
  std::string dir;
  std::string engine = "model";
};

}  // namespace

TEST_F(Sim, ConformanceBasic4Port) {
  check_conformance();
  const std::string out = dir + "/OUT";
  // The fixed key order of tools.md.
  const std::string text = slurp(out + "/counters.json");
  EXPECT_LT(text.find("\"ports\""), text.find("\"contexts\""));
  EXPECT_LT(text.find("\"rx_frames\""), text.find("\"tx_frames\""));
  EXPECT_LT(text.find("\"count_mismatch\""), text.find("\"timeout\""));
  EXPECT_LT(text.find("\"contexts\""), text.find("\"agg_tx_frames\""));
}

TEST_F(Sim, ConformanceWithIdleAndBackpressureKeepsContents) {
  check_timing_keeps_contents("--seed 7 --idle 30 --backpressure 50");
  if (HasFatalFailure()) return;
  // Same seed, same run: identical files, timestamps included.
  const Proc c = replay(dir + "/C", "--seed 7 --idle 30 --backpressure 50");
  ASSERT_EQ(c.rc, 0);
  EXPECT_EQ(slurp(dir + "/B/agg.pcap"), slurp(dir + "/C/agg.pcap"));
  EXPECT_NE(slurp(dir + "/A/agg.pcap"), slurp(dir + "/B/agg.pcap"));  // timestamps moved
}

TEST_F(Sim, TimestampsAreCyclesOverClock) {
  const Proc a = replay(dir + "/A");
  ASSERT_EQ(a.rc, 0) << a.err;
  const auto recs = read_pcap(dir + "/A/port00.pcap");
  ASSERT_FALSE(recs.empty());
  for (const auto& r : recs) EXPECT_EQ(r.ts_ns % 5, 0u);  // 200 MHz: whole 5 ns cycles
  EXPECT_GT(recs.back().ts_ns, recs.front().ts_ns);
}

TEST_F(Sim, TsharkReadsTheOutputs) {
  if (std::system("command -v tshark > /dev/null 2>&1") != 0) GTEST_SKIP() << "tshark not installed";
  ASSERT_EQ(replay(dir + "/A").rc, 0);
  const std::string cmd =
      "tshark -r '" + dir + "/A/agg.pcap' -T fields -e ip.dst -e udp.dstport > '" + dir + "/t.txt' 2> /dev/null";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  const std::string t = slurp(dir + "/t.txt");
  size_t lines = 0, mc = 0;
  std::istringstream in(t);
  for (std::string l; std::getline(in, l);) {
    ++lines;
    if (l == "239.1.7.0\t9056") ++mc;
  }
  EXPECT_EQ(lines, 27u);
  EXPECT_EQ(mc, 15u);  // the 15 completed vectors of context (7, 0)
  for (const char* n : {"port00.pcap", "port03.pcap"})
    EXPECT_EQ(std::system(("tshark -r '" + dir + "/A/" + n + "' > /dev/null 2>&1").c_str()), 0) << n;
}

// The Verilated RTL (verilated on first use) gives the same frames and counters.
TEST_F(Sim, RtlConformanceBasic4Port) {
  engine = "rtl";
  check_conformance();
}

// Idle receive cycles and transmit back-pressure change timing, never contents.
TEST_F(Sim, RtlWithIdleAndBackpressureKeepsContents) {
  engine = "rtl";
  check_timing_keeps_contents("--seed 5 --idle 30 --backpressure 50");
}

// compare runs both engines and reports equality on the conformance traffic.
TEST_F(Sim, CompareModelAndRtl) {
  const Proc r = sh(std::string(PANAMA_SIM) + " compare --rtl '" + dir + "/D' --contexts '" + kConf +
                        "/ctx.json' --in-dir '" + kConf + "/in' --out-dir '" + dir + "/CMP' > '" + dir + "/cmp.out'",
                    dir + "/cmp.err");
  EXPECT_EQ(r.rc, 0) << slurp(dir + "/cmp.out") << r.err;
  const std::string out = slurp(dir + "/cmp.out");
  EXPECT_NE(out.find("exact comparison"), std::string::npos) << out;
  EXPECT_NE(out.find("compare: equal"), std::string::npos) << out;
  EXPECT_TRUE(exists(dir + "/CMP/model/counters.json"));
  EXPECT_TRUE(exists(dir + "/CMP/rtl/counters.json"));
}

TEST_F(Sim, BadContextsFileLeavesNothing) {
  std::ofstream(dir + "/bad.json") << R"({"contexts": [{"jid": 7, "tid": 0, "members": [0, 9], "mode": "multicast",
      "group_mac": "01:00:5e:01:07:00", "group_ip": "239.1.7.0"}]})";
  expect_one_line_error(replay(dir + "/O", "", dir + "/bad.json"), "member port must be between 0 and 3");
  EXPECT_FALSE(exists(dir + "/O/counters.json"));
  std::ofstream(dir + "/bad2.json") << R"({"contexts": [], "extra": 1})";
  expect_one_line_error(replay(dir + "/O", "", dir + "/bad2.json"), "unknown field 'extra'");
  expect_one_line_error(replay(dir + "/O", "", dir + "/missing.json"), "cannot open");
}

TEST_F(Sim, CorruptPcapLeavesExistingOutputUntouched) {
  ASSERT_EQ(replay(dir + "/O").rc, 0);
  const std::string before = slurp(dir + "/O/counters.json");
  std::system(("mkdir -p '" + dir + "/in' && cp '" + kConf + "/in/'*.pcap '" + dir + "/in/' && chmod u+w '" + dir +
               "/in/'*.pcap && truncate -s -5 '" + dir + "/in/port02.pcap'")
                  .c_str());
  expect_one_line_error(replay(dir + "/O", "", "", dir + "/in"), "port02.pcap");
  EXPECT_EQ(slurp(dir + "/O/counters.json"), before);
  std::ofstream(dir + "/in/port01.pcap") << "this is not a pcap file at all, not even close";
  expect_one_line_error(replay(dir + "/O2", "", "", dir + "/in"), "port01.pcap");
  EXPECT_FALSE(exists(dir + "/O2/counters.json"));
}

TEST_F(Sim, GarbageFramesAreTrafficAndMissingFilesAreSilence) {
  std::system(("mkdir -p '" + dir + "/in'").c_str());
  write_pcap(dir + "/in/port01.pcap", {{Bytes(3, 1), 0}, {Bytes(70000, 0xee), 0}, {Bytes(64, 0xff), 0}});
  const Proc r = replay(dir + "/O", "", "", dir + "/in");
  ASSERT_EQ(r.rc, 0) << r.err;
  const auto c = nlohmann::json::parse(slurp(dir + "/O/counters.json"));
  EXPECT_EQ(c["ports"][1]["rx_frames"], 3);
  EXPECT_EQ(c["ports"][1]["runt"], 1);
  EXPECT_EQ(c["ports"][1]["bypass_overflow"], 1);  // longer than the bypass half
  EXPECT_EQ(c["ports"][1]["bypass_frames"], 1);
  EXPECT_EQ(c["ports"][0]["rx_frames"], 0);
  EXPECT_EQ(frames(dir + "/O/port01.pcap").size(), 1u);
  EXPECT_TRUE(frames(dir + "/O/port00.pcap").empty());
}

TEST_F(Sim, BadArguments) {
  expect_one_line_error(replay(dir + "/O", "--idle 100"), "--idle");
  expect_one_line_error(replay(dir + "/O", "", "", dir + "/no-such-dir"), "does not exist");
  const Proc r = sh(std::string(PANAMA_SIM) + " replay --rtl '" + dir + "/nowhere' --engine model --contexts '" +
                        kConf + "/ctx.json' --in-dir '" + kConf + "/in' --out-dir '" + dir + "/O'",
                    dir + "/e");
  expect_one_line_error(r, "config.json");
  const Proc m = sh(std::string(PANAMA_SIM) + " replay --rtl '" + dir + "/D' --engine model", dir + "/e2");
  expect_one_line_error(m, "required");
  EXPECT_FALSE(exists(dir + "/O/counters.json"));
}
