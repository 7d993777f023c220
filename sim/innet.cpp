// The in-network schemes (PANAMA, SwitchML*): aggregation trees, and the repair tick over their
// workers (PanamaWorkerApp, panama_app.cpp).
#include "sim.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace dcsim {

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
  // The quorum is the job's: Q = ceil(q N) workers. The root releases a vector once its frames
  // sum Q workers' contributions (or every child is in); an accelerator below it waits for all
  // of its children, but once at most N - Q of its subtree's workers are missing it waits only
  // --quorum-hold-us more (accel_hold), so one straggler anywhere cannot hold the job.
  const int Q = std::max(1, static_cast<int>(std::ceil(quorum_frac_ * N - 1e-9))), M = N - Q;
  std::map<int, int> sub;  // workers below each accelerator of the plan (children precede parents)
  for (const auto& n : plan) {
    if (!sub.count(n.acc)) sub[n.acc] = n.children;  // a leaf: its children are workers
    if (n.parent >= 0) sub[n.parent] += sub[n.acc];
  }
  for (const auto& n : plan) {
    AccelCtx& c = acc_[n.acc].ctx[key];
    job.ctxs.emplace_back(n.acc, key);
    c.workers = n.children;
    c.need = n.parent < 0 ? Q : std::max(1, sub[n.acc] - M);
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
    job.workers[w].panama->SetTreeEntry(static_cast<uint32_t>(t), accel_addr(first[w]),
                                        static_cast<uint16_t>(child[w]));
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

void Sim::repair_tick() {
  for (auto& job : jobs_) {
    if (!job.placed || job.left || ring_) continue;
    for (auto& wk : job.workers) wk.panama->Repair();
  }
  if (!stopped_) Simulator::Schedule(Seconds(o_.rto_ms / 1e3), &Sim::repair_tick, this);
}

}  // namespace dcsim
