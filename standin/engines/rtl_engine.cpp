#include "rtl_engine.h"

#include <signal.h>
#include <sys/wait.h>

#include <cerrno>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "design.h"

namespace fs = std::filesystem;

namespace panama::rtl {
namespace {

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  if (!f) throw EngineError(p.string() + ": cannot read");
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// Where the harness's sources, the archives it links and the cache of verilated designs are. In
// the build tree: the source tree, the build's archives, build/rtl_cache. Installed
// (`cmake --install`): PREFIX/share/panama/harness, PREFIX/lib/panama, and a per-user cache
// ($XDG_CACHE_HOME or ~/.cache, /panama/rtl_cache). PANAMA_SIM_CACHE overrides the cache.
struct HarnessPaths {
  fs::path src;      // holds standin/engines/rtl_harness.cpp and the headers it includes
  std::string link;  // the archives and libraries the harness links, for verilator's -LDFLAGS
  fs::path cache;
};

HarnessPaths harness_paths() {
  HarnessPaths p;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  const fs::path prefix = ec ? fs::path() : exe.parent_path().parent_path();
  const bool installed = !prefix.empty() && fs::exists(prefix / "share/panama/harness/standin/engines/rtl_harness.cpp");
  std::string archives;
  if (installed) {
    p.src = prefix / "share/panama/harness";
    for (const char* a : {"libpanama_model.a", "libpanama_wire.a", "libpanama_config.a"})
      archives += (prefix / "lib/panama" / a).string() + " ";
  } else {
    p.src = PANAMA_SOURCE_DIR;
    archives = PANAMA_HARNESS_ARCHIVES " ";
  }
  p.link = archives + PANAMA_HARNESS_SYSLIBS;
  if (const char* env = std::getenv("PANAMA_SIM_CACHE")) {
    p.cache = env;
  } else if (!installed) {
    p.cache = fs::path(PANAMA_BUILD_DIR) / "rtl_cache";
  } else {
    const char* xdg = std::getenv("XDG_CACHE_HOME");
    const char* home = std::getenv("HOME");
    if (xdg && *xdg)
      p.cache = fs::path(xdg) / "panama/rtl_cache";
    else if (home && *home)
      p.cache = fs::path(home) / ".cache/panama/rtl_cache";
    else
      throw EngineError("no cache directory for verilated designs: set PANAMA_SIM_CACHE or HOME");
  }
  return p;
}

// FNV-1a over every input of the build: the design's sources, the harness and its helpers.
std::string cache_key(const std::string& rtl_dir, const std::string& variant, const HarnessPaths& hp) {
  uint64_t h = 1469598103934665603ull;
  auto mix = [&](const std::string& s) {
    for (unsigned char ch : s) h = (h ^ ch) * 1099511628211ull;
  };
  std::istringstream fl(slurp(fs::path(rtl_dir) / "filelist.f"));
  for (std::string line; std::getline(fl, line);)
    if (!line.empty()) mix(line), mix(slurp(fs::path(rtl_dir) / line));
  // The harness and every header it can include (gen/config/ctx_program.h, config.h, the wire and
  // model headers, ...), then the static libraries it links, by content: a change to any of them
  // makes a new harness, never a stale one.
  const fs::path& src = hp.src;
  mix(slurp(src / (variant == "shell" ? "standin/engines/shell_harness.cpp" : "standin/engines/rtl_harness.cpp")));
  for (const char* dir : {"gen/config", "wire", "systemc_model", "standin/engines", "numerics"}) {
    std::vector<fs::path> headers;
    for (const auto& e : fs::directory_iterator(src / dir))
      if (e.path().extension() == ".h") headers.push_back(e.path());
    std::sort(headers.begin(), headers.end());
    for (const auto& h : headers) mix(h.filename().string()), mix(slurp(h));
  }
  std::istringstream flags(hp.link);
  for (std::string w; flags >> w;)
    if (w.size() > 2 && w.compare(w.size() - 2, 2, ".a") == 0 && fs::exists(w)) mix(slurp(w));
  mix(PANAMA_HARNESS_SYSLIBS);
  char b[32];
  std::snprintf(b, sizeof b, "%016llx", static_cast<unsigned long long>(h));
  return variant.empty() ? std::string(b) : std::string(b) + "-" + variant;
}

int run_command(const std::string& cmd) {
  const int st = std::system(cmd.c_str());
  return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}

// Runs a long build with a sign of life on stderr: a live line with the elapsed time on a
// terminal, a plain line every 10 s otherwise (verilating takes 30 s or more).
int run_with_progress(const std::string& cmd, const std::string& what) {
  const pid_t pid = fork();
  if (pid < 0) return run_command(cmd);
  if (pid == 0) {
    execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  const bool tty = isatty(2);
  std::fprintf(stderr, "%s ...%s", what.c_str(), tty ? "" : "\n");
  int st = 0;
  for (int tick = 1;; ++tick) {
    const pid_t r = waitpid(pid, &st, WNOHANG);
    if (r == pid || (r < 0 && errno != EINTR)) break;
    usleep(200000);
    if (tty && tick % 5 == 0)
      std::fprintf(stderr, "\r%s ... %d s", what.c_str(), tick / 5);
    else if (!tty && tick % 50 == 0)
      std::fprintf(stderr, "%s: %d s\n", what.c_str(), tick / 5);
  }
  if (tty) std::fprintf(stderr, "\r%s: done\033[K\n", what.c_str());
  return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}

// Build directories of builds that were killed (their process is gone) are removed; a build
// directory holds the pid of its builder.
void remove_stale_builds(const fs::path& dir) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(".build.", 0) != 0) continue;
    std::ifstream in(e.path() / "builder.pid");
    long pid = 0;
    bool alive;
    if (in >> pid)
      alive = pid > 0 && (kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM);
    else  // no pid (yet): a build that is just starting, or one from before pids were written
      alive = fs::file_time_type::clock::now() - fs::last_write_time(e.path(), ec) < std::chrono::minutes(10);
    if (!alive) fs::remove_all(e.path(), ec);
  }
}

// The value on the board top's line marked "// panama-gen: NAME" (gen/boards.cpp writes them).
std::string board_param(const std::string& top_text, const std::string& name) {
  const std::string mark = "// panama-gen: " + name;
  const size_t at = top_text.find(mark);
  const size_t eq = at == std::string::npos ? at : top_text.rfind('=', at);
  if (eq == std::string::npos) throw EngineError("the board top has no " + name + " parameter");
  std::string v = top_text.substr(eq + 1, at - eq - 1);
  v.erase(std::remove_if(v.begin(), v.end(), [](char c) { return c == ',' || c == ' ' || c == '\t'; }), v.end());
  return v;
}

// Verilator -G options of the board shell (harness variant "shell"): the shape from config.json
// "board"."shell", the rest from the board top's marked parameters (management, the key included:
// it is only there, never in config.json; contexts, register-file address bits, standalone).
std::string shell_params(const std::string& rtl_dir, const Config& cfg) {
  const nlohmann::json j = load_design(rtl_dir).json;
  if (!j.contains("board") || !j["board"].contains("shell"))
    throw EngineError(rtl_dir + " is not a board output with a shell (panama-gen --board NAME)");
  const auto& sh = j["board"]["shell"];
  const std::string top = slurp(fs::path(rtl_dir) / (j["board"].at("top").get<std::string>() + ".v"));
  std::ostringstream g;
  g << " -GPORTS=" << cfg.in.ports << " -GDATA_W=" << cfg.bus_bits << " -GAGG_PORT=" << sh.at("agg_port").get<int>()
    << " -GFIFO_ADDR_W=" << sh.at("fifo_aw").get<int>();
  const std::pair<const char*, const char*> marked[] = {
      {"mgmt-ports", "MGMT_PORTS"}, {"mgmt-key", "MGMT_KEY"},           {"mgmt-mac", "MGMT_MAC"},
      {"mgmt-ip", "MGMT_IP"},       {"mgmt-udp-port", "MGMT_UDP_PORT"}, {"contexts", "CONTEXTS"},
      {"addr-bits", "ADDR_W"},      {"standalone", "STANDALONE"}};
  for (const auto& [mark, name] : marked) g << " \"-G" << name << "=" << board_param(top, mark) << "\"";
  return g.str();
}

fs::path build_harness(const std::string& rtl_dir, const Config& cfg, const std::string& variant) {
  const HarnessPaths hp = harness_paths();
  const fs::path cache = hp.cache / cache_key(rtl_dir, variant, hp);
  const fs::path exe = cache / "harness";
  remove_stale_builds(cache.parent_path());
  if (fs::exists(exe)) return exe;
  fs::create_directories(cache.parent_path());
  std::string tmpl = (cache.parent_path() / ".build.XXXXXX").string();
  if (!mkdtemp(tmpl.data())) throw EngineError("cannot create a build directory in " + cache.parent_path().string());
  const fs::path tmp = tmpl;
  std::ofstream(tmp / "builder.pid") << getpid() << "\n";
  {
    std::ofstream ph(tmp / "ports.h");
    ph << "#define PANAMA_PORT_LIST(X)";
    for (int p = 0; p < cfg.in.ports; ++p) {
      char nn[16];
      std::snprintf(nn, sizeof nn, " X(%02d)", p);
      ph << nn;
    }
    ph << "\n";
  }
  const std::string src = hp.src.string();
  // The trace and coverage variants: verilator instruments the model, the harness is told.
  std::string vflags, vdefs;
  if (variant == "trace")
    vflags = " --trace-fst", vdefs = " -DPANAMA_TRACE";
  else if (variant == "coverage")
    vflags = " --coverage", vdefs = " -DPANAMA_COVERAGE";
  else if (variant == "shell")
    vflags = shell_params(rtl_dir, cfg);
  else if (!variant.empty())
    throw EngineError("unknown harness variant '" + variant + "'");
  std::ostringstream cmd;
  cmd << "verilator --cc --exe --build -j 2 -O3 --x-assign fast --x-initial fast -Wno-fatal -Werror-USERERROR "
         "-Wno-lint -Wno-style"
      << vflags << " --Mdir " << (tmp / "obj").string() << " --prefix Vtop --top-module "
      << (variant == "shell" ? cfg.in.prefix + "_board_shell" : cfg.top_name()) << " -o " << (tmp / "harness").string()
      << " -CFLAGS \"-std=c++17 -O1 -I" << tmp.string() << " -I" << src << "/gen/config -I" << src << "/wire -I" << src
      << "/systemc_model -I" << src << "/standin/engines -I" << src << "/numerics " << PANAMA_HARNESS_CFLAGS << vdefs
      << "\""
      << " -LDFLAGS \"" << hp.link << "\""
      << " -F " << (fs::absolute(rtl_dir) / "filelist.f").string() << " " << src
      << (variant == "shell" ? "/standin/engines/shell_harness.cpp" : "/standin/engines/rtl_harness.cpp") << " >"
      << (tmp / "build.log").string() << " 2>&1";
  if (run_with_progress(cmd.str(), "verilating " + rtl_dir + " (first use; cached in " + cache.string() + ")") != 0)
    throw EngineError("verilating " + rtl_dir + " failed; see " + (tmp / "build.log").string());
  std::error_code ec;
  fs::rename(tmp, cache, ec);  // another process may have won the race: its build is as good
  if (ec) fs::remove_all(tmp, ec);
  return exe;
}

}  // namespace

std::string harness_executable(const std::string& rtl_dir, const Config& cfg, const std::string& variant) {
  return build_harness(rtl_dir, cfg, variant).string();
}

model::Result run(const std::string& rtl_dir, const Config& cfg, const std::string& ctx_path, const std::string& in_dir,
                  const model::Options& opt, const Extras& x) {
  if (!x.trace.empty() && !x.coverage.empty()) throw EngineError("--trace and --coverage are separate builds: use one");
  const fs::path exe = build_harness(rtl_dir, cfg, !x.trace.empty() ? "trace" : !x.coverage.empty() ? "coverage" : "");
  std::string tmpl = (fs::temp_directory_path() / "panama-rtl-XXXXXX").string();
  const int fd = mkstemp(tmpl.data());
  if (fd < 0) throw EngineError("cannot create a temporary file");
  close(fd);
  std::ostringstream cmd;
  cmd << exe.string() << " --config '" << (fs::path(rtl_dir) / "config.json").string() << "' --contexts '" << ctx_path
      << "' --in-dir '" << in_dir << "' --result '" << tmpl << "' --seed " << opt.seed << " --idle " << opt.idle_pct
      << " --backpressure " << opt.backpressure_pct;
  if (!x.trace.empty()) cmd << " --trace '" << fs::absolute(x.trace).string() << "'";
  if (!x.coverage.empty()) cmd << " --coverage '" << fs::absolute(x.coverage).string() << "'";
  if (x.stats) cmd << " --stats";
  const int rc = run_command(cmd.str());
  std::error_code ec;
  if (rc != 0) {
    fs::remove(tmpl, ec);
    throw EngineError("the RTL engine failed on " + rtl_dir);
  }
  const std::string text = slurp(tmpl);
  fs::remove(tmpl, ec);
  return model::result_from_json(nlohmann::json::parse(text));
}

}  // namespace panama::rtl
