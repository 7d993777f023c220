// The frame parser and classifier (wire/wire.h) and the raw backends' frame filters
// (host_driver/raw_common.h) on any bytes: a received frame is attacker-controlled.
#include <string>

#include "fuzz.h"
#include "raw_common.h"
#include "wire.h"

using namespace panama;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const wire::Bytes f(data, data + size);
  const uint16_t port = size >= 2 ? wire::get16(data) : wire::kDefaultAggPort;
  for (uint16_t p : {wire::kDefaultAggPort, port}) {
    const wire::Class c = wire::classify(f, p);
    FUZZ_CHECK((c == wire::Class::runt) == (size < 14));
    if (c != wire::Class::aggregation) continue;
    for (int es : {2, 4}) {
      const int max_elems = 1450 / es;
      const wire::Validity v = wire::check_wellformed(f, es, max_elems);
      FUZZ_CHECK(std::string(wire::to_string(v)) != "?");
      if (v != wire::Validity::ok) continue;
      // Well-formed: the header reads back, the payload holds COUNT elements, and the frame the
      // accelerator builds from it is well-formed too.
      const wire::AggHeader h = wire::parse_header(f);
      FUZZ_CHECK(h.count >= 1 && h.count <= max_elems);
      FUZZ_CHECK(f.size() == wire::kHeaderBytes + static_cast<size_t>(es) * h.count);
      FUZZ_CHECK(wire::payload_elems(f, es).size() == h.count);
      const wire::Bytes sum(f.begin() + wire::off::payload, f.end());
      wire::BuildMode m;
      m.group_ip = 0xE0000001;
      for (bool mc : {true, false}) {
        m.multicast = mc;
        const wire::Bytes r = wire::build_result(f, sum, h.fin(), false, m);
        FUZZ_CHECK(wire::check_wellformed(r, es, max_elems) == wire::Validity::ok);
        FUZZ_CHECK(wire::ipv4_checksum_ok(r));
        FUZZ_CHECK(wire::parse_header(r).count == h.count);
      }
    }
  }
  try {
    const wire::AggHeader h = wire::parse_header(f);
    FUZZ_CHECK(size >= wire::kHeaderBytes);
    (void)h;
  } catch (const wire::WireError& e) {
    FUZZ_CHECK(size < wire::kHeaderBytes);
    fuzz_check_message(e.what());
  }
  if (size >= wire::off::udp) (void)wire::ipv4_checksum_ok(f);
  (void)wire::ecn(f);
  const wire::Ipv4 group = size >= 34 ? wire::get32(data + wire::off::ip_dst) : 0;
  if (host::is_result_frame(data, size, group, port)) FUZZ_CHECK(size >= wire::kHeaderBytes);
  wire::Mac mac{};
  if (host::arp_answer(data, size, size >= 32 ? wire::get32(data + 28) : 0, mac)) FUZZ_CHECK(size >= 42);
  // Addresses as a user types them (CTX.json, --group, --fdb).
  const std::string s(reinterpret_cast<const char*>(data), size);
  try {
    FUZZ_CHECK(wire::parse_mac(s) == wire::parse_mac(wire::mac_to_string(wire::parse_mac(s))));
  } catch (const wire::WireError& e) {
    fuzz_check_message(e.what());
  }
  try {
    const wire::Ipv4 a = wire::parse_ipv4(s);
    FUZZ_CHECK(wire::parse_ipv4(wire::ipv4_to_string(a)) == a);
  } catch (const wire::WireError& e) {
    fuzz_check_message(e.what());
  }
  return 0;
}
