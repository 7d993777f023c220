// The wire-format library against wire-format.md, field by field, and pcap / CTX.json I/O.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "ctx.h"
#include "pcap_io.h"
#include "wire.h"

using namespace panama::wire;

namespace {

FrameSpec spec4(std::vector<uint32_t> elems) {
  FrameSpec s;
  s.hdr.jid = 7;
  s.hdr.tid = 2;
  s.hdr.vid = 0x01020304;
  s.hdr.rank = 3;
  s.hdr.cookie = 0x1122334455667788ull;
  s.payload = payload_from_elems(elems, 4);
  return s;
}

// A result mode of build_result: multicast to the group at (mac, ip), or upstream from the
// switch's own (mac, ip).
BuildMode result_mode(bool multicast, const char* mac, const char* ip) {
  BuildMode m;
  m.multicast = multicast;
  (multicast ? m.group_mac : m.own_mac) = parse_mac(mac);
  (multicast ? m.group_ip : m.own_ip) = parse_ipv4(ip);
  return m;
}

std::string tmpfile_path(const std::string& name) { return std::string(::testing::TempDir()) + "/panama_wire_" + name; }

void write_bytes(const std::string& path, const Bytes& b) {
  std::ofstream o(path, std::ios::binary);
  o.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

// A classic microsecond pcap header (little-endian) with the given link type.
Bytes pcap_header(uint32_t linktype) {
  Bytes h = {0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0};
  for (int i = 0; i < 4; ++i) h.push_back(static_cast<uint8_t>(linktype >> (8 * i)));
  return h;
}
void append_record(Bytes& f, const Bytes& data, uint32_t incl) {
  auto le32 = [&](uint32_t v) {
    for (int i = 0; i < 4; ++i) f.push_back(static_cast<uint8_t>(v >> (8 * i)));
  };
  le32(1);
  le32(0);
  le32(incl);
  le32(static_cast<uint32_t>(data.size()));
  f.insert(f.end(), data.begin(), data.end());
}

}  // namespace

TEST(WireLayout, BuildFrameFieldsAtSpecOffsets) {
  const Bytes f = build_frame(spec4({0x3f800000, 0x40000000, 0xc0400000}));
  ASSERT_EQ(f.size(), 64u + 12u);
  EXPECT_EQ(f[12], 0x08);
  EXPECT_EQ(f[13], 0x00);
  EXPECT_EQ(f[14], 0x45);
  EXPECT_EQ(f[15] >> 2, 56);
  EXPECT_EQ(get16(&f[16]), f.size() - 14);  // IPv4 total length
  EXPECT_EQ(get16(&f[20]) & 0x3FFF, 0);     // not fragmented
  EXPECT_EQ(f[23], 17);                     // UDP
  EXPECT_EQ(get16(&f[34]), 9056);           // UDP source port
  EXPECT_EQ(get16(&f[36]), 9056);           // UDP destination port
  EXPECT_EQ(get16(&f[38]), 30 + 12);        // UDP length
  EXPECT_EQ(get16(&f[40]), 0);              // UDP checksum
  EXPECT_EQ(f[42], 1);                      // VER
  EXPECT_EQ(get16(&f[44]), 7);              // JID big-endian
  EXPECT_EQ(f[46], 2);                      // TID
  EXPECT_EQ(get16(&f[48]), 3);              // COUNT
  EXPECT_EQ(f[50], 0x01);                   // VID big-endian
  EXPECT_EQ(f[53], 0x04);
  EXPECT_EQ(get16(&f[54]), 3);  // RANK
  EXPECT_EQ(f[56], 0x11);       // COOKIE big-endian
  EXPECT_EQ(f[63], 0x88);
  // Payload little-endian, element 0 first: 1.0f = 0x3f800000.
  EXPECT_EQ(f[64], 0x00);
  EXPECT_EQ(f[67], 0x3f);
  EXPECT_EQ(f[71], 0x40);
  EXPECT_TRUE(ipv4_checksum_ok(f));
  const AggHeader h = parse_header(f);
  EXPECT_EQ(h.vid, 0x01020304u);
  EXPECT_EQ(h.cookie, 0x1122334455667788ull);
  EXPECT_EQ(payload_elems(f, 4), (std::vector<uint32_t>{0x3f800000, 0x40000000, 0xc0400000}));
}

TEST(WireChecksum, Rfc1071KnownHeader) {
  // A textbook header: 4500 0073 0000 4000 4011 [b861] c0a8 0001 c0a8 00c7.
  const uint8_t h[20] = {0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
                         0xde, 0xad, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7};
  EXPECT_EQ(ipv4_checksum(h), 0xb861);  // the checksum field itself is ignored
}

TEST(WireChecksum, DetectsCorruption) {
  Bytes f = build_frame(spec4({1}));
  EXPECT_TRUE(ipv4_checksum_ok(f));
  f[26] ^= 1;
  EXPECT_FALSE(ipv4_checksum_ok(f));
}

TEST(WireClassify, AggregationFrame) { EXPECT_EQ(classify(build_frame(spec4({1, 2})), 9056), Class::aggregation); }

TEST(WireClassify, RuntBelow14Bytes) {
  EXPECT_EQ(classify(Bytes(13, 0), 9056), Class::runt);
  EXPECT_EQ(classify(Bytes(), 9056), Class::runt);
  EXPECT_EQ(classify(Bytes(14, 0), 9056), Class::bypass);
}

TEST(WireClassify, TruncatedBelow42IsBypass) {
  Bytes f = build_frame(spec4({1}));
  f.resize(41);
  EXPECT_EQ(classify(f, 9056), Class::bypass);
  f = build_frame(spec4({1}));
  f.resize(42);
  EXPECT_EQ(classify(f, 9056), Class::aggregation);  // classifies; well-formedness rejects it
}

TEST(WireClassify, EveryNonAggregationCaseIsBypass) {
  const Bytes good = build_frame(spec4({1, 2}));
  auto variant = [&](auto mut) {
    Bytes f = good;
    mut(f);
    return classify(f, 9056);
  };
  EXPECT_EQ(variant([](Bytes& f) {
              f[12] = 0x81;
              f[13] = 0x00;
            }),
            Class::bypass);  // VLAN tag
  EXPECT_EQ(variant([](Bytes& f) {
              f[12] = 0x86;
              f[13] = 0xdd;
            }),
            Class::bypass);  // IPv6
  EXPECT_EQ(variant([](Bytes& f) {
              f[12] = 0x08;
              f[13] = 0x06;
            }),
            Class::bypass);                                                  // ARP
  EXPECT_EQ(variant([](Bytes& f) { f[14] = 0x46; }), Class::bypass);         // IPv4 options
  EXPECT_EQ(variant([](Bytes& f) { f[14] = 0x65; }), Class::bypass);         // version 6
  EXPECT_EQ(variant([](Bytes& f) { f[15] = (55 << 2); }), Class::bypass);    // DSCP 55
  EXPECT_EQ(variant([](Bytes& f) { f[15] = 0; }), Class::bypass);            // DSCP 0
  EXPECT_EQ(variant([](Bytes& f) { f[20] |= 0x20; }), Class::bypass);        // MF
  EXPECT_EQ(variant([](Bytes& f) { f[21] = 1; }), Class::bypass);            // offset 8
  EXPECT_EQ(variant([](Bytes& f) { f[23] = 6; }), Class::bypass);            // TCP
  EXPECT_EQ(variant([](Bytes& f) { put16(&f[36], 9057); }), Class::bypass);  // other port
  // DF and ECN bits and the UDP source port do not matter.
  EXPECT_EQ(variant([](Bytes& f) { f[20] = 0; }), Class::aggregation);
  EXPECT_EQ(variant([](Bytes& f) { f[15] = (56 << 2) | 3; }), Class::aggregation);
  EXPECT_EQ(variant([](Bytes& f) { put16(&f[34], 1234); }), Class::aggregation);
  // A configured port other than 9056.
  EXPECT_EQ(classify(good, 4791), Class::bypass);
  FrameSpec s = spec4({1});
  s.agg_port = 4791;
  EXPECT_TRUE(is_aggregation(build_frame(s), 4791));
  EXPECT_FALSE(is_aggregation(build_frame(s), 9056));
}

TEST(WireValidity, WellFormedAndEachRule) {
  const Bytes good = build_frame(spec4({1, 2, 3}));
  EXPECT_EQ(check_wellformed(good, 4, 8), Validity::ok);
  auto v = [&](auto mut, int max_elems = 8) {
    Bytes f = good;
    mut(f);
    return check_wellformed(f, 4, max_elems);
  };
  EXPECT_EQ(v([](Bytes& f) { f[42] = 2; }), Validity::bad_version);
  EXPECT_EQ(v([](Bytes& f) { f[42] = 0; }), Validity::bad_version);
  EXPECT_EQ(v([](Bytes&) {}, 2), Validity::bad_count);  // COUNT 3 > MAX_ELEMS 2
  EXPECT_EQ(v([](Bytes&) {}, 3), Validity::ok);         // COUNT = MAX_ELEMS is fine
  EXPECT_EQ(v([](Bytes& f) { put16(&f[38], 30 + 8); }), Validity::bad_udp_length);
  EXPECT_EQ(v([](Bytes& f) { put16(&f[16], static_cast<uint16_t>(f.size() - 13)); }), Validity::bad_ip_length);
  // COUNT says 2 but three elements follow (lengths consistent with the frame): frame length rule.
  EXPECT_EQ(v([](Bytes& f) {
              put16(&f[48], 2);
              put16(&f[38], 30 + 8);
            }),
            Validity::bad_frame_length);
  // Extra trailing byte (padding): UDP/IP lengths no longer match.
  EXPECT_NE(v([](Bytes& f) { f.push_back(0); }), Validity::ok);
  // Truncated frames.
  EXPECT_NE(v([](Bytes& f) { f.pop_back(); }), Validity::ok);
  EXPECT_EQ(v([](Bytes& f) { f.resize(63); }), Validity::too_short);
}

TEST(WireValidity, CountZeroIsMalformed) {
  FrameSpec s = spec4({});
  const Bytes f = build_frame(s);
  EXPECT_EQ(f.size(), 64u);
  EXPECT_EQ(check_wellformed(f, 4, 8), Validity::bad_count);
}

TEST(WireValidity, SixteenBitFormats) {
  FrameSpec s = spec4({});
  s.elem_bytes = 2;
  s.payload = payload_from_elems({0x3f80, 0x4000, 0x4040}, 2);
  const Bytes f = build_frame(s);
  EXPECT_EQ(f.size(), 70u);
  EXPECT_EQ(get16(&f[48]), 3);
  EXPECT_EQ(f[64], 0x80);  // little-endian 0x3f80
  EXPECT_EQ(f[65], 0x3f);
  EXPECT_EQ(check_wellformed(f, 2, 725), Validity::ok);
  EXPECT_NE(check_wellformed(f, 4, 362), Validity::ok);  // as fp32 the lengths disagree
}

TEST(WireBuild, MulticastResultRewrite) {
  FrameSpec s = spec4({0x3f800000, 0x40000000});
  s.hdr.flags = 0xA4;  // unknown bits 7, 5, 2 set; FIN and RESULT clear
  s.ecn = 0b01;
  s.eth_dst = {0x02, 0xaa, 0, 0, 0, 1};
  s.ip_dst = 0x0A0000FE;
  const Bytes base = build_frame(s);
  const BuildMode m = result_mode(true, "01:00:5e:01:07:00", "239.1.7.0");
  const Bytes sum = payload_from_elems({0x40400000, 0x40800000}, 4);
  const Bytes r = build_result(base, sum, /*fin_or=*/true, /*ce_any=*/false, m);
  ASSERT_EQ(r.size(), base.size());
  const AggHeader h = parse_header(r);
  EXPECT_EQ(h.flags, 0xA4 | kFlagFin | kFlagResult);
  EXPECT_EQ(h.rank, 0xFFFF);
  EXPECT_EQ(h.vid, s.hdr.vid);
  EXPECT_EQ(h.cookie, s.hdr.cookie);
  EXPECT_EQ(ecn(r), 0b01);  // no CE anywhere: the copied frame's ECN
  EXPECT_EQ(Mac({r[0], r[1], r[2], r[3], r[4], r[5]}), m.group_mac);
  EXPECT_EQ(Mac({r[6], r[7], r[8], r[9], r[10], r[11]}), s.eth_dst);  // src = copied dst
  EXPECT_EQ(get32(&r[30]), m.group_ip);
  EXPECT_EQ(get32(&r[26]), s.ip_dst);  // ipv4.src = copied ipv4.dst
  EXPECT_EQ(get16(&r[40]), 0);
  EXPECT_TRUE(ipv4_checksum_ok(r));
  EXPECT_EQ(payload_elems(r, 4), (std::vector<uint32_t>{0x40400000, 0x40800000}));
  // Every other byte copied: the IPv4 id/ttl, UDP ports, lengths, TID, reserved.
  for (size_t i : {12, 13, 14, 16, 17, 18, 19, 20, 21, 22, 23, 34, 35, 36, 37, 38, 39, 42, 44, 45, 46, 47, 48, 49})
    EXPECT_EQ(r[i], base[i]) << "byte " << i;
}

TEST(WireBuild, UpstreamPartialSumKeepsDestinations) {
  FrameSpec s = spec4({1});
  s.hdr.flags = kFlagFin;
  s.ecn = 0b10;
  const Bytes base = build_frame(s);
  const BuildMode m = result_mode(false, "02:aa:00:00:00:0b", "10.0.0.253");
  const Bytes r = build_result(base, payload_from_elems({5}, 4), /*fin_or=*/false, /*ce_any=*/true, m);
  const AggHeader h = parse_header(r);
  EXPECT_EQ(h.flags, 0);  // RESULT = 0 upstream; FIN is the OR given (false), not the copied bit
  EXPECT_EQ(ecn(r), kEcnCe);
  EXPECT_EQ(r[15] >> 2, 56);                                        // DSCP kept
  EXPECT_TRUE(std::equal(r.begin(), r.begin() + 6, base.begin()));  // eth.dst unchanged
  EXPECT_EQ(Mac({r[6], r[7], r[8], r[9], r[10], r[11]}), m.own_mac);
  EXPECT_EQ(get32(&r[26]), m.own_ip);
  EXPECT_EQ(get32(&r[30]), s.ip_dst);
  EXPECT_TRUE(ipv4_checksum_ok(r));
}

TEST(WireBuild, RejectsMismatchedSum) {
  const Bytes base = build_frame(spec4({1, 2}));
  EXPECT_THROW(build_result(base, payload_from_elems({1}, 4), false, false, BuildMode{}), WireError);
}

TEST(WireVid, SerialNumberArithmetic) {
  EXPECT_FALSE(vid_stale(5, 5));
  EXPECT_FALSE(vid_stale(6, 5));
  EXPECT_TRUE(vid_stale(4, 5));
  EXPECT_FALSE(vid_stale(0, 0xFFFFFFFFu));  // wrapped: ahead by one
  EXPECT_TRUE(vid_stale(0xFFFFFFFFu, 0));
  EXPECT_FALSE(vid_stale(0x7FFFFFFFu, 0));  // distance 2^31 - 1: ahead
  EXPECT_TRUE(vid_stale(0x80000000u, 0));   // distance 2^31: stale
  EXPECT_EQ(vid_distance(2, 0xFFFFFFFEu), 4u);
}

TEST(WireAddr, ParseAndPrint) {
  EXPECT_EQ(parse_mac("01:00:5E:01:07:0a"), (Mac{1, 0, 0x5e, 1, 7, 10}));
  EXPECT_EQ(mac_to_string(Mac{1, 0, 0x5e, 1, 7, 10}), "01:00:5e:01:07:0a");
  EXPECT_EQ(parse_ipv4("239.1.7.0"), 0xEF010700u);
  EXPECT_EQ(ipv4_to_string(0x0A0000FD), "10.0.0.253");
  for (const char* bad :
       {"", "01:00:5e:01:07", "01:00:5e:01:07:0g", "01-00-5e-01-07-00", "1:0:5e:1:7:0", "01:00:5e:01:07:00:11"})
    EXPECT_THROW(parse_mac(bad), WireError) << bad;
  for (const char* bad : {"", "1.2.3", "1.2.3.4.5", "256.1.1.1", "1.2.3.x", "01.2.3.4", "1..2.3", " 1.2.3.4"})
    EXPECT_THROW(parse_ipv4(bad), WireError) << bad;
}

TEST(WirePcap, RoundTripAnyBytes) {
  const std::string p = tmpfile_path("rt.pcap");
  std::vector<PcapRecord> recs = {{build_frame(spec4({1, 2})), 5}, {Bytes{1, 2, 3}, 1000000007}, {Bytes(), 42}};
  write_pcap(p, recs);
  const auto back = read_pcap(p);
  ASSERT_EQ(back.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(back[i].data, recs[i].data);
    EXPECT_EQ(back[i].ts_ns, recs[i].ts_ns);
  }
}

TEST(WirePcap, ReadsMicrosecondClassicFiles) {
  const std::string p = tmpfile_path("usec.pcap");
  Bytes f = pcap_header(1);
  append_record(f, Bytes{0xde, 0xad, 0xbe, 0xef}, 4);
  write_bytes(p, f);
  const auto r = read_pcap(p);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].data, (Bytes{0xde, 0xad, 0xbe, 0xef}));
  EXPECT_EQ(r[0].ts_ns, 1000000000ull);
}

TEST(WirePcap, ErrorsAreOneClearLine) {
  EXPECT_THROW(read_pcap(tmpfile_path("does-not-exist.pcap")), WireError);
  const std::string junk = tmpfile_path("junk.pcap");
  write_bytes(junk,
              Bytes{'h', 'e', 'l', 'l', 'o', ' ', 'w', 'o', 'r', 'l', 'd', '!', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0});
  EXPECT_THROW(read_pcap(junk), WireError);
  const std::string raw = tmpfile_path("rawip.pcap");
  write_bytes(raw, pcap_header(101));  // LINKTYPE_RAW
  EXPECT_THROW(read_pcap(raw), WireError);
  const std::string trunc = tmpfile_path("trunc.pcap");
  Bytes t = pcap_header(1);
  append_record(t, Bytes(10, 0xab), 20);  // record says 20 bytes, 10 follow
  write_bytes(trunc, t);
  try {
    read_pcap(trunc);
    FAIL() << "truncated record accepted";
  } catch (const WireError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find(trunc), std::string::npos);
    EXPECT_EQ(m.find('\n'), std::string::npos);
  }
}

// ---------------------------------------------------------------------------------------------
// CTX.json

static const char* kGoodCtx = R"({ "agg_port": 9056,
  "contexts": [
    { "jid": 7, "tid": 0, "members": [3, 0, 1, 2], "mode": "multicast",
      "group_mac": "01:00:5e:01:07:00", "group_ip": "239.1.7.0", "timeout_cycles": 0 },
    { "jid": 9, "tid": 1, "members": [0, 1], "mode": "upstream", "upstream_port": 3,
      "src_mac": "02:aa:00:00:00:09", "src_ip": "10.0.0.253" } ] })";

TEST(WireCtx, ParsesTheToolsExample) {
  const CtxFile c = parse_ctx_text(kGoodCtx, 4, 8);
  EXPECT_EQ(c.agg_port, 9056);
  ASSERT_EQ(c.contexts.size(), 2u);
  EXPECT_EQ(c.contexts[0].members, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_TRUE(c.contexts[0].multicast);
  EXPECT_EQ(c.contexts[0].group_ip, 0xEF010700u);
  EXPECT_FALSE(c.contexts[1].multicast);
  EXPECT_EQ(c.contexts[1].upstream_port, 3);
  EXPECT_EQ(c.contexts[1].src_mac, (Mac{2, 0xaa, 0, 0, 0, 9}));
  EXPECT_EQ(c.contexts[1].timeout_cycles, 0u);  // default
}

TEST(WireCtx, Defaults) {
  const CtxFile c = parse_ctx_text(R"({"contexts": [{"jid": 1, "tid": 0, "members": [0], "mode": "multicast",
      "group_mac": "01:00:5e:00:00:01", "group_ip": "239.0.0.1"}]})",
                                   2, 1);
  EXPECT_EQ(c.agg_port, 9056);
  EXPECT_EQ(c.contexts[0].timeout_cycles, 0u);
}

struct BadCtx {
  const char* name;
  std::string text;
  const char* needle;  // part of the message that says what is wrong
};

class WireCtxErrors : public ::testing::TestWithParam<BadCtx> {};

static std::string mc(const std::string& extra, const std::string& members = "[0, 1]", const std::string& jid = "7") {
  return R"({"jid": )" + jid + R"(, "tid": 0, "members": )" + members +
         R"(, "mode": "multicast", "group_mac": "01:00:5e:01:07:00", "group_ip": "239.1.7.0")" + extra + "}";
}
static std::string upc(const std::string& up, const std::string& extra = "") {
  return R"({"jid": 9, "tid": 1, "members": [0, 1], "mode": "upstream", "upstream_port": )" + up +
         R"(, "src_mac": "02:aa:00:00:00:09", "src_ip": "10.0.0.253")" + extra + "}";
}
static std::string file(const std::string& entries, const std::string& extra = "") {
  return R"({"agg_port": 9056, "contexts": [)" + entries + "]" + extra + "}";
}

TEST_P(WireCtxErrors, OneClearError) {
  const BadCtx& b = GetParam();
  try {
    parse_ctx_text(b.text, 4, 2);
    FAIL() << b.name << " accepted";
  } catch (const CtxError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find(b.needle), std::string::npos) << m;
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  }
}

INSTANTIATE_TEST_SUITE_P(
    All, WireCtxErrors,
    ::testing::Values(
        BadCtx{"not_json", "{", "not valid JSON"},
        BadCtx{"unknown_top", file(mc("")).substr(0, file(mc("")).size() - 1) + R"(, "colour": 1})",
               "unknown field 'colour'"},
        BadCtx{"unknown_entry", file(mc(R"(, "prio": 3)")), "unknown field 'prio'"},
        BadCtx{"duplicate", file(mc("") + "," + mc("")), "duplicate (jid 7, tid 0)"},
        BadCtx{"empty_members", file(mc("", "[]")), "'members' is empty"},
        BadCtx{"member_out_of_range", file(mc("", "[0, 4]")), "member port must be between 0 and 3"},
        BadCtx{"member_negative", file(mc("", "[-1]")), "member port must be between 0 and 3"},
        BadCtx{"member_twice", file(mc("", "[1, 1]")), "listed twice"},
        BadCtx{"upstream_is_member", file(upc("1")), "upstream_port 1 is also a member"},
        BadCtx{"upstream_out_of_range", file(upc("4")), "upstream_port must be between 0 and 3"},
        BadCtx{"missing_group_ip",
               file(R"({"jid": 7, "tid": 0, "members": [0], "mode": "multicast", "group_mac": "01:00:5e:01:07:00"})"),
               "missing field 'group_ip'"},
        BadCtx{
            "missing_upstream_port",
            file(
                R"({"jid": 7, "tid": 0, "members": [0], "mode": "upstream", "src_mac": "02:00:00:00:00:01", "src_ip": "10.0.0.1"})"),
            "missing field 'upstream_port'"},
        BadCtx{"missing_jid", file(R"({"tid": 0, "members": [0], "mode": "multicast"})"), "missing field 'jid'"},
        BadCtx{
            "bad_mac",
            file(
                R"({"jid": 7, "tid": 0, "members": [0], "mode": "multicast", "group_mac": "01:00:5e:01:07", "group_ip": "239.1.7.0"})"),
            "malformed MAC address"},
        BadCtx{"bad_ip", file(upc("3").substr(0, upc("3").size() - 13) + R"("10.0.0.300"})"), "malformed IPv4 address"},
        BadCtx{"bad_mode", file(R"({"jid": 7, "tid": 0, "members": [0], "mode": "broadcast"})"), "mode must be"},
        BadCtx{"wrong_mode_field", file(mc(R"(, "upstream_port": 3)")), "does not apply to multicast"},
        BadCtx{"too_many", file(mc("", "[0]", "1") + "," + mc("", "[0]", "2") + "," + mc("", "[0]", "3")),
               "3 contexts given but the design has only 2"},
        BadCtx{"jid_range", file(mc("", "[0]", "65536")), "jid must be between 0 and 65535"},
        BadCtx{"jid_type", file(mc("", "[0]", "\"7\"")), "jid must be an integer"},
        BadCtx{"agg_port_range", R"({"agg_port": 70000, "contexts": []})", "agg_port must be between"},
        BadCtx{"timeout_negative", file(mc(R"(, "timeout_cycles": -1)")), "timeout_cycles must be between"},
        BadCtx{"no_contexts", R"({"agg_port": 9056})", "missing field 'contexts'"}),
    [](const ::testing::TestParamInfo<BadCtx>& i) { return std::string(i.param.name); });

TEST(WireCtx, JsonRoundTrip) {
  const CtxFile a = parse_ctx_text(kGoodCtx, 4, 8);
  const CtxFile b = parse_ctx(to_json(a), 4, 8);
  ASSERT_EQ(b.contexts.size(), 2u);
  EXPECT_EQ(to_json(a), to_json(b));
  EXPECT_EQ(b.contexts[1].src_ip, parse_ipv4("10.0.0.253"));
  EXPECT_EQ(b.contexts[0].group_mac, parse_mac("01:00:5e:01:07:00"));
}

TEST(WireCtx, LoadFileNamesThePath) {
  const std::string p = tmpfile_path("ctx.json");
  std::ofstream(p) << R"({"contexts": [{"jid": 1}]})";
  try {
    load_ctx(p, 4, 8);
    FAIL();
  } catch (const CtxError& e) {
    EXPECT_EQ(std::string(e.what()).rfind(p + ": context 0: missing field", 0), 0u) << e.what();
  }
}
