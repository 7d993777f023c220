// The fallback all-reduce on the hosts (host_driver/host_ring.*, docs/allocator.md "Fallback"):
// every rank's result bit for bit equal to a CPU reference that sums each chunk in the documented
// rank order, for several world sizes (non-powers of two included), odd lengths, the formats and
// their special values, with loss on every link, and through the stand-in (bypass traffic beside a
// running job's context).
#include "host_ring_util.h"
#include "leased_job.h"

namespace {

void expect_exact(const RingRun& o, const std::vector<std::vector<uint32_t>>& in, ref::Fmt fmt,
                  const std::string& what) {
  const auto exp = ring_reference(in, fmt);
  for (size_t r = 0; r < in.size(); ++r) {
    ASSERT_EQ(o.err[r], "") << what << " rank " << r;
    ASSERT_EQ(o.out[r].size(), exp.size()) << what;
    for (size_t i = 0; i < exp.size(); ++i)
      ASSERT_EQ(o.out[r][i], exp[i]) << what << " rank " << r << " element " << i << " of " << exp.size();
  }
}

std::vector<std::vector<uint32_t>> with_nans(std::vector<std::vector<uint32_t>> v, ref::Fmt fmt, uint64_t seed) {
  std::mt19937_64 rng(seed);
  const uint32_t nan = fmt == ref::Fmt::fp32 ? 0x7FA00001u : (fmt == ref::Fmt::bf16 ? 0x7FA1u : 0x7E01u);
  const uint32_t ninf = fmt == ref::Fmt::fp32 ? 0xFF800000u : (fmt == ref::Fmt::bf16 ? 0xFF80u : 0xFC00u);
  for (auto& t : v)
    for (auto& x : t) {
      const auto k = rng() % 97;
      if (k == 0) x = nan;
      if (k == 1) x = ninf;
    }
  return v;
}

// An accelerator that never answers.
class SilentTransport : public Transport {
 public:
  void send(const wire::Bytes&) override {}
  bool recv(wire::Bytes&, Clock::time_point deadline) override {
    std::this_thread::sleep_until(deadline);
    return false;
  }
};

}  // namespace

TEST(HostRing, ReferenceOrderIsTheDocumentedFold) {
  // Three ranks, three elements (one per chunk): chunk c is ((x_c + x_{c+1}) + x_{c+2}).
  const float a = 1e8f, b = 1.0f, c = -1e8f;
  const std::vector<std::vector<uint32_t>> in{{ref::float_to_bits(a), ref::float_to_bits(a), ref::float_to_bits(a)},
                                              {ref::float_to_bits(b), ref::float_to_bits(b), ref::float_to_bits(b)},
                                              {ref::float_to_bits(c), ref::float_to_bits(c), ref::float_to_bits(c)}};
  const auto e = ring_reference(in, ref::Fmt::fp32);
  EXPECT_EQ(ref::bits_to_float(e[0]), (a + b) + c);  // 0: 1e8 + 1 rounds to 1e8
  EXPECT_EQ(ref::bits_to_float(e[1]), (b + c) + a);  // 1 + -1e8 = -1e8, + 1e8 = 0
  EXPECT_EQ(ref::bits_to_float(e[2]), (c + a) + b);  // 1
  EXPECT_EQ(ref::bits_to_float(e[2]), 1.0f);
  EXPECT_EQ(ref::bits_to_float(e[0]), 0.0f);
}

TEST(HostRing, ExactForEveryWorldSizeAndOddLengths) {
  for (int w : {1, 2, 3, 4, 5, 7})
    for (size_t n : {size_t{0}, size_t{1}, size_t{2}, size_t{6}, size_t{101}, size_t{3 * 37 + 5}}) {
      const auto in = tensors(w, n, 100 * static_cast<uint64_t>(w) + n, ref::Fmt::fp32);
      Hub hub(w);
      expect_exact(run_ring(hub, in, ring_params(ref::Fmt::fp32, 37), 1), in, ref::Fmt::fp32,
                   "w=" + std::to_string(w) + " n=" + std::to_string(n));
    }
}

TEST(HostRing, SpecialValuesBitForBitInEveryFormat) {
  for (ref::Fmt fmt : {ref::Fmt::fp32, ref::Fmt::bf16, ref::Fmt::fp16})
    for (int w : {3, 5}) {
      const auto in = with_nans(tensors(w, 2001, 7 + static_cast<uint64_t>(w), fmt), fmt, 3);
      Hub hub(w);
      expect_exact(run_ring(hub, in, ring_params(fmt, 50), 2), in, fmt,
                   std::string(fmt == ref::Fmt::fp32   ? "fp32"
                               : fmt == ref::Fmt::bf16 ? "bf16"
                                                       : "fp16") +
                       " w=" + std::to_string(w));
    }
}

TEST(HostRing, LossOnEveryLinkStillExact) {
  for (int w : {2, 3, 5}) {
    const auto in = tensors(w, 20000 + 3, 11 + static_cast<uint64_t>(w), ref::Fmt::fp32);
    Hub hub(w, 0.1, 42 + static_cast<uint64_t>(w));
    RingParams p = ring_params(ref::Fmt::fp32, 300);
    p.rto_ms = 10;
    const RingRun o = run_ring(hub, in, p, 3);
    expect_exact(o, in, ref::Fmt::fp32, "loss w=" + std::to_string(w));
    uint64_t resent = 0;
    for (const auto& s : o.stats) resent += s.resent;
    EXPECT_GT(hub.dropped(), 0u);
    EXPECT_GT(resent, 0u);
  }
}

TEST(HostRing, SilentPeerIsOneErrorWithinTheTimeout) {
  const auto in = tensors(3, 1000, 5, ref::Fmt::fp32);
  Hub hub(3);
  RingParams p = ring_params(ref::Fmt::fp32, 100);
  p.timeout_ms = 300;
  p.rank = 0;
  p.world = 3;
  HubTransport tr(hub, 0);
  HostRing ring(tr, p);
  auto buf = in[0];
  const auto t0 = Clock::now();
  try {
    ring.reduce(buf.data(), buf.size());
    ADD_FAILURE() << "no error";
  } catch (const HostRingError& e) {
    EXPECT_NE(std::string(e.what()).find("nothing from rank 2 or rank 1 for 300 ms"), std::string::npos) << e.what();
  }
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - t0).count(), 2.0);
}

// Through the in-process stand-in: the fallback frames are bypass traffic, flooded to every port
// by the switch chip, while another job aggregates on its context; both exact.
TEST(HostRing, ThroughTheStandInBesideARunningJob) {
  const Config cfg = design(8);
  const std::vector<int> acc_ports{5, 6};
  Bed bed(cfg, ctx_for(acc_ports, 1, 9), ChipParams{}, true);
  const auto in = tensors(3, 5000 + 1, 77, ref::Fmt::fp32);
  const auto acc_in = tensors(2, 3000, 78, ref::Fmt::fp32);
  RingParams p = ring_params(ref::Fmt::fp32, 362);
  p.job = 12;
  p.eth_dst = fallback_group_mac(p.job);
  p.ip_dst = fallback_group(p.job);
  RingRun o;
  std::thread ring([&] { o = run_ring_on(bed.fab, {0, 2, 3}, in, p, 2); });
  JobParams ap;
  ap.jid = 9;
  ap.count = 362;
  ap.status_wait_ms = 40;
  const Outcome acc = run_workers(bed, acc_in, acc_ports, ap, 2);
  ring.join();
  expect_exact(o, in, ref::Fmt::fp32, "stand-in");
  const auto exp = expected(acc_in, acc_ports, 8, ref::Fmt::fp32);
  for (size_t r = 0; r < 2; ++r) {
    ASSERT_EQ(acc.err[r], "") << bed.finish();
    EXPECT_EQ(acc.out[r], exp);
  }
}

// The boundary's agreement in the 16-bit formats: rank 0's decision (a lease with a large id,
// addresses, TIDs) travels as nibbles summed with the others' zeros; every rank opens the same
// lease. Its accelerator here answers nothing, so each call fails and is redone on the ring: exact.
TEST(HostRing, BoundaryCarriesTheLeaseExactlyInEveryFormat) {
  for (ref::Fmt fmt : {ref::Fmt::bf16, ref::Fmt::fp16, ref::Fmt::fp32}) {
    const int W = 3;
    const auto in = tensors(W, 777, 31, fmt);
    Hub hub(W);
    std::vector<std::vector<Lease>> seen(W);
    std::vector<std::string> err(W);
    std::vector<std::vector<uint32_t>> out(W);
    std::vector<LeasedStats> st(W);
    const nlohmann::json tree0{{"tid", 3}, {"agg_ip", "10.1.2.254"}, {"group_ip", "239.0.18.3"}};
    const nlohmann::json tree1{{"tid", 4}, {"agg_ip", "10.255.0.1"}, {"group_ip", "239.0.18.4"}};
    std::vector<std::thread> th;
    for (int r = 0; r < W; ++r)
      th.emplace_back([&, r] {
        try {
          HubTransport tr(hub, r);
          LeasedJobParams lp;
          lp.job.rank = r;
          lp.job.world = W;
          lp.job.trees = 2;
          lp.job.format = fmt;
          lp.job.elem_bytes = fmt == ref::Fmt::fp32 ? 4 : 2;
          lp.job.count = 100;
          lp.job.repair_rounds = 0;
          lp.job.timeout_ms = 150;
          lp.ring = ring_params(fmt, 100);
          lp.log = [](const std::string&) {};
          AllocatorCall alloc = [&](const nlohmann::json& q) {
            if (q["op"] == "acquire")
              return nlohmann::json{
                  {"ok", true}, {"lease", 3000000001LL}, {"jid", 4660}, {"lease_ms", 60000}, {"trees", {tree0, tree1}}};
            return nlohmann::json{{"ok", true}};
          };
          AccelOpener open = [&seen, r](const Lease& ls, JobParams& jp) -> std::unique_ptr<Transport> {
            seen[static_cast<size_t>(r)].push_back(ls);
            EXPECT_EQ(jp.jid, 4660);
            EXPECT_EQ(jp.first_tid, 3);
            return std::make_unique<SilentTransport>();
          };
          LeasedJob job(tr, lp, open, r == 0 ? alloc : nullptr);
          auto b = in[static_cast<size_t>(r)];
          std::vector<uint8_t> bytes(b.size() * static_cast<size_t>(lp.job.elem_bytes));
          const size_t es = static_cast<size_t>(lp.job.elem_bytes);
          for (size_t i = 0; i < b.size(); ++i) std::memcpy(bytes.data() + i * es, &b[i], es);
          for (int it = 0; it < 2; ++it) {
            auto x = bytes;
            EXPECT_EQ(job.iteration(x.data(), b.size()), LeasedJob::Mode::ring);
            out[static_cast<size_t>(r)].assign(b.size(), 0);
            for (size_t i = 0; i < b.size(); ++i) std::memcpy(&out[static_cast<size_t>(r)][i], x.data() + i * es, es);
          }
          job.finish(1000);
          st[static_cast<size_t>(r)] = job.stats();
        } catch (const std::exception& e) {
          err[static_cast<size_t>(r)] = e.what();
        }
      });
    for (auto& t : th) t.join();
    const auto exp = ring_reference(in, fmt);
    for (int r = 0; r < W; ++r) {
      ASSERT_EQ(err[static_cast<size_t>(r)], "");
      EXPECT_EQ(out[static_cast<size_t>(r)], exp) << "rank " << r;
      EXPECT_EQ(st[static_cast<size_t>(r)].redone, 2);
      ASSERT_EQ(seen[static_cast<size_t>(r)].size(), 2u);
      for (const Lease& ls : seen[static_cast<size_t>(r)]) {
        EXPECT_EQ(ls.id, 3000000001LL);
        EXPECT_EQ(ls.jid, 4660);
        ASSERT_EQ(ls.trees.size(), 2u);
        EXPECT_EQ(ls.trees[0].tid, 3);
        EXPECT_EQ(ls.trees[1].tid, 4);
        EXPECT_EQ(ls.trees[0].agg_ip, wire::parse_ipv4("10.1.2.254"));
        EXPECT_EQ(ls.trees[1].agg_ip, wire::parse_ipv4("10.255.0.1"));
        EXPECT_EQ(ls.trees[1].group_ip, wire::parse_ipv4("239.0.18.4"));
      }
    }
  }
}
