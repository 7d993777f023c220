// Directed scenarios, one per numbered behaviour of accelerator.md. Each expected output is
// stated here independently: frames built with the wire library, sums from ref_float.h.
#include <gtest/gtest.h>

#include <map>

#include "test_model_util.h"

using namespace mt;
using model::InFrame;
using model::Options;
using model::Result;

namespace {

wire::BuildMode mode_of(const wire::CtxEntry& e) {
  wire::BuildMode m;
  m.multicast = e.multicast;
  m.group_mac = e.group_mac;
  m.group_ip = e.group_ip;
  m.own_mac = e.src_mac;
  m.own_ip = e.src_ip;
  return m;
}

Result run_model(const Config& c, const wire::CtxFile& x, const std::vector<std::vector<InFrame>>& in, Options o = {}) {
  return model::run_isolated(c, x, in, o);
}

// Context (7, 0) with members 0 and 1 on the four-port design: the VID scenarios of rules 5 and 6.
Result run_pair(const std::vector<std::vector<InFrame>>& in) {
  return run_model(cfg4(), ctxs({mcast(7, 0, {0, 1})}), in);
}

// The VIDs of the frames on m_agg, in order.
std::vector<uint32_t> agg_vids(const Result& r) {
  std::vector<uint32_t> v;
  for (const auto& f : r.agg) v.push_back(wire::parse_header(f.data).vid);
  return v;
}

// Identities of rule 10, for every port.
void check_identities(const Result& r) {
  for (size_t p = 0; p < r.port_counters.size(); ++p) {
    const auto& v = r.port_counters[p];
    EXPECT_EQ(v[kRxFrames], v[kBypassFrames] + v[kResultPassed] + v[kAggAdmitted] + v[kRunt] + v[kRxError] +
                                v[kMalformed] + v[kNoContext] + v[kNotMember] + v[kOverflow] + v[kBypassOverflow])
        << "port " << p;
    EXPECT_EQ(v[kAggAdmitted], r.consumed_per_port[p] + v[kStale] + v[kIncomplete] + v[kCountMismatch] + v[kTimeout] +
                                   r.still_queued_per_port[p])
        << "port " << p;
    EXPECT_EQ(v[kTxFrames], v[kBypassFrames] + v[kResultPassed]) << "port " << p;
    EXPECT_EQ(v[kTxFrames], r.ports[p].size()) << "port " << p;
  }
  EXPECT_EQ(r.agg_tx_frames, r.agg.size());
}

// The outcome on context 0 of a VID scenario: the VIDs of the sums sent on m_agg, E afterwards,
// the vectors dropped; and rule 10's identities.
void expect_outcome(const Result& r, const std::vector<uint32_t>& vids, uint32_t expected_vid, uint64_t dropped) {
  EXPECT_EQ(agg_vids(r), vids);
  EXPECT_EQ(r.contexts[0].expected_vid, expected_vid);
  EXPECT_EQ(r.contexts[0].vectors_dropped, dropped);
  check_identities(r);
}

const std::vector<uint32_t> kA = {fbits(1e30f), fbits(1.0f), fbits(-3.5f)};
const std::vector<uint32_t> kB = {fbits(1.0f), fbits(1e-30f), fbits(0.25f)};
const std::vector<uint32_t> kC = {fbits(-1e30f), fbits(-1.0f), fbits(1e20f)};
const std::vector<uint32_t> kD = {fbits(1.0f), fbits(3.0f), fbits(-1e20f)};

}  // namespace

// Rule 1: bypass frames leave on the same port, unchanged (tuser included), in order.
TEST(ModelBypass, UnchangedAndInOrder) {
  const Config c = cfg4();
  auto in = inputs(4);
  std::vector<Bytes> sent;
  Bytes vlan = contrib(0, 7, 0, 0, {1});
  vlan.insert(vlan.begin() + 12, {0x81, 0x00, 0x00, 0x05});
  Bytes tcp = contrib(0, 7, 0, 0, {1});
  tcp[23] = 6;
  Bytes frag = contrib(0, 7, 0, 0, {1});
  frag[20] = 0x20;
  Bytes arp(60, 0);
  arp[12] = 0x08;
  arp[13] = 0x06;
  for (const Bytes& f :
       {bypass_frame(0, 1, 1500), vlan, tcp, frag, arp, bypass_frame(0, 2, 14), bypass_frame(0, 3, 41)})
    in[0].push_back({f, false});
  in[0].push_back({bypass_frame(0, 4), true});  // a bad frame passes, tuser and all
  const Result r = run_model(c, ctxs({mcast(7, 0, {0, 1, 2, 3})}), in);
  ASSERT_EQ(r.ports[0].size(), in[0].size());
  for (size_t i = 0; i < in[0].size(); ++i) {
    EXPECT_EQ(r.ports[0][i].data, in[0][i].data) << i;
    EXPECT_EQ(r.ports[0][i].tuser, in[0][i].tuser) << i;
    if (i) {
      EXPECT_GT(r.ports[0][i].cycle, r.ports[0][i - 1].cycle);
    }
  }
  EXPECT_EQ(ctr(r, 0, kBypassFrames), in[0].size());
  EXPECT_TRUE(r.agg.empty());
  check_identities(r);
}

// Rule 2: runts.
TEST(ModelAdmission, Runt) {
  const Config c = cfg4();
  auto in = inputs(4);
  in[2].push_back({Bytes(13, 0xff), false});
  in[2].push_back({Bytes(), false});
  const Result r = run_model(c, ctxs({}), in);
  EXPECT_EQ(ctr(r, 2, kRunt), 2u);
  EXPECT_EQ(ctr(r, 2, kRxFrames), 2u);
  EXPECT_TRUE(r.ports[2].empty());
  check_identities(r);
}

// Rule 2: the checks in order, each failure exactly one counter.
TEST(ModelAdmission, ChecksInOrder) {
  const Config c = cfg4();
  auto in = inputs(4);
  Bytes bad = contrib(1, 7, 0, 0, kA);
  bad[42] = 9;                                                           // malformed...
  in[1].push_back({bad, true});                                          // ...and tuser: rx_error wins
  in[1].push_back({bad, false});                                         // malformed
  in[1].push_back({contrib(1, 8, 0, 0, kA), false});                     // no context (8, 0)
  in[1].push_back({contrib(1, 7, 1, 0, kA), false});                     // no context (7, 1)
  in[3].push_back({contrib(3, 7, 0, 0, kA), false});                     // port 3 is not a member
  in[3].push_back({contrib(3, 7, 0, 0, kA, wire::kFlagResult), false});  // RESULT on a multicast ctx
  Bytes big = contrib(1, 7, 0, 0, std::vector<uint32_t>(c.max_elems + 1, 0));
  in[1].push_back({big, false});  // COUNT > MAX_ELEMS: malformed
  const Result r = run_model(c, ctxs({mcast(7, 0, {0, 1, 2})}), in);
  EXPECT_EQ(ctr(r, 1, kRxError), 1u);
  EXPECT_EQ(ctr(r, 1, kMalformed), 2u);
  EXPECT_EQ(ctr(r, 1, kNoContext), 2u);
  EXPECT_EQ(ctr(r, 3, kNotMember), 2u);
  EXPECT_EQ(ctr(r, 1, kAggAdmitted) + ctr(r, 3, kAggAdmitted), 0u);
  EXPECT_TRUE(r.agg.empty());
  EXPECT_TRUE(r.ports[1].empty());
  check_identities(r);
}

// docs/rtl.md, "tkeep outside the contract": frames given lane by lane. A hole on a beat that is
// not last, a null beat inside the frame or a hole on the last beat: dropped whole as rx_error,
// whatever the class; a null last beat after a full one only ends the frame.
TEST(ModelAdmission, KeepOutsideTheContract) {
  const Config c = cfg4();
  const size_t bb = static_cast<size_t>(c.bus_bytes);
  auto in = inputs(4);
  // Lane by lane: the frame's bytes padded to whole beats, every byte kept.
  auto lanes = [&](const Bytes& f) {
    InFrame x{f, false};
    x.data.resize((f.size() + bb - 1) / bb * bb, 0xee);
    x.keep.assign(x.data.size(), 0);
    std::fill(x.keep.begin(), x.keep.begin() + static_cast<long>(f.size()), 1);
    return x;
  };
  Bytes byp(197, 0x33);
  byp[12] = 0x08, byp[13] = 0x06;
  const std::vector<uint32_t> x = {fbits(1.5f), fbits(2.0f), fbits(-3.0f), fbits(0.25f)};
  const std::vector<uint32_t> y = {fbits(0.5f), fbits(-2.0f), fbits(7.0f), fbits(1e20f)};
  const Bytes a0 = contrib(0, 7, 0, 0, x), a1 = contrib(1, 7, 0, 0, y);
  ASSERT_EQ(a0.size() % bb, 0u);  // 64 + 4 * 4 bytes: whole beats at W = 64
  InFrame hole = lanes(a0);
  hole.keep[3] = 0;  // beat 0, not last
  InFrame null_inside = lanes(a0);
  null_inside.data.insert(null_inside.data.begin() + static_cast<long>(bb), bb, 0);
  null_inside.keep.insert(null_inside.keep.begin() + static_cast<long>(bb), bb, 0);
  InFrame last_hole = lanes(byp);  // 197 bytes: the last beat keeps lanes 0..4; lane 6 set above
  last_hole.keep[last_hole.keep.size() - bb + 6] = 1;
  InFrame null_end = lanes(a0);  // then the same contribution, ended by a null beat: admitted
  null_end.data.insert(null_end.data.end(), bb, 0x77);
  null_end.keep.insert(null_end.keep.end(), bb, 0);
  InFrame byp_lanes = lanes(byp);  // the contract kept, lane by lane: bypass as its bytes
  in[0] = {hole, null_inside, last_hole, null_end, byp_lanes};
  in[1].push_back({a1, false});
  const auto e = mcast(7, 0, {0, 1});
  const Result r = run_model(c, ctxs({e}), in);
  EXPECT_EQ(ctr(r, 0, kRxError), 3u);
  EXPECT_EQ(ctr(r, 0, kAggAdmitted), 1u);
  EXPECT_EQ(ctr(r, 0, kBypassFrames), 1u);
  ASSERT_EQ(r.ports[0].size(), 1u);
  EXPECT_EQ(r.ports[0][0].data, byp);
  ASSERT_EQ(r.agg.size(), 1u);  // VID 0 summed once, from the null-ended contribution
  const auto sum = expected_sum(c, {x, y}, {0, 1});
  EXPECT_EQ(r.agg[0].data, wire::build_result(a0, wire::payload_from_elems(sum, 4), false, false, mode_of(e)));
  check_identities(r);
}

// Rule 6 and wire-format.md: a completed vector, sums in tree order, built frame exact.
TEST(ModelAggregation, CompleteVectorsExactSums) {
  const Config c = cfg4();
  const auto e = mcast(7, 0, {0, 1, 2, 3});
  auto in = inputs(4);
  const std::vector<std::vector<uint32_t>> vals = {kA, kB, kC, kD};
  for (uint32_t vid = 0; vid < 3; ++vid)
    for (int p = 0; p < 4; ++p) in[p].push_back({contrib(p, 7, 0, vid, vals[p]), false});
  const Result r = run_model(c, ctxs({e}), in);
  ASSERT_EQ(r.agg.size(), 3u);
  const auto sum = expected_sum(c, vals, {0, 1, 2, 3});
  // (1e30 + 1) + (-1e30 + 1) = +0 in tree order, where a sequential sum would give 1.
  EXPECT_EQ(sum[0], 0u);
  for (uint32_t vid = 0; vid < 3; ++vid) {
    const Bytes want =
        wire::build_result(contrib(0, 7, 0, vid, kA), wire::payload_from_elems(sum, 4), false, false, mode_of(e));
    EXPECT_EQ(r.agg[vid].data, want) << "vid " << vid;
  }
  EXPECT_EQ(r.contexts[0].vectors_completed, 3u);
  EXPECT_EQ(r.contexts[0].expected_vid, 3u);
  EXPECT_EQ(r.contexts[0].vectors_dropped, 0u);
  for (int p = 0; p < 4; ++p) EXPECT_EQ(ctr(r, p, kAggAdmitted), 3u);
  check_identities(r);
}

// numerics.md: an absent port's leaf is -0.0; the base frame is the lowest-index member's.
TEST(ModelAggregation, PartialMembershipUsesNegativeZeroLeaves) {
  const Config c = cfg4();
  const auto e = mcast(9, 1, {1, 3});
  auto in = inputs(4);
  const std::vector<uint32_t> neg0 = {0x80000000u, 0x80000000u, 0x7FC00001u};  // -0, -0, signalling-ish NaN
  const std::vector<uint32_t> one = {0x80000000u, 0x00000001u, 0x3f800000u};
  in[1].push_back({contrib(1, 9, 1, 0, neg0), false});
  in[3].push_back({contrib(3, 9, 1, 0, one), false});
  const Result r = run_model(c, ctxs({e}), in);
  ASSERT_EQ(r.agg.size(), 1u);
  std::vector<std::vector<uint32_t>> vals(4);
  vals[1] = neg0;
  vals[3] = one;
  const auto sum = expected_sum(c, vals, {1, 3});
  EXPECT_EQ(sum[0], 0x80000000u);  // -0 + -0 = -0
  EXPECT_EQ(sum[1], 0x00000001u);  // subnormal kept (ieee)
  EXPECT_EQ(sum[2], 0x7FC00000u);  // canonical NaN
  EXPECT_EQ(r.agg[0].data,
            wire::build_result(in[1][0].data, wire::payload_from_elems(sum, 4), false, false, mode_of(e)));
}

// Rule 6: COUNTs differ.
TEST(ModelAggregation, CountMismatchDropsAllAndAdvancesByOne) {
  auto in = inputs(4);
  in[0].push_back({contrib(0, 7, 0, 0, {1, 2}), false});
  in[1].push_back({contrib(1, 7, 0, 0, {1, 2, 3}), false});
  in[0].push_back({contrib(0, 7, 0, 1, {1}), false});
  in[1].push_back({contrib(1, 7, 0, 1, {2}), false});
  const Result r = run_pair(in);
  EXPECT_EQ(ctr(r, 0, kCountMismatch), 1u);
  EXPECT_EQ(ctr(r, 1, kCountMismatch), 1u);
  expect_outcome(r, {1}, 2, 1);
}

// Rule 6: a lost contribution makes the vector incomplete; E moves on by exactly one.
TEST(ModelAggregation, IncompleteAfterLoss) {
  auto in = inputs(4);
  for (uint32_t v : {0u, 1u, 2u}) in[0].push_back({contrib(0, 7, 0, v, {1}), false});
  for (uint32_t v : {1u, 2u}) in[1].push_back({contrib(1, 7, 0, v, {2}), false});  // VID 0 lost
  const Result r = run_pair(in);
  EXPECT_EQ(ctr(r, 0, kIncomplete), 1u);
  EXPECT_EQ(ctr(r, 1, kIncomplete), 0u);
  expect_outcome(r, {1, 2}, 3, 1);
}

// Rule 6: every head ahead: E jumps to the smallest (serial arithmetic), no drop counted.
TEST(ModelAggregation, AllAheadJumpsToSmallest) {
  auto in = inputs(4);
  in[0].push_back({contrib(0, 7, 0, 6, {1}), false});
  in[1].push_back({contrib(1, 7, 0, 5, {2}), false});
  in[1].push_back({contrib(1, 7, 0, 6, {3}), false});
  const Result r = run_pair(in);
  // E: 0 -> 5 (smallest) -> incomplete at 5 (port 1) -> 6 -> complete -> 7.
  EXPECT_EQ(ctr(r, 1, kIncomplete), 1u);
  expect_outcome(r, {6}, 7, 1);
}

// Rule 5: a late duplicate is stale.
TEST(ModelAggregation, StaleDuplicate) {
  auto in = inputs(4);
  in[0].push_back({contrib(0, 7, 0, 0, {1}), false});
  in[1].push_back({contrib(1, 7, 0, 0, {2}), false});
  in[0].push_back({contrib(0, 7, 0, 0, {1}), false});  // duplicate of VID 0
  in[0].push_back({contrib(0, 7, 0, 1, {1}), false});
  in[1].push_back({contrib(1, 7, 0, 1, {2}), false});
  const Result r = run_pair(in);
  EXPECT_EQ(ctr(r, 0, kStale), 1u);
  expect_outcome(r, {0, 1}, 2, 0);
}

// FIN is propagated (OR) and resets nothing: VIDs continue, a late duplicate stays stale.
TEST(ModelAggregation, FinPropagatesAndDoesNotReset) {
  auto in = inputs(4);
  in[0].push_back({contrib(0, 7, 0, 0, {1}, 0), false});
  in[1].push_back({contrib(1, 7, 0, 0, {2}, wire::kFlagFin), false});
  in[0].push_back({contrib(0, 7, 0, 0, {1}), false});  // duplicate after the FIN vector
  in[0].push_back({contrib(0, 7, 0, 1, {1}), false});
  in[1].push_back({contrib(1, 7, 0, 1, {2}), false});
  const Result r = run_pair(in);
  ASSERT_EQ(r.agg.size(), 2u);
  EXPECT_EQ(wire::parse_header(r.agg[0].data).flags, wire::kFlagFin | wire::kFlagResult);
  EXPECT_EQ(wire::parse_header(r.agg[1].data).flags, wire::kFlagResult);
  EXPECT_EQ(wire::parse_header(r.agg[1].data).vid, 1u);
  EXPECT_EQ(ctr(r, 0, kStale), 1u);
  EXPECT_EQ(r.contexts[0].expected_vid, 2u);
}

// ECN: CE if any contribution had CE, else the copied (lowest member's) ECN.
TEST(ModelAggregation, EcnRule) {
  auto in = inputs(4);
  in[0].push_back({contrib(0, 7, 0, 0, {1}, 0, 0b01), false});
  in[1].push_back({contrib(1, 7, 0, 0, {2}, 0, 0b10), false});
  in[0].push_back({contrib(0, 7, 0, 1, {1}, 0, 0b01), false});
  in[1].push_back({contrib(1, 7, 0, 1, {2}, 0, 0b11), false});
  const Result r = run_pair(in);
  ASSERT_EQ(r.agg.size(), 2u);
  EXPECT_EQ(wire::ecn(r.agg[0].data), 0b01);
  EXPECT_EQ(wire::ecn(r.agg[1].data), 0b11);
}

// Upstream mode: partial sum with RESULT = 0 on m_agg; final sums coming down pass through.
TEST(ModelUpstream, PartialSumAndResultPassThrough) {
  const Config c = cfg4();
  const auto e = upstream(11, 0, {1, 2}, 3);
  auto in = inputs(4);
  in[1].push_back({contrib(1, 11, 0, 0, kA), false});
  in[2].push_back({contrib(2, 11, 0, 0, kB), false});
  const Bytes down = contrib(3, 11, 0, 0, kC, wire::kFlagResult);
  in[3].push_back({down, false});
  in[1].push_back({contrib(1, 11, 0, 0, kC, wire::kFlagResult), false});  // RESULT on a member port
  const Result r = run_model(c, ctxs({e}), in);
  std::vector<std::vector<uint32_t>> vals(4);
  vals[1] = kA;
  vals[2] = kB;
  ASSERT_EQ(r.agg.size(), 1u);
  const Bytes want = wire::build_result(in[1][0].data, wire::payload_from_elems(expected_sum(c, vals, {1, 2}), 4),
                                        false, false, mode_of(e));
  EXPECT_EQ(r.agg[0].data, want);
  EXPECT_EQ(wire::parse_header(want).flags & wire::kFlagResult, 0);
  ASSERT_EQ(r.ports[3].size(), 1u);
  EXPECT_EQ(r.ports[3][0].data, down);
  EXPECT_EQ(ctr(r, 3, kResultPassed), 1u);
  EXPECT_EQ(ctr(r, 1, kNotMember), 1u);
  check_identities(r);
}

// Rule 7: timeouts with an empty member queue.
TEST(ModelTimeout, DropsExpectedHeadsThenJumps) {
  auto in = inputs(4);
  in[0].push_back({contrib(0, 7, 0, 0, {1}), false});
  in[2].push_back({contrib(2, 7, 0, 0, {1}), false});
  in[0].push_back({contrib(0, 7, 0, 4, {1}), false});
  const Result r = run_model(cfg4(), ctxs({mcast(7, 0, {0, 1, 2}, 200)}), in);
  // VID 0 times out (ports 0 and 2), E = 1; then the only head (VID 4) is ahead: E = 4; then it
  // times out in turn: E = 5.
  EXPECT_EQ(ctr(r, 0, kTimeout), 2u);
  EXPECT_EQ(ctr(r, 2, kTimeout), 1u);
  EXPECT_EQ(r.contexts[0].vectors_dropped, 2u);
  EXPECT_EQ(r.contexts[0].expected_vid, 5u);
  EXPECT_GT(r.cycles, 3u * 200u);
  check_identities(r);
}

TEST(ModelTimeout, ZeroMeansNever) {
  auto in = inputs(4);
  in[0].push_back({contrib(0, 7, 0, 0, {1}), false});
  const Result r = run_pair(in);
  EXPECT_EQ(ctr(r, 0, kTimeout), 0u);
  EXPECT_EQ(r.still_queued, 1u);
  EXPECT_EQ(r.contexts[0].expected_vid, 0u);
  check_identities(r);
}

// Rule 9: contribution space with a per-context reservation, and bypass overflow.
TEST(ModelBuffers, OverflowAndReservation) {
  // 1 KiB per port: 512 bytes bypass, 512 contributions; S = 64 + 4*8 = 96 bytes; two contexts
  // reserve 96 each, 320 shared.
  const Config c = cfg4(2, 1, 8);
  ASSERT_EQ(c.bypass_bytes, 512);
  auto in = inputs(4);
  for (uint32_t v = 0; v < 10; ++v) in[0].push_back({contrib(0, 7, 0, v, {1, 2, 3, 4, 5, 6, 7, 8}), false});
  in[0].push_back({contrib(0, 9, 0, 0, {1}), false});  // the other context still has its frame of room
  in[0].push_back({bypass_frame(0, 1, 600), false});   // longer than bypass_bytes: always dropped
  in[0].push_back({bypass_frame(0, 2, 200), false});
  const Result r = run_model(c, ctxs({mcast(7, 0, {0, 1}), mcast(9, 0, {0, 1})}), in);
  // Context 7: 96 reserved + 320 shared = 416 bytes = 4 frames of 96.
  EXPECT_EQ(ctr(r, 0, kAggAdmitted), 4u + 1u);
  EXPECT_EQ(ctr(r, 0, kOverflow), 6u);
  EXPECT_EQ(ctr(r, 0, kBypassOverflow), 1u);
  EXPECT_EQ(ctr(r, 0, kBypassFrames), 1u);
  check_identities(r);
}

// Rules 1 and 4: a stalled context blocks neither bypass traffic nor another context.
TEST(ModelQueues, NoHeadOfLineBlocking) {
  const Config c = cfg4();
  auto in = inputs(4);
  for (uint32_t v = 0; v < 5; ++v) {
    in[0].push_back({contrib(0, 7, 0, v, {1}), false});  // context 0 waits for port 1 forever
    in[0].push_back({bypass_frame(0, static_cast<int>(v)), false});
    in[0].push_back({contrib(0, 9, 0, v, {2}), false});
    in[2].push_back({contrib(2, 9, 0, v, {3}), false});
  }
  const Result r = run_model(c, ctxs({mcast(7, 0, {0, 1}), mcast(9, 0, {0, 2})}), in);
  EXPECT_EQ(r.ports[0].size(), 5u);
  EXPECT_EQ(r.contexts[1].vectors_completed, 5u);
  EXPECT_EQ(r.contexts[0].vectors_completed, 0u);
  EXPECT_EQ(r.still_queued, 5u);
  check_identities(r);
}

// Rule 8: built frames of one context in VID order; ties in context-index order.
TEST(ModelDelivery, ContextIndexOrderOnTies) {
  const Config c = cfg4();
  auto in = inputs(4);
  // Both contexts complete VID 0 in the same cycle; context 0 (jid 7) goes first. The shared
  // trees then serve one vector at a time, so afterwards only per-context order is fixed.
  for (uint32_t v = 0; v < 3; ++v)
    for (int p = 0; p < 2; ++p) {
      in[p].push_back({contrib(p, 9, 0, v, {1}), false});
      in[p + 2].push_back({contrib(p + 2, 7, 0, v, {1}), false});
    }
  const Result r = run_model(c, ctxs({mcast(7, 0, {2, 3}), mcast(9, 0, {0, 1})}), in);
  ASSERT_EQ(r.agg.size(), 6u);
  EXPECT_EQ(wire::parse_header(r.agg[0].data).jid, 7);
  EXPECT_EQ(r.agg[0].context, 0);
  std::map<int, uint32_t> next;
  for (const auto& f : r.agg) {
    const auto h = wire::parse_header(f.data);
    EXPECT_EQ(h.vid, next[h.jid]++) << "jid " << h.jid;
  }
  EXPECT_EQ(next[7], 3u);
  EXPECT_EQ(next[9], 3u);
}

// Performance contract: back-to-back frames at the full bus rate, no drops, sums at that rate;
// bypass and aggregation latencies as config.json reports.
TEST(ModelTiming, LineRateAndLatencies) {
  const Config c = cfg4();
  const int n_vec = 50;
  auto in = inputs(4);
  const std::vector<uint32_t> e(100, fbits(0.5f));  // 464-byte frames: 58 beats of 8 bytes
  for (int v = 0; v < n_vec; ++v)
    for (int p = 0; p < 4; ++p) in[p].push_back({contrib(p, 7, 0, static_cast<uint32_t>(v), e), false});
  const Result r = run_model(c, ctxs({mcast(7, 0, {0, 1, 2, 3})}), in);
  ASSERT_EQ(r.agg.size(), static_cast<size_t>(n_vec));
  const uint64_t beats = (64 + 400 + 7) / 8;
  // The last contribution's last beat arrives at cycle n_vec*beats - 1.
  EXPECT_EQ(r.agg.front().cycle, beats - 1 + static_cast<uint64_t>(c.agg_latency));
  for (int v = 1; v < n_vec; ++v) EXPECT_EQ(r.agg[v].cycle - r.agg[v - 1].cycle, beats) << v;
  for (int p = 0; p < 4; ++p) EXPECT_EQ(ctr(r, p, kOverflow), 0u);

  auto in2 = inputs(4);
  in2[1].push_back({bypass_frame(1, 0, 100), false});
  const Result r2 = run_model(c, ctxs({}), in2);
  ASSERT_EQ(r2.ports[1].size(), 1u);
  EXPECT_EQ(r2.ports[1][0].cycle, (100 + 7) / 8 - 1 + static_cast<uint64_t>(c.bypass_latency));
}

// Backpressure and idle cycles change timing only.
TEST(ModelTiming, BackpressureAndIdleKeepContents) {
  const Config c = cfg4();
  auto in = inputs(4);
  for (uint32_t v = 0; v < 20; ++v)
    for (int p = 0; p < 4; ++p) {
      in[p].push_back({contrib(p, 7, 0, v, {fbits(float(v)), fbits(float(p))}), false});
      in[p].push_back({bypass_frame(p, static_cast<int>(v)), false});
    }
  const auto x = ctxs({mcast(7, 0, {0, 1, 2, 3})});
  const Result a = run_model(c, x, in);
  Options o;
  o.seed = 5;
  o.idle_pct = 40;
  o.backpressure_pct = 60;
  const Result b = run_model(c, x, in, o);
  ASSERT_EQ(a.agg.size(), b.agg.size());
  for (size_t i = 0; i < a.agg.size(); ++i) EXPECT_EQ(a.agg[i].data, b.agg[i].data);
  for (int p = 0; p < 4; ++p) {
    ASSERT_EQ(a.ports[p].size(), b.ports[p].size());
    for (size_t i = 0; i < a.ports[p].size(); ++i) EXPECT_EQ(a.ports[p][i].data, b.ports[p][i].data);
  }
  EXPECT_GT(b.cycles, a.cycles);
  EXPECT_EQ(model::counters_json(a), model::counters_json(b));
}

// Multi-level trees: two leaves in upstream mode under a root in multicast mode give the tree
// order over the leaves' partial sums; final sums pass back down through the leaves.
TEST(ModelMultiLevel, TwoLeavesUnderARoot) {
  const Config c = cfg4();
  const uint16_t jid = 21;
  const std::vector<std::vector<uint32_t>> w = {{fbits(1e30f), fbits(0.1f)},
                                                {fbits(1.0f), fbits(0.2f)},
                                                {fbits(-1e30f), fbits(0.3f)},
                                                {fbits(1.0f), fbits(0.4f)}};
  // Leaf L0: workers 0, 1 on ports 0, 1, uplink port 3. Leaf L1: workers 2, 3 on its ports 0, 1.
  const auto leaf = ctxs({upstream(jid, 0, {0, 1}, 3)});
  std::vector<Bytes> partial;
  for (int l = 0; l < 2; ++l) {
    auto in = inputs(4);
    for (int p = 0; p < 2; ++p) in[p].push_back({contrib(p, jid, 0, 0, w[2 * l + p]), false});
    const Result r = run_model(c, leaf, in);
    ASSERT_EQ(r.agg.size(), 1u);
    std::vector<std::vector<uint32_t>> v(4);
    v[0] = w[2 * l];
    v[1] = w[2 * l + 1];
    EXPECT_EQ(wire::payload_elems(r.agg[0].data, 4), expected_sum(c, v, {0, 1}));
    partial.push_back(r.agg[0].data);
  }
  // Root: the leaves' uplinks arrive on its ports 0 and 1.
  auto in = inputs(4);
  in[0].push_back({partial[0], false});
  in[1].push_back({partial[1], false});
  const Result root = run_model(c, ctxs({mcast(jid, 0, {0, 1})}), in);
  ASSERT_EQ(root.agg.size(), 1u);
  std::vector<std::vector<uint32_t>> v(4);
  v[0] = wire::payload_elems(partial[0], 4);
  v[1] = wire::payload_elems(partial[1], 4);
  EXPECT_EQ(wire::payload_elems(root.agg[0].data, 4), expected_sum(c, v, {0, 1}));
  EXPECT_EQ(wire::payload_elems(root.agg[0].data, 4)[0], 0u);  // leaves: 1e30 + 1 = 1e30, -1e30 + 1 = -1e30
  EXPECT_TRUE(wire::parse_header(root.agg[0].data).result());
  // The final sum comes down a leaf's uplink and passes through it.
  auto down = inputs(4);
  down[3].push_back({root.agg[0].data, false});
  const Result l0 = run_model(c, leaf, down);
  ASSERT_EQ(l0.ports[3].size(), 1u);
  EXPECT_EQ(l0.ports[3][0].data, root.agg[0].data);
  EXPECT_EQ(ctr(l0, 3, kResultPassed), 1u);
}

// 16-bit formats sum with the reference too.
TEST(ModelAggregation, Bf16AndFp16) {
  for (Format f : {Format::bf16, Format::fp16}) {
    const Config c = cfg4(8, 64, 0, f);
    auto in = inputs(4);
    const std::vector<std::vector<uint32_t>> vals = {
        {0x3f80, 0x0001, 0x7bff}, {0x3f80, 0x8001, 0x7bff}, {0x4000, 0x0001, 0x0400}, {0xbf80, 0x0003, 0x7c00}};
    for (int p = 0; p < 4; ++p) in[p].push_back({contrib(p, 7, 0, 0, vals[p], 0, 0b10, 2), false});
    const Result r = run_model(c, ctxs({mcast(7, 0, {0, 1, 2, 3})}), in);
    ASSERT_EQ(r.agg.size(), 1u);
    EXPECT_EQ(wire::payload_elems(r.agg[0].data, 2), expected_sum(c, vals, {0, 1, 2, 3}));
  }
}

// Performance contract at 8 x 100 Gbit/s, W = 512: full-rate MAX_ELEMS vectors, no drop, one
// sum per frame time.
TEST(ModelTiming, WideBusLineRate) {
  const Config c = cfg4(8, 64, -1, Format::fp32, 8, 100, 250);
  ASSERT_EQ(c.bus_bits, 512);
  auto in = inputs(8);
  const std::vector<uint32_t> e(static_cast<size_t>(c.max_elems), fbits(1.5f));
  for (uint32_t v = 0; v < 30; ++v)
    for (int p = 0; p < 8; ++p) in[p].push_back({contrib(p, 3, 0, v, e), false});
  const Result r = run_model(c, ctxs({mcast(3, 0, {0, 1, 2, 3, 4, 5, 6, 7})}), in);
  ASSERT_EQ(r.agg.size(), 30u);
  const uint64_t beats = (64 + 4 * static_cast<uint64_t>(c.max_elems) + 63) / 64;
  for (size_t v = 1; v < r.agg.size(); ++v) EXPECT_EQ(r.agg[v].cycle - r.agg[v - 1].cycle, beats);
  EXPECT_EQ(wire::payload_elems(r.agg[0].data, 4)[0], fbits(12.0f));
  check_identities(r);
}

// Rule 3: passed-down final sums keep their arrival order relative to bypass frames.
TEST(ModelUpstream, PassThroughKeepsArrivalOrder) {
  const Config c = cfg4();
  auto in = inputs(4);
  const Bytes r1 = contrib(3, 11, 0, 0, {1}, wire::kFlagResult | wire::kFlagFin);
  const Bytes r2 = contrib(3, 11, 0, 1, {2}, wire::kFlagResult);
  in[3] = {{bypass_frame(3, 1, 1500), false}, {r1, false}, {bypass_frame(3, 2, 64), false}, {r2, false}};
  const Result r = run_model(c, ctxs({upstream(11, 0, {0, 1}, 3)}), in);
  ASSERT_EQ(r.ports[3].size(), 4u);
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(r.ports[3][i].data, in[3][i].data) << i;
  EXPECT_EQ(ctr(r, 3, kResultPassed), 2u);
  EXPECT_EQ(ctr(r, 3, kBypassFrames), 2u);
  EXPECT_TRUE(r.agg.empty());
  check_identities(r);
}

// numerics.md ftz mode: subnormal inputs count as zero (DAZ) and results flush (FTZ).
TEST(ModelAggregation, Fp32FlushToZeroMode) {
  Inputs i;
  i.ports = 3;
  i.gbps = 10;
  i.mhz = 200;
  i.subnormals = Subnormals::ftz;
  const Config c = Config::derive(i);
  auto in = inputs(3);
  const std::vector<std::vector<uint32_t>> vals = {{0x00000001u, 0x00800000u, 0x80000005u},
                                                   {0x00000002u, 0x80000001u, 0x3f800000u},
                                                   {0x00400000u, 0x00000000u, 0x00000003u}};
  for (int p = 0; p < 3; ++p) in[p].push_back({contrib(p, 7, 0, 0, vals[p]), false});
  const Result r = run_model(c, ctxs({mcast(7, 0, {0, 1, 2})}), in);
  ASSERT_EQ(r.agg.size(), 1u);
  const auto want = expected_sum(c, vals, {0, 1, 2});
  EXPECT_EQ(want[0] & 0x7FFFFFFFu, 0u);  // all-subnormal inputs sum to a zero
  EXPECT_EQ(want[1], 0x00800000u);       // the normal input survives, the subnormal is ignored
  EXPECT_EQ(wire::payload_elems(r.agg[0].data, 4), want);
}
