// `panama-host worker --allocator SOCK` (docs/allocator.md "Fallback"): the job on the contexts
// the allocator leases it, and on the hosts (a ring over the fallback link) while it has none.
#include <cstdio>
#include <fstream>
#include <memory>

#include <nlohmann/json.hpp>

#include "cli.h"
#include "cli_worker.h"
#include "host_ring.h"
#include "leased_job.h"
#include "udp_transport.h"

namespace panama::host::cli {

namespace {

using json = nlohmann::ordered_json;

std::string mac_string(const wire::Mac& m) {
  char b[18];
  std::snprintf(b, sizeof b, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
  return b;
}

// The fallback link: the worker's backend where a second one can be opened beside the
// accelerator's (udp, tins), else udp (dpdk: one EAL per process; xdp: one program per interface).
std::string fallback_backend(const WorkerOpts& o) {
  if (!o.fallback_backend.empty()) return o.fallback_backend;
  return o.backend == "udp" || o.backend == "tins" ? o.backend : "udp";
}

void check_leased(const WorkerOpts& o) {
  if (o.threads != 1) throw std::runtime_error("--allocator: --threads must be 1");
  if (!o.progress.empty()) throw std::runtime_error("--allocator: --progress is not supported");
  if (o.trees > 1 && o.backend != "udp")
    throw std::runtime_error(
        "--allocator with --trees > 1 needs --backend udp (the lease gives each tree a group "
        "of its own, which only udp joins)");
  if (o.rank == 0 && o.alloc_ports.empty())
    throw std::runtime_error("--allocator: rank 0 needs --alloc-ports (acquire's \"ports\")");
  if (!o.group_ip.empty()) throw std::runtime_error("--group-ip: with --allocator the lease gives the groups");
  if (!find_backend(fallback_backend(o)))
    throw std::runtime_error("--fallback-backend must be " + backend_names() + " (not '" + o.fallback_backend + "')");
}

// FNV-1a, 64 bits, of one iteration's result: the scenario (scripts/pypanama/scenario.py) checks every
// iteration against the reference of the path it took.
std::string digest(const std::vector<uint8_t>& b) {
  uint64_t h = 14695981039346656037ull;
  for (const uint8_t x : b) h = (h ^ x) * 1099511628211ull;
  char s[17];
  std::snprintf(s, sizeof s, "%016llx", static_cast<unsigned long long>(h));
  return s;
}

json leased_stats(const WorkerOpts& o, const LeasedJob& job, size_t elements, const std::string& modes,
                  const std::vector<std::string>& digests) {
  const LeasedStats& s = job.stats();
  const RingStats& r = job.ring_stats();
  json j;
  j["rank"] = o.rank;
  j["backend"] = o.backend;
  j["fallback_backend"] = fallback_backend(o);
  j["elements"] = elements;
  j["iterations"] = o.iterations;
  j["accel_iterations"] = s.accel_iterations;
  j["ring_iterations"] = s.ring_iterations;
  j["redone"] = s.redone;
  j["switches"] = s.switches;
  j["grants"] = s.grants;
  j["accel_seconds"] = s.accel_seconds;
  j["ring_seconds"] = s.ring_seconds;
  j["boundary_seconds"] = s.boundary_seconds;
  j["modes"] = modes;  // per iteration: 'A' on the accelerator, 'R' on the ring
  j["digests"] = digests;
  j["ring"] = {{"calls", r.calls},     {"data_sent", r.data_sent}, {"resent", r.resent}, {"status_sent", r.status_sent},
               {"ignored", r.ignored}, {"stashed", r.stashed}};
  return j;
}

}  // namespace

void add_allocator_options(CLI::App* wk, WorkerOpts& w) {
  wk->add_option("--allocator", w.allocator,
                 "the allocator's Unix socket: use the contexts it leases, all-reduce on the hosts without "
                 "(every rank gives it; rank 0 alone talks to it)");
  std::vector<CLI::Option*> only;  // meaningful with --allocator alone
  only.push_back(wk->add_option("--alloc-ports", w.alloc_ports,
                                "rank 0: acquire's \"ports\" as JSON, {\"ACC\": [port of rank 0, ...], ...}"));
  only.push_back(
      wk->add_option("--alloc-retry", w.alloc_retry, "iterations on the hosts between two acquisition attempts")
          ->default_val(1)
          ->check(CLI::Range(1, 1000000)));
  only.push_back(wk->add_option("--alloc-timeout-ms", w.alloc_timeout_ms,
                                "rank 0: each allocator request's bound (an acquire programs the accelerator first)")
                     ->default_val(5000)
                     ->check(CLI::Range(100, 3600000)));
  only.push_back(
      wk->add_option("--fallback-port", w.fallback_port, "UDP port of the fallback ring (default --port + 1)")
          ->check(CLI::Range(1, 65535)));
  only.push_back(wk->add_option("--fallback-backend", w.fallback_backend,
                                "backend of the fallback ring (default: --backend for udp and tins, udp otherwise)"));
  only.push_back(
      wk->add_option(
            "--fallback-timeout-ms", w.fallback_timeout_ms,
            "the ring fails after this long without a frame from a neighbour (longer than an accelerator call)")
          ->default_val(60000)
          ->check(CLI::Range(100, 86400000)));
  only.push_back(wk->add_option("--fallback-rto-ms", w.fallback_rto_ms, "the ring's status and probe interval")
                     ->default_val(20)
                     ->check(CLI::Range(1, 60000)));
  wk->callback([&w, only] {
    if (w.allocator.empty() && w.agg_ip.empty()) throw CLI::RequiredError("--agg-ip");
    if (w.allocator.empty() && w.group_ip.empty()) throw CLI::RequiredError("--group-ip");
    if (w.allocator.empty())
      for (const CLI::Option* o : only)
        if (o->count()) throw CLI::ValidationError(o->get_name(), "needs --allocator");
  });
}

int run_leased_worker(const WorkerOpts& o) {
  catch_stop_signals(StopMode::immediate, "worker " + std::to_string(o.rank));
  check_leased(o);
  worker_check(o);
  JobParams p = worker_job_params(o);
  const size_t es = static_cast<size_t>(p.elem_bytes);
  const std::vector<uint8_t> grad = worker_input(o);
  if (grad.size() % es != 0)
    throw std::runtime_error(o.in + ": size " + std::to_string(grad.size()) + " is not a multiple of " +
                             std::to_string(es) + " bytes");
  LeasedJobParams lp;
  if (o.rank == 0) {
    try {
      lp.ports = nlohmann::json::parse(o.alloc_ports);
    } catch (const std::exception& e) {
      throw std::runtime_error(std::string("--alloc-ports is not JSON: ") + e.what());
    }
  }
  // The fallback link: the job's fallback group as both destination and group, on its own port.
  const uint16_t job = static_cast<uint16_t>(o.job);
  LinkOptions fl = worker_link(o);
  fl.port = static_cast<uint16_t>(o.fallback_port ? o.fallback_port : o.port + 1);
  if (fl.port == o.port) throw std::runtime_error("--fallback-port must differ from --port");
  fl.agg_ip = fl.group_ip = wire::ipv4_to_string(fallback_group(job));
  fl.agg_mac = fallback_backend(o) == "udp" ? "" : mac_string(fallback_group_mac(job));
  fl.eal.clear();
  JobParams fp = p;
  std::unique_ptr<Transport> flink = find_backend(fallback_backend(o))(fl, fp);
  lp.job = p;
  lp.ring.job = job;
  lp.ring.count = p.count;
  lp.ring.port = fl.port;
  lp.ring.eth_dst = fallback_group_mac(job);
  lp.ring.eth_src = fp.eth_src;
  lp.ring.ip_src = fp.ip_src;
  lp.ring.ip_dst = fallback_group(job);
  lp.ring.timeout_ms = o.fallback_timeout_ms;
  lp.ring.rto_ms = o.fallback_rto_ms;
  lp.retry_every = o.alloc_retry;
  // The accelerator's link for a lease: the lease's addresses (--agg-ip where the inventory has none).
  AccelOpener open = [&o](const Lease& ls, JobParams& jp) {
    LinkOptions l = worker_link(o);
    if (ls.trees[0].agg_ip) l.agg_ip = wire::ipv4_to_string(ls.trees[0].agg_ip);
    if (l.agg_ip.empty()) throw std::runtime_error("--allocator: the lease names no aggregator address; give --agg-ip");
    l.group_ip = wire::ipv4_to_string(ls.trees[0].group_ip);
    std::unique_ptr<Transport> t = find_backend(o.backend)(l, jp);
    if (auto* u = dynamic_cast<UdpTransport*>(t.get()))
      for (const auto& tr : ls.trees) u->join(tr.group_ip);
    return t;
  };
  LeasedJob lj(*flink, lp, open, o.rank == 0 ? allocator_socket(o.allocator, o.alloc_timeout_ms) : nullptr);
  catch_stop_signals(StopMode::graceful, "worker " + std::to_string(o.rank));
  lj.stop_on(&stop_requested());
  const size_t n = grad.size() / es;
  std::vector<uint8_t> buf;
  std::string modes;
  std::vector<std::string> digests;
  const auto t0 = Clock::now();
  try {
    for (int it = 0; it < o.iterations; ++it) {
      if (stop_requested().load()) throw AllReduceStopped("stopped before iteration " + std::to_string(it + 1));
      buf = grad;
      modes += lj.iteration(buf.data(), n) == LeasedJob::Mode::accelerator ? 'A' : 'R';
      digests.push_back(digest(buf));
      if (o.out_each) write_file_atomic(o.out + "." + std::to_string(it + 1), buf.data(), buf.size());
    }
  } catch (const std::exception& e) {
    if (!stop_requested().load()) throw;
    std::fprintf(stderr, "panama-host worker %d: stopped by %s after %.1f s (%s); no output written\n", o.rank,
                 stop_signal_name().c_str(), std::chrono::duration<double>(Clock::now() - t0).count(), e.what());
    return 128 + stop_signal();
  }
  lj.finish(2000);
  write_file_atomic(o.out, buf.data(), buf.size());
  const json j = leased_stats(o, lj, n, modes, digests);
  if (!o.stats.empty()) {
    std::ofstream st(o.stats);
    if (!st) throw std::runtime_error("cannot write " + o.stats);
    st << j.dump(2) << "\n";
  }
  json line = j;
  line.erase("digests");  // one per iteration: in --stats only
  std::fprintf(stderr, "panama-host worker %d: %s\n", o.rank, line.dump().c_str());
  return 0;
}

}  // namespace panama::host::cli
