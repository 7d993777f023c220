// The stand-in's links on real interfaces: one AF_PACKET socket per accelerator port.
#pragma once

#include <deque>
#include <string>
#include <vector>

#include <linux/if_packet.h>

#include "sock.h"
#include "switch.h"

namespace panama::host {

class AfPacketFabric : public Fabric {
 public:
  // Opens and binds one socket per interface (port p = ifaces[p]); throws std::runtime_error.
  explicit AfPacketFabric(const std::vector<std::string>& ifaces);
  int ports() const override { return static_cast<int>(fds_.size()); }
  // Receives up to 32 (io_batch()) frames per recvmmsg() into a queue per port; send() queues and
  // flush() (or a full batch) hands a port's frames to the kernel with sendmmsg().
  bool try_recv(int port, wire::Bytes& f) override;
  void send(int port, const wire::Bytes& f) override;
  void flush() override;
  void wait(Clock::time_point until) override;
  uint64_t send_errors() const { return send_errors_; }

 private:
  bool fill(int port);  // one recvmmsg; false when nothing was waiting
  void flush_port(size_t port);
  std::vector<std::string> names_;
  std::vector<Fd> fds_;
  std::vector<std::deque<wire::Bytes>> rx_;
  std::vector<std::vector<wire::Bytes>> tx_;
  RecvBatch<sockaddr_ll> rb_{65536};
  uint64_t send_errors_ = 0;
};

}  // namespace panama::host
