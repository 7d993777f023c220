#include "udp_transport.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <cstdlib>
#include <vector>

#include <netinet/udp.h>

namespace panama::host {

namespace {
[[noreturn]] void fail(const std::string& what) { throw TransportError("udp: " + what + ": " + std::strerror(errno)); }
}  // namespace

UdpTransport::UdpTransport(const UdpParams& p) : p_(p) {
  if (p.iface.empty() || p.iface.size() >= IFNAMSIZ) throw TransportError("udp: bad interface name '" + p.iface + "'");
  const unsigned ifindex = if_nametoindex(p.iface.c_str());
  if (ifindex == 0) throw TransportError("udp: no interface '" + p.iface + "'");
  if ((p.group_ip >> 28) != 0xE)
    throw TransportError("udp: group address " + wire::ipv4_to_string(p.group_ip) + " is not multicast");
  if (p.agg_ip == 0) throw TransportError("udp: no aggregator address");
  // The interface's IPv4 address (the source of our contributions).
  ifaddrs* ifa = nullptr;
  if (getifaddrs(&ifa) != 0) fail("getifaddrs");
  for (ifaddrs* i = ifa; i; i = i->ifa_next)
    if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET && p.iface == i->ifa_name)
      local_ip_ = ntohl(reinterpret_cast<sockaddr_in*>(i->ifa_addr)->sin_addr.s_addr);
  freeifaddrs(ifa);
  if (local_ip_ == 0) throw TransportError("udp: interface '" + p.iface + "' has no IPv4 address");

  fd_ = Fd(socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (fd_.get() < 0) fail("socket");
  int one = 1;
  if (setsockopt(fd_.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0) fail("SO_REUSEADDR");
  if (setsockopt(fd_.get(), SOL_SOCKET, SO_RCVBUF, &p.rcvbuf, sizeof p.rcvbuf) != 0) fail("SO_RCVBUF");
  if (setsockopt(fd_.get(), IPPROTO_IP, IP_RECVTOS, &one, sizeof one) != 0) fail("IP_RECVTOS");
  // Segmentation offload where the kernel has it (docs/host.md "Backends"); PANAMA_HOST_GSO=0
  // turns both off (the baseline). Refused: one message per datagram, said in datapath().
  const char* env = std::getenv("PANAMA_HOST_GSO");
  const bool want = !(env && std::string(env) == "0");
  if (!want) {
    gso_note_ = gro_note_ = "off (PANAMA_HOST_GSO=0)";
  } else {
    int zero = 0;
    gso_ = setsockopt(fd_.get(), SOL_UDP, UDP_SEGMENT, &zero, sizeof zero) == 0;
    if (!gso_) gso_note_ = std::string("UDP_SEGMENT refused (") + std::strerror(errno) + ")";
    gro_ = setsockopt(fd_.get(), SOL_UDP, UDP_GRO, &one, sizeof one) == 0;
    if (!gro_) gro_note_ = std::string("UDP_GRO refused (") + std::strerror(errno) + ")";
  }
  tx_buf_.resize(kTxSlots * kTxSlot);
  rx_buf_.resize(kRxMsgs * kRxSlot);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(p.port);
  a.sin_addr.s_addr = htonl(INADDR_ANY);  // the group and unicast: source port = dest port
  if (bind(fd_.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) fail("bind to port " + std::to_string(p.port));
  ip_mreqn m{};
  m.imr_multiaddr.s_addr = htonl(p.group_ip);
  m.imr_address.s_addr = htonl(local_ip_);
  m.imr_ifindex = static_cast<int>(ifindex);
  if (setsockopt(fd_.get(), IPPROTO_IP, IP_ADD_MEMBERSHIP, &m, sizeof m) != 0)
    fail("joining " + wire::ipv4_to_string(p.group_ip) + " on " + p.iface);
  ifindex_ = ifindex;
  // Frames to a group (the fallback ring's) leave through this interface whatever the routes say.
  if ((p.agg_ip >> 28) == 0xE && setsockopt(fd_.get(), IPPROTO_IP, IP_MULTICAST_IF, &m, sizeof m) != 0)
    fail("IP_MULTICAST_IF " + p.iface);
}

void UdpTransport::join(wire::Ipv4 group) {
  if ((group >> 28) != 0xE)
    throw TransportError("udp: group address " + wire::ipv4_to_string(group) + " is not multicast");
  ip_mreqn m{};
  m.imr_multiaddr.s_addr = htonl(group);
  m.imr_address.s_addr = htonl(local_ip_);
  m.imr_ifindex = static_cast<int>(ifindex_);
  if (setsockopt(fd_.get(), IPPROTO_IP, IP_ADD_MEMBERSHIP, &m, sizeof m) != 0 && errno != EADDRINUSE)
    fail("joining " + wire::ipv4_to_string(group) + " on " + p_.iface);
}

UdpTransport::~UdpTransport() {
  try {
    flush();
  } catch (const TransportError&) {
    // Nothing to report to at destruction; the peers see the frames as lost.
  }
}

std::string UdpTransport::datapath() const {
  std::string s = gso_ ? "UDP_SEGMENT (GSO) send" : "sendmmsg, one message per datagram: " + gso_note_;
  s += gro_ ? ", UDP_GRO receive" : ", recvmmsg without GRO: " + gro_note_;
  s += " (" + std::to_string(gso_msgs_) + " GSO messages, " + std::to_string(gro_msgs_) + " GRO messages)";
  return s;
}

uint8_t* UdpTransport::tx_begin(size_t len) {
  if (len < wire::kHeaderBytes || len > kTxSlot)
    throw TransportError("udp: frame of " + std::to_string(len) + " bytes");
  if (tx_n_ == kTxSlots) flush();
  return &tx_buf_[tx_n_ * kTxSlot];
}

void UdpTransport::tx_end(size_t len) {
  uint8_t* f = &tx_buf_[tx_n_ * kTxSlot];
  const int tos = f[wire::off::ip_tos];
  if (tx_n_ > 0 && tos != tx_tos_) {  // the batch so far leaves with its TOS; this frame starts the next
    std::vector<uint8_t> keep(f, f + len);
    flush();
    std::memcpy(&tx_buf_[0], keep.data(), len);
    f = &tx_buf_[0];
  }
  tx_tos_ = tos;
  tx_len_[tx_n_++] = len;
  const size_t limit = io_batch() < 32 ? io_batch() : kTxSlots;
  if (tx_n_ >= limit) flush();
}

void UdpTransport::send(const wire::Bytes& f) {
  if (f.size() < wire::kHeaderBytes) throw TransportError("udp: frame shorter than the headers");
  std::memcpy(tx_begin(f.size()), f.data(), f.size());
  tx_end(f.size());
}

void UdpTransport::flush() {
  if (tx_n_ == 0) return;
  if (tx_tos_ != tos_) {
    if (setsockopt(fd_.get(), IPPROTO_IP, IP_TOS, &tx_tos_, sizeof tx_tos_) != 0) fail("IP_TOS");
    tos_ = tx_tos_;
  }
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(p_.port);
  a.sin_addr.s_addr = htonl(p_.agg_ip);
  for (size_t i = 0; i < tx_n_; ++i)
    tx_iov_[i] = iovec{&tx_buf_[i * kTxSlot + wire::off::agg], tx_len_[i] - wire::off::agg};
  // Messages: with GSO, a run of equal-sized datagrams (a shorter last one allowed) per message.
  size_t nm = 0;
  for (size_t i = 0; i < tx_n_;) {
    const size_t seg = tx_iov_[i].iov_len;
    size_t j = i + 1, bytes = seg;
    if (gso_) {
      while (j < tx_n_ && tx_iov_[j].iov_len == seg && bytes + seg <= 65000) bytes += tx_iov_[j++].iov_len;
      if (j < tx_n_ && tx_iov_[j].iov_len < seg && bytes + tx_iov_[j].iov_len <= 65000) ++j;
    }
    mmsghdr& m = tx_mm_[nm];
    m = mmsghdr{};
    m.msg_hdr.msg_name = &a;
    m.msg_hdr.msg_namelen = sizeof a;
    m.msg_hdr.msg_iov = &tx_iov_[i];
    m.msg_hdr.msg_iovlen = j - i;
    if (j - i > 1) {
      m.msg_hdr.msg_control = tx_ctl_[nm].b;
      m.msg_hdr.msg_controllen = sizeof tx_ctl_[nm].b;
      cmsghdr* c = CMSG_FIRSTHDR(&m.msg_hdr);
      c->cmsg_level = SOL_UDP;
      c->cmsg_type = UDP_SEGMENT;
      c->cmsg_len = CMSG_LEN(sizeof(uint16_t));
      const uint16_t s16 = static_cast<uint16_t>(seg);
      std::memcpy(CMSG_DATA(c), &s16, sizeof s16);
      ++gso_msgs_;
    }
    ++nm;
    i = j;
  }
  size_t done = 0;
  for (int tries = 0; done < nm;) {
    const int r = sendmmsg(fd_.get(), tx_mm_.data() + done, static_cast<unsigned>(nm - done), 0);
    if (r > 0) {
      done += static_cast<size_t>(r);
      continue;
    }
    if (r < 0 && (errno == EINTR || ((errno == ENOBUFS || errno == EAGAIN) && ++tries < 1000))) {
      usleep(100);
      continue;
    }
    if (r < 0 && gso_ && tx_mm_[done].msg_hdr.msg_controllen > 0 &&
        (errno == EIO || errno == EINVAL || errno == EOPNOTSUPP || errno == ENOPROTOOPT)) {
      // The route's device or the kernel refused segmentation at send: datagrams one by one from
      // here on (said in datapath()).
      gso_ = false;
      gso_note_ = std::string("UDP_SEGMENT refused on send (") + std::strerror(errno) + ")";
      const size_t left_from = static_cast<size_t>(tx_mm_[done].msg_hdr.msg_iov - tx_iov_.data());
      size_t k = 0;
      for (size_t i = left_from; i < tx_n_; ++i) tx_len_[k++] = tx_len_[i];
      if (left_from > 0)
        for (size_t i = 0; i < k; ++i)
          std::memmove(&tx_buf_[i * kTxSlot], &tx_buf_[(i + left_from) * kTxSlot], tx_len_[i]);
      tx_n_ = k;
      flush();
      return;
    }
    tx_n_ = 0;
    fail("sendmmsg to " + wire::ipv4_to_string(p_.agg_ip));
  }
  tx_n_ = 0;
}

bool UdpTransport::fill_rx() {
  const unsigned n = std::min<unsigned>(io_batch(), kRxMsgs);
  for (size_t i = 0; i < n; ++i) {
    rx_iov_[i] = iovec{&rx_buf_[i * kRxSlot + kHead], kRxSlot - kHead};
    rx_mm_[i] = mmsghdr{};
    rx_mm_[i].msg_hdr = recv_header(rx_from_[i], rx_iov_[i], rx_ctl_[i].b, sizeof rx_ctl_[i].b);
  }
  const int r = recvmmsg(fd_.get(), rx_mm_.data(), n, MSG_DONTWAIT, nullptr);
  if (r < 0 && (errno == EAGAIN || errno == EINTR)) return false;
  if (r < 0) fail("recvmmsg");
  for (int k = 0; k < r; ++k) {
    const msghdr& mh = rx_mm_[static_cast<size_t>(k)].msg_hdr;
    uint8_t tos = 0;
    size_t seg = rx_mm_[static_cast<size_t>(k)].msg_len;
    for (cmsghdr* c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(const_cast<msghdr*>(&mh), c)) {
      if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_TOS) tos = *reinterpret_cast<uint8_t*>(CMSG_DATA(c));
      if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_GRO) {
        int g = 0;
        std::memcpy(&g, CMSG_DATA(c), sizeof g);
        if (g > 0 && static_cast<size_t>(g) < seg) {
          seg = static_cast<size_t>(g);
          ++gro_msgs_;
        }
      }
    }
    rx_seg_[k] = seg;
    rx_tos_[k] = tos;
  }
  rx_msgs_ = r > 0 ? static_cast<size_t>(r) : 0;
  rx_msg_ = rx_off_ = 0;
  return r > 0;
}

bool UdpTransport::recv_view(const uint8_t*& frame, size_t& len, Clock::time_point deadline) {
  // Datagrams already received are handed out first; what was built meanwhile leaves before the
  // next system call, so each sendmmsg carries the frames answering a whole receive batch.
  for (;;) {
    while (rx_msg_ < rx_msgs_) {
      const size_t m = rx_msg_, total = rx_mm_[m].msg_len;
      if (rx_off_ >= total) {
        ++rx_msg_;
        rx_off_ = 0;
        continue;
      }
      const size_t n = std::min(rx_seg_[m], total - rx_off_);
      // The datagram at rx_off_, with its L2-L4 headers re-created in the kHead bytes before it
      // (the previous datagram's tail, already handed out, or the slot's room).
      uint8_t* f = &rx_buf_[m * kRxSlot + rx_off_];
      std::memset(f, 0, kHead);
      wire::put16(f + wire::off::eth_type, wire::kEtherTypeIpv4);
      f[wire::off::ip] = wire::kIpv4VerIhl;
      f[wire::off::ip_tos] = rx_tos_[m];
      wire::put16(f + wire::off::ip_total_len, static_cast<uint16_t>(28 + n));
      f[22] = 64;
      f[wire::off::ip_proto] = 17;
      wire::put32(f + wire::off::ip_src, ntohl(rx_from_[m].sin_addr.s_addr));
      wire::put32(f + wire::off::ip_dst, p_.group_ip);
      wire::put16(f + wire::off::udp_sport, ntohs(rx_from_[m].sin_port));
      wire::put16(f + wire::off::udp_dport, p_.port);
      wire::put16(f + wire::off::udp_len, static_cast<uint16_t>(8 + n));
      rx_off_ += n;
      frame = f;
      len = kHead + n;
      return true;
    }
    flush();
    if (fill_rx()) continue;
    const auto now = Clock::now();
    if (now >= deadline) return false;
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count() + 1;
    pollfd pfd{fd_.get(), POLLIN, 0};
    const int pr = poll(&pfd, 1, static_cast<int>(std::min<long long>(ms, 1000)));
    if (pr < 0 && errno != EINTR) fail("poll");
  }
}

bool UdpTransport::recv(wire::Bytes& frame, Clock::time_point deadline) {
  const uint8_t* f = nullptr;
  size_t len = 0;
  if (!recv_view(f, len, deadline)) return false;
  frame.assign(f, f + len);
  return true;
}

}  // namespace panama::host
