// Public interface of the SystemC golden model (docs/model.md).
//
// SystemC allows one elaboration and one simulation per process, so run() may be called once
// per process; run_isolated() forks a child for each call, which is what tests use.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "config.h"
#include "ctx.h"
#include "regmap.h"
#include "wire.h"

namespace panama::model {

struct InFrame {
  InFrame(wire::Bytes d = {}, bool user = false, wire::Bytes k = {})  // NOLINT: {bytes, tuser} converts
      : data(std::move(d)), tuser(user), keep(std::move(k)) {}
  wire::Bytes data;
  bool tuser;  // tuser on the last beat: a bad frame (FCS error)
  // Empty: the frame's bytes fill its beats and tkeep keeps the contract (accelerator.md).
  // Otherwise tkeep of every byte lane of every beat, 0 or 1 (a whole number of beats), and
  // `data` is tdata of every lane: the beats as they are on the bus, for frames that may break
  // the contract (docs/rtl.md, "tkeep outside the contract").
  wire::Bytes keep;
};

struct OutFrame {
  wire::Bytes data;
  uint64_t cycle = 0;  // cycle of the first beat on the output stream
  bool tuser = false;
  int context = -1;  // m_agg frames: the context that built it
};

struct Options {
  uint64_t seed = 1;
  int idle_pct = 0;          // random idle receive cycles, 0..99
  int backpressure_pct = 0;  // random tready-low cycles on mPP and m_agg, 0..99
  uint64_t max_cycles = 0;   // 0: no limit (the run always ends: see docs/model.md)
};

struct ContextCounters {
  int jid = 0, tid = 0;
  uint64_t vectors_completed = 0, vectors_dropped = 0;
  uint32_t expected_vid = 0;
};

struct Result {
  std::vector<std::vector<OutFrame>> ports;                           // frames on mPP, per port, in order
  std::vector<OutFrame> agg;                                          // frames on m_agg, in order
  std::vector<std::array<uint64_t, kNumPortCounters>> port_counters;  // read over AXI4-Lite
  std::vector<ContextCounters> contexts;                              // one per CTX.json entry
  uint64_t agg_tx_frames = 0;
  uint64_t cycles = 0;        // cycles simulated until idle
  uint64_t still_queued = 0;  // contributions left in queues at the end
  std::vector<uint64_t> still_queued_per_port;
  std::vector<uint64_t> consumed_per_port;  // contributions summed into built frames
};

// Runs the model once in this process. Throws std::runtime_error on a configuration the model
// cannot apply (the register file refusing an enable: CTX.json should have caught it).
Result run(const Config& cfg, const wire::CtxFile& ctx, const std::vector<std::vector<InFrame>>& in,
           const Options& opt);
// The same in a forked child process (any number of times per process). Throws
// std::runtime_error with the child's message when the child fails.
Result run_isolated(const Config& cfg, const wire::CtxFile& ctx, const std::vector<std::vector<InFrame>>& in,
                    const Options& opt);

// counters.json of tools.md, keys in its fixed order.
nlohmann::ordered_json counters_json(const Result& r);
// Lossless serialisation (used between the forked child and its parent).
nlohmann::json result_to_json(const Result& r);
Result result_from_json(const nlohmann::json& j);

}  // namespace panama::model
