// Tests of `panama-host controller` (docs/host.md): the register-write list computed from a
// generator output's regmap.json, applied to the SystemC model's register file, gives the same
// context table as loading CTX.json (the LiveModel programs CTX.json as panama-sim does);
// reprogramming over an existing table; the list's text form; bad job descriptions.
// Each test runs in its own process (gtest_discover_tests): SystemC elaborates once per process.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "blocks.h"
#include "config.h"
#include "controller.h"
#include "ctx.h"
#include "live.h"

using namespace panama;
using namespace panama::host;

namespace {

const std::string kRtl = std::string(PANAMA_SOURCE_DIR) + "/rtl_out/p4_10g_200mhz";

Config design() {
  std::ifstream in(kRtl + "/config.json");
  return Config::from_json(nlohmann::json::parse(in));
}

const char* kCtxA = R"({ "agg_port": 9100, "contexts": [
  { "jid": 7, "tid": 0, "members": [0, 1, 2], "mode": "multicast",
    "group_mac": "01:00:5e:01:07:00", "group_ip": "239.1.7.0", "timeout_cycles": 5000 },
  { "jid": 7, "tid": 1, "members": [0, 2], "mode": "upstream", "upstream_port": 3,
    "src_mac": "02:aa:00:00:00:09", "src_ip": "10.0.0.253" },
  { "jid": 300, "tid": 255, "members": [3], "mode": "multicast",
    "group_mac": "01:00:5e:7f:00:01", "group_ip": "239.127.0.1" } ] })";

const char* kCtxB = R"({ "contexts": [
  { "jid": 9, "tid": 0, "members": [1, 3], "mode": "upstream", "upstream_port": 0,
    "src_mac": "02:bb:00:00:00:01", "src_ip": "10.1.2.3", "timeout_cycles": 77 },
  { "jid": 7, "tid": 0, "members": [0, 1, 2, 3], "mode": "multicast",
    "group_mac": "01:00:5e:01:07:01", "group_ip": "239.1.7.1" } ] })";

// Every readable configuration word: AGG_PORT and each context's registers but the counters.
template <typename Read>
std::vector<uint32_t> snapshot(const RegLayout& l, Read&& read) {
  std::vector<uint32_t> v{read(l.g("AGG_PORT"))};
  for (int c = 0; c < l.contexts; ++c)
    for (const auto& [name, off] : l.ctx)
      if (name.find("VECTORS") == std::string::npos) v.push_back(read(l.c(c, name)));
  return v;
}

std::vector<RegWrite> whole_table(const RegLayout& l, const wire::CtxFile& f) {
  ProgramPlan p;
  p.whole_table = true;
  p.agg_port = f.agg_port;
  for (size_t i = 0; i < f.contexts.size(); ++i) p.program.emplace_back(static_cast<int>(i), f.contexts[i]);
  return plan_writes(l, p);
}

TEST(HostController, RegmapJsonMatchesTheDesign) {
  const RegLayout l = load_regmap(kRtl);
  const RegMap m = RegMap::from(design());
  EXPECT_EQ(l.ports, 4);
  EXPECT_EQ(l.contexts, m.contexts);
  EXPECT_EQ(l.c(3, "CTX_JID"), m.ctx(3, RegMap::kCtxJid));
  EXPECT_EQ(l.c(2, "CTX_MEMBERS0"), m.ctx_members(2, 0));
  EXPECT_EQ(l.g("AGG_PORT"), RegMap::kAggPort);
  EXPECT_THROW(load_regmap("/nonexistent"), std::runtime_error);
  EXPECT_THROW(l.c(l.contexts, "CTX_JID"), std::runtime_error);
}

TEST(HostController, OfflineListEqualsCtxJsonLoading) {
  const Config cfg = design();
  const RegLayout l = load_regmap(kRtl);
  const wire::CtxFile a = wire::parse_ctx_text(kCtxA, cfg.in.ports, cfg.in.contexts);
  // The list goes through its text form, as it would to a board.
  const auto writes = parse_writes(format_writes(whole_table(l, a)));
  model::RegFile fresh("fresh", cfg);
  for (const auto& w : writes) fresh.write(w.addr, w.value);
  model::LiveModel ref(cfg, a);  // programs CTX.json as the simulators do
  const auto got = snapshot(l, [&](uint32_t x) { return fresh.read(x); });
  const auto want = snapshot(l, [&](uint32_t x) { return ref.reg_read(x); });
  EXPECT_EQ(got, want);
  // And the table read back equals the file.
  const auto t = read_table(l, [&](uint32_t x) { return fresh.read(x); });
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(table_json(t, 9100)["contexts"][1]["upstream_port"], 3);
  wire::CtxFile back;
  back.agg_port = 9100;
  for (const auto& s : t) back.contexts.push_back(s.second);
  EXPECT_EQ(wire::to_json(back), wire::to_json(a));
}

TEST(HostController, ReprogrammingAnEnabledTableEqualsLoadingTheNewOne) {
  const Config cfg = design();
  const RegLayout l = load_regmap(kRtl);
  const wire::CtxFile a = wire::parse_ctx_text(kCtxA, cfg.in.ports, cfg.in.contexts);
  const wire::CtxFile b = wire::parse_ctx_text(kCtxB, cfg.in.ports, cfg.in.contexts);
  model::RegFile rf("rf", cfg);
  for (const auto& w : whole_table(l, a)) rf.write(w.addr, w.value);
  // B reuses (7, 0) in another slot: the whole-table list disables every slot first.
  for (const auto& w : whole_table(l, b)) rf.write(w.addr, w.value);
  model::LiveModel ref(cfg, b);
  EXPECT_EQ(snapshot(l, [&](uint32_t x) { return rf.read(x); }),
            snapshot(l, [&](uint32_t x) { return ref.reg_read(x); }));
}

TEST(HostController, PartialPlans) {
  const Config cfg = design();
  const RegLayout l = load_regmap(kRtl);
  const wire::CtxFile a = wire::parse_ctx_text(kCtxA, cfg.in.ports, cfg.in.contexts);
  model::RegFile rf("rf", cfg);
  for (const auto& w : whole_table(l, a)) rf.write(w.addr, w.value);
  // Disable slot 1, then change slot 0's members while it is enabled (disable, write, enable).
  ProgramPlan p;
  p.disable = {1};
  wire::CtxEntry e = a.contexts[0];
  e.members = {1, 3};
  p.program.emplace_back(0, e);
  const auto w = plan_writes(l, p);
  EXPECT_EQ(w.front().addr, l.c(1, "CTX_CTRL"));
  EXPECT_EQ(w.front().value, 0u);
  EXPECT_EQ(w.back().addr, l.c(0, "CTX_CTRL"));
  EXPECT_EQ(w.back().value, 1u);
  for (const auto& x : w) rf.write(x.addr, x.value);
  const auto t = read_table(l, [&](uint32_t x) { return rf.read(x); });
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0].first, 0);
  EXPECT_EQ(t[0].second.members, (std::vector<int>{1, 3}));
  EXPECT_EQ(t[1].first, 2);
  // An enable the register file refuses (a duplicate (JID, TID)) shows in CTX_STATUS.
  ProgramPlan dup;
  dup.program.emplace_back(5, a.contexts[2]);
  for (const auto& x : plan_writes(l, dup)) rf.write(x.addr, x.value);
  EXPECT_EQ(rf.read(l.c(5, "CTX_STATUS")) & 1u, 0u);
  EXPECT_NE(rf.read(l.c(5, "CTX_STATUS")) & RegMap::kErrDuplicate, 0u);
}

TEST(HostController, BadPlansAndLists) {
  const RegLayout l = load_regmap(kRtl);
  ProgramPlan p;
  wire::CtxEntry e;
  e.members = {0, 4};
  p.program.emplace_back(0, e);
  EXPECT_THROW(plan_writes(l, p), std::runtime_error);  // port 4 of a 4-port design
  p.program[0].second.members = {0, 1};
  p.program[0].second.multicast = false;
  p.program[0].second.upstream_port = 1;
  EXPECT_THROW(plan_writes(l, p), std::runtime_error);  // upstream port is a member
  p.program[0].second.upstream_port = 2;
  p.program.emplace_back(8, p.program[0].second);
  EXPECT_THROW(plan_writes(l, p), std::runtime_error);  // slot 8 of 8
  EXPECT_THROW(parse_writes("0x10 zz\n"), std::runtime_error);
  EXPECT_THROW(parse_writes("0x10\n"), std::runtime_error);
  EXPECT_EQ(parse_writes("# c\n\nwrite 0x10 5 # x\n0x20 0x6\n").size(), 2u);
}

}  // namespace
