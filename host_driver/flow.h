// A DCTCP-style competing flow for the fairness experiment (docs/results/host.md "Fairness"): this
// kernel offers reno, bbr and cubic but no tcp_dctcp, so `panama-host flow` runs the same
// DCTCP window (class Dctcp, the aggregation's own) over UDP: the sender keeps at most
// floor(cwnd) ECT(0) datagrams unacknowledged, the receiver acknowledges each one and echoes
// whether it arrived CE-marked, and every ACK feeds Dctcp::on_result(ce). A datagram is lost
// when three later ones have been acknowledged or after the retransmission timeout; a loss
// halves the window once per round trip (Dctcp::on_loss). Nothing is retransmitted: the flow
// measures throughput, not reliable delivery.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "allreduce.h"

namespace panama::host {

struct FlowParams {
  std::string peer_ip;   // sender: the receiver's address
  std::string bind_ip;   // both: local address (empty: any)
  uint16_t port = 5301;  // receiver's UDP port
  int payload = 1400;    // datagram payload bytes (>= 32)
  double seconds = 10;   // sender: how long to send; receiver: how long to listen
  WindowParams window{4, 1, 256, 1.0 / 16, true};
  int rto_ms = 300;      // a datagram unacknowledged for this long is lost
  std::string progress;  // sender: CSV time_s,interval_s,goodput_mbps,cwnd,alpha,lost
  double progress_interval = 0.5;
  int mark_every = 0;  // receiver, tests only: echo CE on every n-th datagram (0: never)
};

struct FlowStats {
  uint64_t sent = 0, acked = 0, lost = 0, ce = 0, bytes = 0, losses_reacted = 0;
  double seconds = 0, goodput_mbps = 0, final_cwnd = 0, final_alpha = 0, max_cwnd = 0;
};

// Both return when their time is up or `stop` becomes true; throw std::runtime_error with one
// line on a socket error.
FlowStats run_flow_sender(const FlowParams& p, const std::atomic<bool>& stop);
FlowStats run_flow_receiver(const FlowParams& p, const std::atomic<bool>& stop);

}  // namespace panama::host
