// l2sw_tb: rtl/panama_l2sw.v (the standalone switch functions) with 4 ports, 64-bit bus, two
// contexts and a 4-entry forwarding table, against the forwarding rules written out here from
// docs/fpga.md "Standalone switch": a built frame (m_agg) to its context's members or upstream
// port, a passed-down final sum on a port to its context's members, anything else by its
// destination MAC through the table or flooded, never back to the port it came from; frames
// longer than MAXB beats dropped and counted per port. Random frames on every source, random
// idle cycles and back-pressure.
//   1. ECN threshold out of reach: every port's frames from each source arrive unchanged, in
//      order, none missing or extra; flooded, discarded, tx_frames and queue_drops exact.
//   2. Threshold 1 with heavy back-pressure: queues fill, frames are marked and some dropped. Each
//      frame out is either the frame in or, for an ECT IPv4 frame, that frame with CE and the
//      header checksum recomputed here (RFC 1071 over the header); every copy of one frame
//      carries the same bytes (one decision for all), non-ECT frames are never changed, each
//      port's frames are a subsequence of what it should get, and ce_marked and queue_drops
//      account for every marked and every missing frame.
//   3. Two sources keep two of a built frame's ports busy with back-to-back frames: the built
//      frame still leaves within a few frames (the allocator reserves ports for the source whose
//      turn it is).
// Output stream rules every cycle: tvalid and the beat held while stalled, tkeep contiguous.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <map>
#include <numeric>
#include <memory>
#include <random>
#include <vector>

#include "Vpanama_l2sw.h"
#include "board_tb.h"
#include "protocol.h"
#include "vl_util.h"
#include "verilated.h"

namespace {

using Bytes = std::vector<uint8_t>;
// The shape (board.cmake): 4 ports of 64 bits by default; -DTB_N=2 -DTB_W=512 as the u250 uses.
#ifndef TB_N
#define TB_N 4
#define TB_W 64
#endif
constexpr int N = TB_N, S = N + 1, BB = TB_W / 8, C = 2, FDB = 4, MAXB = 1600 / BB;
constexpr unsigned kAll = (1u << N) - 1;
constexpr uint16_t kAggPort = panama::wire::kDefaultAggPort;

struct Ctx {
  bool enable, upstream;
  uint16_t jid;
  uint8_t tid;
  int up_port;
  unsigned members;
};
// A multicast context and an upstream one (upstream port N - 2 for 4 ports, 1 for 2).
const Ctx kCtx[C] = {{true, false, 7, 0, 0, N == 2 ? 0b11u : 0b1011u},
                     {true, true, 9, 1, N == 2 ? 1 : 2, N == 2 ? 0b01u : 0b0011u}};
struct Fdb {
  uint8_t mac[6];
  unsigned mask;
};
// Two unicast hosts, a group MAC to ports 1 and 2, a host on port 3.
const Fdb kFdb[FDB] = {{{0x02, 0, 0, 0, 0, 0x10}, 0b0001u & kAll},
                       {{0x02, 0, 0, 0, 0, 0x11}, 0b0010u & kAll},
                       {{0x01, 0, 0x5e, 1, 1, 1}, 0b0110u & kAll},
                       {{0x02, 0, 0, 0, 0, 0x13}, 0b1000u & kAll}};

uint16_t csum(const Bytes& f) {  // RFC 1071 over the IPv4 header (checksum field included)
  uint32_t s = 0;
  for (int i = 14; i < 34; i += 2) s += uint32_t(f[size_t(i)]) << 8 | f[size_t(i) + 1];
  while (s >> 16) s = (s & 0xffff) + (s >> 16);
  return uint16_t(~s);
}
void set_csum(Bytes& f) {
  f[24] = f[25] = 0;
  const uint16_t c = csum(f);
  f[24] = uint8_t(c >> 8);
  f[25] = uint8_t(c);
}
bool ect(const Bytes& f) {
  return f.size() >= 34 && f[12] == 8 && f[13] == 0 && f[14] == 0x45 && ((f[15] & 3) == 1 || (f[15] & 3) == 2);
}
Bytes marked(Bytes f) {
  f[15] |= 3;
  set_csum(f);
  return f;
}

// The reference: where a frame from source s goes.
struct Where {
  unsigned mask;
  bool flooded;
};
Where forward(int s, const Bytes& f) {
  const bool agg = f.size() >= 47 && f[12] == 8 && f[13] == 0 && f[14] == 0x45 && (f[15] >> 2) == 56 &&
                   (f[20] & 0x3f) == 0 && f[21] == 0 && f[23] == 17 && (f[36] << 8 | f[37]) == kAggPort;
  int ctx = -1;
  if (f.size() >= 47)
    for (int k = 0; k < C; ++k)
      if (kCtx[k].enable && kCtx[k].jid == (f[44] << 8 | f[45]) && kCtx[k].tid == f[46]) ctx = k;
  unsigned m;
  bool flooded = false;
  if (s == N) {
    m = ctx < 0 ? 0 : kCtx[ctx].upstream ? 1u << kCtx[ctx].up_port : kCtx[ctx].members;
  } else if (agg && ctx >= 0) {
    m = kCtx[ctx].members;
  } else {
    m = 0;
    bool hit = false;
    for (const auto& e : kFdb)
      if (std::equal(e.mac, e.mac + 6, f.begin())) m |= e.mask, hit = true;
    if (!hit) m = kAll, flooded = true;
  }
  if (s < N) m &= ~(1u << s);
  return {m, flooded};
}

struct Bench {
  board::Dut<Vpanama_l2sw> dut;
  std::mt19937_64 rng{5};
  int pct(int p) { return int(rng() % 100) < p; }

  // Sources.
  std::deque<Bytes> in[S];
  size_t off[S] = {};
  bool held[S] = {};
  // Outputs: frames per port, and the beat under construction.
  Bytes acc[N];
  std::vector<Bytes> out[N];
  bool prev_v[N] = {}, prev_r[N] = {};
  Bytes prev_d[N];
  unsigned prev_nk[N] = {};
  int idle_pct = 10, ready_pct = 90;

  void cycle() {
    auto& t = *dut.top;
    for (int s = 0; s < S; ++s) {
      const bool have = !in[s].empty();
      const bool v = have && (held[s] || !pct(idle_pct));
      tb::set_bits(t.s_tvalid, s, 1, v);
      if (!v) continue;
      const Bytes& f = in[s].front();
      const size_t n = std::min<size_t>(BB, f.size() - off[s]);
      for (int b = 0; b < BB; ++b) {
        tb::set_bits(t.s_tdata, 8 * (BB * s + b), 8, size_t(b) < n ? f[off[s] + size_t(b)] : 0);
        tb::set_bits(t.s_tkeep, BB * s + b, 1, size_t(b) < n);
      }
      tb::set_bits(t.s_tlast, s, 1, off[s] + n >= f.size());
      tb::set_bits(t.s_tuser, s, 1, 0);
    }
    for (int e = 0; e < N; ++e) tb::set_bits(t.m_tready, e, 1, pct(ready_pct));
    t.clk = 0;
    t.eval();
    // Sample before the edge.
    bool acc_in[S];
    for (int s = 0; s < S; ++s) acc_in[s] = tb::get_bits(t.s_tvalid, s, 1) && tb::get_bits(t.s_tready, s, 1);
    for (int e = 0; e < N; ++e) {
      const bool v = tb::get_bits(t.m_tvalid, e, 1), r = tb::get_bits(t.m_tready, e, 1);
      Bytes d(BB);
      unsigned nk = 0;  // bytes kept: tkeep must be nk ones from bit 0
      bool contiguous = true;
      for (int b = 0; b < BB; ++b) {
        d[size_t(b)] = uint8_t(tb::get_bits(t.m_tdata, 8 * (BB * e + b), 8));
        const bool kb = tb::get_bits(t.m_tkeep, BB * e + b, 1);
        if (kb && nk != unsigned(b)) contiguous = false;
        nk += kb;
      }
      const bool last = tb::get_bits(t.m_tlast, e, 1);
      if (prev_v[e] && !prev_r[e]) {
        CHECK(v, "port %d: tvalid dropped while stalled\n", e);
        CHECK(d == prev_d[e] && nk == prev_nk[e], "port %d: beat changed while stalled\n", e);
      }
      if (v) {
        CHECK(last || nk == unsigned(BB), "port %d: partial tkeep on a beat that is not last\n", e);
        CHECK(contiguous && nk != 0, "port %d: tkeep not contiguous from bit 0\n", e);
      }
      if (v && r) {
        for (unsigned b = 0; b < nk; ++b) acc[e].push_back(d[b]);
        if (last) {
          CHECK(!tb::get_bits(t.m_tuser, e, 1), "port %d: tuser set\n", e);
          out[e].push_back(std::move(acc[e]));
          acc[e].clear();
        }
      }
      prev_v[e] = v, prev_r[e] = r, prev_d[e] = d, prev_nk[e] = nk;
    }
    t.clk = 1;
    t.eval();
    for (int s = 0; s < S; ++s) {
      if (!tb::get_bits(t.s_tvalid, s, 1)) continue;
      held[s] = !acc_in[s];
      if (!acc_in[s]) continue;
      const size_t n = std::min<size_t>(BB, in[s].front().size() - off[s]);
      off[s] += n;
      if (off[s] >= in[s].front().size()) in[s].pop_front(), off[s] = 0;
    }
  }

  void axil_write(uint32_t a, uint32_t v) {
    auto& t = *dut.top;
    t.s_axil_awaddr = a;
    t.s_axil_wdata = v;
    t.s_axil_awvalid = t.s_axil_wvalid = 1;
    t.s_axil_bready = 1;
    for (int i = 0; i < 20; ++i) {
      t.clk = 0;
      t.eval();
      const bool took = t.s_axil_awready;
      t.clk = 1;
      t.eval();
      if (took) t.s_axil_awvalid = t.s_axil_wvalid = 0;
      if (t.s_axil_bvalid) {
        cycle_plain();
        return;
      }
    }
    board::fail("AXI write 0x%x: no response\n", a);
  }
  uint32_t axil_read(uint32_t a) {
    auto& t = *dut.top;
    t.s_axil_araddr = a;
    t.s_axil_arvalid = 1;
    t.s_axil_rready = 1;
    for (int i = 0; i < 20; ++i) {
      t.clk = 0;
      t.eval();
      const bool took = t.s_axil_arready;
      t.clk = 1;
      t.eval();
      if (took) t.s_axil_arvalid = 0;
      if (t.s_axil_rvalid) {
        const uint32_t v = t.s_axil_rdata;
        cycle_plain();
        return v;
      }
    }
    board::fail("AXI read 0x%x: no response\n", a);
    return 0;
  }
  void cycle_plain() {
    dut.top->clk = 0;
    dut.top->eval();
    dut.top->clk = 1;
    dut.top->eval();
  }

  void setup() {
    auto& t = *dut.top;
    t.agg_port = kAggPort;
    t.ctx_enable = t.ctx_upstream = 0;
    t.ctx_jid = t.ctx_tid = t.ctx_upstream_port = 0;
    t.ctx_members = 0;
    for (int k = 0; k < C; ++k) {
      tb::set_bits(t.ctx_enable, k, 1, kCtx[k].enable);
      tb::set_bits(t.ctx_upstream, k, 1, kCtx[k].upstream);
      tb::set_bits(t.ctx_jid, 16 * k, 16, kCtx[k].jid);
      tb::set_bits(t.ctx_tid, 8 * k, 8, kCtx[k].tid);
      tb::set_bits(t.ctx_upstream_port, 8 * k, 8, unsigned(kCtx[k].up_port));
      tb::set_bits(t.ctx_members, N * k, N, kCtx[k].members);
    }
    dut.reset([this] { cycle_plain(); });
    CHECK(axil_read(0x000) == panama::proto::kL2swId, "ID register\n");
    CHECK(axil_read(0x004) == (uint32_t(FDB) << 16 | uint32_t(N) << 8 | uint32_t(TB_QAW)),
          "parameter register 0x%08x\n", axil_read(0x004));
    for (int i = 0; i < FDB; ++i) {
      const uint8_t* m = kFdb[i].mac;
      axil_write(panama::proto::kL2swFdbBase + panama::proto::kL2swFdbStride * i,
                 uint32_t(m[2]) << 24 | uint32_t(m[3]) << 16 | uint32_t(m[4]) << 8 | m[5]);
      axil_write(0x408 + 16 * i, kFdb[i].mask);
      axil_write(0x404 + 16 * i, 0x80000000u | uint32_t(m[0]) << 8 | m[1]);
      CHECK(axil_read(0x404 + 16 * i) == (0x80000000u | uint32_t(m[0]) << 8 | m[1]), "FDB %d read back\n", i);
    }
  }

  // A random frame from source s, tagged (bytes 56..63) with its source and number.
  Bytes frame(int s, uint32_t seq) {
    const int kind = int(rng() % 10);
    size_t len = 64 + rng() % 200;
    if (kind == 9 && pct(30)) len = size_t(MAXB) * BB + 1 + rng() % 64;  // too long
    Bytes f(len);
    for (auto& b : f) b = uint8_t(rng());
    static const uint8_t dsts[6][6] = {{0x02, 0, 0, 0, 0, 0x10}, {0x02, 0, 0, 0, 0, 0x11},
                                       {0x01, 0, 0x5e, 1, 1, 1}, {0x02, 0, 0, 0, 0, 0x13},
                                       {0x02, 0, 0, 0, 0, 0x99}, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff}};
    const uint8_t* d = dsts[rng() % 6];
    std::copy(d, d + 6, f.begin());
    const bool ipv4 = s == N || kind < 8;
    if (ipv4) {
      f[12] = 8, f[13] = 0, f[14] = 0x45;
      const bool aggc = s == N || kind < 4;
      f[15] = uint8_t((aggc ? 56 << 2 : (rng() % 64) << 2) | (rng() % 4));
      f[20] = pct(10) && s < N ? 0x20 : 0x40, f[21] = 0, f[23] = 17;
      f[36] = kAggPort >> 8, f[37] = kAggPort & 0xff;
      if (pct(10)) f[37] ^= 1;       // another UDP port: bypass
      const int k = int(rng() % 3);  // context 0, 1, or none
      f[44] = k == 0 ? 0 : k == 1 ? 0 : 0x55, f[45] = k == 0 ? 7 : k == 1 ? 9 : 0x55, f[46] = uint8_t(k == 1 ? 1 : 0);
      set_csum(f);
    }
    for (int i = 0; i < 4; ++i) f[56 + size_t(i)] = uint8_t(seq >> (8 * i));
    f[60] = uint8_t(s);
    return f;
  }

  static int src_of(const Bytes& f) { return f[60]; }
  static uint32_t seq_of(const Bytes& f) {
    return uint32_t(f[56]) | uint32_t(f[57]) << 8 | uint32_t(f[58]) << 16 | uint32_t(f[59]) << 24;
  }

  // Runs `per_src` frames per source; returns what each port should get, per source, in order.
  struct Expect {
    std::vector<Bytes> to[N][S];
    uint64_t flooded = 0, discarded = 0, too_long[N] = {};
  };
  Expect run(int per_src, uint32_t seq0) {
    Expect x;
    for (int s = 0; s < S; ++s)
      for (int i = 0; i < per_src; ++i) {
        Bytes f = frame(s, seq0 + uint32_t(i));
        const Where w = forward(s, f);
        x.flooded += w.flooded;
        x.discarded += w.mask == 0;
        for (int e = 0; e < N; ++e)
          if (w.mask >> e & 1) {
            if (f.size() > size_t(MAXB) * BB)
              ++x.too_long[e];
            else
              x.to[e][s].push_back(f);
          }
        in[s].push_back(std::move(f));
      }
    for (int e = 0; e < N; ++e) out[e].clear();
    long quiet = 0;
    for (long c = 0; c < 3000000 && quiet < 4000; ++c) {
      bool busy = false;
      for (int s = 0; s < S; ++s) busy |= !in[s].empty();
      size_t before = 0, after = 0;
      for (int e = 0; e < N; ++e) before += out[e].size();
      cycle();
      for (int e = 0; e < N; ++e) after += out[e].size();
      quiet = busy || after != before ? 0 : quiet + 1;
    }
    return x;
  }
};

uint64_t counter(Bench& b, uint32_t a) { return b.axil_read(a); }

// 3. No starvation: two sources keep two of a built frame's ports busy with back-to-back frames,
// freeing them at different times; the built frame (three ports, or both on two) must still go
// out early, not only once the streams end.
void phase3(Bench& b) {
  b.idle_pct = 0;
  b.ready_pct = 100;
  b.axil_write(0x008, 100000);
  const int sa = 0, sb = N == 2 ? 1 : 2;                               // stream sources
  const uint8_t da = N == 2 ? 0x11 : 0x13, db = N == 2 ? 0x10 : 0x11;  // to port 1 / 3, and 0 / 1
  const int pa = N == 2 ? 1 : 3;
  const int kFrames = 150;
  for (int i = 0; i < kFrames; ++i)
    for (int k = 0; k < 2; ++k) {
      Bytes f(k == 0 ? 512 : 480, uint8_t(i));
      const uint8_t dst[6] = {0x02, 0, 0, 0, 0, k == 0 ? da : db};
      std::copy(dst, dst + 6, f.begin());
      f[12] = 0x88, f[13] = 0xb5;
      for (int j = 0; j < 4; ++j) f[56 + size_t(j)] = uint8_t(uint32_t(i) >> (8 * j));
      f[60] = uint8_t(k == 0 ? sa : sb);
      b.in[k == 0 ? sa : sb].push_back(f);
    }
  for (int e = 0; e < N; ++e) b.out[e].clear();
  for (int c = 0; c < 600; ++c) b.cycle();
  // The built frame: context 0 (multicast).
  Bytes g(128, 0);
  g[0] = 0x01, g[2] = 0x5e;
  g[12] = 8, g[13] = 0, g[14] = 0x45, g[15] = 56 << 2, g[23] = 17, g[36] = kAggPort >> 8, g[37] = kAggPort & 0xff;
  g[44] = 0, g[45] = 7, g[46] = 0;
  g[60] = uint8_t(N);
  set_csum(g);
  const size_t before = b.out[pa].size();  // stream frames already out when it arrives
  b.in[N].push_back(g);
  for (long c = 0; c < 400000 && !(b.in[sa].empty() && b.in[sb].empty()); ++c) b.cycle();
  for (int c = 0; c < 5000; ++c) b.cycle();
  size_t at = b.out[pa].size();
  for (size_t i = 0; i < b.out[pa].size(); ++i)
    if (b.out[pa][i] == g) at = i;
  CHECK(at < b.out[pa].size(), "phase 3: the built frame never reached port %d\n", pa);
  // At most the frames queued or in flight when it arrived, and the one holding its port then.
  CHECK(at < b.out[pa].size() && at <= before + 4,
        "phase 3: the built frame left port %d %zu stream frames after it came (starved)\n", pa, at - before);
  CHECK(b.out[pa].size() == size_t(kFrames) + 1, "phase 3: port %d sent %zu frames, want %d\n", pa, b.out[pa].size(),
        kFrames + 1);
}

}  // namespace

int main() {
  Bench b;
  b.setup();
  if (std::getenv("L2SW_DEBUG")) {  // one frame per source, everything printed
    b.axil_write(0x008, 100000);
    Bench::Expect x = b.run(std::atoi(std::getenv("L2SW_DEBUG")), 0);
    for (int e = 0; e < N; ++e) {
      for (int s = 0; s < S; ++s)
        for (auto& f : x.to[e][s])
          std::printf("want port %d: src %d seq %u len %zu\n", e, s, Bench::seq_of(f), f.size());
      for (auto& f : b.out[e])
        std::printf("got  port %d: src %d seq %u len %zu\n", e, f.size() > 60 ? f[60] : -1,
                    f.size() > 60 ? Bench::seq_of(f) : 0, f.size());
    }
    return 0;
  }
  // ---- 1: no marking, light stalls: exact
  b.axil_write(0x008, 100000);
  Bench::Expect x = b.run(300, 0);
  uint64_t tx_total[N] = {};
  for (int e = 0; e < N; ++e) {
    std::vector<Bytes> got[S];
    for (auto& f : b.out[e]) {
      CHECK(f.size() >= 64 && Bench::src_of(f) < S, "phase 1: port %d: a %zu-byte frame that was never sent\n", e,
            f.size());
      if (f.size() >= 64 && Bench::src_of(f) < S) got[Bench::src_of(f)].push_back(f);
    }
    size_t want_n = 0;
    for (int s = 0; s < S; ++s) {
      want_n += x.to[e][s].size();
      CHECK(got[s] == x.to[e][s], "phase 1: port %d from source %d: %zu frames, want %zu (or bytes differ)\n", e, s,
            got[s].size(), x.to[e][s].size());
    }
    tx_total[e] = want_n;
    CHECK(counter(b, 0x020 + 16 * e) == want_n, "phase 1: port %d tx_frames %llu, want %zu\n", e,
          (unsigned long long)counter(b, 0x020 + 16 * e), want_n);
    CHECK(counter(b, 0x028 + 16 * e) == x.too_long[e], "phase 1: port %d queue_drops %llu, want %llu\n", e,
          (unsigned long long)counter(b, 0x028 + 16 * e), (unsigned long long)x.too_long[e]);
    CHECK(counter(b, 0x024 + 16 * e) == 0, "phase 1: port %d ce_marked\n", e);
  }
  CHECK(counter(b, 0x00c) == x.flooded, "phase 1: flooded %llu, want %llu\n", (unsigned long long)counter(b, 0x00c),
        (unsigned long long)x.flooded);
  CHECK(counter(b, 0x010) == x.discarded, "phase 1: discarded %llu, want %llu\n", (unsigned long long)counter(b, 0x010),
        (unsigned long long)x.discarded);
  const uint64_t fl1 = x.flooded;

  // ---- 2: threshold 1, heavy back-pressure: marks and drops, every one accounted for
  b.axil_write(0x008, 1);
  b.idle_pct = 0;
  b.ready_pct = 25;
  uint64_t qd0[N], ce0[N];
  for (int e = 0; e < N; ++e) qd0[e] = counter(b, 0x028 + 16 * e), ce0[e] = counter(b, 0x024 + 16 * e);
  x = b.run(400, 1000000);
  std::map<std::pair<int, uint32_t>, Bytes> copy;  // first copy of each (source, seq) seen
  uint64_t marks_total = 0, missing_total = 0;
  for (int e = 0; e < N; ++e) {
    std::vector<Bytes> got[S];
    for (auto& f : b.out[e]) {
      CHECK(f.size() >= 64 && Bench::src_of(f) < S, "phase 2: port %d: a %zu-byte frame that was never sent\n", e,
            f.size());
      if (f.size() >= 64 && Bench::src_of(f) < S) got[Bench::src_of(f)].push_back(f);
    }
    uint64_t marks = 0, missing = 0;
    for (int s = 0; s < S; ++s) {
      size_t j = 0;  // got[s] must be a subsequence of the expected frames, each as sent or marked
      for (const Bytes& want : x.to[e][s]) {
        if (j < got[s].size() && Bench::seq_of(got[s][j]) == Bench::seq_of(want)) {
          const Bytes& g = got[s][j];
          const bool same = g == want, mk = ect(want) && g == marked(want);
          CHECK(same || mk, "phase 2: port %d source %d seq %u: changed other than by a CE mark\n", e, s,
                Bench::seq_of(want));
          marks += mk && !same;
          auto ins = copy.emplace(std::make_pair(s, Bench::seq_of(want)), g);
          CHECK(ins.second || ins.first->second == g, "phase 2: copies of source %d seq %u differ\n", s,
                Bench::seq_of(want));
          ++j;
        } else {
          ++missing;
        }
      }
      CHECK(j == got[s].size(), "phase 2: port %d source %d: %zu frames not expected or out of order\n", e, s,
            got[s].size() - j);
    }
    marks_total += marks;
    missing_total += missing;
    CHECK(counter(b, 0x024 + 16 * e) - ce0[e] == marks, "phase 2: port %d ce_marked %llu, marked frames %llu\n", e,
          (unsigned long long)(counter(b, 0x024 + 16 * e) - ce0[e]), (unsigned long long)marks);
    CHECK(counter(b, 0x028 + 16 * e) - qd0[e] == missing + x.too_long[e],
          "phase 2: port %d queue_drops %llu, missing %llu + too long %llu\n", e,
          (unsigned long long)(counter(b, 0x028 + 16 * e) - qd0[e]), (unsigned long long)missing,
          (unsigned long long)x.too_long[e]);
    CHECK(counter(b, 0x02c + 16 * e) == 0, "phase 2: port %d frames left queued\n", e);
  }
  CHECK(marks_total > 0, "phase 2: nothing was marked\n");
  CHECK(counter(b, 0x00c) - fl1 == x.flooded, "phase 2: flooded\n");
  phase3(b);
  char detail[160];
  std::snprintf(detail, sizeof detail, " (phase 1 exact, %llu tx; phase 2: %llu marked, %llu dropped for queue room)",
                (unsigned long long)std::accumulate(tx_total, tx_total + N, uint64_t{0}),
                (unsigned long long)marks_total, (unsigned long long)missing_total);
  return board::verdict("l2sw_tb", detail);
}
