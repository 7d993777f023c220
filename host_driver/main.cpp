// panama-host: the host driver's command line (tools.md, docs/host.md).
//   panama-host worker --iface IF --job J --rank R --world W --trees T --in GRAD.bin --out RESULT.bin ...
//   panama-host switch --rtl DIR --contexts CTX.json --ifaces IF0,IF1,... ...
//   panama-host controller --regmap DIR (--contexts CTX.json | --job J ...) (--writes FILE | --control PATH)
// Each subcommand lives in cli_NAME.cpp.
#include <cstdio>

#include "cli.h"

int main(int argc, char** argv) {
  using namespace panama::host::cli;
  CLI::App app{"panama-host: host driver and switch stand-in for the PANAMA-style accelerator"};
  app.require_subcommand(1);
  const Subcommand subcommands[] = {add_worker(app), add_switch(app), add_controller(app)};
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  try {
    for (const Subcommand& s : subcommands)
      if (s.app->parsed()) return s.run();
    return 1;  // not reached: require_subcommand(1)
  } catch (const std::exception& e) {
    std::fprintf(stderr, "panama-host: %s\n", e.what());
    return 1;
  }
}
