// port_cdc_tb: rtl/panama_port_cdc.v with AGG = 1 (the shell's port that also carries m_agg),
// MAC clock 156.25 MHz against core clock 200 MHz (the SUME ratio) and against a core clock
// drifting around it. Receive: random frames from the "MAC" (never back-pressured) must reach the
// core side whole and in order unless reported dropped (rx_drop), the core side stalling at
// random. Transmit: random frames on mPP and on m_agg must all reach the "MAC" whole, each input
// in order, never interleaved, with tvalid never falling inside a frame, the MAC stalling at
// random. All beats compared with tdata, tkeep, tlast and tuser.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <memory>
#include <random>
#include <vector>

#include "Vpanama_port_cdc.h"
#include "verilated.h"

namespace {
struct Beat {
  uint64_t data;
  uint8_t keep;
  bool last, user;
  bool operator==(const Beat& o) const { return data == o.data && keep == o.keep && last == o.last && user == o.user; }
};
int failures = 0;
#define CHECK(c, ...)                                       \
  do {                                                      \
    if (!(c)) {                                             \
      if (failures < 10) std::fprintf(stderr, __VA_ARGS__); \
      ++failures;                                           \
    }                                                       \
  } while (0)

struct Source {  // frames of 1..30 beats
  int len = 0, pos = 0;
  Beat b{};
  bool valid = false;
  uint64_t tag;
  void next(std::mt19937_64& rng, bool with_user) {
    if (pos == len) {
      len = 1 + int(rng() % 30);
      pos = 0;
    }
    b.data = (rng() & ~(uint64_t(3) << 62)) | (tag << 62);
    b.last = pos == len - 1;
    b.keep = b.last ? uint8_t((1u << (1 + rng() % 8)) - 1) : 0xff;
    b.user = with_user && b.last && rng() % 5 == 0;
  }
};

void run(double core_period, double drift, unsigned seed) {
  auto ctx = std::make_unique<VerilatedContext>();
  auto top = std::make_unique<Vpanama_port_cdc>(ctx.get());
  std::mt19937_64 rng(seed);
  auto pct = [&](int p) { return int(rng() % 100) < p; };

  Source rx, mp, ag;
  rx.tag = 1;
  mp.tag = 2;
  ag.tag = 3;
  rx.next(rng, true);
  mp.next(rng, true);
  ag.next(rng, false);
  std::deque<Beat> rx_exp, tx_exp[2];
  std::vector<Beat> rx_frame;
  bool rx_dropping = false;
  int tx_owner = -1;
  bool tx_in_frame = false;
  long rx_frames_out = 0, tx_frames_out[2] = {0, 0}, drops = 0;

  top->mac_rst = 1;
  top->core_rst = 1;
  double t_mac = 0, t_core = 1700;
  long mac_edges = 0, core_edges = 0;
  const long run_edges = 60000;
  for (;;) {
    const bool traffic = std::max(mac_edges, core_edges) < run_edges;
    if (!traffic && std::max(mac_edges, core_edges) > run_edges + 4000) break;
    const bool reset = std::min(mac_edges, core_edges) < 8;
    top->mac_rst = reset;
    top->core_rst = reset;
    if (t_mac <= t_core) {
      // ---- MAC edge: receive source drives, transmit sink samples ----
      top->mac_rx_tvalid = 0;
      if (!reset && traffic && !pct(25)) {
        top->mac_rx_tvalid = 1;
        top->mac_rx_tdata = rx.b.data;
        top->mac_rx_tkeep = rx.b.keep;
        top->mac_rx_tlast = rx.b.last;
        top->mac_rx_tuser = rx.b.user;
      } else if (!reset && rx.pos > 0) {
        // A MAC never pauses inside a frame forever: finish frames after the traffic stops.
        top->mac_rx_tvalid = 1;
        top->mac_rx_tdata = rx.b.data;
        top->mac_rx_tkeep = rx.b.keep;
        top->mac_rx_tlast = rx.b.last;
        top->mac_rx_tuser = rx.b.user;
      }
      top->mac_tx_tready = !pct(traffic ? 20 : 0);
      top->eval();
      const bool rx_t = top->mac_rx_tvalid;  // the receive side is never back-pressured
      const Beat rb = rx.b;
      const bool tx_t = top->mac_tx_tvalid && top->mac_tx_tready;
      const Beat tb{top->mac_tx_tdata, uint8_t(top->mac_tx_tkeep), bool(top->mac_tx_tlast), bool(top->mac_tx_tuser)};
      if (tx_in_frame) CHECK(top->mac_tx_tvalid, "transmit tvalid fell inside a frame\n");
      top->mac_clk = 1;
      top->eval();
      top->mac_clk = 0;
      top->eval();
      ++mac_edges;
      if (rx_t) {
        if (!rx_dropping) rx_frame.push_back(rb);
        ++rx.pos;
        rx.next(rng, true);
      }
      if (top->rx_drop) {
        ++drops;
        rx_frame.clear();
        rx_dropping = !rb.last;
      } else if (rx_t && rb.last) {
        if (!rx_dropping)
          for (auto& x : rx_frame) rx_exp.push_back(x);
        rx_frame.clear();
        rx_dropping = false;
      }
      if (tx_t) {
        if (tx_owner < 0) tx_owner = int(tb.data >> 62) == 3 ? 1 : 0;
        auto& q = tx_exp[tx_owner];
        CHECK(!q.empty() && q.front() == tb, "transmit beat lost, changed, interleaved or reordered (%s)\n",
              tx_owner ? "m_agg" : "mPP");
        if (!q.empty()) q.pop_front();
        tx_in_frame = !tb.last;
        if (tb.last) {
          ++tx_frames_out[tx_owner];
          tx_owner = -1;
        }
      }
      t_mac += 6400;
    } else {
      // ---- core edge: receive sink samples, transmit sources drive ----
      top->s_axis_tready = !pct(traffic ? 10 : 0);
      if (!mp.valid && !reset && traffic && !pct(40)) mp.valid = true;
      if (!ag.valid && !reset && traffic && !pct(70)) ag.valid = true;
      if (!traffic && mp.pos > 0) mp.valid = true;
      if (!traffic && ag.pos > 0) ag.valid = true;
      top->m_axis_tvalid = mp.valid;
      top->m_axis_tdata = mp.b.data;
      top->m_axis_tkeep = mp.b.keep;
      top->m_axis_tlast = mp.b.last;
      top->m_axis_tuser = mp.b.user;
      top->agg_axis_tvalid = ag.valid;
      top->agg_axis_tdata = ag.b.data;
      top->agg_axis_tkeep = ag.b.keep;
      top->agg_axis_tlast = ag.b.last;
      top->eval();
      const bool s_t = top->s_axis_tvalid && top->s_axis_tready;
      const Beat sb{top->s_axis_tdata, uint8_t(top->s_axis_tkeep), bool(top->s_axis_tlast), bool(top->s_axis_tuser)};
      const bool m_t = top->m_axis_tvalid && top->m_axis_tready;
      const bool a_t = top->agg_axis_tvalid && top->agg_axis_tready;
      top->core_clk = 1;
      top->eval();
      top->core_clk = 0;
      top->eval();
      ++core_edges;
      if (s_t) {
        CHECK(!rx_exp.empty() && rx_exp.front() == sb, "receive beat lost, changed or reordered\n");
        if (!rx_exp.empty()) rx_exp.pop_front();
        if (sb.last) ++rx_frames_out;
      }
      if (m_t) {
        tx_exp[0].push_back(mp.b);
        ++mp.pos;
        mp.valid = false;
        mp.next(rng, true);
      }
      if (a_t) {
        tx_exp[1].push_back(ag.b);
        ++ag.pos;
        ag.valid = false;
        ag.next(rng, false);
      }
      const double d = 1.0 + drift * std::sin(2 * M_PI * double(core_edges) / 7000.0);
      t_core += core_period * d;
    }
  }
  CHECK(rx_exp.empty() && tx_exp[0].empty() && tx_exp[1].empty(), "beats never delivered: rx %zu, mPP %zu, m_agg %zu\n",
        rx_exp.size(), tx_exp[0].size(), tx_exp[1].size());
  CHECK(rx_frames_out > 500 && tx_frames_out[0] > 200 && tx_frames_out[1] > 100, "too little traffic: %ld %ld %ld\n",
        rx_frames_out, tx_frames_out[0], tx_frames_out[1]);
  std::printf("core period %.0f ps, drift %.0f %%: rx %ld frames (%ld dropped), tx mPP %ld, m_agg %ld\n", core_period,
              drift * 100, rx_frames_out, drops, tx_frames_out[0], tx_frames_out[1]);
  top->final();
}
}  // namespace

int main() {
  run(5000, 0.0, 1);  // 200 MHz core, 156.25 MHz MAC
  run(5000, 0.4, 2);  // core clock drifting between 143 and 333 MHz
  run(8000, 0.0, 3);  // core slower than the MAC: the receive FIFO fills and drops whole frames
  if (failures) {
    std::printf("port_cdc_tb: FAIL (%d)\n", failures);
    return 1;
  }
  std::printf("port_cdc_tb: PASS\n");
  return 0;
}
