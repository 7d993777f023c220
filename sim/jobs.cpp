// Aggregation jobs: arrivals, placement on free servers, their trees and windows, iterations, and
// leaving (docs/sim.md "Workload").
#include "sim.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

namespace dcsim {

void Sim::job_arrival(int j) {
  queue_.push_back(j);
  try_place();
}

// n free servers as close together as possible: the fullest rack that still fits them, else the
// fullest pod that does (its emptiest racks first), else the whole cluster (emptiest pods and
// racks first). Empty when fewer than n servers are free. The servers are returned in increasing
// order (the tree planner walks them rack by rack).
std::vector<int> Sim::place(int n) const {
  const int half = tree_.half(), racks = tree_.edges(), pods = tree_.k, per_pod = half * half;
  std::vector<int> rack_free(racks, 0), pod_free(pods, 0);
  for (int h = 0; h < tree_.hosts(); ++h)
    if (!busy_[h]) {
      ++rack_free[h / half];
      ++pod_free[h / per_pod];
    }
  std::vector<int> out;
  if (o_.placement == "spread") {
    // One server per rack, the racks spread evenly over the cluster (rack floor(i racks / n), or
    // the next rack after it with a free server and none of this job's yet).
    std::vector<char> used(racks, 0);
    for (int i = 0; i < n && n <= racks; ++i)
      for (int m = 0; m < racks; ++m) {
        const int r = static_cast<int>((static_cast<int64_t>(i) * racks / n + m) % racks);
        if (used[r] || !rack_free[r]) continue;
        used[r] = 1;
        for (int h = r * half; h < (r + 1) * half; ++h)
          if (!busy_[h]) {
            out.push_back(h);
            break;
          }
        break;
      }
    if (static_cast<int>(out.size()) < n) out.clear();
    std::sort(out.begin(), out.end());
    return out;
  }
  auto take_rack = [&](int r) {
    for (int h = r * half; h < (r + 1) * half && static_cast<int>(out.size()) < n; ++h)
      if (!busy_[h]) out.push_back(h);
  };
  auto best_fit = [&](const std::vector<int>& fr) {
    int best = -1;
    for (int i = 0; i < static_cast<int>(fr.size()); ++i)
      if (fr[i] >= n && (best < 0 || fr[i] < fr[best])) best = i;
    return best;
  };
  auto racks_of_pod_by_free = [&](int p) {
    std::vector<int> rs(half);
    std::iota(rs.begin(), rs.end(), p * half);
    std::stable_sort(rs.begin(), rs.end(), [&](int a, int b) { return rack_free[a] > rack_free[b]; });
    return rs;
  };
  if (const int r = best_fit(rack_free); r >= 0) {
    take_rack(r);
  } else if (const int p = best_fit(pod_free); p >= 0) {
    for (int r2 : racks_of_pod_by_free(p)) take_rack(r2);
  } else if (std::accumulate(pod_free.begin(), pod_free.end(), 0) >= n) {
    std::vector<int> ps(pods);
    std::iota(ps.begin(), ps.end(), 0);
    std::stable_sort(ps.begin(), ps.end(), [&](int a, int b) { return pod_free[a] > pod_free[b]; });
    for (int p2 : ps)
      for (int r2 : racks_of_pod_by_free(p2)) take_rack(r2);
  }
  std::sort(out.begin(), out.end());
  return out;
}

void Sim::try_place() {
  while (!queue_.empty()) {
    if (paper() && Simulator::Now().GetSeconds() >= o_.duration) return;  // no job starts in the drain
    const int j = queue_.front();
    Job& job = jobs_[j];
    const auto hosts = place(static_cast<int>(job.workers.size()));
    if (hosts.empty()) return;  // FIFO: the head waits for servers, and the jobs behind it
    for (size_t w = 0; w < hosts.size(); ++w) job.workers[w].host = hosts[w];
    if (!setup_job(job)) {
      if (!paper()) throw std::runtime_error("job " + std::to_string(job.id) + ": no accelerator has a free context");
      return;  // waits for a job to leave and free contexts
    }
    for (int h : hosts) busy_[h] = 1;
    queue_.pop_front();
    job.placed = true;
    job.start = Simulator::Now().GetSeconds();
    start_iteration(j);
  }
}

bool Sim::setup_job(Job& job) {
  const int N = static_cast<int>(job.workers.size());
  if (ring_) {
    setup_ring(job);
    return true;
  }
  const uint32_t payload = design_.payload();
  const int cores = tree_.cores(), half = tree_.half();
  // Trees rooted at distinct cores, spread over jobs: tree i of job j prefers core
  // (i k/2 + j) mod cores (so a job's trees leave each pod through different aggregation
  // switches, and consecutive jobs start at different cores), else the next core after it whose
  // accelerators (every one of the tree's) have a free context.
  // --only-tree I: the job on the I-th of the trees it would have (the I-th distinct preferred
  // core, as if every context were free) alone.
  const int want = o_.only_tree >= 0 ? 1 : std::min(o_.trees, cores);
  int only_core = -1;
  if (o_.only_tree >= 0) {
    std::vector<int> seq;
    for (int i = 0; static_cast<int>(seq.size()) <= o_.only_tree; ++i) {
      int c = (i * half + job.id) % cores;
      while (std::find(seq.begin(), seq.end(), c) != seq.end()) c = (c + 1) % cores;
      seq.push_back(c);
    }
    only_core = seq.back();
  }
  std::vector<std::vector<TreeNode>> plans;
  std::vector<std::vector<int>> firsts, childs;
  for (int i = 0; i < want; ++i) {
    const int pref = only_core >= 0 ? only_core : (i * half + job.id) % cores;
    for (int m = 0; m < cores; ++m) {
      const int c = (pref + m) % cores;
      if (std::find(job.roots.begin(), job.roots.end(), c) != job.roots.end()) continue;
      std::vector<int> first, child;
      auto plan = plan_tree(job, c, first, child);
      if (std::any_of(plan.begin(), plan.end(),
                      [&](const TreeNode& n) { return ctx_used_[n.acc] >= design_.contexts; }))
        continue;
      for (const auto& n : plan) ++ctx_used_[n.acc];
      job.roots.push_back(c);
      plans.push_back(std::move(plan));
      firsts.push_back(std::move(first));
      childs.push_back(std::move(child));
      break;
    }
  }
  if (job.roots.empty()) return false;
  const int T = static_cast<int>(job.roots.size());
  const uint64_t vectors = static_cast<uint64_t>(std::ceil(job.bytes / payload));
  const double frame_bytes = payload + kHdrBytes + 8 + 20;
  const double wmax =
      std::max(1.0, std::min<double>(o_.window_cap, std::floor(design_.buffer_bytes / 2 / frame_bytes / T)));
  // No congestion control: a fixed window as large as allowed.
  const double winit = cc_ ? std::min(4.0, wmax) : wmax;
  const int j = job.id;
  for (int w = 0; w < N; ++w) {
    Worker& wk = job.workers[w];
    wk.panama = CreateObjectWithAttributes<PanamaWorkerApp>(
        "JobId", UintegerValue(job.id), "Origin", UintegerValue(w), "Trees", UintegerValue(T), "Vectors",
        UintegerValue(vectors), "PayloadBytes", UintegerValue(payload), "WindowCap", DoubleValue(wmax), "WindowInit",
        DoubleValue(winit), "CongestionControl", BooleanValue(cc_));
    wk.panama->SetAttribute("RepairTimeout", DoubleValue(o_.rto_ms / 1e3));
    wk.panama->SetAttribute("McastEcnRoot", BooleanValue(o_.mcast_ecn == "root"));
    wk.panama->SetResultCallback([this, j](bool ce, bool unsent) {
      jobs_[j].unsent += unsent;
      ++jobs_[j].results;
      jobs_[j].results_ce += ce;
    });
    wk.panama->SetUndecodableCallback([this] { ++undecodable_; });
    wk.panama->SetDoneCallback([this, j] { worker_finished(j); });
    wk.panama->SetNode(hosts_.Get(wk.host));
    try {
      wk.panama->Start();
    } catch (const std::runtime_error& e) {
      throw std::runtime_error("server " + std::to_string(wk.host) + ": " + e.what());
    }
  }
  for (int t = 0; t < T; ++t) setup_tree(job, t, plans[t], firsts[t], childs[t]);
  return true;
}

// A job that has run its iterations frees its servers and its accelerators' contexts.
void Sim::leave(int j) {
  Job& job = jobs_[j];
  job.left = true;
  job.end = Simulator::Now().GetSeconds();
  for (const auto& [ai, key] : job.ctxs) {
    --ctx_used_[ai];
    auto it = acc_[ai].ctx.find(key);
    if (it == acc_[ai].ctx.end()) continue;
    acc_[ai].open_frames -= it->second.open.size();
    acc_[ai].ctx.erase(it);
  }
  for (auto& wk : job.workers) {
    busy_[wk.host] = 0;
    if (wk.panama) wk.panama->Leave();
    if (wk.ring) wk.ring->Leave();  // kept: this may run inside its own callback
  }
  try_place();
  // --stop-after-jobs: the run ends when every job has left (flows still open are cut, listed
  // with fct_s null).
  if (o_.stop_after_jobs && !stopped_ && std::all_of(jobs_.begin(), jobs_.end(), [](const Job& x) { return x.left; })) {
    stopped_ = true;
    sim_end_ = Simulator::Now().GetSeconds();
    Simulator::Stop();
  }
}

void Sim::start_iteration(int j) {
  Job& job = jobs_[j];
  job.iter_start = Simulator::Now().GetSeconds();
  job.iter_start_s.push_back(job.iter_start);
  job.done_workers = 0;
  const size_t iter = job.iter_s.size();
  for (int w = 0; w < static_cast<int>(job.workers.size()); ++w) {
    Worker& wk = job.workers[w];
    if (wk.ring) wk.ring->BeginIteration(iter);
    if (wk.panama) wk.panama->BeginIteration(iter);
    const double slow = w == 0 ? o_.slow_worker_s : 0;
    Simulator::Schedule(Seconds(job.compute_s + slow), &Sim::compute_done, this, j, w, iter);
  }
}

// Worker w has its gradient of iteration `iter` (a straggler's may come after the iteration
// ended without it: then nothing is sent).
void Sim::compute_done(int j, int w, size_t iter) {
  Job& job = jobs_[j];
  if (job.left || job.iter_s.size() != iter) return;
  Worker& wk = job.workers[w];
  if (wk.ring) wk.ring->GradientReady();
  if (wk.panama) wk.panama->GradientReady();
}

void Sim::worker_finished(int j) {
  Job& job = jobs_[j];
  if (++job.done_workers == static_cast<int>(job.workers.size())) worker_done(j);
}

void Sim::worker_done(int j) {
  Job& job = jobs_[j];
  const double now = Simulator::Now().GetSeconds();
  job.iter_s.push_back(now - job.iter_start);
  const int done = static_cast<int>(job.iter_s.size());
  bool more;
  if (paper())
    more = done < o_.iterations && now < o_.duration;
  else
    more = o_.iterations > 0 ? done < o_.iterations : now < o_.duration;
  if (more) {
    start_iteration(j);
  } else {
    leave(j);
    finish_check();
  }
}

}  // namespace dcsim
