// The soft engine (switch --engine soft) and the stand-in's per-frame path (docs/host.md).
#include "host_test_util.h"

// ---------------------------------------------------------------------------------------------
// The soft engine (switch --engine soft): the behaviour rules in C++ with CPU tree-order sums.

TEST(HostSoftEngine, ThreeWorkersTwoTreesBitIdenticalTreeOrder) {
  const Config cfg = design(4);
  const std::vector<int> port_of{3, 0, 2};
  Bed bed(cfg, ctx_for(port_of, 2, 7), ChipParams{}, true);
  const JobParams p = two_tree_fp32_job(cfg);
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
