// arb2_tb: rtl/panama_axis_arb2.v with two random frame sources, random idle cycles and random
// back-pressure. Checks that every output frame is one whole input frame (never interleaved),
// each input's frames come out in order and unchanged, none is lost or duplicated, a stalled
// beat never changes, and when both inputs wait the grant alternates (no starvation).
#include <cstdint>
#include <cstdio>
#include <deque>
#include <memory>
#include <random>
#include <vector>

#include "Vpanama_axis_arb2.h"
#include "board_tb.h"
#include "verilated.h"

using board::Beat;

int main() {
  board::Dut<Vpanama_axis_arb2> dut;
  auto& top = dut.top;
  std::mt19937_64 rng(7);
  auto pct = [&](int p) { return int(rng() % 100) < p; };
  dut.reset();

  std::deque<Beat> expected[2];  // beats accepted from each input, in order
  struct Src {
    int len = 0, pos = 0;
    Beat b{};
    bool valid = false;
  } src[2];
  auto next = [&](Src& s, int who) {
    if (s.pos == s.len) {
      s.len = 1 + int(rng() % 12);
      s.pos = 0;
    }
    s.b.data = rng() ^ (uint64_t(who) << 63);
    s.b.last = s.pos == s.len - 1;
    s.b.keep = s.b.last ? uint8_t((1u << (1 + rng() % 8)) - 1) : 0xff;
    s.b.user = s.b.last && pct(20);
  };
  next(src[0], 0);
  next(src[1], 1);
  int owner = -1;  // input whose frame is on the output
  bool prev_stall = false;
  Beat prev{};
  long frames[2] = {0, 0}, both_waiting_switches = 0, both_waiting_frames = 0;
  int last_frame_from = -1;
  const long cycles = 200000;
  for (long c = 0; c < cycles + 2000; ++c) {
    const bool drain = c >= cycles;
    for (int i = 0; i < 2; ++i)
      if (!src[i].valid && !drain && !pct(i == 0 ? 20 : 35)) src[i].valid = true;
    top->s0_axis_tvalid = src[0].valid;
    top->s0_axis_tdata = src[0].b.data;
    top->s0_axis_tkeep = src[0].b.keep;
    top->s0_axis_tlast = src[0].b.last;
    top->s0_axis_tuser = src[0].b.user;
    top->s1_axis_tvalid = src[1].valid;
    top->s1_axis_tdata = src[1].b.data;
    top->s1_axis_tkeep = src[1].b.keep;
    top->s1_axis_tlast = src[1].b.last;
    top->s1_axis_tuser = src[1].b.user;
    top->m_axis_tready = drain || !pct(30);
    top->eval();
    const bool t0 = top->s0_axis_tvalid && top->s0_axis_tready;
    const bool t1 = top->s1_axis_tvalid && top->s1_axis_tready;
    CHECK(!(top->s0_axis_tready && top->s1_axis_tready), "both inputs ready at once\n");
    const bool out = top->m_axis_tvalid && top->m_axis_tready;
    const Beat ob{top->m_axis_tdata, uint8_t(top->m_axis_tkeep), bool(top->m_axis_tlast), bool(top->m_axis_tuser)};
    if (prev_stall) CHECK(top->m_axis_tvalid && ob == prev, "stalled output beat changed\n");
    prev_stall = top->m_axis_tvalid && !top->m_axis_tready;
    prev = ob;
    // Start of a frame while both inputs wait between frames: count alternation.
    if ((t0 || t1) && src[0].pos == 0 && src[1].pos == 0 && src[0].valid && src[1].valid) {
      ++both_waiting_frames;
      if ((t1 ? 1 : 0) != last_frame_from) ++both_waiting_switches;
    }
    dut.tick();
    if (out) {
      if (owner < 0) {
        // The first beat of a frame: which input's next beat is it?
        for (int i = 0; i < 2; ++i)
          if (!expected[i].empty() && expected[i].front() == ob) owner = i;
        CHECK(owner >= 0, "output beat at cycle %ld matches neither input\n", c);
      }
      if (owner >= 0) {
        CHECK(!expected[owner].empty() && expected[owner].front() == ob,
              "input %d: frame interleaved, reordered or changed at cycle %ld\n", owner, c);
        if (!expected[owner].empty()) expected[owner].pop_front();
        if (ob.last) {
          ++frames[owner];
          owner = -1;
        }
      }
    }
    for (int i = 0; i < 2; ++i) {
      if ((i == 0 ? t0 : t1)) {
        expected[i].push_back(src[i].b);
        if (src[i].pos == 0) last_frame_from = i;
        ++src[i].pos;
        src[i].valid = false;
        next(src[i], i);
      }
    }
  }
  CHECK(expected[0].empty() && expected[1].empty(), "beats never came out: %zu + %zu\n", expected[0].size(),
        expected[1].size());
  CHECK(frames[0] > 1000 && frames[1] > 1000, "an input starved: %ld / %ld frames\n", frames[0], frames[1]);
  CHECK(both_waiting_switches * 10 >= both_waiting_frames * 9,
        "grant did not alternate with both inputs waiting: %ld of %ld\n", both_waiting_switches, both_waiting_frames);
  top->final();
  std::printf("arb2_tb: %ld + %ld frames, %ld of %ld contested frame starts alternated\n", frames[0], frames[1],
              both_waiting_switches, both_waiting_frames);
  return board::verdict("arb2_tb");
}
