// `switch --backend xdp` (docs/host-standin.md "panama-host switch"): the stand-in's links on AF_XDP sockets, the
// worker's xdp backend (xdp_transport.h) opened as a switch port: the XDP program steers every
// frame of the interface to the sockets, none to the kernel. With --threads M, each interface has
// M sockets sharing its UMEM, and thread t's fabric holds socket t of every interface; the
// program hands an aggregation frame to the socket of its TID's thread (XdpPorts' tid_thread),
// every other frame to thread 0.
#pragma once

#include <poll.h>

#include <memory>
#include <string>
#include <vector>

#include "switch.h"
#include "xdp_transport.h"

namespace panama::host {

class XdpFabric : public Fabric {
 public:
  // One socket per port, owned elsewhere (XdpPorts); agg_port: the aggregation UDP port, whose
  // frames keep their checksum as received (the engine reads them; nothing else does).
  XdpFabric(std::vector<XdpTransport*> ports, uint16_t agg_port);
  int ports() const override { return static_cast<int>(ports_.size()); }
  // A received frame, copied out of the UMEM into f's buffer (the frame is then released with
  // its batch); a TCP/UDP frame other than aggregation traffic gets its L4 checksum completed
  // (a veth peer leaves it to offload: afpacket.h).
  bool try_recv(int port, wire::Bytes& f) override;
  // Copies f into a UMEM frame of the port's socket (a frame larger than one is counted in
  // send_errors and dropped, as a switch drops a frame above the egress MTU).
  void send(int port, const wire::Bytes& f) override;
  void flush() override;
  void wait(Clock::time_point until) override;
  uint64_t send_errors() const override { return send_errors_; }

 private:
  std::vector<XdpTransport*> ports_;
  std::vector<pollfd> pfd_;
  uint16_t agg_port_;
  uint64_t send_errors_ = 0;
};

// The sockets of every interface of a stand-in: ifaces[i] gets `threads` sockets; fabric(t) is
// thread t's. Throws TransportError with one line when AF_XDP is refused.
class XdpPorts {
 public:
  // tid_thread[t]: the thread whose sockets receive the aggregation frames of TID t.
  XdpPorts(const std::vector<std::string>& ifaces, int threads, uint16_t agg_port, const std::vector<int>& tid_thread);
  std::unique_ptr<XdpFabric> fabric(int thread) const;
  // How the sockets move frames ("AF_XDP copy, native XDP" ...), for the stand-in's first line.
  std::string mode() const;

 private:
  std::vector<std::vector<std::unique_ptr<XdpTransport>>> socks_;  // [interface][thread]
  uint16_t agg_port_;
};

}  // namespace panama::host
