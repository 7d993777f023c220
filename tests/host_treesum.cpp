// Helper of tests/host_netns.sh:
//   host_treesum gen SEED N OUT.bin            random fp32 bit patterns (NaN, inf, subnormals too)
//   host_treesum sum PORTS OUT.bin IN.bin:PORT ...   ref::tree_sum over the ports (numerics.md)
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "ref_float.h"

namespace {
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
    if (cmd == "sum" && argc >= 5) {
      const int ports = std::stoi(argv[2]);
      std::vector<std::vector<uint32_t>> in(static_cast<size_t>(ports));
      std::vector<bool> mem(static_cast<size_t>(ports), false);
      size_t n = 0;
      for (int i = 4; i < argc; ++i) {
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
      std::vector<uint32_t> out(n), vals(static_cast<size_t>(ports));
      for (size_t i = 0; i < n; ++i) {
        for (int p = 0; p < ports; ++p)
          vals[static_cast<size_t>(p)] = mem[static_cast<size_t>(p)] ? in[static_cast<size_t>(p)][i] : 0;
        out[i] = panama::ref::tree_sum(panama::ref::Fmt::fp32, false, vals, mem);
      }
      save(argv[3], out);
      return 0;
    }
    std::fprintf(stderr, "usage: host_treesum gen SEED N OUT | sum PORTS OUT IN:PORT...\n");
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "host_treesum: %s\n", e.what());
    return 1;
  }
}
