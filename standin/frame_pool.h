// What the switch stand-in's per-frame path is built from (docs/results/host.md "Benchmark"): frame
// buffers that are reused instead of allocated (FramePool), and a queue that keeps its storage
// (Ring), so that once warm a frame crosses the stand-in without an allocation.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include "wire.h"

namespace panama::host {

// Frame buffers given back after use and handed out again. A buffer from get() has its
// capacity and some old size and contents: the taker sets both (assign, resize), so a buffer
// of a frame's size is reused without the zero-fill of a fresh one. At most kMaxFree are kept.
class FramePool {
 public:
  static constexpr size_t kMaxFree = 16384;
  wire::Bytes get() {
    if (free_.empty()) return wire::Bytes();
    wire::Bytes b = std::move(free_.back());
    free_.pop_back();
    return b;
  }
  // A copy of f in a reused buffer.
  wire::Bytes copy(const wire::Bytes& f) {
    wire::Bytes b = get();
    b.assign(f.begin(), f.end());
    return b;
  }
  void put(wire::Bytes&& b) {
    if (b.capacity() == 0 || free_.size() >= kMaxFree) return;
    if (free_.capacity() == 0) free_.reserve(kMaxFree);
    free_.push_back(std::move(b));
  }
  size_t free_buffers() const { return free_.size(); }

 private:
  std::vector<wire::Bytes> free_;
};

// A FIFO on a circular buffer that only grows (doubling when full), never frees while in use:
// push and pop move elements, they allocate only when the queue is longer than ever before.
template <typename T>
class Ring {
 public:
  bool empty() const { return n_ == 0; }
  size_t size() const { return n_; }
  T& front() { return buf_[head_]; }
  const T& front() const { return buf_[head_]; }
  T& at(size_t i) { return buf_[(head_ + i) & (buf_.size() - 1)]; }
  void push_back(T x) {
    grow();
    buf_[(head_ + n_) & (buf_.size() - 1)] = std::move(x);
    ++n_;
  }
  void push_front(T x) {
    grow();
    head_ = (head_ + buf_.size() - 1) & (buf_.size() - 1);
    buf_[head_] = std::move(x);
    ++n_;
  }
  // Behind the front element (or at the front when empty).
  void insert_second(T x) {
    push_front(std::move(x));
    if (n_ > 1) std::swap(at(0), at(1));
  }
  // The front element, moved out (its slot left empty: no resource stays in the storage).
  T take_front() {
    T x = std::move(buf_[head_]);
    head_ = (head_ + 1) & (buf_.size() - 1);
    --n_;
    return x;
  }

 private:
  void grow() {
    if (n_ < buf_.size()) return;
    std::vector<T> b(buf_.empty() ? 16 : 2 * buf_.size());
    for (size_t i = 0; i < n_; ++i) std::swap(b[i], at(i));
    buf_.swap(b);
    head_ = 0;
  }
  std::vector<T> buf_;
  size_t head_ = 0, n_ = 0;
};

}  // namespace panama::host
