#include "backends.h"

#include "dpdk_transport.h"
#include "tins_transport.h"
#include "udp_transport.h"
#include "xdp_transport.h"

namespace panama::host {

namespace {

std::unique_ptr<Transport> open_udp(const LinkOptions& o, JobParams& p) {
  UdpParams up;
  up.iface = o.iface;
  up.port = o.port;
  up.agg_ip = wire::parse_ipv4(o.agg_ip);
  up.group_ip = wire::parse_ipv4(o.group_ip);
  auto t = std::make_unique<UdpTransport>(up);
  p.ip_src = t->local_ip();
  p.ip_dst = up.agg_ip;
  return t;
}

template <class T>
std::unique_ptr<Transport> open_raw(const LinkOptions& o, JobParams& p) {
  const RawParams rp = raw_params(o);
  auto t = std::make_unique<T>(rp);
  take_addresses(p, *t);
  p.ip_dst = rp.agg_ip;
  return t;
}

}  // namespace

const std::vector<std::pair<std::string, BackendOpener>>& backends() {
  static const std::vector<std::pair<std::string, BackendOpener>> v = {
      {"udp", open_udp},
      {"tins", open_raw<TinsTransport>},
      {"dpdk", open_raw<DpdkTransport>},
      {"xdp", open_raw<XdpTransport>},
  };
  return v;
}

std::string backend_names() {
  std::string s;
  const auto& v = backends();
  for (size_t i = 0; i < v.size(); ++i) s += (i == 0 ? "" : i + 1 == v.size() ? " or " : ", ") + v[i].first;
  return s;
}

BackendOpener find_backend(const std::string& name) {
  for (const auto& [n, fn] : backends())
    if (n == name) return fn;
  return nullptr;
}

RawParams raw_params(const LinkOptions& o) {
  RawParams rp;
  rp.iface = o.iface;
  rp.port = o.port;
  rp.agg_ip = wire::parse_ipv4(o.agg_ip);
  rp.group_ip = wire::parse_ipv4(o.group_ip);
  rp.agg_mac = o.agg_mac;
  rp.eal = o.eal;
  return rp;
}

void take_addresses(JobParams& p, const RawTransport& t) {
  p.ip_src = t.local_ip();
  p.eth_src = t.local_mac();
  p.eth_dst = t.agg_mac();
}

}  // namespace panama::host
