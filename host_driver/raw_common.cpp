#include "raw_common.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace panama::host {

wire::Mac iface_mac(const std::string& iface) {
  if (iface.empty() || iface.size() >= IFNAMSIZ) throw TransportError("bad interface name '" + iface + "'");
  const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw TransportError(std::string("socket: ") + std::strerror(errno));
  ifreq r{};
  std::strncpy(r.ifr_name, iface.c_str(), IFNAMSIZ - 1);
  const int rc = ioctl(fd, SIOCGIFHWADDR, &r);
  const int err = errno;
  close(fd);
  if (rc != 0) throw TransportError("no interface '" + iface + "' (" + std::strerror(err) + ")");
  wire::Mac m{};
  std::memcpy(m.data(), r.ifr_hwaddr.sa_data, 6);
  return m;
}

bool iface_ipv4(const std::string& iface, wire::Ipv4& addr, wire::Ipv4& mask) {
  ifaddrs* ifa = nullptr;
  if (getifaddrs(&ifa) != 0) return false;
  bool found = false;
  for (ifaddrs* i = ifa; i && !found; i = i->ifa_next)
    if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET && iface == i->ifa_name) {
      addr = ntohl(reinterpret_cast<sockaddr_in*>(i->ifa_addr)->sin_addr.s_addr);
      mask = i->ifa_netmask ? ntohl(reinterpret_cast<sockaddr_in*>(i->ifa_netmask)->sin_addr.s_addr) : 0xFFFFFFFFu;
      found = true;
    }
  freeifaddrs(ifa);
  return found;
}

bool kernel_neighbour(const std::string& iface, wire::Ipv4 ip, wire::Mac& mac, bool* permanent) {
  // IP address  HW type  Flags  HW address  Mask  Device
  std::ifstream in("/proc/net/arp");
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::istringstream ss(line);
    std::string a, hwtype, flags, hw, mask, dev;
    if (!(ss >> a >> hwtype >> flags >> hw >> mask >> dev)) continue;
    if (dev != iface) continue;
    try {
      if (wire::parse_ipv4(a) != ip) continue;
      const unsigned long fl = std::stoul(flags, nullptr, 16);
      if (!(fl & 0x2)) continue;             // ATF_COM: resolved
      if (permanent) *permanent = fl & 0x4;  // ATF_PERM
      mac = wire::parse_mac(hw);
      return mac != wire::Mac{};
    } catch (const std::exception&) {
      continue;
    }
  }
  return false;
}

void set_kernel_neighbour(const std::string& iface, wire::Ipv4 ip, const wire::Mac& mac, bool permanent) {
  const unsigned idx = if_nametoindex(iface.c_str());
  if (idx == 0) throw TransportError("no interface '" + iface + "'");
  struct {
    nlmsghdr nh;
    ndmsg nd;
    char attrs[64];
  } req{};
  req.nh.nlmsg_len = NLMSG_LENGTH(sizeof(ndmsg));
  req.nh.nlmsg_type = RTM_NEWNEIGH;
  req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_CREATE | NLM_F_REPLACE | NLM_F_ACK;
  req.nd.ndm_family = AF_INET;
  req.nd.ndm_ifindex = static_cast<int>(idx);
  req.nd.ndm_state = permanent ? NUD_PERMANENT : NUD_REACHABLE;
  auto add_attr = [&](unsigned short type, const void* data, size_t len) {
    auto* a = reinterpret_cast<rtattr*>(reinterpret_cast<char*>(&req) + NLMSG_ALIGN(req.nh.nlmsg_len));
    a->rta_type = type;
    a->rta_len = static_cast<unsigned short>(RTA_LENGTH(len));
    std::memcpy(RTA_DATA(a), data, len);
    req.nh.nlmsg_len = NLMSG_ALIGN(req.nh.nlmsg_len) + RTA_ALIGN(a->rta_len);
  };
  const uint32_t dst = htonl(ip);
  add_attr(NDA_DST, &dst, 4);
  add_attr(NDA_LLADDR, mac.data(), 6);
  const int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
  if (fd < 0) throw TransportError(std::string("netlink socket: ") + std::strerror(errno));
  sockaddr_nl sa{};
  sa.nl_family = AF_NETLINK;
  int err = 0;
  if (sendto(fd, &req, req.nh.nlmsg_len, 0, reinterpret_cast<sockaddr*>(&sa), sizeof sa) < 0) {
    err = errno;
  } else {
    char buf[512];
    const ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n < 0) {
      err = errno;
    } else {
      auto* h = reinterpret_cast<nlmsghdr*>(buf);
      if (NLMSG_OK(h, static_cast<unsigned>(n)) && h->nlmsg_type == NLMSG_ERROR)
        err = -reinterpret_cast<nlmsgerr*>(NLMSG_DATA(h))->error;
    }
  }
  close(fd);
  if (err != 0)
    throw TransportError("restoring the neighbour entry " + wire::ipv4_to_string(ip) + " on " + iface + ": " +
                         std::strerror(err));
}

wire::Ipv4 next_hop(const std::string& iface, wire::Ipv4 dst) {
  wire::Ipv4 a = 0, m = 0;
  if (iface_ipv4(iface, a, m) && (a & m) == (dst & m)) return dst;
  // Iface Destination Gateway Flags RefCnt Use Metric Mask ... (hex, network order)
  std::ifstream in("/proc/net/route");
  std::string line;
  std::getline(in, line);
  int best_len = -1;
  wire::Ipv4 best = dst;
  while (std::getline(in, line)) {
    std::istringstream ss(line);
    std::string dev, d, g, flags, refcnt, use, metric, mask;
    if (!(ss >> dev >> d >> g >> flags >> refcnt >> use >> metric >> mask) || dev != iface) continue;
    const wire::Ipv4 rd = ntohl(static_cast<uint32_t>(std::stoul(d, nullptr, 16)));
    const wire::Ipv4 rg = ntohl(static_cast<uint32_t>(std::stoul(g, nullptr, 16)));
    const wire::Ipv4 rm = ntohl(static_cast<uint32_t>(std::stoul(mask, nullptr, 16)));
    if ((dst & rm) != rd) continue;
    const int len = __builtin_popcount(rm);
    if (len > best_len) {
      best_len = len;
      best = rg != 0 ? rg : dst;
    }
  }
  return best;
}

wire::Mac group_mac(wire::Ipv4 g) {
  return wire::Mac{
      0x01, 0x00, 0x5e, static_cast<uint8_t>((g >> 16) & 0x7f), static_cast<uint8_t>(g >> 8), static_cast<uint8_t>(g)};
}

bool is_result_frame(const uint8_t* f, size_t len, wire::Ipv4 group, uint16_t port) {
  if (len < wire::kHeaderBytes) return false;
  if (wire::get16(f + wire::off::eth_type) != wire::kEtherTypeIpv4 || f[wire::off::ip] != wire::kIpv4VerIhl ||
      f[wire::off::ip_proto] != wire::kIpProtoUdp)
    return false;
  return wire::get32(f + wire::off::ip_dst) == group && wire::get16(f + wire::off::udp_dport) == port;
}

wire::Bytes arp_request(const wire::Mac& src_mac, wire::Ipv4 src_ip, wire::Ipv4 target) {
  wire::Bytes f(60, 0);  // minimum Ethernet payload, padded
  for (int i = 0; i < 6; ++i) f[static_cast<size_t>(i)] = 0xff;
  std::memcpy(&f[6], src_mac.data(), 6);
  f[12] = 0x08;
  f[13] = 0x06;
  const uint8_t hdr[8] = {0, 1, 8, 0, 6, 4, 0, 1};  // Ethernet, IPv4, 6, 4, request
  std::memcpy(&f[14], hdr, 8);
  std::memcpy(&f[22], src_mac.data(), 6);
  wire::put32(&f[28], src_ip);
  wire::put32(&f[38], target);  // target MAC (32..37) zero
  return f;
}

bool arp_answer(const uint8_t* f, size_t len, wire::Ipv4 target, wire::Mac& mac) {
  if (len < 42 || f[12] != 0x08 || f[13] != 0x06) return false;
  if (wire::get16(f + 14) != 1 || wire::get16(f + 16) != 0x0800 || f[18] != 6 || f[19] != 4) return false;
  if (wire::get32(f + 28) != target) return false;  // sender protocol address
  std::memcpy(mac.data(), f + 22, 6);
  return true;
}

int rx_queues(const std::string& iface) {
  DIR* d = opendir(("/sys/class/net/" + iface + "/queues").c_str());
  if (!d) return 1;
  int n = 0;
  while (dirent* e = readdir(d))
    if (std::strncmp(e->d_name, "rx-", 3) == 0) ++n;
  closedir(d);
  return std::max(n, 1);
}

}  // namespace panama::host
