// panama-gen: writes the Verilog, config.json and register map of one accelerator configuration.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>

#include "boards.h"
#include "cli_parse.h"
#include "emit.h"

int main(int argc, char** argv) {
  using namespace panama;
  CLI::App app{"panama-gen: generate a PANAMA-style in-network aggregation accelerator", "panama-gen"};
  Inputs in;
  std::string out, format = "fp32", subnormals = "ieee";
  // A board fixes the core it wires, so --ports/--gbps/--mhz may then be left out.
  bool board_mode = false;
  for (int i = 1; i < argc; ++i)
    board_mode |= std::string(argv[i]).rfind("--board", 0) == 0 || std::string(argv[i]) == "--list-boards";
  std::string board_name;
  bool list_boards = false;
  MgmtOptions mgmt_opts;
  auto* o_ports = app.add_option("--ports", in.ports, "number of switch ports, 2..256");
  auto* o_gbps = app.add_option("--gbps", in.gbps, "line rate per port in Gbit/s");
  auto* o_mhz = app.add_option("--mhz", in.mhz, "clock frequency in MHz");
  if (!board_mode) {
    o_ports->required();
    o_gbps->required();
    o_mhz->required();
  }
  app.add_option("--board", board_name, "also write the board shell for NAME (see --list-boards)");
  app.add_flag("--list-boards", list_boards, "list the boards --board knows and exit");
  auto* o_mports =
      app.add_option("--mgmt-ports", mgmt_opts.ports, "--board: management ports P0,P1,.. (default 0; docs/mgmt.md)");
  auto* o_mkey =
      app.add_option("--mgmt-key", mgmt_opts.key_file, "--board: file with the 128-bit management key, 32 hex digits");
  auto* o_mmac = app.add_option("--mgmt-mac", mgmt_opts.mac, "--board: the board's MAC (default 02:50:4e:4d:00:01)");
  auto* o_mip = app.add_option("--mgmt-ip", mgmt_opts.ip, "--board: the board's management IPv4 (default 10.0.0.254)");
  auto* o_mudp = app.add_option("--mgmt-udp-port", mgmt_opts.udp_port,
                                "--board: management UDP port (default " + std::to_string(proto::kMgmtUdpPort) + ")");
  bool insecure_dev_key = false;
  auto* o_devkey = app.add_flag("--insecure-dev-key", insecure_dev_key,
                                "--board without --mgmt-key: accept the public development key 00 01 .. 0f (anyone "
                                "can program such a board; for simulation only)");
  bool standalone = false;
  auto* o_standalone = app.add_flag(
      "--standalone", standalone,
      "--board: the switch functions in the board (MAC forwarding table, replication, ECN egress queues) for "
      "servers plugged straight into it (docs/fpga.md)");
  auto* o_out = app.add_option("--out", out, "output directory");
  if (!board_mode) o_out->required();
  app.add_option("--format", format, "element format: fp32, bf16 or fp16");
  app.add_option("--subnormals", subnormals, "ieee (kept) or ftz (flushed, FTZ+DAZ)");
  app.add_option("--contexts", in.contexts, "number of (JID, TID) contexts");
  app.add_option("--max-elems", in.max_elems,
                 "largest COUNT (default floor(" + std::to_string(proto::kDefaultPayloadBytes) + " / ES))");
  app.add_option("--buffer-kib", in.buffer_kib, "buffer per port in KiB");
  app.add_option("--prefix", in.prefix, "module name prefix");
  app.add_option("--module", in.module, "top (the accelerator) or addtree (the SIMD adder tree alone)");
  app.add_option("--sum", in.sum, "tree (fixed tree order, default) or exact (one rounding of the exact sum)");
  if (const auto code = panama::parse_command_line(app, argc, argv, "panama-gen")) return *code;
  if (list_boards) {
    for (const auto& b : boards())
      std::printf("%-6s %-22s top %-16s core --ports %d --gbps %g --mhz %g  %s\n", b.name.c_str(), b.part.c_str(),
                  b.top.c_str(), b.ports, b.gbps, b.mhz, b.description.c_str());
    return 0;
  }
  if (out.empty()) {
    std::fprintf(stderr, "panama-gen: --out is required\n");
    return 2;
  }
  try {
    const Board* board = board_name.empty() ? nullptr : &find_board(board_name);
    for (auto* o : {o_mports, o_mkey, o_mmac, o_mip, o_mudp, o_standalone, o_devkey})
      if (*o && !board) throw std::runtime_error(o->get_name() + " needs --board");
    if (board && !*o_mkey && !insecure_dev_key) {
      // A secret never defaults to a public value: a usage error, before anything is written.
      std::fprintf(stderr,
                   "panama-gen: --board needs --mgmt-key FILE (the board's 128-bit key, a private file), or "
                   "--insecure-dev-key to accept the public development key (simulation only)\n");
      return 2;
    }
    if (*o_mkey && insecure_dev_key) throw std::runtime_error("--insecure-dev-key and --mgmt-key exclude each other");
    MgmtConfig mgmt;
    if (board) {
      mgmt = parse_mgmt(*board, mgmt_opts);
      if (!*o_ports) in.ports = board->ports;
      if (!*o_gbps) in.gbps = board->gbps;
      if (!*o_mhz) in.mhz = board->mhz;
    }
    in.format = parse_format(format);
    in.subnormals = parse_subnormals(subnormals);
    const Config c = Config::derive(in);
    if (board) check_board_config(*board, c);
    auto files = build_output(c);
    if (board) add_board_files(*board, c, mgmt, standalone, files);
    write_output(files, out);
    // Only once the output exists: an error stays the only line.
    if (board && mgmt.dev_key)
      std::fprintf(stderr,
                   "panama-gen: warning: --insecure-dev-key: the board accepts the public development key 000102..0f "
                   "(anyone can program it; docs/mgmt.md)\n");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "panama-gen: %s\n", e.what());
    return 1;
  }
  return 0;
}
