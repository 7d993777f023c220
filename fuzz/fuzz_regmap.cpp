// The controller's register map loader (host_driver/controller.h parse_regmap) on any text, and
// what the controller then does with the layout: plan a whole table's writes, read the table,
// the counters and the identity back through a register file that answers anything.
#include <stdexcept>
#include <string>

#include "controller.h"
#include "fuzz.h"

using namespace panama;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  host::RegLayout l;
  try {
    l = host::parse_regmap(text, "regmap.json");
  } catch (const std::runtime_error& e) {
    fuzz_check_message(e.what());
    return 0;
  }
  FUZZ_CHECK(l.ports >= 1 && l.contexts >= 1 && l.member_words == (l.ports + 31) / 32);
  auto read = [&](uint32_t a) { return a * 2654435761u; };
  try {
    host::ProgramPlan p;
    p.whole_table = true;
    p.agg_port = 9056;
    wire::CtxEntry e;
    e.members = {0, l.ports - 1};
    e.group_ip = 0xE0000001;
    p.program.push_back({l.contexts - 1, e});
    const auto w = host::plan_writes(l, p);
    FUZZ_CHECK(!w.empty());
    FUZZ_CHECK(host::parse_writes(host::format_writes(w)).size() == w.size());
    (void)host::read_table(l, read);
    (void)host::read_counters(l, read);
    (void)host::check_identity(l, read);
  } catch (const std::runtime_error& e) {
    fuzz_check_message(e.what());
  }
  return 0;
}
