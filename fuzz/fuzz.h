// What every fuzz target shares (README "Verification", docs/host-testing.md "Fuzzing and sanitizers"). A target is one
// LLVMFuzzerTestOneInput: libFuzzer calls it in build/fuzz/fuzz_NAME (clang,
// -fsanitize=fuzzer,address,undefined), and fuzz/replay_main.cpp calls it on stored inputs in the
// normal build (ctest fuzz.replay.NAME).
//
// A target catches only the error its parser documents (one clear line); anything else escaping
// (another exception type, a sanitizer report, a failed FUZZ_CHECK) is a finding.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

// A property the parser promises; a violation aborts with the line, which libFuzzer reports.
#define FUZZ_CHECK(cond)                                                                 \
  do {                                                                                   \
    if (!(cond)) {                                                                       \
      std::fprintf(stderr, "%s:%d: FUZZ_CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                                      \
    }                                                                                    \
  } while (0)

// The error a target expects must say something: one non-empty line.
inline void fuzz_check_message(const char* what) {
  const std::string m = what;
  FUZZ_CHECK(!m.empty());
  FUZZ_CHECK(m.find('\n') == std::string::npos);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
