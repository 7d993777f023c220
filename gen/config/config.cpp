#include "config.h"

#include <cmath>
#include <sstream>

#include "estimate.h"
#include "exactsum.h"
#include "fpadd.h"
#include "protocol.h"

namespace panama {

const char* const kGeneratorVersion = "panama-gen 0.1.0";

FormatInfo format_info(Format f) {
  const FormatBits b = format_bits(f);
  return {b.width / 8, b.exp_bits, b.frac_bits, b.qnan};
}

std::string to_string(Subnormals s) { return s == Subnormals::ieee ? "ieee" : "ftz"; }

Subnormals parse_subnormals(const std::string& s) {
  if (s == "ieee") return Subnormals::ieee;
  if (s == "ftz") return Subnormals::ftz;
  throw ConfigError("unknown subnormal mode '" + s + "' (expected ieee or ftz)");
}

static std::string fmt_num(double v) {
  std::ostringstream os;
  os << v;  // shortest natural form: 10, 2.5, 156.25
  return os.str();
}

Config Config::derive(const Inputs& in) {
  Config c;
  c.in = in;
  if (in.ports < 2 || in.ports > 256)
    throw ConfigError("--ports must be between 2 and 256, got " + std::to_string(in.ports));
  if (!(in.gbps > 0) || !std::isfinite(in.gbps))
    throw ConfigError("--gbps must be a positive number, got " + fmt_num(in.gbps));
  if (!(in.mhz > 0) || !std::isfinite(in.mhz))
    throw ConfigError("--mhz must be a positive number, got " + fmt_num(in.mhz));
  if (in.contexts < 1) throw ConfigError("--contexts must be at least 1, got " + std::to_string(in.contexts));
  if (in.contexts > 256) throw ConfigError("--contexts must be at most 256, got " + std::to_string(in.contexts));
  if (in.buffer_kib < 1) throw ConfigError("--buffer-kib must be at least 1, got " + std::to_string(in.buffer_kib));
  if (in.buffer_kib > 1024 * 1024) throw ConfigError("--buffer-kib must be at most 1048576");
  if (in.module != "top" && in.module != "addtree")
    throw ConfigError("--module must be top or addtree, got '" + in.module + "'");
  if (in.sum != "tree" && in.sum != "exact") throw ConfigError("--sum must be tree or exact, got '" + in.sum + "'");
  if (in.prefix.empty() || !(std::isalpha(static_cast<unsigned char>(in.prefix[0])) || in.prefix[0] == '_'))
    throw ConfigError("--prefix must be a Verilog identifier, got '" + in.prefix + "'");
  for (char ch : in.prefix)
    if (!(std::isalnum(static_cast<unsigned char>(ch)) || ch == '_'))
      throw ConfigError("--prefix must be a Verilog identifier, got '" + in.prefix + "'");

  c.fmt = format_info(in.format);
  const int es = c.fmt.elem_bytes;
  c.elem_bits = 8 * es;

  // Smallest power-of-two bus >= 64 bits that carries the rate at the clock.
  const double need_bits = in.gbps * 1e3 / in.mhz;  // bits per cycle
  int w = 64;
  while (w < 4096 && w + 1e-9 < need_bits) w *= 2;
  if (w + 1e-9 < need_bits)
    throw ConfigError("no bus up to 4096 bits carries " + fmt_num(in.gbps) + " Gbit/s at " + fmt_num(in.mhz) +
                      " MHz (needs " + fmt_num(std::ceil(need_bits)) + " bits per cycle)");
  c.bus_bits = w;
  c.bus_bytes = w / 8;
  c.lanes = w / c.elem_bits;

  const int max_allowed = (proto::kMaxIpTotalLen - proto::kIpHeaderBudget) / es;
  c.max_elems = in.max_elems < 0 ? proto::kDefaultPayloadBytes / es : in.max_elems;
  if (c.max_elems < 1 || c.max_elems > max_allowed)
    throw ConfigError("--max-elems must be between 1 and " + std::to_string(max_allowed) + " for " +
                      to_string(in.format) + ", got " + std::to_string(c.max_elems));
  c.buffer_bytes = static_cast<long>(in.buffer_kib) * 1024;
  c.bypass_bytes = c.buffer_bytes / 2;
  c.contribution_bytes = c.buffer_bytes - c.bypass_bytes;
  c.max_frame_bytes = 64 + es * c.max_elems;
  if (static_cast<long>(in.contexts) * c.max_frame_bytes > c.buffer_bytes / 2)
    throw ConfigError(std::to_string(in.contexts) + " contexts x " + std::to_string(c.max_frame_bytes) +
                      "-byte frames do not fit in half of a " + std::to_string(c.buffer_bytes) +
                      "-byte port buffer (lower --contexts or --max-elems, or raise --buffer-kib)");

  c.tree_leaves = 1;
  c.tree_levels = 0;
  while (c.tree_leaves < in.ports) {
    c.tree_leaves *= 2;
    c.tree_levels += 1;
  }
  c.adder = plan_fpadd(c.fmt, in.subnormals, in.mhz);
  c.addtree_latency = c.tree_levels * c.adder.latency;
  if (c.exact_sum()) {
    c.exact = plan_exact(c.fmt, in.subnormals, in.ports, in.mhz);
    c.addtree_latency = c.exact.latency;
  }
  // Contracts for the full datapath (accelerator.md, performance): fixed cycle counts from the
  // last beat in to the first beat out on an idle transmit port. See docs/architecture.md.
  // (docs/rtl.md, "Latencies": the registered mPP / m_agg outputs add one cycle each; the
  // scheduler's look at a context seven: the head's change noted, the pick, the ports' address
  // and block RAM read, A1, A2 and the decision.)
  c.desc_stages = in.mhz > 250 ? 2 : 1;
  c.bypass_latency = 4 + c.desc_stages;
  c.agg_latency = c.addtree_latency + 11 + c.desc_stages;
  c.resources = estimate_resources(c);
  return c;
}

namespace {

// config.json's fields, strictly: an integer field is a JSON integer in range (not 2.5, not
// 1e300, not a string), a number field is a finite JSON number.
const nlohmann::json& field(const nlohmann::json& j, const char* name) {
  if (!j.is_object()) throw ConfigError("config.json: not a JSON object");
  const auto it = j.find(name);
  if (it == j.end()) throw ConfigError(std::string("config.json: missing field '") + name + "'");
  return *it;
}

long long int_field(const nlohmann::json& j, const char* name, long long lo, long long hi) {
  const nlohmann::json& v = field(j, name);
  const bool in_range =
      (v.is_number_unsigned() && v.get<unsigned long long>() <= static_cast<unsigned long long>(hi) &&
       static_cast<long long>(v.get<unsigned long long>()) >= lo) ||
      (v.is_number_integer() && !v.is_number_unsigned() && v.get<long long>() >= lo && v.get<long long>() <= hi);
  if (!in_range)
    throw ConfigError(std::string("config.json: '") + name + "' must be an integer from " + std::to_string(lo) +
                      " to " + std::to_string(hi) + ", got " + v.dump());
  return v.is_number_unsigned() ? static_cast<long long>(v.get<unsigned long long>()) : v.get<long long>();
}

double num_field(const nlohmann::json& j, const char* name) {
  const nlohmann::json& v = field(j, name);
  if (!v.is_number() || !std::isfinite(v.get<double>()))
    throw ConfigError(std::string("config.json: '") + name + "' must be a number, got " + v.dump());
  return v.get<double>();
}

std::string str_field(const nlohmann::json& j, const char* name) {
  const nlohmann::json& v = field(j, name);
  if (!v.is_string()) throw ConfigError(std::string("config.json: '") + name + "' must be a string, got " + v.dump());
  // Every string here is a name (a format, a mode, a Verilog prefix): a control byte is refused
  // here, before a message could echo it over two lines.
  for (const char c : v.get_ref<const std::string&>())
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
      throw ConfigError(std::string("config.json: '") + name + "' holds a control character: " + v.dump());
  return v.get<std::string>();
}

}  // namespace

Config Config::from_json(const nlohmann::json& j) {
  // The ranges here only keep the numbers representable; derive() checks the real limits.
  constexpr long long kIntMax = 0x7fffffff;
  Inputs in;
  in.ports = static_cast<int>(int_field(j, "ports", -kIntMax, kIntMax));
  in.gbps = num_field(j, "gbps");
  in.mhz = num_field(j, "mhz");
  try {
    in.format = parse_format(str_field(j, "format"));
  } catch (const FormatError& e) {
    throw ConfigError(e.what());
  }
  in.subnormals = parse_subnormals(str_field(j, "subnormals"));
  in.contexts = static_cast<int>(int_field(j, "contexts", -kIntMax, kIntMax));
  in.max_elems = static_cast<int>(int_field(j, "max_elems", -kIntMax, kIntMax));
  const long long buffer = int_field(j, "buffer_bytes", 1024, 1024LL * 1024 * 1024);
  if (buffer % 1024)
    throw ConfigError("config.json: 'buffer_bytes' must be a multiple of 1024, got " + std::to_string(buffer));
  in.buffer_kib = static_cast<int>(buffer / 1024);
  in.prefix = str_field(j, "prefix");
  in.module = str_field(j, "module");
  in.sum = j.is_object() && j.contains("sum") ? str_field(j, "sum") : "tree";  // outputs older than exact-sum mode
  return derive(in);
}

nlohmann::json Config::to_json() const {
  nlohmann::json j;
  j["generator"] = kGeneratorVersion;
  j["command"] = command_line();
  j["ports"] = in.ports;
  j["gbps"] = in.gbps;
  j["mhz"] = in.mhz;
  j["format"] = to_string(in.format);
  j["elem_bytes"] = fmt.elem_bytes;
  j["exp_bits"] = fmt.exp_bits;
  j["frac_bits"] = fmt.frac_bits;
  j["subnormals"] = to_string(in.subnormals);
  j["sum"] = in.sum;
  j["contexts"] = in.contexts;
  j["max_elems"] = max_elems;
  j["buffer_bytes"] = buffer_bytes;
  j["bypass_bytes"] = bypass_bytes;
  j["max_frame_bytes"] = max_frame_bytes;
  j["prefix"] = in.prefix;
  j["module"] = in.module;
  j["top"] = top_name();
  j["bus_bits"] = bus_bits;
  j["lanes"] = lanes;
  j["tree_leaves"] = tree_leaves;
  j["tree_levels"] = tree_levels;
  j["fpadd_latency"] = adder.latency;
  nlohmann::json steps = nlohmann::json::array();
  for (size_t i = 0; i < adder.step_names.size(); ++i)
    steps.push_back({{"step", adder.step_names[i]},
                     {"delay_ns", std::round(adder.step_delay_ns[i] * 1000) / 1000},
                     {"register_after", static_cast<bool>(adder.reg_after[i])}});
  j["fpadd_pipeline"] = steps;
  if (exact_sum()) {
    const ExactWidths xw = exact_widths(fmt, in.ports);
    j["exact_acc_bits"] = xw.acc_bits;
    nlohmann::json xs = nlohmann::json::array();
    for (size_t i = 0; i < exact.step_names.size(); ++i)
      xs.push_back({{"step", exact.step_names[i]},
                    {"delay_ns", std::round(exact.step_delay_ns[i] * 1000) / 1000},
                    {"register_after", static_cast<bool>(exact.reg_after[i])}});
    j["exact_pipeline"] = xs;
  }
  j["addtree_latency"] = addtree_latency;
  j["desc_stages"] = desc_stages;
  j["agg_latency"] = agg_latency;
  j["bypass_latency"] = bypass_latency;
  nlohmann::json mods = nlohmann::json::object();
  for (const auto& m : resources.modules)
    mods[m.name] = {{"instances", m.instances}, {"luts", m.luts}, {"lutram_sites", m.lutram}, {"ffs", m.ffs},
                    {"bram36", m.bram36},       {"dsps", m.dsps}};
  j["resources"] = {{"luts", resources.luts}, {"lutram_sites", resources.lutram},
                    {"ffs", resources.ffs},   {"bram36", resources.bram36},
                    {"dsps", resources.dsps}, {"fpadd_instances", resources.fpadd_instances},
                    {"modules", mods}};
  return j;
}

std::string Config::top_name() const { return module_name(in.module == "addtree" ? "addtree" : "top"); }

std::string Config::command_line() const {
  std::ostringstream os;
  os << "panama-gen --ports " << in.ports << " --gbps " << fmt_num(in.gbps) << " --mhz " << fmt_num(in.mhz)
     << " --format " << to_string(in.format) << " --subnormals " << to_string(in.subnormals) << " --contexts "
     << in.contexts << " --max-elems " << max_elems << " --buffer-kib " << in.buffer_kib << " --prefix " << in.prefix
     << " --module " << in.module;
  if (exact_sum()) os << " --sum exact";  // tree mode's banners stay as they were
  return os.str();
}

}  // namespace panama
