// The stand-in's links on real interfaces: one AF_PACKET socket per accelerator port.
#pragma once

#include <string>
#include <vector>

#include <linux/if_packet.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "sock.h"
#include "switch.h"

namespace panama::host {

// Completes the TCP/UDP checksum of an IPv4 frame whose sender left it to offload (veth peers
// hand such frames over with only the pseudo-header sum): on a real wire every frame is whole.
// Only a frame whose L4 checksum field holds that pseudo-header sum is completed; fragments and
// frames with a computed checksum (even a wrong one) pass unchanged.
void complete_l4_checksum(wire::Bytes& f);
// Whether a frame is aggregation traffic as the accelerator's parser classifies it
// (wire::classify): the stand-ins' links leave its checksum as it came (the engine does not read
// it); port 0: no frame is.
inline bool agg_udp(const uint8_t* d, size_t len, uint16_t port) {
  return port != 0 && wire::classify(d, len, port) == wire::Class::aggregation;
}

// Waits in poll() on `fds` until one is readable or `until` (at most 100 ms: the loop's stop
// and export checks): the stand-in fabrics' wait().
void poll_until(std::vector<pollfd>& fds, Clock::time_point until);

class AfPacketFabric : public Fabric {
 public:
  // Opens and binds one socket per interface (port p = ifaces[p]); throws std::runtime_error.
  // agg_port: frames to it keep a checksum left to offload (agg_udp), others are completed.
  explicit AfPacketFabric(const std::vector<std::string>& ifaces, uint16_t agg_port = 0);
  int ports() const override { return static_cast<int>(fds_.size()); }
  // Receives up to 32 (io_batch()) frames per recvmmsg() into a queue per port; send() queues and
  // flush() (or a full batch) hands a port's frames to the kernel with sendmmsg(). Frame buffers
  // are reused (try_recv and send_swap exchange them with the caller's), none allocated per frame.
  bool try_recv(int port, wire::Bytes& f) override;
  void send(int port, const wire::Bytes& f) override;
  void send_swap(int port, wire::Bytes& f) override;
  void flush() override;
  void wait(Clock::time_point until) override;
  uint64_t send_errors() const override { return send_errors_; }

 private:
  bool fill(int port);  // one recvmmsg; false when nothing was waiting
  void flush_port(size_t port);
  std::vector<std::string> names_;
  std::vector<Fd> fds_;
  FramePool bufs_;
  std::vector<Ring<wire::Bytes>> rx_;
  std::vector<std::vector<wire::Bytes>> tx_;
  std::vector<iovec> iov_;
  std::vector<mmsghdr> mm_;
  std::vector<pollfd> pfd_;
  RecvBatch<sockaddr_ll> rb_{65536};
  uint64_t send_errors_ = 0;
  uint16_t agg_port_ = 0;
};

}  // namespace panama::host
