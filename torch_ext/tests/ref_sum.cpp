// The tests' expected all-reduce (docs/torch.md "Tests"): the tree-order sum of numerics.md over
// the accelerator's ports, in any format, with the host CPU's own addition (numerics/ref_float.h).
//   torch_ref_sum --format fp32|bf16|fp16 [--subnormals ieee|ftz] PORTS OUT.bin IN.bin:PORT ...
// Files hold little-endian elements of the format. (Exact-sum designs: host_treesum sum --sum exact.)
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

#include "ref_float.h"

namespace {

std::vector<uint32_t> load(const std::string& p, size_t es) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + p);
  std::vector<char> b((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (b.size() % es) throw std::runtime_error(p + ": size not a multiple of the element size");
  std::vector<uint32_t> v(b.size() / es, 0);
  for (size_t i = 0; i < v.size(); ++i) std::memcpy(&v[i], b.data() + es * i, es);
  return v;
}

int run(int argc, char** argv) {
  panama::Format fmt = panama::Format::fp32;
  bool ftz = false;
  int a = 1;
  for (; a + 1 < argc && std::string(argv[a]).rfind("--", 0) == 0; a += 2) {
    const std::string k = argv[a], v = argv[a + 1];
    if (k == "--format")
      fmt = panama::parse_format(v);
    else if (k == "--subnormals" && (v == "ieee" || v == "ftz"))
      ftz = v == "ftz";
    else
      throw std::runtime_error("bad option " + k + " " + v);
  }
  if (argc - a < 3) throw std::runtime_error("usage: torch_ref_sum [--format F] [--subnormals S] PORTS OUT IN:PORT...");
  const size_t es = static_cast<size_t>(panama::elem_bytes(fmt));
  const size_t ports = static_cast<size_t>(std::stoi(argv[a]));
  std::vector<std::vector<uint32_t>> in(ports);
  std::vector<bool> member(ports, false);
  size_t n = 0;
  for (int i = a + 2; i < argc; ++i) {
    const std::string s = argv[i];
    const size_t c = s.rfind(':');
    if (c == std::string::npos) throw std::runtime_error("expected IN.bin:PORT, got " + s);
    const size_t p = static_cast<size_t>(std::stoi(s.substr(c + 1)));
    if (p >= ports || member[p]) throw std::runtime_error("bad port in " + s);
    in[p] = load(s.substr(0, c), es);
    member[p] = true;
    if (i > a + 2 && in[p].size() != n) throw std::runtime_error("inputs differ in size");
    n = in[p].size();
  }
  std::vector<uint32_t> vals(ports, 0);
  std::vector<char> out(n * es);
  for (size_t i = 0; i < n; ++i) {
    for (size_t p = 0; p < ports; ++p) vals[p] = member[p] ? in[p][i] : 0;
    const uint32_t s = panama::ref::tree_sum(fmt, ftz, vals, member);
    std::memcpy(out.data() + es * i, &s, es);
  }
  std::ofstream o(argv[a + 1], std::ios::binary | std::ios::trunc);
  o.write(out.data(), static_cast<std::streamsize>(out.size()));
  if (!o) throw std::runtime_error(std::string("cannot write ") + argv[a + 1]);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "torch_ref_sum: %s\n", e.what());
    return 1;
  }
}
