// Workers under the allocator (host_driver/leased_job.*, docs/allocator.md "Fallback"), in process:
// the stand-in on the SystemC live model (its registers reached by the allocator between the
// stand-in's rounds), the allocator service on a Unix socket, two jobs of two workers on a design
// with 8 contexts where job A takes 5 and job B needs 4. B falls back to the ring, moves onto the
// accelerator at an iteration boundary once A released its lease, and every iteration of both
// jobs is exact: on the accelerator to the tree order over ports, on the ring to the ring's order.
#include <future>

#include "allocator.h"
#include "host_ring_util.h"
#include "leased_job.h"
#include "link_split.h"
#include "tmp_dir.h"

namespace {

using json = nlohmann::json;
const std::string kRtl = std::string(PANAMA_SOURCE_DIR) + "/rtl_out/p4_10g_200mhz";

// The stand-in's register port for another thread: requests queued, served by the loop's control
// hook between rounds (the engine idle), the switch chip's groups re-read after writes.
class RegQueue {
 public:
  uint32_t call(bool write, uint32_t a, uint32_t v) {
    std::promise<uint32_t> done;
    auto f = done.get_future();
    {
      std::lock_guard<std::mutex> l(mu_);
      ops_.push_back({write, a, v, std::move(done)});
    }
    if (f.wait_for(std::chrono::seconds(10)) != std::future_status::ready)
      throw std::runtime_error("stand-in register port: no answer");
    return f.get();
  }
  void serve(Engine& eng, SwitchChip& chip, const RegLayout& layout) {
    std::deque<Op> ops;
    {
      std::lock_guard<std::mutex> l(mu_);
      ops.swap(ops_);
    }
    if (ops.empty()) return;
    eng.run_until_idle();
    bool wrote = false;
    for (auto& o : ops) {
      if (o.write) {
        eng.reg_write(o.a, o.v);
        wrote = true;
        o.done.set_value(0);
      } else {
        o.done.set_value(eng.reg_read(o.a));
      }
    }
    if (!wrote) return;
    wire::CtxFile f;
    f.agg_port = static_cast<uint16_t>(eng.reg_read(layout.g("AGG_PORT")) & 0xFFFF);
    for (auto& s : read_table(layout, [&](uint32_t x) { return eng.reg_read(x); })) f.contexts.push_back(s.second);
    chip.set_contexts(f);
  }

 private:
  struct Op {
    bool write;
    uint32_t a, v;
    std::promise<uint32_t> done;
  };
  std::mutex mu_;
  std::deque<Op> ops_;
};

struct LiveBed {
  Config cfg;
  RegLayout layout = load_regmap(kRtl);
  LoopbackFabric fab;
  RegQueue regs;
  std::atomic<bool> stop{false};
  std::thread sw;
  std::string error;
  explicit LiveBed(const Config& c) : cfg(c), fab(c.in.ports) {
    sw = std::thread([this] {
      try {
        auto eng = make_model_engine(cfg, wire::CtxFile{});
        SwitchChip chip(cfg.in.ports, wire::CtxFile{}, ChipParams{});
        StandInParams sp;
        sp.control = [this](Engine& e, SwitchChip& ch) { regs.serve(e, ch, layout); };
        run_standin(fab, *eng, chip, sp, stop);
      } catch (const std::exception& e) {
        error = e.what();
      }
    });
  }
  ~LiveBed() {
    stop = true;
    sw.join();
  }
};

// The allocator service on a Unix socket, served from its own thread.
struct Service {
  panama::test_util::TmpDir tmp{"panama_fb_"};
  std::string dir, sock;
  std::atomic<int64_t> skew{0};  // added to the allocator's clock (a lease's expiry without waiting)
  std::unique_ptr<Allocator> alloc;
  std::unique_ptr<AllocatorServer> server;
  std::atomic<bool> stop{false};
  std::thread th;
  explicit Service(LiveBed& bed) : dir(tmp.path()) {
    sock = dir + "/alloc.sock";
    json inv{{"accelerators", json::array({{{"name", "acc0"}, {"design", kRtl}, {"control", dir + "/none"}}})}};
    std::ofstream(dir + "/inventory.json") << inv.dump();
    RegIoFactory io = [&bed](const AccelSpec&) {
      return RegIo{[&bed](uint32_t a) { return bed.regs.call(false, a, 0); },
                   [&bed](uint32_t a, uint32_t v) { bed.regs.call(true, a, v); }};
    };
    auto now = [this] {
      return skew.load() +
             std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
                 .count();
    };
    alloc = std::make_unique<Allocator>(load_inventory(dir + "/inventory.json"), dir + "/state.sqlite", io, 3000, now);
    ServerOpts o;
    o.socket = sock;
    server = std::make_unique<AllocatorServer>(*alloc, o);
    th = std::thread([this] {
      while (!stop) server->poll_once(20);
    });
  }
  ~Service() {
    stop = true;
    th.join();
  }
};

// The accelerator's link of a rank; `trip` (when set) runs once, before the first frame sent after
// `armed` was raised.
class Forward : public Transport {
 public:
  Forward(Transport& t, std::atomic<bool>* armed, std::function<void()> trip)
      : t_(t), armed_(armed), trip_(std::move(trip)) {}
  void send(const wire::Bytes& f) override {
    if (armed_ && trip_ && armed_->exchange(false)) trip_();
    t_.send(f);
  }
  bool recv(wire::Bytes& f, Clock::time_point d) override { return t_.recv(f, d); }
  void flush() override { t_.flush(); }

 private:
  Transport& t_;
  std::atomic<bool>* armed_;
  std::function<void()> trip_;
};

struct JobRun {
  std::vector<std::vector<LeasedJob::Mode>> modes;
  std::vector<std::vector<std::vector<uint32_t>>> out;
  std::vector<std::string> err;
  std::vector<LeasedStats> stats;
  std::vector<std::string> log;
  std::mutex mu;
  std::atomic<int> done{0};  // iterations rank 0 completed
  std::atomic<bool> armed{false};
  std::function<void()> trip;  // rank 0's accelerator link runs it once armed (Forward)
};

// One job: ranks on ports port_of, T trees, its fallback id `job`; `more(rank, it, accel)` says
// whether to run iteration it + 1 (the same answer on every rank: the modes are agreed).
void run_job(LiveBed& bed, const std::string& sock, const std::vector<int>& port_of, int T, uint16_t job,
             const std::vector<std::vector<uint32_t>>& in, JobRun& o,
             const std::function<bool(size_t, int, int)>& more) {
  const size_t W = port_of.size();
  o.modes.resize(W);
  o.out.resize(W);
  o.err.resize(W);
  o.stats.resize(W);
  std::vector<std::thread> th;
  for (size_t r = 0; r < W; ++r)
    th.emplace_back([&, r] {
      try {
        LoopbackTransport tr(bed.fab, port_of[r]);
        LinkSplit split(tr, wire::kDefaultAggPort, wire::kDefaultAggPort + 1);
        LeasedJobParams lp;
        lp.job.rank = static_cast<int>(r);
        lp.job.world = static_cast<int>(W);
        lp.job.trees = T;
        lp.job.count = 362;
        lp.job.window.init = lp.job.window.max = std::max(1, 12 / T);
        lp.job.status_wait_ms = 40;
        lp.job.timeout_ms = 1500;
        lp.job.repair_stall_ms = 3000;
        lp.job.eth_src = {0x02, 0, 0, 0, 2, static_cast<uint8_t>(port_of[r])};
        lp.ring = ring_params(ref::Fmt::fp32, 362);
        lp.ring.job = job;
        lp.ring.eth_dst = fallback_group_mac(job);
        lp.ring.ip_dst = fallback_group(job);
        lp.ring.eth_src = lp.job.eth_src;
        lp.ring.timeout_ms = 20000;
        lp.ports = json{{"acc0", port_of}};
        lp.heartbeat_ms = 300;
        lp.log = [&](const std::string& s) {
          std::lock_guard<std::mutex> l(o.mu);
          o.log.push_back(s);
        };
        AccelOpener open = [&split, &o, r](const Lease&, JobParams&) {
          return std::make_unique<Forward>(split.accel(), r == 0 ? &o.armed : nullptr, o.trip);
        };
        LeasedJob lj(split.fallback(), lp, open, r == 0 ? allocator_socket(sock) : nullptr);
        int accel = 0;
        for (int it = 0; it == 0 || more(r, it, accel); ++it) {
          auto buf = in[r];
          const auto m = lj.iteration(buf.data(), buf.size());
          accel += m == LeasedJob::Mode::accelerator;
          o.modes[r].push_back(m);
          o.out[r].push_back(buf);
          if (r == 0) ++o.done;
        }
        lj.finish(2000);
        o.stats[r] = lj.stats();
      } catch (const std::exception& e) {
        o.err[r] = e.what();
      }
    });
  for (auto& t : th) t.join();
}

// Every iteration of every rank: the same mode on every rank, and the exact sum of that mode.
void check_job(const JobRun& o, const std::vector<std::vector<uint32_t>>& in, const std::vector<int>& port_of,
               const std::string& name) {
  const auto acc = expected(in, port_of, 4, ref::Fmt::fp32), ring = ring_reference(in, ref::Fmt::fp32);
  if (port_of.size() >= 3) {
    ASSERT_NE(acc, ring) << "the two orders must differ for the check to mean something";
  }
  for (size_t r = 0; r < port_of.size(); ++r) {
    ASSERT_EQ(o.err[r], "") << name << " rank " << r;
    ASSERT_EQ(o.modes[r], o.modes[0]) << name << ": ranks disagree on the modes";
    for (size_t k = 0; k < o.out[r].size(); ++k)
      EXPECT_EQ(o.out[r][k], o.modes[r][k] == LeasedJob::Mode::accelerator ? acc : ring)
          << name << " rank " << r << " iteration " << k;
  }
}

std::vector<std::vector<uint32_t>> cancelling(int w, size_t n, uint64_t seed) {
  auto v = tensors(w, n, seed, ref::Fmt::fp32);
  for (size_t i = 0; i < n; i += 3) {  // 1e8 + 1 + -1e8: the order shows in the result
    v[0][i] = ref::float_to_bits(1e8f);
    v[1][i] = ref::float_to_bits(1.0f);
  }
  return v;
}

}  // namespace

TEST(HostFallback, JobWithoutContextsFallsBackThenMovesOntoTheAccelerator) {
  std::ifstream cj(kRtl + "/config.json");
  LiveBed bed(Config::from_json(json::parse(cj)));
  Service svc(bed);
  const std::vector<int> pa{0, 1}, pb{2, 3};
  const auto ina = cancelling(2, 3000 + 7, 1), inb = cancelling(2, 2000 + 3, 2);
  JobRun a, b;
  std::atomic<int> b_ring{0};
  std::thread ta([&] {
    run_job(bed, svc.sock, pa, 5, 21, ina, a, [&](size_t, int it, int) {
      // A holds its lease until B has run two iterations on the ring.
      while (it >= 2 && b_ring.load() < 2 && b.done.load() < 50)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      return it < 4;
    });
  });
  while (a.done.load() < 1) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  run_job(bed, svc.sock, pb, 4, 22, inb, b, [&](size_t r, int it, int accel) {
    if (r == 0 && b.modes[0].back() == LeasedJob::Mode::ring) b_ring = b_ring + 1;
    return accel < 2 && it < 400;
  });
  ta.join();
  ASSERT_EQ(bed.error, "");
  check_job(a, ina, pa, "job A");
  check_job(b, inb, pb, "job B");
  for (const auto m : a.modes[0]) EXPECT_EQ(m, LeasedJob::Mode::accelerator);
  // B: on the ring first (no context free), then on the accelerator, never back.
  ASSERT_GE(b.modes[0].size(), 3u);
  EXPECT_EQ(b.modes[0].front(), LeasedJob::Mode::ring);
  EXPECT_EQ(b.modes[0].back(), LeasedJob::Mode::accelerator);
  size_t first_acc = 0;
  while (b.modes[0][first_acc] == LeasedJob::Mode::ring) ++first_acc;
  for (size_t k = first_acc; k < b.modes[0].size(); ++k) EXPECT_EQ(b.modes[0][k], LeasedJob::Mode::accelerator);
  EXPECT_EQ(b.stats[0].switches, 1);
  for (const auto* j : {&a, &b})
    std::printf("job %s: %d iterations on the accelerator (%.3f s), %d on the ring (%.3f s), boundaries %.3f s\n",
                j == &a ? "A" : "B", j->stats[0].accel_iterations, j->stats[0].accel_seconds,
                j->stats[0].ring_iterations, j->stats[0].ring_seconds, j->stats[0].boundary_seconds);
  // One line each time a rank falls back, naming why on rank 0.
  int fell = 0;
  for (const auto& l : b.log)
    if (l.find("all-reducing on the hosts") != std::string::npos) {
      ++fell;
      if (l.find("worker 0:") != std::string::npos) {
        EXPECT_NE(l.find("acquire: no idle context"), std::string::npos) << l;
      }
    }
  EXPECT_EQ(fell, 2);
  // Both leases released at the end.
  const json s = allocator_socket(svc.sock)({{"op", "status"}});
  EXPECT_TRUE(s["leases"].empty()) << s.dump();
}

// A lease that ends while the job runs (released by someone else here; an expiry is the same to
// the job): every rank moves back to the ring at the next boundary, and every result is exact.
TEST(HostFallback, RevokedLeaseMovesBackToTheRing) {
  std::ifstream cj(kRtl + "/config.json");
  LiveBed bed(Config::from_json(json::parse(cj)));
  Service svc(bed);
  const std::vector<int> pa{0, 1, 3};
  const auto ina = cancelling(3, 4000 + 1, 5);
  JobRun a;
  int revoked_at = -1;
  run_job(bed, svc.sock, pa, 1, 23, ina, a, [&](size_t r, int it, int accel) {
    if (r == 0 && accel == 2 && revoked_at < 0 && a.modes[0].back() == LeasedJob::Mode::accelerator) {
      // Revoked once, from rank 0's thread between two iterations.
      const json st = allocator_socket(svc.sock)({{"op", "status"}});
      if (!st["leases"].empty()) {
        allocator_socket(svc.sock)({{"op", "release"}, {"lease", st["leases"][0]["lease"]}});
        revoked_at = it;
      }
    }
    return it < 8;
  });
  ASSERT_EQ(bed.error, "");
  check_job(a, ina, pa, "job A");
  ASSERT_GE(revoked_at, 0);
  EXPECT_EQ(a.modes[0][0], LeasedJob::Mode::accelerator);
  bool back = false;
  for (size_t k = static_cast<size_t>(revoked_at); k < a.modes[0].size(); ++k)
    back |= a.modes[0][k] == LeasedJob::Mode::ring;
  EXPECT_TRUE(back);
}

// panama-host worker --allocator over the udp backend on lo: the allocator cannot be reached, so
// the job runs on the ring, says so once per rank, and every rank writes the ring's exact sum.
TEST(HostFallback, WorkerCliRunsOnTheRingWhenTheAllocatorIsUnreachable) {
  const panama::test_util::TmpDir tmp("panama_fbcli_");
  const std::string& d = tmp.path();
  const int W = 3;
  const auto in = tensors(W, 2501, 9, ref::Fmt::fp32);
  for (int r = 0; r < W; ++r)
    std::ofstream(d + "/in" + std::to_string(r) + ".bin", std::ios::binary)
        .write(reinterpret_cast<const char*>(in[static_cast<size_t>(r)].data()), 4 * 2501);
  // The job's id and the fallback port from this process's id: another run on this machine (lo is
  // shared) has other ones.
  const std::string job = std::to_string(1000 + getpid() % 60000), port = std::to_string(20000 + getpid() % 40000);
  std::vector<pid_t> pids;
  for (int r = 0; r < W; ++r) {
    const std::string rs = std::to_string(r), log = d + "/log" + rs + ".txt";
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      if (!freopen(log.c_str(), "w", stderr)) _exit(3);
      execl(PANAMA_HOST, PANAMA_HOST, "worker", "--iface", "lo", "--job", job.c_str(), "--rank", rs.c_str(), "--world",
            "3", "--in", (d + "/in" + rs + ".bin").c_str(), "--out", (d + "/out" + rs + ".bin").c_str(), "--allocator",
            (d + "/no-allocator.sock").c_str(), "--alloc-ports", "{\"acc0\": [0, 1, 2]}", "--agg-ip", "127.0.0.1",
            "--mtu", "1500", "--fallback-port", port.c_str(), "--fallback-timeout-ms", "10000", "--iterations", "3",
            static_cast<char*>(nullptr));
      _exit(127);
    }
    pids.push_back(pid);
  }
  for (pid_t pid : pids) {
    int st = 0;
    waitpid(pid, &st, 0);
    EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << "status " << st;
  }
  const auto exp = ring_reference(in, ref::Fmt::fp32);
  for (int r = 0; r < W; ++r) {
    std::ifstream lf(d + "/log" + std::to_string(r) + ".txt");
    const std::string log((std::istreambuf_iterator<char>(lf)), std::istreambuf_iterator<char>());
    if (r == 0 && log.find("IP_ADD_MEMBERSHIP") != std::string::npos) GTEST_SKIP() << "no multicast on lo: " << log;
    size_t lines = 0;
    for (size_t k = log.find("all-reducing on the hosts"); k != std::string::npos;
         k = log.find("all-reducing on the hosts", k + 1))
      ++lines;
    EXPECT_EQ(lines, 1u) << log;
    if (r == 0) {
      EXPECT_NE(log.find("cannot connect to the allocator"), std::string::npos) << log;
    }
    std::ifstream of(d + "/out" + std::to_string(r) + ".bin", std::ios::binary);
    std::vector<uint32_t> out(2501);
    of.read(reinterpret_cast<char*>(out.data()), 4 * 2501);
    ASSERT_TRUE(of.good()) << "rank " << r << ": " << log;
    EXPECT_EQ(out, exp) << "rank " << r;
  }
}

// The lease ends in the middle of an iteration on the accelerator (released by someone else just
// before rank 0's first contribution of it; the contexts are disabled): that call fails, every
// rank redoes the iteration on the ring, and every result is exact.
TEST(HostFallback, LeaseEndingMidIterationIsRedoneOnTheRing) {
  std::ifstream cj(kRtl + "/config.json");
  LiveBed bed(Config::from_json(json::parse(cj)));
  Service svc(bed);
  const std::vector<int> pa{0, 2, 3};
  const auto ina = cancelling(3, 3000 + 2, 6);
  JobRun a;
  a.trip = [&] {
    const json st = allocator_socket(svc.sock)({{"op", "status"}});
    for (const auto& l : st["leases"]) allocator_socket(svc.sock)({{"op", "release"}, {"lease", l["lease"]}});
  };
  run_job(bed, svc.sock, pa, 1, 24, ina, a, [&](size_t r, int it, int accel) {
    if (r == 0 && accel == 2 && it == 2) a.armed = true;
    return it < 5;
  });
  ASSERT_EQ(bed.error, "");
  check_job(a, ina, pa, "job A");
  ASSERT_GE(a.modes[0].size(), 3u);
  EXPECT_EQ(a.modes[0][0], LeasedJob::Mode::accelerator);
  EXPECT_EQ(a.modes[0][1], LeasedJob::Mode::accelerator);
  EXPECT_EQ(a.modes[0][2], LeasedJob::Mode::ring);  // the failed iteration, redone
  // Back on the accelerator with a new lease on the same context, which still holds the failed
  // call's contributions of ranks 1 and 2: the new lease's VIDs start above them.
  EXPECT_EQ(a.modes[0].back(), LeasedJob::Mode::accelerator);
  for (size_t r = 0; r < pa.size(); ++r) EXPECT_EQ(a.stats[r].redone, 1) << "rank " << r;
  int redo_lines = 0;
  for (const auto& l : a.log) redo_lines += l.find("failed on the accelerator") != std::string::npos;
  EXPECT_EQ(redo_lines, 3);
  if (HasFailure())
    for (const auto& l : a.log) std::printf("%s\n", l.c_str());
}

// A lease cut mid-iteration leaves contributions queued on its context (ranks 1 and 2 sent, rank 0
// did not). The next job granted that context, with members on those ports, starts its VIDs where
// the allocator says (above the reclaimed context's expected VID): it runs on the accelerator from
// its first iteration, exact, with nothing redone.
TEST(HostFallback, ReclaimedContextStartsTheNextJobAboveTheLeftovers) {
  std::ifstream cj(kRtl + "/config.json");
  LiveBed bed(Config::from_json(json::parse(cj)));
  Service svc(bed);
  const std::vector<int> pa{0, 2, 3}, pb{1, 2, 3};
  const auto ina = cancelling(3, 3000 + 2, 7), inb = cancelling(3, 2000 + 1, 8);
  JobRun a, b;
  a.trip = [&] {
    const json st = allocator_socket(svc.sock)({{"op", "status"}});
    for (const auto& l : st["leases"]) allocator_socket(svc.sock)({{"op", "release"}, {"lease", l["lease"]}});
  };
  run_job(bed, svc.sock, pa, 1, 25, ina, a, [&](size_t r, int it, int accel) {
    if (r == 0 && accel == 2 && it == 2) a.armed = true;
    return it < 3;
  });
  ASSERT_EQ(bed.error, "");
  check_job(a, ina, pa, "job A");
  ASSERT_EQ(a.modes[0].size(), 3u);
  EXPECT_EQ(a.modes[0][2], LeasedJob::Mode::ring);  // cut, redone
  run_job(bed, svc.sock, pb, 1, 26, inb, b, [&](size_t, int it, int) { return it < 3; });
  check_job(b, inb, pb, "job B");
  for (size_t r = 0; r < pb.size(); ++r) {
    EXPECT_EQ(b.stats[r].redone, 0) << "rank " << r;
    EXPECT_EQ(b.stats[r].accel_iterations, 3) << "rank " << r;
  }
  bool above = false;
  for (const auto& l : b.log)
    above |= l.find("first VID 0)") == std::string::npos && l.find("first VID") != std::string::npos;
  EXPECT_TRUE(above);
  if (HasFailure())
    for (const auto* j : {&a, &b})
      for (const auto& l : j->log) std::printf("%s\n", l.c_str());
}

// A lease that expires (the allocator's clock passes it; the heartbeats cannot keep up): the
// allocator reclaims it at its next request, rank 0's renew fails, and every rank is on the ring
// from the next boundary, then on the accelerator again with a new lease; all exact.
TEST(HostFallback, ExpiredLeaseMovesBackToTheRing) {
  std::ifstream cj(kRtl + "/config.json");
  LiveBed bed(Config::from_json(json::parse(cj)));
  Service svc(bed);
  const std::vector<int> pa{1, 2, 3};
  const auto ina = cancelling(3, 2500 + 1, 9);
  JobRun a;
  int expired_at = -1;
  run_job(bed, svc.sock, pa, 1, 27, ina, a, [&](size_t r, int it, int accel) {
    if (r == 0 && accel == 2 && expired_at < 0) {
      svc.skew += 60000;  // past the lease (3 s), as if no heartbeat had come for a minute
      expired_at = it;
    }
    return it < 6;
  });
  ASSERT_EQ(bed.error, "");
  check_job(a, ina, pa, "job A");
  ASSERT_GE(expired_at, 0);
  ASSERT_EQ(a.modes[0].size(), 6u);
  EXPECT_EQ(a.modes[0][static_cast<size_t>(expired_at)], LeasedJob::Mode::ring);
  EXPECT_EQ(a.modes[0].back(), LeasedJob::Mode::accelerator);
  EXPECT_EQ(a.stats[0].grants, 2);
  int ended = 0;
  for (const auto& l : a.log) ended += l.find("has ended (released or expired)") != std::string::npos;
  EXPECT_EQ(ended, 1);  // rank 0's line says why
}
