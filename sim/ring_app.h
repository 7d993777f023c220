// RingWorkerApp: one server's part of a job's ring all-reduce over TCP, an ns-3 Application on
// that server's node. Sim (ring.cpp, jobs.cpp) creates one per worker when the job is placed,
// starts it at once (Start) and drives the iterations; Leave stops it. It is not added to the
// node's application list: Node::AddApplication would schedule its Initialize and
// StartApplication as two events of their own, so the job's sockets would open later in the
// event order and the engine's event count would change.
#pragma once

#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"

#include <cstdint>
#include <functional>

namespace dcsim {

using namespace ns3;

class RingWorkerApp : public Application {
 public:
  static TypeId GetTypeId();
  // Called once this worker has received the whole reduced vector of the current iteration.
  void SetDoneCallback(std::function<void()> cb) { done_cb_ = std::move(cb); }
  // Iteration `iter` starts: the worker computes its gradient (sends nothing) until GradientReady.
  void BeginIteration(uint64_t iter);
  void GradientReady();
  // The job is placed: StartApplication now (listen, connect to the peer).
  void Start() { StartApplication(); }
  // The job has left: StopApplication now (its sockets close).
  void Leave() { StopApplication(); }

 private:
  void StartApplication() override;
  void StopApplication() override;
  void Fill();
  void FillCb(Ptr<Socket>, uint32_t) { Fill(); }
  void Accept(Ptr<Socket> s, const Address&);
  void Recv(Ptr<Socket> s);

  // Attributes.
  Ipv4Address peer_;    // the next worker of the ring
  uint16_t port_ = 0;   // the ring's port, listened on here and connected to at the peer
  uint64_t chunk_ = 0;  // S / N bytes
  uint32_t steps_ = 0;  // 2 (N - 1)
  uint32_t send_max_ = 1u << 16;

  Ptr<Socket> tx_, listen_, rx_;
  uint64_t sent_ = 0, recv_ = 0, iter_ = 0;
  bool running_ = false, computing_ = false, done_ = false;
  std::function<void()> done_cb_;
};

}  // namespace dcsim
