// Shared fixtures of the host library's and the stand-in's tests (test_host): an echo "accelerator",
// the switch chip's helpers, a bed of workers on the in-process stand-in (SystemC live model or
// soft engine) with random tensors and their tree-order sums, and the loss-repair run.
#pragma once

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
inline JobParams echo_job(int count) {
  JobParams p;
  p.world = 1;
  p.count = count;
  p.repair_rounds = 0;
  return p;
}

// Job 7 on two trees of `cfg` (fp32, 1,500-byte frames, windows of 6: T * max = 12 frames fit the
// default contribution pool, 3 s timeout): the three-worker, two-tree fp32 cases.
inline JobParams two_tree_fp32_job(const Config& cfg) {
  JobParams p;
  p.jid = 7;
  p.trees = 2;
  p.window.max = 6;
  p.count = JobParams::count_for(1500, cfg.max_elems, 4);
  p.timeout_ms = 3000;
  return p;
}

// Job 3 of bf16 elements on one tree of `cfg` (1,500-byte frames).
inline JobParams bf16_job(const Config& cfg) {
  JobParams p;
  p.jid = 3;
  p.elem_bytes = 2;
  p.format = ref::Fmt::bf16;
  p.count = JobParams::count_for(1500, cfg.max_elems, 2);
  return p;
}

// The error one all-reduce of v ends with, "" when it succeeds.
inline std::string reduce_error(Transport& tr, const JobParams& p, std::vector<float>& v) {
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
inline std::string drop_error(int64_t drop_vid, int timeout_ms) {
  EchoTransport tr;
  tr.drop_vid = drop_vid;
  JobParams p = echo_job(4);
  p.timeout_ms = timeout_ms;
  std::vector<float> v(40, 1.0f);
  return reduce_error(tr, p, v);
}

// ---------------------------------------------------------------------------------------------
// Switch chip

inline wire::CtxFile one_ctx(int members, int trees, uint16_t jid) {
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

inline wire::Bytes eth(const wire::Mac& dst, const wire::Mac& src) {
  wire::Bytes f(60, 0);
  std::copy(dst.begin(), dst.end(), f.begin());
  std::copy(src.begin(), src.end(), f.begin() + 6);
  f[12] = 0x08;
  f[13] = 0x06;  // ARP: bypass
  return f;
}

inline std::vector<int> drain(SwitchChip& chip, int ports) {
  std::vector<int> n(static_cast<size_t>(ports), 0);
  wire::Bytes f;
  for (int p = 0; p < ports; ++p)
    while (chip.pop_due(p, Clock::now(), f)) ++n[static_cast<size_t>(p)];
  return n;
}

// ---------------------------------------------------------------------------------------------
// All-reduce through the in-process stand-in on the SystemC live model

inline Config design(int ports, Format fmt = Format::fp32) {
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
  std::vector<bool> in_intact;  // direct: the input was as before after every call
  std::vector<size_t> staging;  // AllReduce::staging_bytes() at the end
  std::vector<std::string> err;
  std::vector<Stats> stats;
  std::vector<double> cwnd, alpha;
};

// Workers rank r on port port_of[r]; each runs `calls` all-reduces of its tensor (fresh copy).
// direct: out-of-place calls (AllReduce::reduce_raw(in, out, n)) into an output filled with NaNs
// before every call, the input checked unchanged after it.
inline Outcome run_workers(Bed& bed, const std::vector<std::vector<uint32_t>>& in, const std::vector<int>& port_of,
                           JobParams base, int calls, bool direct = false) {
  const int w = static_cast<int>(in.size());
  Outcome o;
  o.out.resize(static_cast<size_t>(w));
  o.in_intact.assign(static_cast<size_t>(w), true);
  o.staging.resize(static_cast<size_t>(w));
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
          if (direct && p.elem_bytes == 4) {
            std::vector<float> f(buf.size());
            std::memcpy(f.data(), buf.data(), 4 * buf.size());
            const std::vector<float> f0 = f;
            std::vector<float> res(buf.size(), std::nanf(""));
            ar.reduce_f32(f.data(), res.data(), f.size());
            if (std::memcmp(f.data(), f0.data(), 4 * f.size()) != 0) o.in_intact[static_cast<size_t>(r)] = false;
            std::memcpy(buf.data(), res.data(), 4 * buf.size());
          } else if (direct) {
            const std::vector<uint16_t> h(buf.begin(), buf.end()), h0 = h;
            std::vector<uint16_t> res(buf.size(), 0xFFFF);
            ar.reduce_u16(h.data(), res.data(), h.size());
            if (h != h0) o.in_intact[static_cast<size_t>(r)] = false;
            buf.assign(res.begin(), res.end());
          } else if (p.elem_bytes == 4) {
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
        o.staging[static_cast<size_t>(r)] = ar.staging_bytes();
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

inline uint32_t special(std::mt19937_64& rng, ref::Fmt fmt) {
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

inline std::vector<std::vector<uint32_t>> tensors(int w, size_t n, uint64_t seed, ref::Fmt fmt) {
  std::mt19937_64 rng(seed);
  std::vector<std::vector<uint32_t>> v(static_cast<size_t>(w), std::vector<uint32_t>(n));
  for (auto& t : v)
    for (auto& x : t) x = special(rng, fmt);
  return v;
}

// The expected sum: ref::tree_sum over the accelerator's ports (rank r sits on port_of[r]).
inline std::vector<uint32_t> expected(const std::vector<std::vector<uint32_t>>& in, const std::vector<int>& port_of,
                                      int ports, ref::Fmt fmt) {
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

inline wire::CtxFile ctx_for(const std::vector<int>& ports, int trees, uint16_t jid) {
  wire::CtxFile c = one_ctx(0, trees, jid);
  for (auto& e : c.contexts) {
    e.members = ports;
    std::sort(e.members.begin(), e.members.end());
  }
  return c;
}

// ---------------------------------------------------------------------------------------------
// Loss repair through the stand-in: lost results and lost contributions, several calls.

// direct: out-of-place calls (run_workers), every result written straight into the output.
inline void repair_run(int trees, double down_loss, double up_loss, uint64_t seed, bool every_link = false,
                       bool soft = false, bool direct = false) {
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
  const Outcome o = run_workers(bed, in, port_of, p, 3, direct);
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
    // Where the results went: straight into the output (direct) or through the staging buffer.
    const Stats& st = o.stats[static_cast<size_t>(r)];
    EXPECT_EQ(st.calls_direct, direct ? 3u : 0u) << "rank " << r;
    EXPECT_EQ(st.bytes_staged, direct ? 0u : st.bytes_reduced) << "rank " << r;
    EXPECT_TRUE(o.in_intact[static_cast<size_t>(r)]) << "rank " << r;
    if (direct) {
      EXPECT_EQ(o.staging[static_cast<size_t>(r)], 0u) << "rank " << r;  // never allocated
    }
    lost += o.stats[static_cast<size_t>(r)].lost;
    repaired += o.stats[static_cast<size_t>(r)].repaired;
  }
  EXPECT_GT(bed.fab.dropped(), 0u);
  EXPECT_GT(lost, 0u);
  EXPECT_GT(repaired, 0u);
}

// One tree of job 6, window 8, full-size vectors, a short status wait: the repair tests below.
inline JobParams small_repair_job() {
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
inline bool status_result(const wire::Bytes& f) {
  if (f.size() < wire::kHeaderBytes) return false;
  const auto h = wire::parse_header(f);
  return h.result() && h.count < 100;
}

}  // namespace
