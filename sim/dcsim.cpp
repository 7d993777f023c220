// panama-dcsim: a packet-level ns-3 simulation of a shared fat-tree cluster with background
// DCTCP flows and data-parallel training jobs that all-reduce through PANAMA accelerators, a
// ring over TCP, or SwitchML*-style aggregation (docs/sim.md).
#include "cli_parse.h"  // the command-line convention (gen/config, header only)
#include "dctcp.h"      // panama_cc: the workers' congestion control, shared with host_driver
#include "fattree_routing.h"

#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <bitset>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <unordered_map>
#include <vector>

using namespace ns3;
using json = nlohmann::json;
namespace ps = panama::sim;

namespace {

constexpr uint16_t kAccelPort = 9056;
constexpr uint16_t kResultPort = 9100;  // + tree: a worker's socket for that tree's results
constexpr uint32_t kHdrBytes = 24;      // the aggregation header carried in the UDP payload
constexpr uint8_t kEct0 = 0x02, kCe = 0x03;
constexpr int kMaxWorkers = 128;

// ---------------------------------------------------------------------------------------------
// Options and data files

struct Options {
  std::string preset = "smoke";
  std::string scheme = "panama";
  double load = 0.5;
  uint32_t seed = 1;
  double duration = -1;  // simulated seconds in which flows and iterations start
  int k = -1;
  double gbps = 10;
  double link_delay_us = 1;
  int ecn_k = 85;
  int queue_pkts = 1000;
  std::string cdf = "websearch";
  std::string data_dir;
  std::string design;
  double accel_buffer_mb = 64;  // the paper's accelerator buffer; 0 keeps the design's
  int trees = 4;
  int jobs = -1;
  int workers_min = -1, workers_max = -1;
  double job_fraction = 0.5;
  double model_scale = -1;
  std::string model;                       // fixed model name (else drawn by weight)
  double model_bytes = 0, compute_s = -1;  // a custom job (validation)
  int window_cap = 64;
  double short_bytes = 40e6;
  double single_flow = 0;  // bytes: one flow from host 0 to the last host, nothing else
  bool no_background = false, no_jobs = false;
  int iterations = 0;  // stop each job after this many iterations (0: duration decides)
  double max_time = -1;
  double rto_ms = 1;
  double tcp_min_rto_ms = 5;         // the background's and the ring's TCP minimum RTO
  std::string aggregation = "hier";  // hier: at every switch of the tree; core: at the root only
  std::string out;
  bool progress = true;
};

struct Cdf {
  std::vector<std::pair<double, double>> pts;  // (bytes, cumulative probability), increasing
  double mean() const {
    double m = 0;
    for (size_t i = 1; i < pts.size(); ++i)
      m += (pts[i].second - pts[i - 1].second) * (pts[i].first + pts[i - 1].first) / 2;
    return m;
  }
  double sample(double u) const {
    for (size_t i = 1; i < pts.size(); ++i)
      if (u <= pts[i].second) {
        const double span = pts[i].second - pts[i - 1].second;
        const double f = span > 0 ? (u - pts[i - 1].second) / span : 1;
        return pts[i - 1].first + f * (pts[i].first - pts[i - 1].first);
      }
    return pts.back().first;
  }
};

std::vector<std::string> data_lines(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::vector<std::string> out;
  std::string line;
  while (std::getline(in, line)) {
    const auto h = line.find('#');
    if (h != std::string::npos) line.resize(h);
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    out.push_back(line);
  }
  return out;
}

Cdf load_cdf(const std::string& path) {
  Cdf c;
  int n = 0;
  for (const auto& l : data_lines(path)) {
    ++n;
    std::istringstream s(l);
    double b, p;
    if (!(s >> b >> p) || b <= 0 || p < 0 || p > 1 ||
        (!c.pts.empty() && (b < c.pts.back().first || p < c.pts.back().second)))
      throw std::runtime_error(path + ": bad CDF point on data line " + std::to_string(n) + ": '" + l + "'");
    c.pts.emplace_back(b, p);
  }
  if (c.pts.size() < 2 || c.pts.back().second != 1.0)
    throw std::runtime_error(path + ": a CDF needs at least two points and must end at 1");
  if (c.pts.front().second > 0) c.pts.insert(c.pts.begin(), {c.pts.front().first, 0.0});
  return c;
}

struct Model {
  std::string name;
  double bytes = 0, compute_s = 0, weight = 1;
};

std::vector<Model> load_models(const std::string& path) {
  std::vector<Model> v;
  for (const auto& l : data_lines(path)) {
    std::istringstream s(l);
    Model m;
    double mparams;
    if (!(s >> m.name >> mparams >> m.compute_s >> m.weight) || mparams <= 0 || m.compute_s < 0 || m.weight < 0)
      throw std::runtime_error(path + ": bad model line '" + l + "'");
    m.bytes = mparams * 1e6 * 4;  // fp32 gradients
    v.push_back(m);
  }
  if (v.empty()) throw std::runtime_error(path + ": no models");
  return v;
}

// The accelerator's figures, from a generated design's config.json.
struct Design {
  std::string path;
  double gbps = 10;
  int ports = 4;
  double mhz = 200;
  int agg_latency = 18;
  double buffer_bytes = 65536;
  int contexts = 8;
  int max_elems = 362;
  int elem_bytes = 4;
  double throughput_bps() const { return ports * gbps * 1e9; }
  double latency_s() const { return agg_latency / (mhz * 1e6); }
  uint32_t payload() const { return static_cast<uint32_t>(max_elems * elem_bytes); }
};

Design load_design(const std::string& where) {
  // A design folder (panama-gen --out) or its config.json.
  struct stat st {};
  const std::string path = ::stat(where.c_str(), &st) == 0 && S_ISDIR(st.st_mode) ? where + "/config.json" : where;
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read design " + path);
  json j;
  try {
    in >> j;
  } catch (const std::exception& e) {
    throw std::runtime_error(path + ": not JSON: " + e.what());
  }
  Design d;
  d.path = path;
  try {
    d.gbps = j.at("gbps").get<double>();
    d.ports = j.at("ports").get<int>();
    d.mhz = j.at("mhz").get<double>();
    d.agg_latency = j.at("agg_latency").get<int>();
    d.buffer_bytes = j.at("buffer_bytes").get<double>();
    d.contexts = j.at("contexts").get<int>();
    d.max_elems = j.at("max_elems").get<int>();
    d.elem_bytes = j.at("elem_bytes").get<int>();
  } catch (const std::exception& e) {
    throw std::runtime_error(path + ": " + e.what());
  }
  if (d.gbps <= 0 || d.ports <= 0 || d.mhz <= 0 || d.agg_latency < 0 || d.buffer_bytes <= 0 || d.contexts <= 0 ||
      d.max_elems <= 0 || d.elem_bytes <= 0)
    throw std::runtime_error(path + ": a figure is out of range");
  return d;
}

// ---------------------------------------------------------------------------------------------
// The simulation

// The aggregation header at the start of every contribution and result.
struct Hdr {
  uint32_t job;
  uint16_t tree, worker;
  uint64_t vid;
  uint8_t flags;  // 1 result, 2 retransmission
  uint8_t pad;
  uint16_t origin;  // the worker that sent a contribution (repairs are answered to it)
  uint8_t pad2[4];
};
static_assert(sizeof(Hdr) == kHdrBytes, "header layout");

struct FlowRec {
  int src = 0, dst = 0;
  uint64_t size = 0, sent = 0, recv = 0;
  uint16_t port = 0;
  double start = 0, fct = -1;
  Ptr<Socket> tx, listen;
};

// One tree of one job on one accelerator: aggregation state in VID order. Its children are the
// workers (an edge accelerator, or the root in single-level mode) or the accelerators one level
// down; a non-root sends each partial sum to its parent, the root sends the results.
struct AccelCtx {
  int workers = 0, quorum = 0;  // workers: the number of children
  bool root = true, mcast = false;
  Ipv4Address parent;                    // non-root: the parent accelerator
  uint16_t my_child = 0;                 // non-root: this accelerator's child index at the parent
  Ipv4Address group;                     // root, mcast: the tree's multicast group
  std::vector<Ipv4Address> worker_addr;  // root: every worker of the job (results, repairs)
  std::vector<uint16_t> worker_port;
  uint64_t next_emit = 0;
  struct Rec {
    int count = 0;
    bool ce = false, complete = false;
    std::bitset<kMaxWorkers> seen;
  };
  std::map<uint64_t, Rec> open;
  // The CE of the last kCeMemory vectors released (tagged by VID): a repair forwarded up, or a
  // result sent again by the root, carries the mark the vector had.
  static constexpr uint64_t kCeMemory = 4096;
  std::vector<uint64_t> released{std::vector<uint64_t>(kCeMemory, ~0ull)};
  void remember(uint64_t vid, bool ce) { released[vid % kCeMemory] = vid << 1 | (ce ? 1 : 0); }
  bool released_ce(uint64_t vid) const {
    const uint64_t e = released[vid % kCeMemory];
    return e != ~0ull && (e >> 1) == vid && (e & 1);
  }
};

struct AccelStats {
  uint64_t rx_frames = 0, rx_bytes = 0, tx_frames = 0, late = 0, dup = 0, overflow = 0, resent = 0;
  uint64_t rx_ce = 0, tx_ce = 0;  // frames that arrived / left with CE
  double first_rx = -1, last_rx = -1, first_tx = -1, last_tx = -1;
  uint64_t max_open = 0;
};

struct Accel {
  int core = 0;  // the switch's index at its level
  ps::Role level = ps::Role::core;
  Ptr<Node> node;
  Ptr<Socket> rx, tx_ect, tx_ce;
  std::map<uint64_t, AccelCtx> ctx;  // key (job << 16) | tree
  uint64_t open_frames = 0;
  AccelStats st;
};

struct WorkerTree {
  std::shared_ptr<panama::host::Dctcp> cc;
  Ptr<Socket> sock;
  Ipv4Address dest;       // the first accelerator on the way up
  uint16_t child = 0;     // this worker's child index there
  uint64_t vid_base = 0;  // first VID of the current iteration
  uint32_t count = 0;     // vectors of this tree per iteration
  uint32_t next_send = 0, got = 0, inflight = 0;
  std::vector<uint8_t> state;  // per vector: 0 unsent, 1 sent, 2 result
  double last_progress = 0;
};

struct Worker {
  int host = 0;
  std::vector<WorkerTree> trees;
  // ring
  Ptr<Socket> ring_tx, ring_listen;
  uint64_t ring_sent = 0, ring_recv = 0;
  bool done = false;
};

struct Job {
  int id = 0;
  std::string model;
  double bytes = 0, compute_s = 0;
  std::vector<Worker> workers;
  std::vector<int> roots;  // core (accelerator) per tree
  double iter_start = 0;
  bool computing = false;
  std::vector<double> iter_s;
  uint64_t results = 0, results_ce = 0;  // results taken by the workers, and those with CE
  int done_workers = 0;
  uint64_t chunk = 0;  // ring
};

class Sim {
 public:
  Sim(Options o, Design d, Cdf cdf, std::vector<Model> models)
      : o_(std::move(o)), design_(std::move(d)), cdf_(std::move(cdf)), models_(std::move(models)) {}
  void scheme(bool ring, bool cc, double quorum) {
    ring_ = ring;
    panama_like_ = !ring;
    cc_ = cc;
    quorum_frac_ = quorum;
  }
  json run();

 private:
  void build();
  void install_queues(NetDeviceContainer& devs, double gbps);
  void link(int a, int b, double gbps, const std::string& layer, ps::Port* pa, ps::Port* pb);
  void start_flow(int src, int dst, uint64_t size);
  void flow_fill(Ptr<Socket> s, uint32_t);
  void flow_accept(Ptr<Socket> s, const Address&);
  void flow_recv(Ptr<Socket> s);
  void next_arrival();
  void setup_jobs();
  void create_jobs();
  void setup_ring(Job& job);
  void setup_accels();
  void start_iteration(int j);
  void compute_done(int j);
  void panama_send(Job& job, int w, int t);
  void send_contribution(Job& job, int w, int t, uint32_t i, bool retx);
  void worker_recv(Ptr<Socket> s);
  void accel_recv(Ptr<Socket> s);
  void accel_emit(Accel& a, uint64_t key, AccelCtx& c);
  void accel_result(Accel& a, AccelCtx& c, uint64_t key, uint64_t vid, bool ce, int only);
  void worker_done(int j);
  void repair_tick();
  void ring_fill(int j, int w);
  void ring_recv(Ptr<Socket> s);
  void ring_accept(Ptr<Socket> s, const Address&);
  void progress_tick();
  bool all_done() const;
  json results();

  Options o_;
  bool panama_like_ = true, ring_ = false;
  double quorum_frac_ = 1;
  bool cc_ = true;
  Design design_;
  Cdf cdf_;
  std::vector<Model> models_;
  ps::FatTree tree_;
  NodeContainer hosts_, edges_, aggs_, cores_, accels_;
  std::vector<ps::Node> rnodes_;  // routing description per node id
  std::vector<Ipv4Address> host_addr_;
  std::vector<Accel> acc_;
  std::vector<Ptr<QueueDisc>> qdiscs_;
  std::vector<std::pair<std::string, Ptr<NetDevice>>> link_devs_;  // layer, transmitting device
  std::vector<FlowRec> flows_;
  std::unordered_map<Socket*, int> flow_of_sock_;
  std::map<std::pair<int, uint16_t>, int> flow_of_port_;
  std::vector<uint16_t> next_port_;
  std::vector<Job> jobs_;
  std::unordered_map<Socket*, std::pair<int, int>> worker_of_sock_;  // (job, worker)
  std::unordered_map<Socket*, int> accel_of_sock_;
  Ptr<UniformRandomVariable> rng_, jrng_;  // flows; jobs (separate, so schemes share flows)
  Ptr<ExponentialRandomVariable> gap_;
  double end_time_ = 0;
  int flows_open_ = 0;
  std::chrono::steady_clock::time_point wall0_;
  double last_print_ = -1;
  uint64_t undecodable_ = 0;
  void flow_connected(Ptr<Socket> s);
  void flow_failed(Ptr<Socket> s);
  void accel_send(int ai, uint64_t key, uint64_t vid, bool ce, int only);
  void ring_fill_cb(Ptr<Socket> s, uint32_t);
  void finish_check();
  int host_of(Ptr<Node> n) const { return static_cast<int>(n->GetId() - host_base_); }
  bool hier() const { return panama_like_ && o_.aggregation == "hier"; }
  int acc_edge(int e) const { return tree_.cores() + e; }
  int acc_agg(int a) const { return tree_.cores() + tree_.edges() + a; }
  Ipv4Address accel_addr(int ai) const { return rnodes_[acc_[ai].node->GetId() - host_base_].up[0].src; }
  struct TreeNode {
    int acc = 0, parent = -1, child = 0, children = 0;
  };
  std::vector<TreeNode> plan_tree(const Job& job, int core, std::vector<int>& first, std::vector<int>& child) const;
  void setup_tree(Job& job, int t, const std::vector<TreeNode>& plan, const std::vector<int>& first,
                  const std::vector<int>& child);
  void accel_release(int ai, uint64_t key, uint64_t vid, bool ce);
  void accel_up(int ai, const AccelCtx& c, Hdr h, bool ce);
  uint32_t host_base_ = 0;
  uint32_t links_ = 0;
  std::vector<Ptr<NetDevice>> devs_;
  std::map<std::string, std::vector<Ptr<QueueDisc>>> layer_q_;
  std::map<std::string, double> layer_bps_;
  double sim_end_ = 0;
  bool stopped_ = false;
};

// ---------------------------------------------------------------------------------------------
// Topology

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
    tree_.where[host_addr_[h].Get()] = {false, h};
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
    tree_.where[rn(xn).up[0].src.Get()] = {true, index, level};
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
    n->GetObject<Ipv4>()->SetRoutingProtocol(CreateObject<ps::FatTreeRouting>(&tree_, rnodes_[n->GetId() - base]));
  }
  next_port_.assign(tree_.hosts(), 0);
}

// ---------------------------------------------------------------------------------------------
// Background flows over ns-3's TCP (TcpDctcp)

void Sim::start_flow(int src, int dst, uint64_t size) {
  const int id = static_cast<int>(flows_.size());
  FlowRec f;
  f.src = src;
  f.dst = dst;
  f.size = size;
  f.start = Simulator::Now().GetSeconds();
  uint16_t port = 0;
  for (int tries = 0; tries < 60000; ++tries) {
    port = static_cast<uint16_t>(1024 + next_port_[dst]++ % 60000);
    if (!flow_of_port_.count({dst, port})) break;
  }
  flow_of_port_[{dst, port}] = id;
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
  flow_of_sock_[PeekPointer(f.tx)] = id;
  f.tx->Connect(InetSocketAddress(host_addr_[dst], port));
  flows_.push_back(f);
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

void Sim::next_arrival() {
  if (Simulator::Now().GetSeconds() >= o_.duration) return;
  const int n = tree_.hosts();
  const int src = static_cast<int>(rng_->GetInteger(0, n - 1));
  int dst = static_cast<int>(rng_->GetInteger(0, n - 2));
  if (dst >= src) ++dst;
  const double size = std::max(1.0, std::round(cdf_.sample(rng_->GetValue(0, 1))));
  start_flow(src, dst, static_cast<uint64_t>(size));
  Simulator::Schedule(Seconds(gap_->GetValue()), &Sim::next_arrival, this);
}

// ---------------------------------------------------------------------------------------------
// Aggregation jobs

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

void Sim::setup_ring(Job& job) {
  const int N = static_cast<int>(job.workers.size());
  job.chunk = static_cast<uint64_t>(std::ceil(job.bytes / N));
  const uint16_t port = static_cast<uint16_t>(30000 + job.id);
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

void Sim::create_jobs() {
  const int n = tree_.hosts();
  const int wmin = std::max(2, o_.workers_min), wmax = std::max(wmin, o_.workers_max);
  int budget = static_cast<int>(std::floor(o_.job_fraction * n));
  int cursor = 0;
  double wsum = 0;
  for (const auto& m : models_) wsum += m.weight;
  while (budget >= wmin && (o_.jobs < 0 || static_cast<int>(jobs_.size()) < o_.jobs)) {
    const int w = static_cast<int>(jrng_->GetInteger(wmin, std::min(wmax, budget)));
    Job job;
    job.id = static_cast<int>(jobs_.size());
    if (o_.model_bytes > 0) {
      job.model = "custom";
      job.bytes = o_.model_bytes;
      job.compute_s = std::max(0.0, o_.compute_s);
    } else {
      const Model* m = nullptr;
      if (!o_.model.empty()) {
        for (const auto& x : models_)
          if (x.name == o_.model) m = &x;
        if (!m) throw std::runtime_error("unknown model " + o_.model);
      } else {
        double u = jrng_->GetValue(0, wsum);
        for (const auto& x : models_) {
          m = &x;
          if ((u -= x.weight) <= 0) break;
        }
      }
      job.model = m->name;
      job.bytes = m->bytes * o_.model_scale;
      job.compute_s = m->compute_s * o_.model_scale;
    }
    job.workers.resize(w);
    for (int i = 0; i < w; ++i) job.workers[i].host = cursor + i;
    cursor += w;
    budget -= w;
    jobs_.push_back(std::move(job));
  }
}

// The aggregation tree of one job rooted at core switch `core`: its accelerators, each with its
// parent and its number of children; first[w] / child[w]: worker w's first accelerator and its
// child index there. Single-level (--aggregation core): the core's accelerator alone, the workers
// its children. Hierarchical: the accelerator of every edge switch with workers of the job, of the
// pods' aggregation switches that reach the core (core / half), and of the core, up to the lowest
// level that covers the whole job (an edge, a pod, or the core).
std::vector<Sim::TreeNode> Sim::plan_tree(const Job& job, int core, std::vector<int>& first,
                                          std::vector<int>& child) const {
  const int N = static_cast<int>(job.workers.size()), half = tree_.half();
  first.assign(N, core);
  child.assign(N, 0);
  std::vector<TreeNode> plan;
  if (!hier()) {
    for (int w = 0; w < N; ++w) child[w] = w;
    plan.push_back({core, -1, 0, N});
    return plan;
  }
  std::vector<int> edges, pods;  // in order of first appearance (workers are consecutive)
  for (int w = 0; w < N; ++w) {
    const int e = tree_.edge_of_host(job.workers[w].host);
    if (edges.empty() || edges.back() != e) edges.push_back(e);
    if (pods.empty() || pods.back() != e / half) pods.push_back(e / half);
    TreeNode& en = edges.size() > plan.size() ? plan.emplace_back(TreeNode{acc_edge(e)}) : plan.back();
    first[w] = en.acc;
    child[w] = en.children++;
  }
  const size_t n_edges = plan.size();
  if (edges.size() > 1) {
    for (size_t i = 0; i < n_edges; ++i) {
      const int a = (edges[i] / half) * half + core / half;
      if (plan.back().acc != acc_agg(a)) plan.push_back({acc_agg(a)});
      plan[i].parent = plan.back().acc;
      plan[i].child = plan.back().children++;
    }
  }
  if (pods.size() > 1) {
    const size_t root = plan.size();
    plan.push_back({core});
    for (size_t i = n_edges; i < root; ++i) {
      plan[i].parent = core;
      plan[i].child = plan[root].children++;
    }
  }
  return plan;
}

// One tree's accelerator contexts, and in hierarchical mode its multicast group: each switch of
// the tree replicates a result to the member ports below it.
void Sim::setup_tree(Job& job, int t, const std::vector<TreeNode>& plan, const std::vector<int>& first,
                     const std::vector<int>& child) {
  const int N = static_cast<int>(job.workers.size()), half = tree_.half();
  const uint64_t key = (static_cast<uint64_t>(job.id) << 16) | static_cast<uint64_t>(t);
  const Ipv4Address group(0xE1000000u | (static_cast<uint32_t>(job.id & 0xffff) << 8) | static_cast<uint32_t>(t));
  for (const auto& n : plan) {
    AccelCtx& c = acc_[n.acc].ctx[key];
    c.workers = n.children;
    c.quorum = std::max(1, static_cast<int>(std::ceil(quorum_frac_ * n.children - 1e-9)));
    c.root = n.parent < 0;
    c.mcast = hier();
    c.group = group;
    if (!c.root) {
      c.parent = accel_addr(n.parent);
      c.my_child = static_cast<uint16_t>(n.child);
    } else {
      c.worker_addr.resize(N);
      c.worker_port.assign(N, static_cast<uint16_t>(kResultPort + t));
      for (int w = 0; w < N; ++w) c.worker_addr[w] = host_addr_[job.workers[w].host];
    }
  }
  for (int w = 0; w < N; ++w) {
    job.workers[w].trees[t].dest = accel_addr(first[w]);
    job.workers[w].trees[t].child = static_cast<uint16_t>(child[w]);
  }
  if (!hier()) return;
  // The group's ports: the root's switch down to the tree's pods / edges / workers, and each
  // switch below it down to its own members.
  auto add = [&](ps::Role role, int index, Ptr<Node> sw, int port) {
    auto& v = tree_.groups[ps::FatTree::group_key(role, index, group)];
    const uint32_t iface = rnodes_[sw->GetId() - host_base_].down[port].iface;
    if (std::find(v.begin(), v.end(), iface) == v.end()) v.push_back(iface);
  };
  const int core = job.roots[t];
  const bool at_core = acc_[plan.back().acc].level == ps::Role::core;
  const bool at_agg = at_core || acc_[plan.back().acc].level == ps::Role::agg;
  for (const auto& wk : job.workers) {
    const int e = tree_.edge_of_host(wk.host), pod = e / half, a = pod * half + core / half;
    add(ps::Role::edge, e, edges_.Get(e), wk.host % half);
    if (at_agg) add(ps::Role::agg, a, aggs_.Get(a), e % half);
    if (at_core) add(ps::Role::core, core, cores_.Get(core), pod);
  }
}

void Sim::setup_jobs() {
  create_jobs();
  const uint32_t payload = design_.payload();
  const int cores = tree_.cores();
  std::vector<int> used(acc_.size(), 0);
  for (auto& job : jobs_) {
    const int N = static_cast<int>(job.workers.size());
    if (ring_) {
      setup_ring(job);
      continue;
    }
    // Trees rooted at distinct core switches whose accelerators (every one of the tree's, in
    // hierarchical mode) have a free context.
    const int want = std::min(o_.trees, cores);
    std::vector<std::vector<TreeNode>> plans;
    std::vector<std::vector<int>> firsts, childs;
    for (int i = 0; i < cores && static_cast<int>(job.roots.size()) < want; ++i) {
      const int c = (job.id * want + i) % cores;
      std::vector<int> first, child;
      auto plan = plan_tree(job, c, first, child);
      if (std::any_of(plan.begin(), plan.end(), [&](const TreeNode& n) { return used[n.acc] >= design_.contexts; }))
        continue;
      for (const auto& n : plan) ++used[n.acc];
      job.roots.push_back(c);
      plans.push_back(std::move(plan));
      firsts.push_back(std::move(first));
      childs.push_back(std::move(child));
    }
    if (job.roots.empty())
      throw std::runtime_error("job " + std::to_string(job.id) + ": no accelerator has a free context");
    const int T = static_cast<int>(job.roots.size());
    const uint64_t vectors = static_cast<uint64_t>(std::ceil(job.bytes / payload));
    panama::host::WindowParams wp;
    const double frame_bytes = payload + kHdrBytes + 8 + 20;
    wp.max = std::max(1.0, std::min<double>(o_.window_cap, std::floor(design_.buffer_bytes / 2 / frame_bytes / T)));
    wp.init = std::min(4.0, wp.max);
    wp.cc = cc_;
    if (!cc_) wp.init = wp.max;  // no congestion control: a fixed window as large as allowed
    for (int w = 0; w < N; ++w) {
      Worker& wk = job.workers[w];
      wk.trees.resize(T);
      for (int t = 0; t < T; ++t) {
        WorkerTree& wt = wk.trees[t];
        wt.cc = std::make_shared<panama::host::Dctcp>(wp);
        wt.count = static_cast<uint32_t>(vectors / T + (static_cast<uint64_t>(t) < vectors % T));
        wt.sock = Socket::CreateSocket(hosts_.Get(wk.host), UdpSocketFactory::GetTypeId());
        wt.sock->Bind(InetSocketAddress(Ipv4Address::GetAny(), static_cast<uint16_t>(kResultPort + t)));
        wt.sock->SetIpTos(kEct0);
        wt.sock->SetIpRecvTos(true);
        wt.sock->SetRecvCallback(MakeCallback(&Sim::worker_recv, this));
        worker_of_sock_[PeekPointer(wt.sock)] = {job.id, w};
      }
    }
    for (int t = 0; t < T; ++t) setup_tree(job, t, plans[t], firsts[t], childs[t]);
  }
  setup_accels();
  for (size_t j = 0; j < jobs_.size(); ++j) Simulator::ScheduleNow(&Sim::start_iteration, this, static_cast<int>(j));
}

void Sim::start_iteration(int j) {
  Job& job = jobs_[j];
  job.iter_start = Simulator::Now().GetSeconds();
  job.computing = true;
  job.done_workers = 0;
  for (auto& wk : job.workers) {
    wk.done = false;
    for (auto& wt : wk.trees) {
      if (!job.iter_s.empty()) wt.vid_base += wt.count;
      wt.next_send = wt.got = wt.inflight = 0;
      wt.state.assign(wt.count, 0);
    }
  }
  Simulator::Schedule(Seconds(job.compute_s), &Sim::compute_done, this, j);
}

void Sim::compute_done(int j) {
  Job& job = jobs_[j];
  job.computing = false;
  const double now = Simulator::Now().GetSeconds();
  for (int w = 0; w < static_cast<int>(job.workers.size()); ++w) {
    if (ring_) {
      ring_fill(j, w);
      continue;
    }
    for (int t = 0; t < static_cast<int>(job.roots.size()); ++t) {
      job.workers[w].trees[t].last_progress = now;
      panama_send(job, w, t);
    }
  }
}

void Sim::send_contribution(Job& job, int w, int t, uint32_t i, bool retx) {
  WorkerTree& wt = job.workers[w].trees[t];
  Hdr h{};
  h.job = static_cast<uint32_t>(job.id);
  h.tree = static_cast<uint16_t>(t);
  h.worker = wt.child;
  h.origin = static_cast<uint16_t>(w);
  h.vid = wt.vid_base + i;
  h.flags = retx ? 2 : 0;
  wt.sock->SendTo(frame(h, design_.payload(), kEct0), 0, InetSocketAddress(wt.dest, kAccelPort));
}

void Sim::panama_send(Job& job, int w, int t) {
  WorkerTree& wt = job.workers[w].trees[t];
  const uint32_t allowed = static_cast<uint32_t>(wt.cc->allowed());
  while (wt.inflight < allowed && wt.next_send < wt.count) {
    const uint32_t i = wt.next_send++;
    if (wt.state[i] != 0) continue;  // its result came already (partial synchronisation)
    send_contribution(job, w, t, i, false);
    wt.state[i] = 1;
    ++wt.inflight;
  }
}

void Sim::worker_recv(Ptr<Socket> s) {
  auto it = worker_of_sock_.find(PeekPointer(s));
  if (it == worker_of_sock_.end()) return;
  const int j = it->second.first, w = it->second.second;
  Job& job = jobs_[j];
  Worker& wk = job.workers[w];
  Address from;
  while (Ptr<Packet> p = s->RecvFrom(from)) {
    Hdr h;
    if (!parse(p, h) || !(h.flags & 1) || h.tree >= wk.trees.size()) {
      ++undecodable_;
      continue;
    }
    WorkerTree& wt = wk.trees[h.tree];
    if (h.vid < wt.vid_base || h.vid >= wt.vid_base + wt.count || wk.done) continue;
    const uint32_t i = static_cast<uint32_t>(h.vid - wt.vid_base);
    if (wt.state[i] == 2) continue;
    if (wt.state[i] == 1) --wt.inflight;
    wt.state[i] = 2;
    ++wt.got;
    wt.last_progress = Simulator::Now().GetSeconds();
    const bool ce = ce_of(p);
    ++job.results;
    job.results_ce += ce;
    wt.cc->on_result(ce);
    panama_send(job, w, h.tree);
    bool all = true;
    for (const auto& x : wk.trees) all = all && x.got == x.count;
    if (all) {
      wk.done = true;
      if (++job.done_workers == static_cast<int>(job.workers.size())) worker_done(j);
    }
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
    if (++r.count >= c.quorum) {
      r.complete = true;
      // Results leave in VID order, each after the design's pipeline latency.
      while (!c.open.empty() && c.open.begin()->first == c.next_emit && c.open.begin()->second.complete) {
        Simulator::Schedule(Seconds(design_.latency_s()), &Sim::accel_release, this, ai, cit->first, c.next_emit,
                            c.open.begin()->second.ce);
        c.remember(c.next_emit, c.open.begin()->second.ce);
        c.open.erase(c.open.begin());
        --a.open_frames;
        ++c.next_emit;
      }
    }
  }
}

void Sim::accel_send(int ai, uint64_t key, uint64_t vid, bool ce, int only) {
  Accel& a = acc_[ai];
  AccelCtx& c = a.ctx[key];
  Hdr h{};
  h.job = static_cast<uint32_t>(key >> 16);
  h.tree = static_cast<uint16_t>(key & 0xffff);
  h.vid = vid;
  h.flags = 1;
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
void Sim::accel_release(int ai, uint64_t key, uint64_t vid, bool ce) {
  const AccelCtx& c = acc_[ai].ctx[key];
  if (c.root) {
    accel_send(ai, key, vid, ce, -1);
    return;
  }
  Hdr h{};
  h.job = static_cast<uint32_t>(key >> 16);
  h.tree = static_cast<uint16_t>(key & 0xffff);
  h.vid = vid;
  h.origin = 0xffff;
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

void Sim::repair_tick() {
  const double now = Simulator::Now().GetSeconds(), rto = o_.rto_ms / 1e3;
  for (auto& job : jobs_) {
    if (job.computing || ring_) continue;
    for (int w = 0; w < static_cast<int>(job.workers.size()); ++w) {
      Worker& wk = job.workers[w];
      if (wk.done) continue;
      for (int t = 0; t < static_cast<int>(wk.trees.size()); ++t) {
        WorkerTree& wt = wk.trees[t];
        if (wt.inflight == 0 || now - wt.last_progress < rto) continue;
        for (uint32_t i = 0; i < wt.next_send; ++i)
          if (wt.state[i] == 1) send_contribution(job, w, t, i, true);
        wt.last_progress = now;
      }
    }
  }
  if (!stopped_) Simulator::Schedule(Seconds(rto), &Sim::repair_tick, this);
}

void Sim::worker_done(int j) {
  Job& job = jobs_[j];
  job.iter_s.push_back(Simulator::Now().GetSeconds() - job.iter_start);
  const bool more = o_.iterations > 0 ? static_cast<int>(job.iter_s.size()) < o_.iterations
                                      : Simulator::Now().GetSeconds() < o_.duration;
  if (more)
    start_iteration(j);
  else
    finish_check();
}

// Ring all-reduce over TCP: 2 (N - 1) steps of S / N bytes, pipelined at byte granularity (as
// NCCL and Horovod cut chunks into slices): worker w may be one chunk ahead of what it has received
// from its predecessor.
void Sim::ring_fill(int j, int w) {
  Job& job = jobs_[j];
  if (job.computing) return;
  Worker& wk = job.workers[w];
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
  const int j = InetSocketAddress::ConvertFrom(a).GetPort() - 30000;
  const int h = host_of(s->GetNode());
  if (j < 0 || j >= static_cast<int>(jobs_.size())) return;
  for (int w = 0; w < static_cast<int>(jobs_[j].workers.size()); ++w)
    if (jobs_[j].workers[w].host == h) worker_of_sock_[PeekPointer(s)] = {j, w};
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

// ---------------------------------------------------------------------------------------------
// Running

bool Sim::all_done() const {
  if (Simulator::Now().GetSeconds() < o_.duration && o_.iterations == 0) return false;
  if (flows_open_ > 0) return false;
  for (const auto& job : jobs_) {
    const bool more = o_.iterations > 0 ? static_cast<int>(job.iter_s.size()) < o_.iterations : true;
    if (job.computing || job.done_workers < static_cast<int>(job.workers.size()) || (o_.iterations > 0 && more))
      return false;
  }
  return true;
}

void Sim::finish_check() {
  if (!stopped_ && all_done()) {
    stopped_ = true;
    sim_end_ = Simulator::Now().GetSeconds();
    Simulator::Stop();
  }
}

void Sim::progress_tick() {
  const double now = Simulator::Now().GetSeconds();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0_).count();
  if (o_.progress && (wall - last_print_ >= 0.5 || last_print_ < 0)) {
    last_print_ = wall;
    char buf[200];
    if (now < o_.duration) {
      const double f = now / o_.duration;
      const int bars = static_cast<int>(f * 30);
      const double eta = f > 0 ? wall * (1 - f) / f : 0;
      std::snprintf(buf, sizeof buf, "\r[%-30s] %3.0f%%  sim %.4f/%.4f s  wall %.0f s  ETA %.0f s  ",
                    std::string(bars, '#').c_str(), 100 * f, now, o_.duration, wall, eta);
    } else {
      int jobs_open = 0;
      for (const auto& job : jobs_) jobs_open += job.done_workers < static_cast<int>(job.workers.size());
      std::snprintf(buf, sizeof buf, "\r[draining] sim %.4f s  wall %.0f s  flows open %d  jobs in an iteration %d  ",
                    now, wall, flows_open_, jobs_open);
    }
    std::cerr << buf << std::flush;
  }
  finish_check();
  if (!stopped_) Simulator::Schedule(Seconds(std::max(1e-5, o_.duration / 200)), &Sim::progress_tick, this);
}

json Sim::run() {
  Config::SetDefault("ns3::RedQueueDisc::UseEcn", BooleanValue(true));
  Config::SetDefault("ns3::RedQueueDisc::UseHardDrop", BooleanValue(false));
  Config::SetDefault("ns3::RedQueueDisc::Gentle", BooleanValue(false));
  Config::SetDefault("ns3::RedQueueDisc::QW", DoubleValue(1.0));
  Config::SetDefault("ns3::RedQueueDisc::MeanPktSize", UintegerValue(1500));
  Config::SetDefault("ns3::RedQueueDisc::MinTh", DoubleValue(o_.ecn_k));
  Config::SetDefault("ns3::RedQueueDisc::MaxTh", DoubleValue(o_.ecn_k));
  Config::SetDefault("ns3::RedQueueDisc::MaxSize", QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, o_.queue_pkts)));
  Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TcpDctcp::GetTypeId()));
  Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(1448));
  Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(1 << 20));
  Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(1 << 20));
  Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(10));
  // ns-3.37's default recovery (PRR) with TcpDctcp's ECE-driven window reduction left a
  // connection with a full send buffer stuck, one segment per RTO (docs/sim.md); the classic
  // recovery does not.
  Config::SetDefault("ns3::TcpL4Protocol::RecoveryType", TypeIdValue(TcpClassicRecovery::GetTypeId()));
  Config::SetDefault("ns3::TcpSocketBase::MinRto",
                     TimeValue(MicroSeconds(static_cast<int64_t>(o_.tcp_min_rto_ms * 1e3))));
  // An ACK per segment: with ns-3.37's delayed ACKs (2 segments) TcpDctcp connections stalled
  // without any loss under load (docs/sim.md "TCP").
  Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(1));
  RngSeedManager::SetSeed(o_.seed);
  RngSeedManager::SetRun(1);

  build();
  rng_ = CreateObject<UniformRandomVariable>();
  gap_ = CreateObject<ExponentialRandomVariable>();
  jrng_ = CreateObject<UniformRandomVariable>();
  rng_->SetStream(1);
  gap_->SetStream(2);
  jrng_->SetStream(3);
  if (o_.single_flow > 0) {
    Simulator::ScheduleNow(&Sim::start_flow, this, 0, tree_.hosts() - 1, static_cast<uint64_t>(o_.single_flow));
  } else if (!o_.no_background && o_.load > 0) {
    const double rate = o_.load * tree_.hosts() * o_.gbps * 1e9 / (8 * cdf_.mean());
    gap_->SetAttribute("Mean", DoubleValue(1 / rate));
    Simulator::ScheduleNow(&Sim::next_arrival, this);
  }
  if (!o_.no_jobs && o_.single_flow <= 0) Simulator::ScheduleNow(&Sim::setup_jobs, this);
  wall0_ = std::chrono::steady_clock::now();
  Simulator::ScheduleNow(&Sim::progress_tick, this);
  if (panama_like_) Simulator::ScheduleNow(&Sim::repair_tick, this);
  Simulator::Stop(Seconds(o_.max_time));
  Simulator::Run();
  if (!stopped_) sim_end_ = Simulator::Now().GetSeconds();
  if (o_.progress) std::cerr << "\n";
  json r = results();
  Simulator::Destroy();
  return r;
}

json Sim::results() {
  json out;
  json flows = json::array();
  for (const auto& f : flows_)
    flows.push_back({{"kind", f.size < o_.short_bytes ? "short" : "long"},
                     {"size_bytes", f.size},
                     {"start_s", f.start},
                     {"fct_s", f.fct >= 0 ? json(f.fct) : json(nullptr)},
                     {"src", f.src},
                     {"dst", f.dst},
                     {"sent_bytes", f.sent},
                     {"recv_bytes", f.recv}});
  out["flows"] = flows;
  json jobs = json::array();
  for (const auto& job : jobs_)
    jobs.push_back({{"id", job.id},
                    {"workers", job.workers.size()},
                    {"model", job.model},
                    {"model_bytes", job.bytes},
                    {"compute_s", job.compute_s},
                    {"roots", job.roots},
                    {"iteration_s", job.iter_s},
                    {"results", job.results},
                    {"results_ce", job.results_ce}});
  out["jobs"] = jobs;

  json links;
  const double t = std::max(sim_end_, 1e-12);
  for (const auto& [layer, qs] : layer_q_) {
    uint64_t bytes = 0, marks = 0, drops = 0;
    for (const auto& q : qs) {
      const auto& s = q->GetStats();
      bytes += s.nTotalSentBytes;
      marks += s.nTotalMarkedPackets;
      drops += s.nTotalDroppedPackets;
    }
    links[layer] = {{"tx_bytes", bytes},
                    {"utilisation", bytes * 8.0 / (layer_bps_[layer] * t)},
                    {"ecn_marks", marks},
                    {"drops", drops}};
  }
  uint64_t dev_drops = 0;
  for (const auto& d : devs_) dev_drops += DynamicCast<PointToPointNetDevice>(d)->GetQueue()->GetTotalDroppedPackets();
  links["device_queue_drops"] = dev_drops;
  out["links"] = links;
  json acc = json::array();
  for (const auto& a : acc_) {
    if (a.st.rx_frames == 0) continue;
    acc.push_back({{"level", a.level == ps::Role::edge  ? "edge"
                             : a.level == ps::Role::agg ? "agg"
                                                        : "core"},
                   {"core", a.core},
                   {"rx_frames", a.st.rx_frames},
                   {"rx_bytes", a.st.rx_bytes},
                   {"tx_frames", a.st.tx_frames},
                   {"first_rx_s", a.st.first_rx},
                   {"last_rx_s", a.st.last_rx},
                   {"first_tx_s", a.st.first_tx},
                   {"last_tx_s", a.st.last_tx},
                   {"late", a.st.late},
                   {"duplicates", a.st.dup},
                   {"overflow", a.st.overflow},
                   {"repairs_answered", a.st.resent},
                   {"max_open_vectors", a.st.max_open},
                   {"rx_ce", a.st.rx_ce},
                   {"tx_ce", a.st.tx_ce}});
  }
  out["accelerators"] = acc;
  out["design"] = {{"path", design_.path},
                   {"throughput_gbps", design_.throughput_bps() / 1e9},
                   {"latency_s", design_.latency_s()},
                   {"buffer_bytes", design_.buffer_bytes},
                   {"contexts", design_.contexts},
                   {"payload_bytes", design_.payload()}};
  out["sim_end_s"] = sim_end_;
  out["complete"] = stopped_;
  out["undecodable"] = undecodable_;
  return out;
}

}  // namespace

namespace {

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return std::nan("");
  std::sort(v.begin(), v.end());
  const size_t i = std::min(v.size() - 1, static_cast<size_t>(std::ceil(p * v.size())) - 1);
  return v[i];
}

json summary(const json& r, double short_bytes) {
  std::vector<double> short_fct, long_tput, iters;
  int open = 0;
  for (const auto& f : r["flows"]) {
    if (f["fct_s"].is_null()) {
      ++open;
      continue;
    }
    const double fct = f["fct_s"].get<double>();
    if (f["size_bytes"].get<double>() < short_bytes)
      short_fct.push_back(fct);
    else
      long_tput.push_back(f["size_bytes"].get<double>() * 8 / fct / 1e9);
  }
  for (const auto& j : r["jobs"])
    for (const auto& t : j["iteration_s"]) iters.push_back(t.get<double>());
  auto mean = [](const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += x;
    return v.empty() ? std::nan("") : s / v.size();
  };
  auto num = [](double x) { return std::isnan(x) ? json(nullptr) : json(x); };
  return {{"flows", r["flows"].size()},
          {"flows_incomplete", open},
          {"short_flows", short_fct.size()},
          {"short_fct_p99_s", num(percentile(short_fct, 0.99))},
          {"short_fct_mean_s", num(mean(short_fct))},
          {"long_flows", long_tput.size()},
          {"long_throughput_gbps_mean", num(mean(long_tput))},
          {"iterations", iters.size()},
          {"iteration_mean_s", num(mean(iters))}};
}

void add_options(CLI::App& app, Options& o) {
  app.add_option("--preset", o.preset, "smoke (k=4) or paper (k=16)")->check(CLI::IsMember({"smoke", "paper"}));
  app.add_option("--scheme", o.scheme)
      ->check(CLI::IsMember({"panama", "ring", "switchml", "panama-nocc", "panama-0.88", "panama-0.94", "ideal"}));
  app.add_option("--load", o.load, "background load per server link, 0..1")->check(CLI::Range(0.0, 1.0));
  app.add_option("--seed", o.seed)->check(CLI::PositiveNumber);
  app.add_option("--duration", o.duration, "simulated seconds in which work starts")->check(CLI::PositiveNumber);
  app.add_option("--k", o.k, "fat-tree arity (even, >= 2)");
  app.add_option("--gbps", o.gbps, "link rate")->check(CLI::PositiveNumber);
  app.add_option("--link-delay-us", o.link_delay_us)->check(CLI::NonNegativeNumber);
  app.add_option("--ecn-k", o.ecn_k, "ECN marking threshold, packets")->check(CLI::PositiveNumber);
  app.add_option("--queue-pkts", o.queue_pkts, "queue capacity per port")->check(CLI::PositiveNumber);
  app.add_option("--cdf", o.cdf, "websearch, datamining, or a CDF file");
  app.add_option("--data-dir", o.data_dir, "folder of the data files (default: next to sim/)");
  app.add_option("--design", o.design, "a generated design's folder (or its config.json); also PANAMA_DESIGN")
      ->envname("PANAMA_DESIGN");
  app.add_option("--accel-buffer-mb", o.accel_buffer_mb,
                 "accelerator buffer, MB (the paper's 64); 0 keeps the design's")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--trees", o.trees, "aggregation trees per job")->check(CLI::PositiveNumber);
  app.add_option("--jobs", o.jobs, "number of jobs (default: fill --job-fraction)");
  app.add_option("--workers-min", o.workers_min)->check(CLI::Range(2, kMaxWorkers));
  app.add_option("--workers-max", o.workers_max)->check(CLI::Range(2, kMaxWorkers));
  app.add_option("--job-fraction", o.job_fraction)->check(CLI::Range(0.0, 1.0));
  app.add_option("--model-scale", o.model_scale, "scales model sizes and compute times")->check(CLI::PositiveNumber);
  app.add_option("--model", o.model, "use this model for every job");
  app.add_option("--model-bytes", o.model_bytes, "a custom job's gradient bytes")->check(CLI::PositiveNumber);
  app.add_option("--compute-s", o.compute_s, "a custom job's compute time")->check(CLI::NonNegativeNumber);
  app.add_option("--window-cap", o.window_cap)->check(CLI::PositiveNumber);
  app.add_option("--short-bytes", o.short_bytes, "flows below this are short")->check(CLI::PositiveNumber);
  app.add_option("--single-flow", o.single_flow, "bytes: one flow, host 0 to the last host")
      ->check(CLI::PositiveNumber);
  app.add_flag("--no-background", o.no_background);
  app.add_flag("--no-jobs", o.no_jobs);
  app.add_option("--iterations", o.iterations, "iterations per job (0: until --duration)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--max-time", o.max_time, "hard stop, simulated seconds")->check(CLI::PositiveNumber);
  app.add_option("--rto-ms", o.rto_ms, "aggregation repair timeout")->check(CLI::PositiveNumber);
  app.add_option("--tcp-min-rto-ms", o.tcp_min_rto_ms, "TCP's minimum retransmission timeout")
      ->check(CLI::PositiveNumber);
  app.add_option("--aggregation", o.aggregation,
                 "hier: accelerators at every switch of a job's tree, results multicast by the switches; "
                 "core: at the core only, results unicast")
      ->check(CLI::IsMember({"hier", "core"}));
  app.add_option("--out", o.out, "write DIR/results.json");
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"panama-dcsim: PANAMA in a shared fat-tree cluster (ns-3); docs/sim.md"};
  add_options(app, o);
  bool quiet = false;
  app.add_flag("--quiet", quiet, "no progress bar");
  if (const auto code = panama::parse_command_line(app, argc, argv, "panama-dcsim")) return *code;
  o.progress = !quiet;

  try {
    const bool smoke = o.preset == "smoke";
    if (o.k < 0) o.k = smoke ? 4 : 16;
    if (o.k < 2 || o.k % 2 || o.k > 64) throw std::runtime_error("--k must be even, 2..64");
    if (o.duration < 0) o.duration = smoke ? 0.005 : 1.0;
    if (o.workers_min < 0) o.workers_min = smoke ? 4 : 16;
    if (o.workers_max < 0) o.workers_max = smoke ? 4 : 96;
    if (o.workers_max < o.workers_min) throw std::runtime_error("--workers-max is below --workers-min");
    if (o.model_scale < 0) o.model_scale = smoke ? 0.005 : 1.0;
    if (o.max_time < 0) o.max_time = 20 * o.duration + 2;
    if (o.data_dir.empty()) {
      // The data files sit in the source tree's sim/data; the build records where.
      o.data_dir = PANAMA_SIM_DATA;
    }
    const std::string cdf_path = o.cdf == "websearch"    ? o.data_dir + "/websearch.cdf"
                                 : o.cdf == "datamining" ? o.data_dir + "/datamining.cdf"
                                                         : o.cdf;
    Cdf cdf = load_cdf(cdf_path);
    auto models = load_models(o.data_dir + "/models.txt");
    if (o.design.empty()) o.design = PANAMA_SIM_DESIGN;
    Design d = load_design(o.design);
    if (o.accel_buffer_mb > 0) d.buffer_bytes = o.accel_buffer_mb * 1e6;
    std::string out_dir = o.out;
    if (!out_dir.empty()) {
      std::error_code ec;
      if (::access(out_dir.c_str(), W_OK) != 0 && ::mkdir(out_dir.c_str(), 0755) != 0)
        throw std::runtime_error("cannot create " + out_dir);
    }

    json r;
    const std::string& s = o.scheme;
    auto run = [&](Options oo, Design dd) {
      Sim sim(std::move(oo), std::move(dd), cdf, models);
      if (s == "ring")
        sim.scheme(true, true, 1);
      else if (s == "switchml" || s == "panama-nocc")
        sim.scheme(false, false, 1);
      else if (s == "panama-0.88")
        sim.scheme(false, true, 0.88);
      else if (s == "panama-0.94")
        sim.scheme(false, true, 0.94);
      else
        sim.scheme(false, true, 1);
      return sim.run();
    };
    if (s == "switchml") {
      // The aggregation runs in the switch's own pipeline: as fast as all of its ports.
      d.ports = o.k;
      d.gbps = o.gbps;
    }
    if (s == "ideal") {
      // Separate clusters: the background alone, then the jobs alone.
      Options a = o, b = o;
      a.no_jobs = true;
      b.no_background = true;
      json ra = run(a, d);
      json rb = run(b, d);
      r = ra;
      r["jobs"] = rb["jobs"];
      r["accelerators"] = rb["accelerators"];
      r["links_jobs"] = rb["links"];
      r["complete"] = ra["complete"].get<bool>() && rb["complete"].get<bool>();
      r["sim_end_s"] = std::max(ra["sim_end_s"].get<double>(), rb["sim_end_s"].get<double>());
    } else {
      r = run(o, d);
    }
    r["summary"] = summary(r, o.short_bytes);
    r["config"] = {{"preset", o.preset},
                   {"scheme", o.scheme},
                   {"load", o.load},
                   {"seed", o.seed},
                   {"duration_s", o.duration},
                   {"k", o.k},
                   {"servers", o.k * o.k * o.k / 4},
                   {"gbps", o.gbps},
                   {"ecn_k", o.ecn_k},
                   {"queue_pkts", o.queue_pkts},
                   {"cdf", cdf_path},
                   {"trees", o.trees},
                   {"aggregation", o.aggregation},
                   {"model_scale", o.model_scale},
                   {"short_bytes", o.short_bytes}};
    std::cout << o.scheme << " load " << o.load << " seed " << o.seed << ": " << r["summary"].dump() << "\n";
    if (!out_dir.empty()) {
      const std::string path = out_dir + "/results.json", tmp = path + ".tmp";
      {
        std::ofstream f(tmp);
        f << r.dump(1) << "\n";
        if (!f) throw std::runtime_error("cannot write " + tmp);
      }
      if (std::rename(tmp.c_str(), path.c_str()) != 0) throw std::runtime_error("cannot write " + path);
    }
    return r["complete"].get<bool>() ? 0 : 3;
  } catch (const std::exception& e) {
    std::cerr << "panama-dcsim: " << e.what() << "\n";
    return 2;
  }
}
