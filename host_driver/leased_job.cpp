#include "leased_job.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>

#include "sock.h"

namespace panama::host {

namespace {

using json = nlohmann::json;

double secs(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

// Control numbers travel as 4-bit nibbles, one per element of the job's format: every nibble is
// exact in fp32, bf16 and fp16, and a nibble plus zeros sums to itself in any order.
uint32_t nibble_bits(ref::Fmt f, uint32_t v) {
  if (f == ref::Fmt::fp32) return ref::float_to_bits(static_cast<float>(v));
  return ref::double_to_half(static_cast<double>(v), ref::fmt_bits(f), false);
}

double bits_value(ref::Fmt f, uint32_t b) {
  if (f == ref::Fmt::fp32) return static_cast<double>(ref::bits_to_float(b));
  return ref::half_to_double(b, ref::fmt_bits(f), false);
}

struct Control {  // what rank 0 decided, as numbers of 16 bits
  std::vector<uint32_t> v;
  void put(uint32_t x) {
    v.push_back(x & 0xFFFF);
    v.push_back(x >> 16);
  }
};

wire::Ipv4 ip_or_zero(const json& t, const char* key) {
  const std::string s = t.value(key, "");
  return s.empty() ? 0 : wire::parse_ipv4(s);
}

}  // namespace

AllocatorCall allocator_socket(const std::string& path, int timeout_ms) {
  return [path, timeout_ms](const json& req) {
    Fd fd(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (fd.get() < 0) throw std::runtime_error("socket: " + std::string(std::strerror(errno)));
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    if (path.size() >= sizeof a.sun_path) throw std::runtime_error("allocator socket path too long: " + path);
    std::strcpy(a.sun_path, path.c_str());
    if (connect(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) != 0)
      throw std::runtime_error("cannot connect to the allocator at " + path + ": " + std::strerror(errno));
    const std::string line = req.dump() + "\n";
    if (send(fd.get(), line.data(), line.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(line.size()))
      throw std::runtime_error("allocator " + path + ": send failed");
    std::string in;
    const auto end = Clock::now() + std::chrono::milliseconds(timeout_ms);
    while (in.find('\n') == std::string::npos) {
      const int left =
          static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(end - Clock::now()).count());
      pollfd p{fd.get(), POLLIN, 0};
      if (left <= 0 || poll(&p, 1, left) <= 0) throw std::runtime_error("allocator " + path + ": no reply");
      char b[4096];
      const ssize_t k = recv(fd.get(), b, sizeof b, 0);
      if (k <= 0) throw std::runtime_error("allocator " + path + ": connection closed without a reply");
      in.append(b, static_cast<size_t>(k));
    }
    return json::parse(in.substr(0, in.find('\n')));
  };
}

LeasedJob::LeasedJob(Transport& fallback, LeasedJobParams p, AccelOpener open, AllocatorCall alloc)
    : p_(std::move(p)), open_(std::move(open)), alloc_(std::move(alloc)), ring_(fallback, [&] {
        RingParams r = p_.ring;
        r.rank = p_.job.rank;
        r.world = p_.job.world;
        r.format = p_.job.format;
        r.elem_bytes = p_.job.elem_bytes;
        return r;
      }()) {
  if (!p_.log) p_.log = [](const std::string& s) { std::fprintf(stderr, "%s\n", s.c_str()); };
  if (p_.job.rank == 0 && !alloc_) throw std::runtime_error("rank 0 needs the allocator");
  if (p_.job.rank == 0) hb_ = std::thread([this] { heartbeat_loop(); });
}

LeasedJob::~LeasedJob() {
  try {
    finish(0);
  } catch (...) {
  }
}

void LeasedJob::stop_on(const std::atomic<bool>* flag) {
  stop_ = flag;
  ring_.stop_on(flag);
}

void LeasedJob::say(const std::string& line) { p_.log(p_.tag + " " + std::to_string(p_.job.rank) + ": " + line); }

void LeasedJob::heartbeat_loop() {
  while (!hb_stop_.load()) {
    int64_t period;
    {
      std::lock_guard<std::mutex> l(mu_);
      period = p_.heartbeat_ms > 0 ? p_.heartbeat_ms : std::max<int64_t>(50, lease_ms_ / 3);
    }
    const auto until = Clock::now() + std::chrono::milliseconds(period);
    while (!hb_stop_.load() && Clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (hb_stop_.load()) return;
    std::lock_guard<std::mutex> l(mu_);
    if (!lease_ok_) continue;
    try {
      const json r = alloc_({{"op", "renew"}, {"lease", held_.id}});
      if (!r.value("ok", false)) {
        lease_ok_ = false;
        just_ended_ = true;
        why_ = "lease " + std::to_string(held_.id) + " ended: " + r.value("error", std::string("?"));
      }
    } catch (const std::exception&) {
      // The allocator unreachable for a moment: the lease lasts until its expiry; the boundary tries again.
    }
  }
}

void LeasedJob::decide() {
  std::lock_guard<std::mutex> l(mu_);
  try {
    if (lease_ok_) {
      const json r = alloc_({{"op", "renew"}, {"lease", held_.id}});
      if (!r.value("ok", false)) {
        lease_ok_ = false;
        why_ = "lease " + std::to_string(held_.id) + " ended: " + r.value("error", std::string("?"));
      }
    } else if (just_ended_) {
      just_ended_ = false;  // a lease that ended: one boundary on the ring, then acquisition again
    } else if (last_try_ < 0 || iteration_ - last_try_ >= p_.retry_every) {
      last_try_ = iteration_;
      const json r = alloc_({{"op", "acquire"},
                             {"workers", p_.job.world},
                             {"trees", p_.job.trees},
                             {"ports", p_.ports},
                             {"first_tid", p_.first_tid}});
      if (!r.value("ok", false)) {
        why_ = "acquire: " + r.value("error", std::string("?"));
        return;
      }
      Lease ls;
      ls.id = r.at("lease").get<int64_t>();
      ls.jid = static_cast<uint16_t>(r.at("jid").get<int>());
      for (const auto& t : r.at("trees"))
        ls.trees.push_back({t.at("tid").get<int>(), ip_or_zero(t, "agg_ip"), ip_or_zero(t, "group_ip"),
                            t.value("first_vid", uint32_t{0})});
      lease_ms_ = r.value("lease_ms", int64_t{10000});
      held_ = ls;
      lease_ok_ = true;
      ++st_.grants;
    }
  } catch (const std::exception& e) {
    if (lease_ok_) return;  // a renew that did not get through: the lease lasts until its expiry
    why_ = std::string("allocator: ") + e.what();
  }
}

// The boundary: rank 0's decision, summed with the others' zeros over the ring, read by everyone.
void LeasedJob::boundary(int64_t iteration) {
  iteration_ = iteration;
  const int T = p_.job.trees;
  Control c;
  std::string why;
  if (p_.job.rank == 0) {
    decide();
    std::lock_guard<std::mutex> l(mu_);
    if (lease_ok_ && static_cast<int>(held_.trees.size()) == T) {
      c.put(1);
      c.put(static_cast<uint32_t>(held_.id));
      c.put(held_.jid);
      for (const auto& t : held_.trees) {
        c.put(static_cast<uint32_t>(t.tid));
        c.put(t.agg_ip);
        c.put(t.group_ip);
        c.put(t.first_vid);
      }
    }
    why = why_;
  }
  const size_t words = 2 * (3 + 4 * static_cast<size_t>(T)), elems = 4 * words;
  c.v.resize(words, 0);
  const ref::Fmt f = p_.job.format;
  const size_t es = static_cast<size_t>(p_.job.elem_bytes);
  std::vector<uint8_t> b(elems * es, 0);
  for (size_t i = 0; i < elems; ++i) {
    const uint32_t x = p_.job.rank == 0 ? nibble_bits(f, (c.v[i / 4] >> (4 * (i % 4))) & 0xF) : 0;
    std::memcpy(b.data() + i * es, &x, es);  // little-endian
  }
  ring_.reduce(b.data(), elems);
  std::vector<uint32_t> w(words, 0);
  for (size_t i = 0; i < elems; ++i) {
    uint32_t x = 0;
    std::memcpy(&x, b.data() + i * es, es);
    w[i / 4] |= (static_cast<uint32_t>(bits_value(f, x)) & 0xF) << (4 * (i % 4));
  }
  auto word = [&](size_t k) { return w[2 * k] | (w[2 * k + 1] << 16); };
  if (word(0) == 1) {
    Lease ls;
    ls.id = word(1);
    ls.jid = static_cast<uint16_t>(word(2));
    for (size_t t = 0; t < static_cast<size_t>(T); ++t)
      ls.trees.push_back({static_cast<int>(word(3 + 4 * t)), word(4 + 4 * t), word(5 + 4 * t), word(6 + 4 * t)});
    if (mode_ == Mode::accelerator && used_.id == ls.id) return;
    ar_.reset();
    link_.reset();
    JobParams jp = p_.job;
    jp.jid = ls.jid;
    jp.first_tid = ls.trees[0].tid;
    // A granted context expects VID 0, but may still hold contributions the job queued on it
    // under an earlier lease (leftovers stay queued across disable and enable): the new lease
    // starts above every VID the job used before, so the accelerator drops those as incomplete
    // (docs/allocator.md "Switching").
    jp.first_vids.assign(static_cast<size_t>(T), 0);
    for (size_t t = 0; t < vid_floor_.size() && t < jp.first_vids.size(); ++t)
      if (vid_floor_[t] < 0x80000000u) jp.first_vids[t] = vid_floor_[t];
    // The allocator's start (above what another job left on the context), when higher.
    for (size_t t = 0; t < jp.first_vids.size(); ++t)
      if (ls.trees[t].first_vid < 0x80000000u) jp.first_vids[t] = std::max(jp.first_vids[t], ls.trees[t].first_vid);
    open_error_.clear();
    try {
      link_ = open_(ls, jp);
      ar_ = std::make_unique<AllReduce>(*link_, jp);
      if (stop_) ar_->stop_on(stop_);
    } catch (const std::exception& e) {
      // Every rank agreed on the accelerator: this one's call fails, and the iteration is redone
      // on the ring by everyone (iteration()).
      open_error_ = std::string("opening the accelerator's link: ") + e.what();
      link_.reset();
    }
    used_ = ls;
    mode_ = Mode::accelerator;
    said_ring_ = false;
    ++st_.switches;
    say("lease " + std::to_string(ls.id) + " (JID " + std::to_string(ls.jid) + ", " + std::to_string(T) +
        " trees, first VID " + std::to_string(jp.first_vids[0]) + "): on the accelerator from iteration " +
        std::to_string(iteration));
    return;
  }
  if (mode_ == Mode::accelerator) ++st_.switches;
  ar_.reset();
  link_.reset();
  mode_ = Mode::ring;
  if (!said_ring_) {
    said_ring_ = true;
    say("no accelerator context (" + (p_.job.rank == 0 ? why : std::string("rank 0 holds no lease")) +
        "): all-reducing on the hosts, a ring over " + std::to_string(p_.job.world) + " workers, from iteration " +
        std::to_string(iteration));
  }
}

bool LeasedJob::agree_failed(bool failed) {
  const ref::Fmt f = p_.job.format;
  const size_t es = static_cast<size_t>(p_.job.elem_bytes);
  std::vector<uint8_t> b(es, 0);
  const uint32_t x = failed ? nibble_bits(f, 1) : 0;
  std::memcpy(b.data(), &x, es);
  ring_.reduce(b.data(), 1);
  uint32_t y = 0;
  std::memcpy(&y, b.data(), es);
  return bits_value(f, y) > 0;  // a sum of ones and zeros is never rounded to zero
}

void LeasedJob::release() {
  std::lock_guard<std::mutex> l(mu_);
  if (!lease_ok_) return;
  lease_ok_ = false;
  why_ = "lease " + std::to_string(held_.id) + " released";
  try {
    alloc_({{"op", "release"}, {"lease", held_.id}});
  } catch (const std::exception&) {
    // It expires by itself.
  }
}

LeasedJob::Mode LeasedJob::iteration(void* buf, size_t n) {
  const auto t0 = Clock::now();
  boundary(iteration_ + 1);
  const auto t1 = Clock::now();
  st_.boundary_seconds += secs(t0, t1);
  if (mode_ == Mode::accelerator) {
    const size_t bytes = n * static_cast<size_t>(p_.job.elem_bytes);
    std::vector<uint8_t> in(static_cast<uint8_t*>(buf), static_cast<uint8_t*>(buf) + bytes);
    bool failed = false;
    std::string err;
    if (ar_) {  // above every VID this call may use (its range is at most 2^24 per tree)
      vid_floor_.resize(static_cast<size_t>(p_.job.trees));
      for (int t = 0; t < p_.job.trees; ++t) vid_floor_[static_cast<size_t>(t)] = ar_->next_vid(t) + (1u << 25);
    }
    try {
      if (!ar_) throw AllReduceError(open_error_);
      // From the copy into the caller's buffer: the results go straight into buf, and a failed
      // call's partial output is replaced by the input again below.
      ar_->reduce_raw(in.data(), static_cast<uint8_t*>(buf), n);
    } catch (const AllReduceStopped&) {
      std::memcpy(buf, in.data(), bytes);  // in place: a stopped call leaves the buffer as it was
      throw;
    } catch (const AllReduceError& e) {
      failed = true;
      err = e.what();
    }
    const auto t2 = Clock::now();
    st_.accel_seconds += secs(t1, t2);
    if (!agree_failed(failed)) {
      ++st_.accel_iterations;
      return mode_;
    }
    // Some rank's call failed: this iteration again, on the ring, by everyone.
    say("iteration " + std::to_string(iteration_) + " failed on the accelerator (" +
        (failed ? err : std::string("on another rank")) + "): redone on the hosts");
    if (p_.job.rank == 0) release();
    ar_.reset();
    link_.reset();
    mode_ = Mode::ring;
    said_ring_ = true;
    ++st_.redone;
    ++st_.switches;
    std::memcpy(buf, in.data(), bytes);
  }
  const auto t3 = Clock::now();
  ring_.reduce(buf, n);
  st_.ring_seconds += secs(t3, Clock::now());
  ++st_.ring_iterations;
  return Mode::ring;
}

void LeasedJob::finish(int drain_ms) {
  if (finished_) return;
  finished_ = true;
  hb_stop_ = true;
  if (hb_.joinable()) hb_.join();
  if (p_.job.rank == 0 && alloc_) release();
  ar_.reset();
  link_.reset();
  if (drain_ms > 0) ring_.drain(drain_ms);
}

}  // namespace panama::host
