// Socket helpers the links share (udp backend, AF_PACKET fabric, control socket).
#pragma once

#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <utility>
#include <vector>

namespace panama::host {

// An owned file descriptor, closed when it goes (move-only).
class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  Fd(Fd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  Fd& operator=(Fd&& o) noexcept {
    if (this != &o) {
      reset();
      fd_ = std::exchange(o.fd_, -1);
    }
    return *this;
  }
  ~Fd() { reset(); }
  int get() const { return fd_; }
  void reset() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }

 private:
  int fd_;
};

// recvmsg()'s header for one data buffer, the sender's address and a control buffer (ancillary
// data: IP_TOS, PACKET_AUXDATA).
template <typename Addr>
msghdr recv_header(Addr& from, iovec& data, void* control, size_t control_len) {
  msghdr mh{};
  mh.msg_name = &from;
  mh.msg_namelen = sizeof from;
  mh.msg_iov = &data;
  mh.msg_iovlen = 1;
  mh.msg_control = control;
  mh.msg_controllen = control_len;
  return mh;
}

// recvmmsg()'s headers for up to 32 datagrams, each into its own `slot`-byte part of one buffer
// (kept across calls), with the sender's address and a control buffer per datagram.
template <typename Addr>
struct RecvBatch {
  static constexpr size_t kMax = 32;
  std::vector<uint8_t> buf;
  std::vector<iovec> iov = std::vector<iovec>(kMax);
  std::vector<mmsghdr> mm = std::vector<mmsghdr>(kMax);
  std::vector<Addr> from = std::vector<Addr>(kMax);
  struct alignas(cmsghdr) Ctl {
    char b[256];
  };
  std::vector<Ctl> ctl = std::vector<Ctl>(kMax);
  size_t slot;
  explicit RecvBatch(size_t slot_bytes) : slot(slot_bytes) {}
  // Resets the headers (recvmmsg overwrites lengths); returns the vector to pass to recvmmsg.
  mmsghdr* prepare() {
    if (buf.empty()) buf.resize(kMax * slot);
    for (size_t i = 0; i < kMax; ++i) {
      iov[i] = iovec{buf.data() + i * slot, slot};
      mm[i] = mmsghdr{};
      mm[i].msg_hdr = recv_header(from[i], iov[i], ctl[i].b, sizeof ctl[i].b);
    }
    return mm.data();
  }
  const uint8_t* data(size_t i) const { return buf.data() + i * slot; }
};

// Frames per sendmmsg()/recvmmsg() of the udp backend and the stand-in's links: 32, or
// PANAMA_HOST_BATCH (1..32; 1 = one frame per system call, the baseline of scripts/bench-host).
inline unsigned io_batch() {
  static const unsigned b = [] {
    const char* e = std::getenv("PANAMA_HOST_BATCH");
    const long v = e ? std::strtol(e, nullptr, 10) : 32;
    return static_cast<unsigned>(v < 1 ? 1 : v > 32 ? 32 : v);
  }();
  return b;
}

}  // namespace panama::host
