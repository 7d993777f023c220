// Built instead of xdp_transport.cpp when libxdp, libbpf or clang was not found at configure time.
#include "xdp_transport.h"

namespace panama::host {

struct XdpTransport::Impl {};
struct XdpTransport::Shared {};

XdpTransport::XdpTransport(const RawParams& p, int) : RawTransport(p) {
  throw TransportError(
      "xdp: this panama-host was built without AF_XDP (libxdp-dev, libbpf-dev or clang not found at configure time: "
      "run scripts/setup, then configure again)");
}
XdpTransport::XdpTransport(const RawParams& p, std::shared_ptr<Shared>, int) : XdpTransport(p, 0) {}
std::vector<std::unique_ptr<XdpTransport>> XdpTransport::open_shared(const RawParams& p, int, const std::vector<int>&) {
  XdpTransport t(p, 0);  // throws
  return {};
}
std::vector<std::unique_ptr<XdpTransport>> XdpTransport::open_switch_port(const RawParams& p, int,
                                                                          const std::vector<int>&) {
  XdpTransport t(p, 0);  // throws
  return {};
}
int XdpTransport::fd() const { return -1; }
std::string XdpTransport::datapath() const { return ""; }
XdpTransport::~XdpTransport() = default;
void XdpTransport::send(const wire::Bytes&) {}
bool XdpTransport::recv(wire::Bytes&, Clock::time_point) { return false; }
uint8_t* XdpTransport::tx_begin(size_t) { return nullptr; }
void XdpTransport::tx_end(size_t) {}
bool XdpTransport::recv_view(const uint8_t*&, size_t&, Clock::time_point) { return false; }
void XdpTransport::flush() {}

}  // namespace panama::host
