// The generator's single source of truth: the user's inputs and everything derived from them.
// RTL emitters, reports, the register map, the SystemC model and the testbenches all read a
// Config (the model and the testbenches through the config.json the generator writes).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "format.h"  // Format, parse_format, to_string (numerics/)

namespace panama {

enum class Subnormals { ieee, ftz };

// Thrown for any invalid combination of inputs; what() is one line for stderr.
struct ConfigError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct FormatInfo {
  int elem_bytes;  // ES
  int exp_bits;
  int frac_bits;  // stored fraction bits (without the hidden one)
  uint32_t canonical_nan;
};
FormatInfo format_info(Format f);
std::string to_string(Subnormals s);
Subnormals parse_subnormals(const std::string& s);  // throws ConfigError

// What the user asks for (the command line of tools.md).
struct Inputs {
  int ports = 0;
  double gbps = 0;
  double mhz = 0;
  Format format = Format::fp32;
  Subnormals subnormals = Subnormals::ieee;
  int contexts = 8;
  int max_elems = -1;  // -1: the default floor(proto::kDefaultPayloadBytes / ES)
  int buffer_kib = 64;
  std::string prefix = "panama";
  std::string module = "top";  // top | addtree
  std::string sum = "tree";    // tree | exact (numerics.md "Exact-sum mode")
};

// One pipeline stage boundary plan of the floating-point adder (see gen/emit/fpadd.cpp).
struct AdderPlan {
  std::vector<std::string> step_names;  // combinational steps in order
  std::vector<double> step_delay_ns;    // delay model estimate of each step
  std::vector<bool> reg_after;          // register after step i (the last is always true)
  int latency = 0;                      // number of register stages
};

// The generator's estimate of one module, with everything it instantiates (as scripts/timing
// synthesizes it: -top <module> -flatten). LUTRAM in LUT sites (distributed RAM and SRLs).
struct ModuleEstimate {
  std::string name;    // without the prefix
  long instances = 1;  // in the top
  long luts = 0, lutram = 0, ffs = 0, dsps = 0;
  double bram36 = 0;  // RAMB36E2 + RAMB18E2 / 2
};

struct Resources {
  long luts = 0;
  long ffs = 0;
  long bram36 = 0;
  long dsps = 0;
  long fpadd_instances = 0;
  long lutram = 0;                      // LUT sites of distributed RAM and SRLs
  std::vector<ModuleEstimate> modules;  // per module (leaf first), each with its submodules
};

struct Config {
  Inputs in;

  // Derived.
  FormatInfo fmt{};
  int bus_bits = 0;   // W
  int bus_bytes = 0;  // W / 8
  int lanes = 0;      // W / (8 * ES)
  int elem_bits = 0;  // 8 * ES
  int max_elems = 0;
  long buffer_bytes = 0;
  long bypass_bytes = 0;
  long contribution_bytes = 0;
  int max_frame_bytes = 0;  // S = 64 + ES * MAX_ELEMS
  int tree_leaves = 0;      // P, smallest power of two >= ports
  int tree_levels = 0;      // log2(P)
  AdderPlan adder;
  AdderPlan exact;  // --sum exact: one lane's exact accumulator (gen/emit/exactsum.cpp)
  int addtree_latency = 0;
  // Cycles from a frame's last beat to its descriptor (the parser and the port's receive stage):
  // 1, or 2 above 250 MHz (docs/rtl.md, "Receive stages").
  int desc_stages = 1;
  int agg_latency = 0;
  int bypass_latency = 0;
  Resources resources;

  // Validates and derives; throws ConfigError with one line on any invalid combination.
  static Config derive(const Inputs& in);
  static Config from_json(const nlohmann::json& j);  // reads a config.json (re-derives)

  nlohmann::json to_json() const;
  std::string top_name() const;  // the top module of this output
  bool exact_sum() const { return in.sum == "exact"; }
  std::string module_name(const std::string& base) const { return in.prefix + "_" + base; }
  // The generator command line that produced this config, without --out (for banners).
  std::string command_line() const;
};

// Smallest b with 2^b >= v (0 for v <= 1): the width of an index into v things.
inline int clog2(long v) {
  int b = 0;
  while ((1L << b) < v) ++b;
  return b;
}

// Generator version written into banners and config.json.
extern const char* const kGeneratorVersion;

}  // namespace panama
