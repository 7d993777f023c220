#include "fattree_routing.h"

#include <algorithm>

#include "ns3/ipv4-l3-protocol.h"
#include "ns3/ipv4-queue-disc-item.h"
#include "ns3/ipv4-route.h"
#include "ns3/net-device.h"
#include "ns3/packet.h"

namespace panama::sim {

using namespace ns3;

namespace {
uint32_t mix(uint32_t h, uint32_t v) {
  h ^= v + 0x9e3779b9u + (h << 6) + (h >> 2);
  h ^= h >> 16;  // murmur3's finaliser, so that h % (k/2) uses every input bit
  h *= 0x85ebca6bu;
  h ^= h >> 13;
  h *= 0xc2b2ae35u;
  h ^= h >> 16;
  return h;
}
}  // namespace

const Port* FatTreeRouting::next_hop(Ipv4Address dst, uint32_t hash) const {
  const Target* found = tree_->where(dst);
  if (!found) return nullptr;
  const Target& t = *found;
  const int half = tree_->half();
  const bool to_edge = t.accel && t.at == Role::edge, to_agg = t.accel && t.at == Role::agg;
  const bool to_core = t.accel && t.at == Role::core;
  // The edge switch under which the target sits (hosts, edge accelerators), or -1.
  const int t_edge = !t.accel ? tree_->edge_of_host(t.index) : to_edge ? t.index : -1;
  // The target's pod (not a core accelerator), or -1.
  const int t_pod = t_edge >= 0 ? t_edge / half : to_agg ? t.index / half : -1;
  switch (node_.role) {
    case Role::host:
    case Role::accel:
      return &node_.up[0];
    case Role::edge: {
      if (t_edge == node_.index) return to_edge ? &node_.accel : &node_.down[t.index % half];
      // Core c hangs from the pod's aggregation switch c / half; aggregation switch a is the
      // edge's uplink a % half.
      if (to_core) return &node_.up[t.index / half];
      if (to_agg && t_pod == node_.index / half) return &node_.up[t.index % half];
      return &node_.up[hash % half];
    }
    case Role::agg: {
      const int pod = node_.index / half;
      if (to_agg && t.index == node_.index) return &node_.accel;
      if (t_pod == pod) return to_agg ? &node_.down[hash % half] : &node_.down[t_edge % half];
      if (to_core && t.index / half != node_.index % half) return &node_.down[hash % half];
      return &node_.up[to_core ? t.index % half : hash % half];
    }
    case Role::core:
      if (to_core) return t.index == node_.index ? &node_.accel : nullptr;
      return &node_.down[t_pod];
  }
  return nullptr;
}

// The hash's seed: the switch, so that successive levels choose independently, and --ecmp-salt.
void FatTreeRouting::set_salt(uint32_t salt) {
  seed_ = mix(0x2545f491u + salt * 0x9e3779b9u,
              static_cast<uint32_t>(node_.index) * 7919u + static_cast<uint32_t>(node_.role));
}

// The 5-tuple: addresses, protocol, and the first four bytes of the L4 header (the ports of both
// TCP and UDP), mixed into seed_ (set_salt; a salt of 0 adds nothing). p starts at the L4 header.
uint32_t FatTreeRouting::Hash(Ptr<const Packet> p, const Ipv4Header& header) const {
  uint8_t ports[4] = {0, 0, 0, 0};
  p->CopyData(ports, sizeof ports);
  uint32_t h = mix(seed_, header.GetSource().Get());
  h = mix(h, header.GetDestination().Get());
  h = mix(h, header.GetProtocol());
  return mix(h, (uint32_t(ports[0]) << 24) | (uint32_t(ports[1]) << 16) | (uint32_t(ports[2]) << 8) | ports[3]);
}

Ptr<Ipv4Route> FatTreeRouting::route_via(const Port& port, Ipv4Address dst) const {
  auto r = Create<Ipv4Route>();
  r->SetDestination(dst);
  r->SetGateway(port.gw);
  r->SetSource(port.src);
  r->SetOutputDevice(ipv4_->GetNetDevice(port.iface));
  return r;
}

Ptr<Ipv4Route> FatTreeRouting::RouteOutput(Ptr<Packet>, const Ipv4Header& header, Ptr<NetDevice>,
                                           Socket::SocketErrno& sockerr) {
  // Only hosts and accelerators originate packets, and they have one link (a root accelerator
  // sends its results to the tree's multicast group through its switch).
  const bool mcast = header.GetDestination().IsMulticast() && !node_.up.empty();
  const Port* port = mcast ? &node_.up[0] : next_hop(header.GetDestination(), 0);
  if (!port) {
    ++unroutable_;
    sockerr = Socket::ERROR_NOROUTETOHOST;
    return nullptr;
  }
  sockerr = Socket::ERROR_NOTERROR;
  return route_via(*port, header.GetDestination());
}

bool FatTreeRouting::RouteInput(Ptr<const Packet> p, const Ipv4Header& header, Ptr<const NetDevice> idev,
                                UnicastForwardCallback ucb, MulticastForwardCallback mcb, LocalDeliverCallback lcb,
                                ErrorCallback ecb) {
  const uint32_t iif = ipv4_->GetInterfaceForDevice(idev);
  if (header.GetDestination().IsMulticast()) {
    if (node_.role == Role::host || node_.role == Role::accel) {
      lcb(p, header, iif);
      return true;
    }
    // A switch replicates the frame to the group's member ports (ns-3's multicast forwarding:
    // one copy per output interface, each through that port's queue).
    auto g = tree_->groups.find(FatTree::group_key(node_.role, node_.index, header.GetDestination()));
    if (g == tree_->groups.end()) {
      ++unroutable_;
      ecb(p, header, Socket::ERROR_NOROUTETOHOST);
      return false;
    }
    auto mr = Create<Ipv4MulticastRoute>();
    mr->SetGroup(header.GetDestination());
    mr->SetOrigin(header.GetSource());
    mr->SetParent(iif);
    for (uint32_t oif : g->second) mr->SetOutputTtl(oif, 1);
    mcb(mr, p, header);
    return true;
  }
  if (ipv4_->IsDestinationAddress(header.GetDestination(), iif)) {
    lcb(p, header, iif);
    return true;
  }
  const uint32_t h = Hash(p, header);
  const Port* port = next_hop(header.GetDestination(), h);
  if (!port) {
    ++unroutable_;
    ecb(p, header, Socket::ERROR_NOROUTETOHOST);
    return false;
  }
  ucb(route_via(*port, header.GetDestination()), p, header);
  return true;
}

void FatTreeRouting::InstallSwitchPath(Ptr<ns3::Node> node) {
  tc_ = node->GetObject<TrafficControlLayer>();
  dev_of_iface_.resize(ipv4_->GetNInterfaces());
  qdisc_of_iface_.resize(dev_of_iface_.size());
  for (uint32_t i = 0; i < dev_of_iface_.size(); ++i) {
    dev_of_iface_[i] = ipv4_->GetNetDevice(i);
    qdisc_of_iface_[i] = tc_->GetRootQueueDiscOnDevice(dev_of_iface_[i]);
  }
  for (uint32_t i = 1; i < dev_of_iface_.size(); ++i)
    dev_of_iface_[i]->SetReceiveCallback(MakeCallback(&FatTreeRouting::Forward, this));
}

// What Ipv4Interface::Send does on a link without ARP, and TrafficControlLayer::Send then for a
// device of one transmission queue: enqueue on the root queue disc and run it.
void FatTreeRouting::Enqueue(uint32_t iface, Ptr<Packet> p, const Ipv4Header& h) {
  const Ptr<NetDevice>& dev = dev_of_iface_[iface];
  Ptr<QueueDiscItem> item = Create<Ipv4QueueDiscItem>(p, dev->GetBroadcast(), Ipv4L3Protocol::PROT_NUMBER, h);
  if (const Ptr<QueueDisc>& q = qdisc_of_iface_[iface]) {
    q->Enqueue(item);
    q->Run();
  } else {
    tc_->Send(dev, item);
  }
}

// Ipv4L3Protocol::Receive, RouteInput and IpForward / IpMulticastForward in one: the header is
// taken off, the TTL decremented (a packet whose TTL runs out is dropped), the port chosen as in
// RouteInput, and the packet queued with its header beside it, as IPv4 queues it.
bool FatTreeRouting::Forward(Ptr<NetDevice>, Ptr<const Packet> p, uint16_t protocol, const Address&) {
  if (protocol != Ipv4L3Protocol::PROT_NUMBER) return false;
  Ptr<Packet> pkt = p->Copy();
  Ipv4Header h;
  pkt->RemoveHeader(h);
  if (h.GetTtl() <= 1) return true;
  h.SetTtl(h.GetTtl() - 1);
  if (h.GetDestination().IsMulticast()) {
    auto g = tree_->groups.find(FatTree::group_key(node_.role, node_.index, h.GetDestination()));
    if (g == tree_->groups.end()) {
      ++unroutable_;
      return true;
    }
    // ns-3 walks an Ipv4MulticastRoute's output interfaces in increasing order.
    oifs_.assign(g->second.begin(), g->second.end());
    std::sort(oifs_.begin(), oifs_.end());
    for (uint32_t oif : oifs_) Enqueue(oif, pkt->Copy(), h);
    return true;
  }
  const Port* port = next_hop(h.GetDestination(), Hash(pkt, h));
  if (!port) {
    ++unroutable_;
    return true;
  }
  Enqueue(port->iface, pkt, h);
  return true;
}

}  // namespace panama::sim
