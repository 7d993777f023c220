// Management over Ethernet, host side (docs/mgmt.md). SipHash-2-4 is written here from the
// paper's description, independently of the RTL and of the testbench's reference.
#include "mgmt_client.h"
#include "secret_file.h"

#include <arpa/inet.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>

namespace panama::host {
namespace {

inline uint64_t rotl(uint64_t x, int b) { return (x << b) | (x >> (64 - b)); }

uint64_t le64(const uint8_t* p, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v |= uint64_t(p[i]) << (8 * i);
  return v;
}

void push_le64(std::vector<uint8_t>& b, uint64_t v) {
  for (size_t i = 0; i < proto::kMgmtWordBytes; ++i) b.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

struct SipState {
  uint64_t v0, v1, v2, v3;
  void round() {
    v0 += v1;
    v2 += v3;
    v1 = rotl(v1, 13) ^ v0;
    v3 = rotl(v3, 16) ^ v2;
    v0 = rotl(v0, 32);
    v2 += v1;
    v0 += v3;
    v1 = rotl(v1, 17) ^ v2;
    v3 = rotl(v3, 21) ^ v0;
    v2 = rotl(v2, 32);
  }
  void absorb(uint64_t m) {
    v3 ^= m;
    round();
    round();
    v0 ^= m;
  }
};

// A 32-bit field at byte offset `off` of a little-endian word (wire/protocol.h's layout).
constexpr uint64_t at(int off, uint64_t v) { return v << (8 * off); }
constexpr uint32_t field32(uint64_t w, int off) { return static_cast<uint32_t>(w >> (8 * off)); }
constexpr size_t kWord = proto::kMgmtWordBytes;

int hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string hex(uint32_t v) {
  char b[16];
  std::snprintf(b, sizeof b, "0x%04X", v);
  return b;
}

uint64_t now_ns() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count());
}

}  // namespace

uint64_t siphash24(const MgmtKey& key, const uint8_t* msg, size_t len) {
  const uint64_t k0 = le64(key.data(), 8), k1 = le64(key.data() + 8, 8);
  SipState s{k0 ^ 0x736f6d6570736575ull, k1 ^ 0x646f72616e646f6dull, k0 ^ 0x6c7967656e657261ull,
             k1 ^ 0x7465646279746573ull};
  const size_t whole = len & ~size_t(7);
  for (size_t i = 0; i < whole; i += 8) s.absorb(le64(msg + i, 8));
  s.absorb(le64(msg + whole, len - whole) | (uint64_t(len) << 56));
  s.v2 ^= 0xff;
  for (int r = 0; r < 4; ++r) s.round();
  return s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
}

MgmtKey parse_mgmt_key(const std::string& text, const std::string& where) {
  std::string t = text;
  const auto a = t.find_first_not_of(" \t\r\n"), z = t.find_last_not_of(" \t\r\n");
  t = a == std::string::npos ? "" : t.substr(a, z - a + 1);
  MgmtKey k{};
  bool ok = t.size() == 32;
  for (size_t i = 0; ok && i < 16; ++i) {
    const int h = hexval(t[2 * i]), l = hexval(t[2 * i + 1]);
    ok = h >= 0 && l >= 0;
    k[i] = static_cast<uint8_t>(h * 16 + l);
  }
  if (!ok) throw std::runtime_error("--key: " + where + " must hold exactly 32 hex digits (the 128-bit key)");
  return k;
}

MgmtKey load_mgmt_key(const std::string& path) { return parse_mgmt_key(wire::read_secret_file(path, "--key"), path); }

std::vector<uint8_t> mgmt_request(const MgmtKey& key, uint32_t id, uint64_t seq, const std::vector<MgmtOp>& ops) {
  std::vector<uint8_t> b;
  push_le64(b, at(proto::kMgmtOffMagic, proto::kMgmtReqMagic) | at(proto::kMgmtOffId, id));
  push_le64(b, seq);           // word kMgmtWordSeq
  for (const auto& o : ops) {  // kMgmtOpWords words each, from word kMgmtWordOps
    push_le64(b, at(proto::kMgmtOpOffCode, o.code) | at(proto::kMgmtOpOffAddr, o.addr));
    push_le64(b, at(proto::kMgmtOpOffMask, o.mask) | at(proto::kMgmtOpOffValue, o.value));
  }
  push_le64(b, siphash24(key, b.data(), b.size()));
  return b;
}

bool mgmt_parse_response(const MgmtKey& key, const uint8_t* p, size_t len, uint32_t id, uint64_t seq, size_t nops,
                         std::vector<MgmtResult>& out) {
  // Header, sequence number, one result word per operation, tag.
  if (len != kWord * (proto::kMgmtWordOps + nops + proto::kMgmtTagWords)) return false;
  const uint64_t head = le64(p, kWord);
  if (field32(head, proto::kMgmtOffMagic) != proto::kMgmtRspMagic || field32(head, proto::kMgmtOffId) != id ||
      le64(p + kWord * proto::kMgmtWordSeq, kWord) != seq)
    return false;
  const size_t tag = len - kWord * proto::kMgmtTagWords;
  if (siphash24(key, p, tag) != le64(p + tag, kWord)) return false;
  out.clear();
  for (size_t i = 0; i < nops; ++i) {
    const uint64_t w = le64(p + kWord * (proto::kMgmtWordOps + i), kWord);
    out.push_back({static_cast<uint8_t>(w >> (8 * proto::kMgmtResOffStatus)), field32(w, proto::kMgmtResOffValue)});
  }
  return true;
}

MgmtClient::MgmtClient(const std::string& target, const MgmtKey& key, int timeout_ms, int tries)
    : target_(target), key_(key), timeout_ms_(timeout_ms), tries_(tries) {
  std::string host = target;
  int port = kMgmtDefaultPort;
  if (const auto colon = target.find(':'); colon != std::string::npos) {
    host = target.substr(0, colon);
    const std::string ps = target.substr(colon + 1);
    char* end = nullptr;
    const long v = std::strtol(ps.c_str(), &end, 10);
    if (ps.empty() || *end || v < 1 || v > 65535)
      throw std::runtime_error("--target: '" + target + "' must be IPv4[:PORT] with a port 1..65535");
    port = static_cast<int>(v);
  }
  dst_.sin_family = AF_INET;
  dst_.sin_port = htons(static_cast<uint16_t>(port));
  if (inet_pton(AF_INET, host.c_str(), &dst_.sin_addr) != 1)
    throw std::runtime_error("--target: '" + host + "' is not an IPv4 address");
  fd_ = Fd(socket(AF_INET, SOCK_DGRAM, 0));
  if (fd_.get() < 0) throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
  if (connect(fd_.get(), reinterpret_cast<const sockaddr*>(&dst_), sizeof dst_) != 0)
    throw std::runtime_error("--target " + target + ": " + std::strerror(errno));
  next_id_ = static_cast<uint32_t>(now_ns() >> 10);
}

std::vector<MgmtResult> MgmtClient::run(const std::vector<MgmtOp>& ops) {
  if (ops.empty() || ops.size() > kMgmtMaxOps)
    throw std::runtime_error("internal: 1.." + std::to_string(kMgmtMaxOps) + " operations per request");
  uint64_t first_seq = 0;
  for (int attempt = 0; attempt < tries_; ++attempt) {
    // Each try is a new request: the board refuses a sequence number it has seen.
    const uint64_t seq = std::max(now_ns(), last_seq_ + 1);
    last_seq_ = seq;
    if (attempt == 0) first_seq = seq;
    const uint32_t id = next_id_++;
    const auto req = mgmt_request(key_, id, seq, ops);
    if (send(fd_.get(), req.data(), req.size(), 0) < 0 && errno != ECONNREFUSED)
      throw std::runtime_error("--target " + target_ + ": " + std::strerror(errno));
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms_);
    for (;;) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
      if (left <= 0) break;
      pollfd pf{fd_.get(), POLLIN, 0};
      if (poll(&pf, 1, static_cast<int>(left)) <= 0) continue;
      uint8_t buf[512];
      const ssize_t n = recv(fd_.get(), buf, sizeof buf, 0);
      if (n < 0) continue;  // e.g. ICMP port unreachable from a previous try
      std::vector<MgmtResult> out;
      // Anything else (an older try's answer, a forged datagram) is ignored.
      if (mgmt_parse_response(key_, buf, static_cast<size_t>(n), id, seq, ops.size(), out)) return out;
    }
  }
  // The board answers no refused request, so a replay refusal looks like a wrong key: name both,
  // with the sequence numbers sent (host clock in ns since the epoch).
  throw std::runtime_error("no authenticated response from " + target_ + " after " + std::to_string(tries_) +
                           " tries: the key or the port is probably wrong (or the board is unreachable, or it "
                           "refused sequence numbers " +
                           std::to_string(first_seq) + ".." + std::to_string(last_seq_) +
                           " as replays: clock skew, the host clock behind the board's last accepted one)");
}

uint32_t MgmtClient::read(uint32_t addr) {
  const auto r = run({{proto::kMgmtOpRead, addr, 0, 0}});
  if (r[0].status != 0)
    throw std::runtime_error("read of register " + hex(addr) + " failed on the board's bus (status " +
                             std::to_string(r[0].status) + ")");
  return r[0].value;
}

void MgmtClient::write(uint32_t addr, uint32_t value) { write_all({{addr, value}}); }

void MgmtClient::write_all(const std::vector<std::pair<uint32_t, uint32_t>>& w) {
  for (size_t i = 0; i < w.size(); i += kMgmtMaxOps) {
    std::vector<MgmtOp> ops;
    for (size_t k = i; k < w.size() && k < i + kMgmtMaxOps; ++k)
      ops.push_back({proto::kMgmtOpWrite, w[k].first, 0, w[k].second});
    const auto r = run(ops);
    for (size_t k = 0; k < r.size(); ++k)
      if (r[k].status != 0)
        throw std::runtime_error("write of register " + hex(ops[k].addr) + " failed on the board's bus (status " +
                                 std::to_string(r[k].status) + ")");
  }
}

}  // namespace panama::host
