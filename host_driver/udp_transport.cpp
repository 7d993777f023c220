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
#include <vector>

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
}

UdpTransport::~UdpTransport() {
  try {
    flush();
  } catch (const TransportError&) {
    // Nothing to report to at destruction; the peers see the frames as lost.
  }
}

void UdpTransport::send(const wire::Bytes& f) {
  if (f.size() < wire::kHeaderBytes) throw TransportError("udp: frame shorter than the headers");
  const int tos = f[wire::off::ip_tos];
  if (!tx_.empty() && tos != tx_tos_) flush();
  tx_tos_ = tos;
  tx_.emplace_back(f.begin() + static_cast<std::ptrdiff_t>(wire::off::agg), f.end());
  if (tx_.size() >= io_batch()) flush();
}

void UdpTransport::flush() {
  if (tx_.empty()) return;
  if (tx_tos_ != tos_) {
    if (setsockopt(fd_.get(), IPPROTO_IP, IP_TOS, &tx_tos_, sizeof tx_tos_) != 0) fail("IP_TOS");
    tos_ = tx_tos_;
  }
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(p_.port);
  a.sin_addr.s_addr = htonl(p_.agg_ip);
  std::vector<iovec> iov(tx_.size());
  std::vector<mmsghdr> mm(tx_.size());
  for (size_t i = 0; i < tx_.size(); ++i) {
    iov[i] = iovec{tx_[i].data(), tx_[i].size()};
    mm[i] = mmsghdr{};
    mm[i].msg_hdr.msg_name = &a;
    mm[i].msg_hdr.msg_namelen = sizeof a;
    mm[i].msg_hdr.msg_iov = &iov[i];
    mm[i].msg_hdr.msg_iovlen = 1;
  }
  size_t done = 0;
  for (int tries = 0; done < tx_.size();) {
    const int r = sendmmsg(fd_.get(), mm.data() + done, static_cast<unsigned>(tx_.size() - done), 0);
    if (r > 0) {
      done += static_cast<size_t>(r);
      continue;
    }
    if (r < 0 && (errno == EINTR || ((errno == ENOBUFS || errno == EAGAIN) && ++tries < 1000))) {
      usleep(100);
      continue;
    }
    tx_.clear();
    fail("sendmmsg to " + wire::ipv4_to_string(p_.agg_ip));
  }
  tx_.clear();
}

bool UdpTransport::fill_rx() {
  mmsghdr* mm = rb_.prepare();
  const int r = recvmmsg(fd_.get(), mm, io_batch(), MSG_DONTWAIT, nullptr);
  if (r < 0 && (errno == EAGAIN || errno == EINTR)) return false;
  if (r < 0) fail("recvmmsg");
  for (int k = 0; k < r; ++k) {
    const msghdr& mh = mm[k].msg_hdr;
    uint8_t tos = 0;
    for (cmsghdr* c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(const_cast<msghdr*>(&mh), c))
      if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_TOS) tos = *reinterpret_cast<uint8_t*>(CMSG_DATA(c));
    // Re-create the L2-L4 headers the kernel stripped (addresses as received).
    const size_t n = mm[k].msg_len;
    wire::Bytes frame(wire::off::agg + n, 0);
    frame[12] = 0x08;
    frame[14] = 0x45;
    frame[wire::off::ip_tos] = tos;
    wire::put16(frame.data() + wire::off::ip_total_len, static_cast<uint16_t>(28 + n));
    frame[22] = 64;
    frame[wire::off::ip_proto] = 17;
    wire::put32(frame.data() + wire::off::ip_src, ntohl(rb_.from[static_cast<size_t>(k)].sin_addr.s_addr));
    wire::put32(frame.data() + wire::off::ip_dst, p_.group_ip);
    wire::put16(frame.data() + wire::off::udp_sport, ntohs(rb_.from[static_cast<size_t>(k)].sin_port));
    wire::put16(frame.data() + wire::off::udp_dport, p_.port);
    wire::put16(frame.data() + wire::off::udp_len, static_cast<uint16_t>(8 + n));
    std::memcpy(frame.data() + wire::off::agg, rb_.data(static_cast<size_t>(k)), n);
    rx_.push_back(std::move(frame));
  }
  return r > 0;
}

bool UdpTransport::recv(wire::Bytes& frame, Clock::time_point deadline) {
  flush();
  for (;;) {
    if (!rx_.empty() || fill_rx()) {
      frame = std::move(rx_.front());
      rx_.pop_front();
      return true;
    }
    const auto now = Clock::now();
    if (now >= deadline) return false;
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count() + 1;
    pollfd pfd{fd_.get(), POLLIN, 0};
    const int pr = poll(&pfd, 1, static_cast<int>(std::min<long long>(ms, 1000)));
    if (pr < 0 && errno != EINTR) fail("poll");
  }
}

}  // namespace panama::host
