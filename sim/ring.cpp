// Ring all-reduce over TCP: the connections of each job's ring, and filling and draining them.
#include "sim.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

namespace dcsim {

void Sim::setup_ring(Job& job) {
  const int N = static_cast<int>(job.workers.size());
  job.chunk = static_cast<uint64_t>(std::ceil(job.bytes / N));
  const uint16_t port = static_cast<uint16_t>(kRingPortBase + job.id % kRingPorts);
  for (int w = 0; w < N; ++w) {
    Worker& wk = job.workers[w];
    wk.ring_listen = Socket::CreateSocket(hosts_.Get(wk.host), TcpSocketFactory::GetTypeId());
    wk.ring_listen->Bind(InetSocketAddress(Ipv4Address::GetAny(), port));
    wk.ring_listen->Listen();
    wk.ring_listen->SetAcceptCallback(MakeNullCallback<bool, Ptr<Socket>, const Address&>(),
                                      MakeCallback(&Sim::ring_accept, this));
  }
  for (int w = 0; w < N; ++w) {
    Worker& wk = job.workers[w];
    wk.ring_tx = Socket::CreateSocket(hosts_.Get(wk.host), TcpSocketFactory::GetTypeId());
    wk.ring_tx->Bind();
    wk.ring_tx->SetSendCallback(MakeCallback(&Sim::ring_fill_cb, this));
    worker_of_sock_[PeekPointer(wk.ring_tx)] = {job.id, w};
    wk.ring_tx->Connect(InetSocketAddress(host_addr_[job.workers[(w + 1) % N].host], port));
  }
}

// Ring all-reduce over TCP: 2 (N - 1) steps of S / N bytes, pipelined at byte granularity (as
// NCCL and Horovod cut chunks into slices): worker w may be one chunk ahead of what it has received
// from its predecessor.
void Sim::ring_fill(int j, int w) {
  Job& job = jobs_[j];
  Worker& wk = job.workers[w];
  if (wk.computing || job.left) return;
  const uint64_t steps = 2 * (job.workers.size() - 1);
  const uint64_t base = job.iter_s.size() * steps * job.chunk;
  const uint64_t allowed = base + std::min<uint64_t>(steps * job.chunk, job.chunk + (wk.ring_recv - base));
  while (wk.ring_sent < allowed) {
    const uint64_t n = std::min<uint64_t>({allowed - wk.ring_sent, wk.ring_tx->GetTxAvailable(), 1u << 16});
    if (n == 0) return;
    const int r = wk.ring_tx->Send(Create<Packet>(static_cast<uint32_t>(n)));
    if (r <= 0) return;
    wk.ring_sent += static_cast<uint64_t>(r);
  }
}

void Sim::ring_fill_cb(Ptr<Socket> s, uint32_t) {
  auto it = worker_of_sock_.find(PeekPointer(s));
  if (it != worker_of_sock_.end()) ring_fill(it->second.first, it->second.second);
}

void Sim::ring_accept(Ptr<Socket> s, const Address&) {
  Address a;
  s->GetSockName(a);
  const int slot = InetSocketAddress::ConvertFrom(a).GetPort() - kRingPortBase;
  const int h = host_of(s->GetNode());
  // The job on this server whose ring uses this port.
  for (int j = slot; j >= 0 && j < static_cast<int>(jobs_.size()); j += kRingPorts) {
    if (!jobs_[j].placed || jobs_[j].left) continue;
    for (int w = 0; w < static_cast<int>(jobs_[j].workers.size()); ++w)
      if (jobs_[j].workers[w].host == h) {
        worker_of_sock_[PeekPointer(s)] = {j, w};
        jobs_[j].workers[w].ring_rx = s;
      }
  }
  s->SetRecvCallback(MakeCallback(&Sim::ring_recv, this));
}

void Sim::ring_recv(Ptr<Socket> s) {
  auto it = worker_of_sock_.find(PeekPointer(s));
  if (it == worker_of_sock_.end()) return;
  const int j = it->second.first, w = it->second.second;
  Job& job = jobs_[j];
  Worker& wk = job.workers[w];
  while (Ptr<Packet> p = s->Recv()) wk.ring_recv += p->GetSize();
  const uint64_t steps = 2 * (job.workers.size() - 1);
  ring_fill(j, w);
  if (!wk.done && wk.ring_recv >= (job.iter_s.size() + 1) * steps * job.chunk) {
    wk.done = true;
    if (++job.done_workers == static_cast<int>(job.workers.size())) worker_done(j);
  }
}

}  // namespace dcsim
