// Helper of tests/host_netns.py and scripts/testbed: the host's expected sums.
//   host_treesum gen SEED N OUT.bin            random fp32 bit patterns (NaN, inf, subnormals too)
//   host_treesum sum [--sum tree|exact] [--subnormals ieee|ftz] PORTS OUT.bin IN.bin:PORT ...
//       the accelerator's sum over the ports (numerics.md): tree (default): ref::tree_sum in the
//       fixed port order; exact: the exact sum of the members rounded once (exact_sum below)
//   host_treesum ring OUT.bin IN0.bin IN1.bin ...   the host ring's order (docs/allocator.md
//       "Fallback"), ranks in order: element i of chunk c (c n / W <= i < (c + 1) n / W) is the
//       left fold of ranks c, c + 1, ..., c + W - 1 (mod W), no flush to zero
//   host_treesum exact     stdin lines "FMT MODE X ~Y ...", hex leaves, "~" marks an absent
//       member: one hex exact sum per line on stdout (tests/exact_ref_check.py checks it)
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <random>
#include <string>
#include <vector>

#include "ref_float.h"

namespace {
// The exact-sum mode of numerics.md, the host's own implementation (it shares nothing with the
// RTL, the SystemC model or testbench/exact_ref.h): every member's significand is added at its
// exponent into a fixed-point integer of 32-bit digits whose unit is the smallest subnormal,
// held in int64 so that carries and borrows wait until the end; then one rounding.
// E/F: exponent and fraction bits. Absent members are -0.0 and only matter for the zero sign,
// so the caller passes the members alone.
uint32_t exact_sum(int E, int F, bool ftz, const std::vector<uint32_t>& members) {
  const int W = 1 + E + F;
  const uint32_t S = 1u << (W - 1), emax = (1u << E) - 1, inf = emax << F, qnan = inf | (1u << (F - 1));
  constexpr int D = 12;  // 384 bits: fp32's 277-bit range plus carries of up to 2^31 members
  int64_t d[D] = {};
  bool nan = false, pinf = false, ninf = false, all_neg_zero = true;
  for (const uint32_t x : members) {
    const bool neg = (x >> (W - 1)) & 1;
    const uint32_t e = (x >> F) & emax;
    uint64_t sig = x & ((1u << F) - 1);
    if (e == emax) {
      if (sig != 0)
        nan = true;
      else
        (neg ? ninf : pinf) = true;
      all_neg_zero = false;
      continue;
    }
    if (e == 0 && ftz) sig = 0;  // a subnormal counts as a zero of its sign
    if (e != 0) sig |= uint64_t{1} << F;
    if (sig != 0 || !neg) all_neg_zero = false;
    const int pos = e == 0 ? 0 : static_cast<int>(e) - 1;  // the significand's lowest bit
    const uint64_t v = sig << (pos % 32);                  // below 2^55: two digits
    const int64_t lo = static_cast<int64_t>(v & 0xFFFFFFFFu), hi = static_cast<int64_t>(v >> 32);
    d[pos / 32] += neg ? -lo : lo;
    d[pos / 32 + 1] += neg ? -hi : hi;
  }
  if (nan || (pinf && ninf)) return qnan;
  if (pinf) return inf;
  if (ninf) return S | inf;
  auto carry = [&] {  // digits 0..D-2 into [0, 2^32); the top digit keeps the sign
    for (int i = 0; i + 1 < D; ++i) {
      const int64_t c = (d[i] - (d[i] & 0xFFFFFFFF)) / (int64_t{1} << 32);  // floor division
      d[i] &= 0xFFFFFFFF;
      d[i + 1] += c;
    }
  };
  carry();
  const bool negative = d[D - 1] < 0;
  if (negative) {
    for (int64_t& x : d) x = -x;
    carry();
  }
  int top = D - 1;
  while (top >= 0 && d[top] == 0) --top;
  if (top < 0) return all_neg_zero ? S : 0u;
  const uint32_t sign = negative ? S : 0u;
  const int h = 32 * top + 63 - __builtin_clzll(static_cast<uint64_t>(d[top]));  // highest set bit
  auto bit = [&](int k) -> uint64_t { return (static_cast<uint64_t>(d[k / 32]) >> (k % 32)) & 1; };
  auto field = [&](int lsb, int n) {
    uint64_t v = 0;
    for (int j = 0; j < n; ++j) v |= bit(lsb + j) << j;
    return static_cast<uint32_t>(v);
  };
  if (h < F) return ftz ? sign : sign | field(0, F);  // below the smallest normal: exact
  if (h == F) return sign | field(0, F + 1);          // the lowest binade: exact
  int shift = h - F;                                  // bits below the result's last bit
  uint64_t q = field(shift, F + 1);
  bool sticky = false;
  for (int i = 0; i < (shift - 1) / 32 && !sticky; ++i) sticky = d[i] != 0;
  for (int k = (shift - 1) / 32 * 32; k < shift - 1 && !sticky; ++k) sticky = bit(k) != 0;
  if (bit(shift - 1) && (sticky || (q & 1))) ++q;  // roundTiesToEven
  if (q >> (F + 1)) {
    q >>= 1;
    ++shift;
  }
  const uint32_t efield = static_cast<uint32_t>(shift) + 1;
  if (efield >= emax) return sign | inf;  // beyond the largest finite
  return sign | (efield << F) | static_cast<uint32_t>(q & ((1u << F) - 1));
}

std::vector<uint32_t> load(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  std::vector<char> b((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in.eof() && !in) throw std::runtime_error("cannot read " + p);
  if (b.size() % 4) throw std::runtime_error(p + ": size not a multiple of 4");
  std::vector<uint32_t> v(b.size() / 4);
  std::memcpy(v.data(), b.data(), b.size());
  return v;
}
void save(const std::string& p, const std::vector<uint32_t>& v) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(v.data()), static_cast<std::streamsize>(4 * v.size()));
  if (!out) throw std::runtime_error("cannot write " + p);
}
}  // namespace

int main(int argc, char** argv) {
  try {
    const std::string cmd = argc > 1 ? argv[1] : "";
    if (cmd == "gen" && argc == 5) {
      std::mt19937_64 rng(std::stoull(argv[2]));
      std::vector<uint32_t> v(std::stoul(argv[3]));
      std::uniform_real_distribution<float> d(-100, 100);
      for (auto& x : v) x = (rng() % 50 == 0) ? static_cast<uint32_t>(rng()) : panama::ref::float_to_bits(d(rng));
      save(argv[4], v);
      return 0;
    }
    if (cmd == "exact" && argc == 2) {
      std::string line;
      while (std::getline(std::cin, line)) {
        std::istringstream ls(line);
        std::string fmt, mode, tok;
        if (!(ls >> fmt >> mode)) continue;
        const bool ftz = mode == "ftz";
        if ((fmt != "fp32" && fmt != "bf16" && fmt != "fp16") || (!ftz && mode != "ieee"))
          throw std::runtime_error("bad line: " + line);
        std::vector<uint32_t> members;
        while (ls >> tok)
          if (tok[0] != '~') members.push_back(static_cast<uint32_t>(std::stoul(tok, nullptr, 16)));
        const int E = fmt == "fp16" ? 5 : 8, F = fmt == "fp32" ? 23 : fmt == "bf16" ? 7 : 10;
        std::printf("%x\n", exact_sum(E, F, ftz, members));
      }
      return 0;
    }
    if (cmd == "ring" && argc >= 4) {
      std::vector<std::vector<uint32_t>> in;
      for (int i = 3; i < argc; ++i) in.push_back(load(argv[i]));
      const size_t w = in.size(), n = in[0].size();
      for (const auto& v : in)
        if (v.size() != n) throw std::runtime_error("inputs differ in size");
      std::vector<uint32_t> out(n);
      panama::ref::MxcsrScope mx(false);
      for (size_t c = 0; c < w; ++c)
        for (size_t i = c * n / w; i < (c + 1) * n / w; ++i) {
          uint32_t acc = in[c][i];
          for (size_t k = 1; k < w; ++k) acc = panama::ref::add(panama::ref::Fmt::fp32, false, acc, in[(c + k) % w][i]);
          out[i] = acc;
        }
      save(argv[2], out);
      return 0;
    }
    if (cmd == "sum") {
      // Options first: the accelerator's sum mode and subnormal handling (config.json "sum",
      // "subnormals"); the defaults are the tree-order ieee sum.
      bool exact = false, ftz = false;
      int a = 2;
      for (; a + 1 < argc && std::string(argv[a]).rfind("--", 0) == 0; a += 2) {
        const std::string k = argv[a], v = argv[a + 1];
        if (k == "--sum" && (v == "tree" || v == "exact"))
          exact = v == "exact";
        else if (k == "--subnormals" && (v == "ieee" || v == "ftz"))
          ftz = v == "ftz";
        else
          throw std::runtime_error("bad option " + k + " " + v + " (--sum tree|exact, --subnormals ieee|ftz)");
      }
      if (argc - a < 3) throw std::runtime_error("sum needs PORTS OUT.bin IN.bin:PORT...");
      const int ports = std::stoi(argv[a]);
      std::vector<std::vector<uint32_t>> in(static_cast<size_t>(ports));
      std::vector<bool> mem(static_cast<size_t>(ports), false);
      size_t n = 0;
      for (int i = a + 2; i < argc; ++i) {
        const std::string a = argv[i];
        const size_t c = a.rfind(':');
        if (c == std::string::npos) throw std::runtime_error("expected IN.bin:PORT, got " + a);
        const int p = std::stoi(a.substr(c + 1));
        if (p < 0 || p >= ports || mem[static_cast<size_t>(p)]) throw std::runtime_error("bad port in " + a);
        in[static_cast<size_t>(p)] = load(a.substr(0, c));
        mem[static_cast<size_t>(p)] = true;
        n = in[static_cast<size_t>(p)].size();
      }
      for (int p = 0; p < ports; ++p)
        if (mem[static_cast<size_t>(p)] && in[static_cast<size_t>(p)].size() != n)
          throw std::runtime_error("inputs differ in size");
      std::vector<uint32_t> out(n), vals(static_cast<size_t>(ports)), members;
      for (size_t i = 0; i < n; ++i) {
        for (int p = 0; p < ports; ++p)
          vals[static_cast<size_t>(p)] = mem[static_cast<size_t>(p)] ? in[static_cast<size_t>(p)][i] : 0;
        if (exact) {
          members.clear();
          for (int p = 0; p < ports; ++p)
            if (mem[static_cast<size_t>(p)]) members.push_back(vals[static_cast<size_t>(p)]);
          out[i] = exact_sum(8, 23, ftz, members);
        } else {
          out[i] = panama::ref::tree_sum(panama::ref::Fmt::fp32, ftz, vals, mem);
        }
      }
      save(argv[a + 1], out);
      return 0;
    }
    std::fprintf(stderr,
                 "usage: host_treesum gen SEED N OUT | sum [--sum tree|exact] [--subnormals ieee|ftz] PORTS OUT "
                 "IN:PORT... | ring OUT IN... | exact\n");
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "host_treesum: %s\n", e.what());
    return 1;
  }
}
