// The fat tree: nodes, links with their RED/ECN queues, addresses and routing.
#include "sim.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

namespace dcsim {

void Sim::link(int a, int b, double gbps, const std::string& layer, ps::Port* pa, ps::Port* pb) {
  Ptr<Node> na = NodeList::GetNode(a), nb = NodeList::GetNode(b);
  const DataRate rate(static_cast<uint64_t>(gbps * 1e9));
  const Time delay = NanoSeconds(static_cast<int64_t>(o_.link_delay_us * 1000));
  PointToPointHelper p2p;
  p2p.SetDeviceAttribute("DataRate", DataRateValue(rate));
  p2p.SetChannelAttribute("Delay", TimeValue(delay));
  p2p.SetQueue("ns3::DropTailQueue", "MaxSize", StringValue("1p"));
  NetDeviceContainer d = p2p.Install(na, nb);
  TrafficControlHelper tch;
  tch.SetRootQueueDisc("ns3::RedQueueDisc", "LinkBandwidth", DataRateValue(rate), "LinkDelay", TimeValue(delay));
  QueueDiscContainer q = tch.Install(d);
  devs_.push_back(d.Get(0));
  devs_.push_back(d.Get(1));
  layer_q_[layer].push_back(q.Get(0));
  layer_q_[layer].push_back(q.Get(1));
  layer_bps_[layer] += 2 * gbps * 1e9;
  const uint32_t base = 0x0A000000u + 4 * links_++;
  const Ipv4Address aa(base + 1), ab(base + 2);
  const Ipv4Mask mask("255.255.255.252");
  auto attach = [&](Ptr<Node> n, Ptr<NetDevice> dev, Ipv4Address addr) {
    Ptr<Ipv4> ip = n->GetObject<Ipv4>();
    const uint32_t i = ip->AddInterface(dev);
    ip->AddAddress(i, Ipv4InterfaceAddress(addr, mask));
    ip->SetUp(i);
    return i;
  };
  const uint32_t ia = attach(na, d.Get(0), aa), ib = attach(nb, d.Get(1), ab);
  *pa = {ia, ab, aa};
  *pb = {ib, aa, ab};
}

void Sim::build() {
  const int k = o_.k, half = k / 2;
  tree_.k = k;
  hosts_.Create(tree_.hosts());
  edges_.Create(k * half);
  aggs_.Create(k * half);
  cores_.Create(half * half);
  // Accelerators: one per core switch, and with hierarchical aggregation one per edge and
  // aggregation switch too (acc_: cores, then edges, then aggs).
  accels_.Create(half * half + (hier() ? 2 * k * half : 0));
  host_base_ = hosts_.Get(0)->GetId();
  NodeContainer all(hosts_, edges_, aggs_, cores_, accels_);
  InternetStackHelper stack;
  Ipv4StaticRoutingHelper st;
  stack.SetRoutingHelper(st);
  stack.Install(all);
  const uint32_t base = host_base_;
  rnodes_.assign(all.GetN(), {});
  auto rn = [&](Ptr<Node> n) -> ps::Node& { return rnodes_[n->GetId() - base]; };
  for (int h = 0; h < tree_.hosts(); ++h) rn(hosts_.Get(h)) = {ps::Role::host, h, {}, std::vector<ps::Port>(1), {}};
  for (int e = 0; e < k * half; ++e) {
    rn(edges_.Get(e)) = {ps::Role::edge, e, std::vector<ps::Port>(half), std::vector<ps::Port>(half), {}};
    rn(aggs_.Get(e)) = {ps::Role::agg, e, std::vector<ps::Port>(half), std::vector<ps::Port>(half), {}};
  }
  for (int c = 0; c < half * half; ++c) {
    rn(cores_.Get(c)) = {ps::Role::core, c, std::vector<ps::Port>(k), {}, {}};
    rn(accels_.Get(c)) = {ps::Role::accel, c, {}, std::vector<ps::Port>(1), {}};
  }
  for (uint32_t i = half * half; i < accels_.GetN(); ++i)
    rn(accels_.Get(i)) = {ps::Role::accel, static_cast<int>(i), {}, std::vector<ps::Port>(1), {}};
  host_addr_.resize(tree_.hosts());
  for (int h = 0; h < tree_.hosts(); ++h) {
    Ptr<Node> hn = hosts_.Get(h), en = edges_.Get(h / half);
    link(hn->GetId(), en->GetId(), o_.gbps, "host-edge", &rn(hn).up[0], &rn(en).down[h % half]);
    host_addr_[h] = rn(hn).up[0].src;
    tree_.set_where(host_addr_[h], {false, h});
  }
  for (int e = 0; e < k * half; ++e)
    for (int j = 0; j < half; ++j) {
      Ptr<Node> en = edges_.Get(e), an = aggs_.Get((e / half) * half + j);
      link(en->GetId(), an->GetId(), o_.gbps, "edge-agg", &rn(en).up[j], &rn(an).down[e % half]);
    }
  for (int a = 0; a < k * half; ++a)
    for (int i = 0; i < half; ++i) {
      Ptr<Node> an = aggs_.Get(a), cn = cores_.Get((a % half) * half + i);
      link(an->GetId(), cn->GetId(), o_.gbps, "agg-core", &rn(an).up[i], &rn(cn).down[a / half]);
    }
  acc_.resize(accels_.GetN());
  auto attach_accel = [&](Ptr<Node> sw, int ai, ps::Role level, int index, const std::string& layer) {
    Ptr<Node> xn = accels_.Get(ai);
    link(sw->GetId(), xn->GetId(), design_.throughput_bps() / 1e9, layer, &rn(sw).accel, &rn(xn).up[0]);
    tree_.set_where(rn(xn).up[0].src, {true, index, level});
    acc_[ai].core = index;
    acc_[ai].level = level;
    acc_[ai].node = xn;
  };
  for (int c = 0; c < half * half; ++c) attach_accel(cores_.Get(c), c, ps::Role::core, c, "accel");
  if (hier())
    for (int e = 0; e < k * half; ++e) {
      attach_accel(edges_.Get(e), acc_edge(e), ps::Role::edge, e, "accel-edge");
      attach_accel(aggs_.Get(e), acc_agg(e), ps::Role::agg, e, "accel-agg");
    }
  for (uint32_t i = 0; i < all.GetN(); ++i) {
    Ptr<Node> n = all.Get(i);
    routing_.push_back(CreateObject<ps::FatTreeRouting>(&tree_, rnodes_[n->GetId() - base]));
    routing_.back()->set_salt(o_.ecmp_salt);
    n->GetObject<Ipv4>()->SetRoutingProtocol(routing_.back());
    const ps::Role role = rnodes_[n->GetId() - base].role;
    if (role != ps::Role::host && role != ps::Role::accel) routing_.back()->InstallSwitchPath(n);
  }
  next_port_.assign(tree_.hosts(), 0);
}

}  // namespace dcsim
