// Aggregation jobs: placing them, their trees and windows, and their iterations.
#include "sim.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

namespace dcsim {

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

}  // namespace dcsim
