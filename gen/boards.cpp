// Board shells: which boards exist, and the files panama-gen --board writes for them.
#include "boards.h"

#include "rtl_lib.h"

#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

namespace panama {

const std::vector<Board>& boards() {
  static const std::vector<Board> list = {
      {"sume", "NetFPGA SUME, Virtex-7, 4 x SFP+ 10GBASE-R (AXI 10G Ethernet Subsystem)", "xc7vx690tffg1761-3",
       "panama_sume_top", 4, 10, 200, 64},
      {"u250", "Xilinx Alveo U250, 2 x QSFP28 100GBASE-SR4/CR4 (UltraScale+ CMAC, RS-FEC)", "xcu250-figd2104-2L-e",
       "panama_u250_top", 2, 100, 250, 512},
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

// Module and file names carry the prefix like the core's (panama_x -> PREFIX_x).
static std::string with_prefix(std::string s, const std::string& prefix) {
  if (prefix == "panama") return s;
  const std::string from = "panama_", to = prefix + "_";
  for (size_t pos = 0; (pos = s.find(from, pos)) != std::string::npos; pos += to.size())
    s.replace(pos, from.size(), to);
  return s;
}

void add_board_files(const Board& b, const Config& c, std::vector<OutputFile>& files) {
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
    files.push_back({with_prefix(out_name, c.in.prefix), head + with_prefix(find(path), c.in.prefix), verilog});
  };
  // Verilog in dependency order: shell blocks, IP port lists, the board top.
  for (const char* m : {"panama_reset_sync", "panama_axis_async_fifo", "panama_axis_arb2", "panama_port_cdc"})
    add(std::string("rtl/") + m + ".v", std::string(m) + ".v", true);
  add("rtl/boards/panama_board_shell.v", "panama_board_shell.v", true);
  add("rtl/boards/panama_xilinx_prim_stubs.v", "panama_xilinx_prim_stubs.v", true);
  add(dir + "panama_" + b.name + "_ip_stubs.v", "panama_" + b.name + "_ip_stubs.v", true);
  add(dir + "panama_" + b.name + "_top.v", "panama_" + b.name + "_top.v", true);
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
      f.content = j.dump(2) + "\n";
    }
  }
}

}  // namespace panama
