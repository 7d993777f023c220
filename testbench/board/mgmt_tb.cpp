// mgmt_tb: rtl/panama_mgmt.v (management requests) with a register file modelled in C++ behind
// its AXI4-Lite master. Requests are built and tagged here with the C++ SipHash (siphash_ref.h).
// Good requests (write, read, read-modify-write, several operations in one request) change the
// registers as asked and answer with the right values under a valid tag; a wrong key, a replayed
// or older sequence number, a non-management port, a malformed request change nothing, produce no
// response, and increment exactly their own counter.
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <random>
#include <vector>

#include "Vpanama_mgmt.h"
#include "board_tb.h"
#include "protocol.h"
#include "siphash_ref.h"
#include "vl_util.h"
#include "verilated.h"

namespace {

// The key the testbench top is built with (-GKEY=...): bytes 00..0f.
uint8_t kKey[16] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};

struct Op {
  uint8_t code;
  uint32_t addr, mask, value;
};

std::vector<uint64_t> tag_words(const std::vector<uint64_t>& w, const uint8_t key[16]) {
  std::vector<uint8_t> bytes;
  for (uint64_t x : w)
    for (int i = 0; i < 8; ++i) bytes.push_back(uint8_t(x >> (8 * i)));
  auto out = w;
  out.push_back(sip::siphash24(key, bytes.data(), bytes.size()));
  return out;
}

std::vector<uint64_t> request(uint32_t id, uint64_t seq, const std::vector<Op>& ops, const uint8_t key[16] = kKey) {
  std::vector<uint64_t> w{(uint64_t(id) << 32) | panama::proto::kMgmtReqMagic, seq};
  for (const auto& o : ops) {
    w.push_back(uint64_t(o.code) | (uint64_t(o.addr) << 32));
    w.push_back(uint64_t(o.mask) | (uint64_t(o.value) << 32));
  }
  return tag_words(w, key);
}

struct Tb : board::Dut<Vpanama_mgmt> {
  std::map<uint32_t, uint32_t> regs;  // the register file
  long bus_writes = 0, bus_reads = 0;
  std::mt19937 rng{3};
  // AXI4-Lite slave state.
  bool aw = false, w = false, b_pend = false, r_pend = false;
  uint32_t awaddr = 0, wdata = 0, rdata = 0;

  void tick() {
    // Slave: accept address/data with random delays, answer one cycle later.
    top->m_axil_awready = !aw && (rng() % 3 == 0);
    top->m_axil_wready = !w && (rng() % 3 == 0);
    top->m_axil_arready = !r_pend && (rng() % 2 == 0);
    top->m_axil_bvalid = b_pend;
    top->m_axil_bresp = 0;
    top->m_axil_rvalid = r_pend;
    top->m_axil_rdata = rdata;
    top->m_axil_rresp = 0;
    top->eval();
    const tb::AxilFire fire = TB_AXIL_FIRE(*top, m_axil_);
    const uint32_t awa = top->m_axil_awaddr, wd = top->m_axil_wdata, ara = top->m_axil_araddr;
    board::pulse(*top, top->clk);
    if (fire.aw) {
      aw = true;
      awaddr = awa;
    }
    if (fire.w) {
      w = true;
      wdata = wd;
    }
    if (fire.b) b_pend = false;
    if (fire.r) r_pend = false;
    if (aw && w && !b_pend) {
      regs[awaddr] = wdata;
      ++bus_writes;
      aw = w = false;
      b_pend = true;
    }
    if (fire.ar) {
      rdata = regs.count(ara) ? regs[ara] : 0;
      ++bus_reads;
      r_pend = true;
    }
  }

  // Sends a request from port; returns the response words (empty if none within the timeout).
  std::vector<uint64_t> send(const std::vector<uint64_t>& words, int port, int partial_keep = 0) {
    top->s_port = uint8_t(port);
    size_t i = 0;
    while (i < words.size()) {
      top->s_axis_tvalid = 1;
      top->s_axis_tdata = words[i];
      top->s_axis_tkeep = (partial_keep && i == words.size() - 1) ? 0x0f : 0xff;
      top->s_axis_tlast = i == words.size() - 1;
      top->eval();
      const bool t = top->s_axis_tready;
      tick();
      if (t) ++i;
    }
    top->s_axis_tvalid = 0;
    std::vector<uint64_t> resp;
    for (int c = 0; c < 2000; ++c) {
      top->m_axis_tready = rng() % 4 != 0;
      top->eval();
      const bool t = top->m_axis_tvalid && top->m_axis_tready;
      const uint64_t d = top->m_axis_tdata;
      const bool last = top->m_axis_tlast;
      tick();
      if (t) {
        resp.push_back(d);
        if (last) break;
      }
    }
    // Let the engine go back to idle.
    for (int c = 0; c < 20; ++c) tick();
    return resp;
  }
};

struct Counters {
  uint32_t ok, port, form, tag, replay;
};
Counters counters(Tb& t) {
  return {t.top->cnt_accepted, t.top->cnt_bad_port, t.top->cnt_malformed, t.top->cnt_bad_tag, t.top->cnt_replay};
}

// A rejected request: no bus access, no response, only `which` counter moved by one.
void expect_rejected(Tb& t, const std::vector<uint64_t>& req, int port, int which, const char* what, int partial = 0) {
  const auto before = counters(t);
  const auto regs = t.regs;
  const long bw = t.bus_writes, br = t.bus_reads;
  const auto resp = t.send(req, port, partial);
  const auto after = counters(t);
  CHECK(resp.empty(), "%s: a response came back\n", what);
  CHECK(t.regs == regs && t.bus_writes == bw && t.bus_reads == br, "%s: the bus was used\n", what);
  const uint32_t d[5] = {after.ok - before.ok, after.port - before.port, after.form - before.form,
                         after.tag - before.tag, after.replay - before.replay};
  for (int i = 0; i < 5; ++i) CHECK(d[i] == (i == which ? 1u : 0u), "%s: counter %d moved by %u\n", what, i, d[i]);
}

}  // namespace

int main() {
  board::report_limit = 20;
  Tb t;
  t.reset([&t] { t.tick(); });
  t.regs[0x100] = 0x11111111;
  t.regs[0x104] = 0xa5a5a5a5;

  // 1. A burst: write, read back, read-modify-write, read.
  {
    const auto before = counters(t);
    const auto req = request(
        7, 1, {{2, 0x200, 0, 0xdeadbeef}, {1, 0x200, 0, 0}, {3, 0x104, 0x0000ffff, 0x12345678}, {1, 0x104, 0, 0}});
    const auto resp = t.send(req, 0);
    CHECK(t.regs[0x200] == 0xdeadbeef, "write not done\n");
    CHECK(t.regs[0x104] == 0xa5a55678, "rmw gave %08x\n", t.regs[0x104]);
    CHECK(resp.size() == 2 + 4 + 1, "response of %zu words\n", resp.size());
    if (resp.size() == 7) {
      CHECK(resp[0] == ((uint64_t(7) << 32) | panama::proto::kMgmtRspMagic), "response header %016llx\n",
            (unsigned long long)resp[0]);
      CHECK(resp[1] == 1, "response sequence\n");
      CHECK((resp[2] >> 32) == 0xdeadbeef && (resp[2] & 0xff) == 0, "write result\n");
      CHECK((resp[3] >> 32) == 0xdeadbeef, "read result %016llx\n", (unsigned long long)resp[3]);
      CHECK((resp[4] >> 32) == 0xa5a5a5a5, "rmw returns the old value\n");
      CHECK((resp[5] >> 32) == 0xa5a55678, "read after rmw\n");
      const auto tagged = tag_words(std::vector<uint64_t>(resp.begin(), resp.end() - 1), kKey);
      CHECK(tagged.back() == resp.back(), "response tag wrong\n");
    }
    CHECK(counters(t).ok == before.ok + 1, "accepted not counted\n");
  }
  // 2. Wrong key.
  uint8_t bad[16];
  for (int i = 0; i < 16; ++i) bad[i] = kKey[i];
  bad[5] ^= 0x40;
  expect_rejected(t, request(8, 2, {{2, 0x100, 0, 1}}, bad), 0, 3, "wrong key");
  // 3. Tampered operation after tagging.
  {
    auto req = request(9, 3, {{2, 0x100, 0, 1}});
    req[3] ^= uint64_t(1) << 40;
    expect_rejected(t, req, 0, 3, "tampered");
  }
  // 4. Replay of request 1, and an older sequence number.
  expect_rejected(
      t,
      request(7, 1,
              {{2, 0x200, 0, 0xdeadbeef}, {1, 0x200, 0, 0}, {3, 0x104, 0x0000ffff, 0x12345678}, {1, 0x104, 0, 0}}),
      0, 4, "replay");
  // 5. A good request moves the sequence on; then an equal one is refused.
  t.send(request(10, 50, {{2, 0x100, 0, 0x22222222}}), 0);
  CHECK(t.regs[0x100] == 0x22222222, "second good request not executed\n");
  expect_rejected(t, request(11, 50, {{2, 0x100, 0, 3}}), 0, 4, "same sequence");
  expect_rejected(t, request(12, 49, {{2, 0x100, 0, 3}}), 0, 4, "older sequence");
  // 6. Non-management ports (the testbench top accepts port 0 only), and an impossible port.
  expect_rejected(t, request(13, 60, {{2, 0x100, 0, 4}}), 1, 1, "port 1");
  expect_rejected(t, request(14, 61, {{2, 0x100, 0, 4}}), 3, 1, "port 3");
  expect_rejected(t, request(15, 62, {{2, 0x100, 0, 4}}), 200, 1, "port 200");
  // 7. Malformed: bad magic, partial last word, no operation, too many operations.
  {
    auto req = request(16, 63, {{2, 0x100, 0, 5}});
    req[0] ^= 1;
    expect_rejected(t, tag_words(std::vector<uint64_t>(req.begin(), req.end() - 1), kKey), 0, 2, "bad magic");
    expect_rejected(t, request(17, 64, {{2, 0x100, 0, 5}}), 0, 2, "partial word", 1);
    expect_rejected(t, request(18, 65, {}), 0, 2, "no operation");
    std::vector<Op> many(9, Op{2, 0x100, 0, 6});
    expect_rejected(t, request(19, 66, many), 0, 2, "nine operations");
  }
  // 8. After all that, a good request still works (and eight operations is the most).
  {
    std::vector<Op> eight;
    for (uint32_t i = 0; i < 8; ++i) eight.push_back(Op{2, 0x300 + 4 * i, 0, 100 + i});
    const auto resp = t.send(request(20, 67, eight), 0);
    bool all = true;
    for (uint32_t i = 0; i < 8; ++i) all &= t.regs[0x300 + 4 * i] == 100 + i;
    CHECK(all && resp.size() == 11, "eight-operation request\n");
  }
  const auto c = counters(t);
  t.top->final();
  std::printf("mgmt_tb: accepted %u, bad port %u, malformed %u, bad tag %u, replay %u\n", c.ok, c.port, c.form, c.tag,
              c.replay);
  return board::verdict("mgmt_tb");
}
