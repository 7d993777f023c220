#include "ctx.h"

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

namespace panama::wire {

using nlohmann::json;

namespace {

// Integer of a JSON value in [lo, hi]; `what` names the field for the message.
int64_t get_int(const json& v, const std::string& what, int64_t lo, int64_t hi) {
  if (!v.is_number_integer() && !v.is_number_unsigned()) throw CtxError(what + " must be an integer, got " + v.dump());
  const int64_t x =
      v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX) ? INT64_MAX : v.get<int64_t>();
  if (x < lo || x > hi)
    throw CtxError(what + " must be between " + std::to_string(lo) + " and " + std::to_string(hi) + ", got " +
                   std::to_string(x));
  return x;
}

std::string get_str(const json& v, const std::string& what) {
  if (!v.is_string()) throw CtxError(what + " must be a string, got " + v.dump());
  return v.get<std::string>();
}

}  // namespace

CtxFile parse_ctx(const json& j, int ports, int max_contexts) {
  if (!j.is_object()) throw CtxError("CTX.json must be a JSON object");
  CtxFile out;
  for (auto it = j.begin(); it != j.end(); ++it)
    if (it.key() != "agg_port" && it.key() != "contexts")
      throw CtxError("unknown field '" + printable(it.key()) + "' (expected agg_port, contexts)");
  if (j.contains("agg_port")) out.agg_port = static_cast<uint16_t>(get_int(j["agg_port"], "agg_port", 1, 65535));
  if (!j.contains("contexts")) throw CtxError("missing field 'contexts'");
  const json& arr = j["contexts"];
  if (!arr.is_array()) throw CtxError("'contexts' must be an array");
  if (static_cast<int>(arr.size()) > max_contexts)
    throw CtxError(std::to_string(arr.size()) + " contexts given but the design has only " +
                   std::to_string(max_contexts));
  std::set<std::pair<int, int>> seen;
  static const std::set<std::string> common = {"jid", "tid", "members", "mode", "timeout_cycles"};
  static const std::set<std::string> mcast = {"group_mac", "group_ip"};
  static const std::set<std::string> up = {"upstream_port", "src_mac", "src_ip"};
  for (size_t i = 0; i < arr.size(); ++i) {
    const json& e = arr[i];
    const std::string where = "context " + std::to_string(i) + ": ";
    try {
      if (!e.is_object()) throw CtxError("must be a JSON object");
      for (auto it = e.begin(); it != e.end(); ++it)
        if (!common.count(it.key()) && !mcast.count(it.key()) && !up.count(it.key()))
          throw CtxError("unknown field '" + printable(it.key()) + "'");
      for (const char* k : {"jid", "tid", "members", "mode"})
        if (!e.contains(k)) throw CtxError(std::string("missing field '") + k + "'");
      CtxEntry c;
      c.jid = static_cast<uint16_t>(get_int(e["jid"], "jid", 0, 65535));
      c.tid = static_cast<uint8_t>(get_int(e["tid"], "tid", 0, 255));
      if (!e["members"].is_array()) throw CtxError("'members' must be an array of port numbers");
      if (e["members"].empty()) throw CtxError("'members' is empty (a context needs at least one member port)");
      for (const json& m : e["members"]) {
        const int p = static_cast<int>(get_int(m, "member port", 0, ports - 1));
        if (std::find(c.members.begin(), c.members.end(), p) != c.members.end())
          throw CtxError("member port " + std::to_string(p) + " is listed twice");
        c.members.push_back(p);
      }
      std::sort(c.members.begin(), c.members.end());
      const std::string mode = get_str(e["mode"], "mode");
      if (mode != "multicast" && mode != "upstream")
        throw CtxError("mode must be \"multicast\" or \"upstream\", got \"" + printable(mode) + "\"");
      c.multicast = mode == "multicast";
      const auto& need = c.multicast ? mcast : up;
      const auto& other = c.multicast ? up : mcast;
      for (const auto& k : need)
        if (!e.contains(k)) throw CtxError("missing field '" + k + "' required by " + mode + " mode");
      for (const auto& k : other)
        if (e.contains(k)) throw CtxError("field '" + k + "' does not apply to " + mode + " mode");
      try {
        if (c.multicast) {
          c.group_mac = parse_mac(get_str(e["group_mac"], "group_mac"));
          c.group_ip = parse_ipv4(get_str(e["group_ip"], "group_ip"));
        } else {
          c.upstream_port = static_cast<int>(get_int(e["upstream_port"], "upstream_port", 0, ports - 1));
          if (std::find(c.members.begin(), c.members.end(), c.upstream_port) != c.members.end())
            throw CtxError("upstream_port " + std::to_string(c.upstream_port) + " is also a member port");
          c.src_mac = parse_mac(get_str(e["src_mac"], "src_mac"));
          c.src_ip = parse_ipv4(get_str(e["src_ip"], "src_ip"));
        }
      } catch (const WireError& w) {
        throw CtxError(w.what());
      }
      if (e.contains("timeout_cycles"))
        c.timeout_cycles = static_cast<uint32_t>(get_int(e["timeout_cycles"], "timeout_cycles", 0, 0xFFFFFFFFll));
      if (!seen.insert({c.jid, c.tid}).second)
        throw CtxError("duplicate (jid " + std::to_string(c.jid) + ", tid " + std::to_string(c.tid) + ")");
      out.contexts.push_back(std::move(c));
    } catch (const CtxError& err) {
      throw CtxError(where + err.what());
    }
  }
  return out;
}

CtxFile parse_ctx_text(const std::string& text, int ports, int max_contexts) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {  // parse_error, and out_of_range for a number like 1e999
    throw CtxError(std::string("not valid JSON: ") + e.what());
  }
  return parse_ctx(j, ports, max_contexts);
}

CtxFile load_ctx(const std::string& path, int ports, int max_contexts) {
  std::ifstream in(path);
  if (!in) throw CtxError(path + ": cannot open");
  std::stringstream ss;
  ss << in.rdbuf();
  try {
    return parse_ctx_text(ss.str(), ports, max_contexts);
  } catch (const CtxError& e) {
    throw CtxError(path + ": " + e.what());
  }
}

json to_json(const CtxFile& c) {
  json j;
  j["agg_port"] = c.agg_port;
  j["contexts"] = json::array();
  for (const auto& e : c.contexts) {
    json x = {{"jid", e.jid},
              {"tid", e.tid},
              {"members", e.members},
              {"mode", e.multicast ? "multicast" : "upstream"},
              {"timeout_cycles", e.timeout_cycles}};
    if (e.multicast) {
      x["group_mac"] = mac_to_string(e.group_mac);
      x["group_ip"] = ipv4_to_string(e.group_ip);
    } else {
      x["upstream_port"] = e.upstream_port;
      x["src_mac"] = mac_to_string(e.src_mac);
      x["src_ip"] = ipv4_to_string(e.src_ip);
    }
    j["contexts"].push_back(x);
  }
  return j;
}

}  // namespace panama::wire
