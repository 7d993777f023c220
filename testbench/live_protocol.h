// SPDX-License-Identifier: MIT
// The server side of the harnesses' --live line protocol (its words: live_verbs.h), spoken with the
// switch stand-in (host_driver/rtl_engine_client.cpp) over stdin/stdout; testbench/rtl_harness.cpp
// (the core) and testbench/shell_harness.cpp (a board shell) serve it. write is an AXI4-Lite write
// (the caller runs the design idle first). A harness without a register port answers write and
// read with an error.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "live_verbs.h"

namespace live {

struct Handlers {
  int ports = 0;
  std::function<void(int, std::vector<uint8_t>)> inject;
  std::function<void()> run;
  std::function<void(uint64_t)> advance;
  std::function<void()> outputs;  // prints its "out ..." lines; "end" follows
  std::function<std::string()> counters;
  std::function<uint64_t()> cycles;
  std::function<void(uint32_t, uint32_t)> write;  // empty: no register port
  std::function<uint32_t(uint32_t)> read;
  std::string no_registers = "this design has no register port";
};

inline std::vector<uint8_t> hex_bytes(const std::string& h) {
  if (h.size() % 2) throw std::runtime_error("inject: odd number of hex digits");
  std::vector<uint8_t> b(h.size() / 2);
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<uint8_t>(std::stoi(h.substr(2 * i, 2), nullptr, 16));
  return b;
}

// One "out PORT CONTEXT HEX" line.
inline void put_frame(int port, int context, const std::vector<uint8_t>& d) {
  std::printf("%s %d %d ", kOut, port, context);
  for (uint8_t b : d) std::printf("%02x", b);
  std::printf("\n");
}

// Serves requests from stdin until "quit" or its end; throws on a malformed request.
inline void serve(const Handlers& h) {
  std::string line;
  while (std::getline(std::cin, line)) {
    std::istringstream is(line);
    std::string cmd;
    is >> cmd;
    if (cmd == kInject) {
      int p = -1;
      std::string hex;
      is >> p >> hex;
      if (p < 0 || p >= h.ports) throw std::runtime_error("inject: no port " + std::to_string(p));
      h.inject(p, hex_bytes(hex));
    } else if (cmd == kRun) {
      h.run();
      std::printf("%s\n", kOk);
    } else if (cmd == kAdvance) {
      uint64_t n = 0;
      is >> n;
      if (n) h.advance(n);
      std::printf("%s\n", kOk);
    } else if (cmd == kOutputs) {
      h.outputs();
      std::printf("%s\n", kEnd);
    } else if (cmd == kCounters) {
      std::printf("%s\n", h.counters().c_str());
    } else if (cmd == kCycles) {
      std::printf("%llu\n", static_cast<unsigned long long>(h.cycles()));
    } else if (cmd == kWrite || cmd == kRead) {
      if (!h.write || !h.read) throw std::runtime_error(h.no_registers);
      std::string a, v;
      is >> a >> v;
      if (cmd == kWrite) {
        h.write(static_cast<uint32_t>(std::stoul(a, nullptr, 0)), static_cast<uint32_t>(std::stoul(v, nullptr, 0)));
        std::printf("%s\n", kOk);
      } else {
        std::printf("%u\n", h.read(static_cast<uint32_t>(std::stoul(a, nullptr, 0))));
      }
    } else if (cmd == kQuit) {
      break;
    } else if (!cmd.empty()) {
      throw std::runtime_error("unknown command '" + cmd + "'");
    }
    std::fflush(stdout);
  }
}

}  // namespace live
