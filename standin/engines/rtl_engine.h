// The RTL engine of panama-sim: verilates a generator output with standin/engines/rtl_harness.cpp on
// first use (cached by content), runs it, and returns the same Result as the model engine.
#pragma once

#include <string>

#include "config.h"
#include "model.h"

namespace panama::rtl {

struct EngineError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// What a run of the RTL engine adds to the model's options. trace: write an FST of the whole run
// there (a harness verilated with --trace-fst, its own cache entry). coverage: write the run's
// coverage points there (verilated with --coverage, its own cache entry). stats: print the
// measured receive and m_agg rates and the drops (one "rate:" line on stdout).
struct Extras {
  std::string trace, coverage;
  bool stats = false;
};

model::Result run(const std::string& rtl_dir, const Config& cfg, const std::string& ctx_path, const std::string& in_dir,
                  const model::Options& opt, const Extras& x = {});

// The harness executable for a design, verilated on first use (also run with --live by the
// switch stand-in). variant: "" (fast), "trace", "coverage", or "shell" (standin/engines/shell_harness.cpp
// around the board shell of a --board output, for the stand-in's --shell). Throws EngineError.
std::string harness_executable(const std::string& rtl_dir, const Config& cfg, const std::string& variant = "");

}  // namespace panama::rtl
