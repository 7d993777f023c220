// The controller's side of the stand-in's control socket (host_driver/controller.h): replies as
// they arrive in pieces (take_reply), the value of a "read" reply (parse_read_reply), and the
// register write list a user hands in (parse_writes, `controller --apply`). The first byte sets
// the size of the pieces.
#include <stdexcept>
#include <string>

#include "controller.h"
#include "fuzz.h"

using namespace panama;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const size_t piece = 1 + data[0] % 64;
  const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
  std::string buf;
  size_t lines = 0;
  for (size_t off = 0; off < text.size(); off += piece) {
    buf.append(text, off, piece);
    for (;;) {
      try {
        const auto r = host::take_reply(buf);
        if (!r) break;
        FUZZ_CHECK(r->find('\n') == std::string::npos);
        ++lines;
        try {
          (void)host::parse_read_reply(*r, "read 0x0");
        } catch (const std::runtime_error& e) {
          fuzz_check_message(e.what());
        }
      } catch (const std::runtime_error& e) {  // an "error ..." reply
        ++lines;
        FUZZ_CHECK(std::string(e.what()).rfind("stand-in: error", 0) == 0);
      }
    }
  }
  FUZZ_CHECK(buf.find('\n') == std::string::npos);
  try {
    for (const auto& w : host::parse_writes(text)) FUZZ_CHECK(w.comment.find('\n') == std::string::npos);
  } catch (const std::runtime_error& e) {
    fuzz_check_message(e.what());
  }
  return 0;
}
