// Backend `udp`: ordinary kernel UDP sockets (docs/host.md). Contributions go to the
// aggregator's address and port with IP_TOS = DSCP 56 << 2 | the frame's ECN; final sums are
// received on the group address (IP_ADD_MEMBERSHIP on the interface) with their ECN bits read
// through IP_RECVTOS. The kernel builds and strips L2-L4: recv() re-creates them so that the
// protocol sees a wire-format frame either way.
#pragma once

#include <deque>
#include <string>
#include <vector>

#include <netinet/in.h>

#include "sock.h"
#include "transport.h"

namespace panama::host {

struct UdpParams {
  std::string iface;        // interface to join the group on and send from
  wire::Ipv4 agg_ip = 0;    // the aggregator's (tree root's) address
  wire::Ipv4 group_ip = 0;  // the job's group address (224.0.0.0/4)
  uint16_t port = wire::kDefaultAggPort;
  int rcvbuf = 8 << 20;  // SO_RCVBUF request, bytes
};

class UdpTransport : public Transport {
 public:
  explicit UdpTransport(const UdpParams& p);  // throws TransportError with one line
  ~UdpTransport() override;
  // Frames are queued and handed to the kernel with sendmmsg(): when 32 (io_batch()) are queued, when the
  // TOS (ECN) changes, and at flush() / recv(). recv() takes up to 32 (io_batch()) datagrams per
  // recvmmsg() and polls only when none is waiting.
  void send(const wire::Bytes& frame) override;
  bool recv(wire::Bytes& frame, Clock::time_point deadline) override;
  void flush() override;
  wire::Ipv4 local_ip() const { return local_ip_; }

 private:
  bool fill_rx();  // one recvmmsg(MSG_DONTWAIT); false when nothing was waiting
  UdpParams p_;
  Fd fd_;
  int tos_ = -1;
  wire::Ipv4 local_ip_ = 0;
  std::vector<wire::Bytes> tx_;  // queued payloads (from the aggregation header on)
  int tx_tos_ = -1;              // their TOS
  std::deque<wire::Bytes> rx_;   // received frames (L2-L4 re-created), not yet returned
  RecvBatch<sockaddr_in> rb_{65536};
};

}  // namespace panama::host
