// exact_ref_tool: the tests' exact-sum reference (exact_ref.h) on stdin's lines, for
// tests/exact_ref_check.py. A line is "FORMAT MODE LEAF..." (hex bits; "~" before a leaf marks
// an absent member); the answer is the sum's hex bits, one line each.
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>

#include "exact_ref.h"

int main() {
  std::string line;
  long n = 0;
  while (std::getline(std::cin, line)) {
    ++n;
    std::istringstream is(line);
    std::string fmt, mode, tok;
    is >> fmt >> mode;
    panama::xref::Fmt f;
    if (fmt == "fp32")
      f = panama::xref::fp32();
    else if (fmt == "bf16")
      f = panama::xref::bf16();
    else if (fmt == "fp16")
      f = panama::xref::fp16();
    else {
      std::fprintf(stderr, "exact_ref_tool: line %ld: unknown format '%s'\n", n, fmt.c_str());
      return 2;
    }
    std::vector<uint32_t> leaves;
    std::vector<bool> member;
    while (is >> tok) {
      const bool absent = tok[0] == '~';
      leaves.push_back(static_cast<uint32_t>(std::stoul(absent ? tok.substr(1) : tok, nullptr, 16)));
      member.push_back(!absent);
    }
    std::printf("%x\n", panama::xref::exact_sum(f, mode == "ftz", leaves, member));
  }
  return 0;
}
