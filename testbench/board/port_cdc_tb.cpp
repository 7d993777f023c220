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
#include "board_tb.h"
#include "verilated.h"

namespace {

using board::Beat;

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

// One run: the design, the three sources and the scoreboards of both directions.
class PortRun {
 public:
  PortRun(double core_period, double drift, unsigned seed) : core_period_(core_period), drift_(drift), rng_(seed) {
    rx_.tag = 1;
    mp_.tag = 2;
    ag_.tag = 3;
    rx_.next(rng_, true);
    mp_.next(rng_, true);
    ag_.next(rng_, false);
    top_->mac_rst = 1;
    top_->core_rst = 1;
  }

  // Steps both clocks edge by edge: traffic, then time for everything to be delivered.
  void simulate() {
    for (;;) {
      traffic_ = std::max(mac_edges_, core_edges_) < kRunEdges;
      if (!traffic_ && std::max(mac_edges_, core_edges_) > kRunEdges + 4000) break;
      reset_ = std::min(mac_edges_, core_edges_) < 8;
      top_->mac_rst = reset_;
      top_->core_rst = reset_;
      if (t_mac_ <= t_core_)
        mac_edge();
      else
        core_edge();
    }
  }

  void finish() {
    CHECK(rx_exp_.empty() && tx_exp_[0].empty() && tx_exp_[1].empty(),
          "beats never delivered: rx %zu, mPP %zu, m_agg %zu\n", rx_exp_.size(), tx_exp_[0].size(), tx_exp_[1].size());
    CHECK(rx_frames_out_ > 500 && tx_frames_out_[0] > 200 && tx_frames_out_[1] > 100,
          "too little traffic: %ld %ld %ld\n", rx_frames_out_, tx_frames_out_[0], tx_frames_out_[1]);
    std::printf("core period %.0f ps, drift %.0f %%: rx %ld frames (%ld dropped), tx mPP %ld, m_agg %ld\n",
                core_period_, drift_ * 100, rx_frames_out_, drops_, tx_frames_out_[0], tx_frames_out_[1]);
    top_->final();
  }

 private:
  static constexpr long kRunEdges = 60000;

  bool pct(int p) { return int(rng_() % 100) < p; }

  // MAC edge: the receive source drives, the transmit sink samples.
  void mac_edge() {
    top_->mac_rx_tvalid = 0;
    // A MAC never pauses inside a frame forever: frames are finished after the traffic stops.
    if (!reset_ && ((traffic_ && !pct(25)) || rx_.pos > 0)) {
      top_->mac_rx_tvalid = 1;
      top_->mac_rx_tdata = rx_.b.data;
      top_->mac_rx_tkeep = rx_.b.keep;
      top_->mac_rx_tlast = rx_.b.last;
      top_->mac_rx_tuser = rx_.b.user;
    }
    top_->mac_tx_tready = !pct(traffic_ ? 20 : 0);
    top_->eval();
    const bool rx_t = top_->mac_rx_tvalid;  // the receive side is never back-pressured
    const Beat rb = rx_.b;
    const bool tx_t = top_->mac_tx_tvalid && top_->mac_tx_tready;
    const Beat tb{top_->mac_tx_tdata, uint8_t(top_->mac_tx_tkeep), bool(top_->mac_tx_tlast), bool(top_->mac_tx_tuser)};
    if (tx_in_frame_) CHECK(top_->mac_tx_tvalid, "transmit tvalid fell inside a frame\n");
    board::pulse(*top_, top_->mac_clk);
    ++mac_edges_;
    score_rx_in(rx_t, rb);
    if (tx_t) score_tx_out(tb);
    t_mac_ += 6400;
  }

  // The receive beat the MAC gave (if rx_t) and the FIFO's drop report after the MAC edge.
  void score_rx_in(bool rx_t, const Beat& rb) {
    if (rx_t) {
      if (!rx_dropping_) rx_frame_.push_back(rb);
      ++rx_.pos;
      rx_.next(rng_, true);
    }
    if (top_->rx_drop) {
      ++drops_;
      rx_frame_.clear();
      rx_dropping_ = !rb.last;
    } else if (rx_t && rb.last) {
      if (!rx_dropping_)
        for (auto& x : rx_frame_) rx_exp_.push_back(x);
      rx_frame_.clear();
      rx_dropping_ = false;
    }
  }

  // A transmit beat the MAC took: it must be the next of its input's frame.
  void score_tx_out(const Beat& tb) {
    if (tx_owner_ < 0) tx_owner_ = int(tb.data >> 62) == 3 ? 1 : 0;
    auto& q = tx_exp_[tx_owner_];
    CHECK(!q.empty() && q.front() == tb, "transmit beat lost, changed, interleaved or reordered (%s)\n",
          tx_owner_ ? "m_agg" : "mPP");
    if (!q.empty()) q.pop_front();
    tx_in_frame_ = !tb.last;
    if (tb.last) {
      ++tx_frames_out_[tx_owner_];
      tx_owner_ = -1;
    }
  }

  // Core edge: the receive sink samples, the transmit sources drive.
  void core_edge() {
    top_->s_axis_tready = !pct(traffic_ ? 10 : 0);
    if (!mp_.valid && !reset_ && traffic_ && !pct(40)) mp_.valid = true;
    if (!ag_.valid && !reset_ && traffic_ && !pct(70)) ag_.valid = true;
    if (!traffic_ && mp_.pos > 0) mp_.valid = true;
    if (!traffic_ && ag_.pos > 0) ag_.valid = true;
    top_->m_axis_tvalid = mp_.valid;
    top_->m_axis_tdata = mp_.b.data;
    top_->m_axis_tkeep = mp_.b.keep;
    top_->m_axis_tlast = mp_.b.last;
    top_->m_axis_tuser = mp_.b.user;
    top_->agg_axis_tvalid = ag_.valid;
    top_->agg_axis_tdata = ag_.b.data;
    top_->agg_axis_tkeep = ag_.b.keep;
    top_->agg_axis_tlast = ag_.b.last;
    top_->eval();
    const bool s_t = top_->s_axis_tvalid && top_->s_axis_tready;
    const Beat sb{top_->s_axis_tdata, uint8_t(top_->s_axis_tkeep), bool(top_->s_axis_tlast), bool(top_->s_axis_tuser)};
    const bool m_t = top_->m_axis_tvalid && top_->m_axis_tready;
    const bool a_t = top_->agg_axis_tvalid && top_->agg_axis_tready;
    board::pulse(*top_, top_->core_clk);
    ++core_edges_;
    if (s_t) {
      CHECK(!rx_exp_.empty() && rx_exp_.front() == sb, "receive beat lost, changed or reordered\n");
      if (!rx_exp_.empty()) rx_exp_.pop_front();
      if (sb.last) ++rx_frames_out_;
    }
    if (m_t) sent(mp_, tx_exp_[0], true);
    if (a_t) sent(ag_, tx_exp_[1], false);
    const double d = 1.0 + drift_ * std::sin(2 * M_PI * double(core_edges_) / 7000.0);
    t_core_ += core_period_ * d;
  }

  // Source s's beat was taken: it is expected on the MAC side; s moves to its next beat.
  void sent(Source& s, std::deque<Beat>& expect, bool with_user) {
    expect.push_back(s.b);
    ++s.pos;
    s.valid = false;
    s.next(rng_, with_user);
  }

  const double core_period_, drift_;
  std::unique_ptr<VerilatedContext> ctx_ = std::make_unique<VerilatedContext>();
  std::unique_ptr<Vpanama_port_cdc> top_ = std::make_unique<Vpanama_port_cdc>(ctx_.get());
  std::mt19937_64 rng_;
  Source rx_, mp_, ag_;
  std::deque<Beat> rx_exp_, tx_exp_[2];
  std::vector<Beat> rx_frame_;
  bool rx_dropping_ = false;
  int tx_owner_ = -1;
  bool tx_in_frame_ = false;
  long rx_frames_out_ = 0, tx_frames_out_[2] = {0, 0}, drops_ = 0;
  double t_mac_ = 0, t_core_ = 1700;
  long mac_edges_ = 0, core_edges_ = 0;
  bool traffic_ = true, reset_ = true;
};

void run(double core_period, double drift, unsigned seed) {
  PortRun r(core_period, drift, seed);
  r.simulate();
  r.finish();
}
}  // namespace

int main() {
  run(5000, 0.0, 1);  // 200 MHz core, 156.25 MHz MAC
  run(5000, 0.4, 2);  // core clock drifting between 143 and 333 MHz
  run(8000, 0.0, 3);  // core slower than the MAC: the receive FIFO fills and drops whole frames
  return board::verdict("port_cdc_tb");
}
