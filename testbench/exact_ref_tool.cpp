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
    try {
      f = panama::xref::fmt_named(fmt);
    } catch (const std::invalid_argument& e) {
      std::fprintf(stderr, "exact_ref_tool: line %ld: %s\n", n, e.what());
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
