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

// The requests already queued still run, as Gloo's group finishes its queue when destroyed: a
// rank that dropped them would leave its peers' same requests without its contributions. Each
// is bounded by the job's timeout, and after a failure the rest fail at once.
Channel::~Channel() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stop_ = true;
    closing_ = true;
  }
  cv_.notify_all();
  if (th_.joinable()) th_.join();
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
    if (closing_) throw PanamaError(Cause::failed_before, "the backend is shutting down (the interpreter is exiting)");
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

void Channel::close() {
  std::lock_guard<std::mutex> l(mu_);
  closing_ = true;
}

bool Channel::drain_for(int ms) {
  std::unique_lock<std::mutex> l(mu_);
  return idle_cv_.wait_for(l, std::chrono::milliseconds(ms), [&] { return q_.empty() && !busy_; });
}

void Channel::abandon() { abandoned_ = true; }

host::Stats Channel::stats() const {
  std::lock_guard<std::mutex> l(mu_);
  return stats_;
}

uint64_t Channel::requests_done() const {
  std::lock_guard<std::mutex> l(mu_);
  return done_;
}

size_t Channel::pending() const {
  std::lock_guard<std::mutex> l(mu_);
  return q_.size() + (busy_ ? 1 : 0);
}

void Channel::run() {
  for (;;) {
    {
      Request r;
      bool skip;
      {
        std::unique_lock<std::mutex> l(mu_);
        cv_.wait(l, [&] { return stop_ || !q_.empty(); });
        if (q_.empty()) return;  // stopping
        r = std::move(q_.front());
        q_.pop_front();
        busy_ = true;
        skip = closing_ && closing_failed_;
      }
      if (skip)
        finish_now(r, std::make_exception_ptr(PanamaError(
                          Cause::failed_before, "not run: the backend is shutting down after a failed all_reduce")));
      else
        serve(r);
      // The process exits without this request: freeing it (or completing it) could need Python.
      if (abandoned_) new Request(std::move(r));  // NOLINT: leaked on purpose
    }  // The request (the caller's tensors, its Work) is freed here, before the channel reads as
    // idle: after drain() this thread holds nothing of the caller's (docs/torch.md "Shutdown").
    {
      std::lock_guard<std::mutex> l(mu_);
      busy_ = false;
      ++done_;
    }
    idle_cv_.notify_all();
  }
}

// One request, numbered k in the order of the channel (the same on every rank).
void Channel::serve(Request& r) {
  const uint64_t k = seq_++;
  if (peers_)
    serve_agreed(r, k);
  else
    serve_alone(r);
}

std::exception_ptr Channel::reduce(Request& r, std::exception_ptr* own) {
  const size_t es = elem_bytes(cfg_.format);
  try {
    if (r.fill) r.fill(buf_);
  } catch (...) {
    *own = std::current_exception();  // the framework's (ATen's copy, an earlier Gloo op): its own cause
    if (!peers_) return nullptr;
    std::memset(buf_, 0, r.elems * es);  // summed, never stored: the peers learn of it in the exchange
  }
  try {
    for (size_t off = 0; off < r.elems; off += chunk_)
      ar_->reduce_raw(buf_ + off * es, std::min(chunk_, r.elems - off));
  } catch (const PanamaError&) {
    return std::current_exception();
  } catch (const std::exception& e) {
    return classify(e);
  } catch (...) {
    return std::make_exception_ptr(PanamaError(Cause::transport, "an unknown error of the host library"));
  }
  return nullptr;
}

std::exception_ptr Channel::store_results(Request& r) {
  try {
    if (r.out) {
      store(r.out, buf_, r.elems, r.mean);
    } else {
      if (r.mean) store(buf_, buf_, r.elems, true);
      if (r.unpack) r.unpack(buf_);
    }
  } catch (...) {
    return std::current_exception();  // ATen's copy: its own cause; the job's VIDs are in step
  }
  return nullptr;
}

std::exception_ptr Channel::run_gloo(Request& r) {
  try {
    if (!r.gloo) throw PanamaError(Cause::config, "this request has no fallback");
    r.gloo();
  } catch (...) {
    return std::current_exception();  // Gloo's own error
  }
  std::lock_guard<std::mutex> l(mu_);
  ++fb_.gloo_requests;
  return nullptr;
}

namespace {
std::string message_of(std::exception_ptr e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& x) {
    return x.what();
  } catch (...) {
  }
  return "an unknown error";
}
}  // namespace

// Without peers: a failure of the accelerator (or of this rank's copy-in, which leaves its VIDs
// behind its peers') ends the job; later requests are refused.
void Channel::serve_alone(Request& r) {
  std::exception_ptr err;
  bool ends = false;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (!failed_.empty())
      err =
          std::make_exception_ptr(PanamaError(Cause::failed_before, "an earlier all_reduce failed (" + failed_ +
                                                                        "); the workers' VIDs are no longer in step"));
  }
  if (!err) {
    std::exception_ptr own;
    err = reduce(r, &own);
    ends = err || own;
    if (own)
      err = own;
    else if (!err)
      err = store_results(r);
  }
  finish(r, err, ends);
}

// With peers: every rank reports the accelerator's outcome before anything is stored, so that all
// take the same path for request k (docs/torch.md "Fallback and re-join").
void Channel::serve_agreed(Request& r, uint64_t k) {
  std::exception_ptr err;
  bool ends = false;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (!failed_.empty())
      err = std::make_exception_ptr(PanamaError(
          Cause::failed_before, "an earlier all_reduce failed (" + failed_ + "); the ranks are no longer in step"));
  }
  if (!err) {
    try {
      if (fb_.on_gloo && rejoin_every_ > 0 && (k - static_cast<uint64_t>(fb_.fell_at)) % rejoin_every_ == 0)
        try_rejoin(k);
      if (fb_.on_gloo) {
        err = run_gloo(r);
      } else {
        std::exception_ptr own;
        const std::exception_ptr acc = reduce(r, &own);
        note_vids();
        const std::string mine = std::string(acc ? "F" : "A") + (own ? "E" : "-") + " " +
                                 (acc   ? message_of(acc)
                                  : own ? message_of(own)
                                        : std::string());
        const std::vector<std::string> words = exchange(mine);
        int bad_acc = -1, bad_own = -1;
        for (size_t i = 0; i < words.size(); ++i) {
          if (bad_acc < 0 && words[i].rfind("F", 0) == 0) bad_acc = static_cast<int>(i);
          if (bad_own < 0 && words[i].size() > 1 && words[i][1] == 'E') bad_own = static_cast<int>(i);
        }
        auto said = [&](int i) {
          return words[static_cast<size_t>(i)].size() > 3 ? words[static_cast<size_t>(i)].substr(3) : "";
        };
        if (bad_acc >= 0) {
          {
            std::lock_guard<std::mutex> l(mu_);
            fb_.on_gloo = true;
            fb_.fell_at = static_cast<int64_t>(k);
            ++fb_.fallbacks;
          }
          const std::string at = (r.gloo ? "the accelerator failed at request " : "the start-up probe (request ") +
                                 std::to_string(k) + (r.gloo ? "" : ") got no answer");
          std::fprintf(stderr, "panama_torch: %s on rank %d (%s): this and the following all_reduces run on Gloo%s\n",
                       at.c_str(), bad_acc, said(bad_acc).c_str(),
                       rejoin_every_ > 0
                           ? (", a re-join probe every " + std::to_string(rejoin_every_) + " requests").c_str()
                           : "");
          std::fflush(stderr);
        }
        if (bad_acc < 0 && bad_own < 0)
          err = store_results(r);
        else if (own)
          err = own;
        else if (bad_own >= 0)
          err = std::make_exception_ptr(PanamaError(Cause::peer, "rank " + std::to_string(bad_own) +
                                                                     " could not read its input of this all_reduce (" +
                                                                     said(bad_own) + ")"));
        else if (!r.gloo)
          err = acc ? acc
                    : std::make_exception_ptr(PanamaError(
                          Cause::peer,
                          "the accelerator failed on rank " + std::to_string(bad_acc) + " (" + said(bad_acc) + ")"));
        else
          err = run_gloo(r);  // the input is as the caller left it: nothing was stored
      }
    } catch (const PanamaError&) {
      err = std::current_exception();  // the agreement itself: a rank did not report in time
      ends = true;
    } catch (const std::exception& e) {
      err = std::make_exception_ptr(PanamaError(Cause::peer, std::string("the ranks' exchange: ") + e.what()));
      ends = true;
    }
  }
  finish(r, err, ends);
}

// Counters; `ends`: err ends the job (later requests are refused); then r.done.
void Channel::finish(Request& r, std::exception_ptr err, bool ends) {
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
    if (ends && err && failed_.empty()) failed_ = message_of(err);
    if (err && closing_) closing_failed_ = true;
  }
  finish_now(r, err);
}

void Channel::finish_now(Request& r, std::exception_ptr err) {
  if (r.done && !abandoned_) r.done(err);
}

void Channel::note_vids() {
  std::lock_guard<std::mutex> l(mu_);
  fb_.next_vids.resize(static_cast<size_t>(p_.trees));
  for (int t = 0; t < p_.trees; ++t) fb_.next_vids[static_cast<size_t>(t)] = ar_->next_vid(t);
}

std::vector<std::string> Channel::exchange(const std::string& mine) {
  std::vector<std::string> w = peers_->exchange(xn_++, mine);
  if (w.size() != static_cast<size_t>(p_.world))
    throw PanamaError(Cause::peer, "the exchange returned " + std::to_string(w.size()) + " words for " +
                                       std::to_string(p_.world) + " ranks");
  return w;
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

void Channel::enable_fallback(std::shared_ptr<Peers> peers, int rejoin_every, int probe_ms) {
  std::lock_guard<std::mutex> l(mu_);
  if (peers_) return;  // the job's channel is shared: the first caller's peers stay
  peers_ = std::move(peers);
  rejoin_every_ = std::max(0, rejoin_every);
  rejoin_probe_ms_ = std::max(1, probe_ms);
  fb_.next_vids.resize(static_cast<size_t>(p_.trees));
  for (int t = 0; t < p_.trees; ++t) fb_.next_vids[static_cast<size_t>(t)] = ar_->next_vid(t);
}

FallbackStats Channel::fallback_stats() const {
  std::lock_guard<std::mutex> l(mu_);
  return fb_;
}

void Channel::fill_probe(uint8_t* b, size_t n) const {
  const size_t es = elem_bytes(cfg_.format);
  for (size_t i = 0; i < n; ++i) put(b, es, i, p_.rank < 4 ? encode(cfg_.format, probe_value(cfg_.format, i)) : 0);
}

std::string Channel::check_probe(const uint8_t* b, size_t n, const char* label) const {
  const size_t es = elem_bytes(cfg_.format);
  const double k = std::min(p_.world, 4);
  for (size_t i = 0; i < n; ++i) {
    const uint32_t want = encode(cfg_.format, k * probe_value(cfg_.format, i)), got = get(b, es, i);
    if (got != want) {
      char m[160];
      std::snprintf(m, sizeof m, "element %zu of %s summed to 0x%0*x, expected 0x%0*x", i, label,
                    static_cast<int>(2 * es), got, static_cast<int>(2 * es), want);
      return m;
    }
  }
  return "";
}

namespace {
constexpr uint32_t kRejoinGap = 1u << 28;
// a is ahead of b in VID order (wire-format.md: within half the VID space)
bool ahead(uint32_t a, uint32_t b) { return a != b && static_cast<uint32_t>(a - b) < 0x80000000u; }
}  // namespace

std::string Channel::probe_at(const std::vector<uint32_t>& vids, const host::JobParams& q,
                              std::vector<uint32_t>* next) {
  host::JobParams pq = q;
  pq.first_vids = vids;
  const size_t data = static_cast<size_t>(pq.repair_rounds > 0 ? pq.count - 1 : pq.count);
  const size_t n = data * static_cast<size_t>(pq.trees);
  std::string why;
  std::unique_ptr<host::AllReduce> a;
  fill_probe(buf_, n);
  try {
    a = std::make_unique<host::AllReduce>(*link_, pq);
    a->reduce_raw(buf_, n);
    why = check_probe(buf_, n, "the re-join probe");
  } catch (const std::exception& e) {
    why = e.what();
  }
  *next = vids;
  if (a)
    for (int t = 0; t < pq.trees; ++t) (*next)[static_cast<size_t>(t)] = a->next_vid(t);
  return why;
}

// At a re-join boundary: every rank probes the accelerator with the same new VIDs; the job returns
// to it only when every probe was exact. The VIDs tried: kRejoinGap past the largest VID any rank
// has used (ahead of whatever a context that kept its state expects: more than one call of this
// backend reserves, at most 2^30 / 4), then the configured first VIDs (what enabling a context
// sets). Throws PanamaError when the exchange fails.
bool Channel::try_rejoin(uint64_t k) {
  std::string mine;
  {
    std::lock_guard<std::mutex> l(mu_);
    ++fb_.rejoin_attempts;
    for (size_t t = 0; t < fb_.next_vids.size(); ++t) mine += (t ? "," : "") + std::to_string(fb_.next_vids[t]);
  }
  const std::vector<std::string> words = exchange(mine);
  const size_t T = static_cast<size_t>(p_.trees);
  std::vector<uint32_t> top(T, 0);
  for (size_t i = 0; i < words.size(); ++i) {
    size_t pos = 0;
    for (size_t t = 0; t < T; ++t) {
      const size_t end = words[i].find(',', pos);
      const uint32_t v = static_cast<uint32_t>(std::stoul(words[i].substr(pos, end - pos)));
      if (i == 0 || ahead(v, top[t])) top[t] = v;
      pos = end == std::string::npos ? end : end + 1;
    }
  }
  std::vector<std::vector<uint32_t>> tries{top, p_.first_vids};
  for (auto& v : tries[0]) v += kRejoinGap;
  if (tries[1] == tries[0]) tries.pop_back();
  host::JobParams q = p_;
  q.timeout_ms = rejoin_probe_ms_;
  q.status_wait_ms = std::max(1, rejoin_probe_ms_ / 50);
  q.repair_stall_ms = rejoin_probe_ms_;
  for (const auto& vids : tries) {
    std::vector<uint32_t> next;
    const std::string why = probe_at(vids, q, &next);
    {
      std::lock_guard<std::mutex> l(mu_);  // the high-water mark: a VID once sent is never reused
      for (size_t t = 0; t < T; ++t)
        if (ahead(next[t], fb_.next_vids[t])) fb_.next_vids[t] = next[t];
    }
    const std::vector<std::string> said = exchange(why.empty() ? "A" : "F " + why);
    if (!std::all_of(said.begin(), said.end(), [](const std::string& w) { return w == "A"; })) continue;
    host::JobParams p = p_;
    p.first_vids = next;
    ar_ = std::make_unique<host::AllReduce>(*link_, p);
    {
      std::lock_guard<std::mutex> l(mu_);
      fb_.on_gloo = false;
      ++fb_.rejoins;
    }
    std::fprintf(stderr,
                 "panama_torch: back on the accelerator at request %llu (the probe was exact on every rank; VIDs of "
                 "tree 0 from %u)\n",
                 static_cast<unsigned long long>(k), next.empty() ? 0u : next[0]);
    std::fflush(stderr);
    return true;
  }
  return false;
}

void Channel::probe() {
  const size_t es = elem_bytes(cfg_.format);
  const size_t data = static_cast<size_t>(p_.repair_rounds > 0 ? p_.count - 1 : p_.count);
  const size_t n = data * static_cast<size_t>(p_.trees);  // one vector per tree
  std::vector<uint8_t> in(n * es), out(n * es);
  fill_probe(in.data(), n);
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
  // With a fallback the job starts on Gloo (logged once where every rank agreed on it).
  if (err && fallback_stats().on_gloo) return;
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
  const std::string bad = check_probe(out.data(), n, "the start-up probe");
  if (!bad.empty())
    throw PanamaError(Cause::design, bad + " (" + what + "): the accelerator does not sum " + to_string(cfg_.format) +
                                         " like the design in PANAMA_DESIGN=" + cfg_.design);
}

}  // namespace panama::torchx
