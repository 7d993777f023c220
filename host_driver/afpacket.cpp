#include "afpacket.h"

#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace panama::host {

AfPacketFabric::AfPacketFabric(const std::vector<std::string>& ifaces) : names_(ifaces) {
  for (const auto& name : ifaces) {
    if (name.empty() || name.size() >= IFNAMSIZ) throw std::runtime_error("bad interface name '" + name + "'");
    const unsigned idx = if_nametoindex(name.c_str());
    if (idx == 0) throw std::runtime_error("no interface '" + name + "'");
    const int fd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, htons(ETH_P_ALL));
    if (fd < 0)
      throw std::runtime_error("AF_PACKET socket for " + name + ": " + std::strerror(errno) + " (needs CAP_NET_RAW)");
    fds_.emplace_back(fd);
    sockaddr_ll a{};
    a.sll_family = AF_PACKET;
    a.sll_protocol = htons(ETH_P_ALL);
    a.sll_ifindex = static_cast<int>(idx);
    if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0)
      throw std::runtime_error("binding to " + name + ": " + std::strerror(errno));
    int one = 1;
    // Our own transmissions are not receptions (Linux >= 4.20; otherwise filtered below).
    (void)setsockopt(fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof one);
    // Tells us when a locally sent frame still has a partial (offloaded) L4 checksum.
    (void)setsockopt(fd, SOL_PACKET, PACKET_AUXDATA, &one, sizeof one);
    int buf = 8 << 20;
    (void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof buf);
    (void)setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buf, sizeof buf);
    // Promiscuous: the stand-in is a switch port and takes every frame on the link.
    packet_mreq mr{};
    mr.mr_ifindex = static_cast<int>(idx);
    mr.mr_type = PACKET_MR_PROMISC;
    if (setsockopt(fd, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mr, sizeof mr) != 0)
      throw std::runtime_error("promiscuous mode on " + name + ": " + std::strerror(errno));
  }
}

namespace {
// Completes the TCP/UDP checksum of an IPv4 frame whose sender left it to offload (veth peers
// hand such frames over with only the pseudo-header sum): on a real wire every frame is whole.
void complete_l4_checksum(wire::Bytes& f) {
  if (f.size() < 34 || f[12] != 0x08 || f[13] != 0x00 || (f[14] >> 4) != 4) return;
  const size_t ihl = static_cast<size_t>(f[14] & 15) * 4;
  const uint8_t proto = f[23];
  const size_t l4 = 14 + ihl;
  const size_t total = wire::get16(&f[16]);
  if (ihl < 20 || total < ihl || 14 + total > f.size()) return;
  const size_t len = total - ihl;
  size_t csum_off;
  if (proto == 17 && len >= 8)
    csum_off = l4 + 6;
  else if (proto == 6 && len >= 20)
    csum_off = l4 + 16;
  else
    return;
  uint32_t sum = 0;
  for (size_t i = 26; i < 34; i += 2) sum += wire::get16(&f[i]);
  sum += proto;
  sum += static_cast<uint32_t>(len);
  f[csum_off] = f[csum_off + 1] = 0;
  for (size_t i = 0; i + 1 < len; i += 2) sum += wire::get16(&f[l4 + i]);
  if (len & 1) sum += static_cast<uint32_t>(f[l4 + len - 1]) << 8;
  while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
  uint16_t c = static_cast<uint16_t>(~sum);
  if (proto == 17 && c == 0) c = 0xFFFF;
  wire::put16(&f[csum_off], c);
}
}  // namespace

bool AfPacketFabric::try_recv(int port, wire::Bytes& f) {
  uint8_t buf[65536];
  for (;;) {
    sockaddr_ll from{};
    iovec iov{buf, sizeof buf};
    alignas(cmsghdr) char ctl[256];
    msghdr mh = recv_header(from, iov, ctl, sizeof ctl);
    const ssize_t r = recvmsg(fds_[static_cast<size_t>(port)].get(), &mh, MSG_TRUNC);
    if (r < 0) {
      if (errno == EINTR) continue;
      return false;  // EAGAIN (nothing) or a transient error
    }
    if (from.sll_pkttype == PACKET_OUTGOING) continue;
    if (static_cast<size_t>(r) > sizeof buf) continue;  // truncated: not deliverable as a frame
    bool partial = false;
    for (cmsghdr* c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
      if (c->cmsg_level == SOL_PACKET && c->cmsg_type == PACKET_AUXDATA) {
        tpacket_auxdata aux;
        std::memcpy(&aux, CMSG_DATA(c), sizeof aux);
        partial = aux.tp_status & TP_STATUS_CSUMNOTREADY;
      }
    f.assign(buf, buf + r);
    if (partial) complete_l4_checksum(f);
    return true;
  }
}

void AfPacketFabric::send(int port, const wire::Bytes& f) {
  const int fd = fds_[static_cast<size_t>(port)].get();
  for (int tries = 0; tries < 1000; ++tries) {
    const ssize_t r = ::send(fd, f.data(), f.size(), 0);
    if (r == static_cast<ssize_t>(f.size())) return;
    if (r < 0 && (errno == EAGAIN || errno == ENOBUFS || errno == EINTR)) {
      pollfd p{fd, POLLOUT, 0};
      (void)poll(&p, 1, 1);
      continue;
    }
    break;
  }
  ++send_errors_;  // e.g. EMSGSIZE: a frame larger than the egress MTU is dropped, as a switch would
}

void AfPacketFabric::wait(Clock::time_point until) {
  std::vector<pollfd> p;
  for (const Fd& fd : fds_) p.push_back(pollfd{fd.get(), POLLIN, 0});
  const auto now = Clock::now();
  int ms = 0;
  if (until > now)
    ms = static_cast<int>(std::min<long long>(
        std::chrono::duration_cast<std::chrono::microseconds>(until - now).count() / 1000 + 1, 100));
  (void)poll(p.data(), p.size(), ms);
}

}  // namespace panama::host
