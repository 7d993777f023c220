// The SystemC model's exact-sum arithmetic (systemc_model/exact_model.h) against the tests'
// exact reference (testbench/exact_ref.h; itself checked against rational arithmetic by
// exact_ref_check.py): millions of sums of 2..16 leaves, edge-heavy, every format and mode.
#include <cstdio>
#include <random>

#include "exact_model.h"
#include "exact_ref.h"

int main(int argc, char** argv) {
  const long count = argc > 1 ? std::atol(argv[1]) : 1000000;
  std::mt19937_64 rng(14);
  long bad = 0, total = 0;
  const panama::xref::Fmt fmts[] = {panama::xref::fp32(), panama::xref::bf16(), panama::xref::fp16()};
  for (const auto& f : fmts)
    for (int ftz = 0; ftz < 2; ++ftz)
      for (long c = 0; c < count; ++c) {
        const int W = 1 + f.E + f.F, n = 2 + static_cast<int>(rng() % 15);
        const uint32_t S = 1u << (W - 1), emax = (1u << f.E) - 1;
        std::vector<uint32_t> v(n);
        std::vector<bool> m(n);
        const int kind = static_cast<int>(rng() % 5);
        for (int i = 0; i < n; ++i) {
          const uint32_t e = kind == 1   ? static_cast<uint32_t>(rng() % 3)
                             : kind == 2 ? static_cast<uint32_t>(emax - 1 - rng() % 2)
                                         : static_cast<uint32_t>(rng() % (emax + 1));
          v[i] = static_cast<uint32_t>((rng() % 2) << (W - 1)) | (e << f.F) |
                 static_cast<uint32_t>(rng() & ((1u << f.F) - 1));
          if (kind == 3 && i % 2) v[i] = v[i - 1] ^ S;  // cancellation pairs
          if (kind == 4 && rng() % 2) v[i] = S;
          m[i] = rng() % 8 != 0;
        }
        panama::model_exact::Sum acc(f.E, f.F, f.qnan, ftz);
        for (int i = 0; i < n; ++i)
          if (m[i]) acc.add(v[i]);
        const uint32_t got = acc.result(), want = panama::xref::exact_sum(f, ftz, v, m);
        ++total;
        if (got != want && ++bad <= 10) {
          std::printf("E%d F%d %s: model %x reference %x; leaves", f.E, f.F, ftz ? "ftz" : "ieee", got, want);
          for (int i = 0; i < n; ++i) std::printf(" %s%x", m[i] ? "" : "~", v[i]);
          std::printf("\n");
        }
      }
  std::printf("exact model arithmetic: %ld sums, %ld mismatches\n", total, bad);
  return bad ? 1 : 0;
}
