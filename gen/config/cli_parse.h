// One command-line convention for every binary of the project (docs/architecture.md, "Command
// lines"): --help prints the help (of the subcommand given, if any) on stdout and exits 0; a usage
// error (unknown flag, missing or bad value) prints one line "PROG: what is wrong" on stderr and
// exits 2; a test that cannot run where it is started exits 77. Header only: the binaries link
// CLI11 themselves.
#pragma once

#include <cstdio>
#include <iostream>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

namespace panama {

// The help of every tool's design-folder option: `--design DIR` (or PANAMA_DESIGN in the
// environment); the tool's older names for it (--rtl, --regmap) stay as aliases.
inline constexpr const char* kDesignHelp =
    "the generated design's folder (panama-gen --out: config.json, regmap.json); also PANAMA_DESIGN. "
    "Old names, still accepted: --rtl, --regmap";

// Parses the command line into app. Returns no value when the run goes on, else the exit code
// (0 after --help, 2 after a usage error).
inline std::optional<int> parse_command_line(CLI::App& app, int argc, char** argv, const char* prog) {
  try {
    app.parse(argc, argv);
    return std::nullopt;
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    return 0;
  } catch (const CLI::CallForAllHelp&) {
    std::cout << app.help("", CLI::AppFormatMode::All);
    return 0;
  } catch (const CLI::ParseError& e) {
    std::string msg = e.what();
    if (msg.empty()) msg = e.get_name();
    for (auto& ch : msg)
      if (ch == '\n') ch = ' ';
    std::fprintf(stderr, "%s: %s\n", prog, msg.c_str());
    return 2;
  }
}

}  // namespace panama
