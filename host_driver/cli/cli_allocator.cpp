// panama-host allocator (docs/allocator.md): the cluster's one owner of accelerator contexts.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "allocator.h"
#include "cli.h"

namespace panama::host::cli {

namespace {

struct AllocatorOpts {
  std::string socket, state, inventory, token_file;
  int tcp = -1;
  long lease_ms = 10000;
  int idle_ms = 5000;
};

void add_options(CLI::App* c, AllocatorOpts& o) {
  c->add_option("--socket", o.socket, "Unix socket to serve JSON-line requests on")->required();
  c->add_option("--state", o.state, "SQLite state file (leases, contexts); reloaded on restart")->required();
  c->add_option("--inventory", o.inventory, "inventory JSON: the accelerators")->required();
  c->add_option("--tcp", o.tcp, "also serve on 127.0.0.1:PORT (requests carry \"token\")");
  c->add_option("--token-file", o.token_file, "file holding the TCP token");
  c->add_option("--lease-ms", o.lease_ms, "a lease ends this long after its last heartbeat")
      ->check(CLI::Range(100L, 86400000L));
  c->add_option("--idle-ms", o.idle_ms, "close a connection with no whole request for this long")
      ->check(CLI::Range(10, 600000));
}

int run(const AllocatorOpts& o) {
  ServerOpts so;
  so.socket = o.socket;
  so.tcp_port = o.tcp;
  so.idle_ms = o.idle_ms;
  if (o.tcp >= 0) {
    std::ifstream in(o.token_file);
    if (o.token_file.empty() || !in) throw std::runtime_error("--tcp needs a readable --token-file");
    std::getline(in, so.token);
    if (so.token.empty()) throw std::runtime_error("--token-file: empty token");
  }
  catch_stop_signals(StopMode::graceful, "allocator");
  Allocator a(load_inventory(o.inventory), o.state, default_reg_io(), o.lease_ms, [] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
  });
  for (const std::string& f : a.foreign())
    std::fprintf(stderr, "panama-host allocator: context %s is enabled but no lease owns it: left alone\n", f.c_str());
  AllocatorServer s(a, so);
  std::fprintf(stderr, "panama-host allocator: serving on %s\n", o.socket.c_str());
  while (!stop_requested()) s.poll_once(100);
  return 0;
}

}  // namespace

Runner allocator_subcommand(CLI::App& cmd) { return with_options<AllocatorOpts>(cmd, add_options, run); }

}  // namespace panama::host::cli
