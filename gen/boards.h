// Board shells (panama-gen --board NAME, --list-boards): the hand-written shell RTL, IP stubs,
// XDC and Vivado build script of each supported board, embedded in the generator at build time
// and written next to the core. docs/fpga.md describes the boards and the build.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "emit.h"
#include "protocol.h"

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
  // What the shell wires around the core (config.json "board"."shell"; the shell stand-in,
  // panama-host switch --shell, simulates it from these): the port whose transmit path also
  // carries m_agg, log2 of each crossing FIFO's depth in beats, the MACs' user clock.
  int agg_port;
  int fifo_aw;
  double mac_mhz;
};

// Management over Ethernet of a board output (docs/mgmt.md): panama-gen --mgmt-*.
struct MgmtOptions {
  std::string ports = "0", key_file, mac = "02:50:4e:4d:00:01", ip = "10.0.0.254";
  int udp_port = proto::kMgmtUdpPort;
};
struct MgmtConfig {
  std::vector<int> ports;
  std::array<uint8_t, 16> key{};  // key bytes in file order (SipHash k0 = bytes 0..7 little-endian)
  bool dev_key = true;            // no --mgmt-key: the documented development key
  std::array<uint8_t, 6> mac{};
  uint32_t ip = 0;
  int udp_port = proto::kMgmtUdpPort;
};
// The development key: bytes 00 01 .. 0f (the SipHash paper's test key; never for a real board).
// Validates the options against the board (one clear line per error, std::runtime_error).
MgmtConfig parse_mgmt(const Board& b, const MgmtOptions& o);

const std::vector<Board>& boards();
// The board called name; throws std::runtime_error naming the known boards otherwise.
const Board& find_board(const std::string& name);
// Checks that c is the core configuration the board's shell wires; throws with one clear line.
void check_board_config(const Board& b, const Config& c);
// Appends the board's files to an output built by build_output (shell RTL in filelist.f,
// board facts in config.json, XDC and build scripts).
// The board top's management parameters are set from m; config.json records them without the key.
// standalone: the switch functions in the shell (panama_l2sw; config.json board.shell.standalone).
void add_board_files(const Board& b, const Config& c, const MgmtConfig& m, bool standalone,
                     std::vector<OutputFile>& files);

}  // namespace panama
