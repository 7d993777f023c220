// SPDX-License-Identifier: MIT
// The server side of the harnesses' --live line protocol (its words: live_verbs.h), spoken with the
// switch stand-in (standin/engines/rtl_engine_client.cpp) over stdin/stdout; standin/engines/rtl_harness.cpp
// (the core) and standin/engines/shell_harness.cpp (a board shell) serve it. write is an AXI4-Lite write
// (the caller runs the design idle first). A harness without a register port answers write and
// read with an error.
#pragma once

#include <cctype>
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

// The largest `advance`: about a day of simulated cycles at 1 GHz, far above what the stand-in asks.
constexpr uint64_t kMaxAdvance = uint64_t{1} << 46;

inline int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// A frame's bytes from hex digits; throws std::runtime_error on anything else.
inline std::vector<uint8_t> hex_bytes(const std::string& h) {
  if (h.empty()) throw std::runtime_error("inject: no frame bytes");
  if (h.size() % 2) throw std::runtime_error("inject: odd number of hex digits");
  std::vector<uint8_t> b(h.size() / 2);
  for (size_t i = 0; i < b.size(); ++i) {
    const int hi = hex_digit(h[2 * i]), lo = hex_digit(h[2 * i + 1]);
    if (hi < 0 || lo < 0) throw std::runtime_error("inject: '" + h.substr(2 * i, 2) + "' is not a hex byte");
    b[i] = static_cast<uint8_t>(hi * 16 + lo);
  }
  return b;
}

// The whole of s as an unsigned number (C prefixes: 0x.. hex, 0.. octal) at most max; throws
// std::runtime_error naming the request otherwise.
inline uint64_t number(const std::string& s, uint64_t max, const std::string& what) {
  size_t used = 0;
  unsigned long long v = 0;
  bool ok = !s.empty() && s[0] != '-' && s[0] != '+' && !std::isspace(static_cast<unsigned char>(s[0]));
  if (ok) {
    try {
      v = std::stoull(s, &used, 0);
    } catch (const std::exception&) {
      ok = false;
    }
  }
  if (!ok || used != s.size() || v > max)
    throw std::runtime_error(what + ": '" + s + "' is not a number from 0 to " + std::to_string(max));
  return v;
}

// One "out PORT CONTEXT HEX" line.
inline void put_frame(int port, int context, const std::vector<uint8_t>& d) {
  std::printf("%s %d %d ", kOut, port, context);
  for (uint8_t b : d) std::printf("%02x", b);
  std::printf("\n");
}

// Serves requests from `in` (stdin) until "quit" or its end; throws std::runtime_error, one line,
// on a malformed request.
inline void serve(const Handlers& h, std::istream& in = std::cin) {
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream is(line);
    std::string cmd;
    is >> cmd;
    std::string a, v, extra;
    is >> a >> v >> extra;
    auto args = [&](size_t n) {
      if ((n < 1 && !a.empty()) || (n < 2 && !v.empty()) || !extra.empty())
        throw std::runtime_error(cmd + ": too many arguments in '" + line.substr(0, 80) + "'");
      if ((n >= 1 && a.empty()) || (n >= 2 && v.empty()))
        throw std::runtime_error(cmd + ": missing argument in '" + line.substr(0, 80) + "'");
    };
    if (cmd == kInject) {
      args(2);
      const int p = static_cast<int>(number(a, 0x7fffffff, "inject"));
      if (p >= h.ports) throw std::runtime_error("inject: no port " + std::to_string(p));
      h.inject(p, hex_bytes(v));
    } else if (cmd == kRun) {
      args(0);
      h.run();
      std::printf("%s\n", kOk);
    } else if (cmd == kAdvance) {
      args(1);
      const uint64_t n = number(a, kMaxAdvance, "advance");
      if (n) h.advance(n);
      std::printf("%s\n", kOk);
    } else if (cmd == kOutputs) {
      args(0);
      h.outputs();
      std::printf("%s\n", kEnd);
    } else if (cmd == kCounters) {
      args(0);
      std::printf("%s\n", h.counters().c_str());
    } else if (cmd == kCycles) {
      args(0);
      std::printf("%llu\n", static_cast<unsigned long long>(h.cycles()));
    } else if (cmd == kWrite || cmd == kRead) {
      if (!h.write || !h.read) throw std::runtime_error(h.no_registers);
      args(cmd == kWrite ? 2 : 1);
      const auto addr = static_cast<uint32_t>(number(a, 0xFFFFFFFFu, cmd));
      if (cmd == kWrite) {
        h.write(addr, static_cast<uint32_t>(number(v, 0xFFFFFFFFu, cmd)));
        std::printf("%s\n", kOk);
      } else {
        std::printf("%u\n", h.read(addr));
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
