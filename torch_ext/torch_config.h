// panama_torch's configuration (docs/torch.md "Configuration"): every setting from an environment
// variable PANAMA_* or from one file of PANAMA_*=VALUE lines (PANAMA_CONFIG), validated in full
// before the backend opens anything. The job's rank and world size come from the framework.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "allreduce.h"
#include "format.h"

namespace panama::torchx {

// Why a call failed; the first words of every error message (docs/torch.md "Failures").
enum class Cause { config, unreachable, timeout, loss, design, too_large, failed_before, transport, peer };
std::string to_string(Cause c);

// What every failure of the backend throws: one line, "panama: <cause>: <detail>".
struct PanamaError : std::runtime_error {
  PanamaError(Cause c, const std::string& detail)
      : std::runtime_error("panama: " + to_string(c) + ": " + detail), cause(c) {}
  Cause cause;
};

struct Config {
  // The accelerator's design (PANAMA_DESIGN: a panama-gen output directory).
  std::string design;
  Format format = Format::fp32;  // the design's (config.json "format")
  bool exact_sum = false;        // config.json "sum": exact
  int design_ports = 0, design_max_elems = 0;
  // The link (PANAMA_IFACE, PANAMA_BACKEND, addresses).
  std::string iface, backend = "udp", agg_mac, eal;
  std::string agg_ip, group_ip;
  int port = 9056;
  int mtu = 0;  // 0: the interface's
  // The job (PANAMA_JOB, PANAMA_TREES, PANAMA_FIRST_VID, ...): what the controller programmed.
  int job = -1, trees = 1;
  std::vector<uint32_t> first_vids{0};  // one for every tree, or one per tree
  int max_elems = 0;                    // 0: the design's MAX_ELEMS
  int timeout_ms = 2000, status_wait_ms = 200, repair_rounds = 16;
  // Which of the two waits the environment set (PANAMA_TIMEOUT_MS, PANAMA_STATUS_WAIT_MS): a
  // variable set by hand wins over the process group's timeout (with_group_timeout).
  bool timeout_set = false, status_wait_set = false;
  // The process group's timeout (c10d's `timeout`), 0 when none was given: it bounds every call.
  int group_timeout_ms = 0;
  double window_init = 0, window_max = 0;  // 0: derived from the trees, as `panama-host worker`
  // The backend's own memory: the largest tensor one all_reduce takes (PANAMA_BUFFER_MB), and the
  // elements per call of the host library (PANAMA_CHUNK_KB).
  size_t buffer_bytes = size_t{256} << 20;
  size_t chunk_bytes = size_t{4} << 20;
  // PANAMA_FALLBACK: an accelerator failure moves the job to Gloo (true) or ends it (false);
  // PANAMA_REJOIN_EVERY: requests on Gloo between re-join probes (0: never); PANAMA_REJOIN_PROBE_MS:
  // how long one re-join probe waits for its results.
  bool fallback = true;
  int rejoin_every = 50, rejoin_probe_ms = 2000;
  bool probe = true;  // PANAMA_PROBE: the start-up probe (a design or path mismatch found at init)
  // Unknown PANAMA_* variables seen in the environment (logged, not fatal: other tools' knobs).
  std::vector<std::string> unknown_env;

  // Reads the environment, and PANAMA_CONFIG's file when set (a variable set in the environment
  // wins over the file). Throws PanamaError(config) with one line naming the variable.
  static Config from_env();
  // The same from an explicit map (tests): name -> value, plus the file it may name.
  static Config from_map(const std::map<std::string, std::string>& env);

  // c10d's timeout for this job (init_process_group(timeout=...)): a peer late by less than ms is
  // waited for, and no call goes longer than ms without progress before it fails: the call
  // timeout becomes ms (unless PANAMA_TIMEOUT_MS is set), the status wait at most ms / 40 (the
  // host library keeps the call timeout above 40 status waits with repair on; unless
  // PANAMA_STATUS_WAIT_MS is set), and a repair that stops converging fails after ms too.
  void with_group_timeout(int ms);

  // The host library's parameters for this rank and world size; throws PanamaError(config).
  host::JobParams job_params(int rank, int world) const;
  // Elements of the design's format per host-library call (a multiple of the vector's data).
  size_t chunk_elems(const host::JobParams& p) const;
};

// The names this backend reads, each with its one-line meaning (docs, errors, `panama_torch.variables()`).
const std::vector<std::pair<std::string, std::string>>& variables();

}  // namespace panama::torchx
