// PanamaWorkerApp: one server's part of an in-network job (PANAMA, PANAMA without CC, SwitchML*,
// the quorum variants): per tree, a UDP socket, a window (panama::host::Dctcp) and the state of
// the tree's vectors; it sends contributions to the tree's first accelerator and takes results.
// Sim (jobs.cpp, innet.cpp) creates one per worker when the job is placed, starts it at once
// (Start), drives the iterations and the repair tick, and stops it (Leave) when the job leaves. As
// RingWorkerApp, it is not added to the node's application list (whose Initialize and
// StartApplication events would change the event order and count).
#pragma once

#include "accel.h"
#include "dctcp.h"

#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

namespace dcsim {

class PanamaWorkerApp : public Application {
 public:
  static TypeId GetTypeId();
  // Per tree: the first accelerator on the way up, and this worker's child index there.
  void SetTreeEntry(uint32_t t, Ipv4Address dest, uint16_t child);
  // Hooks to the job: a result taken (its CE mark; unsent: for a vector this worker had not
  // sent), a frame that is not a result of this worker's trees, the iteration's last result.
  void SetResultCallback(std::function<void(bool ce, bool unsent)> cb) { result_cb_ = std::move(cb); }
  void SetUndecodableCallback(std::function<void()> cb) { undecodable_cb_ = std::move(cb); }
  void SetDoneCallback(std::function<void()> cb) { done_cb_ = std::move(cb); }
  void Start() { StartApplication(); }
  void Leave() { StopApplication(); }
  void BeginIteration(uint64_t iter);
  void GradientReady();
  // The repair tick: retransmits the outstanding contributions of every tree without progress
  // for RepairTimeout.
  void Repair();

 private:
  struct Tree {
    std::shared_ptr<panama::host::Dctcp> cc;
    Ptr<Socket> sock;
    Ipv4Address dest;
    uint16_t child = 0;
    uint64_t vid_base = 0;  // first VID of the current iteration
    uint32_t count = 0;     // vectors of this tree per iteration
    uint32_t next_send = 0, got = 0, inflight = 0;
    std::vector<uint8_t> state;  // per vector: 0 unsent, 1 sent, 2 result
    double last_progress = 0;
  };
  void StartApplication() override;
  void StopApplication() override;
  void Send(uint32_t t);
  void SendContribution(uint32_t t, uint32_t i, bool retx);
  void Recv(Ptr<Socket> s);

  // Attributes.
  uint32_t job_ = 0, origin_ = 0, trees_ = 1, payload_ = 0;
  uint64_t vectors_ = 0;
  double window_max_ = 1, window_init_ = 1, rto_s_ = 0;
  bool cc_on_ = true, mcast_ecn_root_ = false;

  std::vector<Tree> trees;
  bool running_ = false, computing_ = false, done_ = false;
  std::function<void(bool, bool)> result_cb_;
  std::function<void()> undecodable_cb_, done_cb_;
};

}  // namespace dcsim
