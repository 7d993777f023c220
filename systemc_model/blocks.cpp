#include "blocks.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "exact_model.h"
#include "ref_float.h"

namespace panama::model {

using wire::Bytes;

static uint32_t beats_of(size_t len, int bus_bytes) {
  return static_cast<uint32_t>(std::max<size_t>(1, (len + bus_bytes - 1) / bus_bytes));
}

// =============================================================================================
// RegFile

RegFile::RegFile(sc_core::sc_module_name n, const Config& cfg)
    : sc_module(n), cfg_(cfg), map_(RegMap::from(cfg)), ctxs_(cfg.in.contexts), ports_(cfg.in.ports) {
  for (auto& c : ctxs_) c.members.assign(map_.member_words, 0);
  for (auto& p : ports_) p.fill(0);
}

int RegFile::find_context(uint16_t jid, uint8_t tid) const {
  // Enabling refuses duplicates, so at most one enabled context matches (a CAM in the RTL).
  for (size_t c = 0; c < ctxs_.size(); ++c)
    if (ctxs_[c].enabled && ctxs_[c].jid == jid && ctxs_[c].tid == tid) return static_cast<int>(c);
  return -1;
}

uint32_t RegFile::read_counter(uint64_t v, bool hi) {
  if (hi) return hi_latch_;
  hi_latch_ = static_cast<uint32_t>(v >> 32);
  return static_cast<uint32_t>(v);
}

static uint32_t mac_hi(const wire::Mac& m) { return (uint32_t{m[0]} << 8) | m[1]; }
static uint32_t mac_lo(const wire::Mac& m) {
  return (uint32_t{m[2]} << 24) | (uint32_t{m[3]} << 16) | (uint32_t{m[4]} << 8) | m[5];
}
static void set_mac_hi(wire::Mac& m, uint32_t v) {
  m[0] = static_cast<uint8_t>(v >> 8);
  m[1] = static_cast<uint8_t>(v);
}
static void set_mac_lo(wire::Mac& m, uint32_t v) {
  for (int i = 0; i < 4; ++i) m[2 + i] = static_cast<uint8_t>(v >> (24 - 8 * i));
}

// A context's address pair (group or own) is three registers: MAC_HI, MAC_LO, IP, word 0..2 from
// its first register.
static_assert(RegMap::kCtxGroupMacLo == RegMap::kCtxGroupMacHi + 4 &&
                  RegMap::kCtxGroupIp == RegMap::kCtxGroupMacHi + 8 &&
                  RegMap::kCtxOwnMacLo == RegMap::kCtxOwnMacHi + 4 && RegMap::kCtxOwnIp == RegMap::kCtxOwnMacHi + 8,
              "address pair registers are consecutive");
static void write_addr_reg(wire::Mac& mac, wire::Ipv4& ip, uint32_t word, uint32_t v) {
  if (word == 0)
    set_mac_hi(mac, v);
  else if (word == 1)
    set_mac_lo(mac, v);
  else
    ip = v;
}
static uint32_t read_addr_reg(const wire::Mac& mac, wire::Ipv4 ip, uint32_t word) {
  return word == 0 ? mac_hi(mac) : word == 1 ? mac_lo(mac) : ip;
}

void RegFile::try_enable(int ci) {
  Ctx& c = ctxs_[ci];
  uint32_t err = 0;
  bool any = false;
  for (uint32_t w : c.members) any |= w != 0;
  if (!any) err |= RegMap::kErrNoMembers;
  if (c.upstream) {
    if (c.upstream_port >= cfg_.in.ports)
      err |= RegMap::kErrUpstreamRange;
    else if (c.is_member(c.upstream_port))
      err |= RegMap::kErrUpstreamMember;
  }
  for (size_t o = 0; o < ctxs_.size(); ++o)
    if (static_cast<int>(o) != ci && ctxs_[o].enabled && ctxs_[o].jid == c.jid && ctxs_[o].tid == c.tid)
      err |= RegMap::kErrDuplicate;
  c.status = err;
  if (err) return;
  c.enabled = true;
  c.status = RegMap::kStEnabled;
  c.expected_vid = 0;  // PANAMA's Expected_VID starts at 0 on enable
}

void RegFile::write(uint32_t addr, uint32_t data) {
  if (addr == RegMap::kAggPort) {
    for (const auto& c : ctxs_)
      if (c.enabled) return;  // reclassifying under live contexts is refused
    agg_port_ = static_cast<uint16_t>(data);
    return;
  }
  if (addr == RegMap::kClearCounters) {
    if (data & 1) {
      for (auto& p : ports_) p.fill(0);
      for (auto& c : ctxs_) c.completed = c.dropped = 0;
      agg_tx_ = 0;
    }
    return;
  }
  if (addr >= map_.ctx_base && addr < map_.ctx_base + static_cast<uint32_t>(ctxs_.size()) * map_.ctx_stride) {
    const int ci = static_cast<int>((addr - map_.ctx_base) / map_.ctx_stride);
    const uint32_t off = (addr - map_.ctx_base) % map_.ctx_stride;
    Ctx& c = ctxs_[ci];
    if (off == RegMap::kCtxCtrl) {
      c.status &= RegMap::kStEnabled;  // any CTRL write clears the error bits
      if ((data & 1) && !c.enabled) try_enable(ci);
      if (!(data & 1)) {
        c.enabled = false;
        c.status = 0;
      }
      return;
    }
    const bool writable = off != RegMap::kCtxStatus && off != RegMap::kCtxExpectedVid &&
                          !(off >= RegMap::kCtxCompletedLo && off <= RegMap::kCtxDroppedHi);
    if (!writable) return;
    if (c.enabled) {
      c.status |= RegMap::kErrWriteEnabled;
      return;
    }
    switch (off) {
      case RegMap::kCtxJid:
        c.jid = static_cast<uint16_t>(data);
        return;
      case RegMap::kCtxTid:
        c.tid = static_cast<uint8_t>(data);
        return;
      case RegMap::kCtxMode:
        c.upstream = data & 1;
        return;
      case RegMap::kCtxUpstreamPort:
        c.upstream_port = static_cast<uint8_t>(data);
        return;
      case RegMap::kCtxGroupMacHi:
      case RegMap::kCtxGroupMacLo:
      case RegMap::kCtxGroupIp:
        write_addr_reg(c.group_mac, c.group_ip, (off - RegMap::kCtxGroupMacHi) / 4, data);
        return;
      case RegMap::kCtxOwnMacHi:
      case RegMap::kCtxOwnMacLo:
      case RegMap::kCtxOwnIp:
        write_addr_reg(c.own_mac, c.own_ip, (off - RegMap::kCtxOwnMacHi) / 4, data);
        return;
      case RegMap::kCtxTimeout:
        c.timeout = data;
        return;
      default:
        break;
    }
    if (off >= RegMap::kCtxMembers && off < RegMap::kCtxMembers + 4u * map_.member_words && off % 4 == 0) {
      const int k = static_cast<int>((off - RegMap::kCtxMembers) / 4);
      const int valid = std::min(32, cfg_.in.ports - 32 * k);  // bits of ports >= N do not exist
      c.members[k] = valid >= 32 ? data : data & ((1u << valid) - 1);
    }
  }
}

uint32_t RegFile::read(uint32_t addr) {
  switch (addr) {
    case RegMap::kId:
      return RegMap::kIdValue;
    case RegMap::kVersion:
      return RegMap::kVersionValue;
    case RegMap::kPorts:
      return static_cast<uint32_t>(cfg_.in.ports);
    case RegMap::kContexts:
      return static_cast<uint32_t>(cfg_.in.contexts);
    case RegMap::kBusBits:
      return static_cast<uint32_t>(cfg_.bus_bits);
    case RegMap::kMaxElems:
      return static_cast<uint32_t>(cfg_.max_elems);
    case RegMap::kFormat:
      return rtl_code(cfg_.in.format) | (cfg_.in.subnormals == Subnormals::ftz ? 0x100u : 0u) |
             (cfg_.exact_sum() ? 0x200u : 0u);
    case RegMap::kBufferBytes:
      return static_cast<uint32_t>(cfg_.buffer_bytes);
    case RegMap::kAggPort:
      return agg_port_;
    case RegMap::kAggTxFramesLo:
      return read_counter(agg_tx_, false);
    case RegMap::kAggTxFramesHi:
      return read_counter(agg_tx_, true);
    default:
      break;
  }
  if (addr >= map_.ctx_base && addr < map_.ctx_base + static_cast<uint32_t>(ctxs_.size()) * map_.ctx_stride) {
    const Ctx& c = ctxs_[(addr - map_.ctx_base) / map_.ctx_stride];
    const uint32_t off = (addr - map_.ctx_base) % map_.ctx_stride;
    switch (off) {
      case RegMap::kCtxCtrl:
        return c.enabled ? 1u : 0u;
      case RegMap::kCtxStatus:
        return c.status | (c.enabled ? RegMap::kStEnabled : 0u);
      case RegMap::kCtxJid:
        return c.jid;
      case RegMap::kCtxTid:
        return c.tid;
      case RegMap::kCtxMode:
        return c.upstream ? 1u : 0u;
      case RegMap::kCtxUpstreamPort:
        return c.upstream_port;
      case RegMap::kCtxGroupMacHi:
      case RegMap::kCtxGroupMacLo:
      case RegMap::kCtxGroupIp:
        return read_addr_reg(c.group_mac, c.group_ip, (off - RegMap::kCtxGroupMacHi) / 4);
      case RegMap::kCtxOwnMacHi:
      case RegMap::kCtxOwnMacLo:
      case RegMap::kCtxOwnIp:
        return read_addr_reg(c.own_mac, c.own_ip, (off - RegMap::kCtxOwnMacHi) / 4);
      case RegMap::kCtxTimeout:
        return c.timeout;
      case RegMap::kCtxExpectedVid:
        return c.expected_vid;
      case RegMap::kCtxCompletedLo:
        return read_counter(c.completed, false);
      case RegMap::kCtxCompletedHi:
        return read_counter(c.completed, true);
      case RegMap::kCtxDroppedLo:
        return read_counter(c.dropped, false);
      case RegMap::kCtxDroppedHi:
        return read_counter(c.dropped, true);
      default:
        break;
    }
    if (off >= RegMap::kCtxMembers && off < RegMap::kCtxMembers + 4u * map_.member_words && off % 4 == 0)
      return c.members[(off - RegMap::kCtxMembers) / 4];
    return 0;
  }
  if (addr >= map_.port_base && addr < map_.port_base + static_cast<uint32_t>(ports_.size()) * map_.port_stride) {
    const uint32_t rel = addr - map_.port_base;
    const int p = static_cast<int>(rel / map_.port_stride);
    const uint32_t off = rel % map_.port_stride;
    if (off % 4 == 0 && off / 8 < kNumPortCounters) return read_counter(ports_[p][off / 8], off % 8 == 4);
  }
  return 0;  // unmapped addresses read as zero
}

// =============================================================================================
// PortBuffer

PortBuffer::PortBuffer(sc_core::sc_module_name n, const Config& cfg)
    : sc_module(n),
      bypass_cap_(static_cast<uint64_t>(cfg.bypass_bytes)),
      contrib_cap_(static_cast<uint64_t>(cfg.buffer_bytes - cfg.bypass_bytes)),
      row_(static_cast<uint32_t>(cfg.bus_bytes)),
      ctx_used_(cfg.in.contexts, 0),
      queues_(cfg.in.contexts) {
  reserve_ = occupancy(static_cast<size_t>(cfg.max_frame_bytes));
}

uint32_t PortBuffer::occupancy(size_t len) const { return beats_of(len, static_cast<int>(row_)) * row_; }

uint64_t PortBuffer::shared_used() const {
  uint64_t s = 0;
  for (uint64_t u : ctx_used_) s += u > reserve_ ? u - reserve_ : 0;
  return s;
}

bool PortBuffer::contrib_fits(int c, uint32_t bytes) const {
  // Each context owns `reserve_` bytes (one largest frame); beyond that it borrows from the pool
  // shared by all contexts, so a flooded context can never starve another one.
  const uint64_t used = ctx_used_[c];
  const uint64_t before = used > reserve_ ? used - reserve_ : 0;
  const uint64_t after = used + bytes > reserve_ ? used + bytes - reserve_ : 0;
  const int64_t pool = static_cast<int64_t>(contrib_cap_) - static_cast<int64_t>(reserve_ * ctx_used_.size());
  const int64_t free_pool = pool - static_cast<int64_t>(shared_used());
  return static_cast<int64_t>(after - before) <= free_pool;
}

void PortBuffer::push_bypass(Held h) {
  bypass_used_ += h.bytes;
  bypass_.push_back(std::move(h));
}

void PortBuffer::push_contrib(int c, Held h, uint64_t now) {
  ctx_used_[c] += h.bytes;
  if (queues_[c].empty()) h.head_since = now;
  queues_[c].push_back(std::move(h));
}

void PortBuffer::pop_bypass() {
  bypass_used_ -= bypass_.front().bytes;
  bypass_.pop_front();
}

void PortBuffer::pop_contrib(int c, uint64_t now) {
  ctx_used_[c] -= queues_[c].front().bytes;
  queues_[c].pop_front();
  if (!queues_[c].empty()) queues_[c].front().head_since = now;
}

uint64_t PortBuffer::queued_contribs() const {
  uint64_t n = 0;
  for (const auto& q : queues_) n += q.size();
  return n;
}

// =============================================================================================
// RxPort

RxPort::RxPort(sc_core::sc_module_name n, const Config& cfg, int port, RegFile& regs, PortBuffer& buf,
               std::vector<InFrame> frames, uint64_t seed, int idle_pct)
    : sc_module(n),
      rx_(cfg, port, regs, buf),
      frames_(std::move(frames)),
      rng_(seed * 0x9E3779B97F4A7C15ull + 2 * static_cast<uint64_t>(port) + 1),
      idle_pct_(idle_pct) {}

void RxPort::tick(uint64_t now) {
  if (done()) return;
  if (idle_pct_ > 0 && static_cast<int>(rng_() % 100) < idle_pct_) return;  // link idle this cycle
  if (rx_.beat(frames_[next_], now)) ++next_;
}

bool RxBeats::beat(const InFrame& f, uint64_t now) {
  if (++beats_done_ < beats_of(f.keep.empty() ? f.data.size() : f.keep.size(), cfg_.bus_bytes)) return false;
  admit_frame(cfg_, regs_, buf_, port_, f, now);  // store-and-forward: decided on the last beat
  beats_done_ = 0;
  return true;
}

// A frame that goes out unchanged (bypass, or a final sum passed down): into the bypass half
// if it fits, counted as `passed`, else dropped, counted as `overflow`.
static void pass_through(RegFile& regs, PortBuffer& buf, int port, Held h, PortCounter passed, PortCounter overflow) {
  if (!buf.bypass_fits(h.bytes)) {
    regs.count(port, overflow);
    return;
  }
  buf.push_bypass(std::move(h));
  regs.count(port, passed);
}

// tkeep of a frame given lane by lane (InFrame::keep): whether it breaks the contract (docs/rtl.md,
// "tkeep outside the contract": a lane not kept on a beat that is not last, tkeep = 0
// included; a kept lane above one that is not on the last beat), and else the bytes kept (a
// prefix: the last beat may also be a null beat, tkeep = 0, that only ends the frame).
static bool keep_broken(const Bytes& keep, int bus_bytes, size_t& kept) {
  const size_t bb = static_cast<size_t>(bus_bytes), last = (keep.size() - 1) / bb * bb;
  kept = 0;
  for (size_t i = 0; i < keep.size(); ++i) {
    if (i < last && !keep[i]) return true;
    if (i > last && keep[i] && !keep[i - 1]) return true;
    kept += keep[i] != 0;
  }
  return false;
}

static void admit_bytes(const Config& cfg, RegFile& regs, PortBuffer& buf, int port, const InFrame& f, size_t lanes,
                        uint64_t now);

void admit_frame(const Config& cfg, RegFile& regs, PortBuffer& buf, int port, const InFrame& f, uint64_t now) {
  if (f.keep.empty()) return admit_bytes(cfg, regs, buf, port, f, f.data.size(), now);
  size_t kept = 0;
  if (keep_broken(f.keep, cfg.bus_bytes, kept)) {
    // Dropped whole, whatever its class: its bytes and length are not known.
    regs.count(port, kRxFrames);
    regs.count(port, kRxError);
    return;
  }
  // The kept bytes are the frame; its beats on the bus (a null last beat too) take the room.
  InFrame g;
  g.data.assign(f.data.begin(), f.data.begin() + static_cast<std::ptrdiff_t>(kept));
  g.tuser = f.tuser;
  admit_bytes(cfg, regs, buf, port, g, f.keep.size(), now);
}

// admit_frame for a frame whose bytes fill `lanes` byte lanes of its beats.
static void admit_bytes(const Config& cfg, RegFile& regs, PortBuffer& buf, int port, const InFrame& f, size_t lanes,
                        uint64_t now) {
  regs.count(port, kRxFrames);
  const wire::Class cls = wire::classify(f.data, regs.agg_port());
  if (cls == wire::Class::runt) {
    regs.count(port, kRunt);
    return;
  }
  Held h;
  h.data = f.data;
  h.tuser = f.tuser;
  h.bytes = buf.occupancy(lanes);
  h.admitted = now;
  h.ready_at = now + static_cast<uint64_t>(cfg.bypass_latency);
  if (cls == wire::Class::bypass) {
    // Rule 1/9: untouched, tuser included; a frame longer than bypass_bytes never fits.
    pass_through(regs, buf, port, std::move(h), kBypassFrames, kBypassOverflow);
    return;
  }
  // Rule 2, in order; each failure is exactly one counter.
  if (f.tuser) {
    regs.count(port, kRxError);
    return;
  }
  if (wire::check_wellformed(f.data, cfg.fmt.elem_bytes, cfg.max_elems) != wire::Validity::ok) {
    regs.count(port, kMalformed);
    return;
  }
  h.hdr = wire::parse_header(f.data);
  const int c = regs.find_context(h.hdr.jid, h.hdr.tid);
  if (c < 0) {
    regs.count(port, kNoContext);
    return;
  }
  const RegFile::Ctx& ctx = regs.ctx(c);
  if (h.hdr.result()) {
    // Rule 3: a final sum coming down through our upstream port passes like bypass traffic.
    if (!(ctx.upstream && ctx.upstream_port == port)) {
      regs.count(port, kNotMember);
      return;
    }
    pass_through(regs, buf, port, std::move(h), kResultPassed, kOverflow);
    return;
  }
  if (!ctx.is_member(port)) {
    regs.count(port, kNotMember);
    return;
  }
  if (!buf.contrib_fits(c, h.bytes)) {
    regs.count(port, kOverflow);
    return;
  }
  buf.push_contrib(c, std::move(h), now);
  regs.count(port, kAggAdmitted);
}

// =============================================================================================
// TxPort

TxPort::TxPort(sc_core::sc_module_name n, const Config& cfg, int port, RegFile& regs, PortBuffer& buf, uint64_t seed,
               int bp_pct, std::vector<OutFrame>& out)
    : sc_module(n),
      cfg_(cfg),
      port_(port),
      regs_(regs),
      buf_(buf),
      rng_(seed * 0xD1B54A32D192ED03ull + 2 * static_cast<uint64_t>(port) + 7),
      bp_pct_(bp_pct),
      out_(out) {}

void TxPort::tick(uint64_t now) {
  if (beats_left_ == 0) {
    if (buf_.bypass().empty() || buf_.bypass().front().ready_at > now) return;
    beats_left_ = beats_of(buf_.bypass().front().data.size(), cfg_.bus_bytes);
    first_beat_ = UINT64_MAX;
  }
  // The frame is presented (tvalid high) until every beat is accepted.
  const bool tready = bp_pct_ == 0 || static_cast<int>(rng_() % 100) >= bp_pct_;
  if (!tready) return;
  if (first_beat_ == UINT64_MAX) first_beat_ = now;
  if (--beats_left_ > 0) return;
  Held& h = buf_.bypass().front();
  OutFrame o;
  o.data = std::move(h.data);
  o.tuser = h.tuser;
  o.cycle = first_beat_;
  out_.push_back(std::move(o));
  buf_.pop_bypass();  // space is free once the last beat has left
  regs_.count(port_, kTxFrames);
}

// =============================================================================================
// AggTx

AggTx::AggTx(sc_core::sc_module_name n, const Config& cfg, RegFile& regs, uint64_t seed, int bp_pct,
             std::vector<OutFrame>& out)
    : sc_module(n),
      cfg_(cfg),
      regs_(regs),
      rng_(seed * 0xA0761D6478BD642Full + 3),
      bp_pct_(bp_pct),
      out_(out),
      // Room for every frame the result pipeline can hold at once plus one waiting frame.
      capacity_(static_cast<size_t>(std::max(2, cfg.agg_latency + 2))) {}

void AggTx::push(OutFrame f, uint64_t ready_at) { fifo_.push_back({std::move(f), ready_at}); }

void AggTx::tick(uint64_t now) {
  if (beats_left_ == 0) {
    if (fifo_.empty() || fifo_.front().ready_at > now) return;
    beats_left_ = beats_of(fifo_.front().f.data.size(), cfg_.bus_bytes);
    first_beat_ = UINT64_MAX;
  }
  const bool tready = bp_pct_ == 0 || static_cast<int>(rng_() % 100) >= bp_pct_;
  if (!tready) return;
  if (first_beat_ == UINT64_MAX) first_beat_ = now;
  if (--beats_left_ > 0) return;
  OutFrame o = std::move(fifo_.front().f);
  fifo_.pop_front();
  o.cycle = first_beat_;
  out_.push_back(std::move(o));
  regs_.count_agg_tx();
}

// =============================================================================================
// ResultBuilder

ResultBuilder::ResultBuilder(sc_core::sc_module_name n, const Config& cfg, AggTx& agg)
    : sc_module(n), cfg_(cfg), agg_(agg) {}

void ResultBuilder::build(int ci, const RegFile::Ctx& c, const std::vector<const Held*>& heads, uint64_t now) {
  const int n = cfg_.in.ports, es = cfg_.fmt.elem_bytes;
  const Held* base = nullptr;
  bool fin_or = false, ce_any = false;
  uint64_t last_in = 0;
  for (int p = 0; p < n; ++p) {
    if (!heads[p]) continue;
    if (!base) base = heads[p];  // the lowest-index member's frame
    fin_or |= heads[p]->hdr.fin();
    ce_any |= wire::ecn(heads[p]->data) == wire::kEcnCe;
    last_in = std::max(last_in, heads[p]->admitted);
  }
  const size_t count = base->hdr.count;
  // numerics.md: per element, a balanced tree over port indices, absent leaves -0.0. The leaves
  // are padded to P = next power of two; the reference addition is the host CPU's.
  const Format fmt = cfg_.in.format;
  const bool ftz = cfg_.in.subnormals == Subnormals::ftz;
  size_t leaves = 1;
  while (leaves < static_cast<size_t>(n)) leaves *= 2;
  std::vector<std::vector<uint32_t>> vals(n);
  for (int p = 0; p < n; ++p)
    if (heads[p]) vals[p] = wire::elems_from_payload(heads[p]->data.data() + wire::kHeaderBytes, count, es);
  std::vector<uint32_t> sum(count);
  if (cfg_.exact_sum()) {
    // numerics.md, exact-sum mode: the exact sum of the members' elements, rounded once.
    for (size_t i = 0; i < count; ++i) {
      model_exact::Sum acc(cfg_.fmt.exp_bits, cfg_.fmt.frac_bits, cfg_.fmt.canonical_nan, ftz);
      for (int p = 0; p < n; ++p)
        if (heads[p]) acc.add(vals[p][i]);
      sum[i] = acc.result();
    }
  } else {
    ref::MxcsrScope mx(ftz);
    std::vector<uint32_t> node(leaves);
    for (size_t i = 0; i < count; ++i) {
      std::fill(node.begin(), node.end(), ref::neg_zero(fmt));
      for (int p = 0; p < n; ++p)
        if (heads[p]) node[p] = vals[p][i];
      for (size_t width = leaves; width > 1; width /= 2)
        for (size_t k = 0; k < width / 2; ++k) node[k] = ref::add(fmt, ftz, node[2 * k], node[2 * k + 1]);
      sum[i] = node[0];
    }
  }
  wire::BuildMode mode;
  mode.multicast = !c.upstream;
  mode.group_mac = c.group_mac;
  mode.group_ip = c.group_ip;
  mode.own_mac = c.own_mac;
  mode.own_ip = c.own_ip;
  OutFrame o;
  o.data = wire::build_result(base->data, wire::payload_from_elems(sum, es), fin_or, ce_any, mode);
  o.context = ci;
  // The trees take one beat per cycle; the first beat leaves agg_latency cycles after the last
  // contribution's last beat at the earliest.
  const uint32_t beats = static_cast<uint32_t>((o.data.size() + cfg_.bus_bytes - 1) / cfg_.bus_bytes);
  tree_free_at_ = now + beats;
  const uint64_t ready = std::max(now + 1, last_in + static_cast<uint64_t>(cfg_.agg_latency));
  agg_.push(std::move(o), ready);
}

// =============================================================================================
// Scheduler

Scheduler::Scheduler(sc_core::sc_module_name n, const Config& cfg, RegFile& regs, std::vector<PortBuffer*> bufs,
                     ResultBuilder& builder)
    : sc_module(n),
      cfg_(cfg),
      regs_(regs),
      bufs_(std::move(bufs)),
      builder_(builder),
      e_changed_at_(cfg.in.contexts, 0),
      consumed_(cfg.in.ports, 0) {}

void Scheduler::drop_head(int p, int c, PortCounter why, uint64_t now) {
  regs_.count(p, why);
  bufs_[p]->pop_contrib(c, now);
}

void Scheduler::set_expected(int c, uint32_t e, uint64_t now) {
  regs_.ctx(c).expected_vid = e;
  e_changed_at_[c] = now;
}

void Scheduler::tick(uint64_t now) {
  bool acted = false, waiting = false;
  // Context-index order: with the shared trees, a lower index wins a tie (rule 8).
  for (int c = 0; c < regs_.contexts(); ++c)
    if (regs_.ctx(c).enabled) acted |= step(c, now, &waiting);
  quiescent_ = !acted && !waiting;
}

bool Scheduler::step(int c, uint64_t now, bool* waiting) {
  RegFile::Ctx& ctx = regs_.ctx(c);
  const int n = cfg_.in.ports;
  const uint32_t e = ctx.expected_vid;
  bool acted = false;
  std::vector<int> members;
  for (int p = 0; p < n; ++p)
    if (ctx.is_member(p)) members.push_back(p);

  // Rule 5: stale heads go first, so the decisions below only see VIDs at or ahead of E.
  for (int p : members) {
    auto& q = bufs_[p]->queue(c);
    while (!q.empty() && wire::vid_stale(q.front().hdr.vid, e)) {
      drop_head(p, c, kStale, now);
      acted = true;
    }
  }
  int with_head = 0, at_e = 0;
  uint32_t smallest = 0, best_dist = UINT32_MAX;
  for (int p : members) {
    auto& q = bufs_[p]->queue(c);
    if (q.empty()) continue;
    ++with_head;
    const uint32_t v = q.front().hdr.vid;
    if (v == e) ++at_e;
    if (wire::vid_distance(v, e) < best_dist) {
      best_dist = wire::vid_distance(v, e);
      smallest = v;
    }
  }
  const int m = static_cast<int>(members.size());
  if (m > 0 && with_head == m) {
    // Rule 6: every member has a head.
    if (at_e == m) {
      bool same_count = true;
      const uint16_t count0 = bufs_[members[0]]->queue(c).front().hdr.count;
      for (int p : members) same_count &= bufs_[p]->queue(c).front().hdr.count == count0;
      if (same_count) {
        if (!builder_.ready(now)) {
          *waiting = true;  // trees busy or m_agg backed up: try again next cycle
          return acted;
        }
        std::vector<const Held*> heads(n, nullptr);
        for (int p : members) heads[p] = &bufs_[p]->queue(c).front();
        builder_.build(c, ctx, heads, now);
        for (int p : members) {
          bufs_[p]->pop_contrib(c, now);
          ++consumed_[p];
        }
        regs_.count_completed(c);
      } else {
        for (int p : members) drop_head(p, c, kCountMismatch, now);
        regs_.count_dropped(c);
      }
      set_expected(c, e + 1, now);
      return true;
    }
    if (at_e > 0) {
      // The vector E cannot complete: its heads go, E moves on by exactly one.
      for (int p : members)
        if (bufs_[p]->queue(c).front().hdr.vid == e) drop_head(p, c, kIncomplete, now);
      regs_.count_dropped(c);
      set_expected(c, e + 1, now);
      return true;
    }
    set_expected(c, smallest, now);  // every head is ahead: skip to the smallest
    return true;
  }
  if (with_head > 0 && ctx.timeout > 0) {
    // Rule 7: some member has nothing; a head that waited too long resolves the vector.
    bool expired = false;
    for (int p : members) {
      auto& q = bufs_[p]->queue(c);
      if (q.empty()) continue;
      const uint64_t since = std::max(q.front().head_since, e_changed_at_[c]);
      if (now - since > ctx.timeout) expired = true;
    }
    if (!expired) {
      *waiting = true;
      return acted;
    }
    if (at_e > 0) {
      for (int p : members) {
        auto& q = bufs_[p]->queue(c);
        if (!q.empty() && q.front().hdr.vid == e) drop_head(p, c, kTimeout, now);
      }
      regs_.count_dropped(c);
      set_expected(c, e + 1, now);
    } else {
      set_expected(c, smallest, now);
    }
    return true;
  }
  return acted;
}

}  // namespace panama::model

// libsystemc's own main() refers to sc_main; the model is driven through run() instead, so it
// is defined here, in the object every user of the model links. Weak, so that a program with a
// real sc_main keeps its own.
extern "C" __attribute__((weak)) int sc_main(int, char**) {
  std::fprintf(stderr, "panama_model: no sc_main in this program\n");
  return 1;
}
