// Background flows over ns-3's TCP (TcpDctcp).
#include "sim.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

namespace dcsim {

void Sim::start_flow(int id) {
  const FlowArrival& fa = wl_.flows[id];
  const int src = fa.src, dst = fa.dst;
  FlowRec f;
  f.src = src;
  f.dst = dst;
  f.size = fa.size;
  f.cdf = fa.cdf;
  f.warm = fa.warm;
  f.class_size = fa.class_size();
  f.start = Simulator::Now().GetSeconds();
  uint16_t port = 0;
  for (int tries = 0; tries < kFlowPorts; ++tries) {
    port = static_cast<uint16_t>(1024 + next_port_[dst]++ % kFlowPorts);
    if (!flow_of_port_.count({dst, port})) break;
  }
  const int rec = static_cast<int>(flows_.size());
  flow_of_port_[{dst, port}] = rec;
  f.port = port;
  f.listen = Socket::CreateSocket(hosts_.Get(dst), TcpSocketFactory::GetTypeId());
  f.listen->Bind(InetSocketAddress(Ipv4Address::GetAny(), port));
  f.listen->Listen();
  f.listen->SetAcceptCallback(MakeNullCallback<bool, Ptr<Socket>, const Address&>(),
                              MakeCallback(&Sim::flow_accept, this));
  f.tx = Socket::CreateSocket(hosts_.Get(src), TcpSocketFactory::GetTypeId());
  f.tx->Bind();
  f.tx->SetConnectCallback(MakeCallback(&Sim::flow_connected, this), MakeCallback(&Sim::flow_failed, this));
  f.tx->SetSendCallback(MakeCallback(&Sim::flow_fill, this));
  flow_of_sock_[PeekPointer(f.tx)] = rec;
  f.tx->Connect(InetSocketAddress(host_addr_[dst], port));
  flows_.push_back(f);
  flow_id_.push_back(id);
  ++flows_open_;
}

void Sim::flow_connected(Ptr<Socket> s) { flow_fill(s, 0); }

void Sim::flow_failed(Ptr<Socket> s) {
  std::cerr << "panama-dcsim: flow " << flow_of_sock_[PeekPointer(s)] << " failed to connect\n";
}

void Sim::flow_fill(Ptr<Socket> s, uint32_t) {
  auto it = flow_of_sock_.find(PeekPointer(s));
  if (it == flow_of_sock_.end()) return;
  FlowRec& f = flows_[it->second];
  while (f.sent < f.size) {
    const uint32_t room = s->GetTxAvailable();
    const uint64_t n = std::min<uint64_t>({f.size - f.sent, room, 1u << 16});
    if (n == 0) return;
    const int r = s->Send(Create<Packet>(static_cast<uint32_t>(n)));
    if (r <= 0) return;
    f.sent += static_cast<uint64_t>(r);
  }
  flow_of_sock_.erase(it);
  s->Close();
}

void Sim::flow_accept(Ptr<Socket> s, const Address&) {
  Address a;
  s->GetSockName(a);
  const uint16_t port = InetSocketAddress::ConvertFrom(a).GetPort();
  auto it = flow_of_port_.find({host_of(s->GetNode()), port});
  if (it == flow_of_port_.end()) return;
  flow_of_sock_[PeekPointer(s)] = it->second;
  s->SetRecvCallback(MakeCallback(&Sim::flow_recv, this));
}

void Sim::flow_recv(Ptr<Socket> s) {
  auto it = flow_of_sock_.find(PeekPointer(s));
  if (it == flow_of_sock_.end()) return;
  FlowRec& f = flows_[it->second];
  while (Ptr<Packet> p = s->Recv()) f.recv += p->GetSize();
  if (f.recv >= f.size && f.fct < 0) {
    f.fct = Simulator::Now().GetSeconds() - f.start;
    --flows_open_;
    flow_of_port_.erase({f.dst, f.port});
    flow_of_sock_.erase(it);
    s->Close();
    f.listen->Close();
    f.listen = nullptr;
    f.tx = nullptr;
    finish_check();
  }
}

}  // namespace dcsim
