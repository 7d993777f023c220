// The stand-in's links on real interfaces: one AF_PACKET socket per accelerator port.
#pragma once

#include <string>
#include <vector>

#include "sock.h"
#include "switch.h"

namespace panama::host {

class AfPacketFabric : public Fabric {
 public:
  // Opens and binds one socket per interface (port p = ifaces[p]); throws std::runtime_error.
  explicit AfPacketFabric(const std::vector<std::string>& ifaces);
  int ports() const override { return static_cast<int>(fds_.size()); }
  bool try_recv(int port, wire::Bytes& f) override;
  void send(int port, const wire::Bytes& f) override;
  void wait(Clock::time_point until) override;
  uint64_t send_errors() const { return send_errors_; }

 private:
  std::vector<std::string> names_;
  std::vector<Fd> fds_;
  uint64_t send_errors_ = 0;
};

}  // namespace panama::host
