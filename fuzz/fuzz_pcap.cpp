// The pcap reader (wire/pcap_io.h) on any file: every record read, or one WireError.
#include "fuzz.h"
#include "pcap_io.h"

using namespace panama;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const auto recs = wire::read_pcap_bytes(data, size, "in.pcap");
    size_t bytes = 0;
    for (const auto& r : recs) bytes += r.data.size();
    FUZZ_CHECK(bytes <= size);  // every frame byte came from the file
  } catch (const wire::WireError& e) {
    fuzz_check_message(e.what());
  }
  return 0;
}
