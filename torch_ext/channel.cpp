#include "channel.h"

#include <algorithm>
#include <cstring>

#include <sys/mman.h>

#include "backends.h"
#include "ref_float.h"

namespace panama::torchx {

namespace {

host::LinkOptions link_options(const Config& c) {
  host::LinkOptions l;
  l.iface = c.iface;
  l.port = static_cast<uint16_t>(c.port);
  l.agg_ip = c.agg_ip;
  l.group_ip = c.group_ip;
  l.agg_mac = c.agg_mac;
  l.eal = c.eal;
  return l;
}

// The value the start-up probe sends at element i: 1.0 at even elements, 1 + 2^-(p-3) at odd ones
// (p = the format's significand bits); workers of rank 4 and above send +0. Every partial sum
// of up to four of them is exact in the format, so the expected result does not depend on the
// order of the sum (tree or exact, any ports), while an accelerator that reads the elements in
// another format (an fp32 word as two bf16 halves, bf16 bits as fp16) sums something else.
double probe_value(Format f, size_t i) {
  const int p = frac_bits(f) + 1;
  return i % 2 == 0 ? 1.0 : 1.0 + std::ldexp(1.0, -(p - 3));
}

uint32_t encode(Format f, double v) {
  if (f == Format::fp32) return ref::float_to_bits(static_cast<float>(v));
  return ref::double_to_half(v, format_bits(f), false);
}

void put(uint8_t* b, size_t es, size_t i, uint32_t v) { std::memcpy(b + es * i, &v, es); }  // little-endian

uint32_t get(const uint8_t* b, size_t es, size_t i) {
  uint32_t v = 0;
  std::memcpy(&v, b + es * i, es);
  return v;
}

}  // namespace

std::string backend_list() {
  std::string names;
  for (const auto& b : host::backends()) names += (names.empty() ? "" : ", ") + b.first;
  return names;
}

Channel::Channel(const Config& c, int rank, int world) : cfg_(c), p_(c.job_params(rank, world)) {
  const host::BackendOpener open = host::find_backend(cfg_.backend);
  if (!open) throw PanamaError(Cause::config, "PANAMA_BACKEND='" + cfg_.backend + "': one of " + backend_list());
  try {
    link_ = open(link_options(cfg_), p_);
  } catch (const std::exception& e) {
    throw PanamaError(Cause::transport,
                      "opening the " + cfg_.backend + " link on PANAMA_IFACE=" + cfg_.iface + ": " + e.what());
  }
  start();
}

Channel::Channel(const Config& c, int rank, int world, std::unique_ptr<host::Transport> link)
    : cfg_(c), p_(c.job_params(rank, world)), link_(std::move(link)) {
  start();
}

void Channel::start() {
  ar_ = std::make_unique<host::AllReduce>(*link_, p_);
  chunk_ = cfg_.chunk_elems(p_);
  buf_bytes_ = cfg_.buffer_bytes;
  void* m = mmap(nullptr, buf_bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (m == MAP_FAILED)
    throw PanamaError(Cause::config, "cannot reserve the job's buffer of " + std::to_string(buf_bytes_ >> 20) +
                                         " MiB (PANAMA_BUFFER_MB)");
  buf_ = static_cast<uint8_t*>(m);
  if (cfg_.format != Format::fp32) {
    // Every 16-bit pattern's quotient by the world size, rounded once (double holds the exact
    // value of the pattern, and its quotient to 53 bits: rounding that to 8 or 11 bits is the
    // quotient rounded once).
    const auto fb = format_bits(cfg_.format);
    mean16_.resize(65536);
    for (uint32_t b = 0; b < 65536; ++b)
      mean16_[b] = static_cast<uint16_t>(ref::double_to_half(ref::half_to_double(b, fb, false) / p_.world, fb, false));
  }
  th_ = std::thread([this] { run(); });
}

Channel::~Channel() {
  std::deque<Request> left;
  {
    std::lock_guard<std::mutex> l(mu_);
    stop_ = true;
    left.swap(q_);
  }
  cv_.notify_all();
  if (th_.joinable()) th_.join();
  for (auto& r : left)
    if (r.done)
      r.done(std::make_exception_ptr(
          PanamaError(Cause::failed_before, "the backend was shut down before this all_reduce ran")));
  if (buf_) munmap(buf_, buf_bytes_);
}

void Channel::submit(Request r) {
  const size_t es = elem_bytes(cfg_.format);
  if (r.elems > buf_bytes_ / es)
    throw PanamaError(Cause::too_large, "a tensor of " + std::to_string(r.elems) + " " + to_string(cfg_.format) +
                                            " elements (" + std::to_string(r.elems * es) +
                                            " bytes) does not fit the job's buffer of " + std::to_string(buf_bytes_) +
                                            " bytes (PANAMA_BUFFER_MB)");
  {
    std::lock_guard<std::mutex> l(mu_);
    if (!failed_.empty())
      throw PanamaError(Cause::failed_before, "an earlier all_reduce failed (" + failed_ +
                                                  "); the workers' VIDs are no longer in step: start the job again");
    if (r.elems > 0) {
      q_.push_back(std::move(r));
      cv_.notify_all();
      return;
    }
  }
  if (r.done) r.done(nullptr);  // nothing to sum
}

void Channel::drain() {
  std::unique_lock<std::mutex> l(mu_);
  idle_cv_.wait(l, [&] { return q_.empty() && !busy_; });
}

host::Stats Channel::stats() const {
  std::lock_guard<std::mutex> l(mu_);
  return stats_;
}

uint64_t Channel::requests_done() const {
  std::lock_guard<std::mutex> l(mu_);
  return done_;
}

void Channel::run() {
  for (;;) {
    Request r;
    {
      std::unique_lock<std::mutex> l(mu_);
      cv_.wait(l, [&] { return stop_ || !q_.empty(); });
      if (q_.empty()) return;  // stopping
      r = std::move(q_.front());
      q_.pop_front();
      busy_ = true;
    }
    serve(r);
    {
      std::lock_guard<std::mutex> l(mu_);
      busy_ = false;
      ++done_;
    }
    idle_cv_.notify_all();
  }
}

// One request: fill the job's buffer, sum it in calls of chunk_ elements, store the results.
void Channel::serve(Request& r) {
  std::exception_ptr err;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (!failed_.empty())
      err =
          std::make_exception_ptr(PanamaError(Cause::failed_before, "an earlier all_reduce failed (" + failed_ +
                                                                        "); the workers' VIDs are no longer in step"));
  }
  const size_t es = elem_bytes(cfg_.format);
  if (!err) {
    try {
      if (r.fill) r.fill(buf_);
      for (size_t off = 0; off < r.elems; off += chunk_)
        ar_->reduce_raw(buf_ + off * es, std::min(chunk_, r.elems - off));
      if (r.out) {
        store(r.out, buf_, r.elems, r.mean);
      } else {
        if (r.mean) store(buf_, buf_, r.elems, true);
        if (r.unpack) r.unpack(buf_);
      }
    } catch (const PanamaError&) {
      err = std::current_exception();
    } catch (const std::exception& e) {
      err = classify(e);
    } catch (...) {
      err = std::make_exception_ptr(PanamaError(Cause::transport, "an unknown error"));
    }
  }
  {
    std::lock_guard<std::mutex> l(mu_);
    // The counters only: the library's evidence lists (ce_vids, unseen_vids) grow with the job.
    const host::Stats& s = ar_->stats();
    stats_.calls = s.calls;
    stats_.vectors_sent = s.vectors_sent;
    stats_.results = s.results;
    stats_.results_ce = s.results_ce;
    stats_.ignored = s.ignored;
    stats_.duplicates = s.duplicates;
    stats_.leftovers = s.leftovers;
    stats_.lost = s.lost;
    stats_.repaired = s.repaired;
    stats_.repair_rounds = s.repair_rounds;
    stats_.resent = s.resent;
    stats_.bytes_reduced = s.bytes_reduced;
    stats_.seconds = s.seconds;
    if (err && failed_.empty()) {
      try {
        std::rethrow_exception(err);
      } catch (const std::exception& e) {
        failed_ = e.what();
      }
    }
  }
  if (r.done) r.done(err);
}

// The host library's failures by their first words (docs/host.md "Loss: detection and repair").
std::exception_ptr Channel::classify(const std::exception& e) const {
  const std::string m = e.what();
  Cause c = Cause::transport;
  if (m.rfind("timeout:", 0) == 0)
    c = Cause::timeout;
  else if (m.rfind("loss repair failed", 0) == 0 || m.rfind("lost vector", 0) == 0)
    c = Cause::loss;
  return std::make_exception_ptr(PanamaError(c, m));
}

void Channel::store(uint8_t* dst, const uint8_t* src, size_t n, bool mean) const {
  if (!mean) {
    if (dst != src) std::memcpy(dst, src, n * elem_bytes(cfg_.format));
    return;
  }
  if (cfg_.format == Format::fp32) {
    const float w = static_cast<float>(p_.world);
    for (size_t i = 0; i < n; ++i) {
      float x;
      std::memcpy(&x, src + 4 * i, 4);
      x /= w;
      std::memcpy(dst + 4 * i, &x, 4);
    }
    return;
  }
  for (size_t i = 0; i < n; ++i) {
    uint16_t x;
    std::memcpy(&x, src + 2 * i, 2);
    x = mean16_[x];
    std::memcpy(dst + 2 * i, &x, 2);
  }
}

void Channel::probe() {
  const size_t es = elem_bytes(cfg_.format);
  const size_t data = static_cast<size_t>(p_.repair_rounds > 0 ? p_.count - 1 : p_.count);
  const size_t n = data * static_cast<size_t>(p_.trees);  // one vector per tree
  std::vector<uint8_t> in(n * es), out(n * es);
  for (size_t i = 0; i < n; ++i)
    put(in.data(), es, i, p_.rank < 4 ? encode(cfg_.format, probe_value(cfg_.format, i)) : 0);
  std::mutex m;
  std::condition_variable cv;
  bool finished = false;
  std::exception_ptr err;
  Request r;
  r.elems = n;
  r.fill = [&](uint8_t* b) { std::memcpy(b, in.data(), in.size()); };
  r.out = out.data();
  r.done = [&](std::exception_ptr e) {
    std::lock_guard<std::mutex> l(m);
    err = e;
    finished = true;
    cv.notify_all();
  };
  submit(std::move(r));
  {
    std::unique_lock<std::mutex> l(m);
    cv.wait(l, [&] { return finished; });
  }
  const std::string what = "job " + std::to_string(p_.jid) + ", " + std::to_string(p_.trees) + " tree(s), " +
                           std::to_string(p_.world) + " workers, aggregator " + cfg_.agg_ip + " on " + cfg_.iface;
  if (err) {
    try {
      std::rethrow_exception(err);
    } catch (const PanamaError& e) {
      if (e.cause != Cause::timeout) throw;
      std::string lib = e.what();
      const std::string prefix = "panama: " + to_string(Cause::timeout) + ": ";
      if (lib.rfind(prefix, 0) == 0) lib = lib.substr(prefix.size());
      throw PanamaError(Cause::unreachable,
                        "no result for the start-up probe (" + what +
                            "): is the switch up, and are the job's contexts programmed with these workers as "
                            "members, a MAX_ELEMS of at least " +
                            std::to_string(p_.count) + " and the element size of PANAMA_DESIGN's " +
                            to_string(cfg_.format) + "? (" + lib + ")");
    }
  }
  const double k = std::min(p_.world, 4);
  for (size_t i = 0; i < n; ++i) {
    const uint32_t want = encode(cfg_.format, k * probe_value(cfg_.format, i)), got = get(out.data(), es, i);
    if (got != want) {
      char b[160];
      std::snprintf(b, sizeof b, "element %zu of the start-up probe summed to 0x%0*x, expected 0x%0*x", i,
                    static_cast<int>(2 * es), got, static_cast<int>(2 * es), want);
      throw PanamaError(Cause::design, std::string(b) + " (" + what + "): the accelerator does not sum " +
                                           to_string(cfg_.format) + " like the design in PANAMA_DESIGN=" + cfg_.design);
    }
  }
}

}  // namespace panama::torchx
