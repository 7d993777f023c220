// The Verilated RTL as the stand-in's engine: the design's harness (testbench/rtl_harness.cpp,
// verilated on first use and cached) runs as a child process in --live mode, and this class
// speaks its line protocol over two pipes.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "config.h"
#include "rtl_engine.h"
#include "switch.h"

namespace panama::host {
namespace {

class RtlEngine : public Engine {
 public:
  RtlEngine(const std::string& rtl_dir, const std::string& ctx_path, int ports) : ports_(ports) {
    std::ifstream in(rtl_dir + "/config.json");
    if (!in) throw std::runtime_error("cannot open " + rtl_dir + "/config.json");
    const Config cfg = Config::from_json(nlohmann::json::parse(in));
    const std::string exe = rtl::harness_executable(rtl_dir, cfg);
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
      execl(exe.c_str(), exe.c_str(), "--live", "--config", conf.c_str(), "--contexts", ctx_path.c_str(),
            static_cast<char*>(nullptr));
      _exit(127);
    }
    close(to_child[0]);
    close(from_child[1]);
    out_ = fdopen(to_child[1], "w");
    in_ = fdopen(from_child[0], "r");
    signal(SIGPIPE, SIG_IGN);
  }
  ~RtlEngine() override {
    if (out_) {
      std::fprintf(out_, "quit\n");
      std::fclose(out_);
    }
    if (in_) std::fclose(in_);
    if (pid_ > 0) waitpid(pid_, nullptr, 0);
  }

  int ports() const override { return ports_; }
  void inject(int port, wire::Bytes frame) override {
    std::fprintf(out_, "inject %d ", port);
    for (uint8_t b : frame) std::fprintf(out_, "%02x", b);
    std::fprintf(out_, "\n");
  }
  void run_until_idle() override { command("run"); }
  void advance(uint64_t cycles) override { command("advance " + std::to_string(cycles)); }
  std::vector<EngineOut> take_outputs() override {
    send("outputs");
    std::vector<EngineOut> v;
    for (std::string l = line(); l != "end"; l = line()) {
      std::istringstream is(l);
      std::string tag, hex;
      EngineOut o;
      is >> tag >> o.port >> o.context >> hex;
      if (tag != "out") throw std::runtime_error("RTL engine: unexpected reply '" + l + "'");
      o.data.resize(hex.size() / 2);
      for (size_t i = 0; i < o.data.size(); ++i)
        o.data[i] = static_cast<uint8_t>(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
      v.push_back(std::move(o));
    }
    return v;
  }
  nlohmann::ordered_json counters() override {
    send("counters");
    return nlohmann::ordered_json::parse(line());
  }
  void reg_write(uint32_t a, uint32_t v) override {
    command("write " + std::to_string(a) + " " + std::to_string(v));
  }
  uint32_t reg_read(uint32_t a) override {
    send("read " + std::to_string(a));
    const std::string r = line();
    try {
      return static_cast<uint32_t>(std::stoul(r));
    } catch (const std::exception&) {
      throw std::runtime_error("RTL engine: unexpected reply '" + r + "' to read");
    }
  }
  uint64_t cycles() const override {
    auto* self = const_cast<RtlEngine*>(this);
    self->send("cycles");
    return std::stoull(self->line());
  }

 private:
  void send(const std::string& c) {
    std::fprintf(out_, "%s\n", c.c_str());
    std::fflush(out_);
  }
  std::string line() {
    std::string s;
    for (int ch; (ch = std::fgetc(in_)) != EOF && ch != '\n';) s += static_cast<char>(ch);
    if (s.empty() && std::feof(in_)) throw std::runtime_error("the RTL engine stopped (see its messages above)");
    return s;
  }
  void command(const std::string& c) {
    send(c);
    const std::string r = line();
    if (r != "ok") throw std::runtime_error("RTL engine: unexpected reply '" + r + "' to " + c);
  }

  int ports_;
  pid_t pid_ = -1;
  FILE* out_ = nullptr;
  FILE* in_ = nullptr;
};

}  // namespace

std::unique_ptr<Engine> make_rtl_engine(const std::string& rtl_dir, const std::string& ctx_path, int ports) {
  try {
    return std::unique_ptr<Engine>(new RtlEngine(rtl_dir, ctx_path, ports));
  } catch (const rtl::EngineError& e) {
    throw std::runtime_error(e.what());
  }
}

}  // namespace panama::host
