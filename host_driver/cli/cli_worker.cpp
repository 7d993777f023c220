// `panama-host worker` (tools.md, docs/host.md): all-reduces a file with the job's other workers.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <numeric>
#include <time.h>
#include <exception>

#include <sys/resource.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "allreduce.h"
#include "backends.h"
#include "cli.h"
#include "cli_worker.h"
#include "design.h"
#include "job.h"
#include "parse_num.h"
#include "protocol.h"
#include "xdp_transport.h"

namespace panama::host::cli {
namespace {

std::vector<uint8_t> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::vector<uint8_t> b((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw std::runtime_error("cannot read " + path);
  return b;
}

// --progress: a CSV line every interval (written when the all-reduce sends or receives): the
// goodput of the results of this job (payload bits of RESULT frames received per second), the
// transmit rate (frame bits sent per second) and each tree's window.
// A transport that watches another: every call goes through unchanged (frames in place, no copy
// added), and D (the watcher) sees each frame: D::on_tx(bytes) for what is sent, D::on_rx(frame,
// len) for what is received, then D::tick().
template <class D>
class Watching : public Transport {
 public:
  explicit Watching(Transport& t) : t_(t) {}
  void flush() override { t_.flush(); }
  std::string datapath() const override { return t_.datapath(); }
  std::vector<std::pair<std::string, uint64_t>> link_counters() const override { return t_.link_counters(); }
  void send(const wire::Bytes& frame) override {
    t_.send(frame);
    self().on_tx(frame.size());
    self().tick();
  }
  uint8_t* tx_begin(size_t len) override { return t_.tx_begin(len); }
  void tx_end(size_t len) override {
    t_.tx_end(len);
    self().on_tx(len);
    self().tick();
  }
  bool recv(wire::Bytes& frame, Clock::time_point deadline) override {
    const bool r = t_.recv(frame, deadline);
    if (r) self().on_rx(frame.data(), frame.size());
    self().tick();
    return r;
  }
  bool recv_view(const uint8_t*& frame, size_t& len, Clock::time_point deadline) override {
    const bool r = t_.recv_view(frame, len, deadline);
    if (r) self().on_rx(frame, len);
    self().tick();
    return r;
  }

 private:
  D& self() { return static_cast<D&>(*this); }
  Transport& t_;
};

class ProgressTransport : public Watching<ProgressTransport> {
 public:
  ProgressTransport(Transport& t, const std::string& path, double interval, uint16_t jid, int trees)
      : Watching(t), interval_(interval), jid_(jid), trees_(trees) {
    f_ = std::fopen(path.c_str(), "w");
    if (!f_) throw std::runtime_error("cannot write " + path);
    std::fprintf(f_, "time_s,interval_s,goodput_mbps,tx_mbps,results,results_ce");
    for (int t = 0; t < trees; ++t) std::fprintf(f_, ",cwnd%d", t);
    std::fprintf(f_, "\n");
    start_ = last_ = Clock::now();
  }
  ~ProgressTransport() override {
    line(Clock::now());
    std::fclose(f_);
  }
  void attach(const AllReduce* ar) { ar_ = ar; }

 private:
  friend class Watching<ProgressTransport>;
  void on_tx(size_t bytes) { tx_bytes_ += static_cast<double>(bytes); }
  void on_rx(const uint8_t* f, size_t len) {
    if (len < wire::kHeaderBytes) return;
    if ((f[wire::off::flags] & wire::kFlagResult) && wire::get16(f + wire::off::jid) == jid_) {
      res_bytes_ += static_cast<double>(len - wire::kHeaderBytes);
      ++results_;
      if (wire::ecn(f) == wire::kEcnCe) ++ce_;
    }
  }
  void tick() {
    const auto now = Clock::now();
    if (std::chrono::duration<double>(now - last_).count() >= interval_) line(now);
  }
  void line(Clock::time_point now) {
    const double dt = std::chrono::duration<double>(now - last_).count();
    if (dt <= 0) return;
    std::fprintf(f_, "%.3f,%.3f,%.3f,%.3f,%llu,%llu", std::chrono::duration<double>(now - start_).count(), dt,
                 res_bytes_ * 8 / dt / 1e6, tx_bytes_ * 8 / dt / 1e6, static_cast<unsigned long long>(results_),
                 static_cast<unsigned long long>(ce_));
    for (int t = 0; t < trees_; ++t) std::fprintf(f_, ",%.3f", ar_ ? ar_->window(t).cwnd() : 0.0);
    std::fprintf(f_, "\n");
    std::fflush(f_);
    last_ = now;
    res_bytes_ = tx_bytes_ = 0;
    results_ = ce_ = 0;
  }
  double interval_;
  uint16_t jid_;
  int trees_;
  const AllReduce* ar_ = nullptr;
  FILE* f_ = nullptr;
  Clock::time_point start_, last_;
  double res_bytes_ = 0, tx_bytes_ = 0;
  uint64_t results_ = 0, ce_ = 0;
};

// --progress-bar: the job's result bytes received against what the run needs (elements x ES x
// iterations; repair and duplicate results count too, so it is capped at 100 %), with rate and
// ETA: a bar redrawn on stderr when it is a terminal, else a plain line every
// --progress-bar-interval seconds. `auto` (the default) is the bar on a terminal, nothing
// otherwise.
class BarTransport : public Watching<BarTransport> {
 public:
  BarTransport(Transport& t, uint16_t jid, int rank, double total_bytes, bool tty, double interval)
      : Watching(t), jid_(jid), rank_(rank), total_(total_bytes), tty_(tty), interval_(tty ? 0.2 : interval) {
    start_ = last_ = Clock::now();
  }
  ~BarTransport() override {
    if (tty_ && !drawn_) return;
    draw(Clock::now());  // the final state
    if (tty_) std::fprintf(stderr, "\n");
  }

 private:
  friend class Watching<BarTransport>;
  void on_tx(size_t) {}
  void on_rx(const uint8_t* f, size_t len) {
    if (len >= wire::kHeaderBytes && (f[wire::off::flags] & wire::kFlagResult) &&
        wire::get16(f + wire::off::jid) == jid_)
      got_ += static_cast<double>(len - wire::kHeaderBytes);
  }
  void tick() {
    const auto now = Clock::now();
    if (std::chrono::duration<double>(now - last_).count() >= interval_) draw(now);
  }
  void draw(Clock::time_point now) {
    last_ = now;
    const double el = std::chrono::duration<double>(now - start_).count();
    const double f = total_ > 0 ? std::min(1.0, got_ / total_) : 1.0;
    const double rate = el > 0 ? got_ / el : 0;  // bytes/s
    char eta[32] = "-";
    if (rate > 0 && f < 1) std::snprintf(eta, sizeof eta, "%.0f s", (total_ - got_) / rate);
    const int w = 30, n = static_cast<int>(w * f);
    std::string b(static_cast<size_t>(n), '#');
    b.resize(w, '.');
    if (tty_)
      std::fprintf(stderr, "\r[%s] %5.1f %%  %8.2f Mbit/s  ETA %s\033[K", b.c_str(), 100 * f, rate * 8 / 1e6, eta);
    else
      std::fprintf(stderr, "panama-host worker %d: progress %.1f %%, %.2f Mbit/s, ETA %s\n", rank_, 100 * f,
                   rate * 8 / 1e6, eta);
    drawn_ = true;
  }
  uint16_t jid_;
  int rank_;
  double total_, got_ = 0;
  bool tty_, drawn_ = false;
  double interval_;
  Clock::time_point start_, last_;
};

// What the design accepts (controller --job-out, or the design's folder): MAX_ELEMS (0: not
// given) and FORMAT.
struct DesignLimits {
  int max_elems = 0;
  Format format = Format::fp32;
};

// Every option and path checked before any work: the output's directory must take a file.
void check_worker_opts(const WorkerOpts& o) {
  if (!find_backend(o.backend))
    throw std::runtime_error("--backend must be " + backend_names() + " (not '" + o.backend + "')");
  if (o.job < 0 || o.job > 0xFFFF) throw std::runtime_error("--job must be 0..65535");
  if (o.iterations < 1) throw std::runtime_error("--iterations must be >= 1");
  if (!can_create_tmp(o.out)) throw std::runtime_error("--out: cannot write " + o.out);
  if (!o.stats.empty()) {
    std::ofstream ps(o.stats, std::ios::app);
    if (!ps) throw std::runtime_error("--stats: cannot write " + o.stats);
  }
}

// --format as a Format: an unknown name is an error (never another format).
Format option_format(const WorkerOpts& o) {
  try {
    return parse_format(o.format);
  } catch (const FormatError& e) {
    throw std::runtime_error(std::string("--format: ") + e.what());
  }
}

// The design's MAX_ELEMS and FORMAT from --job-desc (the controller's job description, or the
// design's folder): vectors are sized from them, and a request the design would drop is refused
// here rather than timing out as a silent peer.
DesignLimits read_job_desc(const WorkerOpts& o) {
  DesignLimits d{0, option_format(o)};
  if (o.job_desc.empty()) return d;
  Format f = d.format;
  if (std::filesystem::is_directory(o.job_desc)) {
    try {
      const Design design = load_design(o.job_desc);
      d.max_elems = design.config.max_elems;
      f = design.config.in.format;
    } catch (const std::exception& e) {
      throw std::runtime_error("--job-desc " + std::string(e.what()));
    }
  } else {
    std::ifstream in(o.job_desc);
    if (!in) throw std::runtime_error("--job-desc: cannot open " + o.job_desc);
    try {
      const nlohmann::json jd = nlohmann::json::parse(in);
      d.max_elems = jd.at("max_elems").get<int>();
      f = parse_format(jd.at("format").get<std::string>());
    } catch (const std::exception& e) {
      throw std::runtime_error("--job-desc " + o.job_desc + ": " + e.what());
    }
  }
  if (o.format_option->count() > 0 && f != d.format)
    throw std::runtime_error("--format " + o.format + ", but the design's FORMAT is " + to_string(f));
  d.format = f;
  if (d.max_elems < 1) throw std::runtime_error("--job-desc " + o.job_desc + ": max_elems must be >= 1");
  if (o.max_elems > d.max_elems)
    throw std::runtime_error("--max-elems " + std::to_string(o.max_elems) + " exceeds the design's MAX_ELEMS " +
                             std::to_string(d.max_elems) + " (the accelerator would drop every vector)");
  return d;
}

// --first-vid: one VID for every tree, or one per tree.
std::vector<uint32_t> first_vids(const WorkerOpts& o) {
  const auto v = split(o.first_vid);
  if (v.size() != 1 && static_cast<int>(v.size()) != o.trees)
    throw std::runtime_error("--first-vid: give one VID or one per tree (" + std::to_string(o.trees) + ")");
  std::vector<uint32_t> vids;
  for (const auto& x : v) {
    const auto u = parse_unsigned(x, 10, 0xFFFFFFFFull);
    if (!u) throw std::runtime_error("--first-vid: '" + x + "' is not a VID (0..4294967295)");
    vids.push_back(static_cast<uint32_t>(*u));
  }
  if (vids.size() == 1) vids.assign(static_cast<size_t>(std::max(1, o.trees)), vids[0]);
  return vids;
}

// The job's parameters except the addresses (the backend knows those).
JobParams job_params(const WorkerOpts& o) {
  const DesignLimits d = read_job_desc(o);
  const int mtu = o.mtu ? o.mtu : iface_mtu(o.iface);
  if (o.status_wait_ms < 1) throw std::runtime_error("--status-wait-ms must be >= 1");
  JobParams p;
  p.jid = static_cast<uint16_t>(o.job);
  p.rank = o.rank;
  p.world = o.world;
  p.trees = o.trees;
  if (o.repair_rounds == "auto") {
    p.repair_rounds = JobParams::kRepairAuto;
  } else {
    const auto r = parse_unsigned(o.repair_rounds, 10, 65535);
    if (!r) throw std::runtime_error("--repair-rounds: '" + o.repair_rounds + "' is not auto or a number 0..65535");
    p.repair_rounds = static_cast<int>(*r);
  }
  p.repair_stall_ms = o.repair_stall_ms;
  p.repair_slots = o.repair_slots;
  p.status_wait_ms = o.status_wait_ms;
  p.adaptive_wait = o.adaptive_wait;
  p.status_copies = o.status_copies;
  p.resend = !o.no_resend;
  set_vector_shape(p, d.format, mtu, o.max_elems ? o.max_elems : d.max_elems);
  p.first_vids = first_vids(o);
  p.window = o.win;
  default_window(p);
  p.window.cc = !o.no_cc;
  p.timeout_ms = o.timeout_ms;
  p.agg_port = static_cast<uint16_t>(o.port);
  p.validate();
  return p;
}

// Where the worker's link goes (backends.h).
LinkOptions link_options(const WorkerOpts& o) {
  LinkOptions l;
  l.iface = o.iface;
  l.port = static_cast<uint16_t>(o.port);
  l.agg_ip = o.agg_ip;
  l.group_ip = o.group_ip;
  l.agg_mac = o.agg_mac;
  l.eal = o.eal;
  return l;
}

// The backend (docs/host.md "Backends", backends.h). Fills p's addresses.
std::unique_ptr<Transport> open_backend(const WorkerOpts& o, JobParams& p) {
  if (o.backend == "udp" && (!o.agg_mac.empty() || !o.eal.empty()))
    throw std::runtime_error("--agg-mac is for --backend tins|dpdk|xdp, --eal for --backend dpdk");
  if (!o.eal.empty() && o.backend != "dpdk") throw std::runtime_error("--eal is for --backend dpdk");
  return find_backend(o.backend)(link_options(o), p);
}

// CPU time of the calling thread (user + system), seconds.
double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

std::vector<const Transport*> link_list(const std::vector<std::unique_ptr<Transport>>& trs) {
  std::vector<const Transport*> v;
  for (const auto& t : trs) v.push_back(t.get());
  return v;
}

// Threads that live across a worker's iterations: start() lets each run fn(k) once (k = 0..n-1),
// wait() returns when all have; the destructor ends them.
class Team {
 public:
  Team(int n, std::function<void(int)> fn) : fn_(std::move(fn)) {
    for (int k = 0; k < n; ++k) th_.emplace_back([this, k] { loop(k); });
  }
  ~Team() {
    {
      std::lock_guard<std::mutex> l(mu_);
      quit_ = true;
    }
    go_.notify_all();
    for (auto& t : th_) t.join();
  }
  void start() {
    {
      std::lock_guard<std::mutex> l(mu_);
      pending_ = static_cast<int>(th_.size());
      ++gen_;
    }
    go_.notify_all();
  }
  void wait() {
    std::unique_lock<std::mutex> l(mu_);
    done_.wait(l, [&] { return pending_ == 0; });
  }

 private:
  void loop(int k) {
    uint64_t seen = 0;
    for (;;) {
      {
        std::unique_lock<std::mutex> l(mu_);
        go_.wait(l, [&] { return quit_ || gen_ != seen; });
        if (quit_) return;
        seen = gen_;
      }
      fn_(k);
      std::lock_guard<std::mutex> l(mu_);
      if (--pending_ == 0) done_.notify_one();
    }
  }
  std::function<void(int)> fn_;
  std::mutex mu_;
  std::condition_variable go_, done_;
  uint64_t gen_ = 0;
  int pending_ = 0;
  bool quit_ = false;
  std::vector<std::thread> th_;
};

nlohmann::ordered_json worker_stats(const WorkerOpts& o, const std::vector<std::unique_ptr<AllReduce>>& ars,
                                    const Transport& tr, const std::vector<const Transport*>& links, size_t elements,
                                    double call_cpu) {
  // With --threads, the counters summed over the threads, the time the longest thread spent.
  Stats s = ars[0]->stats();
  for (size_t k = 1; k < ars.size(); ++k) {
    const Stats& x = ars[k]->stats();
    s.vectors_sent += x.vectors_sent, s.results += x.results, s.results_ce += x.results_ce;
    s.ignored += x.ignored, s.duplicates += x.duplicates, s.leftovers += x.leftovers, s.lost += x.lost;
    s.repaired += x.repaired, s.repair_rounds += x.repair_rounds, s.resent += x.resent;
    s.bytes_reduced += x.bytes_reduced, s.rtt_samples += x.rtt_samples, s.evidence_dropped += x.evidence_dropped;
    s.calls_direct += x.calls_direct, s.bytes_staged += x.bytes_staged;
    s.seconds = std::max(s.seconds, x.seconds);
    for (const auto& v : x.ce_vids) s.ce_vids.push_back(v);
    for (const auto& v : x.unseen_vids) s.unseen_vids.push_back(v);
  }
  const JobParams& p = ars[0]->params();
  nlohmann::ordered_json j;
  j["rank"] = o.rank;
  j["backend"] = o.backend;
  j["datapath"] = tr.datapath();
  // The link's own counters (xdp: XDP_STATISTICS), summed over the threads' links.
  nlohmann::ordered_json link = nlohmann::ordered_json::object();
  for (const Transport* t : links)
    for (const auto& [k, v] : t->link_counters()) link[k] = link.value(k, uint64_t{0}) + v;
  if (!link.empty()) j["link"] = link;
  j["threads"] = ars.size();
  j["elements"] = elements;
  j["count"] = p.count;
  j["iterations"] = o.iterations;
  j["vectors_sent"] = s.vectors_sent;
  j["results"] = s.results;
  j["results_ce"] = s.results_ce;
  j["ce_vids"] = s.ce_vids;  // [[tree, vid], ...] (tree: the thread's own index with --threads)
  j["unseen_vids"] = s.unseen_vids;
  j["evidence_dropped"] = s.evidence_dropped;  // entries past Stats::kEvidenceCap, not listed
  j["ignored"] = s.ignored;
  j["duplicates"] = s.duplicates;
  j["leftovers"] = s.leftovers;
  j["lost"] = s.lost;
  j["repaired"] = s.repaired;
  j["repair_rounds"] = s.repair_rounds;
  j["resent"] = s.resent;
  j["status_wait_ms"] = s.status_wait_ms;
  j["srtt_ms"] = s.srtt_ms;
  j["rtt_samples"] = s.rtt_samples;
  j["seconds"] = s.seconds;
  // Calls whose results went straight into the output buffer, and result bytes staged first.
  j["calls_direct"] = s.calls_direct;
  j["bytes_staged"] = s.bytes_staged;
  j["goodput_mbps"] = s.seconds > 0 ? s.bytes_reduced * 8 / s.seconds / 1e6 : 0.0;
  // Per core: the process's CPU time (user + system) so far, and the gradient bits per CPU second.
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  const double cpu = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
                     static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
  j["cpu_seconds"] = cpu;
  j["goodput_per_cpu_mbps"] = cpu > 0 ? s.bytes_reduced * 8 / cpu / 1e6 : 0.0;
  // The same over the CPU time of the threads inside the reduce calls only (no start-up, no file
  // reading): the per-frame cost scripts/bench-host sets against iperf3's.
  j["call_cpu_seconds"] = call_cpu;
  j["goodput_per_call_cpu_mbps"] = call_cpu > 0 ? s.bytes_reduced * 8 / call_cpu / 1e6 : 0.0;
  j["trees"] = nlohmann::ordered_json::array();
  for (const auto& ar : ars)
    for (int t = 0; t < ar->params().trees; ++t)
      j["trees"].push_back({{"tid", ar->params().first_tid + t},
                            {"next_vid", ar->next_vid(t)},
                            {"cwnd", ar->window(t).cwnd()},
                            {"alpha", ar->window(t).alpha()}});
  return j;
}

// --threads N: thread k's job parameters (trees [k T / N, (k+1) T / N)) and its own backend.
void open_threads(const WorkerOpts& o, const JobParams& p, int N, std::vector<JobParams>& ps,
                  std::vector<std::unique_ptr<Transport>>& trs) {
  for (int k = 0; k < N; ++k) {
    JobParams pk = p;
    pk.first_tid = k * p.trees / N;
    pk.trees = (k + 1) * p.trees / N - pk.first_tid;
    pk.first_vids.assign(p.first_vids.begin() + pk.first_tid, p.first_vids.begin() + pk.first_tid + pk.trees);
    if (N == 1 || o.backend != "xdp") trs.push_back(open_backend(o, pk));
    ps.push_back(pk);
  }
  if (N > 1 && o.backend == "xdp") {
    // One AF_XDP socket per thread on a shared UMEM; the program steers each TID to its thread.
    std::vector<int> tid_socket(static_cast<size_t>(p.trees), 0);
    for (int k = 0; k < N; ++k)
      for (int t = 0; t < ps[static_cast<size_t>(k)].trees; ++t)
        tid_socket[static_cast<size_t>(ps[static_cast<size_t>(k)].first_tid + t)] = k;
    const RawParams rp = raw_params(link_options(o));
    for (auto& x : XdpTransport::open_shared(rp, N, tid_socket)) {
      JobParams& pk = ps[trs.size()];
      take_addresses(pk, *x);
      pk.ip_dst = rp.agg_ip;
      trs.push_back(std::move(x));
    }
  }
}

int run_worker(const WorkerOpts& o) {
  // Until the all-reduce runs, a stop ends the process at once (nothing to finish); from then on
  // the call ends in order within AllReduce::kStopPoll and the backend closes (an XDP program
  // detached, DPDK's ports stopped).
  if (!o.allocator.empty()) return run_leased_worker(o);
  catch_stop_signals(StopMode::immediate, "worker " + std::to_string(o.rank));
  check_worker_opts(o);
  JobParams p = job_params(o);
  const size_t es = static_cast<size_t>(p.elem_bytes);
  const std::vector<uint8_t> grad = read_file(o.in);
  if (grad.size() % es != 0)
    throw std::runtime_error(o.in + ": size " + std::to_string(grad.size()) + " is not a multiple of " +
                             std::to_string(es) + " bytes");
  // --threads N: thread k owns the trees [k T / N, (k+1) T / N) and the vectors [k K / N,
  // (k+1) K / N) of every call (whole vectors, contiguous), with its own backend (socket) and
  // AllReduce: nothing is shared on the per-frame path.
  const int N = o.threads;
  if (N < 1 || N > p.trees)
    throw std::runtime_error("--threads must be 1..--trees (" + std::to_string(p.trees) +
                             "): each thread owns whole trees");
  if (N > 1 && o.backend != "udp" && o.backend != "xdp")
    throw std::runtime_error("--threads " + std::to_string(N) +
                             ": only --backend udp and xdp have a socket per thread (" + o.backend +
                             ": one port per process)");
  std::vector<JobParams> ps;
  std::vector<std::unique_ptr<Transport>> trs;
  open_threads(o, p, N, ps, trs);
  p = ps[0];
  Transport& tr = *trs[0];
  // A fallback taken at start is said once, never silently (docs/host.md "Backends").
  const std::string dp = tr.datapath();
  if (dp.find("refused") != std::string::npos || dp.find("fallback") != std::string::npos)
    std::fprintf(stderr, "panama-host worker %d: note: %s\n", o.rank, dp.c_str());
  std::unique_ptr<ProgressTransport> prog;
  if (!o.progress.empty())
    prog = std::make_unique<ProgressTransport>(tr, o.progress, o.progress_interval, p.jid, p.trees);
  Transport* link = prog ? static_cast<Transport*>(prog.get()) : &tr;
  std::unique_ptr<BarTransport> bar;
  const bool tty = isatty(STDERR_FILENO) == 1;
  if (o.progress_bar == "on" || (o.progress_bar == "auto" && tty)) {
    bar = std::make_unique<BarTransport>(*link, p.jid, o.rank, static_cast<double>(grad.size()) * o.iterations / N, tty,
                                         o.progress_bar_interval);
    link = bar.get();
  }
  std::vector<std::unique_ptr<AllReduce>> ars;
  for (int k = 0; k < N; ++k) ars.push_back(std::make_unique<AllReduce>(k == 0 ? *link : *trs[k], ps[k]));
  catch_stop_signals(StopMode::graceful, "worker " + std::to_string(o.rank));
  for (auto& ar : ars) ar->stop_on(&stop_requested());
  if (prog) prog->attach(ars[0].get());
  const size_t n = grad.size() / es, C = static_cast<size_t>(p.count), K = (n + C - 1) / C;
  std::vector<size_t> from(static_cast<size_t>(N) + 1);
  for (int k = 0; k <= N; ++k) from[static_cast<size_t>(k)] = std::min(n, K * static_cast<size_t>(k) / N * C);
  // Every call sums from grad (only read) into buf: the results go straight into buf, and
  // nothing is copied per iteration (AllReduce::reduce_raw(in, out, n)).
  std::vector<uint8_t> buf(grad.size());
  std::vector<double> call_cpu(static_cast<size_t>(N), 0.0);
  std::vector<std::exception_ptr> err(static_cast<size_t>(N));
  const auto slice = [&](int k) {  // thread k's vectors of this iteration's call
    const size_t a = from[static_cast<size_t>(k)], b = from[static_cast<size_t>(k) + 1];
    const double c0 = thread_cpu_seconds();
    try {
      ars[static_cast<size_t>(k)]->reduce_raw(grad.data() + a * es, buf.data() + a * es, b - a);
    } catch (...) {
      err[static_cast<size_t>(k)] = std::current_exception();
    }
    call_cpu[static_cast<size_t>(k)] += thread_cpu_seconds() - c0;
  };
  // Threads 1..N-1 live across the iterations (started once, not per call); slice 0 runs here.
  Team team(N - 1, [&](int k) { slice(k + 1); });
  const auto t0 = Clock::now();
  try {
    for (int it = 0; it < o.iterations; ++it) {
      if (stop_requested().load()) throw AllReduceStopped("stopped before iteration " + std::to_string(it + 1));
      team.start();
      slice(0);
      team.wait();
      for (auto& e : err)
        if (e) std::rethrow_exception(e);
      if (o.out_each) write_file_atomic(o.out + "." + std::to_string(it + 1), buf.data(), buf.size());
    }
  } catch (const AllReduceStopped& e) {
    bar.reset();
    std::fprintf(stderr, "panama-host worker %d: stopped by %s after %.1f s (%s); no output written\n", o.rank,
                 stop_signal_name().c_str(), std::chrono::duration<double>(Clock::now() - t0).count(), e.what());
    return 128 + stop_signal();
  }
  bar.reset();  // ends the bar's line before the summary
  write_file_atomic(o.out, buf.data(), buf.size());
  const nlohmann::ordered_json j = worker_stats(o, ars, tr, link_list(trs), grad.size() / es,
                                                std::accumulate(call_cpu.begin(), call_cpu.end(), 0.0));
  if (!o.stats.empty()) {
    std::ofstream st(o.stats);
    if (!st) throw std::runtime_error("cannot write " + o.stats);
    st << j.dump(2) << "\n";
  }
  std::fprintf(stderr, "panama-host worker %d: %s\n", o.rank, j.dump().c_str());
  return 0;
}

void add_window_options(CLI::App* wk, WorkerOpts& w) {
  wk->add_option("--window-init", w.win.init, "initial window, vectors per tree (default min(4, max))");
  wk->add_option("--window-min", w.win.min, "window floor")->default_val(1);
  wk->add_option("--window-max", w.win.max, "window ceiling per tree (default max(1, floor(12 / T)))");
  wk->add_option("--ecn-gain", w.win.gain, "DCTCP gain g")->default_val(1.0 / 16);
  wk->add_flag("--no-cc", w.no_cc, "fixed window (--window-init), ECN ignored");
  wk->add_option("--timeout-ms", w.timeout_ms, "error after this long without a new result")->default_val(2000);
  wk->add_option("--repair-rounds", w.repair_rounds,
                 "loss repair rounds reserved per call and tree: auto (as many as a 2^24-VID range holds, at least "
                 "64: repair ends by --repair-stall-ms), N (at most N), 0 (off)")
      ->default_val("auto");
  wk->add_option("--repair-stall-ms", w.repair_stall_ms,
                 "with repair on: fail when no vector completed for this long (0: max(4 call timeouts, 128 status "
                 "waits))")
      ->default_val(0)
      ->check(CLI::Range(0, 86400000));
  wk->add_option("--repair-slots", w.repair_slots, "ignored (every vector has a repair slot in every round)")
      ->default_val(8)
      ->check(CLI::Range(1, 4096));
  wk->add_option("--status-wait-ms", w.status_wait_ms,
                 "wait for results (4x for a repair round's status) before going on without them; with "
                 "--adaptive-status-wait the least wait")
      ->default_val(200);
  wk->add_flag("--adaptive-status-wait", w.adaptive_wait,
               "the status wait follows the measured round trip (a slow switch such as the RTL stand-in)");
  wk->add_option("--status-copies", w.status_copies, "VIDs per repair status part (redundant copies)")
      ->default_val(3)
      ->check(CLI::Range(1, 4));
  wk->add_flag("--no-resend", w.no_resend,
               "never send a slot again after a silent status wait (the switch's result cache then goes unused)");
}

void add_worker_options(CLI::App* wk, WorkerOpts& w) {
  wk->add_option("--iface", w.iface, "network interface towards the accelerator")->required();
  wk->add_option("--job", w.job, "job id (JID) 0..65535")->required();
  wk->add_option("--rank", w.rank, "this worker's rank 0..world-1")->required();
  wk->add_option("--world", w.world, "number of workers")->required();
  wk->add_option("--trees", w.trees, "aggregation trees (TIDs 0..T-1)")->default_val(1);
  wk->add_option("--threads", w.threads,
                 "threads, each with its own socket and whole trees (1..--trees; --backend udp or xdp for more than 1)")
      ->default_val(1);
  wk->add_option("--in", w.in, "input: little-endian elements")->required();
  wk->add_option("--out", w.out, "output: the sum, same layout")->required();
  wk->add_option("--backend", w.backend,
                 "udp (kernel sockets), tins (raw frames through libtins), dpdk (raw frames through DPDK) or xdp "
                 "(AF_XDP sockets, an XDP program steering the aggregation port)")
      ->default_val("udp");
  wk->add_option("--agg-mac", w.agg_mac,
                 "tins/dpdk: eth.dst of contributions (default: the kernel's neighbour entry for the aggregator "
                 "or its gateway, else ARP)");
  wk->add_option("--eal", w.eal,
                 "dpdk: EAL arguments as one value (--eal=\"...\"), blank-separated, replacing the default (--no-huge "
                 "-m 64 --no-pci "
                 "--no-shconf --vdev=net_af_packet0,iface=IF ...; docs/host.md)");
  wk->add_option("--agg-ip", w.agg_ip,
                 "aggregator (tree root) IPv4 address (with --allocator: when the lease has none)");
  wk->add_option("--group-ip", w.group_ip, "the job's multicast group address (not with --allocator: the lease's)");
  wk->add_option("--port", w.port, "aggregation UDP port")
      ->default_val(wire::kDefaultAggPort)
      ->check(CLI::Range(1, 65535));
  wk->add_option("--format", w.format, "element format fp32|bf16|fp16 (default: the job description's, else fp32)");
  wk->add_option("--job-desc", w.job_desc,
                 "job description from `controller --job-out`, or the design's folder (panama-gen --out): the "
                 "design's MAX_ELEMS and FORMAT");
  wk->add_option("--mtu", w.mtu, "MTU (default: the interface's)")->check(CLI::Range(68, 65535));
  wk->add_option("--max-elems", w.max_elems,
                 "accelerator MAX_ELEMS (default floor(" + std::to_string(proto::kDefaultPayloadBytes) + "/ES))")
      ->check(CLI::Range(1, 65535));
  wk->add_option("--first-vid", w.first_vid,
                 "VID of the first vector: one for every tree or V0,V1,... per tree (a restarted worker "
                 "continues where the job's contexts are: the previous run's stats next_vid)")
      ->default_val("0");
  add_window_options(wk, w);
  wk->add_option("--iterations", w.iterations, "all-reduce the input this many times (benchmark)")->default_val(1);
  wk->add_flag("--out-each", w.out_each,
               "also write every iteration's sum to OUT.K (K = 1..--iterations), as it completes (a check of every "
               "call, not only the last; a file write per iteration)");
  wk->add_option("--stats", w.stats, "write statistics as JSON here");
  wk->add_option("--progress", w.progress, "write a CSV line every --progress-interval: goodput, tx rate, windows");
  wk->add_option(
        "--progress-bar", w.progress_bar,
        "auto: a progress bar with rate and ETA when stderr is a terminal; on: also plain lines otherwise; off")
      ->check(CLI::IsMember({"auto", "on", "off"}));
  wk->add_option("--progress-bar-interval", w.progress_bar_interval, "seconds between plain progress lines")
      ->check(CLI::PositiveNumber);
  wk->add_option("--progress-interval", w.progress_interval, "seconds")
      ->default_val(0.1)
      ->check(CLI::Range(0.001, 60.0));
  w.format_option = wk->get_option("--format");
  add_allocator_options(wk, w);
}

}  // namespace

// For cli_worker_alloc.cpp (cli_worker.h).
void worker_check(const WorkerOpts& o) { check_worker_opts(o); }
JobParams worker_job_params(const WorkerOpts& o) { return job_params(o); }
LinkOptions worker_link(const WorkerOpts& o) { return link_options(o); }
std::vector<uint8_t> worker_input(const WorkerOpts& o) { return read_file(o.in); }

Runner worker_subcommand(CLI::App& cmd) { return with_options(cmd, add_worker_options, run_worker); }

}  // namespace panama::host::cli
