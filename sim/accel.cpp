// The accelerators: frames, sockets, summing in VID order, release up the tree or as results.
#include "sim.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

namespace dcsim {

Ptr<Packet> frame(const Hdr& h, uint32_t payload, uint8_t tos) {
  Ptr<Packet> p = Create<Packet>(reinterpret_cast<const uint8_t*>(&h), kHdrBytes);
  p->AddPaddingAtEnd(payload);
  SocketIpTosTag tag;  // the IPv4 ECN bits: ECT(0), or CE for a result built from a marked one
  tag.SetTos(tos);
  p->AddPacketTag(tag);
  return p;
}

bool parse(Ptr<Packet> p, Hdr& h) {
  if (p->GetSize() < kHdrBytes) return false;
  p->CopyData(reinterpret_cast<uint8_t*>(&h), kHdrBytes);
  return true;
}

bool ce_of(Ptr<Packet> p) {
  SocketIpTosTag tag;
  return p->PeekPacketTag(tag) && (tag.GetTos() & 3) == 3;
}

void Sim::setup_accels() {
  for (int c = 0; c < static_cast<int>(acc_.size()); ++c) {
    Accel& x = acc_[c];
    x.rx = Socket::CreateSocket(x.node, UdpSocketFactory::GetTypeId());
    x.rx->Bind(InetSocketAddress(Ipv4Address::GetAny(), kAccelPort));
    x.rx->SetIpRecvTos(true);
    x.rx->SetRecvCallback(MakeCallback(&Sim::accel_recv, this));
    accel_of_sock_[PeekPointer(x.rx)] = c;
    x.tx_ect = Socket::CreateSocket(x.node, UdpSocketFactory::GetTypeId());
    x.tx_ect->Bind();
    x.tx_ect->SetIpTos(kEct0);
    x.tx_ce = Socket::CreateSocket(x.node, UdpSocketFactory::GetTypeId());
    x.tx_ce->Bind();
    x.tx_ce->SetIpTos(kCe);
  }
}

void Sim::accel_recv(Ptr<Socket> s) {
  const int ai = accel_of_sock_[PeekPointer(s)];
  Accel& a = acc_[ai];
  const double now = Simulator::Now().GetSeconds();
  Address from;
  while (Ptr<Packet> p = s->RecvFrom(from)) {
    Hdr h;
    if (!parse(p, h)) {
      ++undecodable_;
      continue;
    }
    auto cit = a.ctx.find((static_cast<uint64_t>(h.job) << 16) | h.tree);
    if (cit == a.ctx.end() && h.job < jobs_.size() && jobs_[h.job].left) {
      ++stale_;  // in flight when its job left
      continue;
    }
    if (cit == a.ctx.end() || h.worker >= cit->second.workers) {
      ++undecodable_;
      continue;
    }
    AccelCtx& c = cit->second;
    ++a.st.rx_frames;
    a.st.rx_bytes += p->GetSize();
    if (a.st.first_rx < 0) a.st.first_rx = now;
    a.st.last_rx = now;
    const bool ce = ce_of(p);
    a.st.rx_ce += ce;
    if (h.vid < c.next_emit) {
      if ((h.flags & 2) && !c.root) {
        // A repair for a vector this accelerator has passed on: up to the parent, which may have
        // lost the partial sum or, at the root, answers the worker.
        accel_up(ai, c, h, ce || c.released_ce(h.vid));
      } else if (h.flags & 2) {  // a repair: that worker missed the result
        ++a.st.resent;
        if (h.origin < c.worker_addr.size()) accel_send(ai, cit->first, h.vid, c.released_ce(h.vid), h.origin);
      } else {
        ++a.st.late;
        ++jobs_[h.job].late;
      }
      continue;
    }
    auto rit = c.open.find(h.vid);
    if (rit == c.open.end()) {
      const double frame_bytes = design_.payload() + kHdrBytes;
      if ((a.open_frames + 1) * frame_bytes > design_.buffer_bytes) {
        ++a.st.overflow;
        continue;
      }
      ++a.open_frames;
      a.st.max_open = std::max(a.st.max_open, a.open_frames);
      rit = c.open.emplace(h.vid, AccelCtx::Rec{}).first;
    }
    AccelCtx::Rec& r = rit->second;
    if (r.complete || r.seen[h.worker]) {
      r.ce = r.ce || ce;  // a copy that lost the race (to a repair) still brings its mark
      ++a.st.dup;
      continue;
    }
    r.seen[h.worker] = true;
    r.ce = r.ce || ce;
    r.wsum += std::max<int>(1, h.nw);
    ++r.count;
    if (r.count >= c.workers || (c.root && r.wsum >= c.need)) {
      r.complete = true;
      accel_emit(ai, cit->first);
    } else if (!c.root && r.wsum >= c.need && !r.hold) {
      // Partial synchronisation below the root: enough of this subtree is in for the job's
      // quorum; the rest get --quorum-hold-us to arrive before the partial sum goes without them.
      r.hold = true;
      Simulator::Schedule(MicroSeconds(o_.quorum_hold_us), &Sim::accel_hold, this, ai, cit->first, h.vid);
    }
  }
}

void Sim::accel_hold(int ai, uint64_t key, uint64_t vid) {
  auto cit = acc_[ai].ctx.find(key);
  if (cit == acc_[ai].ctx.end()) return;
  auto rit = cit->second.open.find(vid);
  if (rit == cit->second.open.end() || rit->second.complete) return;
  rit->second.complete = true;
  accel_emit(ai, key);
}

// Complete vectors leave in VID order, each after the design's pipeline latency.
void Sim::accel_emit(int ai, uint64_t key) {
  Accel& a = acc_[ai];
  AccelCtx& c = a.ctx.find(key)->second;
  while (!c.open.empty() && c.open.begin()->first == c.next_emit && c.open.begin()->second.complete) {
    const AccelCtx::Rec& r = c.open.begin()->second;
    Simulator::Schedule(Seconds(design_.latency_s()), &Sim::accel_release, this, ai, key, c.next_emit, r.ce,
                        static_cast<uint16_t>(r.wsum));
    c.remember(c.next_emit, r.ce);
    c.open.erase(c.open.begin());
    --a.open_frames;
    ++c.next_emit;
  }
}

void Sim::accel_send(int ai, uint64_t key, uint64_t vid, bool ce, int only) {
  Accel& a = acc_[ai];
  auto cit = a.ctx.find(key);
  if (cit == a.ctx.end()) return;
  AccelCtx& c = cit->second;
  Hdr h{};
  h.job = static_cast<uint32_t>(key >> 16);
  h.tree = static_cast<uint16_t>(key & 0xffff);
  h.vid = vid;
  h.flags = static_cast<uint8_t>(ce ? 5 : 1);  // the root's mark travels in the header too
  const double now = Simulator::Now().GetSeconds();
  if (a.st.first_tx < 0) a.st.first_tx = now;
  a.st.last_tx = now;
  if (c.mcast && only < 0) {
    // One frame to the tree's group; the switches below replicate it (FatTreeRouting).
    h.worker = 0xffff;
    (ce ? a.tx_ce : a.tx_ect)
        ->SendTo(frame(h, design_.payload(), ce ? kCe : kEct0), 0,
                 InetSocketAddress(c.group, static_cast<uint16_t>(kResultPort + h.tree)));
    ++a.st.tx_frames;
    a.st.tx_ce += ce;
    return;
  }
  for (int w = 0; w < static_cast<int>(c.worker_addr.size()); ++w) {
    if (only >= 0 && w != only) continue;
    h.worker = static_cast<uint16_t>(w);
    (ce ? a.tx_ce : a.tx_ect)
        ->SendTo(frame(h, design_.payload(), ce ? kCe : kEct0), 0,
                 InetSocketAddress(c.worker_addr[w], c.worker_port[w]));
    ++a.st.tx_frames;
    a.st.tx_ce += ce;
  }
}

// A vector complete at this accelerator (after the pipeline latency): the root sends the result,
// any other accelerator its partial sum to its parent, carrying CE if any contribution had it.
void Sim::accel_release(int ai, uint64_t key, uint64_t vid, bool ce, uint16_t nw) {
  auto cit = acc_[ai].ctx.find(key);
  if (cit == acc_[ai].ctx.end()) return;  // its job has left
  const AccelCtx& c = cit->second;
  if (c.root) {
    accel_send(ai, key, vid, ce, -1);
    return;
  }
  Hdr h{};
  h.job = static_cast<uint32_t>(key >> 16);
  h.tree = static_cast<uint16_t>(key & 0xffff);
  h.vid = vid;
  h.origin = 0xffff;
  h.nw = nw;
  accel_up(ai, c, h, ce);
}

void Sim::accel_up(int ai, const AccelCtx& c, Hdr h, bool ce) {
  Accel& a = acc_[ai];
  h.worker = c.my_child;
  const double now = Simulator::Now().GetSeconds();
  if (a.st.first_tx < 0) a.st.first_tx = now;
  a.st.last_tx = now;
  (ce ? a.tx_ce : a.tx_ect)
      ->SendTo(frame(h, design_.payload(), ce ? kCe : kEct0), 0, InetSocketAddress(c.parent, kAccelPort));
  ++a.st.tx_frames;
  a.st.tx_ce += ce;
}

}  // namespace dcsim
