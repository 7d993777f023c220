// Per-flow ECMP for the k-ary fat-tree (docs/sim.md "Routing"). ns-3's own ECMP
// (Ipv4GlobalRouting::RandomEcmpRouting) sprays each packet on a random path, which reorders TCP,
// and its table lookup is a linear scan over every /30 of the network, too slow for k = 16. This
// protocol knows the fat-tree's structure: up through a hash of the 5-tuple (salted per switch),
// down along the unique path, and to an accelerator through the switch it hangs from. A frame to
// a multicast group is replicated by each switch to the group's ports there (FatTree::groups).
#pragma once

#include "ns3/ipv4-header.h"
#include "ns3/ipv4-routing-protocol.h"
#include "ns3/ipv4.h"
#include "ns3/node.h"
#include "ns3/queue-disc.h"
#include "ns3/traffic-control-layer.h"

#include <cstdint>
#include <unordered_map>
#include <vector>

namespace panama::sim {

enum class Role { host, edge, agg, core, accel };

// Where an address lives: a host (index) or the accelerator of a switch (the switch's role and
// index: edge, agg, or core).
struct Target {
  bool accel = false;
  int index = 0;
  Role at = Role::core;  // for an accelerator: the level of the switch it hangs from
  bool known = false;    // an entry of FatTree's table
};

struct Port {
  uint32_t iface = 0;    // the node's Ipv4 interface index
  ns3::Ipv4Address gw;   // the neighbour's address on that link
  ns3::Ipv4Address src;  // this node's address on that link
};

struct Node {
  Role role = Role::host;
  int index = 0;           // host / edge / agg / core / accel index
  std::vector<Port> down;  // edge: hosts; agg: edges of the pod; core: one agg per pod
  std::vector<Port> up;    // host, accel: the one link; edge: aggs; agg: cores
  Port accel;              // switch: its accelerator (core always; edge and agg with hierarchical aggregation)
};

struct FatTree {
  int k = 4;
  int half() const { return k / 2; }
  int hosts() const { return k * k * k / 4; }
  int edges() const { return k * k / 2; }
  int cores() const { return half() * half(); }
  int pod_of_host(int h) const { return h / (half() * half()); }
  int edge_of_host(int h) const { return h / half(); }
  // Address -> target, a flat table indexed from the first link address (10.0.0.0, 4 per link):
  // one lookup per packet per hop.
  static constexpr uint32_t kAddrBase = 0x0A000000u;
  void set_where(ns3::Ipv4Address a, Target t) {
    const uint32_t i = a.Get() - kAddrBase;
    if (i >= where_.size()) where_.resize(i + 1);
    t.known = true;
    where_[i] = t;
  }
  const Target* where(ns3::Ipv4Address a) const {
    const uint32_t i = a.Get() - kAddrBase;
    return i < where_.size() && where_[i].known ? &where_[i] : nullptr;
  }
  std::vector<Target> where_;
  // Multicast groups (an aggregation tree's results): per switch and group address, the
  // interfaces that a frame to the group is replicated to.
  std::unordered_map<uint64_t, std::vector<uint32_t>> groups;
  static uint64_t group_key(Role role, int index, ns3::Ipv4Address group) {
    return (uint64_t(uint32_t(role) << 24 | uint32_t(index)) << 32) | group.Get();
  }
};

class FatTreeRouting : public ns3::Ipv4RoutingProtocol {
 public:
  FatTreeRouting(const FatTree* tree, Node node) : tree_(tree), node_(std::move(node)) { set_salt(0); }

  ns3::Ptr<ns3::Ipv4Route> RouteOutput(ns3::Ptr<ns3::Packet> p, const ns3::Ipv4Header& header,
                                       ns3::Ptr<ns3::NetDevice> oif, ns3::Socket::SocketErrno& sockerr) override;
  bool RouteInput(ns3::Ptr<const ns3::Packet> p, const ns3::Ipv4Header& header, ns3::Ptr<const ns3::NetDevice> idev,
                  UnicastForwardCallback ucb, MulticastForwardCallback mcb, LocalDeliverCallback lcb,
                  ErrorCallback ecb) override;
  void NotifyInterfaceUp(uint32_t) override {}
  void NotifyInterfaceDown(uint32_t) override {}
  void NotifyAddAddress(uint32_t, ns3::Ipv4InterfaceAddress) override {}
  void NotifyRemoveAddress(uint32_t, ns3::Ipv4InterfaceAddress) override {}
  void SetIpv4(ns3::Ptr<ns3::Ipv4> ipv4) override { ipv4_ = ipv4; }
  void PrintRoutingTable(ns3::Ptr<ns3::OutputStreamWrapper>, ns3::Time::Unit) const override {}

  uint64_t unroutable() const { return unroutable_; }
  // ECMP hash salt: another salt, another draw of the up-paths for the same 5-tuples (0: the
  // default paths).
  void set_salt(uint32_t salt);

  // A switch's forwarding path without ns-3's IPv4 layer: each of the node's point-to-point
  // devices hands its IPv4 packets to Forward, which routes them as RouteInput does and puts them
  // straight into the output port's queue disc (the RED/ECN queue that IPv4 would have used).
  // A switch neither originates nor receives packets of its own, so nothing else is bypassed.
  void InstallSwitchPath(ns3::Ptr<ns3::Node> node);

 private:
  bool Forward(ns3::Ptr<ns3::NetDevice> dev, ns3::Ptr<const ns3::Packet> p, uint16_t protocol, const ns3::Address&);
  void Enqueue(uint32_t iface, ns3::Ptr<ns3::Packet> p, const ns3::Ipv4Header& h);
  uint32_t Hash(ns3::Ptr<const ns3::Packet> p, const ns3::Ipv4Header& header) const;
  // The port towards dst for a packet of this 5-tuple hash; nullptr when dst is unknown.
  const Port* next_hop(ns3::Ipv4Address dst, uint32_t hash) const;
  ns3::Ptr<ns3::Ipv4Route> route_via(const Port& port, ns3::Ipv4Address dst) const;

  const FatTree* tree_;
  Node node_;
  ns3::Ptr<ns3::Ipv4> ipv4_;
  uint64_t unroutable_ = 0;
  uint32_t seed_ = 0;  // the hash's start: the salt mixed with this switch (constant per switch)
  // Switch path: the traffic-control layer and the device of every IPv4 interface.
  ns3::Ptr<ns3::TrafficControlLayer> tc_;
  std::vector<ns3::Ptr<ns3::NetDevice>> dev_of_iface_;
  std::vector<ns3::Ptr<ns3::QueueDisc>> qdisc_of_iface_;  // its root queue disc
  std::vector<uint32_t> oifs_;                            // a multicast frame's output interfaces, sorted
};

}  // namespace panama::sim
