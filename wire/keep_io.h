// tkeep side files of the regression's input directories (docs/rtl.md, "tkeep outside the
// contract"): IN/portNN.tkeep beside IN/portNN.pcap names the frames of that pcap whose beats are
// given lane by lane. Each line is one such frame: its index in the pcap (from 0), one space, and
// one character per byte lane of its beats, '1' kept and '0' not; the pcap record then holds
// tdata of every lane (model::InFrame::keep). A port without the file has none.
#pragma once

#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "wire.h"

namespace panama::keep_io {

inline std::string path_for(const std::string& dir, int port) {
  char b[32];
  std::snprintf(b, sizeof b, "/port%02d.tkeep", port);
  return dir + b;
}

// The masks by frame index; none when the file does not exist. Throws std::runtime_error naming
// the file and line for a malformed line, an index at or past `frames`, or a mask that is not
// `frame_bytes(index)` lanes or not a whole number of `bus_bytes`-lane beats.
template <typename FrameBytes>
std::map<size_t, wire::Bytes> read(const std::string& path, size_t frames, int bus_bytes, FrameBytes frame_bytes) {
  std::map<size_t, wire::Bytes> out;
  std::ifstream in(path);
  if (!in) return out;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    auto fail = [&](const std::string& why) { throw std::runtime_error(path + ":" + std::to_string(n) + ": " + why); };
    std::istringstream ls(line);
    unsigned long long idx = 0;
    std::string mask, extra;
    if (!(ls >> idx >> mask) || (ls >> extra)) fail("expected 'INDEX MASK'");
    if (idx >= frames) fail("frame " + std::to_string(idx) + " is not in the pcap");
    if (mask.size() != frame_bytes(static_cast<size_t>(idx)) || mask.size() % static_cast<size_t>(bus_bytes) != 0)
      fail("the mask is not one character per lane of the frame's beats");
    wire::Bytes k(mask.size());
    for (size_t i = 0; i < mask.size(); ++i) {
      if (mask[i] != '0' && mask[i] != '1') fail("the mask holds a character other than 0 and 1");
      k[i] = mask[i] == '1';
    }
    if (!out.emplace(static_cast<size_t>(idx), std::move(k)).second) fail("frame listed twice");
  }
  return out;
}

// Writes the masks (frame index -> lanes); nothing when there are none.
inline void write(const std::string& path, const std::map<size_t, wire::Bytes>& masks) {
  if (masks.empty()) return;
  std::ofstream out(path);
  for (const auto& [idx, k] : masks) {
    out << idx << ' ';
    for (uint8_t b : k) out << (b ? '1' : '0');
    out << '\n';
  }
  if (!out) throw std::runtime_error(path + ": write failed");
}

}  // namespace panama::keep_io
