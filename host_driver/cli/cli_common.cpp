#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "cli.h"
#include "parse_num.h"

namespace panama::host::cli {

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> v;
  std::stringstream ss(s);
  std::string x;
  while (std::getline(ss, x, ',')) v.push_back(x);
  return v;
}

std::vector<int> int_list(const std::string& s, const char* what) {
  std::vector<int> v;
  for (const auto& x : split(s)) {
    const auto n = parse_unsigned(x, 10, INT_MAX);
    if (!n) throw std::runtime_error(std::string(what) + ": '" + x + "' is not a number");
    v.push_back(static_cast<int>(*n));
  }
  return v;
}

bool can_create_tmp(const std::string& path) {
  const std::string tmp = path + ".tmp";
  std::ofstream probe(tmp, std::ios::binary);
  if (!probe) return false;
  probe.close();
  std::remove(tmp.c_str());
  return true;
}

namespace {

std::atomic<bool> g_stop{false};
std::atomic<int> g_signal{0};
StopMode g_mode = StopMode::graceful;
char g_message[160];  // the immediate mode's line, formatted before any signal
size_t g_message_len = 0;
// The temporary file being written (immediate mode removes it). Set only outside the handler.
char g_tmp[4096];
std::atomic<bool> g_tmp_set{false};

const char* name_of(int sig) {
  switch (sig) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    case SIGHUP:
      return "SIGHUP";
    case SIGQUIT:
      return "SIGQUIT";
    default:
      return "a signal";
  }
}

// Async-signal-safe only: atomics, write, unlink, _exit.
void on_stop_signal(int sig) {
  g_signal.store(sig);
  g_stop.store(true);
  if (g_mode != StopMode::immediate) return;
  if (g_tmp_set.load()) unlink(g_tmp);
  const char* n = name_of(sig);
  ssize_t r = write(STDERR_FILENO, g_message, g_message_len);
  r = write(STDERR_FILENO, n, std::strlen(n));
  r = write(STDERR_FILENO, "; nothing written\n", 18);
  (void)r;
  _exit(128 + sig);
}

}  // namespace

void write_file_atomic(const std::string& path, const void* data, size_t n) {
  const std::string tmp = path + ".tmp";
  if (tmp.size() < sizeof g_tmp) {
    std::memcpy(g_tmp, tmp.c_str(), tmp.size() + 1);
    g_tmp_set.store(true);
  }
  bool ok = false;
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(static_cast<const char*>(data), static_cast<std::streamsize>(n));
    out.close();
    ok = static_cast<bool>(out);
  }
  ok = ok && std::rename(tmp.c_str(), path.c_str()) == 0;
  g_tmp_set.store(false);
  if (!ok) {
    std::remove(tmp.c_str());
    throw std::runtime_error("cannot write " + path);
  }
}

void catch_stop_signals(StopMode mode, const std::string& who) {
  g_mode = mode;
  std::snprintf(g_message, sizeof g_message, "panama-host %s: stopped by ", who.c_str());
  g_message_len = std::strlen(g_message);
  // SA_RESTART: a stop request must not break a system call in flight (a half-read reply of the
  // RTL harness); the subcommand notices the flag between its steps.
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sa.sa_flags = SA_RESTART;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) sigaction(sig, &sa, nullptr);
}

const std::atomic<bool>& stop_requested() { return g_stop; }
int stop_signal() { return g_signal.load(); }
std::string stop_signal_name() { return name_of(g_signal.load()); }

}  // namespace panama::host::cli
