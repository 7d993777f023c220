// The RTL harnesses' --live line protocol (standin/engines/live_protocol.h), served to any request
// stream: each request is handled or the server stops with one std::runtime_error line. The
// design behind it is a stand-in that checks what reaches it.
#include <cstdio>
#include <sstream>
#include <stdexcept>
#include <string>

#include "fuzz.h"
#include "live_protocol.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // The replies go to stdout; the fuzzer does not read them.
  if (!std::freopen("/dev/null", "w", stdout)) std::abort();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  live::Handlers h;
  h.ports = 4;
  uint64_t cycles = 0;
  h.inject = [&](int p, std::vector<uint8_t> f) {
    FUZZ_CHECK(p >= 0 && p < h.ports);
    FUZZ_CHECK(!f.empty());
  };
  h.run = [&] { cycles += 10; };
  h.advance = [&](uint64_t n) {
    FUZZ_CHECK(n > 0 && n <= live::kMaxAdvance);
    cycles += n;
  };
  h.outputs = [&] { live::put_frame(0, -1, {1, 2, 3}); };
  h.counters = [] { return std::string("{}"); };
  h.cycles = [&] { return cycles; };
  if (size & 1) {  // a design with a register port
    h.write = [](uint32_t, uint32_t) {};
    h.read = [](uint32_t a) { return a; };
  }
  std::istringstream in(text);
  try {
    live::serve(h, in);
  } catch (const std::runtime_error& e) {
    fuzz_check_message(e.what());
  }
  return 0;
}
