// Backend `udp`: ordinary kernel UDP sockets (docs/host.md). Contributions go to the
// aggregator's address and port with IP_TOS = wire::kAggDscp << 2 | the frame's ECN; final sums are
// received on the group address (IP_ADD_MEMBERSHIP on the interface) with their ECN bits read
// through IP_RECVTOS. The kernel builds and strips L2-L4: recv() re-creates them so that the
// protocol sees a wire-format frame either way.
#pragma once

#include <string>
#include <vector>

#include <netinet/in.h>
#include <sys/socket.h>

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
  // Frames are built in place in a batch of kTxSlots (tx_begin) and handed to the kernel with
  // one sendmmsg(): when the batch is full, when the TOS (ECN) changes, and at flush() / recv().
  // With UDP_SEGMENT (GSO), each run of equal-sized datagrams (a shorter one may end it) goes as
  // one message that the kernel segments; without it (or PANAMA_HOST_GSO=0), one message per
  // datagram. recv() takes up to 32 (io_batch()) messages per recvmmsg(); with UDP_GRO a
  // message may hold several datagrams, which are handed out one by one, each with its L2-L4
  // headers re-created in front of it in place. It polls only when nothing is waiting.
  void send(const wire::Bytes& frame) override;
  bool recv(wire::Bytes& frame, Clock::time_point deadline) override;
  uint8_t* tx_begin(size_t len) override;
  void tx_end(size_t len) override;
  bool recv_view(const uint8_t*& frame, size_t& len, Clock::time_point deadline) override;
  void flush() override;
  std::string datapath() const override;
  wire::Ipv4 local_ip() const { return local_ip_; }
  // Also receives the datagrams to `group` (a lease gives each tree a group of its own).
  void join(wire::Ipv4 group);
  bool gso() const { return gso_; }
  bool gro() const { return gro_; }

 private:
  static constexpr size_t kTxSlots = 64, kTxSlot = 9216 + 64;  // frames per batch, bytes per frame
  static constexpr size_t kRxMsgs = 32, kRxSlot = 65536 + 64;  // messages per recvmmsg, bytes each
  static constexpr size_t kHead = wire::off::agg;              // L2-L4 bytes re-created on receive
  bool fill_rx();  // one recvmmsg(MSG_DONTWAIT); false when nothing was waiting
  UdpParams p_;
  Fd fd_;
  int tos_ = -1;
  wire::Ipv4 local_ip_ = 0;
  unsigned ifindex_ = 0;
  bool gso_ = false, gro_ = false;
  std::string gso_note_, gro_note_;
  uint64_t gso_msgs_ = 0, gro_msgs_ = 0;  // messages that carried more than one datagram
  // Transmit batch: frame i at tx_buf_[i * kTxSlot], its length and TOS.
  std::vector<uint8_t> tx_buf_;
  size_t tx_n_ = 0;
  size_t tx_len_[kTxSlots] = {};
  int tx_tos_ = -1;
  std::vector<iovec> tx_iov_ = std::vector<iovec>(kTxSlots);
  std::vector<mmsghdr> tx_mm_ = std::vector<mmsghdr>(kTxSlots);
  struct alignas(cmsghdr) TxCtl {
    char b[CMSG_SPACE(sizeof(uint16_t))];
  };
  std::vector<TxCtl> tx_ctl_ = std::vector<TxCtl>(kTxSlots);
  // Receive: message m at rx_buf_[m * kRxSlot + kHead] (kHead bytes of room for the headers).
  std::vector<uint8_t> rx_buf_;
  std::vector<iovec> rx_iov_ = std::vector<iovec>(kRxMsgs);
  std::vector<mmsghdr> rx_mm_ = std::vector<mmsghdr>(kRxMsgs);
  std::vector<sockaddr_in> rx_from_ = std::vector<sockaddr_in>(kRxMsgs);
  struct alignas(cmsghdr) RxCtl {
    char b[256];
  };
  std::vector<RxCtl> rx_ctl_ = std::vector<RxCtl>(kRxMsgs);
  size_t rx_msgs_ = 0, rx_msg_ = 0, rx_off_ = 0;  // messages received, the current one, offset in it
  size_t rx_seg_[kRxMsgs] = {};                   // each message's segment size (GRO), else its length
  uint8_t rx_tos_[kRxMsgs] = {};
  wire::Bytes rx_scratch_;
};

}  // namespace panama::host
