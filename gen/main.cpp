// panama-gen: writes the Verilog, config.json and register map of one accelerator configuration.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>

#include "emit.h"

#if __has_include("regmap.h")
#include "regmap.h"
#define PANAMA_HAVE_REGMAP 1
#endif

int main(int argc, char** argv) {
  using namespace panama;
  CLI::App app{"panama-gen: generate a PANAMA-style in-network aggregation accelerator", "panama-gen"};
  Inputs in;
  std::string out, format = "fp32", subnormals = "ieee";
  app.add_option("--ports", in.ports, "number of switch ports, 2..256")->required();
  app.add_option("--gbps", in.gbps, "line rate per port in Gbit/s")->required();
  app.add_option("--mhz", in.mhz, "clock frequency in MHz")->required();
  app.add_option("--out", out, "output directory")->required();
  app.add_option("--format", format, "element format: fp32, bf16 or fp16");
  app.add_option("--subnormals", subnormals, "ieee (kept) or ftz (flushed, FTZ+DAZ)");
  app.add_option("--contexts", in.contexts, "number of (JID, TID) contexts");
  app.add_option("--max-elems", in.max_elems, "largest COUNT (default floor(1450 / ES))");
  app.add_option("--buffer-kib", in.buffer_kib, "buffer per port in KiB");
  app.add_option("--prefix", in.prefix, "module name prefix");
  app.add_option("--module", in.module, "top (the accelerator) or addtree (the SIMD adder tree alone)");
  app.add_option("--sum", in.sum, "tree (fixed tree order, default) or exact (one rounding of the exact sum)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    return 0;
  } catch (const CLI::ParseError& e) {
    std::string msg = e.what();
    if (msg.empty()) msg = e.get_name();
    std::fprintf(stderr, "panama-gen: %s\n", msg.c_str());
    return 2;
  }
  try {
    in.format = parse_format(format);
    in.subnormals = parse_subnormals(subnormals);
    const Config c = Config::derive(in);
    auto files = build_output(c);
    write_output(files, out);
#ifdef PANAMA_HAVE_REGMAP
    if (c.in.module == "top") write_regmap(c, out);
#endif
  } catch (const std::exception& e) {
    std::fprintf(stderr, "panama-gen: %s\n", e.what());
    return 1;
  }
  return 0;
}
