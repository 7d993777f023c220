#include "wire.h"

#include <cstdio>
#include <cstring>

namespace panama::wire {

uint16_t get16(const uint8_t* p) { return static_cast<uint16_t>((p[0] << 8) | p[1]); }
uint32_t get32(const uint8_t* p) { return (uint32_t{get16(p)} << 16) | get16(p + 2); }
uint64_t get64(const uint8_t* p) { return (uint64_t{get32(p)} << 32) | get32(p + 4); }
void put16(uint8_t* p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v >> 8);
  p[1] = static_cast<uint8_t>(v);
}
void put32(uint8_t* p, uint32_t v) {
  put16(p, static_cast<uint16_t>(v >> 16));
  put16(p + 2, static_cast<uint16_t>(v));
}
void put64(uint8_t* p, uint64_t v) {
  put32(p, static_cast<uint32_t>(v >> 32));
  put32(p + 4, static_cast<uint32_t>(v));
}

bool AggHeader::operator==(const AggHeader& o) const {
  return ver == o.ver && flags == o.flags && jid == o.jid && tid == o.tid && reserved == o.reserved &&
         count == o.count && vid == o.vid && rank == o.rank && cookie == o.cookie;
}

Class classify(const uint8_t* f, size_t len, uint16_t agg_port) {
  if (len < 14) return Class::runt;
  if (len < kMinClassifyBytes) return Class::bypass;
  if (get16(f + off::eth_type) != 0x0800) return Class::bypass;  // VLAN tags, IPv6, ARP...
  if (f[off::ip] != 0x45) return Class::bypass;                  // not IPv4 or has options
  if ((f[off::ip_tos] >> 2) != kAggDscp) return Class::bypass;
  // Fragment: MF (bit 13) set or a non-zero offset; DF is irrelevant.
  if ((get16(f + off::ip_frag) & 0x3FFF) != 0) return Class::bypass;
  if (f[off::ip_proto] != 17) return Class::bypass;
  if (get16(f + off::udp_dport) != agg_port) return Class::bypass;
  return Class::aggregation;
}

bool is_aggregation(const Bytes& f, uint16_t agg_port) { return classify(f, agg_port) == Class::aggregation; }

const char* to_string(Validity v) {
  switch (v) {
    case Validity::ok:
      return "ok";
    case Validity::too_short:
      return "shorter than the 64-byte headers";
    case Validity::bad_version:
      return "VER is not 1";
    case Validity::bad_count:
      return "COUNT outside 1..MAX_ELEMS";
    case Validity::bad_udp_length:
      return "UDP length is not 30 + ES*COUNT";
    case Validity::bad_ip_length:
      return "IPv4 total length is not frame length - 14";
    case Validity::bad_frame_length:
      return "frame length is not 64 + ES*COUNT";
  }
  return "?";
}

Validity check_wellformed(const uint8_t* f, size_t len, int es, int max_elems) {
  if (len < kHeaderBytes) return Validity::too_short;
  if (f[off::ver] != 1) return Validity::bad_version;
  const uint32_t count = get16(f + off::count);
  if (count < 1 || count > static_cast<uint32_t>(max_elems)) return Validity::bad_count;
  const size_t payload = static_cast<size_t>(es) * count;
  if (get16(f + off::udp_len) != 30 + payload) return Validity::bad_udp_length;
  if (get16(f + off::ip_total_len) != len - 14) return Validity::bad_ip_length;
  if (len != kHeaderBytes + payload) return Validity::bad_frame_length;
  return Validity::ok;
}

AggHeader parse_header(const Bytes& f) {
  if (f.size() < kHeaderBytes)
    throw WireError("frame of " + std::to_string(f.size()) + " bytes has no aggregation header");
  return parse_header(f.data());
}

AggHeader parse_header(const uint8_t* p) {
  AggHeader h;
  h.ver = p[off::ver];
  h.flags = p[off::flags];
  h.jid = get16(p + off::jid);
  h.tid = p[off::tid];
  h.reserved = p[off::reserved];
  h.count = get16(p + off::count);
  h.vid = get32(p + off::vid);
  h.rank = get16(p + off::rank);
  h.cookie = get64(p + off::cookie);
  return h;
}

void write_header(Bytes& f, const AggHeader& h) {
  if (f.size() < kHeaderBytes) throw WireError("frame too short for an aggregation header");
  uint8_t* p = f.data();
  p[off::ver] = h.ver;
  p[off::flags] = h.flags;
  put16(p + off::jid, h.jid);
  p[off::tid] = h.tid;
  p[off::reserved] = h.reserved;
  put16(p + off::count, h.count);
  put32(p + off::vid, h.vid);
  put16(p + off::rank, h.rank);
  put64(p + off::cookie, h.cookie);
}

uint8_t ecn(const Bytes& f) { return f.size() > off::ip_tos ? ecn(f.data()) : 0; }
void set_ecn(Bytes& f, uint8_t e) { f[off::ip_tos] = static_cast<uint8_t>((f[off::ip_tos] & 0xFC) | (e & 0x3)); }

uint16_t ipv4_checksum(const uint8_t* h) {
  uint32_t sum = 0;
  for (int i = 0; i < 20; i += 2)
    if (i != 10) sum += get16(h + i);  // the checksum field counts as zero
  while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
  return static_cast<uint16_t>(~sum);
}

void set_ipv4_checksum(Bytes& f) {
  if (f.size() < off::udp) throw WireError("frame too short for an IPv4 header");
  put16(f.data() + off::ip_csum, ipv4_checksum(f.data() + off::ip));
}

bool ipv4_checksum_ok(const Bytes& f) {
  return f.size() >= off::udp && get16(f.data() + off::ip_csum) == ipv4_checksum(f.data() + off::ip);
}

Bytes build_frame(const FrameSpec& s) {
  if (s.elem_bytes != 2 && s.elem_bytes != 4) throw WireError("element size must be 2 or 4 bytes");
  if (s.payload.size() % s.elem_bytes) throw WireError("payload is not a whole number of elements");
  const size_t count = s.payload.size() / s.elem_bytes;
  if (count > 0xFFFF || s.payload.size() + 50 > 0xFFFF) throw WireError("payload too long for one frame");
  Bytes f(kHeaderBytes + s.payload.size(), 0);
  uint8_t* p = f.data();
  std::memcpy(p + off::eth_dst, s.eth_dst.data(), 6);
  std::memcpy(p + off::eth_src, s.eth_src.data(), 6);
  put16(p + off::eth_type, 0x0800);
  p[off::ip] = 0x45;
  p[off::ip_tos] = static_cast<uint8_t>((s.dscp << 2) | (s.ecn & 0x3));
  put16(p + off::ip_total_len, static_cast<uint16_t>(f.size() - 14));
  put16(p + off::ip + 4, s.ip_id);
  put16(p + off::ip_frag, 0x4000);  // DF, unfragmented
  p[off::ip + 8] = s.ttl;
  p[off::ip_proto] = 17;
  put32(p + off::ip_src, s.ip_src);
  put32(p + off::ip_dst, s.ip_dst);
  put16(p + off::udp_sport, s.agg_port);
  put16(p + off::udp_dport, s.agg_port);
  put16(p + off::udp_len, static_cast<uint16_t>(30 + s.payload.size()));
  put16(p + off::udp_csum, 0);
  AggHeader h = s.hdr;
  h.count = static_cast<uint16_t>(count);
  write_header(f, h);
  if (!s.payload.empty()) std::memcpy(p + off::payload, s.payload.data(), s.payload.size());
  set_ipv4_checksum(f);
  return f;
}

Bytes payload_from_elems(const std::vector<uint32_t>& elems, int es) {
  Bytes b(elems.size() * es);
  for (size_t i = 0; i < elems.size(); ++i)
    for (int k = 0; k < es; ++k) b[i * es + k] = static_cast<uint8_t>(elems[i] >> (8 * k));
  return b;
}

std::vector<uint32_t> elems_from_payload(const uint8_t* p, size_t count, int es) {
  std::vector<uint32_t> v(count);
  for (size_t i = 0; i < count; ++i) {
    uint32_t x = 0;
    for (int k = 0; k < es; ++k) x |= uint32_t{p[i * es + k]} << (8 * k);
    v[i] = x;
  }
  return v;
}

std::vector<uint32_t> payload_elems(const Bytes& f, int es) {
  if (f.size() < kHeaderBytes) throw WireError("frame has no payload");
  const size_t count = (f.size() - kHeaderBytes) / es;
  return elems_from_payload(f.data() + kHeaderBytes, count, es);
}

Bytes build_result(const Bytes& base, const Bytes& sum, bool fin_or, bool ce_any, const BuildMode& m) {
  if (base.size() != kHeaderBytes + sum.size()) throw WireError("sum payload does not match the base frame");
  Bytes f = base;
  if (!sum.empty()) std::memcpy(f.data() + off::payload, sum.data(), sum.size());
  finish_result(f, fin_or, ce_any, m);
  return f;
}

void finish_result(Bytes& f, bool fin_or, bool ce_any, const BuildMode& m) {
  if (f.size() < kHeaderBytes) throw WireError("a result frame shorter than the headers");
  uint8_t* p = f.data();
  p[off::flags] =
      static_cast<uint8_t>((p[off::flags] & 0xFC) | (fin_or ? kFlagFin : 0) | (m.multicast ? kFlagResult : 0));
  put16(p + off::rank, kRankBuilt);
  if (ce_any) set_ecn(f, kEcnCe);  // else the copied frame's ECN stays
  if (m.multicast) {
    // The root answers the group: the copied destination becomes the source.
    std::memcpy(p + off::eth_src, p + off::eth_dst, 6);
    std::memcpy(p + off::eth_dst, m.group_mac.data(), 6);
    std::memcpy(p + off::ip_src, p + off::ip_dst, 4);
    put32(p + off::ip_dst, m.group_ip);
  } else {
    std::memcpy(p + off::eth_src, m.own_mac.data(), 6);
    put32(p + off::ip_src, m.own_ip);
  }
  put16(p + off::udp_csum, 0);
  set_ipv4_checksum(f);
}

static int hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string printable(const std::string& s, size_t max) {
  std::string o;
  for (size_t i = 0; i < s.size() && i < max; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c >= 0x7f) {
      char b[8];
      std::snprintf(b, sizeof b, "\\x%02x", c);
      o += b;
    } else {
      o += static_cast<char>(c);
    }
  }
  if (s.size() > max) o += "...";
  return o;
}

Mac parse_mac(const std::string& s) {
  Mac m{};
  // Exactly six two-digit hex groups separated by ':'.
  if (s.size() != 17) throw WireError("malformed MAC address '" + printable(s) + "' (expected xx:xx:xx:xx:xx:xx)");
  for (int i = 0; i < 6; ++i) {
    const int hi = hexval(s[3 * i]), lo = hexval(s[3 * i + 1]);
    if (hi < 0 || lo < 0 || (i < 5 && s[3 * i + 2] != ':'))
      throw WireError("malformed MAC address '" + printable(s) + "' (expected xx:xx:xx:xx:xx:xx)");
    m[i] = static_cast<uint8_t>(hi * 16 + lo);
  }
  return m;
}

Ipv4 parse_ipv4(const std::string& s) {
  const std::string err = "malformed IPv4 address '" + printable(s) + "' (expected a.b.c.d, each 0..255)";
  Ipv4 a = 0;
  size_t i = 0;
  for (int part = 0; part < 4; ++part) {
    if (part > 0) {
      if (i >= s.size() || s[i] != '.') throw WireError(err);
      ++i;
    }
    size_t start = i;
    unsigned v = 0;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9' && i - start < 3) v = v * 10 + (s[i++] - '0');
    if (i == start || v > 255) throw WireError(err);
    if (i - start > 1 && s[start] == '0') throw WireError(err);  // no leading zeros (octal ambiguity)
    a = (a << 8) | v;
  }
  if (i != s.size()) throw WireError(err);
  return a;
}

std::string mac_to_string(const Mac& m) {
  char b[18];
  std::snprintf(b, sizeof b, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
  return b;
}

std::string ipv4_to_string(Ipv4 a) {
  return std::to_string(a >> 24) + "." + std::to_string((a >> 16) & 255) + "." + std::to_string((a >> 8) & 255) + "." +
         std::to_string(a & 255);
}

}  // namespace panama::wire
