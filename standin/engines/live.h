// A steppable ("live") SystemC model of the accelerator, for long-running users such as the
// switch stand-in of `panama-host switch` (docs/host.md). Frames are injected on a port at any
// time, the simulation is advanced with sc_start, and what left mPP / m_agg since the last call
// is collected. The blocks are those of blocks.h, wired as in model.cpp; only the receive side
// differs (frames arrive while the simulation runs instead of from a fixed list), and its
// admission rules are rule 2's, in the same order as RxPort's.
//
// SystemC allows one elaboration per process: create at most one LiveModel per process, and
// use it from one thread only (the thread that created it).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include <nlohmann/json.hpp>

#include "config.h"
#include "ctx.h"
#include "model.h"
#include "wire.h"

namespace panama::model {

struct LiveOut {
  int port = -1;     // mPP port, or -1 for m_agg
  int context = -1;  // m_agg: the context that built it
  wire::Bytes data;
  bool tuser = false;
};

class LiveModel {
 public:
  // Elaborates the model and programs ctx through the register file. Throws std::runtime_error
  // on a second instance in this process or when the register file refuses a context.
  LiveModel(const Config& cfg, const wire::CtxFile& ctx);
  ~LiveModel();
  LiveModel(const LiveModel&) = delete;
  LiveModel& operator=(const LiveModel&) = delete;

  int ports() const;
  const Config& config() const;
  // Queues a frame for reception on port p (it arrives beat by beat as the clock advances).
  void inject(int port, wire::Bytes frame, bool tuser = false);
  // Advances the clock until everything injected has been received and every output stream is
  // empty and the scheduler has nothing left to decide (a context waiting only for its timeout
  // counts as settled), or max_cycles have passed. Returns the cycles advanced.
  uint64_t run_until_idle(uint64_t max_cycles = 10'000'000);
  // Advances exactly k cycles (lets context timeouts expire while no frame arrives).
  void advance(uint64_t k);
  // Frames that left mPP / m_agg since the last call, in output order per stream (mPP ports in
  // port order first, then m_agg).
  std::vector<LiveOut> take_outputs();
  uint64_t cycle() const;
  // Counters read through the register file (the counters.json layout of tools.md).
  nlohmann::ordered_json counters();
  // The register file's AXI4-Lite port, between cycles (live reprogramming by a controller).
  void reg_write(uint32_t addr, uint32_t data);
  uint32_t reg_read(uint32_t addr);

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace panama::model
