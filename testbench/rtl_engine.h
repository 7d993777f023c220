// The RTL engine of panama-sim: verilates a generator output with testbench/rtl_harness.cpp on
// first use (cached by content), runs it, and returns the same Result as the model engine.
#pragma once

#include <string>

#include "config.h"
#include "model.h"

namespace panama::rtl {

struct EngineError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

model::Result run(const std::string& rtl_dir, const Config& cfg, const std::string& ctx_path,
                  const std::string& in_dir, const model::Options& opt);

// The harness executable for a design, verilated on first use (also run with --live by the
// switch stand-in). Throws EngineError.
std::string harness_executable(const std::string& rtl_dir, const Config& cfg);

}  // namespace panama::rtl
