// Helpers for driving Verilated models, shared by the RTL engine's harnesses and the block
// testbenches: command line, config file, bit access on Verilated ports of any width, AXI4-Lite
// handshakes.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "verilated.h"

namespace tb {

// Command line of a testbench: every flag takes one value; "+verilator..." arguments are left to
// Verilator; --config is required. Any mistake (unknown flag, missing or non-numeric value) ends
// the run with one line on stderr and exit code 2.
using FlagSetters = std::map<std::string, std::function<void(const std::string&)>>;

inline std::string parse_flags(int argc, char** argv, const char* prog, const FlagSetters& flags) {
  std::string config;
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    if (k.rfind("+verilator", 0) == 0) continue;
    const auto it = flags.find(k);
    if (k != "--config" && it == flags.end()) {
      std::fprintf(stderr, "%s: unknown argument %s\n", prog, k.c_str());
      std::exit(2);
    }
    if (i + 1 >= argc) {
      std::fprintf(stderr, "%s: %s needs a value\n", prog, k.c_str());
      std::exit(2);
    }
    const std::string v = argv[++i];
    if (k == "--config") {
      config = v;
      continue;
    }
    try {
      it->second(v);
    } catch (const std::exception&) {
      std::fprintf(stderr, "%s: %s: bad value '%s'\n", prog, k.c_str(), v.c_str());
      std::exit(2);
    }
  }
  if (config.empty()) {
    std::fprintf(stderr, "%s: --config DIR/config.json is required\n", prog);
    std::exit(2);
  }
  return config;
}

// The text of the file at `path` (a testbench's config.json); a file that cannot be read ends
// the run with one line on stderr and exit code 2.
inline std::string read_file(const std::string& path, const char* prog) {
  std::ifstream f(path);
  if (!f) {
    std::fprintf(stderr, "%s: cannot read %s\n", prog, path.c_str());
    std::exit(2);
  }
  std::ostringstream text;
  text << f.rdbuf();
  return text.str();
}

// A scoreboard testbench's run: the Verilated ports must be as wide as config.json says (else one
// line on stderr and exit code 2), then reset, the run and the verdict (the exit code).
template <typename Bench>
int run_bench(Bench& bench, const char* prog, const std::string& config) {
  if (!bench.ports_match()) {
    std::fprintf(stderr, "%s: the Verilated ports do not match %s\n", prog, config.c_str());
    return 2;
  }
  bench.reset();
  bench.run();
  return bench.finish();
}

// Whole-string numeric conversions for flag values (std::stol accepts "12abc").
inline long to_long(const std::string& v) {
  size_t n = 0;
  const long x = std::stol(v, &n);
  if (n != v.size()) throw std::invalid_argument(v);
  return x;
}
inline uint64_t to_u64(const std::string& v) {
  size_t n = 0;
  if (!v.empty() && v[0] == '-') throw std::invalid_argument(v);
  const unsigned long long x = std::stoull(v, &n);
  if (n != v.size()) throw std::invalid_argument(v);
  return x;
}

// Ports up to 64 bits are plain integers in Verilator; wider ones are VlWide<words>.
template <typename T>
inline void set_bits(T& sig, int lsb, int width, uint64_t v) {
  static_assert(std::is_integral<T>::value, "integral port");
  const uint64_t mask = width >= 64 ? ~uint64_t{0} : ((uint64_t{1} << width) - 1);
  uint64_t cur = static_cast<uint64_t>(sig);
  cur = (cur & ~(mask << lsb)) | ((v & mask) << lsb);
  sig = static_cast<T>(cur);
}

template <std::size_t N>
inline void set_bits(VlWide<N>& sig, int lsb, int width, uint64_t v) {
  for (int i = 0; i < width; ++i) {
    const int bit = lsb + i;
    EData& w = sig[bit / 32];
    const EData m = EData{1} << (bit % 32);
    if ((v >> i) & 1)
      w |= m;
    else
      w &= ~m;
  }
}

template <typename T>
inline uint64_t get_bits(const T& sig, int lsb, int width) {
  static_assert(std::is_integral<T>::value, "integral port");
  const uint64_t mask = width >= 64 ? ~uint64_t{0} : ((uint64_t{1} << width) - 1);
  return (static_cast<uint64_t>(sig) >> lsb) & mask;
}

template <std::size_t N>
inline uint64_t get_bits(const VlWide<N>& sig, int lsb, int width) {
  uint64_t v = 0;
  for (int i = 0; i < width; ++i) {
    const int bit = lsb + i;
    if ((sig[bit / 32] >> (bit % 32)) & 1) v |= uint64_t{1} << i;
  }
  return v;
}

template <typename T>
constexpr int port_bits(const T&) {
  return static_cast<int>(sizeof(T) * 8);
}

// The AXI4-Lite handshakes the coming clock edge completes, channel by channel.
struct AxilFire {
  bool aw, w, ar, b, r;
};

}  // namespace tb

// TB_AXIL_FIRE(top, P): the AxilFire of a Verilated top whose AXI4-Lite ports are named P##awvalid
// and so on (P is s_axil_ on a slave, m_axil_ on a master). A macro: the names are pasted.
#define TB_AXIL_FIRE(top, P)                                                              \
  (tb::AxilFire{(top).P##awvalid && (top).P##awready, (top).P##wvalid && (top).P##wready, \
                (top).P##arvalid && (top).P##arready, (top).P##bvalid && (top).P##bready, \
                (top).P##rvalid && (top).P##rready})

// Word-wise variants of set_bits/get_bits for VlWide ports: a field is written a 32-bit word at
// a time (at most three words for 64 bits) instead of bit by bit, for testbenches that move
// thousands of fields per cycle (the exhaustive run). Same semantics as set_bits/get_bits.
namespace tb {

template <std::size_t N>
inline void set_field(VlWide<N>& sig, int lsb, int width, uint64_t v) {
  for (int done = 0; done < width;) {
    const int bit = lsb + done, off = bit % 32, n = 32 - off < width - done ? 32 - off : width - done;
    const EData m = static_cast<EData>((n == 32 ? ~uint64_t{0} : ((uint64_t{1} << n) - 1)) << off);
    EData& w = sig[bit / 32];
    w = (w & ~m) | (static_cast<EData>((v >> done) << off) & m);
    done += n;
  }
}

template <std::size_t N>
inline uint64_t get_field(const VlWide<N>& sig, int lsb, int width) {
  uint64_t v = 0;
  for (int done = 0; done < width;) {
    const int bit = lsb + done, off = bit % 32, n = 32 - off < width - done ? 32 - off : width - done;
    const uint64_t m = n == 32 ? 0xFFFFFFFFull : ((uint64_t{1} << n) - 1);
    v |= ((static_cast<uint64_t>(sig[bit / 32]) >> off) & m) << done;
    done += n;
  }
  return v;
}

}  // namespace tb
