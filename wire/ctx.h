// CTX.json (tools.md): the contexts a replay configures through the register interface.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "wire.h"

namespace panama::wire {

struct CtxEntry {
  uint16_t jid = 0;
  uint8_t tid = 0;
  std::vector<int> members;  // sorted, distinct
  bool multicast = true;
  Mac group_mac{};
  Ipv4 group_ip = 0;
  int upstream_port = -1;
  Mac src_mac{};
  Ipv4 src_ip = 0;
  uint32_t timeout_cycles = 0;
};

struct CtxFile {
  uint16_t agg_port = kDefaultAggPort;
  std::vector<CtxEntry> contexts;  // entry i = context index i
};

struct CtxError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Validates against the design (ports N, contexts C); throws CtxError with one clear line.
CtxFile parse_ctx(const nlohmann::json& j, int ports, int max_contexts);
CtxFile parse_ctx_text(const std::string& text, int ports, int max_contexts);
CtxFile load_ctx(const std::string& path, int ports, int max_contexts);
nlohmann::json to_json(const CtxFile& c);

}  // namespace panama::wire
