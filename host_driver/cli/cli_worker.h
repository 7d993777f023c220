// `panama-host worker`'s options, shared by cli_worker.cpp (the job on a context programmed by
// hand) and cli_worker_alloc.cpp (--allocator: leases, and the fallback ring without one).
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "allreduce.h"
#include "backends.h"

namespace panama::host::cli {

struct WorkerOpts {
  std::string iface, in, out, backend = "udp", agg_ip, group_ip, format = "fp32", stats, agg_mac, eal, progress,
                              job_desc;
  const CLI::Option* format_option = nullptr;  // --format: given or from the job description
  double progress_interval = 0.1;
  std::string progress_bar = "auto";
  double progress_bar_interval = 10;
  int job = -1, rank = -1, world = 0, trees = 1, mtu = 0, max_elems = 0, timeout_ms = 2000, iterations = 1;
  int threads = 1;
  int port = wire::kDefaultAggPort;
  std::string repair_rounds = "auto";
  int repair_slots = 8, status_wait_ms = 200, status_copies = 3, repair_stall_ms = 0;
  std::string first_vid = "0";
  WindowParams win{0, 1, 0, 1.0 / 16, true};  // init/max 0: derived from --trees
  bool no_cc = false;
  bool adaptive_wait = false;
  bool out_each = false;  // --out-each: every iteration's sum to OUT.K as well
  bool no_resend = false;
  // --allocator (docs/allocator.md "Fallback").
  std::string allocator, alloc_ports, fallback_backend;
  int fallback_port = 0, fallback_timeout_ms = 60000, fallback_rto_ms = 20, alloc_retry = 1, alloc_timeout_ms = 5000;
};

// cli_worker.cpp: the checks and parameters every worker run shares.
void worker_check(const WorkerOpts& o);
JobParams worker_job_params(const WorkerOpts& o);
LinkOptions worker_link(const WorkerOpts& o);
std::vector<uint8_t> worker_input(const WorkerOpts& o);  // --in, whole

// cli_worker_alloc.cpp: --allocator and its options; --agg-ip / --group-ip required without it.
void add_allocator_options(CLI::App* wk, WorkerOpts& w);
int run_leased_worker(const WorkerOpts& o);

}  // namespace panama::host::cli
