// Helpers shared by the board-shell testbenches (arb2, cdc, port_cdc, mgmt, siphash): the
// AXI4-Stream beat they compare, a failure counter with a CHECK macro that reports only the first
// few failures, clock pulses, and the PASS/FAIL verdict line ctest matches.
#pragma once

#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <memory>

#include "verilated.h"

namespace board {

// One AXI4-Stream beat of the 64-bit board buses.
struct Beat {
  uint64_t data;
  uint8_t keep;
  bool last, user;
  bool operator==(const Beat& o) const { return data == o.data && keep == o.keep && last == o.last && user == o.user; }
};

// Failed checks so far; only the first `report_limit` are printed (later ones would be echoes).
inline int failures = 0;
inline int report_limit = 10;

__attribute__((format(printf, 1, 2))) inline void fail(const char* fmt, ...) {
  if (failures < report_limit) {
    va_list ap;
    va_start(ap, fmt);
    std::vfprintf(stderr, fmt, ap);
    va_end(ap);
  }
  ++failures;
}

// The message arguments are evaluated only when the check fails.
#define CHECK(c, ...)                   \
  do {                                  \
    if (!(c)) board::fail(__VA_ARGS__); \
  } while (0)

// One full cycle of `clk`: rising edge, then falling edge, each evaluated.
template <typename Top, typename Clk>
void pulse(Top& top, Clk& clk) {
  clk = 1;
  top.eval();
  clk = 0;
  top.eval();
}

// A design with one clock `clk` and an active-high `rst`.
template <typename Top>
struct Dut {
  std::unique_ptr<VerilatedContext> ctx = std::make_unique<VerilatedContext>();
  std::unique_ptr<Top> top = std::make_unique<Top>(ctx.get());
  void tick() { pulse(*top, top->clk); }
  // Two cycles in reset; `tick` is the caller's clock step (it may do more than tick()).
  template <typename Tick>
  void reset(Tick&& tick) {
    top->rst = 1;
    tick();
    tick();
    top->rst = 0;
  }
  void reset() {
    reset([this] { tick(); });
  }
};

// The last line of a run, the one ctest's PASS_REGULAR_EXPRESSION looks for; returns the exit code.
inline int verdict(const char* name, const char* pass_detail = "") {
  if (failures) {
    std::printf("%s: FAIL (%d check(s) failed)\n", name, failures);
    return 1;
  }
  std::printf("%s: PASS%s\n", name, pass_detail);
  return 0;
}

}  // namespace board
