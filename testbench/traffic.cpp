// Scenario traffic for the regression (panama-sim gen-traffic): per-port pcaps and a CTX.json
// for one generator output, reproducible from a seed. The expected outputs are never written
// here: the regression compares the RTL with the model (panama-sim compare), and the model is
// checked against hand-built expectations in tests/test_model*.cpp.
#include "traffic.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <stdexcept>

#include "keep_io.h"
#include "pcap_io.h"
#include "wire.h"

namespace fs = std::filesystem;

namespace panama::traffic {
namespace {

using wire::Bytes;

// One input frame: its bytes, or (keep not empty) tdata and tkeep of every byte lane of its
// beats (keep_io.h, model::InFrame::keep).
struct Frame {
  Frame(Bytes d) : data(std::move(d)) {}  // NOLINT: a frame is its bytes unless given lane by lane
  Bytes data, keep;
};

struct Job {
  int jid, tid;
  std::vector<int> members;
  bool multicast;
  int upstream = -1;
  uint32_t timeout = 0;
};

class Gen {
 public:
  Gen(const Config& c, uint64_t seed) : cfg_(c), rng_(seed), in_(c.in.ports) {}

  uint32_t rnd(uint32_t n) { return static_cast<uint32_t>(rng_() % n); }
  bool chance(int pct) { return static_cast<int>(rnd(100)) < pct; }

  uint32_t element() {
    const int es = cfg_.fmt.elem_bytes;
    const uint32_t mask = es == 4 ? 0xFFFFFFFFu : 0xFFFFu;
    if (chance(3)) return static_cast<uint32_t>(rng_()) & mask;  // any bits: NaN, inf, subnormal
    // Mostly modest finite values of either sign.
    if (es == 4) return (rnd(2) << 31) | ((100 + rnd(50)) << 23) | rnd(1u << 23);
    if (cfg_.fmt.exp_bits == 8) return (rnd(2) << 15) | ((100 + rnd(50)) << 7) | rnd(1u << 7);
    return (rnd(2) << 15) | ((5 + rnd(20)) << 10) | rnd(1u << 10);
  }

  Bytes contribution(const Job& j, int port, uint32_t vid, int count, bool fin, bool ce) {
    wire::FrameSpec s;
    s.eth_src = {0x02, 0, 0, 0, static_cast<uint8_t>(port >> 8), static_cast<uint8_t>(port)};
    s.eth_dst = {0x02, 0xaa, 0, 0, static_cast<uint8_t>(j.jid >> 8), static_cast<uint8_t>(j.jid)};
    s.ip_src = 0x0A010000u | static_cast<uint32_t>(port);
    s.ip_dst = 0x0A0000FEu;
    s.ecn = ce ? 0b11 : 0b10;
    s.ip_id = static_cast<uint16_t>(rng_());
    s.agg_port = kAggPort;
    s.hdr.jid = static_cast<uint16_t>(j.jid);
    s.hdr.tid = static_cast<uint8_t>(j.tid);
    s.hdr.vid = vid;
    s.hdr.rank = static_cast<uint16_t>(port);
    s.hdr.flags = fin ? wire::kFlagFin : 0;
    s.hdr.cookie = rng_();
    std::vector<uint32_t> e(count);
    for (auto& x : e) x = element();
    s.payload = wire::payload_from_elems(e, cfg_.fmt.elem_bytes);
    s.elem_bytes = cfg_.fmt.elem_bytes;
    return wire::build_frame(s);
  }

  Bytes bypass_frame() {
    const int len = 14 + static_cast<int>(rnd(static_cast<uint32_t>(std::min<long>(1500, cfg_.bypass_bytes / 2))));
    Bytes f(len);
    for (auto& b : f) b = static_cast<uint8_t>(rng_());
    f[12] = 0x08, f[13] = rnd(2) ? 0x00 : 0x06;  // IPv4 or ARP, never an aggregation frame
    if (len > 23) f[14] = 0x45, f[15] = static_cast<uint8_t>(rnd(2) ? 0 : 56 << 2), f[23] = 6;  // TCP
    return f;
  }

  // A 1514-byte bypass frame (ARP type: never an aggregation frame).
  Bytes filler() {
    Bytes f(1514);
    for (auto& b : f) b = static_cast<uint8_t>(rng_());
    f[12] = 0x08, f[13] = 0x06;
    return f;
  }

  // A frame that classifies as aggregation but is malformed (COUNT disagrees with the length).
  Bytes malformed(const Job& j, int port) {
    Bytes f = contribution(j, port, 0, 2, false, false);
    f[wire::off::count + 1] ^= 0x01;
    return f;
  }

  // Scenario abuse (issue 33): one frame outside the contract's happy path, from a member's or
  // any port. Some classify as aggregation and fail one well-formedness rule, some are valid
  // but odd (bad IPv4 checksum, reserved bits, fragments), some are noise.
  Bytes abused(const Job& j, int port) {
    const int es = cfg_.fmt.elem_bytes;
    const int count = 1 + static_cast<int>(rnd(static_cast<uint32_t>(std::min(cfg_.max_elems, 64))));
    Bytes f = contribution(j, port, rnd(4), count, chance(10), chance(10));
    switch (rnd(12)) {
      case 0:  // truncated anywhere: runt, bypass, or an aggregation frame too short
        f.resize(1 + rnd(static_cast<uint32_t>(f.size() - 1)));
        break;
      case 1:  // IPv4 total length wrong
        wire::put16(&f[wire::off::ip_total_len], static_cast<uint16_t>(rng_()));
        wire::set_ipv4_checksum(f);
        break;
      case 2:  // UDP length wrong
        wire::put16(&f[wire::off::udp_len], static_cast<uint16_t>(rng_()));
        break;
      case 3:  // IPv4 checksum wrong (the accelerator does not check it: summed like any other)
        f[wire::off::ip_csum] ^= static_cast<uint8_t>(1 + rnd(255));
        break;
      case 4: {  // random bytes, some behind an aggregation frame's first 42 bytes
        Bytes r(1 + rnd(1600));
        for (auto& b : r) b = static_cast<uint8_t>(rng_());
        if (chance(50) && r.size() >= wire::kMinClassifyBytes) std::copy(f.begin(), f.begin() + 42, r.begin());
        f = std::move(r);
        break;
      }
      case 5: {  // longer than the design's largest frame: COUNT above MAX_ELEMS, lengths consistent
        const int over = cfg_.max_elems + 1 + static_cast<int>(rnd(16));
        if (64 + es * over <= 65535 - 14) {
          Bytes g = contribution(j, port, 0, 1, false, false);
          g.resize(static_cast<size_t>(64 + es * over), 0x3c);
          wire::put16(&g[wire::off::count], static_cast<uint16_t>(over));
          wire::put16(&g[wire::off::udp_len], static_cast<uint16_t>(30 + es * over));
          wire::put16(&g[wire::off::ip_total_len], static_cast<uint16_t>(g.size() - 14));
          wire::set_ipv4_checksum(g);
          f = std::move(g);
        }
        break;
      }
      case 6: {  // a jumbo bypass frame (over a 1500-byte MTU), within the bypass half
        const long most = std::min<long>(9018, cfg_.bypass_bytes - 64);
        if (most > 1515) {
          f.assign(static_cast<size_t>(1515 + rnd(static_cast<uint32_t>(most - 1515))), 0);
          for (auto& b : f) b = static_cast<uint8_t>(rng_());
          f[12] = 0x08, f[13] = 0x06;
        }
        break;
      }
      case 7:  // VER not 1
        f[wire::off::ver] = static_cast<uint8_t>(2 + rnd(254));
        break;
      case 8:  // COUNT 0, or one off the length
        wire::put16(&f[wire::off::count], chance(50) ? 0 : static_cast<uint16_t>(count + 1));
        break;
      case 9:  // a fragment (bypass), or DF set (still aggregation)
        f[wire::off::ip_frag] |= chance(50) ? 0x20 : 0x40;
        wire::set_ipv4_checksum(f);
        break;
      case 10:  // reserved and unknown flag bits, any RANK and COOKIE
        f[wire::off::reserved] = static_cast<uint8_t>(rng_());
        f[wire::off::flags] |= static_cast<uint8_t>(rng_() & 0xFC);
        wire::put16(&f[wire::off::rank], static_cast<uint16_t>(rng_()));
        break;
      default:  // one random byte anywhere in the headers
        f[rnd(wire::kHeaderBytes)] = static_cast<uint8_t>(rng_());
        break;
    }
    return f;
  }

  // Scenario abuse, tkeep (docs/rtl.md, "tkeep outside the contract"): a contribution of the
  // job, a bypass frame or an abused frame, given lane by lane with tkeep broken one way or
  // another: holes on a beat that is not last, a null beat (tkeep = 0) inside the frame, a hole
  // on the last beat; or a null last beat after a full one, which keeps the contract (the frame
  // is its bytes) unless the beat before it was partly kept. `broken`: always a contribution of
  // the job, always outside the contract (dropped whatever the timing: the comparison of
  // abuse-exact stays exact, and a sum that took it would differ).
  Frame keep_abused(const Job& j, int port, bool broken = false) {
    const int bb = cfg_.bus_bytes;
    Bytes f =
        broken || chance(50)
            ? contribution(j, port, rnd(4), 1 + static_cast<int>(rnd(std::min(cfg_.max_elems, 64))), chance(10), false)
        : chance(60) ? bypass_frame()
                     : abused(j, port);
    if (f.size() < 2) f.resize(2, 0);
    const size_t n = f.size(), beats = (n + bb - 1) / bb;
    Frame out(f);
    out.data.resize(beats * bb);
    for (size_t i = n; i < out.data.size(); ++i) out.data[i] = static_cast<uint8_t>(rng_());  // lanes not kept
    out.keep.assign(beats * bb, 0);
    std::fill(out.keep.begin(), out.keep.begin() + static_cast<long>(n), 1);
    auto null_beat_at = [&](size_t beat) {
      const auto at = static_cast<long>(beat * bb);
      Bytes junk(bb);
      for (auto& b : junk) b = static_cast<uint8_t>(rng_());
      out.data.insert(out.data.begin() + at, junk.begin(), junk.end());
      out.keep.insert(out.keep.begin() + at, bb, 0);
    };
    const size_t last = (beats - 1) * bb;
    uint32_t kind = rnd(4);
    if (broken) kind = beats > 1 ? rnd(3) : 1 + rnd(2);
    switch (kind) {
      case 0:  // holes on a beat that is not last (the last beat's when there is one beat)
        for (uint32_t k = 1 + rnd(3), b = beats > 1 ? rnd(static_cast<uint32_t>(beats - 1)) : 0; k > 0; --k)
          out.keep[b * bb + rnd(bb)] = 0;
        if (beats == 1 && out.keep[0]) out.keep[0] = 0;  // then byte 0: a hole below the others
        break;
      case 1:  // a null beat inside the frame
        null_beat_at(rnd(static_cast<uint32_t>(beats)));
        break;
      case 2: {  // a hole on the last beat: a kept lane above one not kept
        const size_t hi = 1 + rnd(bb - 1), lo = rnd(static_cast<uint32_t>(hi));
        out.keep[last + hi] = 1;
        out.keep[last + lo] = 0;
        break;
      }
      default:  // a null last beat
        null_beat_at(beats);
        break;
    }
    return out;
  }

  void push(int port, Frame f) { in_[port].push_back(std::move(f)); }

  // Vectors of one job: each member sends each VID, with the faults the scenario asks for.
  void job_vectors(const Job& j, int vectors, int fixed_count, int loss, int dup, int skip, int ce_pct, int mismatch) {
    uint32_t vid = 0;
    for (int v = 0; v < vectors; ++v) {
      if (chance(skip)) vid += 1 + rnd(2);  // a VID nobody sends: the accelerator skips ahead
      const int count = fixed_count ? fixed_count : 1 + static_cast<int>(rnd(cfg_.max_elems));
      const bool fin = v == vectors - 1 || chance(10);
      for (int p : j.members) {
        if (chance(loss)) continue;
        const int c = chance(mismatch) ? std::max(1, count - 1) : count;  // a COUNT mismatch
        Bytes f = contribution(j, p, vid, c, fin, chance(ce_pct));
        if (chance(dup)) later_[p].push_back(f);  // a late duplicate: stale when it arrives
        push(p, std::move(f));
      }
      ++vid;
      // Late duplicates trickle in among later traffic.
      for (int p : j.members)
        if (!later_[p].empty() && chance(30)) {
          push(p, later_[p].front());
          later_[p].erase(later_[p].begin());
        }
    }
    for (int p : j.members)
      for (auto& f : later_[p]) push(p, f);
    later_.clear();
  }

  std::vector<Job> jobs(int n, bool upstream_ok, uint32_t timeout) {
    std::vector<Job> v;
    const int N = cfg_.in.ports;
    for (int i = 0; i < n && i < cfg_.in.contexts; ++i) {
      Job j;
      j.jid = 100 + i;
      j.tid = static_cast<int>(rnd(3));
      j.multicast = !(upstream_ok && N > 2 && chance(40));
      if (!j.multicast) j.upstream = static_cast<int>(rnd(N));
      for (int p = 0; p < N; ++p)
        if (p != j.upstream && chance(70)) j.members.push_back(p);
      if (j.members.empty()) j.members.push_back(j.upstream == 0 ? 1 : 0);
      j.timeout = timeout;
      v.push_back(j);
    }
    return v;
  }

  // Interleaves each port's frames of several jobs, round robin with an occasional random
  // extra turn (each port keeps every job's own order). Ports stay roughly in step, as workers
  // of one job do, so queues stay short and overflow stays rare.
  void merge(std::vector<std::vector<std::vector<Frame>>>& parts) {
    for (int p = 0; p < cfg_.in.ports; ++p) {
      std::vector<size_t> at(parts.size(), 0);
      for (bool any = true; any;) {
        any = false;
        for (size_t k = 0; k < parts.size(); ++k) {
          const int turns = chance(20) ? 2 : 1;
          for (int t = 0; t < turns && at[k] < parts[k][p].size(); ++t) {
            in_[p].push_back(std::move(parts[k][p][at[k]++]));
            any = true;
          }
        }
      }
    }
  }

  void write(const std::string& dir, const std::vector<Job>& js) {
    fs::create_directories(fs::path(dir) / "in");
    nlohmann::json ctx;
    ctx["agg_port"] = kAggPort;
    ctx["contexts"] = nlohmann::json::array();
    for (const auto& j : js) {
      nlohmann::json e = {{"jid", j.jid}, {"tid", j.tid}, {"members", j.members}, {"timeout_cycles", j.timeout}};
      if (j.multicast) {
        e["mode"] = "multicast";
        e["group_mac"] = "01:00:5e:01:00:" + hex2(j.jid & 0xFF);
        e["group_ip"] = "239.1.0." + std::to_string(j.jid & 0xFF);
      } else {
        e["mode"] = "upstream";
        e["upstream_port"] = j.upstream;
        e["src_mac"] = "02:aa:00:00:00:" + hex2(j.jid & 0xFF);
        e["src_ip"] = "10.0.0." + std::to_string(j.jid & 0xFF);
      }
      ctx["contexts"].push_back(e);
    }
    std::ofstream(fs::path(dir) / "ctx.json") << ctx.dump(1) << "\n";
    for (int p = 0; p < cfg_.in.ports; ++p) {
      std::vector<wire::PcapRecord> r;
      std::map<size_t, Bytes> keep;
      for (auto& f : in_[p]) {
        if (!f.keep.empty()) keep[r.size()] = f.keep;
        r.push_back({f.data, 0});
      }
      char n[32];
      std::snprintf(n, sizeof n, "in/port%02d.pcap", p);
      wire::write_pcap((fs::path(dir) / n).string(), r);
      keep_io::write(keep_io::path_for((fs::path(dir) / "in").string(), p), keep);
    }
  }

  static std::string hex2(int v) {
    char b[8];
    std::snprintf(b, sizeof b, "%02x", v);
    return b;
  }

  static constexpr uint16_t kAggPort = 9056;
  const Config& cfg_;
  std::mt19937_64 rng_;
  std::vector<std::vector<Frame>> in_;
  std::map<int, std::vector<Bytes>> later_;
};

std::vector<Job> refill(Gen& g, const Config& cfg, int vectors) {
  // The buffer filled, partly emptied and used again (rule 9; docs/rtl.md "Buffer depth"),
  // with one-element frames (64 + ES bytes) and 1514-byte fillers long enough for each phase to
  // end before the next begins. Phase 1: port 0 sends `vectors` contributions while port 1
  // sends fillers, so port 0's contribution half fills up and the rest overflow. One context
  // (job A, members {0, 1}): port 1 then sends VIDs 0 .. vectors + K - 1, the admitted
  // vectors complete and free port 0's beats, the VIDs port 0 lost wait at port 1; phase 2:
  // port 0 sends VIDs vectors .. vectors + K - 1, which must be admitted again, and port 1's
  // lost VIDs go as incomplete. Two contexts or more (jobs A and B, members {0, 1}): phase 1
  // alternates A and B; port 1 completes only B, so the free beats are B's frames, between A's
  // frames still queued, when port 0's phase 2 sends B's VIDs vectors/2 .. vectors/2 + K - 1
  // into them; then port 1 completes A.
  Job a{7, 0, {0, 1}, true};
  Job b{8, 0, {0, 1}, true};
  const bool two = cfg.in.contexts > 1;
  std::vector<Job> js = {a};
  if (two) js.push_back(b);
  const int k = std::max(1, vectors / 15);
  const int f1 = static_cast<int>((2L * vectors * 80) / 1514) + 8;
  const int half = vectors / 2;
  auto put = [&](int port, const Job& j, int from, int to) {
    for (int v = from; v < to; ++v) g.push(port, g.contribution(j, port, static_cast<uint32_t>(v), 1, false, false));
  };
  if (two) {
    for (int v = 0; v < half; ++v) put(0, a, v, v + 1), put(0, b, v, v + 1);
  } else {
    put(0, a, 0, vectors);
  }
  // The job port 1 completes first, and its phase 1 VIDs.
  const Job& last = two ? b : a;
  const int n = two ? half : vectors;
  for (int i = 0; i < 6 * f1; ++i) g.push(0, g.filler());
  put(0, last, n, n + k);
  for (int i = 0; i < f1; ++i) g.push(1, g.filler());
  put(1, last, 0, n + k);
  if (two) {
    for (int i = 0; i < 8 * f1; ++i) g.push(1, g.filler());
    put(1, a, 0, half);
  }
  return js;
}

}  // namespace

const std::vector<std::string>& scenarios() {
  static const std::vector<std::string> s = {"line-rate", "mixed", "faults", "timeout", "fill",
                                             "refill",    "skips", "late",   "abuse"};
  return s;
}

std::vector<Job> late(Gen& g, const Config& cfg, int vectors) {
  // Timeouts (rule 7) that must not fire: one job over every port whose timeout is four
  // filler frames' time. Each vector is nine fillers and a contribution on every port: the
  // last member sends all nine fillers first, the others eight, their contribution, then the
  // ninth. So E stays the same for about eight fillers' time (longer than the timeout) before
  // the others' heads arrive, and the last member's comes one filler after theirs: every head
  // has waited less than the timeout since it became head, and no vector may time out. A head
  // aged from anything older (the last change of E, an earlier head, time 0) would. The
  // regression requires an exact comparison.
  const int filler_beats = (1514 + cfg.bus_bytes - 1) / cfg.bus_bytes;
  Job j{7, 0, {}, true};
  for (int p = 0; p < cfg.in.ports; ++p) j.members.push_back(p);
  j.timeout = static_cast<uint32_t>(4 * filler_beats);
  const int last = cfg.in.ports - 1;
  for (int v = 0; v < vectors; ++v) {
    for (int p = 0; p < cfg.in.ports; ++p) {
      for (int k = 0; k < (p == last ? 9 : 8); ++k) g.push(p, g.filler());
      g.push(p, g.contribution(j, p, static_cast<uint32_t>(v), 8, false, false));
      if (p != last) g.push(p, g.filler());
    }
  }
  // Then a head that waits much longer than the timeout while E keeps changing: port 0 sends
  // VID base + 5 at once, the others VIDs base .. base + 5 two fillers apart. Each of their
  // heads finds port 0's ahead of E (incomplete, E + 1) until base + 5 is built; port 0's head
  // has waited longer than the timeout, but E changed less than the timeout ago every time a
  // member queue was empty, so nothing times out. An E whose age is not looked at would.
  const uint32_t base = static_cast<uint32_t>(vectors);
  g.push(0, g.contribution(j, 0, base + 5, 8, false, false));
  for (int p = 1; p < cfg.in.ports; ++p)
    for (uint32_t v = base; v <= base + 5; ++v) {
      g.push(p, g.filler());
      g.push(p, g.filler());
      g.push(p, g.contribution(j, p, v, 8, false, false));
    }
  return {j};
}

void generate(const Config& cfg, const std::string& scenario, uint64_t seed, int vectors, const std::string& dir) {
  Gen g(cfg, seed);
  std::vector<Job> js;
  if (scenario == "line-rate") {
    // One job over every port, full-size vectors back to back.
    Job j{7, 0, {}, true};
    for (int p = 0; p < cfg.in.ports; ++p) j.members.push_back(p);
    js.push_back(j);
    g.job_vectors(j, vectors, cfg.max_elems, 0, 0, 0, 0, 0);
  } else if (scenario == "skips") {
    // Every member loses 40 % of its contributions, each port on its own, in short frames: the
    // heads of a context are often all ahead of E with different VIDs, arriving in any order,
    // so rule 6's skip to the smallest head VID is exercised against every arrival order.
    // Four times the usual vectors: most of them are incomplete.
    js = g.jobs(std::min(cfg.in.contexts, 2), false, 0);
    std::vector<std::vector<std::vector<Frame>>> parts;
    for (const auto& j : js) {
      Gen sub(cfg, g.rng_());
      sub.job_vectors(j, 4 * vectors, 4, 40, 0, 0, 0, 0);
      parts.push_back(sub.in_);
    }
    g.merge(parts);
  } else if (scenario == "mixed" || scenario == "faults" || scenario == "timeout" || scenario == "abuse" ||
             scenario == "abuse-exact") {
    // abuse-exact: mixed plus the abuse frames, all of a job with no context, so that nothing
    // overflows and the comparison stays exact (every port frame and counter, bit for bit).
    const bool faults = scenario != "mixed" && scenario != "abuse-exact";
    js = g.jobs(std::min(cfg.in.contexts, 4), true, scenario == "timeout" ? 3000 : 0);
    std::vector<std::vector<std::vector<Frame>>> parts;
    for (const auto& j : js) {
      Gen sub(cfg, g.rng_());
      sub.job_vectors(j, vectors, 0, faults ? 5 : 0, faults ? 5 : 0, faults ? 5 : 0, 10, 1);
      parts.push_back(sub.in_);
    }
    // Bypass traffic, plus (with faults) malformed, foreign-port and unknown-context frames.
    std::vector<std::vector<Frame>> extra(cfg.in.ports);
    for (int p = 0; p < cfg.in.ports; ++p)
      for (int k = 0; k < vectors / 2 + 1; ++k) {
        extra[p].push_back(g.bypass_frame());
        if (faults && g.chance(20)) extra[p].push_back(g.malformed(js[0], p));
        if (faults && g.chance(10)) {
          Job stranger{999, 9, {p}, true};
          extra[p].push_back(g.contribution(stranger, p, 0, 3, false, false));
        }
        if (faults && g.chance(10)) extra[p].push_back(Bytes(g.rnd(14)));  // runt
        // Abuse: two frames in three malformed, mutated or noise, from any port.
        if (scenario == "abuse")
          for (int a = 0; a < 3; ++a)
            if (g.chance(67)) extra[p].push_back(g.abused(js[g.rnd(static_cast<uint32_t>(js.size()))], p));
        if (scenario == "abuse-exact")
          for (int a = 0; a < 3; ++a)
            if (g.chance(67)) extra[p].push_back(g.abused(Job{999, 9, {p}, true}, p));
        // tkeep broken (or a null last beat) on about two frames in five rounds.
        if (scenario == "abuse" && g.chance(40))
          extra[p].push_back(g.keep_abused(js[g.rnd(static_cast<uint32_t>(js.size()))], p));
        if (scenario == "abuse-exact" && g.chance(40)) extra[p].push_back(g.keep_abused(Job{999, 9, {p}, true}, p));
        if (scenario == "abuse-exact" && g.chance(40))
          extra[p].push_back(g.keep_abused(js[g.rnd(static_cast<uint32_t>(js.size()))], p, true));
        // A bypass frame longer than the whole bypass half: always dropped (bypass_overflow).
        if (faults && k == 0 && p == 0 && cfg.bypass_bytes + 64 <= 65535) {
          Bytes big(static_cast<size_t>(cfg.bypass_bytes + 64), 0x5a);
          big[12] = 0x08, big[13] = 0x06;
          extra[p].push_back(big);
        }
        for (const auto& j : js) {
          const bool member = std::find(j.members.begin(), j.members.end(), p) != j.members.end();
          // A contribution from a port outside the job: counted not_member, never summed.
          if (faults && !member && p != j.upstream && g.chance(15))
            extra[p].push_back(g.contribution(j, p, 0, 2, false, false));
          // A final sum coming down from the parent passes through the upstream port.
          if (p == j.upstream && g.chance(30)) {
            Bytes f = g.contribution(j, p, static_cast<uint32_t>(k), 4, false, false);
            f[wire::off::flags] |= wire::kFlagResult;
            extra[p].push_back(f);
          }
        }
      }
    parts.push_back(extra);
    g.merge(parts);
  } else if (scenario == "late") {
    js = late(g, cfg, vectors);
  } else if (scenario == "fill") {
    // Buffer accounting (rule 9): port 0 alone sends `vectors` one-element contributions of
    // context 0, then `vectors` larger ones of context 1; the other member of each context stays
    // silent, so nothing is ever consumed and port 0's contribution half fills up.
    const int other = cfg.in.ports > 2 ? 2 : 1;
    Job a{7, 0, {0, 1}, true};
    Job b{8, 0, {0, other}, true};
    js = {a};
    if (cfg.in.contexts > 1) js.push_back(b);
    const int big = std::max(1, cfg.max_elems / 4);
    for (int v = 0; v < vectors; ++v) g.push(0, g.contribution(a, 0, static_cast<uint32_t>(v), 1, false, false));
    if (cfg.in.contexts > 1)
      for (int v = 0; v < vectors; ++v) g.push(0, g.contribution(b, 0, static_cast<uint32_t>(v), big, false, false));
  } else if (scenario == "refill") {
    js = refill(g, cfg, vectors);
  } else {
    throw std::runtime_error("unknown scenario '" + scenario + "'");
  }
  g.write(dir, js);
}

}  // namespace panama::traffic
