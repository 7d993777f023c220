// The accelerator model of panama-dcsim: the aggregation header the simulated frames carry, and
// an accelerator's state (per job and tree a context that sums contributions in VID order).
#pragma once

#include "fattree_routing.h"
#include "wire.h"  // the aggregation UDP port

#include "ns3/internet-module.h"
#include "ns3/network-module.h"

#include <bitset>
#include <cstdint>
#include <map>
#include <vector>

namespace dcsim {

using namespace ns3;
namespace ps = panama::sim;

constexpr uint16_t kAccelPort = panama::wire::kDefaultAggPort;
constexpr uint16_t kResultPort = 9100;  // + tree: a worker's socket for that tree's results
// The simulation's aggregation header (Hdr below) in the UDP payload: its own 24-byte layout (job,
// tree, worker, VID, flags, origin), not the wire format's 22-byte header (wire.h, off::payload -
// off::agg); test_sim.py's expected times count these 24 bytes.
constexpr uint32_t kHdrBytes = 24;
constexpr uint8_t kEct0 = 0x02, kCe = 0x03;
constexpr int kMaxWorkers = 128;
// TCP ports below ns-3's ephemeral range (49152 on): a background flow's listener takes one of
// 1024 + (n mod kFlowPorts), a ring's kRingPortBase + (job mod kRingPorts), so the load
// measurement tells the two apart by destination port.
constexpr int kFlowPorts = 39976, kRingPortBase = 41000, kRingPorts = 8000;

// The aggregation header at the start of every contribution and result.
struct Hdr {
  uint32_t job;
  uint16_t tree, worker;
  uint64_t vid;
  uint8_t flags;  // 1 result, 2 retransmission, 4 (a result) marked CE by the root
  uint8_t pad;
  uint16_t origin;  // the worker that sent a contribution (repairs are answered to it)
  uint16_t nw;      // the workers whose contributions this frame sums (1 for a worker's own)
  uint16_t pad2;
};
static_assert(sizeof(Hdr) == kHdrBytes, "header layout");

// One tree of one job on one accelerator: aggregation state in VID order. Its children are the
// workers (an edge accelerator, or the root in single-level mode) or the accelerators one level
// down; a non-root sends each partial sum to its parent, the root sends the results.
struct AccelCtx {
  // workers: the number of children; need: the workers (summed over the children's frames) whose
  // contributions release a vector before every child is in (a job-level quorum, docs/sim.md).
  int workers = 0, need = 0;
  bool root = true, mcast = false;
  Ipv4Address parent;                    // non-root: the parent accelerator
  uint16_t my_child = 0;                 // non-root: this accelerator's child index at the parent
  Ipv4Address group;                     // root, mcast: the tree's multicast group
  std::vector<Ipv4Address> worker_addr;  // root: every worker of the job (results, repairs)
  std::vector<uint16_t> worker_port;
  uint64_t next_emit = 0;
  struct Rec {
    int count = 0, wsum = 0;
    bool ce = false, complete = false, hold = false;
    std::bitset<kMaxWorkers> seen;
  };
  std::map<uint64_t, Rec> open;
  // The CE of the last kCeMemory vectors released (tagged by VID): a repair forwarded up, or a
  // result sent again by the root, carries the mark the vector had.
  static constexpr uint64_t kCeMemory = 4096;
  std::vector<uint64_t> released{std::vector<uint64_t>(kCeMemory, ~0ull)};
  void remember(uint64_t vid, bool ce) { released[vid % kCeMemory] = vid << 1 | (ce ? 1 : 0); }
  bool released_ce(uint64_t vid) const {
    const uint64_t e = released[vid % kCeMemory];
    return e != ~0ull && (e >> 1) == vid && (e & 1);
  }
};

struct AccelStats {
  uint64_t rx_frames = 0, rx_bytes = 0, tx_frames = 0, late = 0, dup = 0, overflow = 0, resent = 0;
  uint64_t rx_ce = 0, tx_ce = 0;  // frames that arrived / left with CE
  double first_rx = -1, last_rx = -1, first_tx = -1, last_tx = -1;
  uint64_t max_open = 0;
};

struct Accel {
  int core = 0;  // the switch's index at its level
  ps::Role level = ps::Role::core;
  Ptr<Node> node;
  Ptr<Socket> rx, tx_ect, tx_ce;
  std::map<uint64_t, AccelCtx> ctx;  // key (job << 16) | tree
  uint64_t open_frames = 0;
  AccelStats st;
};

// A frame of the simulation: the header and `payload` bytes, with the IPv4 TOS (ECN bits) to send.
Ptr<Packet> frame(const Hdr& h, uint32_t payload, uint8_t tos);
bool parse(Ptr<Packet> p, Hdr& h);
bool ce_of(Ptr<Packet> p);

}  // namespace dcsim
