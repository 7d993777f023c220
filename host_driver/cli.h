// panama-host's subcommands (tools.md, docs/host.md). Each file cli_NAME.cpp adds one subcommand's
// options to the app and returns how to run it; main.cpp holds the table.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace panama::host::cli {

struct Subcommand {
  CLI::App* app = nullptr;
  std::function<int()> run;  // after a successful parse of this subcommand; the exit code
};

Subcommand add_worker(CLI::App& app);
Subcommand add_switch(CLI::App& app);
Subcommand add_controller(CLI::App& app);

// What the subcommands share (cli_common.cpp).
std::vector<std::string> split(const std::string& s);  // on commas; "" gives none
// "A,B,...": non-negative ints; throws "WHAT: 'x' is not a number".
std::vector<int> int_list(const std::string& s, const char* what);
// True when PATH.tmp can be created (it is removed again): the file's folder takes a file.
bool can_create_tmp(const std::string& path);

}  // namespace panama::host::cli
