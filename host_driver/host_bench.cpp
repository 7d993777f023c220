// host_bench (scripts/bench-host, docs/results/host.md "Benchmark"): the physical limit and the protocol
// engine alone, on one core, measured in the run:
//   memcpy: the bandwidth of one core copying a buffer far larger than the caches (Gbit/s);
//   engine: AllReduce over an in-memory transport that answers every contribution at once with
//           its own result (a one-worker job on an accelerator that costs nothing): gradient
//           Gbit/s per CPU second of the thread, every output checked against its input.
// Prints one JSON object: {"memcpy_gbps": F, "engine_gbps_per_core": F, ...}.
//
// Usage: host_bench [--seconds S] [--elems N] [--trees T] [--count C]
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "allreduce.h"

namespace {

using panama::host::Clock;

double thread_cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// The accelerator of a one-worker job in memory: every contribution comes back as its own final
// sum (the result flag set, addressed as it came). A ring of frame buffers that the all-reduce
// builds its frames in (tx_begin) and reads its results from (recv_view): the "wire" costs
// nothing, so the figure is the protocol engine's alone.
class ReflectTransport : public panama::host::Transport {
 public:
  void send(const panama::wire::Bytes& f) override {
    std::memcpy(tx_begin(f.size()), f.data(), f.size());
    tx_end(f.size());
  }
  uint8_t* tx_begin(size_t len) override {
    if (n_ == kRing || len > kFrame) throw panama::host::TransportError("reflect: ring full or frame too long");
    return &buf_[((head_ + n_) % kRing) * kFrame];
  }
  void tx_end(size_t len) override {
    const size_t i = (head_ + n_) % kRing;
    buf_[i * kFrame + panama::wire::off::flags] |= panama::wire::kFlagResult;
    len_[i] = len;
    ++n_;
  }
  bool recv_view(const uint8_t*& f, size_t& len, Clock::time_point) override {
    if (n_ == 0) return false;
    f = &buf_[head_ * kFrame];
    len = len_[head_];
    head_ = (head_ + 1) % kRing;
    --n_;
    return true;
  }
  bool recv(panama::wire::Bytes& f, Clock::time_point d) override {
    const uint8_t* p = nullptr;
    size_t len = 0;
    if (!recv_view(p, len, d)) return false;
    f.assign(p, p + len);
    return true;
  }

 private:
  static constexpr size_t kRing = 4096, kFrame = 9216;
  std::vector<uint8_t> buf_ = std::vector<uint8_t>(kRing * kFrame);
  std::vector<size_t> len_ = std::vector<size_t>(kRing);
  size_t head_ = 0, n_ = 0;
};

// Copying `bytes` from one buffer to another, in Gbit/s per CPU second of this thread (the
// machine is shared: wall time would count other processes' turns), the median of the rounds.
double memcpy_gbps(size_t bytes, double seconds) {
  std::vector<uint8_t> a(bytes, 1), b(bytes, 2);
  std::vector<double> r;
  const auto end = Clock::now() + std::chrono::duration<double>(seconds);
  while (Clock::now() < end || r.size() < 3) {
    const double c0 = thread_cpu_s();
    std::memcpy(b.data(), a.data(), bytes);
    const double dt = thread_cpu_s() - c0;
    if (dt > 0) r.push_back(static_cast<double>(bytes) * 8 / dt / 1e9);
    a[0] = b[bytes - 1];  // keep the copies live
  }
  std::sort(r.begin(), r.end());
  return r[r.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 1.0;
  size_t elems = 1 << 20;
  int trees = 2, count = 362;
  const char* usage = "usage: host_bench [--seconds S] [--elems N] [--trees T] [--count C]\n";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has = i + 1 < argc;
    if (a == "--help" || a == "-h") {
      std::fputs(usage, stdout);
      return 0;
    } else if (a == "--seconds" && has)
      seconds = std::atof(argv[++i]);
    else if (a == "--elems" && has)
      elems = std::strtoull(argv[++i], nullptr, 10);
    else if (a == "--trees" && has)
      trees = std::atoi(argv[++i]);
    else if (a == "--count" && has)
      count = std::atoi(argv[++i]);
    else {
      std::fputs(usage, stderr);
      return 2;
    }
  }
  if (!(seconds > 0) || elems == 0 || trees < 1 || trees > 255 || count < 1) {
    std::fprintf(stderr, "host_bench: --seconds > 0, --elems >= 1, --trees 1..255, --count >= 1\n");
    return 2;
  }
  const double mc = memcpy_gbps(64u << 20, seconds);

  ReflectTransport tr;
  panama::host::JobParams p;
  p.jid = 1;
  p.world = 1;
  p.trees = trees;
  p.count = count;
  // The worker's defaults (cli_worker.cpp): 12 vectors in flight over the trees.
  p.window.max = std::max(1, 12 / trees);
  p.window.init = std::min(4.0, p.window.max);
  panama::host::AllReduce ar(tr, p);
  std::vector<float> in(elems), buf(elems);
  for (size_t i = 0; i < elems; ++i) in[i] = static_cast<float>(i % 1000) * 0.25f - 100.0f;
  uint64_t calls = 0;
  bool exact = true;
  double cpu = 0;  // inside the calls only: refilling and checking the buffer is the bench's
  const auto w0 = Clock::now();
  while (std::chrono::duration<double>(Clock::now() - w0).count() < seconds || calls < 2) {
    std::memcpy(buf.data(), in.data(), elems * sizeof(float));
    const double c0 = thread_cpu_s();
    ar.reduce_f32(buf.data(), elems);
    cpu += thread_cpu_s() - c0;
    exact &= std::memcmp(buf.data(), in.data(), elems * sizeof(float)) == 0;
    ++calls;
  }
  const double bits = static_cast<double>(ar.stats().bytes_reduced) * 8;
  std::printf(
      "{\"memcpy_gbps\": %.2f, \"engine_gbps_per_core\": %.2f, \"engine_ratio\": %.3f, \"engine_calls\": %llu, "
      "\"engine_bytes_per_call\": %zu, \"trees\": %d, \"count\": %d, \"exact\": %s}\n",
      mc, bits / cpu / 1e9, bits / cpu / 1e9 / mc, static_cast<unsigned long long>(calls), elems * sizeof(float), trees,
      count, exact ? "true" : "false");
  return exact ? 0 : 1;
}
