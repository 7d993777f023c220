// Board shells: which boards exist, and the files panama-gen --board writes for them.
#include "boards.h"
#include "secret_file.h"

#include "regmap.h"
#include "rtl_lib.h"

#include <nlohmann/json.hpp>
#include <cctype>
#include <cstdio>
#include <fstream>
#include <iomanip>
#include <sstream>
#include <stdexcept>

namespace panama {

const std::vector<Board>& boards() {
  static const std::vector<Board> list = {
      {"sume", "NetFPGA SUME, Virtex-7, 4 x SFP+ 10GBASE-R (AXI 10G Ethernet Subsystem)", "xc7vx690tffg1761-3",
       "panama_sume_top", 4, 10, 200, 64, 3, 9, 156.25},
      {"u250", "Xilinx Alveo U250, 2 x QSFP28 100GBASE-SR4/CR4 (UltraScale+ CMAC, RS-FEC)", "xcu250-figd2104-2L-e",
       "panama_u250_top", 2, 100, 250, 512, 1, 6, 322.265625},
  };
  return list;
}

const Board& find_board(const std::string& name) {
  std::string known;
  for (const auto& b : boards()) {
    if (b.name == name) return b;
    known += (known.empty() ? "" : ", ") + b.name;
  }
  throw std::runtime_error("--board: unknown board '" + name + "' (known: " + known + ")");
}

static std::string fmt_num(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

void check_board_config(const Board& b, const Config& c) {
  if (c.in.module != "top" || c.in.ports != b.ports || c.in.gbps != b.gbps || c.in.mhz != b.mhz ||
      c.bus_bits != b.bus_bits)
    throw std::runtime_error("--board " + b.name + " wires the core of --ports " + std::to_string(b.ports) +
                             " --gbps " + fmt_num(b.gbps) + " --mhz " + fmt_num(b.mhz) + " --module top (" +
                             std::to_string(b.bus_bits) + "-bit bus); drop the conflicting options");
}

static int hex_digit(char ch) {
  if (ch >= '0' && ch <= '9') return ch - '0';
  ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 : -1;
}

// A key file holds 32 hex digits (optionally with surrounding whitespace): the 16 key bytes in order.
static std::array<uint8_t, 16> read_key(const std::string& path) {
  const std::string text = wire::read_secret_file(path, "--mgmt-key");
  const auto a = text.find_first_not_of(" \t\r\n"), z = text.find_last_not_of(" \t\r\n");
  const std::string hex = a == std::string::npos ? "" : text.substr(a, z - a + 1);
  std::array<uint8_t, 16> key{};
  bool ok = hex.size() == 32;
  for (size_t i = 0; ok && i < 16; ++i) {
    const int h = hex_digit(hex[2 * i]), l = hex_digit(hex[2 * i + 1]);
    ok = h >= 0 && l >= 0;
    key[i] = static_cast<uint8_t>(h * 16 + l);
  }
  if (!ok) throw std::runtime_error("--mgmt-key: " + path + " must hold exactly 32 hex digits (the 128-bit key)");
  return key;
}

MgmtConfig parse_mgmt(const Board& b, const MgmtOptions& o) {
  MgmtConfig m;
  std::stringstream ss(o.ports);
  std::string item;
  while (std::getline(ss, item, ',')) {
    char* end = nullptr;
    const long v = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end || v < 0 || v >= b.ports)
      throw std::runtime_error("--mgmt-ports: '" + o.ports + "' must list ports 0.." + std::to_string(b.ports - 1) +
                               " of --board " + b.name + ", separated by commas");
    for (int q : m.ports)
      if (q == v) throw std::runtime_error("--mgmt-ports: port " + item + " given twice");
    m.ports.push_back(static_cast<int>(v));
  }
  if (m.ports.empty()) throw std::runtime_error("--mgmt-ports: at least one port");
  if (o.key_file.empty()) {
    for (int i = 0; i < 16; ++i) m.key[static_cast<size_t>(i)] = static_cast<uint8_t>(i);
  } else {
    m.key = read_key(o.key_file);
    m.dev_key = false;
  }
  unsigned x[6];
  char tail = 0;
  if (std::sscanf(o.mac.c_str(), "%2x:%2x:%2x:%2x:%2x:%2x%c", &x[0], &x[1], &x[2], &x[3], &x[4], &x[5], &tail) != 6 ||
      o.mac.size() != 17)
    throw std::runtime_error("--mgmt-mac: '" + o.mac + "' is not a MAC address (aa:bb:cc:dd:ee:ff)");
  for (size_t i = 0; i < 6; ++i) m.mac[i] = static_cast<uint8_t>(x[i]);
  if (m.mac[0] & 1) throw std::runtime_error("--mgmt-mac: " + o.mac + " is a multicast address");
  int n = 0;
  if (std::sscanf(o.ip.c_str(), "%u.%u.%u.%u%n", &x[0], &x[1], &x[2], &x[3], &n) != 4 ||
      n != static_cast<int>(o.ip.size()) || x[0] > 255 || x[1] > 255 || x[2] > 255 || x[3] > 255 ||
      o.ip.find_first_not_of("0123456789.") != std::string::npos)
    throw std::runtime_error("--mgmt-ip: '" + o.ip + "' is not an IPv4 address (a.b.c.d)");
  m.ip = x[0] << 24 | x[1] << 16 | x[2] << 8 | x[3];
  if (x[0] == 0 || x[0] >= 224) throw std::runtime_error("--mgmt-ip: " + o.ip + " is not a unicast address");
  if (o.udp_port < 1 || o.udp_port > 65535) throw std::runtime_error("--mgmt-udp-port: must be 1..65535");
  if (o.udp_port == wire::kDefaultAggPort)
    throw std::runtime_error("--mgmt-udp-port: " + std::to_string(o.udp_port) + " is the aggregation port");
  m.udp_port = o.udp_port;
  return m;
}

static std::string hex_str(uint64_t v, int digits) {
  std::ostringstream os;
  os << std::hex << std::setw(digits) << std::setfill('0') << v;
  return os.str();
}

// Sets a board top's parameter (rtl_lib.h's setter; the top marks each with "// panama-gen: OPTION").
static void set_param(std::string& text, const std::string& name, const std::string& value) {
  try {
    text = set_parameter_default(std::move(text), name, value);
  } catch (const std::logic_error&) {
    throw std::runtime_error("internal: board top has no parameter " + name);
  }
}

static std::string o_ip(uint32_t ip) {
  return std::to_string(ip >> 24) + "." + std::to_string(ip >> 16 & 255) + "." + std::to_string(ip >> 8 & 255) + "." +
         std::to_string(ip & 255);
}

static void set_mgmt_params(std::string& text, int ports, const MgmtConfig& m) {
  std::string bits(static_cast<size_t>(ports), '0');
  for (int p : m.ports) bits[static_cast<size_t>(ports - 1 - p)] = '1';
  set_param(text, "MGMT_PORTS", std::to_string(ports) + "'b" + bits);
  std::string key;  // [127:0] with k0 = key bytes 0..7 little-endian in [63:0]
  for (int i = 15; i >= 0; --i) key += hex_str(m.key[static_cast<size_t>(i)], 2);
  set_param(text, "MGMT_KEY", "128'h" + key);
  std::string mac;
  for (uint8_t x : m.mac) mac += hex_str(x, 2);
  set_param(text, "MGMT_MAC", "48'h" + mac);
  set_param(text, "MGMT_IP", "32'h" + hex_str(m.ip, 8));
  set_param(text, "MGMT_UDP_PORT", "16'd" + std::to_string(m.udp_port));
}

void add_board_files(const Board& b, const Config& c, const MgmtConfig& m, bool standalone,
                     std::vector<OutputFile>& files) {
  // The core's register-file address bits: the register map's size is a power of two.
  int addr_bits = 0;
  while ((1L << addr_bits) < static_cast<long>(RegMap::from(c).size)) ++addr_bits;
  const std::string dir = "rtl/boards/" + b.name + "/";
  const std::string cmd = c.command_line() + " --board " + b.name;
  // The shell's files are embedded with the fixed blocks (rtl_sources(), named relative to rtl/).
  auto find = [&](const std::string& path) -> std::string {
    for (const auto& f : rtl_sources())
      if (path == std::string("rtl/") + f.name) return f.text;
    throw std::runtime_error("internal: " + path + " not embedded");
  };
  auto add = [&](const std::string& path, const std::string& out_name, bool verilog) {
    const std::string comment = verilog ? "// " : "# ";
    const std::string head = comment + "Written by " + std::string(kGeneratorVersion) + " from " + path +
                             "; do not edit, regenerate.\n" + comment + "Command: " + cmd + "\n";
    // Includes inlined (rtl_inline_includes), so the files read without include paths.
    const std::string text = verilog ? rtl_inline_includes(c, find(path)) : find(path);
    files.push_back({with_prefix(out_name, c.in.prefix), head + with_prefix(text, c.in.prefix), verilog});
  };
  // Verilog in dependency order: shell blocks, IP port lists, the board top.
  for (const char* v :
       {"panama_reset_sync", "panama_axis_async_fifo", "panama_axis_arb2", "panama_port_cdc", "panama_siphash",
        "panama_mgmt", "panama_mgmt_match", "panama_mgmt_eth", "panama_arp", "panama_l2sw"})
    add(std::string("rtl/") + v + ".v", std::string(v) + ".v", true);
  add("rtl/boards/panama_board_shell.v", "panama_board_shell.v", true);
  add("rtl/boards/panama_xilinx_prim_stubs.v", "panama_xilinx_prim_stubs.v", true);
  add(dir + "panama_" + b.name + "_ip_stubs.v", "panama_" + b.name + "_ip_stubs.v", true);
  add(dir + "panama_" + b.name + "_top.v", "panama_" + b.name + "_top.v", true);
  set_mgmt_params(files.back().content, b.ports, m);
  set_param(files.back().content, "CONTEXTS", std::to_string(c.in.contexts));
  set_param(files.back().content, "ADDR_W", std::to_string(addr_bits));
  set_param(files.back().content, "STANDALONE", standalone ? "1" : "0");
  add(dir + "panama_" + b.name + ".xdc", "panama_" + b.name + ".xdc", false);
  add("rtl/boards/panama_cdc.xdc", "panama_cdc.xdc", false);
  add(dir + "board.tcl", "board.tcl", false);
  add("rtl/boards/panama_build.tcl", "build.tcl", false);

  for (auto& f : files) {
    if (f.name == "filelist.f") {
      std::ostringstream fl;
      for (const auto& v : files)
        if (v.verilog) fl << v.name << "\n";
      f.content = fl.str();
    } else if (f.name == "config.json") {
      auto j = nlohmann::json::parse(f.content);
      j["board"] = {{"name", b.name},
                    {"description", b.description},
                    {"part", b.part},
                    {"top", with_prefix(b.top, c.in.prefix)},
                    {"build", "vivado -mode batch -source build.tcl"}};
      j["board"]["shell"] = {
          {"agg_port", b.agg_port}, {"fifo_aw", b.fifo_aw}, {"mac_mhz", b.mac_mhz}, {"standalone", standalone}};
      // Everything about management but the key itself.
      std::string mac;
      for (uint8_t x : m.mac) mac += (mac.empty() ? "" : ":") + hex_str(x, 2);
      j["board"]["mgmt"] = {{"ports", m.ports},
                            {"ip", o_ip(m.ip)},
                            {"mac", mac},
                            {"udp_port", m.udp_port},
                            {"key", m.dev_key ? "development key (00 01 .. 0f)" : "from --mgmt-key"}};
      f.content = j.dump(2) + "\n";
    }
  }
}

}  // namespace panama
