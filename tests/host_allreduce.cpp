// Tests of the host driver (docs/host.md): the DCTCP window, the protocol's frames, the switch
// chip, and all-reduce through the in-process stand-in built on the SystemC live model (several
// workers as threads, random tensors, outputs bit-identical and equal to the tree-order sum).
// Each test runs in its own process (gtest_discover_tests): SystemC elaborates once per process.
#include <gtest/gtest.h>

#include <cmath>
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <random>

#include <sys/wait.h>
#include <unistd.h>
#include <set>
#include <thread>

#include "afpacket.h"
#include "allreduce.h"
#include "config.h"
#include "loopback.h"
#include "ref_float.h"
#include "switch.h"

// Every operator new of this binary, counted (tests/host_alloc_count.cpp).
uint64_t host_test_allocations();

using namespace panama;
using namespace panama::host;

namespace {

// ---------------------------------------------------------------------------------------------
// Dctcp

TEST(HostDctcp, UnmarkedWindowsGrowByOneUpToMax) {
  WindowParams p;
  p.init = 4;
  p.max = 6;
  Dctcp d(p);
  EXPECT_EQ(d.allowed(), 4);
  for (int i = 0; i < 3; ++i) d.on_result(false);
  EXPECT_EQ(d.cwnd(), 4);  // a window is floor(cwnd) results
  d.on_result(false);
  EXPECT_EQ(d.cwnd(), 5);
  EXPECT_EQ(d.alpha(), 0);
  for (int i = 0; i < 5; ++i) d.on_result(false);
  EXPECT_EQ(d.cwnd(), 6);
  for (int i = 0; i < 6; ++i) d.on_result(false);
  EXPECT_EQ(d.cwnd(), 6);
  EXPECT_EQ(d.windows(), 3u);
}

TEST(HostDctcp, MarkedWindowUpdatesAlphaAndShrinks) {
  WindowParams p;
  p.init = 8;
  p.max = 64;
  Dctcp d(p);
  // Window of 8 results, 2 marked: F = 0.25, alpha = g F = 1/64, cwnd = 8 (1 - 1/128).
  for (int i = 0; i < 8; ++i) d.on_result(i < 2);
  EXPECT_DOUBLE_EQ(d.alpha(), 0.25 / 16);
  EXPECT_DOUBLE_EQ(d.cwnd(), 8 * (1 - 0.25 / 32));
  EXPECT_EQ(d.allowed(), 7);
  // Next window is 7 results, all marked: alpha = (15/16) a + 1/16.
  const double a = (15.0 / 16) * (0.25 / 16) + 1.0 / 16;
  const double c = 8 * (1 - 0.25 / 32) * (1 - a / 2);
  for (int i = 0; i < 7; ++i) d.on_result(true);
  EXPECT_DOUBLE_EQ(d.alpha(), a);
  EXPECT_DOUBLE_EQ(d.cwnd(), c);
}

TEST(HostDctcp, PersistentMarksConvergeToFloorAndAlphaToOne) {
  WindowParams p;
  p.init = 16;
  p.min = 2;
  Dctcp d(p);
  for (int i = 0; i < 5000; ++i) d.on_result(true);
  const uint64_t w = d.windows();
  while (d.windows() == w) d.on_result(true);  // end on a window boundary
  EXPECT_EQ(d.cwnd(), 2);
  EXPECT_GT(d.alpha(), 0.99);
  EXPECT_LE(d.alpha(), 1.0);
  // Unmarked windows then grow it again, one per window.
  for (int i = 0; i < 2; ++i) d.on_result(false);
  EXPECT_EQ(d.cwnd(), 3);
}

TEST(HostDctcp, DisabledKeepsTheWindow) {
  WindowParams p;
  p.init = 5;
  p.cc = false;
  Dctcp d(p);
  for (int i = 0; i < 100; ++i) d.on_result(true);
  EXPECT_EQ(d.cwnd(), 5);
  EXPECT_EQ(d.alpha(), 0);
}

// RFC 6298's estimator, worked by hand: first sample 100 ms: srtt 100, rttvar 50, wait 300.
// Second sample 100: rttvar 50 + (0 - 50) / 4 = 37.5, srtt 100, wait 250. Third sample 20:
// rttvar 37.5 + (80 - 37.5) / 4 = 48.125, srtt 100 - 80 / 8 = 90, wait 282.5.
TEST(HostStatusWait, FollowsTheRoundTripBetweenFloorAndCap) {
  StatusWait w(40, 1000);
  EXPECT_EQ(w.wait_ms(), 40);  // no sample yet: the floor
  w.sample(100);
  EXPECT_DOUBLE_EQ(w.wait_ms(), 300);
  w.sample(100);
  EXPECT_DOUBLE_EQ(w.wait_ms(), 250);
  w.sample(20);
  EXPECT_DOUBLE_EQ(w.srtt_ms(), 90);
  EXPECT_DOUBLE_EQ(w.wait_ms(), 282.5);
  EXPECT_EQ(w.samples(), 3u);
  StatusWait fast(200, 1000);  // a fast switch: the floor holds
  for (int i = 0; i < 50; ++i) fast.sample(2);
  EXPECT_DOUBLE_EQ(fast.wait_ms(), 200);
  StatusWait slow(200, 1000);  // a very slow one: the cap holds
  slow.sample(5000);
  EXPECT_DOUBLE_EQ(slow.wait_ms(), 1000);
  StatusWait odd(300, 100);  // a cap below the floor is the floor
  odd.sample(5000);
  EXPECT_DOUBLE_EQ(odd.wait_ms(), 300);
}

TEST(HostParams, CountAndValidation) {
  EXPECT_EQ(JobParams::count_for(1500, 362, 4), 362);
  EXPECT_EQ(JobParams::count_for(1500, 1000, 4), 362);
  EXPECT_EQ(JobParams::count_for(9000, 3000, 4), 2237);
  EXPECT_EQ(JobParams::count_for(9000, 2000, 4), 2000);
  EXPECT_EQ(JobParams::count_for(9000, 725, 2), 725);
  EXPECT_EQ(JobParams::count_for(1500, 100, 2), 100);
  EXPECT_THROW(JobParams::count_for(50, 362, 4), AllReduceError);
  EXPECT_THROW(JobParams::count_for(1500, 362, 3), AllReduceError);
  JobParams p;
  p.world = 3;
  p.rank = 3;
  EXPECT_THROW(p.validate(), AllReduceError);
  p.rank = 2;
  EXPECT_NO_THROW(p.validate());
  p.trees = 0;
  EXPECT_THROW(p.validate(), AllReduceError);
  p.trees = 2;
  p.window.init = 0.5;
  EXPECT_THROW(p.validate(), AllReduceError);
  p.window.init = 4;
  p.window.max = 2;
  EXPECT_THROW(p.validate(), AllReduceError);
}

// ---------------------------------------------------------------------------------------------
// The protocol's frames, against a one-member "accelerator" that answers every contribution
// with its own sum (x + -0 = x), optionally dropping one VID.

class EchoTransport : public Transport {
 public:
  std::vector<wire::Bytes> sent;
  std::deque<wire::Bytes> pending;
  int64_t drop_vid = -1;
  void send(const wire::Bytes& f) override {
    sent.push_back(f);
    const auto h = wire::parse_header(f);
    if (static_cast<int64_t>(h.vid) == drop_vid && h.tid == 0) return;
    wire::BuildMode m;
    m.group_mac = {0x01, 0, 0x5e, 1, 1, 1};
    m.group_ip = 0xEF010101;
    wire::Bytes payload(f.begin() + 64, f.end());
    pending.push_back(wire::build_result(f, payload, h.fin(), false, m));
  }
  bool recv(wire::Bytes& f, Clock::time_point deadline) override {
    if (pending.empty()) {
      std::this_thread::sleep_until(deadline);
      return false;
    }
    f = pending.front();
    pending.pop_front();
    return true;
  }
};

// One worker alone with the echo "accelerator", vectors of `count` elements, loss repair off.
JobParams echo_job(int count) {
  JobParams p;
  p.world = 1;
  p.count = count;
  p.repair_rounds = 0;
  return p;
}

// The error one all-reduce of v ends with, "" when it succeeds.
std::string reduce_error(Transport& tr, const JobParams& p, std::vector<float>& v) {
  AllReduce ar(tr, p);
  try {
    ar.reduce_f32(v.data(), v.size());
  } catch (const AllReduceError& e) {
    return e.what();
  }
  return "";
}

// The error of one all-reduce of 40 elements in vectors of 4 when the echo drops tree 0's VID
// drop_vid.
std::string drop_error(int64_t drop_vid, int timeout_ms) {
  EchoTransport tr;
  tr.drop_vid = drop_vid;
  JobParams p = echo_job(4);
  p.timeout_ms = timeout_ms;
  std::vector<float> v(40, 1.0f);
  return reduce_error(tr, p, v);
}

TEST(HostProtocol, StripingVidsFinAndWindow) {
  EchoTransport tr;
  JobParams p;
  p.jid = 9;
  p.world = 1;
  p.trees = 3;
  p.count = 10;
  p.first_vid = 100;
  p.repair_rounds = 0;
  AllReduce ar(tr, p);
  std::vector<float> v(73);  // 8 vectors: 10 x 7 + 3
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i) * 0.5f - 3;
  const auto orig = v;
  ar.reduce_f32(v.data(), v.size());
  EXPECT_EQ(0, std::memcmp(v.data(), orig.data(), v.size() * 4));
  ASSERT_EQ(tr.sent.size(), 8u);
  // vector k -> tree k % 3, VID 100 + k / 3; FIN on the last vector of each tree.
  std::vector<int> last(3, -1);
  for (size_t k = 0; k < 8; ++k) last[k % 3] = static_cast<int>(k);
  std::vector<bool> seen(8, false);
  for (const auto& f : tr.sent) {
    ASSERT_EQ(wire::check_wellformed(f, 4, 1000), wire::Validity::ok);
    EXPECT_TRUE(wire::is_aggregation(f, 9056));
    EXPECT_EQ(f[15], (56 << 2) | 2);  // DSCP 56, ECT(0)
    const auto h = wire::parse_header(f);
    EXPECT_EQ(h.jid, 9);
    const size_t k = (h.vid - 100) * 3 + h.tid;
    ASSERT_LT(k, 8u);
    EXPECT_FALSE(seen[k]);
    seen[k] = true;
    EXPECT_EQ(h.count, k == 7 ? 3 : 10);
    EXPECT_EQ(h.fin(), static_cast<int>(k) == last[h.tid]) << k;
    EXPECT_FALSE(h.result());
    EXPECT_EQ(0, std::memcmp(f.data() + 64, orig.data() + k * 10, h.count * 4u));
  }
  // VIDs continue across calls.
  EXPECT_EQ(ar.next_vid(0), 103u);
  EXPECT_EQ(ar.next_vid(1), 103u);
  EXPECT_EQ(ar.next_vid(2), 102u);
  tr.sent.clear();
  ar.reduce_f32(v.data(), 25);
  ASSERT_EQ(tr.sent.size(), 3u);
  EXPECT_EQ(wire::parse_header(tr.sent[0]).vid, 103u);
  EXPECT_EQ(wire::parse_header(tr.sent[2]).vid, 102u);
  EXPECT_EQ(ar.stats().results, 11u);
}

TEST(HostProtocol, LaterVidRevealsALostVector) {
  const std::string what = drop_error(2, 5000);
  // The later VID reveals the loss; a timeout would say "timeout: no result" instead.
  EXPECT_NE(what.find("VID 2 has no result"), std::string::npos) << what;
  EXPECT_EQ(what.find("timeout"), std::string::npos) << what;
}

TEST(HostProtocol, MissingLastResultTimesOut) {
  // The last vector has no later VID to reveal its loss: only the timeout can end the call.
  const std::string what = drop_error(9, 200);
  EXPECT_NE(what.find("timeout"), std::string::npos) << what;
}

TEST(HostProtocol, ForeignAndStaleResultsAreIgnored) {
  EchoTransport tr;
  AllReduce ar(tr, echo_job(8));
  std::vector<float> v(16, 2.0f);
  ar.reduce_f32(v.data(), v.size());
  // Queue: a stale duplicate of VID 0, another job's result, a non-RESULT frame, then the real ones.
  wire::Bytes stale = tr.sent[0];
  wire::BuildMode m;
  m.group_ip = 0xEF010101;
  stale = wire::build_result(stale, wire::Bytes(stale.begin() + 64, stale.end()), false, false, m);
  wire::Bytes foreign = stale;
  wire::put16(foreign.data() + wire::off::jid, 77);
  wire::put32(foreign.data() + wire::off::vid, 2);
  tr.pending.push_back(stale);
  tr.pending.push_back(foreign);
  tr.pending.push_back(tr.sent[1]);
  std::vector<float> w(16, 3.0f);
  ar.reduce_f32(w.data(), w.size());
  for (float x : w) EXPECT_EQ(x, 3.0f);
  // The stale duplicate lies in the previous call's range: a leftover; the other two are ignored.
  EXPECT_EQ(ar.stats().ignored, 2u);
  EXPECT_EQ(ar.stats().leftovers, 1u);
}

TEST(HostProtocol, RepairReaggregatesADroppedVector) {
  EchoTransport tr;
  tr.drop_vid = 2;  // tree 0's third vector is dropped "at the accelerator"
  JobParams p;
  p.world = 1;
  p.trees = 2;
  p.count = 5;  // 4 data elements + the repair tag
  p.repair_rounds = 2;
  p.repair_slots = 3;
  p.status_wait_ms = 50;
  AllReduce ar(tr, p);
  std::vector<float> v(37);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i) + 0.25f;
  const auto orig = v;
  ar.reduce_f32(v.data(), v.size());
  EXPECT_EQ(0, std::memcmp(v.data(), orig.data(), v.size() * 4));
  EXPECT_EQ(ar.stats().lost, 1u);
  EXPECT_EQ(ar.stats().repaired, 1u);
  // 10 vectors, 5 per tree; each tree reserves 5 + 2 rounds x (1 status part in c copies + 5
  // slots, one per vector) VIDs.
  EXPECT_EQ(ar.next_vid(0), 5u + 2u * (static_cast<uint32_t>(p.status_copies) + 5u));
  EXPECT_EQ(ar.next_vid(1), 5u + 2u * (static_cast<uint32_t>(p.status_copies) + 5u));
  // The re-aggregation carried the original data of vector 4 (tree 0, index 2) and tag 1.0.
  bool found = false;
  const uint32_t c = static_cast<uint32_t>(p.status_copies);
  for (const auto& f : tr.sent) {
    const auto h = wire::parse_header(f);
    if (h.tid != 0 || h.vid != 5 + c + 2) continue;  // round 0 (after 5 main and c status copies), vector 2's slot
    found = true;
    ASSERT_EQ(h.count, 5);
    EXPECT_EQ(0, std::memcmp(f.data() + 64, orig.data() + 16, 16));
    float tag;
    std::memcpy(&tag, f.data() + 64 + 16, 4);
    EXPECT_EQ(tag, 1.0f);
  }
  EXPECT_TRUE(found);
  // The next call starts after the reserved ranges, and a clean call needs one status (in c
  // copies) per tree, and each tree's flush when the worker leaves it: c one-element frames in
  // the last VIDs of the tree's range.
  tr.sent.clear();
  tr.drop_vid = -1;
  ar.reduce_f32(v.data(), 8);
  ASSERT_EQ(tr.sent.size(), 2u + 2u * c + 2u * c);
  EXPECT_EQ(wire::parse_header(tr.sent[0]).vid, 5u + 2u * (c + 5u));
  const uint32_t base = 5u + 2u * (c + 5u), span = 1u + 2u * (c + 1u);  // one vector per tree
  size_t flush = 0;
  for (const auto& f : tr.sent) {
    const auto h = wire::parse_header(f);
    if (h.vid < base + span - c) continue;
    ++flush;
    EXPECT_LT(h.vid, base + span);
    EXPECT_EQ(h.count, 1);
  }
  EXPECT_EQ(flush, 2u * c);
}

TEST(HostProtocol, FailedBufferIsLeftUntouched) {
  EchoTransport tr;
  tr.drop_vid = 1;
  std::vector<float> v(40, 1.0f);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i);
  const auto orig = v;
  EXPECT_NE(reduce_error(tr, echo_job(4), v), "");
  EXPECT_EQ(v, orig);
}

// ---------------------------------------------------------------------------------------------
// Switch chip

wire::CtxFile one_ctx(int members, int trees, uint16_t jid) {
  wire::CtxFile c;
  for (int t = 0; t < trees; ++t) {
    wire::CtxEntry e;
    e.jid = jid;
    e.tid = static_cast<uint8_t>(t);
    for (int p = 0; p < members; ++p) e.members.push_back(p);
    e.multicast = true;
    e.group_mac = {0x01, 0x00, 0x5e, 0x01, 0x01, static_cast<uint8_t>(1 + t)};
    e.group_ip = 0xEF010101;
    c.contexts.push_back(e);
  }
  return c;
}

wire::Bytes eth(const wire::Mac& dst, const wire::Mac& src) {
  wire::Bytes f(60, 0);
  std::copy(dst.begin(), dst.end(), f.begin());
  std::copy(src.begin(), src.end(), f.begin() + 6);
  f[12] = 0x08;
  f[13] = 0x06;  // ARP: bypass
  return f;
}

std::vector<int> drain(SwitchChip& chip, int ports) {
  std::vector<int> n(static_cast<size_t>(ports), 0);
  wire::Bytes f;
  for (int p = 0; p < ports; ++p)
    while (chip.pop_due(p, Clock::now(), f)) ++n[static_cast<size_t>(p)];
  return n;
}

TEST(HostSwitchChip, LearnsFloodsAndForwardsGroups) {
  SwitchChip chip(4, one_ctx(3, 1, 5), ChipParams{});
  const wire::Mac a{0x02, 0, 0, 0, 0, 0xa}, b{0x02, 0, 0, 0, 0, 0xb}, bc{0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
  chip.from_engine(EngineOut{0, -1, eth(b, a)}, Clock::now());  // unknown b: flood except 0
  EXPECT_EQ(drain(chip, 4), (std::vector<int>{0, 1, 1, 1}));
  chip.from_engine(EngineOut{2, -1, eth(a, b)}, Clock::now());  // a learned on 0
  EXPECT_EQ(drain(chip, 4), (std::vector<int>{1, 0, 0, 0}));
  chip.from_engine(EngineOut{0, -1, eth(b, a)}, Clock::now());  // b learned on 2
  EXPECT_EQ(drain(chip, 4), (std::vector<int>{0, 0, 1, 0}));
  chip.from_engine(EngineOut{2, -1, eth(b, a)}, Clock::now());  // to its own port: filtered
  EXPECT_EQ(drain(chip, 4), (std::vector<int>{0, 0, 0, 0}));
  chip.from_engine(EngineOut{1, -1, eth(bc, a)}, Clock::now());
  EXPECT_EQ(drain(chip, 4), (std::vector<int>{1, 0, 1, 1}));
  // A built frame of context 0 goes to its members 0..2, not to port 3.
  chip.from_engine(EngineOut{-1, 0, eth({0x01, 0x00, 0x5e, 1, 1, 1}, a)}, Clock::now());
  EXPECT_EQ(drain(chip, 4), (std::vector<int>{1, 1, 1, 0}));
  EXPECT_EQ(chip.counters()[2].filtered, 1u);
}

TEST(HostSwitchChip, MarksEctAboveThresholdAndDrainsAtRate) {
  ChipParams cp;
  cp.ecn_threshold = 2;
  cp.queue_limit = 6;
  cp.rate_mbps = 1;  // 1 Mbit/s: a 1000-byte frame takes 8.2 ms
  SwitchChip chip(2, one_ctx(2, 1, 5), cp);
  wire::FrameSpec s;
  s.payload.assign(936, 0);  // 1000-byte frames, ECT(0)
  const wire::Bytes f = wire::build_frame(s);
  for (int i = 0; i < 8; ++i) chip.from_engine(EngineOut{-1, 0, f}, Clock::now());
  EXPECT_EQ(chip.counters()[0].queue_drops, 2u);
  EXPECT_EQ(chip.counters()[0].ce_marked, 3u);  // frames 4..6 found more than 2 ahead
  wire::Bytes g;
  const auto now = Clock::now();
  std::vector<uint8_t> ecns;
  ASSERT_TRUE(chip.pop_due(0, now, g));
  ecns.push_back(wire::ecn(g));
  EXPECT_FALSE(chip.pop_due(0, now, g));  // the link is busy for 8 ms
  EXPECT_TRUE(chip.pop_due(0, now + std::chrono::milliseconds(9), g));
  EXPECT_TRUE(wire::ipv4_checksum_ok(g));
  auto t = now + std::chrono::milliseconds(20);
  while (chip.pop_due(0, t, g)) {
    ecns.push_back(wire::ecn(g));
    EXPECT_TRUE(wire::ipv4_checksum_ok(g));
    t += std::chrono::milliseconds(9);
  }
  EXPECT_EQ(ecns.size(), 5u);
  EXPECT_EQ(ecns[0], 2);
  EXPECT_EQ(ecns.back(), 3);
}

// The drain rate follows the link's own timeline: a loop that looks later than one frame time
// each time still sends what the link would have sent by then (back to back), instead of one
// frame per look.
TEST(HostSwitchChip, ALateLoopLosesNoLinkTime) {
  ChipParams cp;
  cp.ecn_threshold = 1000;
  cp.queue_limit = 100;
  cp.rate_mbps = 1;  // (1000 + 24) bytes x 8 / 1 Mbit/s = 8.192 ms per frame
  SwitchChip chip(2, one_ctx(2, 1, 5), cp);
  wire::FrameSpec s;
  s.payload.assign(936, 0);
  const wire::Bytes f = wire::build_frame(s);
  ASSERT_EQ(f.size(), 1000u);
  for (int i = 0; i < 20; ++i) chip.from_engine(EngineOut{-1, 0, f}, Clock::now());
  const auto t0 = Clock::now();
  wire::Bytes g;
  int sent = 0;
  for (int k = 0; k <= 10; ++k)  // looks at t0, t0 + 12 ms, ..., t0 + 120 ms
    while (chip.pop_due(0, t0 + std::chrono::milliseconds(12 * k), g)) ++sent;
  // Frames i = 0..14 start by 120 ms (14 x 8.192 = 114.7 ms; the 16th would start at 122.9 ms).
  EXPECT_EQ(sent, 15);
}

TEST(HostSwitchChip, ReplicatedSumsAreMarkedAlike) {
  ChipParams cp;
  cp.ecn_threshold = 1;
  cp.rate_mbps = 1;
  SwitchChip chip(3, one_ctx(3, 1, 5), cp);
  const wire::Mac a{0x02, 0, 0, 0, 0, 0xa};
  // Port 2's queue is long (unicast frames to a learned MAC), ports 0 and 1 are empty.
  chip.from_engine(EngineOut{2, -1, eth(a, {0x02, 0, 0, 0, 0, 0xc})}, Clock::now());  // learn c on 2
  chip.from_engine(EngineOut{0, -1, eth({0x02, 0, 0, 0, 0, 0xc}, a)}, Clock::now());  // a on 0, to 2
  for (int i = 0; i < 3; ++i) chip.from_engine(EngineOut{0, -1, eth({0x02, 0, 0, 0, 0, 0xc}, a)}, Clock::now());
  wire::FrameSpec s;
  s.payload.assign(40, 0);
  chip.from_engine(EngineOut{-1, 0, wire::build_frame(s)}, Clock::now());
  EXPECT_EQ(chip.counters()[0].ce_marked, 1u);  // marked although port 0's own queue is short
  EXPECT_EQ(chip.counters()[1].ce_marked, 1u);
  EXPECT_EQ(chip.counters()[2].ce_marked, 1u);
}

// The result cache (docs/host.md "Recall"): a member's contribution sent again after its sum
// was built is answered from the cache, to that port only, with the sum as the members got it;
// a frame with another COOKIE for the same VID (another process reusing VIDs), a port that is
// not a member, a VID whose sum was evicted or never built all go on to the accelerator.
TEST(HostSwitchChip, ResultCacheAnswersOnlyTheSameFrameAgain) {
  ChipParams cp;
  cp.result_cache = 2;
  cp.ecn_threshold = 0;  // every sum marked CE: the cached copy must carry the mark too
  SwitchChip chip(4, one_ctx(3, 1, 5), cp);
  auto contribution = [](uint32_t vid, uint64_t cookie) {
    wire::FrameSpec s;
    s.hdr.jid = 5;
    s.hdr.vid = vid;
    s.hdr.cookie = cookie;
    s.payload.assign(16, static_cast<uint8_t>(vid));
    return wire::build_frame(s);
  };
  auto sum = [](uint32_t vid) {
    wire::FrameSpec s;
    s.hdr.jid = 5;
    s.hdr.vid = vid;
    s.hdr.flags = wire::kFlagResult;
    s.payload.assign(16, static_cast<uint8_t>(0x40 + vid));
    return wire::build_frame(s);
  };
  // Contributions of ports 0..2 for VIDs 10..12 pass (nothing cached yet), then their sums go out.
  for (uint32_t v = 10; v <= 12; ++v)
    for (int p = 0; p < 3; ++p) EXPECT_FALSE(chip.recall(p, contribution(v, 100 * v + static_cast<uint64_t>(p))));
  // A re-send of VID 11 before its sum exists goes on too.
  EXPECT_FALSE(chip.recall(1, contribution(11, 1101)));
  for (uint32_t v = 10; v <= 12; ++v) chip.from_engine(EngineOut{-1, 0, sum(v)}, Clock::now());
  wire::Bytes g;
  std::vector<wire::Bytes> sent1;  // port 1's copies, as sent
  while (chip.pop_due(1, Clock::now(), g)) sent1.push_back(g);
  ASSERT_EQ(sent1.size(), 3u);
  EXPECT_EQ(wire::ecn(sent1[2]), wire::kEcnCe);  // queues were not empty when VID 12 went out
  EXPECT_EQ(drain(chip, 4), (std::vector<int>{3, 0, 3, 0}));
  // VID 12, port 1, same COOKIE: answered to port 1 alone, byte for byte the members' copy.
  EXPECT_TRUE(chip.recall(1, contribution(12, 1201)));
  ASSERT_TRUE(chip.pop_due(1, Clock::now(), g));
  EXPECT_EQ(g, sent1[2]);
  EXPECT_EQ(wire::parse_header(g).vid, 12u);
  EXPECT_TRUE(wire::ipv4_checksum_ok(g));
  EXPECT_EQ(drain(chip, 4), (std::vector<int>{0, 0, 0, 0}));
  EXPECT_EQ(chip.counters()[1].recalled, 1u);
  // The re-send of VID 11 (COOKIE 1101) is what port 1 sent last for it.
  EXPECT_TRUE(chip.recall(1, contribution(11, 1101)));
  EXPECT_FALSE(chip.recall(1, contribution(11, 1100)));  // another COOKIE: not this frame again
  EXPECT_FALSE(chip.recall(0, contribution(12, 1201)));  // port 0 sent COOKIE 1200 for VID 12
  EXPECT_FALSE(chip.recall(3, contribution(12, 1203)));  // port 3 is no member
  EXPECT_FALSE(chip.recall(0, contribution(10, 1000)));  // VID 10: evicted (room for 2 sums)
  EXPECT_FALSE(chip.recall(0, contribution(13, 1300)));  // VID 13: not built
  EXPECT_EQ(drain(chip, 4), (std::vector<int>{0, 1, 0, 0}));
  // Reprogramming empties the cache.
  chip.set_contexts(one_ctx(3, 1, 5));
  EXPECT_FALSE(chip.recall(2, contribution(12, 1202)));
  // Off: nothing is kept.
  cp.result_cache = 0;
  SwitchChip off(4, one_ctx(3, 1, 5), cp);
  EXPECT_FALSE(off.recall(0, contribution(20, 1)));
  off.from_engine(EngineOut{-1, 0, sum(20)}, Clock::now());
  EXPECT_FALSE(off.recall(0, contribution(20, 1)));
}

// Two levels (docs/host.md "Recall"): the final sum of VID 7 reaches the root's members but is
// lost on its way down to the leaf. A worker's re-send at the leaf misses the leaf's cache (no
// sum came down); the leaf sends its partial sum of VID 7 up again, byte for byte, and the
// root's chip answers that from its cache to the leaf alone; passed down, it reaches the leaf's
// members. Only the same frame again is relayed: another COOKIE, a VID never sent up, a
// multicast-mode context, or the cache off go on to the accelerator as before.
TEST(HostSwitchChip, UpstreamContextSendsItsPartialUpAgainForAReSend) {
  auto frame = [](uint32_t vid, uint64_t cookie, uint8_t flags, const wire::Mac& dst) {
    wire::FrameSpec s;
    s.eth_dst = dst;
    s.hdr.jid = 5;
    s.hdr.vid = vid;
    s.hdr.cookie = cookie;
    s.hdr.flags = flags;
    s.payload.assign(16, static_cast<uint8_t>(vid + flags));
    return wire::build_frame(s);
  };
  const wire::Mac agg{0x02, 0, 0, 0, 0, 0x99}, group{0x01, 0x00, 0x5e, 0x01, 0x01, 0x01};
  wire::CtxFile lc;  // leaf: workers on ports 0 and 1, the root behind port 2
  lc.contexts.resize(1);
  lc.contexts[0].jid = 5;
  lc.contexts[0].members = {0, 1};
  lc.contexts[0].multicast = false;
  lc.contexts[0].upstream_port = 2;
  lc.contexts[0].src_mac = {0x02, 0xaa, 0, 0, 0, 1};
  SwitchChip leaf(3, lc, ChipParams{});
  SwitchChip root(2, one_ctx(2, 1, 5), ChipParams{});  // the leaf's uplink on root port 0
  EXPECT_FALSE(leaf.recall(0, frame(7, 70, 0, agg)));
  EXPECT_FALSE(leaf.recall(1, frame(7, 71, 0, agg)));
  EXPECT_FALSE(leaf.recall(0, frame(7, 70, 0, agg)));  // a re-send before the leaf summed VID 7
  // The leaf's accelerator sums VID 7 (COOKIE of the lowest member) and sends it up.
  leaf.from_engine(EngineOut{-1, 0, frame(7, 70, 0, agg)}, Clock::now());
  wire::Bytes up1, up2, g;
  ASSERT_TRUE(leaf.pop_due(2, Clock::now(), up1));
  EXPECT_EQ(drain(leaf, 3), (std::vector<int>{0, 0, 0}));
  // The root takes it and the other leaf's partial, sums, multicasts (and keeps) the result.
  EXPECT_FALSE(root.recall(0, up1));
  EXPECT_FALSE(root.recall(1, frame(7, 90, 0, agg)));
  root.from_engine(EngineOut{-1, 0, frame(7, 70, wire::kFlagResult, group)}, Clock::now());
  EXPECT_EQ(drain(root, 2), (std::vector<int>{1, 1}));  // port 0's copy is lost on the way down
  // VID 8 sent up too; a frame with another COOKIE for it (not the frame port 0 sent), or one
  // for VID 9 (never sent up), goes on to the accelerator.
  EXPECT_FALSE(leaf.recall(0, frame(8, 80, 0, agg)));
  EXPECT_FALSE(leaf.recall(1, frame(8, 81, 0, agg)));
  leaf.from_engine(EngineOut{-1, 0, frame(8, 80, 0, agg)}, Clock::now());
  EXPECT_EQ(drain(leaf, 3), (std::vector<int>{0, 0, 1}));
  EXPECT_FALSE(leaf.recall(0, frame(8, 88, 0, agg)));
  EXPECT_FALSE(leaf.recall(1, frame(9, 91, 0, agg)));
  EXPECT_EQ(drain(leaf, 3), (std::vector<int>{0, 0, 0}));
  // Worker 0's re-send: the partial goes up again, the same bytes.
  EXPECT_TRUE(leaf.recall(0, frame(7, 70, 0, agg)));
  EXPECT_EQ(leaf.counters()[0].relayed, 1u);
  ASSERT_TRUE(leaf.pop_due(2, Clock::now(), up2));
  EXPECT_EQ(up2, up1);
  EXPECT_EQ(drain(leaf, 3), (std::vector<int>{0, 0, 0}));
  // The root answers it from its cache, to the leaf's port alone.
  EXPECT_TRUE(root.recall(0, up2));
  EXPECT_EQ(root.counters()[0].recalled, 1u);
  ASSERT_TRUE(root.pop_due(0, Clock::now(), g));
  EXPECT_TRUE(wire::parse_header(g).result());
  EXPECT_EQ(drain(root, 2), (std::vector<int>{0, 0}));
  // Passed down at the leaf: both members get it, and the leaf now answers from its own cache.
  leaf.from_engine(EngineOut{2, -1, g}, Clock::now());
  EXPECT_EQ(drain(leaf, 3), (std::vector<int>{1, 1, 0}));
  EXPECT_TRUE(leaf.recall(1, frame(7, 71, 0, agg)));
  EXPECT_EQ(leaf.counters()[1].recalled, 1u);
  EXPECT_EQ(leaf.counters()[1].relayed, 0u);
  EXPECT_EQ(drain(leaf, 3), (std::vector<int>{0, 1, 0}));
  // A multicast-mode context (the root) never relays: a re-send of a VID it has not built goes on.
  EXPECT_FALSE(root.recall(1, frame(8, 91, 0, agg)));
  EXPECT_FALSE(root.recall(1, frame(8, 91, 0, agg)));
  EXPECT_EQ(drain(root, 2), (std::vector<int>{0, 0}));
  // Cache off: nothing is kept or relayed.
  ChipParams off;
  off.result_cache = 0;
  SwitchChip leaf_off(3, lc, off);
  EXPECT_FALSE(leaf_off.recall(0, frame(7, 70, 0, agg)));
  leaf_off.from_engine(EngineOut{-1, 0, frame(7, 70, 0, agg)}, Clock::now());
  EXPECT_EQ(drain(leaf_off, 3), (std::vector<int>{0, 0, 1}));
  EXPECT_FALSE(leaf_off.recall(0, frame(7, 70, 0, agg)));
  EXPECT_EQ(drain(leaf_off, 3), (std::vector<int>{0, 0, 0}));
}

// ---------------------------------------------------------------------------------------------
// All-reduce through the in-process stand-in on the SystemC live model

Config design(int ports, Format fmt = Format::fp32) {
  Inputs in;
  in.ports = ports;
  in.gbps = 10;
  in.mhz = 200;
  in.format = fmt;
  return Config::derive(in);
}

struct Bed {
  LoopbackFabric fab;
  std::atomic<bool> stop{false};
  std::thread sw;
  nlohmann::ordered_json counters;
  std::string error;
  // soft: the C++ engine (switch --engine soft) instead of the SystemC model.
  Bed(const Config& cfg, const wire::CtxFile& ctx, ChipParams cp, bool soft = false) : fab(cfg.in.ports) {
    sw = std::thread([this, cfg, ctx, cp, soft] {
      try {
        // Created and used on this thread only.
        std::unique_ptr<Engine> eng;
        const char* rtl = std::getenv("PANAMA_HOST_RTL");  // stress runs: the Verilated RTL of this dir
        if (rtl) {
          const std::string path = "/tmp/panama_bed_ctx_" + std::to_string(::getpid()) + ".json";
          std::ofstream(path) << wire::to_json(ctx).dump();
          eng = make_rtl_engine(rtl, path, cfg.in.ports);
        } else {
          eng = soft ? make_soft_engine(cfg, ctx) : make_model_engine(cfg, ctx);
        }
        SwitchChip chip(cfg.in.ports, ctx, cp);
        StandInParams sp;
        sp.chip = cp;
        counters = run_standin(fab, *eng, chip, sp, stop);
      } catch (const std::exception& e) {
        error = e.what();
      }
    });
  }
  // Stops the stand-in; returns its counters (engine + switch chip) for diagnostics.
  std::string finish() {
    if (sw.joinable()) {
      stop = true;
      sw.join();
    }
    return counters.dump();
  }
  ~Bed() { finish(); }
};

struct Outcome {
  std::vector<std::vector<uint32_t>> out;
  std::vector<std::string> err;
  std::vector<Stats> stats;
  std::vector<double> cwnd, alpha;
};

// Workers rank r on port port_of[r]; each runs `calls` all-reduces of its tensor (fresh copy).
Outcome run_workers(Bed& bed, const std::vector<std::vector<uint32_t>>& in, const std::vector<int>& port_of,
                    JobParams base, int calls) {
  const int w = static_cast<int>(in.size());
  Outcome o;
  o.out.resize(static_cast<size_t>(w));
  o.err.resize(static_cast<size_t>(w));
  o.stats.resize(static_cast<size_t>(w));
  o.cwnd.resize(static_cast<size_t>(w));
  o.alpha.resize(static_cast<size_t>(w));
  std::vector<std::thread> th;
  for (int r = 0; r < w; ++r)
    th.emplace_back([&, r] {
      LoopbackTransport tr(bed.fab, port_of[static_cast<size_t>(r)]);
      JobParams p = base;
      p.rank = r;
      p.world = w;
      std::unique_ptr<AllReduce> arp;
      try {
        arp.reset(new AllReduce(tr, p));
        AllReduce& ar = *arp;
        for (int c = 0; c < calls; ++c) {
          auto buf = in[static_cast<size_t>(r)];
          if (p.elem_bytes == 4) {
            std::vector<float> f(buf.size());
            std::memcpy(f.data(), buf.data(), 4 * buf.size());
            ar.reduce_f32(f.data(), f.size());
            std::memcpy(buf.data(), f.data(), 4 * buf.size());
          } else {
            std::vector<uint16_t> h(buf.begin(), buf.end());
            ar.reduce_u16(h.data(), h.size());
            buf.assign(h.begin(), h.end());
          }
          o.out[static_cast<size_t>(r)] = buf;
        }
        o.stats[static_cast<size_t>(r)] = ar.stats();
        o.cwnd[static_cast<size_t>(r)] = ar.window(0).cwnd();
        o.alpha[static_cast<size_t>(r)] = ar.window(0).alpha();
      } catch (const std::exception& e) {
        o.err[static_cast<size_t>(r)] = e.what();
        if (arp) o.stats[static_cast<size_t>(r)] = arp->stats();
      }
    });
  for (auto& t : th) t.join();
  return o;
}

uint32_t special(std::mt19937_64& rng, ref::Fmt fmt) {
  const bool f32 = fmt == ref::Fmt::fp32;
  switch (rng() % 40) {
    case 0:
      return f32 ? 0x7F800000u : (fmt == ref::Fmt::bf16 ? 0x7F80u : 0x7C00u);  // +inf
    case 1:
      return f32 ? 0x80000000u : 0x8000u;  // -0
    case 2:
      return f32 ? 0x00000001u : 0x0001u;  // subnormal
    case 3:
      return f32 ? 0x7F7FFFFFu : (fmt == ref::Fmt::bf16 ? 0x7F7Fu : 0x7BFFu);  // max finite
    default:
      break;
  }
  if (f32) {
    std::uniform_real_distribution<float> d(-1000, 1000);
    return ref::float_to_bits(d(rng) * std::ldexp(1.0f, static_cast<int>(rng() % 20) - 10));
  }
  // A random finite 16-bit pattern.
  for (;;) {
    const uint32_t h = static_cast<uint32_t>(rng() & 0xFFFF);
    const auto fb = ref::fmt_bits(fmt);
    if (((h >> fb.frac_bits) & ((1u << fb.exp_bits) - 1)) != (1u << fb.exp_bits) - 1) return h;
  }
}

std::vector<std::vector<uint32_t>> tensors(int w, size_t n, uint64_t seed, ref::Fmt fmt) {
  std::mt19937_64 rng(seed);
  std::vector<std::vector<uint32_t>> v(static_cast<size_t>(w), std::vector<uint32_t>(n));
  for (auto& t : v)
    for (auto& x : t) x = special(rng, fmt);
  return v;
}

// The expected sum: ref::tree_sum over the accelerator's ports (rank r sits on port_of[r]).
std::vector<uint32_t> expected(const std::vector<std::vector<uint32_t>>& in, const std::vector<int>& port_of, int ports,
                               ref::Fmt fmt) {
  std::vector<uint32_t> e(in[0].size());
  for (size_t i = 0; i < e.size(); ++i) {
    std::vector<uint32_t> vals(static_cast<size_t>(ports), 0);
    std::vector<bool> mem(static_cast<size_t>(ports), false);
    for (size_t r = 0; r < in.size(); ++r) {
      vals[static_cast<size_t>(port_of[r])] = in[r][i];
      mem[static_cast<size_t>(port_of[r])] = true;
    }
    e[i] = ref::tree_sum(fmt, false, vals, mem);
  }
  return e;
}

wire::CtxFile ctx_for(const std::vector<int>& ports, int trees, uint16_t jid) {
  wire::CtxFile c = one_ctx(0, trees, jid);
  for (auto& e : c.contexts) {
    e.members = ports;
    std::sort(e.members.begin(), e.members.end());
  }
  return c;
}

TEST(HostAllReduce, ThreeWorkersTwoTreesBitIdenticalTreeOrder) {
  const Config cfg = design(4);
  const std::vector<int> port_of{3, 0, 2};  // ranks on ports out of order: the sum follows ports
  Bed bed(cfg, ctx_for(port_of, 2, 7), ChipParams{});
  JobParams p;
  p.jid = 7;
  p.trees = 2;
  p.window.max = 6;  // T * max = 12 frames fit the default contribution pool
  p.count = JobParams::count_for(1500, cfg.max_elems, 4);
  p.timeout_ms = 3000;
  const auto in = tensors(3, 16384 + 77, 11, ref::Fmt::fp32);  // 64 KiB + a partial vector
  const Outcome o = run_workers(bed, in, port_of, p, 3);       // three calls: VIDs run on
  const auto exp = expected(in, port_of, 4, ref::Fmt::fp32);
  for (int r = 0; r < 3; ++r) {
    ASSERT_EQ(o.err[static_cast<size_t>(r)], "") << "rank " << r << " " << bed.finish();
    EXPECT_EQ(o.out[static_cast<size_t>(r)], exp) << "rank " << r;
    // Per call: K vectors of C - 1 data elements (repair is on) + one status part per tree, in
    // c copies; the copies after the first that showed everything held may come after the call
    // ended (then they are leftovers of the next call, or of none after the last).
    const uint64_t k_vec = (16384 + 77 + 360) / 361, res = o.stats[static_cast<size_t>(r)].results,
                   left = o.stats[static_cast<size_t>(r)].leftovers, c = static_cast<uint64_t>(p.status_copies);
    EXPECT_GE(res, 3u * (k_vec + 2));
    EXPECT_LE(res + left, 3u * (k_vec + 2 * c));
    EXPECT_EQ(o.stats[static_cast<size_t>(r)].ignored, 0u);
  }
  EXPECT_EQ(bed.error, "");
}

TEST(HostAllReduce, Bf16RawElements) {
  const Config cfg = design(4, Format::bf16);
  const std::vector<int> port_of{0, 1, 2, 3};
  Bed bed(cfg, ctx_for(port_of, 1, 3), ChipParams{});
  JobParams p;
  p.jid = 3;
  p.elem_bytes = 2;
  p.format = ref::Fmt::bf16;
  p.count = JobParams::count_for(1500, cfg.max_elems, 2);
  const auto in = tensors(4, 5000, 5, ref::Fmt::bf16);
  const Outcome o = run_workers(bed, in, port_of, p, 2);
  const auto exp = expected(in, port_of, 4, ref::Fmt::bf16);
  for (int r = 0; r < 4; ++r) {
    ASSERT_EQ(o.err[static_cast<size_t>(r)], "") << "rank " << r;
    EXPECT_EQ(o.out[static_cast<size_t>(r)], exp) << "rank " << r;
  }
}

TEST(HostAllReduce, EcnMarksShrinkTheSameWindowEverywhere) {
  const Config cfg = design(4);
  const std::vector<int> port_of{0, 1, 2};
  ChipParams cp;
  cp.rate_mbps = 200;  // a slow egress: queues build up behind the window
  cp.ecn_threshold = 1;
  Bed bed(cfg, ctx_for(port_of, 1, 1), cp);
  JobParams p;
  p.jid = 1;
  p.count = 362;
  p.window.init = 12;  // 12 frames of 1512 bytes fit the default contribution pool
  p.window.max = 12;
  p.timeout_ms = 5000;
  const auto in = tensors(3, 362 * 120, 3, ref::Fmt::fp32);
  const Outcome o = run_workers(bed, in, port_of, p, 1);
  const auto exp = expected(in, port_of, 4, ref::Fmt::fp32);
  for (int r = 0; r < 3; ++r) {
    ASSERT_EQ(o.err[static_cast<size_t>(r)], "") << "rank " << r;
    EXPECT_EQ(o.out[static_cast<size_t>(r)], exp);
    EXPECT_GT(o.stats[static_cast<size_t>(r)].results_ce, 0u);
    // Same results -> the same window and alpha, bit for bit.
    EXPECT_EQ(o.cwnd[static_cast<size_t>(r)], o.cwnd[0]);
    EXPECT_EQ(o.alpha[static_cast<size_t>(r)], o.alpha[0]);
    EXPECT_EQ(o.stats[static_cast<size_t>(r)].results_ce, o.stats[0].results_ce);
  }
  EXPECT_LT(o.cwnd[0], 12);
  EXPECT_GT(o.alpha[0], 0);
}

TEST(HostAllReduce, LostResultsGiveAClearErrorNeverAWrongResult) {
  const Config cfg = design(4);
  const std::vector<int> port_of{0, 1, 2};
  Bed bed(cfg, ctx_for(port_of, 1, 2), ChipParams{});
  bed.fab.set_loss(1, 0.05, 42);  // results to rank 1 get lost
  JobParams p;
  p.jid = 2;
  p.count = 362;
  p.repair_rounds = 0;  // repair off: a loss must end in the clear error
  p.timeout_ms = 300;
  const auto in = tensors(3, 362 * 60, 8, ref::Fmt::fp32);
  const Outcome o = run_workers(bed, in, port_of, p, 1);
  const auto exp = expected(in, port_of, 4, ref::Fmt::fp32);
  EXPECT_GT(bed.fab.dropped(), 0u);
  EXPECT_NE(o.err[1], "");
  EXPECT_TRUE(o.err[1].find("lost vector") != std::string::npos || o.err[1].find("timeout") != std::string::npos)
      << o.err[1];
  for (int r = 0; r < 3; ++r) {
    if (o.err[static_cast<size_t>(r)].empty()) {
      EXPECT_EQ(o.out[static_cast<size_t>(r)], exp) << "rank " << r;
    }
  }
}

TEST(HostAllReduce, SilentPeerEndsInBoundedTime) {
  const Config cfg = design(4);
  Bed bed(cfg, ctx_for({0, 1, 2}, 1, 4), ChipParams{});  // port 2's worker never shows up
  JobParams p;
  p.jid = 4;
  p.count = 362;
  p.timeout_ms = 250;
  p.status_wait_ms = 15;  // with repair on the call timeout is at least 32 status waits
  const auto in = tensors(2, 2000, 1, ref::Fmt::fp32);
  JobParams q = p;
  const Outcome o = run_workers(bed, in, {0, 1}, q, 1);
  for (int r = 0; r < 2; ++r) EXPECT_NE(o.err[static_cast<size_t>(r)].find("timeout"), std::string::npos);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// panama-host: every bad input is one clear line and a non-zero exit, nothing written.

namespace {

struct Run {
  int rc;
  std::string err;
};

// A private directory per test process (ctest runs tests in parallel).
std::string scratch() {
  const std::string d = testing::TempDir() + "/host_cli_" + std::to_string(getpid());
  (void)std::system(("mkdir -p " + d).c_str());
  return d;
}

Run cli(const std::string& args) {
  const std::string tmp = scratch() + "/stderr.txt";
  const std::string cmd = std::string(PANAMA_HOST) + " " + args + " >/dev/null 2>" + tmp;
  const int st = std::system(cmd.c_str());
  std::ifstream in(tmp);
  std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return {WIFEXITED(st) ? WEXITSTATUS(st) : 128, s};
}

void expect_error(const std::string& args, const std::string& needle) {
  const Run r = cli(args);
  EXPECT_NE(r.rc, 0) << args;
  EXPECT_NE(r.err.find(needle), std::string::npos) << args << "\n" << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args << "\n" << r.err;
}

}  // namespace

TEST(HostCli, WorkerBadInput) {
  const std::string d = scratch();
  {
    std::ofstream(d + "/odd.bin") << "12345";
    std::ofstream g(d + "/g.bin", std::ios::binary);
    const float x[4] = {1, 2, 3, 4};
    g.write(reinterpret_cast<const char*>(x), sizeof x);
  }
  const std::string base = "worker --iface lo --job 1 --rank 0 --world 2 --agg-ip 127.0.0.2 --group-ip 239.9.9.9 ";
  const std::string out = " --out " + d + "/never.bin";
  expect_error(base + "--in " + d + "/missing.bin" + out, "cannot open");
  expect_error(base + "--in " + d + "/odd.bin" + out, "not a multiple of 4");
  expect_error(base + "--in " + d + "/g.bin --backend foo" + out, "--backend must be udp, tins, dpdk or xdp");
  expect_error(base + "--in " + d + "/g.bin --eal=--no-huge" + out, "--eal");
  expect_error(base + "--in " + d + "/g.bin --backend tins --eal=--no-huge" + out, "--eal");
  expect_error(base + "--in " + d + "/g.bin --backend tins --agg-mac 02:aa" + out, "malformed MAC");
  for (const char* b : {"tins", "dpdk"})
    expect_error("worker --iface nosuchif0 --job 1 --rank 0 --world 2 --agg-ip 127.0.0.2 --group-ip 239.9.9.9 --in " +
                     d + "/g.bin --backend " + b + out,
                 "nosuchif0");
  expect_error(base + "--in " + d + "/g.bin --format fp64" + out, "--format");
  expect_error(base + "--in " + d + "/g.bin --trees 2 --first-vid 1,2,3" + out, "--first-vid");
  expect_error(base + "--in " + d + "/g.bin --first-vid x" + out, "not a VID");
  expect_error(base + "--in " + d + "/g.bin --window-max 4 --window-init 8" + out, "window");
  expect_error("worker --iface nosuchif0 --job 1 --rank 0 --world 2 --agg-ip 127.0.0.2 --group-ip 239.9.9.9 --in " + d +
                   "/g.bin" + out,
               "nosuchif0");
  expect_error(
      "worker --iface lo --job 1 --rank 2 --world 2 --agg-ip 127.0.0.2 --group-ip 239.9.9.9 --in " + d + "/g.bin" + out,
      "rank");
  expect_error("worker --iface lo --job 70000 --rank 0 --world 2 --agg-ip 127.0.0.2 --group-ip 239.9.9.9 --in " + d +
                   "/g.bin" + out,
               "--job");
  expect_error("worker --iface lo --job 1 --rank 0 --world 2 --agg-ip 10.1 --group-ip 239.9.9.9 --in " + d +
                   "/g.bin --mtu 1500" + out,
               "10.1");
  expect_error("worker --iface lo --job 1 --rank 0 --world 2 --agg-ip 127.0.0.2 --group-ip 10.9.9.9 --in " + d +
                   "/g.bin --mtu 1500" + out,
               "not multicast");
  EXPECT_FALSE(std::ifstream(d + "/never.bin").good());
  EXPECT_NE(cli("").rc, 0);
  EXPECT_NE(cli("worker --iface lo").rc, 0);  // missing required options
  (void)std::system(("rm -rf " + d).c_str());
}

TEST(HostCli, SwitchBadInput) {
  const std::string d = scratch();
  const std::string rtl = std::string(PANAMA_SOURCE_DIR) + "/rtl_out/p4_10g_200mhz";
  std::ofstream(d + "/ctx.json")
      << R"({"contexts":[{"jid":1,"tid":0,"members":[0,1,2],"mode":"multicast","group_mac":"01:00:5e:01:01:01","group_ip":"239.1.1.1"}]})";
  std::ofstream(d + "/bad.json") << R"({"contexts":[{"jid":1,"tid":0,"members":[],"mode":"multicast"}]})";
  expect_error("switch --rtl " + d + "/nodir --contexts " + d + "/ctx.json --ifaces lo", "config.json");
  expect_error("switch --rtl " + rtl + " --contexts " + d + "/bad.json --ifaces lo", "context 0");
  expect_error("switch --rtl " + rtl + " --contexts " + d + "/ctx.json --ifaces lo,lo,lo,lo,lo", "5 interfaces");
  expect_error("switch --rtl " + rtl + " --contexts " + d + "/ctx.json --ifaces lo,lo", "member port 2");
  expect_error("switch --rtl " + rtl + " --contexts " + d + "/ctx.json --ifaces lo,lo,lo", "given twice");
  expect_error("switch --rtl " + rtl + " --contexts " + d + "/ctx.json --ifaces a0x,b0x,c0x", "no interface 'a0x'");
  (void)std::system(("rm -rf " + d).c_str());
}

// ---------------------------------------------------------------------------------------------
// Loss repair through the stand-in: lost results and lost contributions, several calls.

void repair_run(int trees, double down_loss, double up_loss, uint64_t seed, bool every_link = false,
                bool soft = false) {
  if (const char* e = std::getenv("PANAMA_HOST_SEED")) seed = std::stoull(e);  // stress runs
  if (const char* e = std::getenv("PANAMA_HOST_LOSS")) down_loss = up_loss = std::stod(e);
  const Config cfg = design(4);
  const std::vector<int> port_of{2, 0, 1};
  Bed bed(cfg, ctx_for(port_of, trees, 6), ChipParams{}, soft);
  if (const char* e = std::getenv("PANAMA_HOST_SWITCH_US"))  // stress runs: a slow stand-in
    bed.fab.set_switch_delay(std::chrono::microseconds(std::stoul(e)));
  bed.fab.set_loss(0, down_loss, seed);  // results to the worker on port 0
  bed.fab.set_up_loss(1, up_loss);       // contributions of the worker on port 1
  if (every_link)
    for (int port : port_of) {
      bed.fab.set_loss(port, down_loss, seed);
      bed.fab.set_up_loss(port, up_loss);
    }
  JobParams p;
  p.jid = 6;
  p.trees = trees;
  p.window.max = 12 / trees;
  p.count = 362;
  p.timeout_ms = 3000;
  p.status_wait_ms = 40;
  if (const char* e = std::getenv("PANAMA_HOST_STATUS_WAIT")) p.status_wait_ms = std::stoi(e);  // stress runs
  if (std::getenv("PANAMA_HOST_ADAPTIVE_WAIT")) p.adaptive_wait = true;                         // stress runs
  if (const char* e = std::getenv("PANAMA_HOST_ROUNDS")) p.repair_rounds = std::stoi(e);        // stress runs
  if (const char* e = std::getenv("PANAMA_HOST_COPIES")) p.status_copies = std::stoi(e);        // stress runs
  if (std::getenv("PANAMA_HOST_NO_RESEND")) p.resend = false;                                   // stress runs
  size_t vectors = 40;
  if (const char* e = std::getenv("PANAMA_HOST_VECTORS")) vectors = std::stoul(e);  // stress runs
  const auto in = tensors(3, 362 * vectors + 5, seed, ref::Fmt::fp32);
  const Outcome o = run_workers(bed, in, port_of, p, 3);
  const auto exp = expected(in, port_of, 4, ref::Fmt::fp32);
  uint64_t lost = 0, repaired = 0;
  for (int r = 0; r < 3; ++r) {
    std::string diag;
    for (const auto& e : o.err) diag += " {" + e + "}";
    for (const auto& st : o.stats)
      diag += " [sent " + std::to_string(st.vectors_sent) + " results " + std::to_string(st.results) + " lost " +
              std::to_string(st.lost) + " repaired " + std::to_string(st.repaired) + " rounds " +
              std::to_string(st.repair_rounds) + " ignored " + std::to_string(st.ignored) + " dup " +
              std::to_string(st.duplicates) + "]";
    ASSERT_EQ(o.err[static_cast<size_t>(r)], "") << "rank " << r << diag << " " << bed.finish();
    EXPECT_EQ(o.out[static_cast<size_t>(r)], exp) << "rank " << r;
    lost += o.stats[static_cast<size_t>(r)].lost;
    repaired += o.stats[static_cast<size_t>(r)].repaired;
  }
  EXPECT_GT(bed.fab.dropped(), 0u);
  EXPECT_GT(lost, 0u);
  EXPECT_GT(repaired, 0u);
}

TEST(HostRepair, LostResultsOnOneLink) { repair_run(1, 0.03, 0, 5); }
TEST(HostRepair, LostContributionsTwoTrees) { repair_run(2, 0, 0.03, 6); }
TEST(HostRepair, BothDirections) { repair_run(2, 0.02, 0.02, 7); }
// Issue 12: 5 % in both directions on every link.
TEST(HostRepair, FivePercentEveryLinkBothWays) { repair_run(2, 0.05, 0.05, 11, true); }

// One tree of job 6, window 8, full-size vectors, a short status wait: the repair tests below.
JobParams small_repair_job() {
  JobParams p;
  p.jid = 6;
  p.window.max = 8;
  p.count = 362;
  p.timeout_ms = 3000;
  p.status_wait_ms = 40;
  return p;
}

// A status part's result in those tests: the short RESULT frames (a few dozen holder words;
// data vectors carry 361 elements).
bool status_result(const wire::Bytes& f) {
  if (f.size() < wire::kHeaderBytes) return false;
  const auto h = wire::parse_header(f);
  return h.result() && h.count < 100;
}

// A worker whose status results are lost after its peers received theirs (every first copy
// of every status result to rank 0 is dropped): its re-sends after a silent status wait are
// answered from the switch chip's result cache (docs/host.md "Recall"), and the sums stay exact.
TEST(HostRepair, ResentStatusPartsAreAnsweredFromTheResultCache) {
  const Config cfg = design(4);
  const std::vector<int> port_of{2, 0, 1};
  Bed bed(cfg, ctx_for(port_of, 1, 6), ChipParams{});
  std::set<uint32_t> seen;
  bed.fab.set_down_filter(
      2, [&seen](const wire::Bytes& f) { return status_result(f) && seen.insert(wire::parse_header(f).vid).second; });
  bed.fab.set_loss(2, 0.05, 3);  // and a few of rank 0's other results, so that there are rounds
  const JobParams p = small_repair_job();
  const auto in = tensors(3, 362 * 30 + 5, 3, ref::Fmt::fp32);
  const Outcome o = run_workers(bed, in, port_of, p, 2);
  const auto exp = expected(in, port_of, 4, ref::Fmt::fp32);
  for (int r = 0; r < 3; ++r) {
    ASSERT_EQ(o.err[static_cast<size_t>(r)], "") << "rank " << r << " " << bed.finish();
    EXPECT_EQ(o.out[static_cast<size_t>(r)], exp) << "rank " << r;
  }
  const auto j = nlohmann::json::parse(bed.finish());
  const uint64_t recalled = j["switch_ports"][2]["recalled"].get<uint64_t>();
  EXPECT_GT(seen.size(), 0u);
  EXPECT_GT(o.stats[0].resent, 0u);
  EXPECT_GT(recalled, 0u);
  EXPECT_LE(recalled, o.stats[0].resent);
}

// No worker ever reads a status (every status result is dropped on every link, the cache's
// answers included) while contributions are lost on the way in (nobody holds those vectors).
// Without the plan every worker sends its input again to every slot of the part (docs/host.md
// rule 5), so the slots complete valid and the lost vectors are re-aggregated, and each worker
// leaves once it holds everything. With -0.0 fillers instead (before 2026-11-28) such slots
// completed invalid and nothing was ever repaired without a status.
TEST(HostRepair, WorkersWithoutAnyStatusRepairByReaggregation) {
  const Config cfg = design(4);
  const std::vector<int> port_of{2, 0, 1};
  Bed bed(cfg, ctx_for(port_of, 1, 6), ChipParams{});
  std::atomic<uint64_t> dropped_status{0};
  bed.fab.set_down_filter(-1, [&dropped_status](const wire::Bytes& f) {
    const bool status = status_result(f);
    dropped_status += status;
    return status;
  });
  bed.fab.set_up_loss(0, 0.08);  // rank 1's contributions
  const JobParams p = small_repair_job();
  const auto in = tensors(3, 362 * 29 + 5, 5, ref::Fmt::fp32);
  const Outcome o = run_workers(bed, in, port_of, p, 2);
  const auto exp = expected(in, port_of, 4, ref::Fmt::fp32);
  for (int r = 0; r < 3; ++r) {
    ASSERT_EQ(o.err[static_cast<size_t>(r)], "") << "rank " << r << " " << bed.finish();
    EXPECT_EQ(o.out[static_cast<size_t>(r)], exp) << "rank " << r;
    EXPECT_EQ(o.stats[static_cast<size_t>(r)].repair_rounds, 0u) << "rank " << r;  // no status read
    EXPECT_GT(o.stats[static_cast<size_t>(r)].repaired, 0u) << "rank " << r;       // repaired all the same
  }
  EXPECT_GT(dropped_status.load(), 0u);
}

// ---------------------------------------------------------------------------------------------
// The soft engine (switch --engine soft): the behaviour rules in C++ with CPU tree-order sums.

TEST(HostSoftEngine, ThreeWorkersTwoTreesBitIdenticalTreeOrder) {
  const Config cfg = design(4);
  const std::vector<int> port_of{3, 0, 2};
  Bed bed(cfg, ctx_for(port_of, 2, 7), ChipParams{}, true);
  JobParams p;
  p.jid = 7;
  p.trees = 2;
  p.window.max = 6;
  p.count = JobParams::count_for(1500, cfg.max_elems, 4);
  p.timeout_ms = 3000;
  const auto in = tensors(3, 16384 + 77, 12, ref::Fmt::fp32);
  const Outcome o = run_workers(bed, in, port_of, p, 3);
  const auto exp = expected(in, port_of, 4, ref::Fmt::fp32);
  for (int r = 0; r < 3; ++r) {
    ASSERT_EQ(o.err[static_cast<size_t>(r)], "") << "rank " << r << " " << bed.finish();
    EXPECT_EQ(o.out[static_cast<size_t>(r)], exp) << "rank " << r;
  }
  EXPECT_EQ(bed.error, "");
}

TEST(HostSoftEngine, RepairAtFivePercentOnEveryLinkBothWays) { repair_run(2, 0.05, 0.05, 21, true, true); }

// The same frames into the SystemC model and the soft engine: the same built frames and the same
// counters (stale heads, incomplete and count-mismatched vectors, VID jumps, bypass, not_member,
// no_context), for a design's formats and modes. Two implementations that share no code but the
// wire format.
void same_decisions_as_the_model(const Config& cfg) {
  wire::CtxFile ctx = one_ctx(0, 2, 9);
  ctx.contexts[0].members = {0, 1, 3};
  ctx.contexts[1].members = {1, 2};
  auto model = make_model_engine(cfg, ctx);
  auto soft = make_soft_engine(cfg, ctx);
  std::mt19937_64 rng(5);
  std::vector<std::vector<uint32_t>> next(2, std::vector<uint32_t>(4, 0));  // per tree and port
  for (int step = 0; step < 3000; ++step) {
    const int port = static_cast<int>(rng() % 4);
    wire::Bytes f;
    const unsigned kind = static_cast<unsigned>(rng() % 100);
    if (kind < 3) {  // bypass
      f = eth({0x02, 0, 0, 0, 0, 0xc}, {0x02, 0, 0, 0, 0, static_cast<uint8_t>(port)});
    } else {
      wire::FrameSpec s;
      const int t = static_cast<int>(rng() % 2);
      s.hdr.jid = kind < 5 ? 77 : 9;  // 77: no such context
      s.hdr.tid = static_cast<uint8_t>(t);
      uint32_t& v = next[static_cast<size_t>(t)][static_cast<size_t>(port)];
      const unsigned r = static_cast<unsigned>(rng() % 20);
      if (r == 0) v += 1 + static_cast<uint32_t>(rng() % 3);  // a skipped VID
      if (r == 1 && v > 2) v -= 2;                            // a late duplicate (stale)
      s.hdr.vid = v++;
      s.hdr.rank = static_cast<uint16_t>(port);
      if (rng() % 50 == 0) s.hdr.flags |= wire::kFlagFin;
      s.ecn = rng() % 10 == 0 ? 3 : 2;
      const size_t count = rng() % 40 == 0 ? 7 : 8;  // an occasional COUNT mismatch
      std::vector<uint32_t> el(count);
      for (auto& x : el) x = special(rng, ref::Fmt::fp32);
      s.payload = wire::payload_from_elems(el, 4);
      f = wire::build_frame(s);
    }
    model->inject(port, f);
    soft->inject(port, f);
    if (rng() % 4 == 0) {
      model->run_until_idle();
      soft->run_until_idle();
    }
  }
  model->run_until_idle();
  soft->run_until_idle();
  auto mo = model->take_outputs(), so = soft->take_outputs();
  // Per stream (a port, or m_agg per context) the same frames in the same order.
  auto split = [](const std::vector<EngineOut>& v) {
    std::map<std::pair<int, int>, std::vector<wire::Bytes>> m;
    for (const auto& o : v) m[{o.port, o.port < 0 ? o.context : -1}].push_back(o.data);
    return m;
  };
  const auto ms = split(mo), ss = split(so);
  EXPECT_EQ(ms, ss);
  size_t built = 0;
  for (const auto& o : so) built += o.port < 0;
  EXPECT_GT(built, 100u);
  nlohmann::ordered_json mc = model->counters(), sc = soft->counters();
  EXPECT_EQ(mc["ports"].dump(), sc["ports"].dump());
  for (size_t c = 0; c < 2; ++c) {
    EXPECT_EQ(mc["contexts"][c]["vectors_completed"], sc["contexts"][c]["vectors_completed"]);
    EXPECT_EQ(mc["contexts"][c]["vectors_dropped"], sc["contexts"][c]["vectors_dropped"]);
    EXPECT_EQ(mc["contexts"][c]["expected_vid"], sc["contexts"][c]["expected_vid"]);
  }
  // The traffic exercised the rules, not only the happy path.
  uint64_t stale = 0, incomplete = 0, mismatch = 0;
  for (const auto& pc : sc["ports"]) {
    stale += pc["stale"].get<uint64_t>();
    incomplete += pc["incomplete"].get<uint64_t>();
    mismatch += pc["count_mismatch"].get<uint64_t>();
  }
  EXPECT_GT(stale, 0u);
  EXPECT_GT(incomplete, 0u);
  EXPECT_GT(mismatch, 0u);
}

TEST(HostSoftEngine, SameDecisionsAsTheModelOnRandomTraffic) { same_decisions_as_the_model(design(4)); }

// Subnormals flushed (MXCSR FTZ/DAZ): the missing leaf of a 3-member tree (port 2 of 4) is a real
// -0.0 operand in the soft engine's first level too, as in the model.
TEST(HostSoftEngine, SameDecisionsAsTheModelFlushingSubnormals) {
  Inputs in;
  in.ports = 4;
  in.gbps = 10;
  in.mhz = 200;
  in.format = Format::fp32;
  in.subnormals = Subnormals::ftz;
  same_decisions_as_the_model(Config::derive(in));
}

// The frames' buffers on the soft stand-in's path come back to the chip's pool (FramePool): once
// the pool, the rings and the result cache are warm, another thousand vectors through the soft
// engine and the switch chip (contributions in, a multicast result out to 3 ports, queues drained)
// allocate nothing. Counted by this binary's operator new.
TEST(HostStandInPath, NoAllocationPerFrameOnceWarm) {
  const Config cfg = design(4);
  const wire::CtxFile ctx = one_ctx(3, 2, 5);
  auto eng = make_soft_engine(cfg, ctx);
  ChipParams cp;
  cp.dup = 0.05;  // duplicates and reordering on every port: their paths reuse buffers too
  cp.reorder = 0.05;
  cp.result_cache = 256;  // slots fill once (the first 256 VIDs of a tree), then are reused
  SwitchChip chip(4, ctx, cp);
  eng->use_pool(&chip.pool());
  std::vector<wire::Bytes> in;  // the contributions, as a link would deliver them
  for (uint32_t v = 0; v < 2200; ++v)
    for (int p = 0; p < 3; ++p) {
      wire::FrameSpec s;
      s.hdr.jid = 5;
      s.hdr.tid = static_cast<uint8_t>(v % 2);
      s.hdr.vid = v / 2;
      s.hdr.rank = static_cast<uint16_t>(p);
      std::vector<uint32_t> el(256, 0x3f800000u + v + static_cast<uint32_t>(p));
      s.payload = wire::payload_from_elems(el, 4);
      in.push_back(wire::build_frame(s));
    }
  // Frames the engine drops and counts (no context; a contribution from a port that is not a
  // member) and one it passes on (UDP to another port): their buffers go back to the pool too.
  wire::Bytes no_ctx = in[0], bypass = in[0];
  wire::put16(&no_ctx[wire::off::jid], 99);
  wire::put16(&bypass[wire::off::udp_dport], static_cast<uint16_t>(ctx.agg_port + 1));
  std::vector<EngineOut> outs;
  outs.reserve(64);
  wire::Bytes f = chip.pool().get(), g;
  uint64_t results = 0;
  auto feed = [&](int port, const wire::Bytes& frame) {
    f.assign(frame.begin(), frame.end());  // a link fills a reused buffer
    eng->inject(port, std::move(f));
    f = chip.pool().get();
  };
  auto run = [&](size_t from, size_t to) {
    for (size_t i = from; i < to; ++i) {
      feed(static_cast<int>(i % 3), in[i]);
      if (i % 3 != 2) continue;
      feed(0, no_ctx);
      feed(3, in[i]);  // port 3 is not a member
      feed(1, bypass);
      eng->run_until_idle();
      eng->drain_outputs(outs);
      for (auto& o : outs) chip.from_engine(std::move(o), Clock::now());
      outs.clear();
      for (int p = 0; p < 4; ++p)
        while (chip.pop_due(p, Clock::now() + std::chrono::seconds(1), g)) results += p < 3;
    }
  };
  run(0, 3 * 1200);  // warm: the pool, the rings, the result cache's slots
  const uint64_t before = host_test_allocations(), got = results;
  run(3 * 1200, in.size());
  EXPECT_EQ(host_test_allocations() - before, 0u);
  EXPECT_GE(results - got, 3u * 1000u);  // every vector's result reached the 3 members (and dups)
  eng->use_pool(nullptr);
}

// The stand-in completes a TCP/UDP checksum only where the sender left it to offload (the field
// holds the pseudo-header sum, as veth hands such frames over); a fragment, or a frame with a
// checksum of its own (even a wrong one), crosses unchanged.
namespace {
uint16_t fold16(uint32_t s) {
  while (s >> 16) s = (s & 0xFFFF) + (s >> 16);
  return static_cast<uint16_t>(s);
}
// The UDP datagram's one's-complement sum with its pseudo header: 0xFFFF when the checksum is right.
uint16_t udp_verify(const wire::Bytes& f) {
  const size_t len = wire::get16(&f[wire::off::udp_len]);
  uint32_t s = 17 + static_cast<uint32_t>(len);
  for (size_t i = wire::off::ip_src; i < wire::off::udp; i += 2) s += wire::get16(&f[i]);
  for (size_t i = 0; i + 1 < len; i += 2) s += wire::get16(&f[wire::off::udp + i]);
  if (len & 1) s += static_cast<uint32_t>(f[wire::off::udp + len - 1]) << 8;
  return fold16(s);
}
}  // namespace

TEST(HostStandInPath, ChecksumCompletedOnlyWhenLeftToOffload) {
  wire::FrameSpec spec;
  spec.hdr.jid = 5;
  spec.payload = wire::payload_from_elems(std::vector<uint32_t>(100, 0x40490fdbu), 4);
  wire::Bytes f = wire::build_frame(spec);
  wire::put16(&f[wire::off::udp_dport], 5001);  // ordinary UDP, not aggregation traffic
  const size_t len = wire::get16(&f[wire::off::udp_len]);
  uint32_t pseudo = 17 + static_cast<uint32_t>(len);
  for (size_t i = wire::off::ip_src; i < wire::off::udp; i += 2) pseudo += wire::get16(&f[i]);
  wire::put16(&f[wire::off::udp_csum], fold16(pseudo));  // left to offload
  ASSERT_NE(udp_verify(f), 0xFFFF);
  wire::Bytes partial = f;
  complete_l4_checksum(partial);
  EXPECT_EQ(udp_verify(partial), 0xFFFF);
  partial[wire::off::udp_csum] ^= 1;  // a wrong checksum of the sender's own: kept
  wire::Bytes wrong = partial;
  complete_l4_checksum(wrong);
  EXPECT_EQ(wrong, partial);
  for (uint16_t frag : {0x2000, 0x0010}) {  // first fragment (MF), a later one (offset)
    wire::Bytes g = f;
    wire::put16(&g[wire::off::ip_frag], frag);
    const wire::Bytes before = g;
    complete_l4_checksum(g);
    EXPECT_EQ(g, before) << std::hex << frag;
  }
}

// Ring: FIFO order across growth and wrap-around, push_front, insert_second.
TEST(HostStandInPath, RingKeepsOrder) {
  Ring<int> r;
  int next_in = 0, next_out = 0;
  for (int round = 0; round < 50; ++round) {
    for (int k = 0; k < round; ++k) r.push_back(next_in++);
    for (int k = 0; k < round / 2; ++k) ASSERT_EQ(r.take_front(), next_out++);
  }
  while (!r.empty()) ASSERT_EQ(r.take_front(), next_out++);
  EXPECT_EQ(next_out, next_in);
  r.push_back(1);
  r.push_back(2);
  r.insert_second(9);  // behind the front
  r.push_front(0);
  std::vector<int> v;
  while (!r.empty()) v.push_back(r.take_front());
  EXPECT_EQ(v, (std::vector<int>{0, 1, 9, 2}));
  r.insert_second(5);  // empty: at the front
  EXPECT_EQ(r.size(), 1u);
  EXPECT_EQ(r.take_front(), 5);
}
