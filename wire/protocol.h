// SPDX-License-Identifier: MIT
// The protocol constants outside the aggregation header (docs/rtl.md, "Protocol constants"): the
// MTU and header budget, the management protocol (docs/mgmt.md) and the standalone L2 switch's
// register window (docs/fpga.md). This table is their one definition: the host and the
// testbenches include it, and panama-gen writes it into <prefix>_defs.vh for the RTL (the board
// layer includes that like the core's blocks) and into protocol.md for the docs. The wire
// offsets and classification constants are in wire.h, written into the same include.
#pragma once

#include <cstdint>

#include "wire.h"

namespace panama::proto {

// ---- MTU and header budget
// The IP MTU the default frame size fits (an Ethernet payload of 1500 bytes).
constexpr int kMtu = 1500;
// Bytes of headers counted in the IPv4 total length: IPv4, UDP and the aggregation header (50).
constexpr int kIpHeaderBudget = static_cast<int>(wire::off::payload - wire::off::ip);
// Largest IPv4 total length.
constexpr int kMaxIpTotalLen = 65535;
// Payload bytes of a frame that fits kMtu (1450): the default MAX_ELEMS is this / element bytes.
constexpr int kDefaultPayloadBytes = kMtu - kIpHeaderBudget;

// ---- Management over UDP (docs/mgmt.md)
constexpr uint16_t kMgmtUdpPort = 9057;         // default management UDP port
constexpr uint32_t kMgmtReqMagic = 0x31474d50;  // "PMG1": low word of a request's first 64-bit word
constexpr uint32_t kMgmtRspMagic = 0x31524d50;  // "PMR1": low word of a response's first 64-bit word
// Field layout (docs/mgmt.md): a request or response is little-endian 64-bit words; a field is at
// a byte offset inside its word (bits 8 x offset and up).
constexpr int kMgmtWordBytes = 8;
constexpr int kMgmtOffMagic = 0;      // word 0: the magic (32 bits) ...
constexpr int kMgmtOffId = 4;         // ... and the request ID (32 bits, echoed)
constexpr int kMgmtWordSeq = 1;       // the sequence number (64 bits)
constexpr int kMgmtWordOps = 2;       // first operation word (request) / result word (response)
constexpr int kMgmtOpWords = 2;       // words per operation in a request (one per result in a response)
constexpr int kMgmtOpOffCode = 0;     // operation word 0: the code (8 bits; bytes 1-3 reserved, 0) ...
constexpr int kMgmtOpOffAddr = 4;     // ... and the register's byte address (32 bits)
constexpr int kMgmtOpOffMask = 0;     // operation word 1: the mask (32 bits) ...
constexpr int kMgmtOpOffValue = 4;    // ... and the value (32 bits)
constexpr int kMgmtResOffStatus = 0;  // result word: the status (8 bits) ...
constexpr int kMgmtResOffValue = 4;   // ... and the value (32 bits)
constexpr int kMgmtTagWords = 1;      // the SipHash-2-4 tag, the last word
constexpr int kMgmtMaxOps = 8;        // most operations in one request (MAX_OPS)
constexpr uint8_t kMgmtOpRead = 1, kMgmtOpWrite = 2, kMgmtOpRmw = 3;
constexpr uint8_t kMgmtStatusUnknownOp = 0xff;  // result status of an unknown operation (skipped)

// ---- The standalone L2 switch's registers (panama_l2sw, docs/fpga.md)
// Offset of its window above the register map's size, seen through management.
constexpr uint32_t kL2swWindow = 0x800;
constexpr uint32_t kL2swId = 0x4c325357;  // "L2SW": the ID register at window offset 0
constexpr uint32_t kL2swFdbBase = 0x400;  // FDB entry i at kL2swFdbBase + kL2swFdbStride * i
constexpr uint32_t kL2swFdbStride = 16;

// One row of the table as panama-gen writes it (Verilog localparam, docs row).
struct Constant {
  const char* name;  // Verilog name, ALL_CAPS
  uint64_t value;
  int bits;          // Verilog width; 0: integer
  bool hex;          // written in hexadecimal in the docs
  const char* what;  // one line for the docs
};

// Every constant above, in order.
inline constexpr Constant kConstants[] = {
    {"MTU", kMtu, 0, false, "IP MTU the default frame size fits"},
    {"IP_HEADER_BUDGET", kIpHeaderBudget, 0, false,
     "header bytes inside the IPv4 total length (IPv4 + UDP + aggregation)"},
    {"MAX_IP_TOTAL_LEN", kMaxIpTotalLen, 0, false, "largest IPv4 total length"},
    {"DEFAULT_PAYLOAD_BYTES", kDefaultPayloadBytes, 0, false,
     "payload bytes of a frame of MTU bytes (default MAX_ELEMS x ES)"},
    {"MGMT_UDP_PORT_DEFAULT", kMgmtUdpPort, 16, false, "default management UDP port"},
    {"MGMT_REQ_MAGIC", kMgmtReqMagic, 32, true, "management request magic \"PMG1\""},
    {"MGMT_RSP_MAGIC", kMgmtRspMagic, 32, true, "management response magic \"PMR1\""},
    {"MGMT_WORD_BYTES", kMgmtWordBytes, 0, false, "management: bytes per little-endian word"},
    {"MGMT_OFF_MAGIC", kMgmtOffMagic, 0, false, "management word 0: byte offset of the magic (32 bits)"},
    {"MGMT_OFF_ID", kMgmtOffId, 0, false, "management word 0: byte offset of the request ID (32 bits)"},
    {"MGMT_WORD_SEQ", kMgmtWordSeq, 0, false, "management: word of the sequence number (64 bits)"},
    {"MGMT_WORD_OPS", kMgmtWordOps, 0, false, "management: first operation (request) or result (response) word"},
    {"MGMT_OP_WORDS", kMgmtOpWords, 0, false, "management request: words per operation"},
    {"MGMT_OP_OFF_CODE", kMgmtOpOffCode, 0, false, "operation word 0: byte offset of the code (8 bits)"},
    {"MGMT_OP_OFF_ADDR", kMgmtOpOffAddr, 0, false, "operation word 0: byte offset of the address (32 bits)"},
    {"MGMT_OP_OFF_MASK", kMgmtOpOffMask, 0, false, "operation word 1: byte offset of the mask (32 bits)"},
    {"MGMT_OP_OFF_VALUE", kMgmtOpOffValue, 0, false, "operation word 1: byte offset of the value (32 bits)"},
    {"MGMT_RES_OFF_STATUS", kMgmtResOffStatus, 0, false, "result word: byte offset of the status (8 bits)"},
    {"MGMT_RES_OFF_VALUE", kMgmtResOffValue, 0, false, "result word: byte offset of the value (32 bits)"},
    {"MGMT_TAG_WORDS", kMgmtTagWords, 0, false, "management: tag words at the end (SipHash-2-4)"},
    {"MGMT_MAX_OPS", kMgmtMaxOps, 0, false, "management: most operations in one request"},
    {"MGMT_OP_READ", kMgmtOpRead, 8, false, "management operation code: read"},
    {"MGMT_OP_WRITE", kMgmtOpWrite, 8, false, "management operation code: write"},
    {"MGMT_OP_RMW", kMgmtOpRmw, 8, false, "management operation code: read-modify-write"},
    {"MGMT_STATUS_UNKNOWN_OP", kMgmtStatusUnknownOp, 8, true, "management result status: unknown operation"},
    {"L2SW_WINDOW", kL2swWindow, 0, true, "L2 switch window, above the register map's size"},
    {"L2SW_ID", kL2swId, 32, true, "L2 switch ID register value \"L2SW\""},
    {"L2SW_FDB_BASE", kL2swFdbBase, 0, true, "L2 switch FDB entry 0 (window offset)"},
    {"L2SW_FDB_STRIDE", kL2swFdbStride, 0, false, "bytes between FDB entries"},
};

}  // namespace panama::proto
