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
#include "verilated.h"

namespace {

struct Beat {
  uint64_t data;
  uint8_t keep;
  bool last, user;
  bool operator==(const Beat& o) const { return data == o.data && keep == o.keep && last == o.last && user == o.user; }
};

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

int failures = 0;
#define CHECK(cond, ...)                                    \
  do {                                                      \
    if (!(cond)) {                                          \
      if (failures < 10) std::fprintf(stderr, __VA_ARGS__); \
      ++failures;                                           \
    }                                                       \
  } while (0)

struct FifoCheck {
  std::deque<Beat> expected;   // committed beats of frames not dropped
  std::vector<Beat> in_frame;  // beats of the frame being written
  bool in_dropped = false;     // the frame being written was reported dropped
  bool out_in_frame = false;   // an output frame has started and not ended
  bool prev_stall = false;     // last edge had valid && !ready
  Beat prev_beat{};
  long beats_in = 0, beats_out = 0, frames_dropped = 0, frames_out = 0;
};

// One scenario: returns the number of new failures.
int run(const Scenario& sc, long cycles, unsigned seed, int idle_pct, int bp_pct) {
  const int fail0 = failures;
  auto ctx = std::make_unique<VerilatedContext>();
  auto top = std::make_unique<Vcdc_tb_top>(ctx.get());
  std::mt19937_64 rng(seed);
  auto pct = [&](int p) { return int(rng() % 100) < p; };
  std::normal_distribution<double> gauss(0.0, 1.0);

  FifoCheck f[kFifos];
  top->s_clk = 0;
  top->m_clk = 0;
  top->arst = 1;
  top->s_tvalid = 0;
  top->m_tready = 0;
  top->eval();
  // Assertion needs no clock edge.
  CHECK(top->s_rst && top->m_rst, "%s: reset not asserted without a clock\n", sc.name);

  // Stimulus state: the current frame of each FIFO and its next beat.
  struct Src {
    int len = 0, pos = 0;
    Beat beat{};
  } src[kFifos];
  auto new_beat = [&](Src& s) {
    if (s.pos == s.len) {
      // Frames of 1..20 beats: some longer than the 16-beat FIFOs.
      s.len = 1 + int(rng() % 20);
      s.pos = 0;
    }
    s.beat.data = rng();
    s.beat.last = s.pos == s.len - 1;
    s.beat.keep = s.beat.last ? uint8_t((1u << (1 + rng() % 8)) - 1) : 0xff;
    s.beat.user = s.beat.last && pct(10);
  };
  for (auto& s : src) new_beat(s);

  double t_s = 0, t_m = sc.m_phase;
  long s_edges = 0, m_edges = 0;
  const long release_edge = 5;  // write-domain edges before arst falls
  long s_release = -1, m_release = -1;
  bool traffic = true;
  long drain_edges = 0;

  // The three FIFOs each get their own beat sequence; the shared stimulus bus is time-sliced:
  // on each write edge one FIFO (round robin over those whose source is not idle) drives it.
  int turn = 0;
  auto set_stimulus = [&]() {
    top->s_tvalid = 0;
    if (!traffic || top->s_rst) return;
    for (int k = 0; k < kFifos; ++k) {
      const int i = (turn + k) % kFifos;
      if (pct(idle_pct)) continue;
      top->s_tvalid = uint8_t(1u << i);
      top->s_tdata = src[i].beat.data;
      top->s_tkeep = src[i].beat.keep;
      top->s_tlast = src[i].beat.last;
      top->s_tuser = src[i].beat.user;
      return;
    }
  };
  int holder = -1;  // FIFO whose valid beat was not taken yet: it keeps the bus (no retraction)
  auto set_ready = [&]() {
    uint8_t r = 0;
    for (int i = 0; i < kFifos; ++i)
      if (!pct(traffic ? bp_pct : 0)) r |= 1u << i;
    top->m_tready = r;
  };

  for (;;) {
    // Next edge: the earlier of the two clocks.
    const bool s_edge = t_s <= t_m;
    if (s_edge) {
      if (s_edges == release_edge) top->arst = 0;
      // Handshakes sampled before the edge.
      const uint8_t xfer = top->s_tvalid & top->s_tready;
      const Beat b{top->s_tdata, top->s_tkeep, bool(top->s_tlast), bool(top->s_tuser)};
      top->s_clk = 1;
      top->eval();
      ++s_edges;
      if (!top->s_rst && s_release < 0) {
        s_release = s_edges;
      }
      for (int i = 0; i < kFifos; ++i) {
        FifoCheck& c = f[i];
        if (xfer & (1u << i)) {
          ++c.beats_in;
          if (!c.in_dropped) c.in_frame.push_back(b);
          ++src[i].pos;
          new_beat(src[i]);
        }
        if (top->s_drop & (1u << i)) {
          CHECK(kFrame[i], "%s: fifo %d (beat mode) dropped\n", sc.name, i);
          // The beat that caused the drop was the one just transferred.
          CHECK(xfer & (1u << i), "%s: fifo %d: drop without a transfer\n", sc.name, i);
          if (!kDropMode[i]) {
            // Back-pressure mode drops only frames longer than the FIFO.
            CHECK(src[i].len > kDepth[i] || c.in_frame.size() >= size_t(kDepth[i]),
                  "%s: fifo %d dropped a frame of %d beats\n", sc.name, i, src[i].len);
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
      if (holder >= 0 && (xfer & (1u << holder))) holder = -1;
      top->s_clk = 0;
      top->eval();
      if (holder < 0) {
        turn = (turn + 1) % kFifos;
        set_stimulus();
        holder = -1;
        for (int i = 0; i < kFifos; ++i)
          if (top->s_tvalid & (1u << i)) holder = i;
      }
      top->eval();
      t_s += sc.s_period * (1.0 + sc.jitter * gauss(rng));
    } else {
      const uint8_t xfer = top->m_tvalid & top->m_tready;
      const uint8_t valid = top->m_tvalid;
      Beat out[kFifos];
      for (int i = 0; i < kFifos; ++i)
        out[i] = Beat{(uint64_t(top->m_tdata[2 * i + 1]) << 32) | top->m_tdata[2 * i],
                      uint8_t((top->m_tkeep >> (8 * i)) & 0xff), bool((top->m_tlast >> i) & 1),
                      bool((top->m_tuser >> i) & 1)};
      for (int i = 0; i < kFifos; ++i) {
        FifoCheck& c = f[i];
        if (c.prev_stall) {
          CHECK((valid >> i) & 1, "%s: fifo %d retracted tvalid\n", sc.name, i);
          CHECK(out[i] == c.prev_beat, "%s: fifo %d changed a stalled beat\n", sc.name, i);
        }
        if (kFrame[i] && c.out_in_frame)
          CHECK((valid >> i) & 1, "%s: fifo %d: tvalid fell inside a frame (m edge %ld)\n", sc.name, i, m_edges);
        c.prev_stall = ((valid >> i) & 1) && !((xfer >> i) & 1);
        c.prev_beat = out[i];
        if ((xfer >> i) & 1) {
          ++c.beats_out;
          if (c.expected.empty()) {
            CHECK(false, "%s: fifo %d: beat out that was never committed (duplicate?)\n", sc.name, i);
          } else {
            CHECK(out[i] == c.expected.front(), "%s: fifo %d: beat %ld differs (lost or reordered)\n", sc.name, i,
                  c.beats_out);
            c.expected.pop_front();
          }
          c.out_in_frame = !out[i].last;
          if (out[i].last) ++c.frames_out;
        }
      }
      top->m_clk = 1;
      top->eval();
      ++m_edges;
      if (!top->m_rst && m_release < 0) {
        m_release = m_edges;
      }
      top->m_clk = 0;
      top->eval();
      set_ready();
      top->eval();
      const double drift = 1.0 + sc.drift * std::sin(2 * M_PI * double(m_edges) / 5000.0);
      t_m += sc.m_period * drift * (1.0 + sc.jitter * gauss(rng));
    }
    if (traffic && std::max(s_edges, m_edges) >= cycles) traffic = false;
    if (!traffic) {
      // Drain: stop sources once their pending beat is taken, full read rate.
      if (holder < 0) top->s_tvalid = 0;
      if (++drain_edges > 2000) break;
    }
  }
  // Release: the write domain is out of reset 3 of its edges after arst fell (edge numbering
  // counts the edge at which arst was already low as the first).
  CHECK(s_release == release_edge + 3, "%s: write-side reset released at edge %ld, expected %ld\n", sc.name, s_release,
        release_edge + 3);
  // The read side leaves reset after 3 of its edges too; its edges are not counted from arst's
  // fall, so only check that it did leave reset.
  CHECK(m_release > 0, "%s: read-side reset never released\n", sc.name);
  for (int i = 0; i < kFifos; ++i) {
    FifoCheck& c = f[i];
    // A frame still being written when traffic stopped is incomplete: it may stay in the FIFO.
    CHECK(c.expected.empty(), "%s: fifo %d: %zu committed beat(s) never came out (lost)\n", sc.name, i,
          c.expected.size());
    CHECK(c.frames_out > 50, "%s: fifo %d: only %ld frames out\n", sc.name, i, c.frames_out);
    std::printf("%-10s fifo %d (%s): %6ld beats in, %6ld out, %5ld frames out, %4ld dropped\n", sc.name, i,
                kFrame[i] ? (kDropMode[i] ? "frame/drop" : "frame/bp") : "beat", c.beats_in, c.beats_out, c.frames_out,
                c.frames_dropped);
  }
  top->final();
  return failures - fail0;
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
  if (failures) {
    std::printf("cdc_tb: FAIL (%d check(s) failed)\n", failures);
    return 1;
  }
  std::printf("cdc_tb: PASS\n");
  return 0;
}
