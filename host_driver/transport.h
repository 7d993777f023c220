// The host driver's link to the accelerator (docs/host.md). A backend sends and receives whole
// aggregation frames as wire-format.md lays them out (Ethernet/IPv4/UDP + aggregation header +
// payload), so the raw-frame backends (tins, dpdk: raw_common.h) pass them through unchanged and the
// kernel-socket backend (udp) strips and re-creates the L2-L4 headers.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

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

  // How this backend moves frames, for the worker's --stats ("datapath"): the mode taken at start
  // and any fallback (docs/host.md "Backends"); empty when there is nothing to say.
  virtual std::string datapath() const { return ""; }
  // The link's own counters for --stats ("link"), e.g. AF_XDP's XDP_STATISTICS; empty by default.
  virtual std::vector<std::pair<std::string, uint64_t>> link_counters() const { return {}; }

  // In-place sending (the all-reduce's path, docs/host.md "Backends"): tx_begin(len) hands out a
  // buffer of at least len bytes that the next frame is built in, tx_end(len) sends it. A backend
  // that owns its frame buffers (xdp: a UMEM frame; udp: its batch) returns one of them, so the
  // gradient is copied once, into the frame. The default builds in a buffer of its own and calls
  // send() (so wrappers that override send() see every frame).
  virtual uint8_t* tx_begin(size_t len) {
    if (tx_scratch_.size() < len) tx_scratch_.resize(len);
    return tx_scratch_.data();
  }
  virtual void tx_end(size_t len) {
    wire::Bytes& f = tx_scratch_;
    const size_t cap = f.size();
    f.resize(len);
    send(f);
    f.resize(cap);
  }
  // In-place receiving: like recv(), but the frame stays in the backend's buffer; `frame` and
  // `len` describe it until the next recv_view() or recv() call. The default calls recv().
  virtual bool recv_view(const uint8_t*& frame, size_t& len, Clock::time_point deadline) {
    if (!recv(rx_scratch_, deadline)) return false;
    frame = rx_scratch_.data();
    len = rx_scratch_.size();
    return true;
  }

 private:
  wire::Bytes tx_scratch_, rx_scratch_;
};

}  // namespace panama::host
