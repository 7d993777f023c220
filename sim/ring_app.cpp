// RingWorkerApp: ring all-reduce over TCP, 2 (N - 1) steps of S / N bytes, pipelined at byte
// granularity (as NCCL and Horovod cut chunks into slices): worker w may be one chunk ahead of
// what it has received from its predecessor.
#include "ring_app.h"

#include <algorithm>

namespace dcsim {

NS_OBJECT_ENSURE_REGISTERED(RingWorkerApp);

TypeId RingWorkerApp::GetTypeId() {
  static TypeId tid =
      TypeId("dcsim::RingWorkerApp")
          .SetParent<Application>()
          .SetGroupName("Applications")
          .AddConstructor<RingWorkerApp>()
          .AddAttribute("Peer", "The next worker of the ring.", Ipv4AddressValue(),
                        MakeIpv4AddressAccessor(&RingWorkerApp::peer_), MakeIpv4AddressChecker())
          .AddAttribute("Port", "The ring's TCP port (listened on, and connected to at the peer).", UintegerValue(0),
                        MakeUintegerAccessor(&RingWorkerApp::port_), MakeUintegerChecker<uint16_t>())
          .AddAttribute("ChunkBytes", "S / N: the bytes of one ring step.", UintegerValue(0),
                        MakeUintegerAccessor(&RingWorkerApp::chunk_), MakeUintegerChecker<uint64_t>())
          .AddAttribute("Steps", "Ring steps per iteration, 2 (N - 1).", UintegerValue(0),
                        MakeUintegerAccessor(&RingWorkerApp::steps_), MakeUintegerChecker<uint32_t>())
          .AddAttribute("SendBytes", "At most this many bytes per Send call.", UintegerValue(1u << 16),
                        MakeUintegerAccessor(&RingWorkerApp::send_max_), MakeUintegerChecker<uint32_t>(1));
  return tid;
}

void RingWorkerApp::StartApplication() {
  running_ = true;
  listen_ = Socket::CreateSocket(GetNode(), TcpSocketFactory::GetTypeId());
  listen_->Bind(InetSocketAddress(Ipv4Address::GetAny(), port_));
  listen_->Listen();
  listen_->SetAcceptCallback(MakeNullCallback<bool, Ptr<Socket>, const Address&>(),
                             MakeCallback(&RingWorkerApp::Accept, this));
  tx_ = Socket::CreateSocket(GetNode(), TcpSocketFactory::GetTypeId());
  tx_->Bind();
  tx_->SetSendCallback(MakeCallback(&RingWorkerApp::FillCb, this));
  tx_->Connect(InetSocketAddress(peer_, port_));
}

void RingWorkerApp::StopApplication() {
  running_ = false;
  for (Ptr<Socket>* s : {&tx_, &listen_, &rx_})
    if (*s) {
      (*s)->Close();
      *s = nullptr;
    }
}

void RingWorkerApp::BeginIteration(uint64_t iter) {
  iter_ = iter;
  done_ = false;
  computing_ = true;
}

void RingWorkerApp::GradientReady() {
  computing_ = false;
  Fill();
}

void RingWorkerApp::Fill() {
  if (computing_ || !running_) return;
  const uint64_t base = iter_ * steps_ * chunk_;
  const uint64_t allowed = base + std::min<uint64_t>(steps_ * chunk_, chunk_ + (recv_ - base));
  while (sent_ < allowed) {
    const uint64_t n = std::min<uint64_t>({allowed - sent_, tx_->GetTxAvailable(), send_max_});
    if (n == 0) return;
    const int r = tx_->Send(Create<Packet>(static_cast<uint32_t>(n)));
    if (r <= 0) return;
    sent_ += static_cast<uint64_t>(r);
  }
}

void RingWorkerApp::Accept(Ptr<Socket> s, const Address&) {
  rx_ = s;
  s->SetRecvCallback(MakeCallback(&RingWorkerApp::Recv, this));
}

void RingWorkerApp::Recv(Ptr<Socket> s) {
  if (!running_) return;
  while (Ptr<Packet> p = s->Recv()) recv_ += p->GetSize();
  Fill();
  if (!done_ && recv_ >= (iter_ + 1) * steps_ * chunk_) {
    done_ = true;
    if (done_cb_) done_cb_();
  }
}

}  // namespace dcsim
