#include "dctcp.h"

#include <algorithm>
#include <cmath>

namespace panama::host {

Dctcp::Dctcp(const WindowParams& p) : p_(p), cwnd_(p.init) { target_ = allowed(); }

int Dctcp::allowed() const { return std::max(1, static_cast<int>(std::floor(cwnd_))); }

void Dctcp::on_result(bool ce) {
  if (!p_.cc) return;
  ++seen_;
  if (ce) ++marked_;
  if (seen_ < target_) return;
  const double f = static_cast<double>(marked_) / seen_;
  alpha_ = (1 - p_.gain) * alpha_ + p_.gain * f;
  if (marked_ > 0)
    cwnd_ = std::max(p_.min, cwnd_ * (1 - alpha_ / 2));
  else
    cwnd_ = std::min(p_.max, cwnd_ + 1);
  ++windows_;
  seen_ = marked_ = 0;
  target_ = allowed();
}

void Dctcp::on_loss() {
  if (!p_.cc) return;
  cwnd_ = std::max(p_.min, cwnd_ / 2);
  seen_ = marked_ = 0;
  target_ = allowed();
}

}  // namespace panama::host
