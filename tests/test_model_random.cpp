// Random scenarios checked by properties: loss, duplication, interleaved jobs, garbage and
// bypass traffic, idle cycles and backpressure. Every payload is a function of (port, job, VID),
// so the exact expected sum of any built frame is known without the model.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>

#include "test_model_util.h"

using namespace mt;
using model::InFrame;
using model::Result;

namespace {

struct Job {
  uint16_t jid;
  uint8_t tid;
  std::vector<int> members;
  bool multicast;
  int upstream_port;
};

// The payload port p sends for VID v of job j (also when the port is not a member: then the
// frame must be refused, and if it were summed the sum would differ).
std::vector<uint32_t> payload(int p, int j, uint32_t v, size_t count) {
  std::vector<uint32_t> e(count);
  std::mt19937 g(static_cast<uint32_t>(p * 1000003 + j * 7919 + static_cast<int>(v) * 31));
  std::uniform_real_distribution<float> d(-1000.0f, 1000.0f);
  for (auto& x : e) x = fbits(d(g));
  return e;
}

// The traffic of one random scenario: three jobs over the ports and what each port receives.
struct Scenario {
  std::vector<Job> jobs;
  wire::CtxFile ctx;
  std::vector<std::vector<InFrame>> in;
  std::vector<std::vector<Bytes>> bypass_in;  // the bypass frames each port receives, in order
};

Scenario make_scenario(std::mt19937_64& g, int ports, uint32_t timeout) {
  auto rnd = [&](int n) { return static_cast<int>(g() % static_cast<uint64_t>(n)); };
  Scenario sc;
  // Three jobs: two multicast, one upstream through the last port.
  sc.jobs = {{7, 0, {}, true, -1}, {9, 1, {}, true, -1}, {11, 0, {}, false, ports - 1}};
  for (auto& j : sc.jobs)
    for (int p = 0; p < ports; ++p)
      if (p != j.upstream_port && (rnd(3) != 0 || p <= 1)) j.members.push_back(p);
  for (const auto& j : sc.jobs) {
    sc.ctx.contexts.push_back(j.multicast ? mcast(j.jid, j.tid, j.members)
                                          : upstream(j.jid, j.tid, j.members, j.upstream_port));
    sc.ctx.contexts.back().timeout_cycles = timeout;
  }
  sc.in = inputs(ports);
  sc.bypass_in.resize(ports);
  std::map<std::pair<int, uint32_t>, size_t> count_of;  // (job, vid) -> COUNT
  for (int j = 0; j < 3; ++j)
    for (uint32_t v = 0; v < 40; ++v) count_of[{j, v}] = 1 + static_cast<size_t>(rnd(40));
  // Each port walks the VIDs of every job, interleaving jobs; sometimes loses or duplicates a
  // contribution, sometimes sends with the wrong COUNT, sometimes sends for a job it is not in.
  for (int p = 0; p < ports; ++p) {
    auto& in = sc.in[p];
    std::vector<uint32_t> next(3, 0);
    while (true) {
      std::vector<int> open;
      for (int j = 0; j < 3; ++j)
        if (next[j] < 40) open.push_back(j);
      if (open.empty()) break;
      const int j = open[rnd(static_cast<int>(open.size()))];
      const uint32_t v = next[j]++;
      // With timeouts: port 1 stops contributing to job 0 early, leaving the others' heads waiting.
      if (timeout > 0 && j == 0 && p == 1 && v > 30) continue;
      size_t cnt = count_of[{j, v}];
      const int r = rnd(100);
      if (r < 6) continue;                      // lost
      if (r < 9) cnt = cnt == 1 ? 2 : cnt - 1;  // COUNT mismatch
      const Bytes f = contrib(p, sc.jobs[j].jid, sc.jobs[j].tid, v, payload(p, j, v, cnt),
                              rnd(10) == 0 ? wire::kFlagFin : 0, rnd(8) == 0 ? 0b11 : 0b10);
      in.push_back({f, false});
      if (r >= 9 && r < 13) in.push_back({f, false});  // duplicate
      if (rnd(6) == 0) {                               // bypass traffic
        const Bytes b = bypass_frame(p, rnd(256), 14 + static_cast<size_t>(rnd(300)));
        in.push_back({b, false});
        sc.bypass_in[p].push_back(b);
      }
      if (rnd(40) == 0) in.push_back({Bytes(static_cast<size_t>(rnd(14)), 0x55), false});  // runt
      if (rnd(40) == 0) {  // malformed aggregation frame
        Bytes m = f;
        m.push_back(0);
        in.push_back({m, false});
      }
    }
  }
  return sc;
}

// Every built frame: a known job, VIDs in order per job, the exact sum over the members only.
// Returns the number of frames built per job.
std::vector<uint64_t> check_built_frames(const Config& c, const Scenario& sc, const Result& res, int ports) {
  std::map<int, int64_t> last_vid;
  std::vector<uint64_t> completed(3, 0);
  for (const auto& f : res.agg) {
    EXPECT_EQ(wire::check_wellformed(f.data, 4, c.max_elems), wire::Validity::ok);
    EXPECT_TRUE(wire::ipv4_checksum_ok(f.data));
    const auto h = wire::parse_header(f.data);
    int j = 0;
    while (j < 3 && sc.jobs[j].jid != h.jid) ++j;
    if (j == 3) {
      ADD_FAILURE() << "a built frame of an unknown job " << h.jid;
      continue;
    }
    EXPECT_EQ(f.context, j);
    EXPECT_GT(static_cast<int64_t>(h.vid), last_vid.count(j) ? last_vid[j] : -1) << "VID order, job " << j;
    last_vid[j] = h.vid;
    ++completed[j];
    std::vector<std::vector<uint32_t>> vals(ports);
    for (int p : sc.jobs[j].members) vals[p] = payload(p, j, h.vid, h.count);
    EXPECT_EQ(wire::payload_elems(f.data, 4), expected_sum(c, vals, sc.jobs[j].members))
        << "job " << j << " vid " << h.vid;
    EXPECT_EQ(h.rank, 0xFFFF);
    EXPECT_EQ(h.result(), sc.jobs[j].multicast);
  }
  for (int j = 0; j < 3; ++j) EXPECT_EQ(res.contexts[j].vectors_completed, completed[j]);
  EXPECT_EQ(res.agg_tx_frames, res.agg.size());
  return completed;
}

// Bypass frames: unchanged and in order on their own port (nothing else leaves mPP here); with
// bypass overflow, what leaves is a subsequence of what came in.
void check_bypass(const Scenario& sc, const Result& res, int ports) {
  for (int p = 0; p < ports; ++p) {
    ASSERT_EQ(res.ports[p].size(), sc.bypass_in[p].size() - res.port_counters[p][kBypassOverflow]) << "port " << p;
    size_t k = 0;
    for (const auto& o : res.ports[p]) {
      while (k < sc.bypass_in[p].size() && sc.bypass_in[p][k] != o.data) ++k;
      ASSERT_LT(k, sc.bypass_in[p].size()) << "port " << p << ": a frame out of order or altered";
      ++k;
    }
  }
}

// Every frame accounted for exactly once (rule 10 identities); each built frame consumed one
// head per member.
void check_accounting(const Scenario& sc, const Result& res, int ports, const std::vector<uint64_t>& completed) {
  for (int p = 0; p < ports; ++p) {
    const auto& v = res.port_counters[p];
    EXPECT_EQ(v[kRxFrames], sc.in[p].size());
    EXPECT_EQ(v[kRxFrames], v[kBypassFrames] + v[kResultPassed] + v[kAggAdmitted] + v[kRunt] + v[kRxError] +
                                v[kMalformed] + v[kNoContext] + v[kNotMember] + v[kOverflow] + v[kBypassOverflow]);
    EXPECT_EQ(v[kAggAdmitted], res.consumed_per_port[p] + v[kStale] + v[kIncomplete] + v[kCountMismatch] + v[kTimeout] +
                                   res.still_queued_per_port[p]);
    EXPECT_EQ(v[kTxFrames], res.ports[p].size());
  }
  uint64_t consumed = 0;
  for (auto x : res.consumed_per_port) consumed += x;
  uint64_t member_slots = 0;
  for (int j = 0; j < 3; ++j) member_slots += completed[j] * sc.jobs[j].members.size();
  EXPECT_EQ(consumed, member_slots);
}

void random_scenario(uint64_t seed, int ports, int idle, int bp, uint32_t timeout = 0, int buffer_kib = 64) {
  const Config c = cfg4(4, buffer_kib, 64, Format::fp32, ports);
  std::mt19937_64 g(seed);
  const Scenario sc = make_scenario(g, ports, timeout);
  model::Options o;
  o.seed = seed;
  o.idle_pct = idle;
  o.backpressure_pct = bp;
  const Result res = model::run_isolated(c, sc.ctx, sc.in, o);

  const auto completed = check_built_frames(c, sc, res, ports);
  check_bypass(sc, res, ports);
  check_accounting(sc, res, ports, completed);
  EXPECT_GT(res.agg.size(), 0u);
  // The scenario really exercised the recovery paths.
  uint64_t not_member = 0, recovered = 0, overflow = 0, timeouts = 0;
  for (const auto& v : res.port_counters) {
    not_member += v[kNotMember];
    recovered += v[kStale] + v[kIncomplete] + v[kCountMismatch];
    overflow += v[kOverflow] + v[kBypassOverflow];
    timeouts += v[kTimeout];
  }
  EXPECT_GT(not_member, 0u);
  EXPECT_GT(recovered, 0u);
  if (buffer_kib < 64) {
    EXPECT_GT(overflow, 0u);
  }
  if (timeout > 0) {
    EXPECT_GT(timeouts, 0u);
  }
}

}  // namespace

class ModelRandom : public ::testing::TestWithParam<int> {};

TEST_P(ModelRandom, Properties4Ports) { random_scenario(static_cast<uint64_t>(GetParam()), 4, 0, 0); }
TEST_P(ModelRandom, Properties5PortsIdleBackpressure) {
  random_scenario(static_cast<uint64_t>(GetParam()) + 100, 5, 30, 40);
}
TEST_P(ModelRandom, Properties33Ports) { random_scenario(static_cast<uint64_t>(GetParam()) + 200, 33, 10, 10); }

TEST_P(ModelRandom, PropertiesWithTimeouts) {
  random_scenario(static_cast<uint64_t>(GetParam()) + 300, 4, 20, 20, 3000);
}
TEST_P(ModelRandom, PropertiesSmallBuffersHeavyBackpressure) {
  // 3 KiB per port: contributions and bypass frames overflow; the identities still hold.
  random_scenario(static_cast<uint64_t>(GetParam()) + 400, 4, 0, 85, 0, 3);
}

INSTANTIATE_TEST_SUITE_P(Seeds, ModelRandom, ::testing::Values(1, 2, 3));
