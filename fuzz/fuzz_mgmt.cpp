// The management codec on the host side (host_driver/mgmt_client.h): key files, and response
// datagrams from the network. The first byte picks what the rest is:
//   0: a key file's text (parse_mgmt_key)
//   1: a response datagram as received (the tag almost never verifies: the early checks)
//   2: a response datagram whose tag is made valid first, under the key the client holds (the
//      parser past the tag: its length and field checks)
//   3: up to 8 operations, 9 bytes each (code, addr, value), built into a request
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "fuzz.h"
#include "mgmt_client.h"

using namespace panama;

namespace {

uint64_t le64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= uint64_t(p[i]) << (8 * i);
  return v;
}

const host::MgmtKey kKey = {0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
                            0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const uint8_t mode = data[0] & 3;
  std::vector<uint8_t> d(data + 1, data + size);
  if (mode == 0) {
    try {
      const host::MgmtKey k = host::parse_mgmt_key(std::string(d.begin(), d.end()), "key");
      (void)k;
    } catch (const std::runtime_error& e) {
      fuzz_check_message(e.what());
    }
    return 0;
  }
  if (mode == 3) {
    std::vector<host::MgmtOp> ops;
    for (size_t i = 0; i + 9 <= d.size() && ops.size() < host::kMgmtMaxOps; i += 9) {
      host::MgmtOp o;
      o.code = d[i];
      std::memcpy(&o.addr, &d[i + 1], 4);
      std::memcpy(&o.value, &d[i + 5], 4);
      ops.push_back(o);
    }
    const auto req = host::mgmt_request(kKey, 7, 42, ops);
    FUZZ_CHECK(req.size() == 8 * (3 + 2 * ops.size()));
    FUZZ_CHECK(host::siphash24(kKey, req.data(), req.size() - 8) == le64(req.data() + req.size() - 8));
    return 0;
  }
  // The request the client waits for: its ID and sequence number are the datagram's own (the
  // magic word's high half, the second word) so that the fuzzer can match them.
  const uint32_t id = d.size() >= 8 ? static_cast<uint32_t>(le64(d.data()) >> 32) : 0;
  const uint64_t seq = d.size() >= 16 ? le64(d.data() + 8) : 0;
  if (mode == 2 && d.size() >= 8) {
    const uint64_t tag = host::siphash24(kKey, d.data(), d.size() - 8);
    for (int i = 0; i < 8; ++i) d[d.size() - 8 + static_cast<size_t>(i)] = static_cast<uint8_t>(tag >> (8 * i));
  }
  for (size_t nops = 0; nops <= host::kMgmtMaxOps; ++nops) {
    std::vector<host::MgmtResult> out;
    if (host::mgmt_parse_response(kKey, d.data(), d.size(), id, seq, nops, out)) {
      FUZZ_CHECK(d.size() == 8 * (nops + 3));
      FUZZ_CHECK(out.size() == nops);
      for (size_t i = 0; i < nops; ++i) FUZZ_CHECK(out[i].value == static_cast<uint32_t>(le64(&d[16 + 8 * i]) >> 32));
    }
  }
  return 0;
}
