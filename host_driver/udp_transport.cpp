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

void UdpTransport::send(const wire::Bytes& f) {
  if (f.size() < wire::kHeaderBytes) throw TransportError("udp: frame shorter than the headers");
  const int tos = f[wire::off::ip_tos];
  if (tos != tos_) {
    if (setsockopt(fd_.get(), IPPROTO_IP, IP_TOS, &tos, sizeof tos) != 0) fail("IP_TOS");
    tos_ = tos;
  }
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(p_.port);
  a.sin_addr.s_addr = htonl(p_.agg_ip);
  const size_t len = f.size() - wire::off::agg;
  for (int tries = 0;; ++tries) {
    const ssize_t r = sendto(fd_.get(), f.data() + wire::off::agg, len, 0, reinterpret_cast<sockaddr*>(&a), sizeof a);
    if (r == static_cast<ssize_t>(len)) return;
    if (r < 0 && (errno == EINTR || ((errno == ENOBUFS || errno == EAGAIN) && tries < 1000))) {
      usleep(100);
      continue;
    }
    fail("sendto " + wire::ipv4_to_string(p_.agg_ip));
  }
}

bool UdpTransport::recv(wire::Bytes& frame, Clock::time_point deadline) {
  uint8_t buf[65536];
  for (;;) {
    const auto now = Clock::now();
    if (now >= deadline) return false;
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count() + 1;
    pollfd pfd{fd_.get(), POLLIN, 0};
    const int pr = poll(&pfd, 1, static_cast<int>(std::min<long long>(ms, 1000)));
    if (pr < 0 && errno == EINTR) continue;
    if (pr < 0) fail("poll");
    if (pr == 0) continue;
    sockaddr_in src{};
    iovec iov{buf, sizeof buf};
    alignas(cmsghdr) char ctl[128];
    msghdr mh = recv_header(src, iov, ctl, sizeof ctl);
    const ssize_t r = recvmsg(fd_.get(), &mh, MSG_DONTWAIT);
    if (r < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (r < 0) fail("recvmsg");
    uint8_t tos = 0;
    for (cmsghdr* c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
      if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_TOS) tos = *reinterpret_cast<uint8_t*>(CMSG_DATA(c));
    // Re-create the L2-L4 headers the kernel stripped (addresses as received).
    const size_t n = static_cast<size_t>(r);
    frame.assign(wire::off::agg + n, 0);
    frame[12] = 0x08;
    frame[14] = 0x45;
    frame[wire::off::ip_tos] = tos;
    wire::put16(frame.data() + wire::off::ip_total_len, static_cast<uint16_t>(28 + n));
    frame[22] = 64;
    frame[wire::off::ip_proto] = 17;
    wire::put32(frame.data() + wire::off::ip_src, ntohl(src.sin_addr.s_addr));
    wire::put32(frame.data() + wire::off::ip_dst, p_.group_ip);
    wire::put16(frame.data() + wire::off::udp_sport, ntohs(src.sin_port));
    wire::put16(frame.data() + wire::off::udp_dport, p_.port);
    wire::put16(frame.data() + wire::off::udp_len, static_cast<uint16_t>(8 + n));
    std::memcpy(frame.data() + wire::off::agg, buf, n);
    return true;
  }
}

}  // namespace panama::host
