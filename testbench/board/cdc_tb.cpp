// cdc_tb: panama_axis_async_fifo and panama_reset_sync across clock ratios.
//
// Two clocks with their own periods (write faster, slower, equal with a phase offset, drifting
// with per-edge jitter) are stepped edge by edge in simulated time. Each FIFO gets random frames
// with random idle cycles and random back-pressure; a scoreboard pushes every accepted beat,
// removes the frames the FIFO reports dropped (s_drop), and compares every output beat with the
// next expected one. Frame-mode FIFOs must also keep tvalid high inside an output frame, and
// drop a frame only when it is longer than the FIFO (back-pressure mode) or met a full FIFO.
// After the traffic stops, the FIFOs drain and nothing may be left: no beat lost, duplicated or
// reordered.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "Vcdc_tb_top.h"
#include "board_tb.h"
#include "verilated.h"

namespace {

using board::Beat;

struct Scenario {
  const char* name;
  double s_period, m_period;  // ps
  double m_phase;             // ps, offset of the first read edge
  double drift;               // relative amplitude of a slow sinusoidal drift of the read clock
  double jitter;              // relative per-edge jitter of both clocks
};

constexpr int kFifos = 3;
constexpr int kDepth[kFifos] = {16, 16, 8};
constexpr bool kFrame[kFifos] = {true, true, false};
constexpr bool kDropMode[kFifos] = {false, true, false};

struct FifoCheck {
  std::deque<Beat> expected;   // committed beats of frames not dropped
  std::vector<Beat> in_frame;  // beats of the frame being written
  bool in_dropped = false;     // the frame being written was reported dropped
  bool out_in_frame = false;   // an output frame has started and not ended
  bool prev_stall = false;     // last edge had valid && !ready
  Beat prev_beat{};
  long beats_in = 0, beats_out = 0, frames_dropped = 0, frames_out = 0;
};

// One scenario: the design, the stimulus and the scoreboard of each FIFO.
class CdcRun {
 public:
  CdcRun(const Scenario& sc, long cycles, unsigned seed, int idle_pct, int bp_pct)
      : sc_(sc), cycles_(cycles), idle_pct_(idle_pct), bp_pct_(bp_pct), rng_(seed), t_m_(sc.m_phase) {
    top_->s_clk = 0;
    top_->m_clk = 0;
    top_->arst = 1;
    top_->s_tvalid = 0;
    top_->m_tready = 0;
    top_->eval();
    // Assertion needs no clock edge.
    CHECK(top_->s_rst && top_->m_rst, "%s: reset not asserted without a clock\n", sc.name);
    for (auto& s : src_) new_beat(s);
  }

  // Steps both clocks edge by edge until the traffic has stopped and the FIFOs had time to drain.
  void simulate() {
    for (;;) {
      // Next edge: the earlier of the two clocks.
      if (t_s_ <= t_m_)
        write_edge();
      else
        read_edge();
      if (traffic_ && std::max(s_edges_, m_edges_) >= cycles_) traffic_ = false;
      if (!traffic_) {
        // Drain: stop sources once their pending beat is taken, full read rate.
        if (holder_ < 0) top_->s_tvalid = 0;
        if (++drain_edges_ > 2000) break;
      }
    }
  }

  // The checks after the drain, and one line per FIFO.
  void finish() {
    // Release: the write domain is out of reset 3 of its edges after arst fell (edge numbering
    // counts the edge at which arst was already low as the first).
    CHECK(s_release_ == kReleaseEdge + 3, "%s: write-side reset released at edge %ld, expected %ld\n", sc_.name,
          s_release_, kReleaseEdge + 3);
    // The read side leaves reset after 3 of its edges too; its edges are not counted from arst's
    // fall, so only check that it did leave reset.
    CHECK(m_release_ > 0, "%s: read-side reset never released\n", sc_.name);
    for (int i = 0; i < kFifos; ++i) {
      FifoCheck& c = f_[i];
      // A frame still being written when traffic stopped is incomplete: it may stay in the FIFO.
      CHECK(c.expected.empty(), "%s: fifo %d: %zu committed beat(s) never came out (lost)\n", sc_.name, i,
            c.expected.size());
      CHECK(c.frames_out > 50, "%s: fifo %d: only %ld frames out\n", sc_.name, i, c.frames_out);
      std::printf("%-10s fifo %d (%s): %6ld beats in, %6ld out, %5ld frames out, %4ld dropped\n", sc_.name, i,
                  kFrame[i] ? (kDropMode[i] ? "frame/drop" : "frame/bp") : "beat", c.beats_in, c.beats_out,
                  c.frames_out, c.frames_dropped);
    }
    top_->final();
  }

 private:
  static constexpr long kReleaseEdge = 5;  // write-side edges before arst falls

  // Stimulus state: the current frame of each FIFO and its next beat.
  struct Src {
    int len = 0, pos = 0;
    Beat beat{};
  };

  bool pct(int p) { return int(rng_() % 100) < p; }

  void new_beat(Src& s) {
    if (s.pos == s.len) {
      // Frames of 1..20 beats: some longer than the 16-beat FIFOs.
      s.len = 1 + int(rng_() % 20);
      s.pos = 0;
    }
    s.beat.data = rng_();
    s.beat.last = s.pos == s.len - 1;
    s.beat.keep = s.beat.last ? uint8_t((1u << (1 + rng_() % 8)) - 1) : 0xff;
    s.beat.user = s.beat.last && pct(10);
  }

  // The three FIFOs each get their own beat sequence; the shared stimulus bus is time-sliced:
  // on each write edge one FIFO (round robin over those whose source is not idle) drives it.
  void set_stimulus() {
    top_->s_tvalid = 0;
    if (!traffic_ || top_->s_rst) return;
    for (int k = 0; k < kFifos; ++k) {
      const int i = (turn_ + k) % kFifos;
      if (pct(idle_pct_)) continue;
      top_->s_tvalid = uint8_t(1u << i);
      top_->s_tdata = src_[i].beat.data;
      top_->s_tkeep = src_[i].beat.keep;
      top_->s_tlast = src_[i].beat.last;
      top_->s_tuser = src_[i].beat.user;
      return;
    }
  }

  void set_ready() {
    uint8_t r = 0;
    for (int i = 0; i < kFifos; ++i)
      if (!pct(traffic_ ? bp_pct_ : 0)) r |= 1u << i;
    top_->m_tready = r;
  }

  void write_edge() {
    if (s_edges_ == kReleaseEdge) top_->arst = 0;
    // Handshakes sampled before the edge.
    const uint8_t xfer = top_->s_tvalid & top_->s_tready;
    const Beat b{top_->s_tdata, top_->s_tkeep, bool(top_->s_tlast), bool(top_->s_tuser)};
    top_->s_clk = 1;
    top_->eval();
    ++s_edges_;
    if (!top_->s_rst && s_release_ < 0) s_release_ = s_edges_;
    for (int i = 0; i < kFifos; ++i) score_write(i, xfer, b);
    if (holder_ >= 0 && (xfer & (1u << holder_))) holder_ = -1;
    top_->s_clk = 0;
    top_->eval();
    if (holder_ < 0) {
      turn_ = (turn_ + 1) % kFifos;
      set_stimulus();
      holder_ = -1;
      for (int i = 0; i < kFifos; ++i)
        if (top_->s_tvalid & (1u << i)) holder_ = i;
    }
    top_->eval();
    t_s_ += sc_.s_period * (1.0 + sc_.jitter * gauss_(rng_));
  }

  // FIFO i after a write edge that transferred `xfer` (one bit per FIFO) carrying beat b.
  void score_write(int i, uint8_t xfer, const Beat& b) {
    FifoCheck& c = f_[i];
    if (xfer & (1u << i)) {
      ++c.beats_in;
      if (!c.in_dropped) c.in_frame.push_back(b);
      ++src_[i].pos;
      new_beat(src_[i]);
    }
    if (top_->s_drop & (1u << i)) {
      CHECK(kFrame[i], "%s: fifo %d (beat mode) dropped\n", sc_.name, i);
      // The beat that caused the drop was the one just transferred.
      CHECK(xfer & (1u << i), "%s: fifo %d: drop without a transfer\n", sc_.name, i);
      if (!kDropMode[i]) {
        // Back-pressure mode drops only frames longer than the FIFO.
        CHECK(src_[i].len > kDepth[i] || c.in_frame.size() >= size_t(kDepth[i]),
              "%s: fifo %d dropped a frame of %d beats\n", sc_.name, i, src_[i].len);
      }
      ++c.frames_dropped;
      c.in_frame.clear();
      c.in_dropped = !b.last;
    } else if ((xfer & (1u << i)) && b.last) {
      if (c.in_dropped) c.in_frame.clear();
      c.in_dropped = false;
    }
    if (!c.in_dropped && !c.in_frame.empty() && (c.in_frame.back().last || !kFrame[i])) {
      for (auto& x : c.in_frame) c.expected.push_back(x);
      c.in_frame.clear();
    }
  }

  void read_edge() {
    const uint8_t xfer = top_->m_tvalid & top_->m_tready;
    const uint8_t valid = top_->m_tvalid;
    for (int i = 0; i < kFifos; ++i) {
      const Beat out{(uint64_t(top_->m_tdata[2 * i + 1]) << 32) | top_->m_tdata[2 * i],
                     uint8_t((top_->m_tkeep >> (8 * i)) & 0xff), bool((top_->m_tlast >> i) & 1),
                     bool((top_->m_tuser >> i) & 1)};
      score_read(i, (valid >> i) & 1, (xfer >> i) & 1, out);
    }
    top_->m_clk = 1;
    top_->eval();
    ++m_edges_;
    if (!top_->m_rst && m_release_ < 0) m_release_ = m_edges_;
    top_->m_clk = 0;
    top_->eval();
    set_ready();
    top_->eval();
    const double drift = 1.0 + sc_.drift * std::sin(2 * M_PI * double(m_edges_) / 5000.0);
    t_m_ += sc_.m_period * drift * (1.0 + sc_.jitter * gauss_(rng_));
  }

  // FIFO i's output before a read edge: tvalid, whether the beat transfers, the beat.
  void score_read(int i, bool valid, bool xfer, const Beat& out) {
    FifoCheck& c = f_[i];
    if (c.prev_stall) {
      CHECK(valid, "%s: fifo %d retracted tvalid\n", sc_.name, i);
      CHECK(out == c.prev_beat, "%s: fifo %d changed a stalled beat\n", sc_.name, i);
    }
    if (kFrame[i] && c.out_in_frame)
      CHECK(valid, "%s: fifo %d: tvalid fell inside a frame (m edge %ld)\n", sc_.name, i, m_edges_);
    c.prev_stall = valid && !xfer;
    c.prev_beat = out;
    if (!xfer) return;
    ++c.beats_out;
    if (c.expected.empty()) {
      CHECK(false, "%s: fifo %d: beat out that was never committed (duplicate?)\n", sc_.name, i);
    } else {
      CHECK(out == c.expected.front(), "%s: fifo %d: beat %ld differs (lost or reordered)\n", sc_.name, i, c.beats_out);
      c.expected.pop_front();
    }
    c.out_in_frame = !out.last;
    if (out.last) ++c.frames_out;
  }

  const Scenario& sc_;
  const long cycles_;
  const int idle_pct_, bp_pct_;
  std::unique_ptr<VerilatedContext> ctx_ = std::make_unique<VerilatedContext>();
  std::unique_ptr<Vcdc_tb_top> top_ = std::make_unique<Vcdc_tb_top>(ctx_.get());
  std::mt19937_64 rng_;
  std::normal_distribution<double> gauss_{0.0, 1.0};
  FifoCheck f_[kFifos];
  Src src_[kFifos];
  double t_s_ = 0, t_m_;
  long s_edges_ = 0, m_edges_ = 0;
  long s_release_ = -1, m_release_ = -1;
  bool traffic_ = true;
  long drain_edges_ = 0;
  int turn_ = 0;
  int holder_ = -1;  // FIFO whose valid beat was not taken yet: it keeps the bus (no retraction)
};

void run(const Scenario& sc, long cycles, unsigned seed, int idle_pct, int bp_pct) {
  CdcRun r(sc, cycles, seed, idle_pct, bp_pct);
  r.simulate();
  r.finish();
}

}  // namespace

int main(int argc, char** argv) {
  long cycles = 50000;
  unsigned seed = 1;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    char* end = nullptr;
    const long v = std::strtol(argv[i + 1], &end, 10);
    if (*end || v <= 0) {
      std::fprintf(stderr, "cdc_tb: %s: bad value '%s'\n", k.c_str(), argv[i + 1]);
      return 2;
    }
    if (k == "--cycles")
      cycles = v;
    else if (k == "--seed")
      seed = unsigned(v);
    else {
      std::fprintf(stderr, "cdc_tb: unknown argument %s\n", k.c_str());
      return 2;
    }
  }
  const Scenario scenarios[] = {
      {"faster", 4000, 6400, 1300, 0.0, 0.0},     // write 250 MHz, read 156 MHz
      {"slower", 6400, 4000, 700, 0.0, 0.0},      // write 156 MHz, read 250 MHz
      {"equal", 5000, 5000, 2500, 0.0, 0.0},      // same frequency, half a period apart
      {"drifting", 5000, 5000, 100, 0.08, 0.03},  // read clock drifts +-8 %, 3 % jitter
  };
  int n = 0;
  for (const auto& sc : scenarios) {
    // Each ratio with and without idle cycles and back-pressure.
    run(sc, cycles, seed + n++, 0, 0);
    run(sc, cycles, seed + n++, 30, 40);
  }
  return board::verdict("cdc_tb");
}
