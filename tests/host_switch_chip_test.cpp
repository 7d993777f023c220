// Tests of the stand-in's switch chip (docs/host-standin.md): learning, flooding,
// groups, ECN marking and drain rate, the result cache and the upstream relay.
#include "host_test_util.h"

namespace {

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

}  // namespace
