// panama-host: the host driver's command line (tools.md, docs/host.md).
//   panama-host worker --iface IF --job J --rank R --world W --trees T --in GRAD.bin --out RESULT.bin ...
//   panama-host switch --rtl DIR --contexts CTX.json --ifaces IF0,IF1,... ...
//   panama-host controller --regmap DIR (--contexts CTX.json | --job J ...) (--writes FILE | --control PATH)
//   panama-host flow (--recv | --to IP) --seconds S ...
//   panama-host allocator --socket PATH --state FILE.sqlite --inventory FILE ...
// Each subcommand's options and its run are in cli_NAME.cpp.
#include <cstdio>
#include <utility>
#include <vector>

#include "cli.h"
#include "cli_parse.h"

namespace {

using namespace panama::host::cli;

struct SubcommandEntry {
  const char* name;
  const char* about;
  Runner (*declare)(CLI::App& cmd);
};

const SubcommandEntry kSubcommands[] = {
    {"worker", "all-reduce GRAD.bin with the job's other workers", worker_subcommand},
    {"switch", "switch stand-in: accelerator engine + switch chip on interfaces", switch_subcommand},
    {"controller", "program the accelerator's contexts (live or as a register-write list)", controller_subcommand},
    {"flow", "a DCTCP-style UDP flow (sender or receiver) for the fairness experiment", flow_subcommand},
    {"allocator", "serve leases of accelerator contexts to jobs (the contexts' one owner)", allocator_subcommand},
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"panama-host: host driver and switch stand-in for the PANAMA-style accelerator"};
  app.require_subcommand(1);
  std::vector<std::pair<const CLI::App*, Runner>> subcommands;
  for (const SubcommandEntry& e : kSubcommands) {
    CLI::App* cmd = app.add_subcommand(e.name, e.about);
    subcommands.emplace_back(cmd, e.declare(*cmd));
  }
  if (const auto code = panama::parse_command_line(app, argc, argv, "panama-host")) return *code;
  try {
    for (const auto& [cmd, run] : subcommands)
      if (cmd->parsed()) return run();
    return 1;  // not reached: require_subcommand(1)
  } catch (const std::exception& e) {
    std::fprintf(stderr, "panama-host: %s\n", e.what());
    return 1;
  }
}
