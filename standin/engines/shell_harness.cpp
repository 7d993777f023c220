// The board-shell engine of the switch stand-in (panama-host switch --shell, docs/host.md): drives
// the Verilated <prefix>_board_shell of a `panama-gen --board` output (per port an asynchronous
// crossing, management over Ethernet, the generated core) from the MAC side, the way the board's
// MAC IP would: each port's receive and transmit paths in that port's own MAC clock
// (config.json "board"."shell"."mac_mhz", every port a little off the nominal frequency, as
// independent oscillators are), frames paced at the line rate with the preamble and inter-frame
// gap, no back-pressure on receive (the MAC has none); the core on its own clock (config.json
// "mhz"), unrelated to any MAC clock.
//
// standin/engines/rtl_engine.cpp verilates this file with the design on first use (harness variant
// "shell", top <prefix>_board_shell with the board top's parameters) and the stand-in runs it with
// --live, speaking the line protocol of standin/engines/live_protocol.h on stdin/stdout: outputs are
// "out PORT -1 HEX" per frame the MACs transmitted (the frames the core built leave on port
// AGG_PORT among that port's own, or through the standalone switch); the register file is reached
// only by management requests, so read and write are refused; counters: one JSON line with the
// shell's management counters and receive-FIFO drops.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "Vtop.h"
#include "live_protocol.h"
#include "vl_util.h"
#include "verilated.h"

namespace {

using Bytes = std::vector<uint8_t>;

// Field access on ports of any width, a 32-bit word at a time on wide ones.
template <typename T>
void put(T& sig, int lsb, int width, uint64_t v) {
  tb::set_bits(sig, lsb, width, v);
}
template <std::size_t N>
void put(VlWide<N>& sig, int lsb, int width, uint64_t v) {
  tb::set_field(sig, lsb, width, v);
}
template <typename T>
uint64_t get(const T& sig, int lsb, int width) {
  return tb::get_bits(sig, lsb, width);
}
template <std::size_t N>
uint64_t get(const VlWide<N>& sig, int lsb, int width) {
  return tb::get_field(sig, lsb, width);
}

struct Shape {
  int ports = 0, bus_bytes = 0, max_frame = 0, settle = 0;
  double core_mhz = 0, mac_mhz = 0, gbps = 0;
};

Shape read_shape(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  const auto j = nlohmann::json::parse(in);
  if (!j.contains("board") || !j["board"].contains("shell"))
    throw std::runtime_error(path + " is not a board output (panama-gen --board)");
  Shape s;
  s.ports = j.at("ports");
  s.bus_bytes = j.at("bus_bits").get<int>() / 8;
  s.max_frame = j.at("max_frame_bytes");
  s.core_mhz = j.at("mhz");
  s.gbps = j.at("gbps");
  s.mac_mhz = j["board"]["shell"].at("mac_mhz");
  // Cycles without activity after which nothing can be pending (rtl_harness.cpp's bound, plus
  // the crossings and a management request's SipHash).
  s.settle = 4 * (s.max_frame / s.bus_bytes + 1) + 4 * j.at("addtree_latency").get<int>() + 512 + 4000;
  return s;
}

class Shell {
 public:
  explicit Shell(const Shape& s) : s_(s) {
    const int N = s.ports;
    if (N > 32) throw std::runtime_error("the shell stand-in drives at most 32 ports");
    core_half_ = 500000.0 / s.core_mhz;  // ps
    for (int p = 0; p < N; ++p) {
      // Independent oscillators: +-100 ppm apart, alternating.
      const double ppm = (p % 2 ? 1 : -1) * 100.0 * (1 + p / 2);
      mac_half_.push_back(500000.0 / s.mac_mhz * (1 + ppm * 1e-6));
      mac_next_.push_back(mac_half_.back() * (0.3 + 0.1 * p));
    }
    rx_q_.resize(N);
    cur_.resize(N);
    cur_off_.assign(N, 0);
    rx_free_.assign(N, 0);
    tx_free_.assign(N, 0);
    tx_start_.assign(N, 0);
    tx_busy_.assign(N, false);
    tx_acc_.resize(N);
    rx_drop_.assign(N, 0);
    mac_hi_.assign(N, false);
    top_ = std::make_unique<Vtop>(ctx_.get());
    all_ = N == 32 ? 0xffffffffu : (1u << N) - 1;
  }

  void reset() {
    top_->core_rst = 1;
    top_->mac_rst = all_;
    run_core(32);
    top_->core_rst = 0;
    top_->mac_rst = 0;
    run_core(32);
  }

  void inject(int p, Bytes f) {
    if (trace_)
      std::fprintf(stderr, "shell: cycle %llu: in  port %d, %zu bytes\n", (unsigned long long)core_cycles_, p,
                   f.size());
    rx_q_[static_cast<size_t>(p)].push_back(std::move(f));
  }

  // Until every injected frame is in and nothing has left a MAC for `quiet` core cycles.
  void run_until_idle() {
    quiet_ = 0;
    for (;;) {
      const uint64_t seen = tx_beats_;
      run_core(64);
      if (tx_beats_ != seen || !rx_done()) {
        quiet_ = 0;
        continue;
      }
      quiet_ += 64;
      if (quiet_ >= static_cast<uint64_t>(s_.settle)) return;
    }
  }

  void run_core(uint64_t n) {
    const uint64_t end = core_cycles_ + n;
    while (core_cycles_ < end) step();
  }

  std::vector<std::pair<int, Bytes>> take_outputs() {
    auto v = std::move(out_);
    out_.clear();
    return v;
  }

  nlohmann::ordered_json counters() const {
    nlohmann::ordered_json j;
    j["management"] = {{"accepted", top_->mgmt_accepted},   {"bad_port", top_->mgmt_bad_port},
                       {"malformed", top_->mgmt_malformed}, {"bad_tag", top_->mgmt_bad_tag},
                       {"replay", top_->mgmt_replay},       {"rx_busy", top_->mgmt_rx_busy}};
    j["rx_fifo_drops"] = rx_drop_;
    j["core_cycles"] = core_cycles_;
    return j;
  }

  uint64_t cycles() const { return core_cycles_; }

 private:
  bool rx_done() const {
    for (size_t p = 0; p < rx_q_.size(); ++p)
      if (!rx_q_[p].empty() || cur_off_[p] < cur_[p].size()) return false;
    return true;
  }

  // Wire time of a frame of n bytes (FCS, preamble and inter-frame gap: 24 bytes), in ps.
  double wire_ps(size_t n) const { return static_cast<double>(n + 24) * 8 * 1000 / s_.gbps; }

  // The next edge of whichever clock comes first.
  void step() {
    size_t p_min = 0;
    double t_mac = 1e300;
    for (size_t p = 0; p < mac_next_.size(); ++p)
      if (mac_next_[p] < t_mac) t_mac = mac_next_[p], p_min = p;
    if (core_next_ <= t_mac) {
      now_ = core_next_;
      core_hi_ = !core_hi_;
      top_->core_clk = core_hi_;
      top_->eval();
      if (core_hi_) ++core_cycles_;
      core_next_ += core_half_;
      return;
    }
    now_ = t_mac;
    mac_next_[p_min] += mac_half_[p_min];
    mac_hi_[p_min] = !mac_hi_[p_min];
    if (mac_hi_[p_min]) {
      mac_rise(static_cast<int>(p_min));
    } else {
      tb::set_bits(top_->mac_clk, static_cast<int>(p_min), 1, 0);
      top_->eval();
    }
  }

  // Port p's MAC clock rises: its receive beat and transmit ready are set, the transmit beat and
  // the drop pulse sampled before the edge.
  void mac_rise(int p) {
    const size_t P = static_cast<size_t>(p);
    const int BB = s_.bus_bytes;
    if (cur_off_[P] >= cur_[P].size() && !rx_q_[P].empty() && now_ >= rx_free_[P]) {
      cur_[P] = std::move(rx_q_[P].front());
      rx_q_[P].pop_front();
      cur_off_[P] = 0;
      rx_free_[P] = now_ + wire_ps(cur_[P].size());
    }
    bool v = false, last = false;
    std::vector<uint64_t> d(static_cast<size_t>((BB + 7) / 8), 0);
    std::vector<uint64_t> k(static_cast<size_t>((BB + 63) / 64), 0);
    if (cur_off_[P] < cur_[P].size()) {
      for (int i = 0; i < BB && cur_off_[P] + static_cast<size_t>(i) < cur_[P].size(); ++i) {
        d[static_cast<size_t>(i / 8)] |= uint64_t(cur_[P][cur_off_[P] + static_cast<size_t>(i)]) << (8 * (i % 8));
        k[static_cast<size_t>(i / 64)] |= uint64_t(1) << (i % 64);
      }
      cur_off_[P] += static_cast<size_t>(BB);
      last = cur_off_[P] >= cur_[P].size();
      v = true;
    }
    for (size_t c = 0; c < d.size(); ++c) put(top_->mac_rx_tdata, 8 * BB * p + 64 * static_cast<int>(c), 64, d[c]);
    for (size_t c = 0; c < k.size(); ++c)
      put(top_->mac_rx_tkeep, BB * p + 64 * static_cast<int>(c), std::min(64, BB - 64 * static_cast<int>(c)), k[c]);
    tb::set_bits(top_->mac_rx_tvalid, p, 1, v);
    tb::set_bits(top_->mac_rx_tlast, p, 1, last);
    tb::set_bits(top_->mac_rx_tuser, p, 1, 0);
    // Transmit: the MAC takes a frame's beats back to back, then waits out the frame's wire time.
    tb::set_bits(top_->mac_tx_tready, p, 1, tx_busy_[P] || now_ >= tx_free_[P]);
    top_->eval();
    if (tb::get_bits(top_->rx_drop, p, 1)) ++rx_drop_[P];
    if (tb::get_bits(top_->mac_tx_tvalid, p, 1) && tb::get_bits(top_->mac_tx_tready, p, 1)) {
      ++tx_beats_;
      if (!tx_busy_[P]) tx_start_[P] = now_;
      tx_busy_[P] = true;
      for (int c = 0; c < BB; c += 8) {
        const uint64_t keep = get(top_->mac_tx_tkeep, BB * p + c, std::min(8, BB - c));
        const uint64_t data = get(top_->mac_tx_tdata, 8 * (BB * p + c), 8 * std::min(8, BB - c));
        for (int i = 0; i < 8 && c + i < BB; ++i)
          if (keep >> i & 1) tx_acc_[P].push_back(static_cast<uint8_t>(data >> (8 * i)));
      }
      if (tb::get_bits(top_->mac_tx_tlast, p, 1)) {
        tx_busy_[P] = false;
        tx_free_[P] = tx_start_[P] + wire_ps(tx_acc_[P].size());
        // tuser on the last beat: the frame is sent with a bad FCS, which a receiver drops.
        if (trace_)
          std::fprintf(stderr, "shell: cycle %llu: out port %d, %zu bytes\n", (unsigned long long)core_cycles_, p,
                       tx_acc_[P].size());
        if (!tb::get_bits(top_->mac_tx_tuser, p, 1)) out_.emplace_back(p, std::move(tx_acc_[P]));
        tx_acc_[P].clear();
      }
    }
    tb::set_bits(top_->mac_clk, p, 1, 1);
    top_->eval();
  }

  Shape s_;
  std::unique_ptr<VerilatedContext> ctx_ = std::make_unique<VerilatedContext>();
  std::unique_ptr<Vtop> top_;
  uint32_t all_ = 0;
  bool trace_ = std::getenv("PANAMA_SHELL_TRACE") != nullptr;  // every frame in and out, on stderr
  double now_ = 0, core_next_ = 0, core_half_ = 0;
  bool core_hi_ = false;
  uint64_t core_cycles_ = 0, tx_beats_ = 0, quiet_ = 0;
  std::vector<double> mac_half_, mac_next_, rx_free_, tx_free_, tx_start_;
  std::vector<bool> mac_hi_, tx_busy_;
  std::vector<std::deque<Bytes>> rx_q_;
  std::vector<Bytes> cur_, tx_acc_;
  std::vector<size_t> cur_off_;
  std::vector<uint64_t> rx_drop_;
  std::vector<std::pair<int, Bytes>> out_;
};

void live_shell(Shell& sh, int ports) {
  live::Handlers h;
  h.ports = ports;
  h.inject = [&](int p, Bytes f) { sh.inject(p, std::move(f)); };
  h.run = [&] { sh.run_until_idle(); };
  h.advance = [&](uint64_t n) { sh.run_core(n); };
  h.outputs = [&] {
    for (const auto& o : sh.take_outputs()) live::put_frame(o.first, -1, o.second);
  };
  h.counters = [&] { return sh.counters().dump(); };
  h.cycles = [&] { return sh.cycles(); };
  h.no_registers = "the board shell has no register port: program it over management (controller --target)";
  live::serve(h);
}

}  // namespace

int main(int argc, char** argv) {
  std::string config;
  bool is_live = false;
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    if (k == live::kFlag)
      is_live = true;
    else if (k == "--config" && i + 1 < argc)
      config = argv[++i];
    else if (k == "--contexts" && i + 1 < argc)
      ++i;  // the rtl harness's option; the shell's contexts come over management
  }
  try {
    if (!is_live || config.empty()) throw std::runtime_error("usage: harness --live --config DIR/config.json");
    const Shape s = read_shape(config);
    Shell sh(s);
    sh.reset();
    live_shell(sh, s.ports);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "panama-host switch --shell (board shell harness): %s\n", e.what());
    return 1;
  }
  return 0;
}
