// ns-3's own rates on this machine, the ceiling for panama-dcsim (docs/sim.md "Speed"):
//   panama-dcsim-enginebench events PENDING N   no-op events, PENDING of them always scheduled
//   panama-dcsim-enginebench hops LINKS SECONDS a chain of LINKS point-to-point links (10 Gb/s,
//       1 us, a RED/ECN queue disc per port as in panama-dcsim), 1,500-byte IPv4 packets offered
//       at line rate to its first port and forwarded from device to queue disc at every node, as
//       panama-dcsim's switches do (no IP, no TCP)
// Prints one JSON line: the CPU seconds (user + system) of the simulation, its events and, for
// hops, the packets every port sent (packet-hops) per CPU second.
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using namespace ns3;

namespace {

double cpu_s() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

uint64_t left = 0;
uint32_t seed = 1;

// Each event schedules its successor at a pseudo-random distance, so the queue keeps its size.
void tick() {
  if (left == 0) return;
  --left;
  seed = seed * 1664525u + 1013904223u;
  Simulator::Schedule(NanoSeconds(1 + (seed >> 12) % 10000), &tick);
}

struct Chain {
  std::vector<Ptr<NetDevice>> out;  // per node: the device towards the next node
  std::vector<Ptr<TrafficControlLayer>> tc;
  uint64_t delivered = 0;

  void send(size_t node, Ptr<Packet> p, const Ipv4Header& h) {
    tc[node]->Send(out[node], Create<Ipv4QueueDiscItem>(p, out[node]->GetBroadcast(), 0x0800, h));
  }
  bool rx(Ptr<NetDevice> dev, Ptr<const Packet> p, uint16_t, const Address&) {
    const size_t node = dev->GetNode()->GetId();
    if (!out[node]) {
      ++delivered;
      return true;
    }
    Ptr<Packet> c = p->Copy();
    Ipv4Header h;
    c->RemoveHeader(h);
    send(node, c, h);
    return true;
  }
  void inject(Time gap, Time until) {
    Ipv4Header h;
    h.SetPayloadSize(1480);
    h.SetProtocol(17);
    h.SetEcn(Ipv4Header::ECN_ECT0);
    send(0, Create<Packet>(1480), h);
    if (Simulator::Now() + gap < until) Simulator::Schedule(gap, &Chain::inject, this, gap, until);
  }
};

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (argc != 4 || (mode != "events" && mode != "hops")) {
    std::fprintf(stderr, "usage: %s events PENDING N | hops LINKS SECONDS\n", argv[0]);
    return 2;
  }
  ObjectFactory sched;
  sched.SetTypeId("ns3::HeapScheduler");  // as panama-dcsim
  Simulator::SetScheduler(sched);
  if (mode == "events") {
    const uint64_t pending = std::strtoull(argv[2], nullptr, 10);
    left = std::strtoull(argv[3], nullptr, 10);
    for (uint64_t i = 0; i < pending; ++i) Simulator::Schedule(NanoSeconds(1 + i % 10000), &tick);
    const double c0 = cpu_s();
    Simulator::Run();
    const double cpu = cpu_s() - c0;
    const uint64_t events = Simulator::GetEventCount();
    std::printf(
        "{\"mode\": \"events\", \"pending\": %llu, \"events\": %llu, \"cpu_s\": %.3f, \"events_per_cpu_s\": %.0f}\n",
        static_cast<unsigned long long>(pending), static_cast<unsigned long long>(events), cpu,
        static_cast<double>(events) / cpu);
    Simulator::Destroy();
    return 0;
  }
  const int links = std::atoi(argv[2]);
  const double seconds = std::atof(argv[3]);
  if (links < 1 || seconds <= 0) return 2;
  Config::SetDefault("ns3::RedQueueDisc::UseEcn", BooleanValue(true));
  Config::SetDefault("ns3::RedQueueDisc::UseHardDrop", BooleanValue(false));
  Config::SetDefault("ns3::RedQueueDisc::Gentle", BooleanValue(false));
  Config::SetDefault("ns3::RedQueueDisc::QW", DoubleValue(1.0));
  Config::SetDefault("ns3::RedQueueDisc::MinTh", DoubleValue(85));
  Config::SetDefault("ns3::RedQueueDisc::MaxTh", DoubleValue(85));
  Config::SetDefault("ns3::RedQueueDisc::MaxSize", QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, 1000)));
  NodeContainer nodes;
  nodes.Create(links + 1);
  InternetStackHelper stack;
  stack.Install(nodes);
  Chain chain;
  chain.out.resize(links + 1);
  chain.tc.resize(links + 1);
  QueueDiscContainer qds;
  for (int i = 0; i < links; ++i) {
    PointToPointHelper p2p;
    p2p.SetDeviceAttribute("DataRate", StringValue("10Gbps"));
    p2p.SetChannelAttribute("Delay", StringValue("1us"));
    p2p.SetQueue("ns3::DropTailQueue", "MaxSize", StringValue("1p"));
    NetDeviceContainer d = p2p.Install(nodes.Get(i), nodes.Get(i + 1));
    TrafficControlHelper tch;
    tch.SetRootQueueDisc("ns3::RedQueueDisc", "LinkBandwidth", StringValue("10Gbps"), "LinkDelay", StringValue("1us"));
    qds.Add(tch.Install(d));
    chain.out[i] = d.Get(0);
    d.Get(1)->SetReceiveCallback(MakeCallback(&Chain::rx, &chain));
    d.Get(0)->SetReceiveCallback(MakeCallback(&Chain::rx, &chain));
  }
  for (int i = 0; i <= links; ++i) chain.tc[i] = nodes.Get(i)->GetObject<TrafficControlLayer>();
  const Time gap = NanoSeconds(1216);  // 99 % of 10 Gb/s for 1,502 bytes (PPP's 2 included)
  Simulator::Schedule(NanoSeconds(1), &Chain::inject, &chain, gap, Seconds(seconds));
  const double c0 = cpu_s();
  Simulator::Run();
  const double cpu = cpu_s() - c0;
  uint64_t hops = 0;
  for (uint32_t i = 0; i < qds.GetN(); ++i) hops += qds.Get(i)->GetStats().nTotalSentPackets;
  const uint64_t events = Simulator::GetEventCount();
  std::printf(
      "{\"mode\": \"hops\", \"links\": %d, \"delivered\": %llu, \"packet_hops\": %llu, \"events\": %llu, "
      "\"cpu_s\": %.3f, \"packet_hops_per_cpu_s\": %.0f, \"events_per_hop\": %.2f, \"events_per_cpu_s\": %.0f}\n",
      links, static_cast<unsigned long long>(chain.delivered), static_cast<unsigned long long>(hops),
      static_cast<unsigned long long>(events), cpu, static_cast<double>(hops) / cpu,
      static_cast<double>(events) / static_cast<double>(hops), static_cast<double>(events) / cpu);
  Simulator::Destroy();
  return 0;
}
