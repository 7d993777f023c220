// The contexts file (wire/ctx.h, CTX.json) on any text: a CtxFile that validates against the
// design, or one CtxError. The first byte picks the design's ports and contexts.
#include <string>

#include "ctx.h"
#include "fuzz.h"

using namespace panama;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const int ports = 2 + (data[0] & 0x0F), contexts = 1 + (data[0] >> 4);
  const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
  try {
    const wire::CtxFile c = wire::parse_ctx_text(text, ports, contexts);
    FUZZ_CHECK(static_cast<int>(c.contexts.size()) <= contexts);
    for (const auto& e : c.contexts) {
      FUZZ_CHECK(!e.members.empty());
      for (int m : e.members) FUZZ_CHECK(m >= 0 && m < ports);
      if (!e.multicast) FUZZ_CHECK(e.upstream_port >= 0 && e.upstream_port < ports);
    }
    // What it writes back reads the same.
    const nlohmann::json j = wire::to_json(c);
    FUZZ_CHECK(wire::to_json(wire::parse_ctx(j, ports, contexts)) == j);
  } catch (const wire::CtxError& e) {
    fuzz_check_message(e.what());
  }
  return 0;
}
