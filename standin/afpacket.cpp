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

AfPacketFabric::AfPacketFabric(const std::vector<std::string>& ifaces, uint16_t agg_port)
    : names_(ifaces), agg_port_(agg_port) {
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
    pfd_.push_back(pollfd{fd, POLLIN, 0});
  }
  rx_.resize(fds_.size());
  tx_.resize(fds_.size());
  for (auto& q : tx_) q.reserve(io_batch());
}

void complete_l4_checksum(wire::Bytes& f) {
  namespace off = wire::off;
  if (f.size() < off::udp || wire::get16(&f[off::eth_type]) != wire::kEtherTypeIpv4 || (f[off::ip] >> 4) != 4) return;
  const size_t ihl = static_cast<size_t>(f[off::ip] & 15) * 4;
  const uint8_t proto = f[off::ip_proto];
  const size_t l4 = off::ip + ihl;
  const size_t total = wire::get16(&f[off::ip_total_len]);
  if (ihl < 20 || total < ihl || off::ip + total > f.size()) return;
  const size_t len = total - ihl;
  size_t csum_off;
  if (proto == 17 && len >= 8)
    csum_off = l4 + 6;
  else if (proto == 6 && len >= 20)
    csum_off = l4 + 16;
  else
    return;
  // A fragment's L4 checksum covers the whole datagram: never touched here.
  if ((wire::get16(&f[off::ip_frag]) & 0x3FFF) != 0) return;
  uint32_t sum = 0;
  for (size_t i = off::ip_src; i < off::ip_dst + 4; i += 2) sum += wire::get16(&f[i]);
  sum += proto;
  sum += static_cast<uint32_t>(len);
  // Left to offload, the field holds the folded pseudo-header sum: anything else is a checksum
  // the sender computed (right or wrong), which the stand-in forwards as it is.
  uint32_t pseudo = sum;
  while (pseudo >> 16) pseudo = (pseudo & 0xFFFF) + (pseudo >> 16);
  if (wire::get16(&f[csum_off]) != pseudo) return;
  f[csum_off] = f[csum_off + 1] = 0;
  for (size_t i = 0; i + 1 < len; i += 2) sum += wire::get16(&f[l4 + i]);
  if (len & 1) sum += static_cast<uint32_t>(f[l4 + len - 1]) << 8;
  while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
  uint16_t c = static_cast<uint16_t>(~sum);
  if (proto == 17 && c == 0) c = 0xFFFF;
  wire::put16(&f[csum_off], c);
}

bool AfPacketFabric::fill(int port) {
  mmsghdr* mm = rb_.prepare();
  int r;
  do {
    r = recvmmsg(fds_[static_cast<size_t>(port)].get(), mm, io_batch(), MSG_TRUNC | MSG_DONTWAIT, nullptr);
  } while (r < 0 && errno == EINTR);
  if (r <= 0) return false;  // EAGAIN (nothing) or a transient error
  for (size_t k = 0; k < static_cast<size_t>(r); ++k) {
    msghdr& mh = mm[k].msg_hdr;
    if (rb_.from[k].sll_pkttype == PACKET_OUTGOING) continue;
    if (mm[k].msg_len > rb_.slot) continue;  // truncated: not deliverable as a frame
    bool partial = false;
    for (cmsghdr* c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
      if (c->cmsg_level == SOL_PACKET && c->cmsg_type == PACKET_AUXDATA) {
        tpacket_auxdata aux;
        std::memcpy(&aux, CMSG_DATA(c), sizeof aux);
        partial = aux.tp_status & TP_STATUS_CSUMNOTREADY;
      }
    const uint8_t* d = rb_.data(k);
    wire::Bytes f = bufs_.get();
    f.assign(d, d + mm[k].msg_len);
    if (partial && !agg_udp(d, mm[k].msg_len, agg_port_)) complete_l4_checksum(f);
    rx_[static_cast<size_t>(port)].push_back(std::move(f));
  }
  return true;
}

bool AfPacketFabric::try_recv(int port, wire::Bytes& f) {
  auto& q = rx_[static_cast<size_t>(port)];
  while (q.empty())
    if (!fill(port)) return false;
  bufs_.put(std::move(f));
  f = q.take_front();
  return true;
}

void AfPacketFabric::send(int port, const wire::Bytes& f) {
  wire::Bytes b = bufs_.copy(f);
  send_swap(port, b);
  bufs_.put(std::move(b));
}

void AfPacketFabric::send_swap(int port, wire::Bytes& f) {
  auto& q = tx_[static_cast<size_t>(port)];
  q.push_back(std::move(f));
  f = bufs_.get();
  if (q.size() >= io_batch()) flush_port(static_cast<size_t>(port));
}

void AfPacketFabric::flush() {
  for (size_t p = 0; p < tx_.size(); ++p) flush_port(p);
}

void AfPacketFabric::flush_port(size_t port) {
  auto& q = tx_[port];
  if (q.empty()) return;
  const int fd = fds_[port].get();
  if (iov_.size() < q.size()) {
    iov_.resize(q.size());
    mm_.resize(q.size());
  }
  std::vector<iovec>& iov = iov_;
  std::vector<mmsghdr>& mm = mm_;
  for (size_t i = 0; i < q.size(); ++i) {
    iov[i] = iovec{q[i].data(), q[i].size()};
    mm[i] = mmsghdr{};
    mm[i].msg_hdr.msg_iov = &iov[i];
    mm[i].msg_hdr.msg_iovlen = 1;
  }
  size_t done = 0;
  for (int tries = 0; done < q.size() && tries < 1000;) {
    const int r = sendmmsg(fd, mm.data() + done, static_cast<unsigned>(q.size() - done), 0);
    if (r > 0) {
      done += static_cast<size_t>(r);
      continue;
    }
    if (r < 0 && (errno == EAGAIN || errno == ENOBUFS || errno == EINTR)) {
      ++tries;
      pollfd p{fd, POLLOUT, 0};
      (void)poll(&p, 1, 1);
      continue;
    }
    // e.g. EMSGSIZE: a frame larger than the egress MTU is dropped, as a switch would; the
    // rest of the batch goes on.
    ++send_errors_;
    ++done;
  }
  send_errors_ += q.size() - done;
  for (auto& b : q) bufs_.put(std::move(b));
  q.clear();
}

void poll_until(std::vector<pollfd>& fds, Clock::time_point until) {
  const auto now = Clock::now();
  int ms = 0;
  if (until > now)
    ms = static_cast<int>(std::min<long long>(
        std::chrono::duration_cast<std::chrono::microseconds>(until - now).count() / 1000 + 1, 100));
  (void)poll(fds.data(), fds.size(), ms);
}

void AfPacketFabric::wait(Clock::time_point until) { poll_until(pfd_, until); }

}  // namespace panama::host
