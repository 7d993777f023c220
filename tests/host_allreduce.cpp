// All-reduce through the in-process stand-in built on the SystemC live model (docs/host.md): several
// workers as threads, random tensors, outputs bit-identical and equal to the tree-order sum; and
// loss repair through it. Each test runs in its own process (gtest_discover_tests): SystemC
// elaborates once per process.
#include "host_test_util.h"

namespace {

TEST(HostAllReduce, ThreeWorkersTwoTreesBitIdenticalTreeOrder) {
  const Config cfg = design(4);
  const std::vector<int> port_of{3, 0, 2};  // ranks on ports out of order: the sum follows ports
  Bed bed(cfg, ctx_for(port_of, 2, 7), ChipParams{});
  const JobParams p = two_tree_fp32_job(cfg);
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
  const JobParams p = bf16_job(cfg);
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

TEST(HostRepair, LostResultsOnOneLink) { repair_run(1, 0.03, 0, 5); }
TEST(HostRepair, LostContributionsTwoTrees) { repair_run(2, 0, 0.03, 6); }
TEST(HostRepair, BothDirections) { repair_run(2, 0.02, 0.02, 7); }
// Issue 12: 5 % in both directions on every link.
TEST(HostRepair, FivePercentEveryLinkBothWays) { repair_run(2, 0.05, 0.05, 11, true); }

// Out-of-place calls (AllReduce::reduce_raw(in, out, n), docs/host.md "Where the results go"):
// every result is written straight into the caller's output, no staging buffer is ever allocated,
// the input is only read, and the sums are the same tree-order sums, bit for bit; with 2 % loss
// both ways the lost vectors are re-aggregated from the untouched input.
TEST(HostDirect, ResultsGoStraightIntoTheOutput) {
  const Config cfg = design(4);
  const std::vector<int> port_of{3, 0, 2};
  Bed bed(cfg, ctx_for(port_of, 2, 7), ChipParams{});
  const JobParams p = two_tree_fp32_job(cfg);
  const auto in = tensors(3, 16384 + 77, 12, ref::Fmt::fp32);
  const Outcome o = run_workers(bed, in, port_of, p, 3, true);
  const auto exp = expected(in, port_of, 4, ref::Fmt::fp32);
  for (size_t r = 0; r < 3; ++r) {
    ASSERT_EQ(o.err[r], "") << "rank " << r << " " << bed.finish();
    EXPECT_EQ(o.out[r], exp) << "rank " << r;
    EXPECT_TRUE(o.in_intact[r]) << "rank " << r;
    EXPECT_EQ(o.stats[r].calls_direct, 3u) << "rank " << r;
    EXPECT_EQ(o.stats[r].bytes_staged, 0u) << "rank " << r;
    EXPECT_EQ(o.stats[r].bytes_reduced, 3u * 4 * (16384 + 77)) << "rank " << r;
    EXPECT_EQ(o.staging[r], 0u) << "rank " << r;
  }
}

TEST(HostDirect, Bf16) {
  const Config cfg = design(4, Format::bf16);
  const std::vector<int> port_of{0, 1, 2, 3};
  Bed bed(cfg, ctx_for(port_of, 1, 3), ChipParams{});
  const JobParams p = bf16_job(cfg);
  const auto in = tensors(4, 5000, 6, ref::Fmt::bf16);
  const Outcome o = run_workers(bed, in, port_of, p, 2, true);
  const auto exp = expected(in, port_of, 4, ref::Fmt::bf16);
  for (size_t r = 0; r < 4; ++r) {
    ASSERT_EQ(o.err[r], "") << "rank " << r;
    EXPECT_EQ(o.out[r], exp) << "rank " << r;
    EXPECT_TRUE(o.in_intact[r]) << "rank " << r;
    EXPECT_EQ(o.stats[r].calls_direct, 2u) << "rank " << r;
    EXPECT_EQ(o.staging[r], 0u) << "rank " << r;
  }
}

TEST(HostDirect, RepairBothDirections) { repair_run(2, 0.02, 0.02, 7, false, false, true); }
TEST(HostDirect, RepairLostResultsOnOneLink) { repair_run(1, 0.03, 0, 5, false, false, true); }

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

}  // namespace
