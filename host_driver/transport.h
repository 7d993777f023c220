// The host driver's link to the accelerator (docs/host.md). A backend sends and receives whole
// aggregation frames as wire-format.md lays them out (Ethernet/IPv4/UDP + aggregation header +
// payload), so the raw-frame backends (tins, dpdk: raw_common.h) pass them through unchanged and the
// kernel-socket backend (udp) strips and re-creates the L2-L4 headers.
#pragma once

#include <chrono>
#include <stdexcept>

#include "wire.h"

namespace panama::host {

using Clock = std::chrono::steady_clock;

struct TransportError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Transport {
 public:
  virtual ~Transport() = default;
  // Sends one aggregation frame towards the accelerator. Throws TransportError on failure.
  virtual void send(const wire::Bytes& frame) = 0;
  // Waits for the next received frame until `deadline`; false when the deadline passed first.
  // The frame's ipv4.tos carries the ECN bits as received. Throws TransportError on failure.
  virtual bool recv(wire::Bytes& frame, Clock::time_point deadline) = 0;
  // A backend may hold sent frames to hand them to the kernel in batches; it sends them at the
  // latest when recv() is called, when this is called (the all-reduce does at the end of every
  // call) and when it is destroyed. Wrappers forward it.
  virtual void flush() {}
};

}  // namespace panama::host
