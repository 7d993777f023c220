// Built instead of dpdk_transport.cpp when libdpdk was not found (CMake option PANAMA_DPDK).
#include "dpdk_transport.h"

namespace panama::host {

bool dpdk_available() { return false; }

struct DpdkTransport::Impl {};

DpdkTransport::DpdkTransport(const RawParams& p) : RawTransport(p) {
  throw TransportError(
      "dpdk: this panama-host was built without DPDK (libdpdk not found by pkg-config at configure time: "
      "run scripts/setup, then configure again with -DPANAMA_DPDK=ON)");
}
DpdkTransport::~DpdkTransport() = default;
void DpdkTransport::send(const wire::Bytes&) {}
bool DpdkTransport::recv(wire::Bytes&, Clock::time_point) { return false; }
uint8_t* DpdkTransport::tx_begin(size_t) { return nullptr; }
void DpdkTransport::tx_end(size_t) {}
void DpdkTransport::flush() {}
std::vector<std::string> DpdkTransport::default_eal_args(const std::string&, bool, const std::string&) { return {}; }

}  // namespace panama::host
