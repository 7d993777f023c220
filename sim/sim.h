// panama-dcsim's simulation: the Sim orchestrator and the state of flows, workers and jobs. Its
// methods live by subject: topology.cpp (the fat tree and its links), flows.cpp (background TCP),
// jobs.cpp (jobs and iterations), innet.cpp (PANAMA / SwitchML* trees; the workers are
// PanamaWorkerApp, panama_app.cpp), accel.cpp (the accelerators), ring.cpp (ring all-reduce; its
// workers are RingWorkerApp, ring_app.cpp), sim.cpp (running) and results.cpp.
#pragma once

#include "accel.h"
#include "fattree_routing.h"
#include "panama_app.h"
#include "ring_app.h"
#include "workload.h"

#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace dcsim {

using json = nlohmann::json;

struct FlowRec {
  int src = 0, dst = 0;
  uint64_t size = 0, sent = 0, recv = 0;
  uint16_t port = 0;
  int cdf = 0;
  bool warm = false;        // --warm-start: arrived before t = 0
  uint64_t class_size = 0;  // the size that makes it short or long (a warm flow's drawn size)
  double start = 0, fct = -1;
  Ptr<Socket> tx, listen;
};

struct Worker {
  int host = 0;
  Ptr<PanamaWorkerApp> panama;  // in-network schemes: the worker application on this server
  Ptr<RingWorkerApp> ring;      // ring: the worker application on this server
};

struct Job {
  int id = 0;
  std::string model;
  double bytes = 0, compute_s = 0;
  std::vector<Worker> workers;
  std::vector<int> roots;  // core (accelerator) per tree
  double arrival = 0, start = -1, end = -1;
  bool placed = false, left = false;
  double iter_start = 0;
  std::vector<double> iter_s, iter_start_s;
  uint64_t results = 0, results_ce = 0;  // results taken by the workers, and those with CE
  uint64_t late = 0;                     // frames of this job that reached an accelerator after it released the vector
  uint64_t unsent = 0;                   // results a worker took for a vector it had not sent (its part was ignored)
  std::vector<std::pair<int, uint64_t>> ctxs;  // (accelerator, key) of every context it holds
  int done_workers = 0;
  uint64_t chunk = 0;  // ring
};

class Sim {
 public:
  Sim(Options o, Design d, Workload w, std::vector<Model> models)
      : o_(std::move(o)), design_(std::move(d)), wl_(std::move(w)), models_(std::move(models)) {}
  void scheme(bool ring, bool cc, double quorum) {
    ring_ = ring;
    panama_like_ = !ring;
    cc_ = cc;
    quorum_frac_ = quorum;
  }
  json run();

 private:
  void build();
  void link(int a, int b, double gbps, const std::string& layer, ps::Port* pa, ps::Port* pb);
  void start_flow(int id);
  void flow_fill(Ptr<Socket> s, uint32_t);
  void flow_accept(Ptr<Socket> s, const Address&);
  void flow_recv(Ptr<Socket> s);
  void job_arrival(int j);
  void try_place();
  std::vector<int> place(int n) const;
  bool setup_job(Job& job);
  void leave(int j);
  void setup_ring(Job& job);
  void setup_accels();
  void start_iteration(int j);
  void compute_done(int j, int w, size_t iter);
  void host_tx(Ptr<const Packet> p, Ptr<Ipv4>, uint32_t);
  void snapshot(int which);
  void accel_recv(Ptr<Socket> s);
  void worker_done(int j);
  void repair_tick();
  void worker_finished(int j);  // one more worker has the iteration's result
  void progress_tick();
  bool all_done() const;
  json results();
  void series_setup();  // series.cpp: the --series-ms time series
  void series_tx(Ptr<const Packet> p, Ptr<Ipv4>, uint32_t);
  json series_json() const;
  std::vector<double> series_[2];  // per bin, payload bytes: background, training

  Options o_;
  bool panama_like_ = true, ring_ = false;
  double quorum_frac_ = 1;
  bool cc_ = true;
  Design design_;
  Workload wl_;
  std::vector<Model> models_;
  ps::FatTree tree_;
  NodeContainer hosts_, edges_, aggs_, cores_, accels_;
  std::vector<ps::Node> rnodes_;  // routing description per node id
  std::vector<Ipv4Address> host_addr_;
  std::vector<Accel> acc_;
  std::vector<Ptr<QueueDisc>> qdiscs_;
  std::vector<std::pair<std::string, Ptr<NetDevice>>> link_devs_;  // layer, transmitting device
  std::vector<FlowRec> flows_;
  std::vector<int> flow_id_;
  size_t flows_scheduled_ = 0;  // per record: its index in wl_.flows
  std::unordered_map<Socket*, int> flow_of_sock_;
  std::map<std::pair<int, uint16_t>, int> flow_of_port_;
  std::vector<uint16_t> next_port_;
  std::vector<Job> jobs_;
  std::unordered_map<Socket*, int> accel_of_sock_;
  std::vector<char> busy_;     // per server: taken by a job
  std::deque<int> queue_;      // jobs waiting for servers (FIFO)
  std::vector<int> ctx_used_;  // per accelerator: contexts taken
  std::vector<Ptr<ps::FatTreeRouting>> routing_;
  uint64_t stale_ = 0;  // frames of a job that has left
  // Offered payload bytes on the server uplinks in the measurement window (host_tx).
  double tx_background_ = 0, tx_training_ = 0;
  std::map<std::string, uint64_t> snap_[2];  // per layer, queue-disc bytes at warmup and --duration
  bool paper() const { return o_.workload == "paper"; }
  bool window(double t) const { return t >= o_.warmup && t < o_.duration; }
  double end_time_ = 0;
  int flows_open_ = 0;
  std::chrono::steady_clock::time_point wall0_;
  double last_print_ = -1;
  uint64_t undecodable_ = 0;
  void flow_connected(Ptr<Socket> s);
  void flow_failed(Ptr<Socket> s);
  void accel_send(int ai, uint64_t key, uint64_t vid, bool ce, int only);
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
  void accel_hold(int ai, uint64_t key, uint64_t vid);
  void accel_emit(int ai, uint64_t key);
  void accel_release(int ai, uint64_t key, uint64_t vid, bool ce, uint16_t nw);
  void accel_up(int ai, const AccelCtx& c, Hdr h, bool ce);
  uint32_t host_base_ = 0;
  uint32_t links_ = 0;
  std::vector<Ptr<NetDevice>> devs_;
  std::map<std::string, std::vector<Ptr<QueueDisc>>> layer_q_;
  std::map<std::string, double> layer_bps_;
  double sim_end_ = 0;
  bool stopped_ = false;
};

}  // namespace dcsim
