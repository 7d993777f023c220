#include "xdp_fabric.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "afpacket.h"

namespace panama::host {

XdpFabric::XdpFabric(std::vector<XdpTransport*> ports, uint16_t agg_port)
    : ports_(std::move(ports)), agg_port_(agg_port) {
  for (auto* p : ports_) pfd_.push_back(pollfd{p->fd(), POLLIN, 0});
}

bool XdpFabric::try_recv(int port, wire::Bytes& f) {
  const uint8_t* d = nullptr;
  size_t len = 0;
  // A deadline in the past: what the rx ring holds now, no waiting.
  if (!ports_[static_cast<size_t>(port)]->recv_view(d, len, Clock::time_point::min())) return false;
  f.assign(d, d + len);
  if (!agg_udp(d, len, agg_port_)) complete_l4_checksum(f);
  return true;
}

void XdpFabric::send(int port, const wire::Bytes& f) {
  if (f.size() > XdpTransport::kMaxFrame || f.empty()) {
    ++send_errors_;
    return;
  }
  XdpTransport& x = *ports_[static_cast<size_t>(port)];
  std::memcpy(x.tx_begin(f.size()), f.data(), f.size());
  x.tx_end(f.size());
}

void XdpFabric::flush() {
  for (auto* p : ports_) p->flush();
}

void XdpFabric::wait(Clock::time_point until) { poll_until(pfd_, until); }

XdpPorts::XdpPorts(const std::vector<std::string>& ifaces, int threads, uint16_t agg_port,
                   const std::vector<int>& tid_thread)
    : agg_port_(agg_port) {
  for (const auto& name : ifaces) {
    RawParams p;
    p.iface = name;
    p.port = agg_port;
    socks_.push_back(XdpTransport::open_switch_port(p, threads, tid_thread));
  }
}

std::unique_ptr<XdpFabric> XdpPorts::fabric(int thread) const {
  std::vector<XdpTransport*> v;
  for (const auto& s : socks_) v.push_back(s[static_cast<size_t>(thread)].get());
  return std::make_unique<XdpFabric>(std::move(v), agg_port_);
}

std::string XdpPorts::mode() const { return socks_.empty() ? "" : socks_.front().front()->datapath(); }

}  // namespace panama::host
