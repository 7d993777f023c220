// What the raw-frame backends (`tins`, `dpdk`) share (docs/host.md "Backends"): they send whole
// wire-format frames, so they need what the kernel resolves for the udp backend: the
// interface's MAC and IPv4 address and the next hop's MAC (the aggregator's, or the gateway's
// when the aggregator is off-link), and they filter the received frames to the job's results.
#pragma once

#include <string>

#include "transport.h"
#include "wire.h"

namespace panama::host {

struct RawParams {
  std::string iface;        // interface towards the accelerator
  wire::Ipv4 agg_ip = 0;    // the aggregator's (tree root's) address: ipv4.dst of contributions
  wire::Ipv4 group_ip = 0;  // the job's group address: ipv4.dst of results
  uint16_t port = wire::kDefaultAggPort;
  std::string agg_mac;  // eth.dst of contributions; empty: resolved (resolve_next_hop)
  std::string eal;      // dpdk: EAL arguments; empty: derived from iface (dpdk_transport.h)
};

// What the raw-frame backends (tins, dpdk) have in common: their parameters and the addresses the
// worker's frames carry (this interface's IPv4 and MAC, the next hop's MAC).
class RawTransport : public Transport {
 public:
  explicit RawTransport(const RawParams& p) : p_(p) {}
  wire::Ipv4 local_ip() const { return local_ip_; }
  const wire::Mac& local_mac() const { return local_mac_; }
  const wire::Mac& agg_mac() const { return agg_mac_; }

 protected:
  RawParams p_;
  wire::Ipv4 local_ip_ = 0;
  wire::Mac local_mac_{}, agg_mac_{};
};

// The receive queues the kernel uses on the interface (/sys/class/net/IF/queues/rx-*; 1 when
// it has none listed).
int rx_queues(const std::string& iface);
// The interface's MAC (SIOCGIFHWADDR); throws TransportError.
wire::Mac iface_mac(const std::string& iface);
// The interface's first IPv4 address and its netmask (getifaddrs); false when it has none.
bool iface_ipv4(const std::string& iface, wire::Ipv4& addr, wire::Ipv4& mask);
// The kernel's neighbour entry for ip on iface (/proc/net/arp, complete entries only);
// *permanent (when given) tells whether it is a static (PERMANENT) entry.
bool kernel_neighbour(const std::string& iface, wire::Ipv4 ip, wire::Mac& mac, bool* permanent = nullptr);
// Installs a neighbour entry (rtnetlink RTM_NEWNEIGH, replace): PERMANENT or REACHABLE. Throws
// TransportError.
void set_kernel_neighbour(const std::string& iface, wire::Ipv4 ip, const wire::Mac& mac, bool permanent);
// The next hop towards dst from iface: dst itself when it is on the interface's subnet, else the
// gateway of the matching route on iface (/proc/net/route). Returns dst when no route says more.
wire::Ipv4 next_hop(const std::string& iface, wire::Ipv4 dst);
// RFC 1112: 01:00:5e + the low 23 bits of the group address.
wire::Mac group_mac(wire::Ipv4 group);
// Whether a received frame is one of the job's results: IPv4 (no VLAN), protocol UDP, ipv4.dst =
// group and UDP destination port = port, at least the 64 header bytes.
bool is_result_frame(const uint8_t* f, size_t len, wire::Ipv4 group, uint16_t port);

// ARP (RFC 826) over Ethernet for raw backends that cannot ask the kernel.
wire::Bytes arp_request(const wire::Mac& src_mac, wire::Ipv4 src_ip, wire::Ipv4 target);
// True when f is an ARP reply (or request) from `target` giving its MAC.
bool arp_answer(const uint8_t* f, size_t len, wire::Ipv4 target, wire::Mac& mac);

}  // namespace panama::host
