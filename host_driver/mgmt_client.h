// Management over Ethernet, host side (docs/mgmt.md): SipHash-2-4, the request and response
// payloads, and a UDP client that reads and writes the board's registers with them
// (`panama-host controller --target IP[:PORT] --key FILE`).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <netinet/in.h>

#include "sock.h"
#include "protocol.h"

namespace panama::host {

using MgmtKey = std::array<uint8_t, 16>;

// SipHash-2-4 (Aumasson and Bernstein, 2012) of msg under key; the result is the paper's 64-bit
// integer (its little-endian bytes are the tag on the wire).
uint64_t siphash24(const MgmtKey& key, const uint8_t* msg, size_t len);

// A key file: 32 hex digits (whitespace around them allowed), the key bytes in order. Throws
// std::runtime_error with one line.
MgmtKey load_mgmt_key(const std::string& path);
// The same from the file's text; `where` (its path) is named in the error.
MgmtKey parse_mgmt_key(const std::string& text, const std::string& where);

struct MgmtOp {
  uint8_t code = proto::kMgmtOpRead;  // kMgmtOpRead, kMgmtOpWrite or kMgmtOpRmw (wire/protocol.h)
  uint32_t addr = 0, mask = 0, value = 0;
};
struct MgmtResult {
  uint8_t status = 0;  // 0 OKAY, 2 SLVERR, 3 DECERR, 0xff unknown operation
  uint32_t value = 0;
};
constexpr int kMgmtMaxOps = proto::kMgmtMaxOps;
constexpr uint16_t kMgmtDefaultPort = proto::kMgmtUdpPort;

// The request payload: header, sequence, operations, tag.
std::vector<uint8_t> mgmt_request(const MgmtKey& key, uint32_t id, uint64_t seq, const std::vector<MgmtOp>& ops);
// Parses a response to request (id, seq) of nops operations; false if it is not one (wrong
// magic, ID, sequence or length, or a tag that does not verify).
bool mgmt_parse_response(const MgmtKey& key, const uint8_t* p, size_t len, uint32_t id, uint64_t seq, size_t nops,
                         std::vector<MgmtResult>& out);

// A UDP client of one board. Every request carries a new sequence number (nanoseconds since the
// epoch, kept strictly increasing) and ID; a request without a verified response within the
// timeout is sent again (as a new request) up to `tries` times in all.
class MgmtClient {
 public:
  MgmtClient(const std::string& target, const MgmtKey& key, int timeout_ms = 300, int tries = 5);
  // Runs up to kMgmtMaxOps operations in one request; throws std::runtime_error when no
  // response comes.
  std::vector<MgmtResult> run(const std::vector<MgmtOp>& ops);
  uint32_t read(uint32_t addr);  // throws on a bus error
  void write(uint32_t addr, uint32_t value);
  // Many writes, kMgmtMaxOps to a request, in order.
  void write_all(const std::vector<std::pair<uint32_t, uint32_t>>& w);
  const std::string& target() const { return target_; }

 private:
  std::string target_;
  MgmtKey key_;
  int timeout_ms_, tries_;
  Fd fd_;
  sockaddr_in dst_{};
  uint32_t next_id_;
  uint64_t last_seq_ = 0;
};

}  // namespace panama::host
