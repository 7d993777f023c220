// panama-host's subcommands (tools.md, docs/host.md). Each file cli_NAME.cpp declares one
// subcommand's options and returns how to run it; main.cpp holds the table of subcommands.
#pragma once

#include <atomic>
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
Runner allocator_subcommand(CLI::App& cmd);

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
// Writes PATH whole or not at all: PATH.tmp, then a rename. Throws "cannot write PATH". An
// immediate stop (below) during the write removes PATH.tmp.
void write_file_atomic(const std::string& path, const void* data, size_t n);

// Stopping signals (SIGINT, SIGTERM, SIGHUP, SIGQUIT). Graceful: the handler only sets
// stop_requested(), the subcommand notices it within its own bound (the stand-in between rounds,
// the worker within 100 ms of waiting) and ends in order. Immediate: the handler writes
// "panama-host WHO: stopped by SIGNAME; nothing written" and exits 128 + the signal at once (a
// controller between requests: the contexts are enabled last, so a stop leaves none half-set).
enum class StopMode { graceful, immediate };
void catch_stop_signals(StopMode mode, const std::string& who);
const std::atomic<bool>& stop_requested();
int stop_signal();               // the signal that asked to stop, 0 if none
std::string stop_signal_name();  // "SIGTERM", ...

}  // namespace panama::host::cli
