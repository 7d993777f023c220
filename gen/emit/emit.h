// Emitting a generator output (library panama_emit: only panama-gen and the emitters' tests link
// it; the model and the host link the planning library panama_config alone). Every file is built
// in memory first, then written at once, so that an error leaves nothing behind.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "config.h"
#include "estimate.h"

namespace panama {

struct OutputFile {
  std::string name;  // relative to the output directory
  std::string content;
  bool verilog = false;  // listed in filelist.f, in dependency order
};

// The one template scheme of gen/: each <sigil>{NAME} in `text`, for a sigil in `sigils`,
// replaced by fill(sigil, NAME). The top uses ${NAME} for its numbers; the adder's steps use
// ${x} for the previous boundary's signal x, @{x} for the step's own output and %{x} for a local.
std::string fill_template(const std::string& text, const std::string& sigils,
                          const std::function<std::string(char, const std::string&)>& fill);

// A Verilog sized hexadecimal literal: hx(16, 0x2350) = "16'h2350".
std::string hx(int width, uint64_t v);

// The AXI4-Lite slave's port declarations (32-bit data), awaddr through rvalid, one per line;
// `msb` is the address's top bit index as Verilog text. The caller declares rready (last or not).
std::string axil_slave_ports(const std::string& msb);

std::string banner(const Config& c, const std::string& module, const std::string& what);
// Verilog-2005 text of module <prefix>_fpadd (ports clk, a, a_en, b, b_en, y; latency
// c.adder.latency), from the plan of gen/config/fpadd.h.
std::string emit_fpadd(const Config& c);
// Verilog of <prefix>_exactlane (ports clk, mask, data, y; latency c.exact.latency), from the plan
// of gen/config/exactsum.h, and of <prefix>_addtree built from LANES of them.
std::string emit_exactlane(const Config& c);
std::string emit_exact_addtree(const Config& c);
// <prefix>_top: the named per-port streams around the core's instance (gen/emit/top.cpp).
std::string emit_top(const Config& c);
std::string emit_addtree(const Config& c);
// The module line, ports and LANES / WIDTH localparams of <prefix>_addtree (tools.md's interface),
// shared by the tree-mode and exact-mode emitters.
std::string addtree_header(const Config& c);
// The adder trees' valid pipeline of L stages and the opening of the per-lane generate loop.
std::string addtree_valid_and_lanes(int L);

// All files of an output: Verilog (dependency order), filelist.f, config.json, register map.
std::vector<OutputFile> build_output(const Config& c);
// Writes files into dir (created if needed). Throws std::runtime_error on an I/O failure.
void write_output(const std::vector<OutputFile>& files, const std::string& dir);

}  // namespace panama
