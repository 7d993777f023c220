// SPDX-License-Identifier: MIT
// The words of the harnesses' --live line protocol, shared by the server (standin/engines/live_protocol.h,
// served by standin/engines/rtl_harness.cpp and standin/engines/shell_harness.cpp) and its client, the switch
// stand-in's RTL engine (standin/engines/rtl_engine_client.cpp). Requests, one per line:
//   inject P HEX | run | advance N | outputs | counters | cycles | write ADDR VALUE | read ADDR | quit
// Replies: run, advance, write: kOk; outputs: "out PORT CONTEXT HEX" lines (PORT -1: m_agg), then
// kEnd; counters: one line of JSON; cycles: a number; read: the word read, in decimal.
// Only constants here: the header is cheap to include on both sides.
#pragma once

namespace live {

constexpr const char* kFlag = "--live";  // the harness's command-line switch for this protocol

// Requests.
constexpr const char* kInject = "inject";
constexpr const char* kRun = "run";
constexpr const char* kAdvance = "advance";
constexpr const char* kOutputs = "outputs";
constexpr const char* kCounters = "counters";
constexpr const char* kCycles = "cycles";
constexpr const char* kWrite = "write";
constexpr const char* kRead = "read";
constexpr const char* kQuit = "quit";

// Replies.
constexpr const char* kOk = "ok";    // run, advance, write done
constexpr const char* kOut = "out";  // first word of each output frame's line
constexpr const char* kEnd = "end";  // after the last "out" line

}  // namespace live
