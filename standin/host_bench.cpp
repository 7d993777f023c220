// host_bench (scripts/bench-host, docs/results/host.md "Benchmark"): the physical limit and the protocol
// engine alone, on one core, measured in the run:
//   memcpy: one core copying a buffer of the engine's working-set size (the gradient buffer:
//           memcpy_ws_gbps) and one far larger than the caches (64 MiB: memcpy_gbps), Gbit/s per
//           CPU second, the median of the rounds;
//   engine: a job of --world W workers (AllReduce, one thread each, rank r on port r) over
//           in-memory links to the stand-in's own soft engine (make_soft_engine, its SIMD lane
//           sums): every contribution goes into the engine, which sums the W of a vector in the
//           tree order and builds the result, copied to every worker (the switch chip's multicast).
//           Each worker sums from its input into its output (out-of-place: every result written
//           straight into the output, docs/host.md "Where the results go").
//           The figure is the job's gradient bits (W x the buffer, every call) per CPU second
//           that the worker threads spend inside their calls (the soft engine runs there too); every output is checked
//           against the tree-order sum of the W inputs, computed with the CPU's own float additions. With
//           --world 1 the engine is left out: a contribution comes back as its own result.
// Prints one JSON object: {"memcpy_gbps": F, "memcpy_ws_gbps": F, "engine_gbps_per_core": F,
// "engine_world": W, ...}.
//
// Usage: host_bench [--seconds S] [--elems N] [--trees T] [--count C] [--world W]
#include <time.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "allreduce.h"
#include "config.h"
#include "frame_pool.h"
#include "switch.h"
#include "wire.h"

namespace {

using panama::host::Clock;
namespace wire = panama::wire;

double thread_cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// The job's links to the soft engine, in memory: one Link per worker (port = rank). A worker's
// frame is built in a pool buffer (tx_begin/tx_end) and goes into the engine on its port; the
// engine runs until idle, and the result it builds (m_agg: the frame the switch chip multicasts)
// is copied to every member's receive queue. One mutex over the engine, the pool and the queues
// (the engine is one loop, as in the stand-in); a worker with nothing to read waits on its
// condition variable until its deadline.
struct Hub {
  panama::host::Engine* eng = nullptr;
  int world = 1;
  std::mutex mu;
  panama::host::FramePool pool;
  std::vector<panama::host::EngineOut> outs;
  std::vector<std::deque<wire::Bytes>> rx;
  std::vector<std::condition_variable> cv;
  Hub(panama::host::Engine* e, int w) : eng(e), world(w), rx(static_cast<size_t>(w)), cv(static_cast<size_t>(w)) {
    if (eng) eng->use_pool(&pool);
    outs.reserve(64);
  }
  ~Hub() {
    if (eng) eng->use_pool(nullptr);
  }
};

class Link : public panama::host::Transport {
 public:
  Link(Hub& h, int port) : h_(h), port_(port) {}
  void send(const wire::Bytes& f) override {
    std::memcpy(tx_begin(f.size()), f.data(), f.size());
    tx_end(f.size());
  }
  uint8_t* tx_begin(size_t len) override {
    if (tx_.capacity() < len) {
      std::lock_guard<std::mutex> l(h_.mu);
      tx_ = h_.pool.get();
    }
    tx_.resize(len);
    return tx_.data();
  }
  void tx_end(size_t len) override {
    tx_.resize(len);
    std::lock_guard<std::mutex> l(h_.mu);
    if (!h_.eng) {  // world 1: the contribution is its own result
      tx_[wire::off::flags] |= wire::kFlagResult;
      h_.rx[0].push_back(std::move(tx_));
      tx_ = h_.pool.get();
      return;
    }
    h_.eng->inject(port_, std::move(tx_));
    tx_ = h_.pool.get();
    h_.eng->run_until_idle();
    h_.eng->drain_outputs(h_.outs);
    for (auto& o : h_.outs) {
      if (o.port < 0)
        for (int p = 0; p < h_.world; ++p) {
          h_.rx[static_cast<size_t>(p)].push_back(h_.pool.copy(o.data));
          h_.cv[static_cast<size_t>(p)].notify_one();
        }
      h_.pool.put(std::move(o.data));
    }
    h_.outs.clear();
  }
  bool recv_view(const uint8_t*& f, size_t& len, Clock::time_point deadline) override {
    std::unique_lock<std::mutex> l(h_.mu);
    if (!held_.empty()) h_.pool.put(std::move(held_));
    auto& q = h_.rx[static_cast<size_t>(port_)];
    if (q.empty() && !h_.cv[static_cast<size_t>(port_)].wait_until(l, deadline, [&] { return !q.empty(); }))
      return false;
    held_ = std::move(q.front());
    q.pop_front();
    f = held_.data();
    len = held_.size();
    return true;
  }
  bool recv(wire::Bytes& f, Clock::time_point d) override {
    const uint8_t* p = nullptr;
    size_t len = 0;
    if (!recv_view(p, len, d)) return false;
    f.assign(p, p + len);
    return true;
  }

 private:
  Hub& h_;
  int port_;
  wire::Bytes tx_, held_;
};

// Copying `bytes` from one buffer to another, in Gbit/s per CPU second of this thread (the
// machine is shared: wall time would count other processes' turns), the median of the rounds.
double memcpy_gbps(size_t bytes, double seconds) {
  std::vector<uint8_t> a(bytes, 1), b(bytes, 2);
  std::vector<double> r;
  const auto end = Clock::now() + std::chrono::duration<double>(seconds);
  while (Clock::now() < end || r.size() < 3) {
    const double c0 = thread_cpu_s();
    std::memcpy(b.data(), a.data(), bytes);
    const double dt = thread_cpu_s() - c0;
    if (dt > 0) r.push_back(static_cast<double>(bytes) * 8 / dt / 1e9);
    a[0] = b[bytes - 1];  // keep the copies live
  }
  std::sort(r.begin(), r.end());
  return r[r.size() / 2];
}

// The tree-order sum of the workers' inputs x * (r + 1), r = 0..world-1 (numerics.md: leaves padded with -0.0 to a
// power of two, pairs added level by level), with the CPU's own float additions.
float tree_sum(float x, int world) {
  size_t leaves = 1;
  while (leaves < static_cast<size_t>(world)) leaves *= 2;
  std::vector<float> node(leaves, -0.0f);
  for (int p = 0; p < world; ++p) node[static_cast<size_t>(p)] = x * static_cast<float>(p + 1);
  for (size_t w = leaves; w > 1; w /= 2)
    for (size_t k = 0; k < w / 2; ++k) node[k] = node[2 * k] + node[2 * k + 1];
  return node[0];
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 1.0;
  size_t elems = 1 << 20;
  int trees = 2, count = 362, world = 2;
  const char* usage = "usage: host_bench [--seconds S] [--elems N] [--trees T] [--count C] [--world W]\n";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has = i + 1 < argc;
    if (a == "--help" || a == "-h") {
      std::fputs(usage, stdout);
      return 0;
    } else if (a == "--seconds" && has)
      seconds = std::atof(argv[++i]);
    else if (a == "--elems" && has)
      elems = std::strtoull(argv[++i], nullptr, 10);
    else if (a == "--trees" && has)
      trees = std::atoi(argv[++i]);
    else if (a == "--count" && has)
      count = std::atoi(argv[++i]);
    else if (a == "--world" && has)
      world = std::atoi(argv[++i]);
    else {
      std::fprintf(stderr, "host_bench: unknown option or missing value: %s\n", a.c_str());
      return 2;
    }
  }
  if (!(seconds > 0) || elems == 0 || trees < 1 || trees > 8 || count < 1 || world < 1 || world > 8) {
    std::fprintf(stderr, "host_bench: --seconds > 0, --elems >= 1, --trees 1..8, --count >= 1, --world 1..8\n");
    return 2;
  }
  const size_t bytes = elems * sizeof(float);
  const double mc = memcpy_gbps(64u << 20, seconds / 2);
  const double mc_ws = memcpy_gbps(bytes, seconds / 2);

  // An 8-port fp32 design (9000-byte MTU, as the workers' default), the job on ports 0..W-1.
  panama::Inputs in;
  in.ports = 8;
  in.gbps = 10;
  in.mhz = 200;
  in.format = panama::Format::fp32;
  const panama::Config cfg = panama::Config::derive(in);
  count = std::min(count, cfg.max_elems);
  wire::CtxFile ctx;
  for (int t = 0; t < trees; ++t) {
    wire::CtxEntry e;
    e.jid = 1;
    e.tid = static_cast<uint8_t>(t);
    for (int p = 0; p < world; ++p) e.members.push_back(p);
    e.group_mac = {0x01, 0x00, 0x5e, 0x01, 0x01, 0x01};
    e.group_ip = 0xEF010101;
    ctx.contexts.push_back(e);
  }
  std::unique_ptr<panama::host::Engine> eng = world > 1 ? panama::host::make_soft_engine(cfg, ctx) : nullptr;
  Hub hub(eng.get(), world);
  // Worker r's input is the base pattern scaled by r + 1 (distinct addends); the expected output
  // is their tree-order sum, computed here with the CPU's own float additions.
  std::vector<float> base(elems), expect(elems);
  for (size_t i = 0; i < elems; ++i) {
    base[i] = static_cast<float>(i % 1000) * 0.25f - 100.0f + static_cast<float>(i % 7) * 1e-3f;
    expect[i] = tree_sum(base[i], world);
  }
  std::vector<std::unique_ptr<Link>> links;
  std::vector<std::unique_ptr<panama::host::AllReduce>> ars;
  for (int r = 0; r < world; ++r) {
    links.push_back(std::make_unique<Link>(hub, r));
    panama::host::JobParams p;
    p.jid = 1;
    p.rank = r;
    p.world = world;
    p.trees = trees;
    p.count = count;
    // The worker's defaults (cli_worker.cpp): 12 vectors in flight over the trees.
    p.window.max = std::max(1, 12 / trees);
    p.window.init = std::min(4.0, p.window.max);
    ars.push_back(std::make_unique<panama::host::AllReduce>(*links.back(), p));
  }
  std::atomic<bool> exact{true};
  // Every worker runs `n` calls in its own thread; the CPU time its thread spends inside the calls
  // (its protocol engine, and the soft engine's work for the frames it sent) is added up.
  std::mutex cpu_mu;
  double cpu = 0;
  const auto round = [&](uint64_t n) {
    std::vector<std::thread> th;
    for (int r = 0; r < world; ++r)
      th.emplace_back([&, r] {
        std::vector<float> in(elems), buf(elems);
        for (size_t i = 0; i < elems; ++i) in[i] = base[i] * static_cast<float>(r + 1);
        double mine = 0;
        for (uint64_t c = 0; c < n; ++c) {
          std::memset(buf.data(), 0xFF, bytes);  // NaNs: the check below sees this call's output (untimed)
          const double c0 = thread_cpu_s();
          ars[static_cast<size_t>(r)]->reduce_f32(in.data(), buf.data(), elems);  // out-of-place: no staging
          mine += thread_cpu_s() - c0;
          if (std::memcmp(buf.data(), expect.data(), bytes) != 0) exact = false;
        }
        std::lock_guard<std::mutex> l(cpu_mu);
        cpu += mine;
      });
    for (auto& t : th) t.join();
  };
  round(1);  // warm: the pool, the engine's buffers
  auto w0 = Clock::now();
  round(2);  // how long a call takes
  const double one = std::chrono::duration<double>(Clock::now() - w0).count() / 2;
  const uint64_t calls = std::max<uint64_t>(2, static_cast<uint64_t>(seconds / std::max(one, 1e-6)));
  cpu = 0;
  w0 = Clock::now();
  round(calls);
  const double wall = std::chrono::duration<double>(Clock::now() - w0).count();
  const double bits = static_cast<double>(bytes) * 8 * static_cast<double>(calls) * world;
  const double gbps = bits / cpu / 1e9;
  std::printf(
      "{\"memcpy_gbps\": %.2f, \"memcpy_ws_gbps\": %.2f, \"engine_gbps_per_core\": %.2f, \"engine_world\": %d, "
      "\"engine_ratio\": %.3f, \"engine_ratio_ws\": %.3f, \"engine_calls\": %llu, \"engine_bytes_per_call\": %zu, "
      "\"engine_cpu_s\": %.3f, \"engine_wall_s\": %.3f, \"trees\": %d, \"count\": %d, \"exact\": %s}\n",
      mc, mc_ws, gbps, world, gbps / mc, gbps / mc_ws, static_cast<unsigned long long>(calls), bytes, cpu, wall, trees,
      count, exact ? "true" : "false");
  if (!exact) std::fprintf(stderr, "host_bench: the engine's sums differ from the tree-order sum\n");
  return exact ? 0 : 1;
}
