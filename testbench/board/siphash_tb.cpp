// siphash_tb: rtl/panama_siphash.v against the SipHash paper's test vector and against the C++
// implementation (siphash_ref.h) on random keys and messages of every length 0..80, fed with
// random idle cycles between words, several messages back to back.
#include <cstdint>
#include <cstdio>
#include <memory>
#include <random>
#include <vector>

#include "Vpanama_siphash.h"
#include "board_tb.h"
#include "siphash_ref.h"
#include "verilated.h"

namespace {

using board::failures;
using Dut = board::Dut<Vpanama_siphash>;

void set_key(Dut& d, const uint8_t key[16]) {
  for (int w = 0; w < 4; ++w) d.top->key[w] = uint32_t(sip::load_le(key + 4 * w, 4));
}

// Feeds one message, returns the hash the RTL produced.
uint64_t rtl_hash(Dut& d, const std::vector<uint8_t>& msg, std::mt19937& rng, int idle_pct) {
  size_t i = 0;
  bool sent_last = false;
  uint64_t hash = 0;
  bool got = false;
  for (long cycle = 0; cycle < 10000 && !got; ++cycle) {
    // Drive away from the edge.
    if (!sent_last && int(rng() % 100) >= idle_pct) {
      const size_t n = std::min<size_t>(8, msg.size() - i);
      d.top->s_valid = 1;
      d.top->s_data = sip::load_le(msg.data() + i, n);
      // Garbage above the valid bytes must be ignored.
      if (n < 8) d.top->s_data |= (uint64_t(rng()) << 32 | rng()) << (8 * n);
      d.top->s_nbytes = uint8_t(n);
      d.top->s_last = i + n == msg.size();
    } else {
      d.top->s_valid = 0;
    }
    d.top->eval();
    const bool take = d.top->s_valid && d.top->s_ready;
    const bool last = d.top->s_last;
    const size_t n = d.top->s_nbytes;
    d.tick();
    if (take) {
      i += n;
      if (last) sent_last = true;
    }
    if (d.top->m_valid) {
      if (!sent_last) {
        std::fprintf(stderr, "siphash_tb: hash out before the last word\n");
        ++failures;
      }
      hash = d.top->m_hash;
      got = true;
    }
  }
  d.top->s_valid = 0;
  if (!got) {
    std::fprintf(stderr, "siphash_tb: no hash for a %zu-byte message\n", msg.size());
    ++failures;
  }
  return hash;
}

}  // namespace

int main() {
  Dut d;
  d.reset();
  std::mt19937 rng(1);

  // The paper's appendix: key 00..0f, message 00..0e (15 bytes).
  uint8_t key[16];
  for (int i = 0; i < 16; ++i) key[i] = uint8_t(i);
  std::vector<uint8_t> m15(15);
  for (int i = 0; i < 15; ++i) m15[i] = uint8_t(i);
  const uint64_t paper = 0xa129ca6149be45e5ull;
  if (sip::siphash24(key, m15.data(), m15.size()) != paper) {
    std::fprintf(stderr, "siphash_tb: C++ reference disagrees with the paper's vector\n");
    ++failures;
  }
  set_key(d, key);
  const uint64_t got = rtl_hash(d, m15, rng, 0);
  if (got != paper) {
    std::fprintf(stderr, "siphash_tb: paper vector: RTL %016llx, expected %016llx\n", (unsigned long long)got,
                 (unsigned long long)paper);
    ++failures;
  }

  // The reference implementation's table (key 00..0f, message 00..len-1): lengths 0-3 and 63.
  const struct {
    size_t len;
    uint64_t hash;
  } table[] = {{0, 0x726fdb47dd0e0e31ull},
               {1, 0x74f839c593dc67fdull},
               {2, 0x0d6c8009d9a94f5aull},
               {3, 0x85676696d7fb7e2dull},
               {63, 0x958a324ceb064572ull}};
  for (int i = 0; i < 16; ++i) key[i] = uint8_t(i);
  set_key(d, key);
  for (const auto& t : table) {
    std::vector<uint8_t> msg(t.len);
    for (size_t i = 0; i < t.len; ++i) msg[i] = uint8_t(i);
    const uint64_t have = rtl_hash(d, msg, rng, 20);
    if (have != t.hash || sip::siphash24(key, msg.data(), msg.size()) != t.hash) {
      std::fprintf(stderr, "siphash_tb: table vector of %zu bytes: RTL %016llx, expected %016llx\n", t.len,
                   (unsigned long long)have, (unsigned long long)t.hash);
      ++failures;
    }
  }

  // Random keys, every length 0..80, with and without idle cycles, back to back.
  int checked = 1;
  for (int round = 0; round < 4; ++round) {
    for (size_t len = 0; len <= 80; ++len) {
      for (auto& k : key) k = uint8_t(rng());
      set_key(d, key);
      std::vector<uint8_t> msg(len);
      for (auto& b : msg) b = uint8_t(rng());
      const uint64_t want = sip::siphash24(key, msg.data(), msg.size());
      const uint64_t have = rtl_hash(d, msg, rng, round % 2 ? 40 : 0);
      ++checked;
      if (have != want && failures < 10) {
        std::fprintf(stderr, "siphash_tb: %zu-byte message: RTL %016llx, C++ %016llx\n", len, (unsigned long long)have,
                     (unsigned long long)want);
        ++failures;
      }
    }
  }
  d.top->final();
  char detail[80];
  std::snprintf(detail, sizeof detail, " (%d random messages, paper and reference-table vectors)", checked);
  return board::verdict("siphash_tb", detail);
}
