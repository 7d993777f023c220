// The host library's backends by name (docs/host.md "Backends"): udp leaves L2-L4 to the kernel;
// tins, dpdk and xdp send the frames the protocol builds as they are, addressed to the next hop's
// MAC from this interface. panama-host worker (--backend) and panama_torch (PANAMA_BACKEND) open
// their link through this one table (library panama_backends).
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "allreduce.h"
#include "raw_common.h"
#include "transport.h"

namespace panama::host {

// Where the link goes, as the front ends take it (addresses as text).
struct LinkOptions {
  std::string iface;
  uint16_t port = wire::kDefaultAggPort;
  std::string agg_ip, group_ip;
  std::string agg_mac;  // tins, dpdk, xdp: eth.dst of contributions (empty: resolved)
  std::string eal;      // dpdk: EAL arguments (empty: derived from the interface)
};

// Opens the link and fills p's frame addresses (ip_src, ip_dst; the raw ones eth_src, eth_dst).
using BackendOpener = std::unique_ptr<Transport> (*)(const LinkOptions& o, JobParams& p);

// udp, tins, dpdk, xdp (a backend added to the host library is one more entry here).
const std::vector<std::pair<std::string, BackendOpener>>& backends();
// "udp, tins, dpdk or xdp".
std::string backend_names();
// The opener of NAME; nullptr when there is no such backend.
BackendOpener find_backend(const std::string& name);

// The raw backends' parameters, and the addresses a raw backend found (its own IPv4 and MAC, the
// aggregator's MAC) into p.
RawParams raw_params(const LinkOptions& o);
void take_addresses(JobParams& p, const RawTransport& t);

}  // namespace panama::host
