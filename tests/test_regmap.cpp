// The register map: layout invariants, the generated files, and the model's register file
// implementing it (enable checks, write protection, counter latching and saturation).
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "blocks.h"
#include "regmap.h"

using namespace panama;

namespace {

Config make(int ports, int contexts = 8, const std::string& prefix = "panama") {
  Inputs in;
  in.ports = ports;
  in.gbps = 10;
  in.mhz = 200;
  in.contexts = contexts;
  in.prefix = prefix;
  in.max_elems = 64;
  return Config::derive(in);
}

std::string slurp(const std::string& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string tmpdir(const std::string& name) {
  const std::string d = std::string(::testing::TempDir()) + "/panama_regmap_" + name;
  std::system(("rm -rf '" + d + "' && mkdir -p '" + d + "'").c_str());
  return d;
}

}  // namespace

TEST(Regmap, CounterNamesAreTheCountersJsonKeys) {
  const std::vector<std::string> want = {"rx_frames",     "tx_frames",  "bypass_frames",  "agg_admitted",
                                         "result_passed", "runt",       "rx_error",       "malformed",
                                         "no_context",    "not_member", "overflow",       "bypass_overflow",
                                         "stale",         "incomplete", "count_mismatch", "timeout"};
  EXPECT_EQ(port_counter_names(), want);
}

TEST(Regmap, EveryRegisterHasItsOwnAlignedAddress) {
  for (int ports : {2, 4, 32, 33, 100, 256}) {
    for (int contexts : {1, 8, 20}) {
      const Config c = make(ports, contexts);
      const RegMap m = RegMap::from(c);
      EXPECT_EQ(m.member_words, (ports + 31) / 32);
      std::set<uint32_t> seen;
      auto add = [&](uint32_t a, const std::string& what) {
        EXPECT_EQ(a % 4, 0u) << what;
        EXPECT_LT(a, m.size) << what;
        EXPECT_TRUE(seen.insert(a).second) << what << " overlaps at " << a;
      };
      for (const auto& r : m.global_registers()) add(r.offset, r.name);
      for (int k = 0; k < contexts; ++k)
        for (const auto& r : m.context_registers()) {
          EXPECT_LT(r.offset, m.ctx_stride);
          add(m.ctx(k, r.offset), r.name);
        }
      for (int p = 0; p < ports; ++p)
        for (const auto& r : m.port_registers()) {
          EXPECT_LT(r.offset, m.port_stride);
          add(m.port_base + p * m.port_stride + r.offset, r.name);
        }
      // 16 counters x lo/hi per port, a lo/hi pair for both context counters, agg_tx_frames.
      EXPECT_EQ(m.port_registers().size(), 32u);
      EXPECT_EQ(m.port_counter_hi(ports - 1, kTimeout), m.port_base + (ports - 1) * m.port_stride + 15 * 8 + 4);
      EXPECT_EQ(m.size & (m.size - 1), 0u);  // a power of two
    }
  }
}

TEST(Regmap, FilesAreDeterministicAndConsistent) {
  const Config c = make(33, 4, "acc");
  const std::string a = tmpdir("a"), b = tmpdir("b");
  write_regmap(c, a);
  write_regmap(c, b);
  for (const char* f : {"regmap.json", "regmap.h", "regmap.md"}) {
    const std::string x = slurp(a + "/" + f);
    EXPECT_FALSE(x.empty()) << f;
    EXPECT_EQ(x, slurp(b + "/" + f)) << f;
    EXPECT_EQ(x.find(a), std::string::npos) << f << " names the output path";
  }
  const auto j = nlohmann::json::parse(slurp(a + "/regmap.json"));
  const RegMap m = RegMap::from(c);
  EXPECT_EQ(j["ports"], 33);
  EXPECT_EQ(j["contexts"], 4);
  EXPECT_EQ(j["context_block"]["base"], m.ctx_base);
  EXPECT_EQ(j["port_block"]["base"], m.port_base);
  EXPECT_EQ(j["context_block"]["registers"].size(), m.context_registers().size());
  std::map<std::string, uint32_t> g;
  for (const auto& r : j["global"]) g[r["name"]] = r["offset"];
  EXPECT_EQ(g.at("AGG_PORT"), RegMap::kAggPort);
  EXPECT_EQ(g.at("AGG_TX_FRAMES_LO"), RegMap::kAggTxFramesLo);
  for (const auto& r : j["global"])
    if (r["name"] == "AGG_PORT") {
      EXPECT_EQ(r["reset"], 9056);
    }
  const std::string md = slurp(a + "/regmap.md");
  EXPECT_NE(md.find("CTX_MEMBERS1"), std::string::npos);
  EXPECT_NE(md.find("PORT_COUNT_MISMATCH_LO"), std::string::npos);
}

// The C header compiles and its macros give the same addresses as RegMap.
TEST(Regmap, CHeaderMatchesTheMap) {
  const Config c = make(40, 3, "acc");
  const RegMap m = RegMap::from(c);
  const std::string d = tmpdir("c");
  write_regmap(c, d);
  std::ofstream prog(d + "/t.c");
  prog << "#include <stdio.h>\n#include \"regmap.h\"\nint main(void) {\n"
       << "  printf(\"%u %u %u %u %u %u %u\\n\", (unsigned)ACC_CTX_ADDR(2, ACC_CTX_JID),"
       << " (unsigned)ACC_CTX_ADDR(1, ACC_CTX_MEMBERS(1)), (unsigned)ACC_PORT_ADDR(39, ACC_PORT_TIMEOUT_HI),"
       << " (unsigned)ACC_AGG_PORT, (unsigned)ACC_NUM_PORTS, (unsigned)ACC_CTX_ADDR(0, ACC_CTX_EXPECTED_VID),"
       << " (unsigned)ACC_PORT_ADDR(3, ACC_PORT_RX_FRAMES_LO));\n  return 0;\n}\n";
  prog.close();
  ASSERT_EQ(
      std::system(("cc -std=c99 -Wall -Werror -o '" + d + "/t' '" + d + "/t.c' && '" + d + "/t' > '" + d + "/out.txt'")
                      .c_str()),
      0);
  std::ostringstream want;
  want << m.ctx(2, RegMap::kCtxJid) << " " << m.ctx_members(1, 1) << " " << m.port_counter_hi(39, kTimeout) << " "
       << RegMap::kAggPort << " 40 " << m.ctx(0, RegMap::kCtxExpectedVid) << " " << m.port_counter_lo(3, kRxFrames)
       << "\n";
  EXPECT_EQ(slurp(d + "/out.txt"), want.str());
}

// ---------------------------------------------------------------------------------------------
// The model's register file implements the map.

class RegFileTest : public ::testing::Test {
 protected:
  RegFileTest() : cfg(make(40, 3)), regs(std::make_unique<model::RegFile>(name().c_str(), cfg)), m(regs->map()) {}
  static std::string name() {
    static int n = 0;
    return "regs" + std::to_string(n++);
  }
  void setup_ctx(int c, uint16_t jid, std::vector<int> members, bool upstream = false, int up = 0) {
    regs->write(m.ctx(c, RegMap::kCtxJid), jid);
    regs->write(m.ctx(c, RegMap::kCtxMode), upstream ? 1 : 0);
    regs->write(m.ctx(c, RegMap::kCtxUpstreamPort), static_cast<uint32_t>(up));
    std::vector<uint32_t> w(m.member_words, 0);
    for (int p : members) w[p / 32] |= 1u << (p % 32);
    for (int k = 0; k < m.member_words; ++k) regs->write(m.ctx_members(c, k), w[k]);
  }
  uint32_t status(int c) { return regs->read(m.ctx(c, RegMap::kCtxStatus)); }
  Config cfg;
  std::unique_ptr<model::RegFile> regs;
  RegMap m;
};

TEST_F(RegFileTest, IdentificationAndReadOnlyInfo) {
  EXPECT_EQ(regs->read(RegMap::kId), 0x50414E41u);
  EXPECT_EQ(regs->read(RegMap::kPorts), 40u);
  EXPECT_EQ(regs->read(RegMap::kContexts), 3u);
  EXPECT_EQ(regs->read(RegMap::kBusBits), 64u);
  EXPECT_EQ(regs->read(RegMap::kAggPort), 9056u);
  regs->write(RegMap::kPorts, 7);
  EXPECT_EQ(regs->read(RegMap::kPorts), 40u);
}

TEST_F(RegFileTest, EnableChecks) {
  setup_ctx(0, 7, {});
  regs->write(m.ctx(0, RegMap::kCtxCtrl), 1);
  EXPECT_EQ(status(0), RegMap::kErrNoMembers);

  setup_ctx(0, 7, {1, 35}, true, 35);
  regs->write(m.ctx(0, RegMap::kCtxCtrl), 1);
  EXPECT_EQ(status(0), RegMap::kErrUpstreamMember);

  setup_ctx(0, 7, {1, 35}, true, 40);
  regs->write(m.ctx(0, RegMap::kCtxCtrl), 1);
  EXPECT_EQ(status(0), RegMap::kErrUpstreamRange);

  setup_ctx(0, 7, {1, 35}, true, 3);
  regs->write(m.ctx(0, RegMap::kCtxCtrl), 1);
  EXPECT_EQ(status(0), RegMap::kStEnabled);
  EXPECT_EQ(regs->find_context(7, 0), 0);

  setup_ctx(1, 7, {2});  // same (JID, TID) as the enabled context 0
  regs->write(m.ctx(1, RegMap::kCtxCtrl), 1);
  EXPECT_EQ(status(1), RegMap::kErrDuplicate);
  EXPECT_EQ(regs->find_context(7, 0), 0);
  regs->write(m.ctx(1, RegMap::kCtxTid), 1);
  regs->write(m.ctx(1, RegMap::kCtxCtrl), 1);
  EXPECT_EQ(status(1), RegMap::kStEnabled);
  EXPECT_EQ(regs->find_context(7, 1), 1);
}

TEST_F(RegFileTest, FieldsWritableOnlyWhileDisabledAndEnableResetsVid) {
  setup_ctx(0, 7, {0, 1});
  regs->write(m.ctx(0, RegMap::kCtxCtrl), 1);
  regs->ctx(0).expected_vid = 42;
  regs->write(m.ctx(0, RegMap::kCtxJid), 8);
  EXPECT_EQ(regs->read(m.ctx(0, RegMap::kCtxJid)), 7u);
  EXPECT_TRUE(status(0) & RegMap::kErrWriteEnabled);
  regs->write(RegMap::kAggPort, 1234);  // refused while a context is enabled
  EXPECT_EQ(regs->read(RegMap::kAggPort), 9056u);
  regs->write(m.ctx(0, RegMap::kCtxCtrl), 0);
  EXPECT_EQ(status(0), 0u);
  regs->write(m.ctx(0, RegMap::kCtxJid), 8);
  EXPECT_EQ(regs->read(m.ctx(0, RegMap::kCtxJid)), 8u);
  regs->write(m.ctx(0, RegMap::kCtxCtrl), 1);
  EXPECT_EQ(regs->read(m.ctx(0, RegMap::kCtxExpectedVid)), 0u);
  // Member bits of ports that do not exist (40..63) read as zero.
  regs->write(m.ctx(0, RegMap::kCtxCtrl), 0);
  regs->write(m.ctx_members(0, 1), 0xFFFFFFFFu);
  EXPECT_EQ(regs->read(m.ctx_members(0, 1)), 0xFFu);
}

TEST_F(RegFileTest, MacAndIpRegisters) {
  regs->write(m.ctx(2, RegMap::kCtxGroupMacHi), 0x0100);
  regs->write(m.ctx(2, RegMap::kCtxGroupMacLo), 0x5e010700);
  regs->write(m.ctx(2, RegMap::kCtxGroupIp), 0xEF010700);
  EXPECT_EQ(regs->ctx(2).group_mac, (wire::Mac{0x01, 0x00, 0x5e, 0x01, 0x07, 0x00}));
  EXPECT_EQ(regs->ctx(2).group_ip, 0xEF010700u);
  EXPECT_EQ(regs->read(m.ctx(2, RegMap::kCtxGroupMacLo)), 0x5e010700u);
}

TEST_F(RegFileTest, CountersLatchHighWordAndSaturate) {
  regs->preset(5, kStale, 0x00000001FFFFFFFFull);
  EXPECT_EQ(regs->read(m.port_counter_lo(5, kStale)), 0xFFFFFFFFu);
  regs->count(5, kStale);                                   // carries into the high word after the low word was read
  EXPECT_EQ(regs->read(m.port_counter_hi(5, kStale)), 1u);  // the latched high word
  EXPECT_EQ(regs->read(m.port_counter_lo(5, kStale)), 0u);
  EXPECT_EQ(regs->read(m.port_counter_hi(5, kStale)), 2u);

  regs->preset(39, kRxFrames, UINT64_MAX - 1);
  regs->count(39, kRxFrames);
  regs->count(39, kRxFrames);
  regs->count(39, kRxFrames);
  EXPECT_EQ(regs->counter(39, kRxFrames), UINT64_MAX);
  EXPECT_EQ(regs->read(m.port_counter_lo(39, kRxFrames)), 0xFFFFFFFFu);
  EXPECT_EQ(regs->read(m.port_counter_hi(39, kRxFrames)), 0xFFFFFFFFu);

  regs->write(RegMap::kClearCounters, 1);
  EXPECT_EQ(regs->counter(39, kRxFrames), 0u);
}
