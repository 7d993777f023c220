// panama-host's subcommands (tools.md, docs/host.md). Each file cli_NAME.cpp declares one
// subcommand's options and returns how to run it; main.cpp holds the table of subcommands.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace panama::host::cli {

using Runner = std::function<int()>;

// Declare the options of subcommand cmd (its name and help are main.cpp's table) and return how
// to run it once parsed.
Runner worker_subcommand(CLI::App& cmd);
Runner switch_subcommand(CLI::App& cmd);
Runner controller_subcommand(CLI::App& cmd);
Runner flow_subcommand(CLI::App& cmd);

// For cli_NAME.cpp: a subcommand's options of type Opts, declared on cmd by add_options; the
// runner hands them, as parsed, to run.
template <typename Opts>
Runner with_options(CLI::App& cmd, void (*add_options)(CLI::App*, Opts&), int (*run)(const Opts&)) {
  auto o = std::make_shared<Opts>();
  add_options(&cmd, *o);
  return [o, run] { return run(*o); };
}

// What the subcommands share (cli_common.cpp).
std::vector<std::string> split(const std::string& s);  // on commas; "" gives none
// "A,B,...": non-negative ints; throws "WHAT: 'x' is not a number".
std::vector<int> int_list(const std::string& s, const char* what);
// True when PATH.tmp can be created (it is removed again): the file's folder takes a file.
bool can_create_tmp(const std::string& path);

}  // namespace panama::host::cli
