// The Verilated RTL as the stand-in's engine: the design's harness (standin/engines/rtl_harness.cpp,
// verilated on first use and cached) runs as a child process in --live mode, and this class
// speaks its line protocol over two pipes.
#include <errno.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "design.h"
#include "live_verbs.h"
#include "rtl_engine.h"
#include "switch.h"

namespace panama::host {
namespace {

class RtlEngine : public Engine {
 public:
  RtlEngine(const std::string& rtl_dir, const std::string& ctx_path, int ports, bool shell)
      : ports_(ports), shell_(shell) {
    const Config cfg = load_design(rtl_dir).config;
    const std::string exe = rtl::harness_executable(rtl_dir, cfg, shell ? "shell" : "");
    int to_child[2], from_child[2];
    if (pipe(to_child) || pipe(from_child)) throw std::runtime_error("pipe failed");
    pid_ = fork();
    if (pid_ < 0) throw std::runtime_error("fork failed");
    if (pid_ == 0) {
      // Its own process group: a signal meant for the stand-in's group (timeout(1) signals the
      // whole group) must not kill the harness before the stand-in has read its counters; the
      // harness ends when its stdin closes.
      setpgid(0, 0);
      dup2(to_child[0], 0);
      dup2(from_child[1], 1);
      close(to_child[1]);
      close(from_child[0]);
      const std::string conf = rtl_dir + "/config.json";
      execl(exe.c_str(), exe.c_str(), live::kFlag, "--config", conf.c_str(), "--contexts", ctx_path.c_str(),
            static_cast<char*>(nullptr));
      _exit(127);
    }
    close(to_child[0]);
    close(from_child[1]);
    out_fd_ = to_child[1];
    in_fd_ = from_child[0];
    signal(SIGPIPE, SIG_IGN);
  }
  ~RtlEngine() override {
    if (out_fd_ >= 0) {
      try {
        out_ += live::kQuit;
        out_ += '\n';
        flush();
      } catch (const std::exception&) {
      }
      close(out_fd_);
    }
    if (in_fd_ >= 0) close(in_fd_);
    if (pid_ > 0)
      while (waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
      }
  }

  int ports() const override { return ports_; }
  void inject(int port, wire::Bytes frame) override {
    static const char* d = "0123456789abcdef";
    out_ += live::kInject;
    out_ += ' ' + std::to_string(port) + ' ';
    for (uint8_t b : frame) {
      out_ += d[b >> 4];
      out_ += d[b & 15];
    }
    out_ += '\n';
  }
  void run_until_idle() override { command(live::kRun); }
  void advance(uint64_t cycles) override { command(std::string(live::kAdvance) + ' ' + std::to_string(cycles)); }
  std::vector<EngineOut> take_outputs() override {
    send(live::kOutputs);
    std::vector<EngineOut> v;
    for (std::string l = line(); l != live::kEnd; l = line()) {
      std::istringstream is(l);
      std::string tag, hex;
      EngineOut o;
      is >> tag >> o.port >> o.context >> hex;
      if (tag != live::kOut || hex.size() % 2) throw std::runtime_error("RTL engine: unexpected reply '" + l + "'");
      o.data.resize(hex.size() / 2);
      for (size_t i = 0; i < o.data.size(); ++i)
        o.data[i] = static_cast<uint8_t>(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
      v.push_back(std::move(o));
    }
    return v;
  }
  nlohmann::ordered_json counters() override {
    send(live::kCounters);
    const std::string r = line();
    try {
      return nlohmann::ordered_json::parse(r);
    } catch (const std::exception&) {
      throw std::runtime_error("RTL engine: unexpected reply '" + r.substr(0, 80) + "' to counters");
    }
  }
  void reg_write(uint32_t a, uint32_t v) override {
    if (shell_) Engine::reg_write(a, v);
    command(std::string(live::kWrite) + ' ' + std::to_string(a) + ' ' + std::to_string(v));
  }
  uint32_t reg_read(uint32_t a) override {
    if (shell_) return Engine::reg_read(a);
    send(std::string(live::kRead) + ' ' + std::to_string(a));
    const std::string r = line();
    try {
      return static_cast<uint32_t>(std::stoul(r));
    } catch (const std::exception&) {
      throw std::runtime_error("RTL engine: unexpected reply '" + r + "' to read");
    }
  }
  uint64_t cycles() const override {
    auto* self = const_cast<RtlEngine*>(this);
    self->send(live::kCycles);
    const std::string r = self->line();
    try {
      return std::stoull(r);
    } catch (const std::exception&) {
      throw std::runtime_error("RTL engine: unexpected reply '" + r + "' to cycles");
    }
  }

 private:
  // Raw fds with explicit EINTR handling (not stdio): a signal that arrives while a request or
  // its reply is half transferred (the stand-in's SIGTERM at shutdown) must neither lose bytes
  // nor end the exchange, or the final counters read that follows gets a partial line.
  void flush() {
    size_t off = 0;
    while (off < out_.size()) {
      const ssize_t n = ::write(out_fd_, out_.data() + off, out_.size() - off);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        out_.clear();
        throw std::runtime_error("the RTL engine stopped (writing to its harness failed)");
      }
      off += static_cast<size_t>(n);
    }
    out_.clear();
  }
  void send(const std::string& c) {
    out_ += c;
    out_ += '\n';
    flush();
  }
  std::string line() {
    for (;;) {
      const size_t nl = in_.find('\n', in_pos_);
      if (nl != std::string::npos) {
        std::string s = in_.substr(in_pos_, nl - in_pos_);
        in_pos_ = nl + 1;
        if (in_pos_ > 65536) {
          in_.erase(0, in_pos_);
          in_pos_ = 0;
        }
        return s;
      }
      char b[65536];
      const ssize_t n = ::read(in_fd_, b, sizeof b);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) throw std::runtime_error("the RTL engine stopped (see its messages above)");
      in_.append(b, static_cast<size_t>(n));
    }
  }
  void command(const std::string& c) {
    send(c);
    const std::string r = line();
    if (r != live::kOk) throw std::runtime_error("RTL engine: unexpected reply '" + r + "' to " + c.substr(0, 40));
  }

  int ports_;
  bool shell_;  // the board shell: no register port (its registers are behind management)
  pid_t pid_ = -1;
  int out_fd_ = -1, in_fd_ = -1;
  std::string out_;  // requests not yet written (inject lines go out with the next command)
  std::string in_;   // bytes read, not yet returned as lines
  size_t in_pos_ = 0;
};

}  // namespace

std::unique_ptr<Engine> make_rtl_engine(const std::string& rtl_dir, const std::string& ctx_path, int ports) {
  try {
    return std::unique_ptr<Engine>(new RtlEngine(rtl_dir, ctx_path, ports, false));
  } catch (const rtl::EngineError& e) {
    throw std::runtime_error(e.what());
  }
}

std::unique_ptr<Engine> make_shell_engine(const std::string& rtl_dir, int ports) {
  try {
    return std::unique_ptr<Engine>(new RtlEngine(rtl_dir, "", ports, true));
  } catch (const rtl::EngineError& e) {
    throw std::runtime_error(e.what());
  }
}

}  // namespace panama::host
