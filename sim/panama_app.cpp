// PanamaWorkerApp: a worker of an in-network job (panama_app.h).
#include "panama_app.h"

#include <stdexcept>

namespace dcsim {

NS_OBJECT_ENSURE_REGISTERED(PanamaWorkerApp);

TypeId PanamaWorkerApp::GetTypeId() {
  static TypeId tid =
      TypeId("dcsim::PanamaWorkerApp")
          .SetParent<Application>()
          .SetGroupName("Applications")
          .AddConstructor<PanamaWorkerApp>()
          .AddAttribute("JobId", "The job (the header's job field).", UintegerValue(0),
                        MakeUintegerAccessor(&PanamaWorkerApp::job_), MakeUintegerChecker<uint32_t>())
          .AddAttribute("Origin", "This worker's index in its job.", UintegerValue(0),
                        MakeUintegerAccessor(&PanamaWorkerApp::origin_), MakeUintegerChecker<uint16_t>())
          .AddAttribute("Trees", "The job's aggregation trees.", UintegerValue(1),
                        MakeUintegerAccessor(&PanamaWorkerApp::trees_), MakeUintegerChecker<uint32_t>(1))
          .AddAttribute("Vectors", "Vectors per iteration, over all trees.", UintegerValue(0),
                        MakeUintegerAccessor(&PanamaWorkerApp::vectors_), MakeUintegerChecker<uint64_t>())
          .AddAttribute("PayloadBytes", "Payload bytes of a frame.", UintegerValue(0),
                        MakeUintegerAccessor(&PanamaWorkerApp::payload_), MakeUintegerChecker<uint32_t>())
          .AddAttribute("WindowCap", "Largest window per tree, in vectors.", DoubleValue(1),
                        MakeDoubleAccessor(&PanamaWorkerApp::window_max_), MakeDoubleChecker<double>(1))
          .AddAttribute("WindowInit", "Initial window per tree, in vectors.", DoubleValue(1),
                        MakeDoubleAccessor(&PanamaWorkerApp::window_init_), MakeDoubleChecker<double>(1))
          .AddAttribute("CongestionControl", "The window follows ECN marks (DCTCP); off: fixed.", BooleanValue(true),
                        MakeBooleanAccessor(&PanamaWorkerApp::cc_on_), MakeBooleanChecker())
          .AddAttribute("RepairTimeout",
                        "Seconds without a result before a tree's outstanding contributions are resent.",
                        DoubleValue(0), MakeDoubleAccessor(&PanamaWorkerApp::rto_s_), MakeDoubleChecker<double>(0))
          .AddAttribute("McastEcnRoot", "A result's CE is the root's header bit (else the copy's own IP mark).",
                        BooleanValue(false), MakeBooleanAccessor(&PanamaWorkerApp::mcast_ecn_root_),
                        MakeBooleanChecker());
  return tid;
}

void PanamaWorkerApp::SetTreeEntry(uint32_t t, Ipv4Address dest, uint16_t child) {
  trees.at(t).dest = dest;
  trees.at(t).child = child;
}

void PanamaWorkerApp::StartApplication() {
  running_ = true;
  panama::host::WindowParams wp;
  wp.max = window_max_;
  wp.init = window_init_;
  wp.cc = cc_on_;
  trees.resize(trees_);
  for (uint32_t t = 0; t < trees_; ++t) {
    Tree& wt = trees[t];
    wt.cc = std::make_shared<panama::host::Dctcp>(wp);
    wt.count = static_cast<uint32_t>(vectors_ / trees_ + (static_cast<uint64_t>(t) < vectors_ % trees_));
    wt.sock = Socket::CreateSocket(GetNode(), UdpSocketFactory::GetTypeId());
    if (wt.sock->Bind(InetSocketAddress(Ipv4Address::GetAny(), static_cast<uint16_t>(kResultPort + t))) != 0)
      throw std::runtime_error("result port in use");
    wt.sock->SetIpTos(kEct0);
    wt.sock->SetIpRecvTos(true);
    wt.sock->SetRecvCallback(MakeCallback(&PanamaWorkerApp::Recv, this));
  }
}

void PanamaWorkerApp::StopApplication() {
  running_ = false;
  for (auto& wt : trees) {
    if (wt.sock) wt.sock->Close();
    wt.sock = nullptr;
    wt.state.clear();
    wt.state.shrink_to_fit();
  }
}

void PanamaWorkerApp::BeginIteration(uint64_t iter) {
  done_ = false;
  computing_ = true;
  for (auto& wt : trees) {
    if (iter > 0) wt.vid_base += wt.count;
    wt.next_send = wt.got = wt.inflight = 0;
    wt.state.assign(wt.count, 0);
  }
}

void PanamaWorkerApp::GradientReady() {
  computing_ = false;
  const double now = Simulator::Now().GetSeconds();
  for (uint32_t t = 0; t < trees.size(); ++t) {
    trees[t].last_progress = now;
    Send(t);
  }
}

void PanamaWorkerApp::SendContribution(uint32_t t, uint32_t i, bool retx) {
  Tree& wt = trees[t];
  Hdr h{};
  h.job = job_;
  h.tree = static_cast<uint16_t>(t);
  h.worker = wt.child;
  h.origin = static_cast<uint16_t>(origin_);
  h.vid = wt.vid_base + i;
  h.flags = retx ? 2 : 0;
  wt.sock->SendTo(frame(h, payload_, kEct0), 0, InetSocketAddress(wt.dest, kAccelPort));
}

void PanamaWorkerApp::Send(uint32_t t) {
  if (computing_) return;
  Tree& wt = trees[t];
  const uint32_t allowed = static_cast<uint32_t>(wt.cc->allowed());
  while (wt.inflight < allowed && wt.next_send < wt.count) {
    const uint32_t i = wt.next_send++;
    if (wt.state[i] != 0) continue;  // its result came already (partial synchronisation)
    SendContribution(t, i, false);
    wt.state[i] = 1;
    ++wt.inflight;
  }
}

void PanamaWorkerApp::Recv(Ptr<Socket> s) {
  if (!running_) return;
  Address from;
  while (Ptr<Packet> p = s->RecvFrom(from)) {
    Hdr h;
    if (!parse(p, h) || !(h.flags & 1) || h.tree >= trees.size()) {
      undecodable_cb_();
      continue;
    }
    Tree& wt = trees[h.tree];
    if (h.job != job_ || h.vid < wt.vid_base || h.vid >= wt.vid_base + wt.count || done_) continue;
    const uint32_t i = static_cast<uint32_t>(h.vid - wt.vid_base);
    if (wt.state[i] == 2) continue;
    if (wt.state[i] == 1) --wt.inflight;
    const bool unsent = wt.state[i] == 0;  // the quorum went on without this worker's part
    wt.state[i] = 2;
    ++wt.got;
    wt.last_progress = Simulator::Now().GetSeconds();
    // Multicast ECN: each copy's own mark (its path's queues), or the root's alone (the header).
    const bool ce = mcast_ecn_root_ ? (h.flags & 4) != 0 : ce_of(p);
    result_cb_(ce, unsent);
    wt.cc->on_result(ce);
    Send(h.tree);
    bool all = true;
    for (const auto& x : trees) all = all && x.got == x.count;
    if (all) {
      done_ = true;
      done_cb_();
    }
  }
}

void PanamaWorkerApp::Repair() {
  if (!running_ || done_ || computing_) return;
  const double now = Simulator::Now().GetSeconds();
  for (uint32_t t = 0; t < trees.size(); ++t) {
    Tree& wt = trees[t];
    if (wt.inflight == 0 || now - wt.last_progress < rto_s_) continue;
    for (uint32_t i = 0; i < wt.next_send; ++i)
      if (wt.state[i] == 1) SendContribution(t, i, true);
    wt.last_progress = now;
  }
}

}  // namespace dcsim
