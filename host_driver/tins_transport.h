// Backend `tins`: raw Ethernet frames through libtins (docs/host.md "Backends"). Contributions
// are the wire-format frames the protocol builds (wire::build_frame: DSCP wire::kAggDscp, ECT(0), eth.dst =
// the next hop's MAC towards the aggregator), sent whole with a Tins::PacketSender on the
// interface; results are captured with a Tins::Sniffer (BPF "udp dst port P and dst host GROUP",
// immediate mode, non-blocking, read with pcap_dispatch and poll() until the deadline) and handed
// over byte for byte, so the ECN bits are the IPv4 header's as received.
#pragma once

#include <memory>

#include "raw_common.h"

namespace panama::host {

class TinsTransport : public RawTransport {
 public:
  explicit TinsTransport(const RawParams& p);  // throws TransportError with one line
  ~TinsTransport() override;
  void send(const wire::Bytes& frame) override;
  bool recv(wire::Bytes& frame, Clock::time_point deadline) override;

 private:
  struct Impl;
  std::unique_ptr<Impl> d_;
};

}  // namespace panama::host
