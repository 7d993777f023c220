// Tests of the host library (docs/host.md): the DCTCP window, the status wait, the job's
// parameters, and the protocol's frames against an echo "accelerator".
#include "host_test_util.h"

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

// Out-of-place against the echo: the result (the input itself, world 1) lands in the output, the
// input stays as it was, nothing is staged.
TEST(HostProtocol, OutOfPlaceWritesTheOutputOnly) {
  EchoTransport tr;
  AllReduce ar(tr, echo_job(4));
  std::vector<float> in(41), out(41, -1.0f);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i) + 0.5f;
  const auto orig = in;
  ar.reduce_f32(in.data(), out.data(), in.size());
  EXPECT_EQ(out, orig);
  EXPECT_EQ(in, orig);
  EXPECT_EQ(ar.stats().calls_direct, 1u);
  EXPECT_EQ(ar.stats().bytes_staged, 0u);
  EXPECT_EQ(ar.staging_bytes(), 0u);
  ar.reduce_f32(in.data(), in.size());  // in place: staged
  EXPECT_EQ(in, orig);
  EXPECT_EQ(ar.stats().calls_direct, 1u);
  EXPECT_EQ(ar.stats().bytes_staged, 4u * in.size());
  EXPECT_EQ(ar.staging_bytes(), 4u * in.size());
}

// An output that overlaps the input without being it (shifted by 3 elements): a result written at
// once would overwrite input vectors not yet sent, so the call takes the staged path and is exact.
TEST(HostProtocol, OverlappingOutputIsStaged) {
  EchoTransport tr;
  AllReduce ar(tr, echo_job(4));
  std::vector<float> v(43);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i);
  const std::vector<float> orig(v.begin(), v.begin() + 40);
  ar.reduce_f32(v.data(), v.data() + 3, 40);
  EXPECT_EQ(std::vector<float>(v.begin() + 3, v.end()), orig);
  EXPECT_EQ(ar.stats().calls_direct, 0u);
  EXPECT_EQ(ar.stats().bytes_staged, 4u * 40);
}

// A failed out-of-place call leaves the input untouched (the output is unspecified).
TEST(HostProtocol, FailedOutOfPlaceCallLeavesTheInput) {
  EchoTransport tr;
  tr.drop_vid = 1;
  AllReduce ar(tr, echo_job(4));
  std::vector<float> in(40), out(40, 0.0f);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i);
  const auto orig = in;
  EXPECT_THROW(ar.reduce_f32(in.data(), out.data(), in.size()), AllReduceError);
  EXPECT_EQ(in, orig);
  EXPECT_EQ(ar.stats().calls_direct, 0u);
}

}  // namespace
