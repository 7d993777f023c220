// Fixtures of the fallback tests (host_ring_test.cpp, host_fallback_test.cpp): an in-process
// multicast medium (every frame to every other member, optional loss), the ring's CPU reference
// (numerics.md's add, each chunk in the documented rank order) and ranks run in threads.
#pragma once

#include "host_ring.h"
#include "host_test_util.h"

namespace {

// Every frame sent by one member reaches every other member (a switch flooding the job's
// fallback group), each copy dropped with probability `loss`.
class Hub {
 public:
  explicit Hub(int members, double loss = 0, uint64_t seed = 1) : q_(static_cast<size_t>(members)), loss_(loss) {
    rng_.seed(seed);
  }
  void send(int from, const wire::Bytes& f) {
    {
      std::lock_guard<std::mutex> l(mu_);
      for (size_t m = 0; m < q_.size(); ++m) {
        if (static_cast<int>(m) == from) continue;
        if (loss_ > 0 && std::uniform_real_distribution<double>(0, 1)(rng_) < loss_) {
          ++dropped_;
          continue;
        }
        q_[m].push_back(f);
      }
    }
    cv_.notify_all();
  }
  bool recv(int m, wire::Bytes& f, Clock::time_point deadline) {
    std::unique_lock<std::mutex> l(mu_);
    auto& q = q_[static_cast<size_t>(m)];
    if (!cv_.wait_until(l, deadline, [&] { return !q.empty(); })) return false;
    f = std::move(q.front());
    q.pop_front();
    return true;
  }
  uint64_t dropped() {
    std::lock_guard<std::mutex> l(mu_);
    return dropped_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::deque<wire::Bytes>> q_;
  double loss_;
  std::mt19937_64 rng_;
  uint64_t dropped_ = 0;
};

class HubTransport : public Transport {
 public:
  HubTransport(Hub& h, int m) : h_(h), m_(m) {}
  void send(const wire::Bytes& f) override { h_.send(m_, f); }
  bool recv(wire::Bytes& f, Clock::time_point deadline) override { return h_.recv(m_, f, deadline); }

 private:
  Hub& h_;
  int m_;
};

// The documented order: element i of chunk c (c n / W <= i < (c + 1) n / W) is the left fold of
// ranks c, c + 1, ..., c + W - 1 (mod W) with ref::add, no flush to zero.
inline std::vector<uint32_t> ring_reference(const std::vector<std::vector<uint32_t>>& in, ref::Fmt fmt) {
  const size_t w = in.size(), n = in[0].size();
  std::vector<uint32_t> e(n);
  ref::MxcsrScope mx(false);
  for (size_t c = 0; c < w; ++c)
    for (size_t i = c * n / w; i < (c + 1) * n / w; ++i) {
      uint32_t acc = in[c][i];
      for (size_t k = 1; k < w; ++k) acc = ref::add(fmt, false, acc, in[(c + k) % w][i]);
      e[i] = acc;
    }
  return e;
}

inline RingParams ring_params(ref::Fmt fmt, int count) {
  RingParams p;
  p.job = 3;
  p.format = fmt;
  p.elem_bytes = fmt == ref::Fmt::fp32 ? 4 : 2;
  p.count = count;
  p.rto_ms = 20;
  p.timeout_ms = 5000;
  return p;
}

struct RingRun {
  std::vector<std::vector<uint32_t>> out;
  std::vector<std::string> err;
  std::vector<RingStats> stats;
};

// One rank's calls: `calls` all-reduces of a fresh copy of its input, then a drain.
inline void ring_rank(Transport& tr, RingParams p, const std::vector<uint32_t>& in, int calls, RingRun& o, size_t r) {
  try {
    HostRing ring(tr, p);
    const size_t es = static_cast<size_t>(p.elem_bytes);
    for (int c = 0; c < calls; ++c) {
      std::vector<uint8_t> b(in.size() * es);
      for (size_t i = 0; i < in.size(); ++i) std::memcpy(b.data() + i * es, &in[i], es);  // little-endian
      ring.reduce(b.data(), in.size());
      o.out[r].assign(in.size(), 0);
      for (size_t i = 0; i < in.size(); ++i) std::memcpy(&o.out[r][i], b.data() + i * es, es);
    }
    ring.drain(2000);
    o.stats[r] = ring.stats();
  } catch (const std::exception& e) {
    o.err[r] = e.what();
  }
}

inline RingRun run_ring(Hub& hub, const std::vector<std::vector<uint32_t>>& in, RingParams p, int calls) {
  const size_t w = in.size();
  RingRun o{std::vector<std::vector<uint32_t>>(w), std::vector<std::string>(w), std::vector<RingStats>(w)};
  std::vector<std::thread> th;
  for (size_t r = 0; r < w; ++r)
    th.emplace_back([&, r, p]() mutable {
      HubTransport tr(hub, static_cast<int>(r));
      p.rank = static_cast<int>(r);
      p.world = static_cast<int>(w);
      ring_rank(tr, p, in[r], calls, o, r);
    });
  for (auto& t : th) t.join();
  return o;
}

// The same with rank r on port port_of[r] of the in-process stand-in.
inline RingRun run_ring_on(LoopbackFabric& fab, const std::vector<int>& port_of,
                           const std::vector<std::vector<uint32_t>>& in, RingParams p, int calls) {
  const size_t w = in.size();
  RingRun o{std::vector<std::vector<uint32_t>>(w), std::vector<std::string>(w), std::vector<RingStats>(w)};
  std::vector<std::thread> th;
  for (size_t r = 0; r < w; ++r)
    th.emplace_back([&, r, p]() mutable {
      LoopbackTransport tr(fab, port_of[r]);
      p.rank = static_cast<int>(r);
      p.world = static_cast<int>(w);
      p.eth_src = {0x02, 0, 0, 0, 1, static_cast<uint8_t>(r)};
      ring_rank(tr, p, in[r], calls, o, r);
    });
  for (auto& t : th) t.join();
  return o;
}

}  // namespace
