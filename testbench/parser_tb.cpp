// Verilator testbench of the per-port receive parser (<prefix>_parser, --module top).
//
// A scoreboard whose expected side is the wire library alone (wire::classify,
// wire::check_wellformed, wire::parse_header): random frames of every kind the spec names -
// well-formed aggregation frames of random COUNT, every malformed case, every bypass case,
// runts of 0..13 bytes, frames of 14..41 bytes, tuser errors, frames longer than 65535 bytes -
// are driven with random idle cycles between and inside frames, on a random aggregation port.
// The descriptor must appear exactly desc_stages cycles (config.json: 1, or 2 above 250 MHz)
// after each last beat (desc_valid low on every other cycle, from reset on) and match field for
// field.
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "Vparser.h"
#include "vl_util.h"
#include "verilated.h"
#include "wire.h"

namespace {

namespace wire = panama::wire;
using wire::Bytes;

struct Args {
  std::string config;
  long frames = 5000;
  uint64_t seed = 1;
  int idle = 20;        // percent of cycles without a beat
  int long_frames = 3;  // frames longer than 65535 bytes
};

Args parse_args(int argc, char** argv) {
  Args a;
  a.config = tb::parse_flags(
      argc, argv, "parser_tb",
      {{"--frames", [&](const std::string& v) { a.frames = tb::to_long(v); }},
       {"--seed", [&](const std::string& v) { a.seed = tb::to_u64(v); }},
       {"--idle", [&](const std::string& v) { a.idle = static_cast<int>(tb::to_long(v)); }},
       {"--long-frames", [&](const std::string& v) { a.long_frames = static_cast<int>(tb::to_long(v)); }}});
  return a;
}

// Byte-wise access to Verilated ports of any width (byte 0 in bits 7:0).
template <typename T>
void put_bytes(T& sig, const uint8_t* b, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n && i < 8; ++i) v |= uint64_t{b[i]} << (8 * i);
  sig = static_cast<T>(v);
}
template <std::size_t N>
void put_bytes(VlWide<N>& sig, const uint8_t* b, int n) {
  for (std::size_t w = 0; w < N; ++w) {
    EData x = 0;
    for (int k = 0; k < 4; ++k) {
      const int i = static_cast<int>(w) * 4 + k;
      if (i < n) x |= EData{b[i]} << (8 * k);
    }
    sig[w] = x;
  }
}
// The low `ones` bits set, the rest clear.
template <typename T>
void put_keep(T& sig, int ones) {
  sig = static_cast<T>(ones >= 64 ? ~uint64_t{0} : ((uint64_t{1} << ones) - 1));
}
template <std::size_t N>
void put_keep(VlWide<N>& sig, int ones) {
  for (std::size_t w = 0; w < N; ++w) {
    const int lo = static_cast<int>(w) * 32;
    sig[w] = ones >= lo + 32 ? 0xFFFFFFFFu : ones <= lo ? 0u : ((EData{1} << (ones - lo)) - 1);
  }
}
// What the descriptor must say, from the wire library.
struct Expect {
  size_t len = 0;
  wire::Class cls = wire::Class::runt;
  bool rx_error = false;
  bool malformed = false;
  bool fields = false;  // aggregation frame of >= 64 bytes: header fields compared
  wire::AggHeader hdr;
  uint8_t ecn = 0;
  std::string kind;
};

class Frames {
 public:
  Frames(std::mt19937_64& rng, int es, int max_elems) : rng_(rng), es_(es), max_(max_elems) {}

  int rnd(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  bool pct(int p) { return rnd(0, 99) < p; }
  Bytes random_bytes(size_t n) {
    Bytes b(n);
    for (auto& x : b) x = static_cast<uint8_t>(rng_());
    return b;
  }

  int random_count() {
    const int r = rnd(0, 99);
    if (r < 50) return rnd(1, std::min(16, max_));
    if (r < 90) return rnd(1, max_);
    return rnd(std::max(1, max_ - 2), max_);
  }

  // A well-formed aggregation frame on `port` with random header fields.
  Bytes agg(uint16_t port, int count = -1) {
    wire::FrameSpec s;
    s.agg_port = port;
    s.elem_bytes = es_;
    s.ecn = static_cast<uint8_t>(rnd(0, 3));
    s.ip_id = static_cast<uint16_t>(rng_());
    s.hdr.flags = static_cast<uint8_t>(rng_());
    s.hdr.jid = static_cast<uint16_t>(rng_());
    s.hdr.tid = static_cast<uint8_t>(rng_());
    s.hdr.reserved = static_cast<uint8_t>(rng_());
    s.hdr.vid = static_cast<uint32_t>(rng_());
    s.hdr.rank = static_cast<uint16_t>(rng_());
    s.hdr.cookie = rng_();
    if (pct(20)) s.ip_id = 0;
    s.payload = random_bytes(static_cast<size_t>(es_) * (count < 0 ? random_count() : count));
    Bytes f = wire::build_frame(s);
    if (pct(20)) f[wire::off::ip_frag] |= 0x40;  // DF set: still an aggregation frame
    return f;
  }

  // One random frame and its label (the expected side is computed from the bytes alone).
  Bytes next(uint16_t port, std::string& kind) {
    const int r = rnd(0, 99);
    if (r < 30) {
      kind = "agg";
      return agg(port);
    }
    if (r < 55) return malformed(port, kind);
    if (r < 80) return bypass(port, kind);
    if (r < 85) {
      kind = "runt";
      return random_bytes(static_cast<size_t>(rnd(0, 13)));
    }
    if (r < 92) {
      kind = "short14_41";
      Bytes f = pct(50) ? agg(port, 1) : random_bytes(64);
      f.resize(static_cast<size_t>(rnd(14, 41)));
      return f;
    }
    kind = "mutated";
    Bytes f = agg(port);
    // Flip one byte among those the parser reads (or any byte of the first 64).
    static const int hot[] = {12, 13, 14, 15, 16, 17, 20, 21, 23, 36, 37, 38, 39, 42, 48, 49};
    const int at = pct(70) ? hot[rnd(0, 15)] : rnd(0, 63);
    f[at] ^= static_cast<uint8_t>(1u << rnd(0, 7));
    return f;
  }

  Bytes malformed(uint16_t port, std::string& kind) {
    Bytes f = agg(port);
    const int count = wire::get16(&f[wire::off::count]);
    switch (rnd(0, 8)) {
      case 0:
        kind = "bad_ver";
        do f[wire::off::ver] = static_cast<uint8_t>(rng_());
        while (f[wire::off::ver] == 1);
        break;
      case 1:
        kind = "count0";
        // Half the time with every length consistent with COUNT = 0 (a 64-byte frame).
        if (pct(50))
          f = agg(port, 0);
        else
          wire::put16(&f[wire::off::count], 0);
        break;
      case 2:
        kind = "count_gt_max";
        // Half the time with every length consistent with the too-large COUNT, where it fits.
        if (pct(50) && 50 + es_ * (max_ + 2) <= 65535)
          f = agg(port, rnd(max_ + 1, max_ + 2));
        else
          wire::put16(&f[wire::off::count], static_cast<uint16_t>(rnd(max_ + 1, std::min(65535, max_ + 3))));
        break;
      case 3:
        kind = "bad_udp_len";
        wire::put16(&f[wire::off::udp_len],
                    static_cast<uint16_t>(wire::get16(&f[wire::off::udp_len]) + (pct(50) ? rnd(1, 3) : -rnd(1, 3))));
        break;
      case 4:
        kind = "bad_ip_len";
        wire::put16(&f[wire::off::ip_total_len], static_cast<uint16_t>(wire::get16(&f[wire::off::ip_total_len]) +
                                                                       (pct(50) ? rnd(1, 3) : -rnd(1, 3))));
        break;
      case 5: {
        kind = "truncated";
        // Lengths left consistent or not: the frame ends early.
        const size_t cut = static_cast<size_t>(rnd(1, std::min<int>(static_cast<int>(f.size()) - 64, 80) + 0));
        f.resize(f.size() - std::min(cut, f.size() - 64));
        if (f.size() == 64 + static_cast<size_t>(es_) * count) f.resize(f.size() - 1);
        break;
      }
      case 6: {
        kind = "extended";
        const Bytes tail = random_bytes(static_cast<size_t>(rnd(1, 70)));
        f.insert(f.end(), tail.begin(), tail.end());
        break;
      }
      case 7:
        kind = "agg42_63";
        f.resize(static_cast<size_t>(rnd(42, 63)));
        break;
      default: {
        kind = "consistent_lengths_wrong_count";
        // Every length says one COUNT, the COUNT field another.
        int other = count;
        while (other == count) other = rnd(1, max_);
        wire::put16(&f[wire::off::count], static_cast<uint16_t>(other));
        break;
      }
    }
    return f;
  }

  Bytes bypass(uint16_t port, std::string& kind) {
    Bytes f = agg(port);
    switch (rnd(0, 9)) {
      case 0: {
        kind = "vlan";
        const uint8_t tag[4] = {0x81, 0x00, static_cast<uint8_t>(rng_() & 0x0F), static_cast<uint8_t>(rng_())};
        f.insert(f.begin() + 12, tag, tag + 4);
        break;
      }
      case 1:
        kind = "ipv6";
        wire::put16(&f[wire::off::eth_type], 0x86DD);
        f[wire::off::ip] = static_cast<uint8_t>(0x60 | (rng_() & 0x0F));
        break;
      case 2:
        kind = "arp";
        wire::put16(&f[wire::off::eth_type], 0x0806);
        if (pct(50)) f.resize(static_cast<size_t>(rnd(42, 60)));
        break;
      case 3:
        kind = "ipv4_options";
        f[wire::off::ip] = static_cast<uint8_t>(0x40 | rnd(6, 15));
        break;
      case 4: {
        kind = "fragment";
        const int m = rnd(0, 2);
        uint16_t frag = wire::get16(&f[wire::off::ip_frag]) & 0x4000;
        if (m != 1) frag |= 0x2000;                                 // MF
        if (m != 0) frag |= static_cast<uint16_t>(rnd(1, 0x1FFF));  // offset
        wire::put16(&f[wire::off::ip_frag], frag);
        break;
      }
      case 5:
        kind = "tcp_dscp56";
        f[wire::off::ip_proto] = 6;
        break;
      case 6:
        kind = "other_udp_port";
        wire::put16(&f[wire::off::udp_dport], static_cast<uint16_t>(port ^ (1u << rnd(0, 15))));
        break;
      case 7: {
        kind = "other_dscp";
        int d = 56;
        while (d == 56) d = rnd(0, 63);
        f[wire::off::ip_tos] = static_cast<uint8_t>((d << 2) | (f[wire::off::ip_tos] & 3));
        break;
      }
      case 8:
        kind = "other_ethertype";
        wire::put16(&f[wire::off::eth_type], static_cast<uint16_t>(rng_()));
        if (wire::get16(&f[wire::off::eth_type]) == 0x0800) f[wire::off::eth_type] = 0x88;
        break;
      default:
        kind = "other_proto";
        while (f[wire::off::ip_proto] == 17) f[wire::off::ip_proto] = static_cast<uint8_t>(rng_());
        break;
    }
    return f;
  }

  // A frame longer than 65535 bytes: aggregation-classified (malformed) or bypass.
  Bytes too_long(uint16_t port, std::string& kind) {
    Bytes f = agg(port, 1);
    const Bytes tail = random_bytes(static_cast<size_t>(rnd(65536, 70000)) - f.size());
    f.insert(f.end(), tail.begin(), tail.end());
    if (pct(50)) {
      kind = "too_long_bypass";
      f[wire::off::ip_proto] = 6;
    } else {
      kind = "too_long_agg";
    }
    return f;
  }

 private:
  std::mt19937_64& rng_;
  int es_, max_;
};

// The parser under test, the frame generator and the tallies of what was checked.
class Bench {
 public:
  Bench(const Args& args, const nlohmann::json& cfg, int argc, char** argv)
      : args_(args),
        W_(cfg.at("bus_bits").get<int>()),
        stages_(cfg.at("desc_stages").get<int>()),
        BB_(W_ / 8),
        es_(cfg.at("elem_bytes").get<int>()),
        max_elems_(cfg.at("max_elems").get<int>()),
        rng_(args.seed),
        gen_(rng_, es_, max_elems_) {
    ctx_->commandArgs(argc, argv);
    dut_ = std::make_unique<Vparser>(ctx_.get());
    if (stages_ < 1 || stages_ > 2) throw std::runtime_error("desc_stages must be 1 or 2");
    due_.assign(static_cast<size_t>(stages_ - 1), std::nullopt);
  }

  bool ports_match() const {
    return tb::port_bits(dut_->s_axis_tdata) >= W_ && tb::port_bits(dut_->s_axis_tkeep) >= BB_;
  }

  // Reset, with garbage on the bus and tvalid high: nothing may come out.
  void reset() {
    dut_->clk = 0;
    dut_->rst = 1;
    dut_->agg_port = wire::kDefaultAggPort;
    for (int i = 0; i < 4; ++i) {
      idle_inputs();
      dut_->s_axis_tvalid = 1;
      tick();
      if (i > 0) check(nullptr);
    }
    dut_->rst = 0;
  }

  // args.frames random frames, then idle cycles in which nothing may come out.
  void run() {
    // Positions (in the frame sequence) of the frames longer than 65535 bytes.
    std::vector<long> long_at;
    for (int i = 0; i < args_.long_frames && args_.frames > 0; ++i)
      long_at.push_back(gen_.rnd(0, static_cast<int>(args_.frames - 1)));
    for (long n = 0; n < args_.frames; ++n) {
      bool is_long = false;
      for (long at : long_at) is_long = is_long || at == n;
      one_frame(is_long);
    }
    for (int i = 0; i < 3; ++i) {
      idle_inputs();
      tick();
      check(nullptr);
    }
    dut_->final();
  }

  int finish() {
    std::printf("parser_tb: W=%d ES=%d MAX_ELEMS=%d seed %llu: %ld descriptors checked in %ld cycles:", W_, es_,
                max_elems_, static_cast<unsigned long long>(args_.seed), args_.frames - by_result_["reset_abandoned"],
                cycle_);
    for (const auto& [k, v] : by_result_) std::printf(" %s %ld", k.c_str(), v);
    std::printf("\n  kinds:");
    for (const auto& [k, v] : by_kind_) std::printf(" %s %ld", k.c_str(), v);
    std::printf("\n");
    // Every class must have been exercised, or the run proves little.
    if (args_.frames >= 1000)
      for (const char* k : {"runt", "bypass", "malformed", "aggregation", "rx_error"})
        if (by_result_[k] == 0) {
          std::fprintf(stderr, "parser_tb: no %s frame was generated\n", k);
          ++errors_;
        }
    if (errors_) {
      std::fprintf(stderr, "parser_tb: FAILED, %ld error(s)\n", errors_);
      return 1;
    }
    std::printf("parser_tb: PASS\n");
    return 0;
  }

 private:
  void tick() {
    dut_->clk = 1;
    dut_->eval();
    ++cycle_;
    dut_->clk = 0;
    dut_->eval();
  }

  void idle_inputs() {
    const Bytes junk = gen_.random_bytes(static_cast<size_t>(BB_));
    put_bytes(dut_->s_axis_tdata, junk.data(), BB_);
    put_keep(dut_->s_axis_tkeep, gen_.rnd(0, BB_));
    dut_->s_axis_tvalid = 0;
    dut_->s_axis_tlast = gen_.rnd(0, 1);
    dut_->s_axis_tuser = gen_.rnd(0, 1);
  }

  void fail(const std::string& what, const Expect& e) {
    if (++errors_ <= 20)
      std::fprintf(stderr, "parser_tb: cycle %ld, %s frame of %zu bytes: %s\n", cycle_, e.kind.c_str(), e.len,
                   what.c_str());
  }

  // After an edge: e is what the descriptor outputs must say stages_ - 1 edges later, nullptr
  // when desc_valid must be low then; checks what is due now. A reset drops what is in flight.
  void check(const Expect* e, bool reset = false) {
    if (reset) due_.assign(static_cast<size_t>(stages_ - 1), std::nullopt);
    due_.push_back(e ? std::optional<Expect>(*e) : std::nullopt);
    const std::optional<Expect> now = due_.front();
    due_.pop_front();
    check_now(now ? &*now : nullptr);
  }

  // The descriptor outputs now: e is what they must say, nullptr when desc_valid must be low.
  void check_now(const Expect* e) {
    if (!e) {
      if (dut_->desc_valid) {
        Expect none;
        none.kind = "(no)";
        fail("desc_valid without a last beat desc_stages cycles before", none);
      }
      return;
    }
    if (!dut_->desc_valid) {
      fail("no desc_valid desc_stages cycles after the last beat", *e);
      return;
    }
    auto cmp = [&](const char* name, uint64_t got, uint64_t want) {
      if (got != want) fail(std::string(name) + " = " + std::to_string(got) + ", expected " + std::to_string(want), *e);
    };
    cmp("desc_len", dut_->desc_len, e->len > 65535 ? 65535 : e->len);
    cmp("desc_too_long", dut_->desc_too_long, e->len > 65535);
    // desc_class encoding (docs/rtl.md): 0 runt, 1 bypass, 2 aggregation.
    cmp("desc_class", dut_->desc_class, e->cls == wire::Class::runt ? 0u : e->cls == wire::Class::bypass ? 1u : 2u);
    cmp("desc_rx_error", dut_->desc_rx_error, e->rx_error);
    cmp("desc_malformed", dut_->desc_malformed, e->malformed);
    if (e->fields) {
      cmp("desc_flags", dut_->desc_flags, e->hdr.flags);
      cmp("desc_jid", dut_->desc_jid, e->hdr.jid);
      cmp("desc_tid", dut_->desc_tid, e->hdr.tid);
      cmp("desc_count", dut_->desc_count, e->hdr.count);
      cmp("desc_vid", dut_->desc_vid, e->hdr.vid);
      cmp("desc_rank", dut_->desc_rank, e->hdr.rank);
      cmp("desc_ecn", dut_->desc_ecn, e->ecn);
    }
  }

  // The expected descriptor of frame f arriving for aggregation port `port`, from the wire
  // library (rx_error is drawn here: the testbench decides it).
  Expect expect_for(const Bytes& f, uint16_t port) {
    Expect e;
    e.len = f.size();
    e.cls = wire::classify(f, port);
    e.rx_error = gen_.pct(5);
    e.malformed = e.cls == wire::Class::aggregation && wire::check_wellformed(f, es_, max_elems_) != wire::Validity::ok;
    e.fields = e.cls == wire::Class::aggregation && f.size() >= wire::kHeaderBytes;
    if (e.fields) {
      e.hdr = wire::parse_header(f);
      e.ecn = wire::ecn(f);
    }
    return e;
  }

  // One random frame on a random aggregation port, driven and checked, then tallied.
  void one_frame(bool is_long) {
    const uint16_t port = gen_.pct(80) ? wire::kDefaultAggPort : static_cast<uint16_t>(rng_());
    std::string kind;
    const Bytes f = is_long ? gen_.too_long(port, kind) : gen_.next(port, kind);
    Expect e = expect_for(f, port);
    e.kind = kind;
    dut_->agg_port = port;
    if (!drive(f, e)) return;
    ++by_kind_[e.kind];
    ++by_result_[e.cls == wire::Class::runt     ? "runt"
                 : e.cls == wire::Class::bypass ? "bypass"
                 : e.malformed                  ? "malformed"
                                                : "aggregation"];
    if (e.rx_error) ++by_result_["rx_error"];
    if (e.len > 65535)
      ++by_result_[e.cls == wire::Class::aggregation && !e.malformed ? "too_long_wellformed" : "too_long"];
  }

  // Drives frame f beat by beat with random idle cycles, checking the descriptor outputs after
  // every edge. Returns false when a reset abandoned the frame.
  bool drive(const Bytes& f, const Expect& e) {
    const size_t beats = f.empty() ? 1 : (f.size() + BB_ - 1) / BB_;
    // Now and then a reset hits the frame at a random beat: the frame is abandoned, nothing may
    // come out for it, and the next frame must parse from its first byte.
    const long reset_at = gen_.pct(1) ? gen_.rnd(0, static_cast<int>(beats - 1)) : -1;
    for (size_t b = 0; b < beats;) {
      if (static_cast<long>(b) == reset_at) {
        idle_inputs();
        dut_->s_axis_tvalid = 1;
        dut_->rst = 1;
        tick();
        dut_->rst = 0;
        check(nullptr, true);
        ++by_result_["reset_abandoned"];
        return false;
      }
      if (gen_.pct(args_.idle)) {
        idle_inputs();
        tick();
        check(nullptr);
        continue;
      }
      const size_t lo = b * BB_;
      const int n_bytes = static_cast<int>(std::min<size_t>(BB_, f.size() - std::min(lo, f.size())));
      // Bytes past the frame's end carry garbage, as a real MAC might.
      Bytes beat = gen_.random_bytes(static_cast<size_t>(BB_));
      for (int i = 0; i < n_bytes; ++i) beat[i] = f[lo + i];
      put_bytes(dut_->s_axis_tdata, beat.data(), BB_);
      put_keep(dut_->s_axis_tkeep, n_bytes);
      dut_->s_axis_tvalid = 1;
      const bool last = b + 1 == beats;
      dut_->s_axis_tlast = last;
      dut_->s_axis_tuser = last ? e.rx_error : gen_.rnd(0, 1);
      dut_->eval();
      // The beat's byte count (the port's bypass FIFO keeps it instead of tkeep).
      if (dut_->beat_bytes != static_cast<uint32_t>(n_bytes))
        fail("beat_bytes = " + std::to_string(dut_->beat_bytes) + " in beat " + std::to_string(b) + ", expected " +
                 std::to_string(n_bytes),
             e);
      if (last && e.fields) {
        // JID and TID during the last beat (the port's context match registers them then).
        if (dut_->hdr_jid != e.hdr.jid || dut_->hdr_tid != e.hdr.tid)
          fail("hdr_jid/hdr_tid = " + std::to_string(dut_->hdr_jid) + "/" + std::to_string(dut_->hdr_tid) +
                   " during the last beat, expected " + std::to_string(e.hdr.jid) + "/" + std::to_string(e.hdr.tid),
               e);
      }
      tick();
      // The descriptor register loads desc_stages - 1 edges after the one that samples the last
      // beat: it is visible from then on, for exactly one cycle.
      check(last ? &e : nullptr);
      ++b;
    }
    return true;
  }

  const Args& args_;
  const int W_, stages_, BB_, es_, max_elems_;
  std::deque<std::optional<Expect>> due_;
  std::unique_ptr<VerilatedContext> ctx_ = std::make_unique<VerilatedContext>();
  std::unique_ptr<Vparser> dut_;
  std::mt19937_64 rng_;
  Frames gen_;
  long cycle_ = 0, errors_ = 0;
  std::map<std::string, long> by_kind_;
  std::map<std::string, long> by_result_;
};

}  // namespace

int main(int argc, char** argv) {
  const Args args = parse_args(argc, argv);
  Bench bench(args, nlohmann::json::parse(tb::read_file(args.config, "parser_tb")), argc, argv);
  return tb::run_bench(bench, "parser_tb", args.config);
}
