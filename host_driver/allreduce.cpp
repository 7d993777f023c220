#include "allreduce.h"
#include "protocol.h"
#include "reduce_call.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace panama::host {

// ---------------------------------------------------------------------------------------------
// JobParams

int JobParams::count_for(int mtu, int max_elems, int es) {
  if (es != 2 && es != 4) throw AllReduceError("element size must be 2 or 4 bytes");
  if (mtu < proto::kIpHeaderBudget + es)
    throw AllReduceError("MTU " + std::to_string(mtu) + " is too small for one element");
  if (max_elems < 1) throw AllReduceError("MAX_ELEMS must be at least 1");
  return std::min(max_elems, (mtu - proto::kIpHeaderBudget) / es);
}

void JobParams::validate() const {
  auto bad = [](const std::string& s) { throw AllReduceError(s); };
  if (world < 1 || world > 0xFFFE) bad("world must be 1..65534");
  if (rank < 0 || rank >= world) bad("rank must be 0..world-1");
  if (trees < 1 || trees > 256) bad("trees must be 1..256");
  if (first_tid < 0 || first_tid + trees > 256) bad("first TID + trees must be at most 256");
  if (elem_bytes != 2 && elem_bytes != 4) bad("element size must be 2 or 4 bytes");
  if (count < 1 || count > 0xFFFF) bad("COUNT must be 1..65535");
  if (!(window.min >= 1) || !(window.init >= window.min) || !(window.max >= window.init) || window.max > 65536)
    bad("window: need 1 <= min <= init <= max <= 65536");
  if (!(window.gain > 0) || !(window.gain <= 1)) bad("ECN gain must be in (0, 1]");
  if (timeout_ms < 1) bad("timeout must be at least 1 ms");
  if (agg_port == 0) bad("aggregation port must be 1..65535");
  if (ecn > 3) bad("ECN must be 0..3");
  if (elem_bytes != (format == ref::Fmt::fp32 ? 4 : 2)) bad("element size does not match the format");
  if (repair_rounds < kRepairAuto || repair_rounds > 65535) bad("repair rounds must be auto (-1) or 0..65535");
  if (repair_stall_ms < 0) bad("repair stall time must be >= 0 ms (0: automatic)");
  if (repair_slots < 1 || repair_slots > 4096) bad("repair slots must be 1..4096");
  if (status_wait_ms < 1) bad("status wait must be at least 1 ms");
  if (status_copies < 1 || status_copies > 4) bad("status copies must be 1..4");
  if (repair_rounds != 0) {
    if (count < 2) bad("loss repair needs COUNT >= 2 (one element carries the repair tag)");
    // The repair tag (a count of workers) must be exact in the format.
    if (format == ref::Fmt::bf16 && world > 256) bad("loss repair with bf16 supports at most 256 workers");
    if (format == ref::Fmt::fp16 && world > 2048) bad("loss repair with fp16 supports at most 2048 workers");
  }
  if (!first_vids.empty() && static_cast<int>(first_vids.size()) != trees)
    bad("first VIDs: " + std::to_string(first_vids.size()) + " given for " + std::to_string(trees) + " trees");
}

// ---------------------------------------------------------------------------------------------
// AllReduce

StatusWait::StatusWait(double floor_ms, double cap_ms) : floor_(floor_ms), cap_(std::max(floor_ms, cap_ms)) {}

void StatusWait::sample(double r) {
  if (samples_++ == 0) {
    srtt_ = r;
    rttvar_ = r / 2;
    return;
  }
  rttvar_ += (std::fabs(srtt_ - r) - rttvar_) / 4;
  srtt_ += (r - srtt_) / 8;
}

double StatusWait::wait_ms() const {
  if (samples_ == 0) return floor_;
  return std::min(cap_, std::max(floor_, srtt_ + 4 * rttvar_));
}

AllReduce::AllReduce(Transport& t, const JobParams& p)
    : t_(t), p_(p), wait_(p.status_wait_ms, p.timeout_ms / 2.0), nonce_(std::random_device{}()) {
  p_.validate();
  next_vid_.assign(static_cast<size_t>(p_.trees), p_.first_vid);
  if (!p_.first_vids.empty()) next_vid_ = p_.first_vids;
  cc_.assign(static_cast<size_t>(p_.trees), Dctcp(p_.window));
  prev_span_.assign(static_cast<size_t>(p_.trees), 0);
}

void AllReduce::reduce_f32(float* data, size_t n) { reduce_f32(data, data, n); }

void AllReduce::reduce_u16(uint16_t* data, size_t n) { reduce_u16(data, data, n); }

void AllReduce::reduce_raw(uint8_t* data, size_t n) { reduce_raw(data, data, n); }

void AllReduce::reduce_f32(const float* in, float* out, size_t n) {
  if (p_.elem_bytes != 4) throw AllReduceError("reduce_f32 needs elem_bytes = 4");
  // x86-64: floats are little-endian
  reduce_raw(reinterpret_cast<const uint8_t*>(in), reinterpret_cast<uint8_t*>(out), n);
}

void AllReduce::reduce_u16(const uint16_t* in, uint16_t* out, size_t n) {
  if (p_.elem_bytes != 2) throw AllReduceError("reduce_u16 needs elem_bytes = 2");
  reduce_raw(reinterpret_cast<const uint8_t*>(in), reinterpret_cast<uint8_t*>(out), n);
}

using detail::ReduceCall;

void AllReduce::reduce_raw(const uint8_t* in, uint8_t* out, size_t n) {
  const auto t0 = Clock::now();
  ++stats_.calls;
  if (n == 0) return;
  const size_t bytes = n * static_cast<size_t>(p_.elem_bytes);
  // Out-of-place (no byte of out is a byte of in): the call writes every result straight into
  // out, and in stays as it is for repair. Otherwise the results are staged until the call
  // succeeded: writing one into the caller's buffer would overwrite an input vector that repair
  // (or, with a partial overlap, a later main vector) still sends.
  const auto a = reinterpret_cast<std::uintptr_t>(in), b = reinterpret_cast<std::uintptr_t>(out);
  const bool direct = a + bytes <= b || b + bytes <= a;
  if (!direct && out_buf_.size() < bytes) out_buf_.resize(bytes);
  ReduceCall call(t_, p_, next_vid_, prev_span_, cc_, wait_, stats_, nonce_, in, n, stop_,
                  direct ? out : out_buf_.data());
  const auto note_wait = [this] {
    stats_.status_wait_ms = p_.adaptive_wait ? wait_.wait_ms() : p_.status_wait_ms;
    stats_.srtt_ms = wait_.srtt_ms();
    stats_.rtt_samples = wait_.samples();
  };
  try {
    call.run();
  } catch (...) {
    note_wait();
    throw;
  }
  note_wait();
  if (direct) {
    ++stats_.calls_direct;
  } else {
    std::memcpy(out, call.result(), bytes);
    stats_.bytes_staged += bytes;
  }
  stats_.bytes_reduced += bytes;
  stats_.seconds += std::chrono::duration<double>(Clock::now() - t0).count();
}

}  // namespace panama::host
