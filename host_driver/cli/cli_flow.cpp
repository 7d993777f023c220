// `panama-host flow` (docs/results/host.md "Fairness"): the DCTCP-style UDP flow that competes with the
// aggregation when the kernel has no tcp_dctcp (flow.h).
//   panama-host flow --recv [--bind IP] [--port P] --seconds S
//   panama-host flow --to IP [--port P] --seconds S [--progress CSV] [--window-init N] [--window-max N] [--no-cc]
// Prints one JSON line of totals on stdout when it ends (time up, SIGINT or SIGTERM).
#include <csignal>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "cli.h"
#include "flow.h"

namespace panama::host::cli {
namespace {

std::atomic<bool> g_flow_stop{false};
void on_flow_signal(int) { g_flow_stop.store(true); }

struct FlowOpts {
  FlowParams p;
  bool recv = false, no_cc = false;
  double gain = 1.0 / 16;
};

void add_flow_options(CLI::App* c, FlowOpts& o) {
  c->add_flag("--recv", o.recv, "be the receiver (acknowledges every datagram, echoes CE)");
  c->add_option("--to", o.p.peer_ip, "sender: the receiver's IPv4 address");
  c->add_option("--bind", o.p.bind_ip, "local IPv4 address");
  c->add_option("--port", o.p.port, "the receiver's UDP port")->default_val(5301);
  c->add_option("--seconds", o.p.seconds, "how long to send (sender) or listen (receiver)")->default_val(10);
  c->add_option("--payload", o.p.payload, "datagram payload bytes")->default_val(1400);
  c->add_option("--window-init", o.p.window.init, "initial window, datagrams")->default_val(4);
  c->add_option("--window-max", o.p.window.max, "largest window, datagrams")->default_val(256);
  c->add_option("--gain", o.gain, "DCTCP gain g")->default_val(1.0 / 16);
  c->add_flag("--no-cc", o.no_cc, "fixed window of --window-init datagrams");
  c->add_option("--rto-ms", o.p.rto_ms, "a datagram unacknowledged this long is lost")->default_val(300);
  c->add_option("--progress", o.p.progress, "sender: CSV time_s,interval_s,goodput_mbps,cwnd,alpha,lost");
  c->add_option("--progress-interval", o.p.progress_interval, "seconds")->default_val(0.5);
}

int run_flow(const FlowOpts& o) {
  FlowParams p = o.p;
  p.window.gain = o.gain;
  p.window.cc = !o.no_cc;
  if (!o.recv && p.peer_ip.empty()) throw std::runtime_error("flow: the sender needs --to IP (or give --recv)");
  if (p.window.init < 1 || p.window.max < p.window.init)
    throw std::runtime_error("flow: need 1 <= --window-init <= --window-max");
  struct sigaction sa {};
  sa.sa_handler = on_flow_signal;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaction(sig, &sa, nullptr);
  nlohmann::ordered_json j;
  if (o.recv) {
    const FlowStats s = run_flow_receiver(p, g_flow_stop);
    j = {{"role", "receiver"}, {"received", s.acked},  {"ce", s.ce},
         {"bytes", s.bytes},   {"seconds", s.seconds}, {"mbps", s.goodput_mbps}};
  } else {
    const FlowStats s = run_flow_sender(p, g_flow_stop);
    j = {{"role", "sender"},
         {"sent", s.sent},
         {"acked", s.acked},
         {"lost", s.lost},
         {"ce", s.ce},
         {"loss_reactions", s.losses_reacted},
         {"seconds", s.seconds},
         {"goodput_mbps", s.goodput_mbps},
         {"final_cwnd", s.final_cwnd},
         {"final_alpha", s.final_alpha},
         {"max_cwnd", s.max_cwnd}};
  }
  std::printf("%s\n", j.dump().c_str());
  return 0;
}

}  // namespace

Runner flow_subcommand(CLI::App& cmd) { return with_options<FlowOpts>(cmd, add_flow_options, run_flow); }

}  // namespace panama::host::cli
