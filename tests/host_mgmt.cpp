// Management over Ethernet, host side (host_driver/mgmt_client.h): SipHash-2-4 against the
// SipHash paper's vectors (not against the RTL), the request layout of docs/mgmt.md, responses
// that must be ignored, key files.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "mgmt_client.h"

using namespace panama::host;

namespace {

MgmtKey key_0_15() {
  MgmtKey k{};
  for (int i = 0; i < 16; ++i) k[static_cast<size_t>(i)] = static_cast<uint8_t>(i);
  return k;
}

std::vector<uint8_t> seq_bytes(size_t n) {
  std::vector<uint8_t> m(n);
  for (size_t i = 0; i < n; ++i) m[i] = static_cast<uint8_t>(i);
  return m;
}

uint64_t le(const std::vector<uint8_t>& b, size_t at) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= uint64_t(b[at + static_cast<size_t>(i)]) << (8 * i);
  return v;
}

}  // namespace

// Aumasson and Bernstein, "SipHash: a fast short-input PRF", appendix A: key 00..0f, message
// 00..0e, result a129ca6149be45e5.
TEST(HostMgmt, SipHashPaperVector) {
  const auto m = seq_bytes(15);
  EXPECT_EQ(siphash24(key_0_15(), m.data(), m.size()), 0xa129ca6149be45e5ull);
}

// The reference implementation's vectors (vectors.h, SipHash-2-4 64-bit), message 00..len-1:
// lengths 0-3 and 63.
TEST(HostMgmt, SipHashReferenceTable) {
  const struct {
    size_t len;
    uint64_t want;
  } t[] = {{0, 0x726fdb47dd0e0e31ull},
           {1, 0x74f839c593dc67fdull},
           {2, 0x0d6c8009d9a94f5aull},
           {3, 0x85676696d7fb7e2dull},
           {63, 0x958a324ceb064572ull}};
  for (const auto& v : t) {
    const auto m = seq_bytes(v.len);
    EXPECT_EQ(siphash24(key_0_15(), m.data(), m.size()), v.want) << "length " << v.len;
  }
}

TEST(HostMgmt, RequestLayout) {
  const MgmtKey k = key_0_15();
  const auto r = mgmt_request(k, 0x01020304, 0x1122334455667788ull, {{2, 0x1008, 0xffffffff, 0xdeadbeef}});
  ASSERT_EQ(r.size(), 8u * 5);
  EXPECT_EQ(std::string(r.begin(), r.begin() + 4), "PMG1");
  EXPECT_EQ(le(r, 0) >> 32, 0x01020304u);
  EXPECT_EQ(le(r, 8), 0x1122334455667788ull);
  EXPECT_EQ(r[16], 2);
  EXPECT_EQ(le(r, 16) >> 32, 0x1008u);
  EXPECT_EQ(le(r, 24), 0xdeadbeefffffffffull);
  EXPECT_EQ(le(r, 32), siphash24(k, r.data(), 32));
}

// A response is accepted only with the right magic, ID, sequence, length and tag.
TEST(HostMgmt, ResponsesThatDoNotVerifyAreIgnored) {
  const MgmtKey k = key_0_15();
  std::vector<uint8_t> rsp;
  auto put = [&](uint64_t v) {
    for (int i = 0; i < 8; ++i) rsp.push_back(static_cast<uint8_t>(v >> (8 * i)));
  };
  put(uint64_t(7) << 32 | 0x31524d50u);  // "PMR1", ID 7
  put(99);
  put(uint64_t(0xcafef00d) << 32);
  put(siphash24(k, rsp.data(), rsp.size()));
  std::vector<MgmtResult> out;
  ASSERT_TRUE(mgmt_parse_response(k, rsp.data(), rsp.size(), 7, 99, 1, out));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].status, 0);
  EXPECT_EQ(out[0].value, 0xcafef00du);
  EXPECT_FALSE(mgmt_parse_response(k, rsp.data(), rsp.size(), 8, 99, 1, out));   // other ID
  EXPECT_FALSE(mgmt_parse_response(k, rsp.data(), rsp.size(), 7, 100, 1, out));  // other sequence
  EXPECT_FALSE(mgmt_parse_response(k, rsp.data(), rsp.size(), 7, 99, 2, out));   // other length
  MgmtKey other = k;
  other[3] ^= 1;
  EXPECT_FALSE(mgmt_parse_response(other, rsp.data(), rsp.size(), 7, 99, 1, out));  // other key
  auto forged = rsp;
  forged[20] ^= 1;  // the value changed after tagging
  EXPECT_FALSE(mgmt_parse_response(k, forged.data(), forged.size(), 7, 99, 1, out));
}

TEST(HostMgmt, KeyFiles) {
  const std::string path = ::testing::TempDir() + "/mgmt_key_test";
  auto write = [&](const std::string& text) {
    std::ofstream(path) << text;
    ::chmod(path.c_str(), 0600);  // a key file is private
  };
  write("000102030405060708090a0b0c0d0e0F\n");
  EXPECT_EQ(load_mgmt_key(path), key_0_15());
  // Readable by its group or others: refused with the mode and the fix, never with the key.
  for (const mode_t open_mode : {mode_t{0640}, mode_t{0604}, mode_t{0622}}) {
    ::chmod(path.c_str(), open_mode);
    try {
      load_mgmt_key(path);
      ADD_FAILURE() << "mode " << std::oct << open_mode << " accepted";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("chmod 600"), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).find("0e0F"), std::string::npos) << e.what();
    }
  }
  for (const char* bad : {"00010203", "000102030405060708090a0b0c0d0e0f00", "000102030405060708090a0b0c0d0e0g", ""}) {
    write(bad);
    EXPECT_THROW(load_mgmt_key(path), std::runtime_error) << bad;
  }
  EXPECT_THROW(load_mgmt_key(path + ".missing"), std::runtime_error);
  std::remove(path.c_str());
}
