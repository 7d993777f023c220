#include "host_ring.h"

#include <algorithm>
#include <cstring>

namespace panama::host {

namespace {

constexpr uint32_t kAll = 0xFFFFFFFFu;  // a status's count meaning "the whole step arrived"
constexpr size_t kMaxMissing = 256;     // missing pieces listed per status
constexpr size_t kStashCap = 1 << 16;   // early frames of the next call kept, at most

uint32_t load(const uint8_t* p, int es) {
  if (es == 4) {
    uint32_t v;
    std::memcpy(&v, p, 4);
    return v;
  }
  uint16_t v;
  std::memcpy(&v, p, 2);
  return v;
}

void store(uint8_t* p, int es, uint32_t v) {
  if (es == 4) {
    std::memcpy(p, &v, 4);
  } else {
    const uint16_t h = static_cast<uint16_t>(v);
    std::memcpy(p, &h, 2);
  }
}

double ms_since(Clock::time_point t, Clock::time_point now) {
  return std::chrono::duration<double, std::milli>(now - t).count();
}

}  // namespace

void RingParams::validate() const {
  if (world < 1 || world > 0xFFFF) throw HostRingError("fallback: world must be 1..65535");
  if (rank < 0 || rank >= world) throw HostRingError("fallback: rank must be 0..world-1");
  if (elem_bytes != 4 && elem_bytes != 2) throw HostRingError("fallback: element size must be 2 or 4 bytes");
  if ((format == ref::Fmt::fp32) != (elem_bytes == 4)) throw HostRingError("fallback: format and element size differ");
  if (count < 1 || count > 0xFFFF) throw HostRingError("fallback: count must be 1..65535");
  if (window < 2) throw HostRingError("fallback: window must be >= 2");
  if (rto_ms < 1 || timeout_ms < rto_ms) throw HostRingError("fallback: need 1 <= rto_ms <= timeout_ms");
}

wire::Ipv4 fallback_group(uint16_t job) { return 0xEFFF0000u | job; }

wire::Mac fallback_group_mac(uint16_t job) {
  return {0x01, 0x00, 0x5e, 0x7f, static_cast<uint8_t>(job >> 8), static_cast<uint8_t>(job & 0xff)};
}

HostRing::HostRing(Transport& link, RingParams p) : link_(link), p_(std::move(p)) { p_.validate(); }

int HostRing::send_chunk(int step) const {
  const int w = p_.world, r = p_.rank;
  return step < w - 1 ? mod(r - step) : mod(r + 1 - (step - (w - 1)));
}

int HostRing::recv_chunk(int step) const {
  const int w = p_.world, r = p_.rank;
  return step < w - 1 ? mod(r - step - 1) : mod(r - (step - (w - 1)));
}

size_t HostRing::pieces(int chunk) const {
  const size_t len = chunk_begin(chunk + 1) - chunk_begin(chunk), c = static_cast<size_t>(p_.count);
  return (len + c - 1) / c;
}

wire::Bytes HostRing::frame(Kind k, uint64_t call, int step, uint32_t piece, const uint8_t* payload, size_t count,
                            int es) {
  wire::FrameSpec s;
  s.eth_dst = p_.eth_dst;
  s.eth_src = p_.eth_src;
  s.ip_src = p_.ip_src;
  s.ip_dst = p_.ip_dst;
  s.ecn = 0;
  s.agg_port = p_.port;
  s.hdr.jid = p_.job;
  s.hdr.tid = k;
  s.hdr.vid = piece;
  s.hdr.rank = static_cast<uint16_t>(p_.rank);
  s.hdr.cookie = (call << 16) | static_cast<uint16_t>(step);
  s.elem_bytes = es;
  s.payload.assign(payload, payload + count * static_cast<size_t>(es));
  return wire::build_frame(s);
}

void HostRing::send(const wire::Bytes& f) { link_.send(f); }

// Step `step`'s frames are built from the buffer now (the chunk is final for this step: the
// receive of step - 1 completed it) and kept until the successor holds them all.
void HostRing::start_send(int step) {
  const int c = send_chunk(step);
  Send s;
  const size_t b = chunk_begin(c), e = chunk_begin(c + 1), C = static_cast<size_t>(p_.count);
  const size_t es = static_cast<size_t>(p_.elem_bytes);
  for (size_t i = 0; b + i * C < e; ++i) {
    const size_t from = b + i * C, cnt = std::min(C, e - from);
    s.frames.push_back(frame(kData, call_, step, static_cast<uint32_t>(i), buf_ + from * es, cnt, p_.elem_bytes));
  }
  if (s.frames.empty()) return;
  s.heard = Clock::now();
  auto& kept = sends_[{call_, step}] = std::move(s);
  pump(kept);
}

void HostRing::pump(Send& s) {
  const size_t limit = std::min(s.frames.size(), s.held + static_cast<size_t>(p_.window));
  bool sent = false;
  for (; s.next < limit; ++s.next, sent = true) {
    send(s.frames[s.next]);
    ++st_.data_sent;
  }
  if (sent) link_.flush();
}

void HostRing::send_status(uint64_t call, int step, const Recv* r) {
  std::vector<uint32_t> v{kAll, 0, 0};
  if (r) {
    size_t hi = r->got.size();
    while (hi > 0 && !r->got[hi - 1]) --hi;
    v[0] = static_cast<uint32_t>(r->n);
    v[1] = static_cast<uint32_t>(hi);
    for (size_t i = 0; i < hi && v.size() < 3 + kMaxMissing; ++i)
      if (!r->got[i]) v.push_back(static_cast<uint32_t>(i));
    v[2] = static_cast<uint32_t>(v.size() - 3);
  }
  const wire::Bytes pl = wire::payload_from_elems(v, 4);
  send(frame(kStatus, call, step, 0, pl.data(), v.size(), 4));
  link_.flush();
  ++st_.status_sent;
}

void HostRing::on_frame(const uint8_t* f, size_t len) {
  ++st_.frames_received;
  if (len < wire::kHeaderBytes || wire::classify(f, len, p_.port) != wire::Class::aggregation) {
    ++st_.ignored;
    return;
  }
  const wire::AggHeader h = wire::parse_header(f);
  const int pred = mod(p_.rank - 1), succ = mod(p_.rank + 1);
  const uint64_t call = h.cookie >> 16;
  const int step = static_cast<int>(h.cookie & 0xFFFF);
  const int es = h.tid == kStatus ? 4 : p_.elem_bytes;
  const bool data = h.tid == kData && h.rank == pred, status = h.tid == kStatus && h.rank == succ;
  if (h.jid != p_.job || h.result() || (!data && !status) ||
      len != wire::kHeaderBytes + static_cast<size_t>(h.count) * static_cast<size_t>(es)) {
    ++st_.ignored;
    return;
  }
  last_heard_ = Clock::now();
  if (status) return on_status(call, step, f + wire::off::payload, h.count);
  if (call > call_ || (call == call_ && !active_)) {
    if (call == call_) return send_status(call, step, nullptr);  // the finished call: all arrived
    if (stash_.size() < kStashCap) stash_.emplace_back(f, f + len);
    ++st_.stashed;
    return;
  }
  if (call < call_) return send_status(call, step, nullptr);
  on_data(call, step, h.vid, f + wire::off::payload, h.count, len);
}

void HostRing::on_data(uint64_t call, int step, uint32_t piece, const uint8_t* payload, size_t count, size_t) {
  if (step < 0 || step >= steps_) return;
  Recv& r = recv_[static_cast<size_t>(step)];
  if (piece >= r.got.size()) return;
  if (r.got[piece]) {  // a copy: the sender may have missed our status
    if (r.n == r.got.size()) send_status(call, step, &r);
    return;
  }
  const int c = recv_chunk(step);
  const size_t C = static_cast<size_t>(p_.count), b = chunk_begin(c) + piece * C;
  const size_t cnt = std::min(C, chunk_begin(c + 1) - b), es = static_cast<size_t>(p_.elem_bytes);
  if (count != cnt) return;
  uint8_t* dst = buf_ + b * es;
  if (step < p_.world - 1) {
    // Reduce-scatter: the predecessor's partial sum first, this rank's element second.
    ref::MxcsrScope mx(false);
    for (size_t i = 0; i < cnt; ++i)
      store(dst + i * es, p_.elem_bytes,
            ref::add(p_.format, false, load(payload + i * es, p_.elem_bytes), load(dst + i * es, p_.elem_bytes)));
  } else {
    std::memcpy(dst, payload, cnt * es);  // all-gather: the final sum as it is
  }
  r.got[piece] = true;
  ++r.n;
  if (r.n == r.got.size()) {
    ++recv_done_;
    send_status(call, step, &r);
  } else if (++r.since_status >= static_cast<size_t>(p_.window) / 2) {
    r.since_status = 0;
    send_status(call, step, &r);
  }
}

void HostRing::on_status(uint64_t call, int step, const uint8_t* payload, size_t count) {
  auto it = sends_.find({call, step});
  if (it == sends_.end() || count < 3) return;
  Send& s = it->second;
  const auto v = wire::elems_from_payload(payload, count, 4);
  const auto now = Clock::now();
  if (v[0] == kAll || v[0] >= s.frames.size()) {
    sends_.erase(it);
    return;
  }
  const bool quiet = ms_since(s.heard, now) >= p_.rto_ms;  // resend at most once per rto
  s.heard = now;
  s.held = std::max<size_t>(s.held, v[0]);
  if (quiet || v[2] > 0) {
    for (size_t k = 3; k < count && k < 3 + v[2]; ++k)
      if (v[k] < s.next) {
        send(s.frames[v[k]]);
        ++st_.resent;
      }
    if (quiet)  // the tail after the last piece it holds
      for (size_t i = v[1]; i < s.next; ++i) {
        send(s.frames[i]);
        ++st_.resent;
      }
    link_.flush();
  }
  pump(s);
}

void HostRing::timers(Clock::time_point now) {
  if (active_) {
    bool first = true;  // the lowest incomplete step, and every step with pieces missing
    for (int k = 0; k < steps_; ++k) {
      Recv& r = recv_[static_cast<size_t>(k)];
      if (r.n == r.got.size()) continue;
      if ((first || r.n > 0) && ms_since(r.nagged, now) >= p_.rto_ms) {
        r.nagged = now;
        send_status(call_, k, &r);
      }
      first = false;
    }
  }
  for (auto& [key, s] : sends_)
    if (s.next > 0 && ms_since(s.heard, now) >= p_.rto_ms) {
      s.heard = now;  // a probe: the receiver answers with its status
      send(s.frames[s.next - 1]);
      ++st_.resent;
      link_.flush();
    }
}

void HostRing::start_sends() {
  while (next_send_ < steps_) {
    if (next_send_ > 0) {
      const Recv& r = recv_[static_cast<size_t>(next_send_ - 1)];
      if (r.n < r.got.size()) return;
    }
    start_send(next_send_++);
  }
}

void HostRing::serve(Clock::time_point until) {
  const uint8_t* f = nullptr;
  size_t len = 0;
  const auto now = Clock::now();
  const auto tick = now + std::chrono::milliseconds(std::max(1, p_.rto_ms / 4));
  if (link_.recv_view(f, len, std::min(until, tick))) on_frame(f, len);
  timers(Clock::now());
}

void HostRing::reduce(void* buf, size_t n) {
  ++call_;
  ++st_.calls;
  const auto t0 = Clock::now();
  if (p_.world == 1) return;
  buf_ = static_cast<uint8_t*>(buf);
  n_ = n;
  steps_ = 2 * (p_.world - 1);
  recv_.assign(static_cast<size_t>(steps_), Recv{});
  recv_done_ = 0;
  for (int k = 0; k < steps_; ++k) {
    Recv& r = recv_[static_cast<size_t>(k)];
    r.got.assign(pieces(recv_chunk(k)), false);
    r.nagged = t0;
    if (r.got.empty()) ++recv_done_;
  }
  next_send_ = 0;
  active_ = true;
  last_heard_ = t0;
  std::deque<wire::Bytes> early;
  early.swap(stash_);
  for (const auto& f : early) on_frame(f.data(), f.size());
  start_sends();
  while (recv_done_ < static_cast<size_t>(steps_)) {
    if (stop_ && stop_->load()) {
      active_ = false;
      throw HostRingError("fallback all-reduce stopped");
    }
    const auto now = Clock::now();
    if (ms_since(last_heard_, now) > p_.timeout_ms) {
      active_ = false;
      throw HostRingError("fallback all-reduce: nothing from rank " + std::to_string(mod(p_.rank - 1)) + " or rank " +
                          std::to_string(mod(p_.rank + 1)) + " for " + std::to_string(p_.timeout_ms) + " ms (call " +
                          std::to_string(call_) + ")");
    }
    serve(now + std::chrono::milliseconds(p_.rto_ms));
    start_sends();
  }
  start_sends();
  active_ = false;
  st_.seconds += std::chrono::duration<double>(Clock::now() - t0).count();
}

bool HostRing::drain(int ms) {
  const auto end = Clock::now() + std::chrono::milliseconds(ms);
  while (!sends_.empty() && Clock::now() < end) serve(end);
  return sends_.empty();
}

}  // namespace panama::host
