// Emitting a generator output: every file is built in memory first, then written at once,
// so that an error leaves nothing behind.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "config.h"

namespace panama {

struct OutputFile {
  std::string name;  // relative to the output directory
  std::string content;
  bool verilog = false;  // listed in filelist.f, in dependency order
};

// A tree node after the generator resolved which leaves are absent.
enum class NodeKind { leaf, neg_zero, adder, pass };
// levels[0] are the leaves (one per power-of-two slot); levels[k][i] combines levels[k-1][2i], [2i+1].
std::vector<std::vector<NodeKind>> resolve_tree(int ports);

// A Verilog sized hexadecimal literal: hx(16, 0x2350) = "16'h2350".
std::string hx(int width, uint64_t v);

// The AXI4-Lite slave's port declarations (32-bit data), awaddr through rvalid, one per line;
// `msb` is the address's top bit index as Verilog text. The caller declares rready (last or not).
std::string axil_slave_ports(const std::string& msb);

std::string banner(const Config& c, const std::string& module, const std::string& what);
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
