// mgmt_eth_tb: management over Ethernet through the whole board shell as panama-gen --board sume
// writes it (four 10G ports: CDC FIFOs at the MAC clock, panama_mgmt_eth, the generated core at
// its own clock). Requests go in as Ethernet frames on the MAC side; their responses, the core's
// built frames and the bypass traffic come out of the MAC side. Expected frames are built here:
// Ethernet/IPv4/UDP bytes and the RFC 1071 checksum by this file, tags by siphash_ref.h,
// aggregation frames and their result by the wire library with the host CPU's float addition.
//   - a correct request writes and reads registers: a context is programmed and enabled, an
//     aggregation through it completes, its counters are read back;
//   - a wrong key, a replay, a request from a non-management port, malformed requests (bad magic,
//     IPv4/UDP lengths that disagree, a payload that is not whole words): no response, no
//     register changed, exactly one counter moved;
//   - a frame to another UDP port is not a request and passes through the core unchanged;
//   - bypass frames on every port keep flowing, unchanged and in order, while all that happens.
// With --serve PORTFILE it is instead the harness of the controller's test
// (tests/mgmt_controller.sh): it binds a UDP socket on 127.0.0.1, writes its port number to
// PORTFILE, and turns each datagram into a request frame on port 0 and each response frame back
// into a datagram to its sender, until it is killed.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <deque>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "Vpanama_board_shell.h"
#include "board_tb.h"
#include "siphash_ref.h"
#include "vl_util.h"
#include "verilated.h"
#include "protocol.h"
#include "wire.h"

namespace {

using Bytes = std::vector<uint8_t>;
// The board's shape (board.cmake: sume by default; -DTB_PORTS=2 -DTB_W=512 -DTB_AGG_PORT=1 for u250).
#ifndef TB_PORTS
#define TB_PORTS 4
#define TB_W 64
#define TB_AGG_PORT 3
#endif
constexpr int kPorts = TB_PORTS, kAggPort = TB_AGG_PORT, kKB = TB_W / 8;
// The test context's members: two ports, the first of them the management port on two ports.
constexpr int kM1 = kPorts == 2 ? 0 : 1, kM2 = kPorts == 2 ? 1 : 2;
constexpr uint32_t kAllPorts = (1u << kPorts) - 1;
constexpr uint16_t kMgmtUdp = panama::proto::kMgmtUdpPort;
// The values the testbench top is verilated with (-GMGMT_*, board.cmake).
const uint8_t kKey[16] = {0x2b, 0x7e, 0x15, 0x16, 0x28, 0xae, 0xd2, 0xa6,
                          0xab, 0xf7, 0x15, 0x88, 0x09, 0xcf, 0x4f, 0x3c};
const uint8_t kBoardMac[6] = {0x02, 0x50, 0x4e, 0x4d, 0x00, 0x07};
constexpr uint32_t kBoardIp = 0xc0a83902;  // 192.168.57.2

// ---- frames, built byte by byte ----
void put16(Bytes& b, size_t at, uint16_t v) {
  b[at] = uint8_t(v >> 8);
  b[at + 1] = uint8_t(v);
}
void put32(Bytes& b, size_t at, uint32_t v) {
  put16(b, at, uint16_t(v >> 16));
  put16(b, at + 2, uint16_t(v));
}
uint16_t rfc1071(const uint8_t* p, size_t n) {
  uint32_t s = 0;
  for (size_t i = 0; i < n; i += 2) s += uint32_t(p[i]) << 8 | p[i + 1];
  while (s >> 16) s = (s & 0xffff) + (s >> 16);
  return uint16_t(~s);
}
struct Addr {
  uint8_t mac[6];
  uint32_t ip;
  uint16_t port;
};
Addr host(int p) {
  return {{0x02, 0, 0, 0, 0, uint8_t(0x10 + p)}, 0xc0a83900u + 10u + unsigned(p), uint16_t(40000 + p)};
}
const Addr kBoard = {
    {kBoardMac[0], kBoardMac[1], kBoardMac[2], kBoardMac[3], kBoardMac[4], kBoardMac[5]}, kBoardIp, kMgmtUdp};

Bytes udp_frame(const Addr& src, const Addr& dst, const Bytes& payload, int ip_len_delta = 0) {
  Bytes f(42 + payload.size());
  std::memcpy(&f[0], dst.mac, 6);
  std::memcpy(&f[6], src.mac, 6);
  put16(f, 12, 0x0800);
  f[14] = 0x45;
  put16(f, 16, uint16_t(28 + payload.size() + ip_len_delta));
  put16(f, 20, 0x4000);  // DF
  f[22] = 64;
  f[23] = 17;
  put32(f, 26, src.ip);
  put32(f, 30, dst.ip);
  put16(f, 24, rfc1071(&f[14], 20));
  put16(f, 34, src.port);
  put16(f, 36, dst.port);
  put16(f, 38, uint16_t(8 + payload.size()));
  std::memcpy(&f[42], payload.data(), payload.size());
  if (f.size() < 60) f.resize(60, 0);  // Ethernet padding
  return f;
}

// ---- the management protocol (docs/mgmt.md) ----
struct Op {
  uint8_t code;  // 1 read, 2 write, 3 read-modify-write
  uint32_t addr, mask, value;
};
Bytes le_words(const std::vector<uint64_t>& w) {
  Bytes b;
  for (uint64_t x : w)
    for (int i = 0; i < 8; ++i) b.push_back(uint8_t(x >> (8 * i)));
  return b;
}
Bytes tagged(const std::vector<uint64_t>& w, const uint8_t key[16]) {
  Bytes b = le_words(w);
  const uint64_t t = sip::siphash24(key, b.data(), b.size());
  for (int i = 0; i < 8; ++i) b.push_back(uint8_t(t >> (8 * i)));
  return b;
}
Bytes request(uint32_t id, uint64_t seq, const std::vector<Op>& ops, const uint8_t key[16] = kKey) {
  std::vector<uint64_t> w{uint64_t(id) << 32 | panama::proto::kMgmtReqMagic, seq};
  for (const auto& o : ops) {
    w.push_back(uint64_t(o.code) | uint64_t(o.addr) << 32);
    w.push_back(uint64_t(o.mask) | uint64_t(o.value) << 32);
  }
  return tagged(w, key);
}
// The response the board must send: values per operation (status OKAY).
// status[i] defaults to 0 (OKAY).
Bytes response(uint32_t id, uint64_t seq, const std::vector<uint32_t>& values,
               const std::vector<uint8_t>& status = {}) {
  std::vector<uint64_t> w{uint64_t(id) << 32 | panama::proto::kMgmtRspMagic, seq};
  for (size_t i = 0; i < values.size(); ++i)
    w.push_back(uint64_t(values[i]) << 32 | (i < status.size() ? status[i] : 0));
  return tagged(w, kKey);
}

// ---- the bench: two unrelated clocks, MAC-side traffic ----
struct Bench {
  std::unique_ptr<VerilatedContext> ctx = std::make_unique<VerilatedContext>();
  std::unique_ptr<Vpanama_board_shell> top = std::make_unique<Vpanama_board_shell>(ctx.get());
  std::mt19937 rng{11};
  std::deque<Bytes> rx_q[kPorts];          // frames to send into each port
  std::set<std::vector<uint8_t>> bad_fcs;  // frames the MAC flags bad (tuser on the last beat)
  bool cur_bad[kPorts] = {};
  Bytes cur[kPorts];
  size_t cur_off[kPorts] = {};
  bool gap[kPorts] = {};
  Bytes tx_acc[kPorts];
  std::vector<Bytes> tx[kPorts];  // frames sent out of each port
  long t_core = 0, t_mac = 0;     // next edge times; half periods 10 and 13 (200 vs ~154 MHz)
  bool core_hi = false, mac_hi = false;

  void mac_rise() {
    for (int p = 0; p < kPorts; ++p) {
      bool v = false;
      if (cur_off[p] >= cur[p].size() && !rx_q[p].empty() && !gap[p]) {
        cur[p] = rx_q[p].front();
        rx_q[p].pop_front();
        cur_bad[p] = bad_fcs.count(cur[p]) != 0;
        cur_off[p] = 0;
      }
      gap[p] = false;
      uint64_t d[kKB / 8] = {};
      uint64_t k = 0;
      bool last = false;
      if (cur_off[p] < cur[p].size() && rng() % 8 != 0) {  // idle beats inside frames too
        for (int i = 0; i < kKB && cur_off[p] + size_t(i) < cur[p].size(); ++i) {
          d[i / 8] |= uint64_t(cur[p][cur_off[p] + size_t(i)]) << (8 * (i % 8));
          k |= uint64_t(1) << i;
        }
        cur_off[p] += kKB;
        last = cur_off[p] >= cur[p].size();
        gap[p] = last;  // at least one idle beat between frames
        v = true;
      }
      for (int c = 0; c < kKB / 8; ++c) tb::set_bits(top->mac_rx_tdata, 8 * kKB * p + 64 * c, 64, d[c]);
      tb::set_bits(top->mac_rx_tkeep, kKB * p, kKB, k);
      tb::set_bits(top->mac_rx_tvalid, p, 1, v);
      tb::set_bits(top->mac_rx_tlast, p, 1, last);
      tb::set_bits(top->mac_rx_tuser, p, 1, last && cur_bad[p]);
      tb::set_bits(top->mac_tx_tready, p, 1, rng() % 5 != 0);
    }
    top->eval();
    for (int p = 0; p < kPorts; ++p) {
      if (!tb::get_bits(top->mac_tx_tvalid, p, 1) || !tb::get_bits(top->mac_tx_tready, p, 1)) continue;
      const uint64_t k = tb::get_bits(top->mac_tx_tkeep, kKB * p, kKB);
      for (int i = 0; i < kKB; ++i)
        if (k >> i & 1) tx_acc[p].push_back(uint8_t(tb::get_bits(top->mac_tx_tdata, 8 * kKB * p + 8 * i, 8)));
      if (tb::get_bits(top->mac_tx_tlast, p, 1)) {
        tx[p].push_back(tx_acc[p]);
        tx_acc[p].clear();
      }
    }
    top->mac_clk = kAllPorts;
    top->eval();
  }
  // One edge of whichever clock comes next.
  void edge() {
    if (t_core <= t_mac) {
      core_hi = !core_hi;
      top->core_clk = core_hi;
      top->eval();
      t_core += 10;
    } else {
      mac_hi = !mac_hi;
      if (mac_hi) {
        mac_rise();
      } else {
        top->mac_clk = 0;
        top->eval();
      }
      t_mac += 13;
    }
  }
  void run_core_cycles(long n) {
    const long end = t_core + 20 * n;
    while (t_core < end) edge();
  }
  void reset() {
    top->core_rst = 1;
    top->mac_rst = kAllPorts;
    run_core_cycles(20);
    top->core_rst = 0;
    top->mac_rst = 0;
    run_core_cycles(20);
  }
  bool idle() const {
    for (int p = 0; p < kPorts; ++p)
      if (!rx_q[p].empty() || cur_off[p] < cur[p].size()) return false;
    return true;
  }
  // Runs until every queued frame is in and the design has had time to answer.
  void drain(long extra = 3000) {
    while (!idle()) run_core_cycles(50);
    run_core_cycles(extra);
  }
};

// Frames of a port's output, split into responses from the board, built aggregation frames, and
// the rest (bypass).
bool is_from_board(const Bytes& f) {
  return f.size() >= 42 && std::memcmp(&f[6], kBoardMac, 6) == 0 && f[23] == 17 &&
         (uint16_t(f[34] << 8 | f[35]) == kMgmtUdp);
}
bool is_arp_from_board(const Bytes& f) {
  return f.size() >= 42 && f[12] == 0x08 && f[13] == 0x06 && std::memcmp(&f[6], kBoardMac, 6) == 0;
}
bool is_agg(const Bytes& f) {
  return panama::wire::classify(f, panama::wire::kDefaultAggPort) == panama::wire::Class::aggregation;
}

struct Regs {
  uint32_t id, size, ctx_base, ctx_stride, port_base, port_stride;
  std::map<std::string, uint32_t> g, c, p;
  // Context registers: reset value, and the bits their fields hold (all 32 without fields);
  // the number of contexts, the read-write ones, and the global registers' reset values.
  std::map<std::string, uint32_t> reset, bits, g_reset;
  int contexts = 0;
  std::vector<std::string> ctx_rw;
};
Regs load_regs(const std::string& path) {
  std::ifstream in(path);
  const auto j = nlohmann::json::parse(in);
  Regs r{};
  for (const auto& x : j["global"]) {
    r.g[x["name"]] = x["offset"];
    if (x["name"] == "ID") r.id = x["reset"];
    r.g_reset[x["name"]] = x["reset"];
  }
  r.size = j["size"];
  r.contexts = j["contexts"];
  r.ctx_base = j["context_block"]["base"];
  r.ctx_stride = j["context_block"]["stride"];
  for (const auto& x : j["context_block"]["registers"]) {
    r.c[x["name"]] = x["offset"];
    r.reset[x["name"]] = x["reset"];
    if (x["access"] == "RW") r.ctx_rw.push_back(x["name"]);
    uint32_t m = x["fields"].empty() ? ~0u : 0u;
    for (const auto& f : x["fields"]) {
      const int w = f["width"], lsb = f["lsb"];
      m |= (w >= 32 ? ~0u : (1u << w) - 1) << lsb;
    }
    r.bits[x["name"]] = m;
  }
  r.port_base = j["port_block"]["base"];
  r.port_stride = j["port_block"]["stride"];
  for (const auto& x : j["port_block"]["registers"]) r.p[x["name"]] = x["offset"];
  return r;
}

struct Counters {
  uint32_t v[6];
};
Counters counters(Bench& b) {
  const auto& t = *b.top;
  return {{t.mgmt_accepted, t.mgmt_bad_port, t.mgmt_malformed, t.mgmt_bad_tag, t.mgmt_replay, t.mgmt_rx_busy}};
}
const char* kCounterNames[6] = {"accepted", "bad_port", "malformed", "bad_tag", "replay", "rx_busy"};

// The controller's harness: datagrams on 127.0.0.1 <-> frames on port 0 of the shell.
int serve(const std::string& port_file) {
  const int fd = socket(AF_INET, SOCK_DGRAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t alen = sizeof a;
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&a), &alen) != 0) {
    std::perror("mgmt_eth_tb: socket");
    return 1;
  }
  {
    std::ofstream pf(port_file);
    pf << ntohs(a.sin_port) << "\n";
  }
  Bench b;
  b.reset();
  size_t seen = 0;
  long quiet = 0;  // core cycles since the last datagram
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    // Sleep only when nothing can be under way.
    while (poll(&p, 1, quiet > 20000 ? 5 : 0) > 0) {
      uint8_t buf[2048];
      sockaddr_in from{};
      socklen_t fl = sizeof from;
      const ssize_t n = recvfrom(fd, buf, sizeof buf, 0, reinterpret_cast<sockaddr*>(&from), &fl);
      if (n < 0) break;
      Addr src = host(0);
      src.port = ntohs(from.sin_port);
      b.rx_q[0].push_back(udp_frame(src, kBoard, Bytes(buf, buf + n)));
      quiet = 0;
    }
    b.run_core_cycles(200);
    quiet += 200;
    for (; seen < b.tx[0].size(); ++seen) {
      const Bytes& f = b.tx[0][seen];
      if (!is_from_board(f) || f.size() < 42) continue;
      const size_t ulen = size_t(f[38] << 8 | f[39]);
      sockaddr_in to{};
      to.sin_family = AF_INET;
      to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      to.sin_port = htons(uint16_t(f[36] << 8 | f[37]));
      if (ulen >= 8 && 42 + ulen - 8 <= f.size())
        sendto(fd, f.data() + 42, ulen - 8, 0, reinterpret_cast<sockaddr*>(&to), sizeof to);
    }
  }
}

// The scenario of the test: the bench, what was sent, what must come back.
struct Scenario {
  Bench b;
  Regs R;
  std::vector<Bytes> bypass_sent[kPorts];
  int bypass_id = 0;
  std::vector<Bytes> responses_expected;  // on port 0, in order
  std::vector<Bytes> arp_expected;        // ARP replies on port 0, in order
  uint64_t seq = 1000;
  Bytes built;  // the aggregation's result frame
  uint32_t busy_ok = 0, busy_dropped = 0;

  uint32_t ctx(int c, const char* n) const { return R.ctx_base + uint32_t(c) * R.ctx_stride + R.c.at(n); }
  uint32_t port(int p, const char* n) const { return R.port_base + uint32_t(p) * R.port_stride + R.p.at(n); }

  // Bypass traffic on every port: UDP to another host, lengths 60..300.
  void add_bypass(int p) {
    Bytes pay(size_t(18 + b.rng() % 240));
    for (size_t i = 0; i < pay.size(); ++i) pay[i] = uint8_t(bypass_id * 7 + int(i));
    ++bypass_id;
    Addr dst{{0x02, 0, 0, 0, 0, 0x99}, 0xc0a83963, 5000};
    Bytes f = udp_frame(host(p), dst, pay);
    bypass_sent[p].push_back(f);
    b.rx_q[p].push_back(f);
  }
  void with_bypass(int n) {
    for (int i = 0; i < n; ++i)
      for (int p = 0; p < kPorts; ++p) add_bypass(p);
  }
  // A good request from port 0 (with bypass traffic around it on every port).
  void good(uint32_t id, const std::vector<Op>& ops, const std::vector<uint32_t>& want,
            const std::vector<uint8_t>& status = {}) {
    with_bypass(1);
    ++seq;
    b.rx_q[0].push_back(udp_frame(host(0), kBoard, request(id, seq, ops)));
    with_bypass(1);
    responses_expected.push_back(udp_frame(kBoard, host(0), response(id, seq, want, status)));
    b.drain();
  }
  // A rejected frame: no response, registers untouched (checked later), one counter moved.
  // which < 0: not a request at all; it must come back out of its port like bypass traffic.
  void rejected(const char* what, int p, const Bytes& f, int which) {
    const Counters before = counters(b);
    with_bypass(1);
    b.rx_q[p].push_back(f);
    if (which < 0) bypass_sent[p].push_back(f);
    with_bypass(1);
    b.drain();
    const Counters after = counters(b);
    for (int i = 0; i < 6; ++i)
      CHECK(after.v[i] - before.v[i] == (i == which ? 1u : 0u), "%s: counter %s moved by %u\n", what, kCounterNames[i],
            after.v[i] - before.v[i]);
  }

  // An ARP frame (RFC 826) from host p: operation oper, target IPv4 tpa, to broadcast or the board.
  static Bytes arp_frame(int p, uint32_t tpa, uint16_t oper, bool bcast) {
    const Addr h = host(p);
    Bytes f(60, 0);
    for (int i = 0; i < 6; ++i) f[size_t(i)] = bcast ? 0xff : kBoardMac[i];
    std::memcpy(&f[6], h.mac, 6);
    put16(f, 12, 0x0806);
    put16(f, 14, 1);
    put16(f, 16, 0x0800);
    f[18] = 6, f[19] = 4;
    put16(f, 20, oper);
    std::memcpy(&f[22], h.mac, 6);
    put32(f, 28, h.ip);
    put32(f, 38, tpa);
    return f;
  }
  // The board's reply to host p, byte by byte from RFC 826 (padded to 60 bytes).
  static Bytes arp_reply(int p) {
    const Addr h = host(p);
    Bytes f(60, 0);
    std::memcpy(&f[0], h.mac, 6);
    std::memcpy(&f[6], kBoardMac, 6);
    put16(f, 12, 0x0806);
    put16(f, 14, 1);
    put16(f, 16, 0x0800);
    f[18] = 6, f[19] = 4;
    put16(f, 20, 2);
    std::memcpy(&f[22], kBoardMac, 6);
    put32(f, 28, kBoardIp);
    std::memcpy(&f[32], h.mac, 6);
    put32(f, 38, h.ip);
    return f;
  }
  // ARP for the management address: answered on the management port (broadcast or to the
  // board's MAC); not answered for another address, an ARP reply, on another port, or with a
  // bad FCS. Every request goes on through the core like any bypass frame (the switch beside the
  // board floods it; the bad one with tuser, as rule 1 passes bypass frames).
  void arp() {
    auto send = [&](int p, const Bytes& f, bool answered, bool bad = false) {
      with_bypass(1);
      if (bad) b.bad_fcs.insert(f);
      b.rx_q[p].push_back(f);
      bypass_sent[p].push_back(f);
      if (answered) arp_expected.push_back(arp_reply(p));
      with_bypass(1);
      b.drain();
    };
    send(0, arp_frame(0, kBoardIp, 1, true), true);
    send(0, arp_frame(0, kBoardIp, 1, false), true);
    send(0, arp_frame(0, kBoardIp ^ 1, 1, true), false);
    send(0, arp_frame(0, kBoardIp, 2, true), false);
    send(1, arp_frame(1, kBoardIp, 1, true), false);
    Bytes odd = arp_frame(0, kBoardIp, 1, true);
    odd[59] = 1;  // a distinct frame, flagged bad by the MAC
    send(0, odd, false, true);
  }

  void program() {
    // 1. Identity, then program context 0: JID 7, TID 0, multicast to group 02:aa:..:01 / 10.9.9.9,
    //    members kM1 and kM2 (ports 1 and 2; 0 and 1 on two ports); enable, read its status back.
    good(1, {{1, R.g.at("ID"), 0, 0}}, {R.id});
    good(2,
         {{2, ctx(0, "CTX_JID"), 0, 7},
          {2, ctx(0, "CTX_TID"), 0, 0},
          {2, ctx(0, "CTX_MODE"), 0, 0},
          {2, ctx(0, "CTX_GROUP_MAC_HI"), 0, 0x02aa},
          {2, ctx(0, "CTX_GROUP_MAC_LO"), 0, 0x00000001},
          {2, ctx(0, "CTX_GROUP_IP"), 0, 0x0a090909},
          {2, ctx(0, "CTX_MEMBERS0"), 0, 1u << kM1 | 1u << kM2},
          {1, ctx(0, "CTX_JID"), 0, 0}},
         {7, 0, 0, 0x02aa, 1, 0x0a090909, 1u << kM1 | 1u << kM2, 7});
    // Read-modify-write of the enable bit; the status read after it sees ENABLED.
    good(3, {{3, ctx(0, "CTX_CTRL"), 1, 1}, {1, ctx(0, "CTX_STATUS"), 0, 0}}, {0, 1});
  }

  void aggregate() {
    // 2. An aggregation through the context: its members contribute; the sum leaves kAggPort.
    namespace w = panama::wire;
    const std::vector<float> a = {1.5f, -2.25f, 3.0e7f, 0.1f}, c2 = {0.5f, 4.0f, -1.0f, 0.2f};
    auto contrib = [&](int p, const std::vector<float>& v) {
      w::FrameSpec s;
      s.eth_src = w::Mac{0x02, 0, 0, 0, 0, uint8_t(0x10 + p)};
      s.ip_src = 0x0a000001u + unsigned(p);
      s.hdr.jid = 7;
      s.hdr.tid = 0;
      s.hdr.vid = 0;
      s.hdr.flags = w::kFlagFin;
      s.hdr.rank = uint16_t(p);
      std::vector<uint32_t> e;
      for (float x : v) {
        uint32_t u;
        std::memcpy(&u, &x, 4);
        e.push_back(u);
      }
      s.payload = w::payload_from_elems(e, 4);
      return w::build_frame(s);
    };
    const Bytes f1 = contrib(kM1, a), f2 = contrib(kM2, c2);
    std::vector<uint32_t> sum;
    for (size_t i = 0; i < a.size(); ++i) {
      const float s = a[i] + c2[i];  // the host CPU's addition (numerics.md)
      uint32_t u;
      std::memcpy(&u, &s, 4);
      sum.push_back(u);
    }
    w::BuildMode mode;
    mode.group_mac = w::Mac{0x02, 0xaa, 0, 0, 0, 1};
    mode.group_ip = 0x0a090909;
    // FIN on both; neither is CE-marked (ECT(0)).
    built = w::build_result(f1, w::payload_from_elems(sum, 4), true, false, mode);
    with_bypass(1);
    b.rx_q[kM1].push_back(f1);
    b.rx_q[kM2].push_back(f2);
    with_bypass(1);
    b.drain();
  }

  void read_counters() {
    // 3. Counters through management: the vector completed, each member admitted one, one built frame.
    good(4,
         {{1, ctx(0, "CTX_VECTORS_COMPLETED_LO"), 0, 0},
          {1, port(kM1, "PORT_AGG_ADMITTED_LO"), 0, 0},
          {1, port(kM2, "PORT_AGG_ADMITTED_LO"), 0, 0},
          {1, R.g.at("AGG_TX_FRAMES_LO"), 0, 0}},
         {1, 1, 1, 1});
  }

  void refused() {
    // 4. Refused requests; each would write context 1's JID. Counters: 0 accepted .. 5 rx_busy.
    const std::vector<Op> evil = {{2, ctx(1, "CTX_JID"), 0, 0xbad}};
    uint8_t wrong[16];
    std::memcpy(wrong, kKey, 16);
    wrong[15] ^= 1;
    rejected("wrong key", 0, udp_frame(host(0), kBoard, request(50, seq + 1, evil, wrong)), 3);
    {
      // A replay: a captured good request sent again (its sequence number is not above the last).
      const Bytes old = udp_frame(host(0), kBoard,
                                  request(3, 1003, {{3, ctx(0, "CTX_CTRL"), 1, 1}, {1, ctx(0, "CTX_STATUS"), 0, 0}}));
      rejected("replay", 0, old, 4);
      rejected("older sequence", 0, udp_frame(host(0), kBoard, request(51, seq - 1, evil)), 4);
    }
    rejected("port 1", 1, udp_frame(host(1), kBoard, request(52, seq + 2, evil)), 1);
    rejected("last port", kPorts - 1, udp_frame(host(kPorts - 1), kBoard, request(53, seq + 3, evil)), 1);
    {
      Bytes r = request(54, seq + 4, evil);
      r[0] ^= 0x20;  // magic "pMG1", retagged so only the magic is wrong
      std::vector<uint64_t> words;
      for (size_t i = 0; i + 8 < r.size(); i += 8) {
        uint64_t x = 0;
        for (int k = 0; k < 8; ++k) x |= uint64_t(r[i + size_t(k)]) << (8 * k);
        words.push_back(x);
      }
      rejected("bad magic", 0, udp_frame(host(0), kBoard, tagged(words, kKey)), 2);
    }
    rejected("IPv4 length disagrees with UDP", 0, udp_frame(host(0), kBoard, request(55, seq + 5, evil), 8), 2);
    {
      Bytes r = request(56, seq + 6, evil);
      r.push_back(0);  // 41 bytes: not whole words
      rejected("partial word", 0, udp_frame(host(0), kBoard, r), 2);
      // A whole, correctly tagged request in a frame the MAC flags bad (FCS error).
      const Bytes f = udp_frame(host(0), kBoard, request(61, seq + 11, evil));
      b.bad_fcs.insert(f);
      rejected("bad FCS", 0, f, 2);
    }
    // Not a request at all (another UDP port): it goes through the core like any bypass frame.
    {
      Addr other = kBoard;
      other.port = kMgmtUdp + 1;
      rejected("other UDP port", 0, udp_frame(host(0), other, request(57, seq + 7, evil)), -1);
      Addr other_ip = kBoard;
      other_ip.ip ^= 1;
      rejected("other IPv4 address", 0, udp_frame(host(0), other_ip, request(58, seq + 8, evil)), -1);
      Addr other_mac = kBoard;
      other_mac.mac[5] ^= 1;
      rejected("other MAC", 0, udp_frame(host(0), other_mac, request(59, seq + 9, evil)), -1);
      Bytes frag = udp_frame(host(0), kBoard, request(60, seq + 10, evil));
      frag[20] |= 0x20;  // more fragments
      frag[24] = frag[25] = 0;
      put16(frag, 24, rfc1071(&frag[14], 20));
      rejected("a fragment", 0, frag, -1);
    }
  }

  // Three good requests back to back on port 0. The first reaches the engine at once; the others
  // arrive while the collector is handing it over or holding another, and each is either executed
  // (answered, in order) or dropped and counted busy: never both, never neither. (Which ones
  // depends on the bus width and the clocks.)
  void busy() {
    const Counters before = counters(b);
    auto responses = [&] {
      std::vector<Bytes> r;
      for (const auto& f : b.tx[0])
        if (is_from_board(f)) r.push_back(f);
      return r;
    };
    const size_t had = responses().size();
    with_bypass(1);
    std::vector<Op> eight;
    for (int i = 0; i < 8; ++i) eight.push_back({1, ctx(0, "CTX_JID"), 0, 0});
    std::vector<Bytes> want;
    for (uint32_t id = 70; id < 73; ++id) {
      ++seq;
      b.rx_q[0].push_back(udp_frame(host(0), kBoard, request(id, seq, eight)));
      want.push_back(udp_frame(kBoard, host(0), response(id, seq, std::vector<uint32_t>(8, 7))));
    }
    with_bypass(1);
    b.drain();
    const Counters after = counters(b);
    const uint32_t ok = after.v[0] - before.v[0], dropped = after.v[5] - before.v[5];
    CHECK(ok + dropped == 3 && ok >= 1 && dropped >= 1, "busy: %u executed, %u dropped of 3\n", ok, dropped);
    for (int i = 1; i < 5; ++i) CHECK(after.v[i] == before.v[i], "busy: counter %s moved\n", kCounterNames[i]);
    const auto all = responses();
    const std::vector<Bytes> got(all.begin() + long(had), all.end());
    CHECK(got.size() == ok && !got.empty() && got[0] == want[0], "busy: %zu responses for %u executed\n", got.size(),
          ok);
    // Each response is one of the expected ones, in order.
    size_t k = 0;
    for (const auto& g : got) {
      while (k < want.size() && want[k] != g) ++k;
      CHECK(k < want.size(), "busy: a response that is none of the requests'\n");
      if (k < want.size()) responses_expected.push_back(want[k++]);
    }
    busy_dropped = dropped;
    busy_ok = ok;
  }

  void still_works() {
    // 5. Context 1 untouched; a good request still works after all that (sequence moves on).
    good(5, {{1, ctx(1, "CTX_JID"), 0, 0}, {1, ctx(0, "CTX_JID"), 0, 0}}, {0, 7});
    // The management counters, just above the register file (docs/mgmt.md), as this scenario
    // produced them: six accepted besides the busy test's (this one included), two from other
    // ports, four malformed, one bad tag, two replays, and the busy test's drops. Writing them is refused (SLVERR),
    // past them DECERR.
    const uint32_t m = R.size;
    good(6,
         {{1, m + 0, 0, 0},
          {1, m + 4, 0, 0},
          {1, m + 8, 0, 0},
          {1, m + 12, 0, 0},
          {1, m + 16, 0, 0},
          {1, m + 20, 0, 0},
          {2, m + 0, 0, 0},
          {1, m + 24, 0, 0}},
         {6 + busy_ok, 2, 4, 1, 2, busy_dropped, 0, 0}, {0, 0, 0, 0, 0, 0, 2, 3});
  }

  void check_outputs() {
    for (int p = 0; p < kPorts; ++p) {
      std::vector<Bytes> resp, agg, rest, arp;
      for (const auto& f : b.tx[p]) {
        if (is_from_board(f))
          resp.push_back(f);
        else if (is_arp_from_board(f))
          arp.push_back(f);
        else if (is_agg(f))
          agg.push_back(f);
        else
          rest.push_back(f);
      }
      if (p == 0) {
        CHECK(resp.size() == responses_expected.size(), "port 0: %zu responses, want %zu\n", resp.size(),
              responses_expected.size());
        for (size_t i = 0; i < resp.size() && i < responses_expected.size(); ++i) {
          CHECK(resp[i] == responses_expected[i], "port 0: response %zu differs from the expected frame\n", i);
          CHECK(rfc1071(&resp[i][14], 20) == 0, "port 0: response %zu has a bad IPv4 checksum\n", i);
        }
        CHECK(arp == arp_expected, "port 0: %zu ARP replies, want %zu (or not the expected frames)\n", arp.size(),
              arp_expected.size());
      } else {
        CHECK(resp.empty(), "port %d: %zu responses (only port 0 is a management port)\n", p, resp.size());
        CHECK(arp.empty(), "port %d: %zu ARP replies (only port 0 is a management port)\n", p, arp.size());
      }
      if (p == kAggPort) {
        CHECK(agg.size() == 1 && agg[0] == built, "port %d: %zu built frames, or not the expected sum\n", p,
              agg.size());
      } else {
        CHECK(agg.empty(), "port %d: %zu aggregation frames out\n", p, agg.size());
      }
      CHECK(rest == bypass_sent[p], "port %d: bypass out %zu frames, in %zu (or altered / reordered)\n", p, rest.size(),
            bypass_sent[p].size());
    }
  }
};

// ---- --fuzz N: the management path under randomised abuse (issue 33) ----
// Random and mutated management frames go in one at a time: valid requests writing, changing
// and reading context 1's fields, and the same with a wrong key, bits flipped anywhere (headers,
// magic, sequence, operations, tag), replayed captures and old or equal sequence numbers, other
// ports, truncated frames, wrong IPv4/UDP lengths, bad FCS, no or too many operations, random
// payloads. What each must do is decided here from docs/mgmt.md's rules alone (`expect`), and
// after each frame: only the counter it names moved, by one; an accepted request got exactly its
// response; a frame that is not a request came out of its port like bypass traffic; and the
// registers, read back with a valid request, are those of a model that applied accepted
// requests only.
enum Outcome { kAccepted = 0, kBadPort = 1, kMalformed = 2, kBadTag = 3, kReplay = 4, kPass = 5 };
const char* kOutcomeNames[6] = {"accepted", "bad_port", "malformed", "bad_tag", "replay", "not a request"};

uint16_t be16(const Bytes& f, size_t at) { return uint16_t(f[at] << 8 | f[at + 1]); }
uint32_t be32(const Bytes& f, size_t at) { return uint32_t(be16(f, at)) << 16 | be16(f, at + 2); }
uint64_t le64(const uint8_t* p) {
  uint64_t x = 0;
  for (int i = 0; i < 8; ++i) x |= uint64_t(p[i]) << (8 * i);
  return x;
}

// docs/mgmt.md, "Framing" and "Authentication", in order: the frame as it arrived on `port`
// (`bad`: the MAC flagged it), the last accepted sequence number.
Outcome expect(const Bytes& f, int port, bool bad, uint64_t last_seq) {
  if (f.size() < 38 || std::memcmp(&f[0], kBoardMac, 6) != 0 || be16(f, 12) != 0x0800 || f[14] != 0x45 ||
      (be16(f, 20) & 0x3fff) != 0 || f[23] != 17 || be32(f, 30) != kBoardIp || be16(f, 36) != kMgmtUdp)
    return kPass;
  if (port != 0) return kBadPort;
  const size_t ip_len = be16(f, 16), udp_len = f.size() >= 40 ? be16(f, 38) : 0;
  if (bad || f.size() < 42 || udp_len < 8 || ip_len != udp_len + 20 || 34 + udp_len > f.size()) return kMalformed;
  const size_t n = udp_len - 8, words = n / 8;
  const uint8_t* pay = &f[42];
  if (n > 256 || n % 8 || words < 5 || words % 2 == 0 || words > 19 ||
      uint32_t(le64(pay)) != panama::proto::kMgmtReqMagic)
    return kMalformed;
  if (sip::siphash24(kKey, pay, n - 8) != le64(pay + n - 8)) return kBadTag;
  return le64(pay + 8) <= last_seq ? kReplay : kAccepted;
}

struct Fuzz {
  Scenario& sc;
  std::mt19937_64 rng;
  std::vector<uint32_t> regs;              // context 1's fields, the registers the requests use
  std::map<uint32_t, uint32_t> val, bits;  // the model: each one's value and writable bits
  uint64_t last_seq = 0;
  std::vector<Bytes> captured;  // accepted request frames, to replay
  long outcomes[6] = {};

  Fuzz(Scenario& s, uint64_t seed) : sc(s), rng(seed) {
    static const char* names[8] = {"CTX_JID",          "CTX_TID",          "CTX_MODE",     "CTX_UPSTREAM_PORT",
                                   "CTX_GROUP_MAC_HI", "CTX_GROUP_MAC_LO", "CTX_GROUP_IP", "CTX_OWN_IP"};
    for (const char* n : names) {
      regs.push_back(sc.ctx(1, n));
      val[regs.back()] = sc.R.reset.at(n);
      bits[regs.back()] = sc.R.bits.at(n);
    }
  }
  uint32_t rnd(uint32_t n) { return uint32_t(rng() % n); }

  // Random operations on the registers; what the response must carry, if the model applies them.
  std::vector<Op> random_ops(int n) {
    std::vector<Op> ops;
    for (int i = 0; i < n; ++i) {
      const uint32_t a = regs[rnd(uint32_t(regs.size()))];
      const uint32_t k = rnd(10);
      const uint8_t code = k < 4 ? 2 : k < 7 ? 3 : k < 9 ? 1 : uint8_t(4 + rnd(252));  // some unknown codes
      ops.push_back({code, a, uint32_t(rng()), uint32_t(rng())});
    }
    return ops;
  }
  // Applies an accepted request's operations to the model; the values and statuses it answers.
  void apply(const std::vector<Op>& ops, std::vector<uint32_t>& values, std::vector<uint8_t>& status) {
    for (const auto& o : ops) {
      uint32_t& r = val.at(o.addr);
      const uint32_t old = r;
      uint8_t st = 0;
      if (o.code == 1) {
        values.push_back(old);
      } else if (o.code == 2) {
        r = o.value & bits.at(o.addr);
        values.push_back(o.value);
      } else if (o.code == 3) {
        r = ((old & ~o.mask) | (o.value & o.mask)) & bits.at(o.addr);
        values.push_back(old);
      } else {
        values.push_back(0);
        st = 0xff;
      }
      status.push_back(st);
    }
  }
  static std::vector<Op> ops_of(const Bytes& pay) {
    std::vector<Op> ops;
    for (size_t i = 16; i + 16 < pay.size(); i += 16)
      ops.push_back(
          {pay[i], uint32_t(le64(&pay[i]) >> 32), uint32_t(le64(&pay[i + 8])), uint32_t(le64(&pay[i + 8]) >> 32)});
    return ops;
  }

  struct Sent {
    Bytes f;
    int port = 0;
    bool bad = false;
  };
  Sent mutate();
  void one(long i);
  void check_regs(long i);
  void sweep();
};

// One frame: a valid request of 1..8 operations with a fresh sequence number, then none, one or
// two mutations of it (or a replay, or random bytes).
Fuzz::Sent Fuzz::mutate() {
  const uint64_t seq = last_seq + 1 + (rnd(4) == 0 ? rnd(1000) : 0);
  const uint32_t id = uint32_t(rng());
  std::vector<Op> ops = random_ops(1 + int(rnd(8)));
  uint8_t key[16];
  std::memcpy(key, kKey, 16);
  Sent s;
  Addr src = host(0);
  src.port = uint16_t(1024 + rnd(60000));
  const uint32_t r = rnd(22), kind = r < 16 ? r : r < 19 ? 0 : 12;  // more valid ones and header bits
  if (kind == 1) key[rnd(16)] ^= uint8_t(1 << rnd(8));              // wrong key
  if (kind == 9) ops.clear();                                       // no operation
  if (kind == 10) ops = random_ops(9);                              // nine
  uint64_t q = seq;
  if (kind == 4)  // equal (half the time) or older
    q = last_seq - (last_seq && rnd(2) ? 1 + rnd(uint32_t(std::min<uint64_t>(last_seq, 50))) : 0);
  Bytes pay = request(id, q, ops, key);
  if (kind == 13) {  // random payload, with the magic half the time
    pay.assign(rnd(300), 0);
    for (auto& b : pay) b = uint8_t(rng());
    if (pay.size() >= 8 && rnd(2)) pay[0] = 'P', pay[1] = 'M', pay[2] = 'G', pay[3] = '1';
  }
  if (kind == 2) pay[4 + rnd(uint32_t(pay.size() - 4))] ^= uint8_t(1 << rnd(8));  // after the magic
  if (kind == 3) pay[rnd(4)] ^= uint8_t(1 << rnd(8));                             // the magic
  if (kind == 7) pay.resize(rnd(uint32_t(pay.size())));                           // truncated, lengths fixed
  s.f = udp_frame(src, kBoard, pay, kind == 8 ? int(rnd(2) ? 1 + rnd(40) : -1 - int(rnd(20))) : 0);
  if (kind == 5) s.port = 1 + int(rnd(kPorts - 1));
  if (kind == 6) s.f.resize(14 + rnd(uint32_t(s.f.size() - 14)));         // truncated, lengths as they were
  if (kind == 11) s.bad = true;                                           // bad FCS
  if (kind == 12) s.f[rnd(42)] ^= uint8_t(1 << rnd(8));                   // a header bit
  if (kind == 14) put16(s.f, 38, uint16_t(be16(s.f, 38) + 1 + rnd(16)));  // UDP length alone
  if (kind == 15 && !captured.empty()) s.f = captured[rnd(uint32_t(captured.size()))];  // a replay
  return s;
}

void Fuzz::one(long i) {
  Bench& b = sc.b;
  const Sent s = mutate();
  const Outcome want = expect(s.f, s.port, s.bad, last_seq);
  ++outcomes[want];
  const Counters before = counters(b);
  if (rnd(4) == 0) sc.with_bypass(1);
  if (s.bad) b.bad_fcs.insert(s.f);
  b.rx_q[s.port].push_back(s.f);
  if (want == kPass && s.f.size() >= 14) sc.bypass_sent[s.port].push_back(s.f);
  if (want == kAccepted) {
    const Bytes pay(s.f.begin() + 42, s.f.begin() + 42 + (be16(s.f, 38) - 8));
    std::vector<uint32_t> values;
    std::vector<uint8_t> status;
    apply(ops_of(pay), values, status);
    last_seq = le64(&pay[8]);
    captured.push_back(s.f);
    Addr to{{s.f[6], s.f[7], s.f[8], s.f[9], s.f[10], s.f[11]}, be32(s.f, 26), be16(s.f, 34)};
    sc.responses_expected.push_back(
        udp_frame(kBoard, to, response(uint32_t(le64(&pay[0]) >> 32), last_seq, values, status)));
  }
  b.drain();
  const Counters after = counters(b);
  for (int c = 0; c < 6; ++c)
    CHECK(after.v[c] - before.v[c] == (want != kPass && c == int(want) ? 1u : 0u),
          "fuzz frame %ld (port %d, %zu bytes, expected %s): counter %s moved by %u\n", i, s.port, s.f.size(),
          kOutcomeNames[want], kCounterNames[c], after.v[c] - before.v[c]);
  check_regs(i);
}

// A valid read of every register the requests use: the model's values, OKAY.
void Fuzz::check_regs(long i) {
  std::vector<Op> ops;
  std::vector<uint32_t> want;
  for (uint32_t a : regs) {
    ops.push_back({1, a, 0, 0});
    want.push_back(val.at(a));
  }
  sc.seq = last_seq;  // good() sends the next one
  sc.good(0x52000000u + uint32_t(i), ops, want);
  last_seq = sc.seq;
}

// At the end, every read-write register of every context (and their status) and the aggregation
// port: reset values, but for context 1's that the model changed. An operation a rejected request
// carried, had it run, could have written any of them.
void Fuzz::sweep() {
  std::vector<Op> ops;
  std::vector<uint32_t> want;
  uint32_t id = 0x53000000u;
  auto flush = [&] {
    sc.seq = last_seq;
    sc.good(id++, ops, want);
    last_seq = sc.seq;
    ops.clear();
    want.clear();
  };
  auto add = [&](uint32_t a, uint32_t v) {
    ops.push_back({1, a, 0, 0});
    want.push_back(v);
    if (ops.size() == 8) flush();
  };
  for (int c = 0; c < sc.R.contexts; ++c) {
    add(sc.ctx(c, "CTX_STATUS"), sc.R.reset.at("CTX_STATUS"));
    for (const auto& n : sc.R.ctx_rw) {
      const uint32_t a = sc.ctx(c, n.c_str());
      add(a, val.count(a) ? val.at(a) : sc.R.reset.at(n));
    }
  }
  add(sc.R.g.at("AGG_PORT"), sc.R.g_reset.at("AGG_PORT"));
  if (!ops.empty()) flush();
}

int run_fuzz(Scenario& sc, long frames, uint64_t seed) {
  Fuzz fz(sc, seed);
  for (long i = 0; i < frames; ++i) fz.one(i);
  fz.sweep();
  sc.b.drain();
  // Every response, in order, and only those; every frame that was not a request came out of its
  // port with the bypass traffic, unchanged and in order; nothing else left any port.
  std::vector<Bytes> resp;
  for (int p = 0; p < kPorts; ++p) {
    std::vector<Bytes> rest;
    for (const auto& f : sc.b.tx[p]) (is_from_board(f) && p == 0 ? resp : rest).push_back(f);
    CHECK(rest == sc.bypass_sent[p], "fuzz: port %d sent %zu frames besides responses, want %zu (or altered)\n", p,
          rest.size(), sc.bypass_sent[p].size());
  }
  CHECK(resp == sc.responses_expected, "fuzz: %zu responses on port 0, want %zu (or not the expected frames)\n",
        resp.size(), sc.responses_expected.size());
  const Counters c = counters(sc.b);
  CHECK(c.v[5] == 0, "fuzz: %u requests counted busy (one frame at a time)\n", c.v[5]);
  if (frames >= 100)
    for (int k = 0; k < 6; ++k) CHECK(fz.outcomes[k] > 0, "fuzz: no frame was %s\n", kOutcomeNames[k]);
  std::printf("mgmt_eth_tb: fuzz seed %llu: %ld frames (+ %ld read-backs):", (unsigned long long)seed, frames, frames);
  for (int k = 0; k < 6; ++k) std::printf(" %s %ld%s", kOutcomeNames[k], fz.outcomes[k], k < 5 ? "," : "\n");
  return board::verdict("mgmt_eth_tb");
}
}  // namespace

int main(int argc, char** argv) {
  std::string regmap, serve_file;
  long fuzz = 0;
  uint64_t seed = 1;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::string(argv[i]) == "--regmap") regmap = argv[i + 1];
    if (std::string(argv[i]) == "--serve") serve_file = argv[i + 1];
    if (std::string(argv[i]) == "--fuzz") fuzz = std::stol(argv[i + 1]);
    if (std::string(argv[i]) == "--seed") seed = std::stoull(argv[i + 1]);
  }
  if (!serve_file.empty()) return serve(serve_file);
  if (regmap.empty()) {
    std::fprintf(
        stderr, "mgmt_eth_tb: usage: mgmt_eth_tb --regmap regmap.json [--fuzz FRAMES [--seed S]] | --serve PORTFILE\n");
    return 2;
  }
  Scenario sc;
  sc.R = load_regs(regmap);
  sc.b.reset();
  if (fuzz > 0) return run_fuzz(sc, fuzz, seed);
  sc.program();
  sc.aggregate();
  sc.read_counters();
  sc.refused();
  sc.busy();
  sc.still_works();
  sc.arp();
  sc.check_outputs();
  const Counters c = counters(sc.b);
  sc.b.top->final();
  std::printf(
      "mgmt_eth_tb: accepted %u, bad port %u, malformed %u, bad tag %u, replay %u, busy %u; bypass frames %d; ARP "
      "replies %zu\n",
      c.v[0], c.v[1], c.v[2], c.v[3], c.v[4], c.v[5], sc.bypass_id, sc.arp_expected.size());
  return board::verdict("mgmt_eth_tb");
}
