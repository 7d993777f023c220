// The aggregation wire format, version 1 (docs/spec/wire-format.md): field layout,
// classification, well-formedness, building worker frames and the frames the accelerator
// builds. Used by the SystemC model, the testbenches, the tests and the host driver.
#pragma once

#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace panama::wire {

using Bytes = std::vector<uint8_t>;
using Mac = std::array<uint8_t, 6>;
using Ipv4 = uint32_t;  // host order: 10.0.0.1 = 0x0A000001

constexpr uint16_t kDefaultAggPort = 9056;
constexpr uint8_t kAggDscp = 56;
constexpr size_t kHeaderBytes = 64;  // L2-L4 headers + aggregation header
constexpr size_t kMinClassifyBytes = 42;
constexpr uint8_t kFlagFin = 0x01;
constexpr uint8_t kFlagResult = 0x02;
constexpr uint16_t kRankBuilt = 0xFFFF;
constexpr uint8_t kEcnCe = 0x3;
// Classification constants of wire-format.md (also written into the RTL's <prefix>_defs.vh).
constexpr uint16_t kEtherTypeIpv4 = 0x0800;
constexpr uint8_t kIpv4VerIhl = 0x45;  // IPv4 without options
constexpr uint8_t kIpProtoUdp = 17;
constexpr uint8_t kVersion = 1;  // the aggregation header's VER

// Offsets of the fields (wire-format.md, "Frame layout").
namespace off {
constexpr size_t eth_dst = 0, eth_src = 6, eth_type = 12;
constexpr size_t ip = 14, ip_tos = 15, ip_total_len = 16, ip_frag = 20, ip_proto = 23, ip_csum = 24, ip_src = 26,
                 ip_dst = 30;
constexpr size_t udp = 34, udp_sport = 34, udp_dport = 36, udp_len = 38, udp_csum = 40;
constexpr size_t agg = 42, ver = 42, flags = 43, jid = 44, tid = 46, reserved = 47, count = 48, vid = 50, rank = 54,
                 cookie = 56, payload = 64;
}  // namespace off

struct WireError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Big-endian field access (network order). Callers check the length first.
uint16_t get16(const uint8_t* p);
uint32_t get32(const uint8_t* p);
uint64_t get64(const uint8_t* p);
void put16(uint8_t* p, uint16_t v);
void put32(uint8_t* p, uint32_t v);
void put64(uint8_t* p, uint64_t v);

// The 22-byte aggregation header.
struct AggHeader {
  uint8_t ver = 1;
  uint8_t flags = 0;
  uint16_t jid = 0;
  uint8_t tid = 0;
  uint8_t reserved = 0;
  uint16_t count = 0;
  uint32_t vid = 0;
  uint16_t rank = 0;
  uint64_t cookie = 0;
  bool fin() const { return flags & kFlagFin; }
  bool result() const { return flags & kFlagResult; }
  bool operator==(const AggHeader& o) const;
};

// What classify() decides (wire-format.md "Classification and validity").
enum class Class { runt, bypass, aggregation };
// A frame shorter than 14 bytes is a runt (accelerator.md rule 2); otherwise aggregation or bypass.
Class classify(const uint8_t* f, size_t len, uint16_t agg_port);
inline Class classify(const Bytes& f, uint16_t agg_port) { return classify(f.data(), f.size(), agg_port); }
bool is_aggregation(const Bytes& f, uint16_t agg_port);

// Well-formedness of an aggregation frame; the first failing rule, for diagnostics.
enum class Validity { ok, too_short, bad_version, bad_count, bad_udp_length, bad_ip_length, bad_frame_length };
const char* to_string(Validity v);
// es: element size in bytes; max_elems: the accelerator's MAX_ELEMS. Only meaningful on frames
// that classify as aggregation.
Validity check_wellformed(const uint8_t* f, size_t len, int es, int max_elems);
inline Validity check_wellformed(const Bytes& f, int es, int max_elems) {
  return check_wellformed(f.data(), f.size(), es, max_elems);
}

// Header of a frame at least 64 bytes long (throws WireError otherwise).
AggHeader parse_header(const Bytes& f);
// The same from a frame in place, which the caller knows to be at least kHeaderBytes long (a
// receive ring's slot: no copy, no check).
AggHeader parse_header(const uint8_t* f);
void write_header(Bytes& f, const AggHeader& h);  // f.size() >= 64

uint8_t ecn(const Bytes& f);                                           // lower 2 bits of ipv4.tos
inline uint8_t ecn(const uint8_t* f) { return f[off::ip_tos] & 0x3; }  // f at least 16 bytes long
void set_ecn(Bytes& f, uint8_t e);                                     // keeps DSCP

// RFC 1071 one's-complement checksum over the 20-byte IPv4 header at f[14..34) with the checksum
// field taken as zero; set_ipv4_checksum stores it.
uint16_t ipv4_checksum(const uint8_t* ip_header);
void set_ipv4_checksum(Bytes& f);
bool ipv4_checksum_ok(const Bytes& f);

// Everything a sender chooses when building an aggregation frame.
struct FrameSpec {
  Mac eth_dst{0x02, 0xaa, 0, 0, 0, 1};
  Mac eth_src{0x02, 0, 0, 0, 0, 0};
  Ipv4 ip_src = 0x0A000000;
  Ipv4 ip_dst = 0x0A0000FE;
  uint8_t dscp = kAggDscp;
  uint8_t ecn = 0b10;  // ECT(0)
  uint8_t ttl = 64;
  uint16_t ip_id = 0;
  uint16_t agg_port = kDefaultAggPort;
  AggHeader hdr;       // hdr.count is set from the payload
  Bytes payload;       // ES*COUNT bytes, little-endian elements
  int elem_bytes = 4;  // ES, to derive COUNT from payload
};
// Builds a well-formed frame (lengths, COUNT, IPv4 checksum filled in, UDP checksum 0).
Bytes build_frame(const FrameSpec& s);

// Little-endian payload helpers.
Bytes payload_from_elems(const std::vector<uint32_t>& elems, int es);
std::vector<uint32_t> elems_from_payload(const uint8_t* p, size_t count, int es);
std::vector<uint32_t> payload_elems(const Bytes& f, int es);  // of a well-formed frame

// How the built frame is addressed (the context's mode, accelerator.md "Contexts").
struct BuildMode {
  bool multicast = true;
  Mac group_mac{};  // multicast
  Ipv4 group_ip = 0;
  Mac own_mac{};  // upstream
  Ipv4 own_ip = 0;
};
// The frame the accelerator builds for a completed vector (wire-format.md "Frames the
// accelerator builds"): `base` is the lowest-index member's contribution, `sum` the element-wise
// sum payload (ES*COUNT bytes), fin_or / ce_any summarise all contributions.
Bytes build_result(const Bytes& base, const Bytes& sum_payload, bool fin_or, bool ce_any, const BuildMode& m);
// The same in place: f holds the base frame's headers (kHeaderBytes) followed by the sum payload.
void finish_result(Bytes& f, bool fin_or, bool ce_any, const BuildMode& m);

// s for an error line: at most max characters, control and non-ASCII bytes as \xNN.
std::string printable(const std::string& s, size_t max = 64);

// Parsing/printing of addresses; parse_* throw WireError with a clear message.
Mac parse_mac(const std::string& s);
Ipv4 parse_ipv4(const std::string& s);
std::string mac_to_string(const Mac& m);
std::string ipv4_to_string(Ipv4 a);

// Serial-number comparison of VIDs (wire-format.md): stale iff (v - e) mod 2^32 >= 2^31.
inline bool vid_stale(uint32_t v, uint32_t e) { return static_cast<uint32_t>(v - e) >= 0x80000000u; }
inline uint32_t vid_distance(uint32_t v, uint32_t e) { return static_cast<uint32_t>(v - e); }

}  // namespace panama::wire
