// Helpers for the model tests: configurations, frames built with the wire library, and the
// expected sums from numerics/ref_float.h (host addition in the tree order of numerics.md).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "config.h"
#include "ctx.h"
#include "model.h"
#include "ref_float.h"
#include "wire.h"

namespace mt {

using namespace panama;
using wire::Bytes;

inline Config cfg4(int contexts = 8, int buffer_kib = 64, int max_elems = -1, Format f = Format::fp32, int ports = 4,
                   double gbps = 10, double mhz = 200) {
  Inputs in;
  in.ports = ports;
  in.gbps = gbps;
  in.mhz = mhz;
  in.format = f;
  in.contexts = contexts;
  in.buffer_kib = buffer_kib;
  if (max_elems > 0) in.max_elems = max_elems;  // else the generator default
  return Config::derive(in);
}

inline uint32_t fbits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

// A context's identity and members; mcast and upstream add the mode's fields.
inline wire::CtxEntry ctx_entry(uint16_t jid, uint8_t tid, std::vector<int> members, bool multicast) {
  wire::CtxEntry e;
  e.jid = jid;
  e.tid = tid;
  e.members = std::move(members);
  e.multicast = multicast;
  return e;
}

inline wire::CtxEntry mcast(uint16_t jid, uint8_t tid, std::vector<int> members, uint32_t timeout = 0) {
  wire::CtxEntry e = ctx_entry(jid, tid, std::move(members), true);
  e.group_mac = wire::parse_mac("01:00:5e:01:00:07");
  e.group_ip = wire::parse_ipv4("239.1.0.7");
  e.timeout_cycles = timeout;
  return e;
}

inline wire::CtxEntry upstream(uint16_t jid, uint8_t tid, std::vector<int> members, int up) {
  wire::CtxEntry e = ctx_entry(jid, tid, std::move(members), false);
  e.upstream_port = up;
  e.src_mac = wire::parse_mac("02:aa:00:00:00:0b");
  e.src_ip = wire::parse_ipv4("10.0.0.253");
  return e;
}

inline wire::CtxFile ctxs(std::vector<wire::CtxEntry> v) {
  wire::CtxFile f;
  f.contexts = std::move(v);
  return f;
}

// A worker's contribution: port p, rank p, worker MAC/IP derived from p.
inline Bytes contrib(int port, uint16_t jid, uint8_t tid, uint32_t vid, const std::vector<uint32_t>& elems,
                     uint8_t flags = 0, uint8_t ecn = 0b10, int es = 4) {
  wire::FrameSpec s;
  s.eth_src = {0x02, 0, 0, 0, 0, static_cast<uint8_t>(port)};
  s.ip_src = 0x0A000000u + static_cast<uint32_t>(port);
  s.ecn = ecn;
  s.elem_bytes = es;
  s.hdr.jid = jid;
  s.hdr.tid = tid;
  s.hdr.vid = vid;
  s.hdr.flags = flags;
  s.hdr.rank = static_cast<uint16_t>(port);
  s.hdr.cookie =
      0xC00C1E0000000000ull | (uint64_t{jid} << 16) | (uint64_t{static_cast<uint32_t>(port)} << 8) | (vid & 0xff);
  s.payload = wire::payload_from_elems(elems, es);
  return wire::build_frame(s);
}

// A plain bypass frame of len >= 14 bytes: an IPv4/UDP datagram to port 5001 when long enough
// to hold the headers, else just an Ethernet header; the payload carries a marker.
inline Bytes bypass_frame(int port, int n, size_t len = 100) {
  if (len < 14) len = 14;
  Bytes f(len, 0);
  f[0] = 0x02;
  f[5] = 9;
  f[6] = 0x02;
  f[11] = static_cast<uint8_t>(port);
  f[12] = 0x08;
  if (len >= 42) {
    f[14] = 0x45;
    f[23] = 17;
    wire::put16(&f[36], 5001);
  }
  for (size_t i = std::min<size_t>(len, 42); i < len; ++i) f[i] = static_cast<uint8_t>(n + i);
  if (len > 14 && len < 42) f[14] = static_cast<uint8_t>(n);
  return f;
}

// Expected sum of one vector: per element, ref::tree_sum over ports in index order.
inline std::vector<uint32_t> expected_sum(const Config& c, const std::vector<std::vector<uint32_t>>& per_port,
                                          const std::vector<int>& members) {
  const Format fmt = c.in.format;
  std::vector<bool> mask(c.in.ports, false);
  for (int p : members) mask[p] = true;
  size_t count = 0;
  for (int p : members) count = per_port[p].size();
  std::vector<uint32_t> out(count);
  for (size_t i = 0; i < count; ++i) {
    std::vector<uint32_t> vals(c.in.ports, 0);
    for (int p : members) vals[p] = per_port[p][i];
    out[i] = ref::tree_sum(fmt, c.in.subnormals == Subnormals::ftz, vals, mask);
  }
  return out;
}

inline std::vector<std::vector<model::InFrame>> inputs(int ports) {
  return std::vector<std::vector<model::InFrame>>(ports);
}

inline uint64_t ctr(const model::Result& r, int port, PortCounter k) { return r.port_counters.at(port)[k]; }

}  // namespace mt
