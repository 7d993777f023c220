// Board shells (panama-gen --board NAME, --list-boards): the hand-written shell RTL, IP stubs,
// XDC and Vivado build script of each supported board, embedded in the generator at build time
// and written next to the core. docs/fpga.md describes the boards and the build.
#pragma once

#include <string>
#include <vector>

#include "emit.h"

namespace panama {

struct Board {
  std::string name;  // --board NAME
  std::string description;
  std::string part;  // Vivado part
  std::string top;   // board top module (prefix applied when written)
  int ports;         // the core configuration the shell wires
  double gbps;
  double mhz;
  int bus_bits;
};

const std::vector<Board>& boards();
// The board called name; throws std::runtime_error naming the known boards otherwise.
const Board& find_board(const std::string& name);
// Checks that c is the core configuration the board's shell wires; throws with one clear line.
void check_board_config(const Board& b, const Config& c);
// Appends the board's files to an output built by build_output (shell RTL in filelist.f,
// board facts in config.json, XDC and build scripts).
void add_board_files(const Board& b, const Config& c, std::vector<OutputFile>& files);

}  // namespace panama
