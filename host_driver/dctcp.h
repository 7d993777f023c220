// The congestion control of the aggregation's workers (docs/host.md "Congestion control"), in a
// library of its own (panama_cc: the standard library only), so that the worker (allreduce.h),
// the competing flow (flow.h) and the ns-3 simulation (sim/) compile the same implementation.
#pragma once

#include <cstdint>

namespace panama::host {

// Window and congestion-control parameters (per tree).
struct WindowParams {
  double init = 4;         // initial window, vectors in flight
  double min = 1;          // floor of the window
  double max = 8;          // ceiling: T * max frames must fit the accelerator's contribution
                           // pool (docs/host.md: 12 for the default 64 KiB, 8-context design)
  double gain = 1.0 / 16;  // DCTCP g
  bool cc = true;          // false: fixed window = init
};

// DCTCP-style window from the ECN marks of the results (docs/host.md). A "window" is the
// floor(cwnd) results that follow the previous update: F = marked / seen, alpha <- (1-g) alpha +
// g F; a marked window shrinks cwnd to cwnd (1 - alpha/2) (not below min), an unmarked one grows
// it by one (not above max). Deterministic in the sequence of marks, so workers that see the same
// results keep the same window.
class Dctcp {
 public:
  explicit Dctcp(const WindowParams& p);
  void on_result(bool ce);
  // A lost packet (flow.h's competing flow; the all-reduce itself repairs instead): the window
  // halves (not below min) and the current observation window starts again.
  void on_loss();
  double cwnd() const { return cwnd_; }
  double alpha() const { return alpha_; }
  int allowed() const;  // vectors that may be in flight now, >= 1
  uint64_t windows() const { return windows_; }

 private:
  WindowParams p_;
  double cwnd_, alpha_ = 0;
  int target_, seen_ = 0, marked_ = 0;
  uint64_t windows_ = 0;
};

}  // namespace panama::host
