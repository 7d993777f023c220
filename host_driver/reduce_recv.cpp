// ReduceCall: frames received, the end of the call, debug output (reduce_call.h).
#include "reduce_call.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>

namespace panama::host::detail {

void ReduceCall::take_frame(const uint8_t* rx, size_t len) {
  if (len < wire::kHeaderBytes) {
    ++stats_.ignored;
    return;
  }
  const wire::AggHeader h = wire::parse_header(rx);
  const size_t t = static_cast<size_t>(h.tid) - static_cast<size_t>(p_.first_tid);  // wraps when below
  if (h.ver != 1 || !h.result() || h.jid != p_.jid || t >= T || tr_[t].n == 0) {
    ++stats_.ignored;
    return;
  }
  TreeState& s = tr_[t];
  const uint32_t i = wire::vid_distance(h.vid, next_vid_[t]);
  // i >= s.sent: an earlier call's result, or one for a slot we have not sent: not ours.
  // A skipped slot: this worker sent nothing there, so no sum can be ours.
  if (i >= s.sent || s.slots[i].skipped) {
    // The sum of the flush frames (flush_tree), of this call or of the previous one: expected,
    // and of no use.
    if (repair &&
        ((i >= s.span - s.copies && i < s.span) || (next_vid_[t] - h.vid >= 1 && next_vid_[t] - h.vid <= s.copies)))
      return;
    // The previous call's range: a result that came after that call ended (typically the
    // second copy of the status that showed every vector held).
    const uint32_t back = next_vid_[t] - h.vid;
    if (i >= s.sent && back >= 1 && back <= prev_span_[t])
      ++stats_.leftovers;
    else
      ++stats_.ignored;
    return;
  }
  Slot& sl = s.slots[i];
  size_t want = C;
  if (sl.kind == Kind::main)
    want = elems_of(sl.index * T + t);
  else if (sl.kind == Kind::status)
    want = std::min(s.vp, s.n - sl.index * s.vp) * G;
  if (h.count != want || len != wire::kHeaderBytes + es * h.count) {
    ++stats_.ignored;
    return;
  }
  const uint8_t* pay = rx + wire::kHeaderBytes;
  if (i + 1 > s.acked) {
    s.acked = i + 1;
    s.probes = 0;
  }
  const bool late = i < s.settled;
  if (late && !sl.lost) {
    ++stats_.duplicates;
    return;
  }
  // Any first result is progress for the call timeout (results still come); an in-order one
  // also for its tree.
  const auto now = now_;
  last_progress_ = s.last_heard = now;
  s.silent = 0;
  s.frames_at_result = s.frames_before[s.sent];
  ++s.results;
  if (sl.kind == Kind::main) s.heard_main = true;  // the peers are known to send the main phase
  // A late result while this tree waits at a status part: a slot before it completed just now,
  // so peers are still sending the slots before the status (they are behind, not gone). The
  // status wait starts again: giving up the status now would put this worker a round ahead of
  // them, and on two levels at 10 % loss workers then leapfrogged one another round after round
  // (each waiting at a status the others had already left) until the call timed out.
  // Only a result of the round just before the status (or of the main phase before the first
  // one) says so: a late first result of an older slot (a peer's re-send answered from a cache,
  // passed down to every member of its leaf) kept resetting the wait, and at 15 % loss on two
  // levels a worker then sat at one status for the whole stall bound.
  if (late && s.settled < s.sent && s.slots[s.settled].kind == Kind::status &&
      (sl.kind == Kind::main ? s.slots[s.settled].round == 0 : sl.round + 1 >= s.slots[s.settled].round))
    s.last_progress = now;
  if (!late) {
    if (i > s.settled) settle_lost(t, i, h.vid);
    s.settled = i + 1;
    settle_skipped(t);
    s.last_progress = s.last_result = now;
    const bool ce = wire::ecn(rx) == wire::kEcnCe;
    if (ce) ++stats_.results_ce, stats_.note(stats_.ce_vids, t, h.vid);
    cc_[t].on_result(ce);
  }
  // A late result (given up on by the status wait, or overtaken by reordering) is as good as
  // an in-order one: its slot's meaning is fixed. Like every first result of a main or repair
  // slot, it is a round-trip sample: a switch slower than the status wait makes every result
  // late, and the wait must grow.
  if (sl.sent_at != Clock::time_point{})
    wait_.sample(std::chrono::duration<double, std::milli>(now - sl.sent_at).count());
  sl.lost = false;
  ++stats_.results;
  if (sl.kind == Kind::main) {
    take_vector(sl.index * T + t, pay, h.count);
  } else if (sl.kind == Kind::status) {
    const Part pt = s.part[static_cast<size_t>(sl.round)][sl.index];
    if (pt != Part::known) decode_part(t, sl.round, sl.index, pay, h.count);
  } else {
    take_repair(t, sl, pay);
  }
}

size_t ReduceCall::missing() const {
  size_t m = 0;
  for (size_t k = 0; k < K; ++k) m += !have_[k];
  return m;
}

// PANAMA_HOST_DEBUG: what fills tree t's window when the worker leaves a round: unacknowledged
// frames by kind, and blind ones (repair frames sent without the part's status).
void ReduceCall::debug_leave_round(size_t t) const {
  const TreeState& s = tr_[t];
  size_t st = 0, rep = 0, blind = 0, mainf = 0;
  for (size_t i = std::min(s.acked, s.sent); i < s.sent; ++i) {
    const Slot& z = s.slots[i];
    if (z.skipped) continue;
    if (z.kind == Kind::status) {
      ++st;
    } else if (z.kind == Kind::main) {
      ++mainf;
    } else {
      ++rep;
      if (s.part[static_cast<size_t>(z.round)][z.index / s.vp] != Part::known) ++blind;
    }
  }
  const Slot& nx = s.slots[std::min(s.sent, s.slots.size() - 1)];
  std::fprintf(stderr,
               "rank %d tree %zu leaves round %d at index %zu: inflight %zu (status %zu, repair %zu of which "
               "blind %zu, main %zu) allowed %d silent %zu acked %zu settled %zu sent %zu at %lld\n",
               p_.rank, t, nx.round, nx.index, s.inflight(), st, rep, blind, mainf, cc_[t].allowed(), s.silent, s.acked,
               s.settled, s.sent, debug_ms());
}

void ReduceCall::fail_timeout(size_t miss) {
  // The tree that is furthest behind.
  size_t t = 0;
  for (size_t u = 0; u < T; ++u)
    if (!tr_[u].done && (tr_[t].done || tr_[u].settled < tr_[t].settled)) t = u;
  if (std::getenv("PANAMA_HOST_DEBUG")) debug_trees();
  throw AllReduceError("timeout: no result for job " + std::to_string(p_.jid) + " tree " + std::to_string(t) + " VID " +
                       std::to_string(next_vid_[t] + tr_[t].settled) + " within " + std::to_string(timeout().count()) +
                       " ms (" + std::to_string(miss) + " of " + std::to_string(K) +
                       " vectors missing): a peer is not contributing or the path is down");
}

void ReduceCall::fail_stalled(size_t miss) {
  if (std::getenv("PANAMA_HOST_DEBUG")) debug_missing(), debug_trees();
  close_range();
  const auto secs = std::chrono::duration_cast<std::chrono::milliseconds>(stall()).count() / 1000.0;
  char b[64];
  std::snprintf(b, sizeof b, "%.1f", secs);
  throw AllReduceError("loss repair failed: " + std::to_string(miss) + " of " + std::to_string(K) +
                       " vectors still missing and none completed in the last " + b +
                       " s (a peer stopped answering or the loss is too heavy)");
}

// When this worker leaves tree t (done, by a status or by silence, or at the call's end), it
// sends `copies` one-element frames of -0.0 into the last VIDs of the tree's reserved range,
// which no slot of a call ever reaches (the region holds 2^24 VIDs per call; a tree that used
// its range up to there sends none). Every worker sends them when it leaves, so the
// accelerator sees a head from every member at the end of the range, drops as incomplete every
// frame still queued before it, and sums the flush (its result is dropped here). Without them,
// frames a worker sent into slots its peers had skipped stayed queued after the tree ended
// (the peers send nothing more on it), held the contribution buffer's shared pool of that
// port for the rest of the call, and the other tree's frames overflowed there round after
// round: at 10 % loss, every worker missed the same vector for 25.6 s and the call failed.
void ReduceCall::flush_tree(size_t t) {
  TreeState& s = tr_[t];
  if (s.flushed || !repair || s.n == 0) return;
  s.flushed = true;
  if (s.span < s.copies || s.span - s.copies < s.sent) return;
  codec_.put(flush_pay_, 0, neg0_);
  spec_.hdr.tid = static_cast<uint8_t>(p_.first_tid + static_cast<int>(t));
  spec_.hdr.flags = 0;
  pay_ = flush_pay_;
  pay_len_ = es;
  for (size_t i = s.span - s.copies; i < s.span; ++i) {
    spec_.hdr.vid = next_vid_[t] + static_cast<uint32_t>(i);
    spec_.hdr.cookie = cookie_hi_ | (uint64_t{3} << 30) | i;
    spec_.ip_id = static_cast<uint16_t>(stats_.vectors_sent + stats_.resent);
    emit();
  }
}

// The call's range is used up whatever happened: the next call starts after it.
void ReduceCall::close_range() {
  for (size_t t = 0; t < T; ++t) flush_tree(t);
  t_.flush();  // whatever the backend still holds leaves now, not at the next call
  for (size_t t = 0; t < T; ++t) {
    prev_span_[t] = static_cast<uint32_t>(tr_[t].span);
    next_vid_[t] += prev_span_[t];
  }
}

// A vector still missing fails the call.
void ReduceCall::finish() {
  close_range();
  const size_t miss = missing();
  if (miss == 0) return;
  if (std::getenv("PANAMA_HOST_DEBUG")) debug_missing();
  throw AllReduceError("loss repair failed: " + std::to_string(miss) + " of " + std::to_string(K) +
                       " vectors still missing after all " + std::to_string(R) +
                       " reserved repair rounds (a peer stopped answering or the loss is too heavy)");
}

static long long ms_since(Clock::time_point t) {
  return static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t).count());
}

// PANAMA_HOST_DEBUG: every tree's progress, when the call times out.
void ReduceCall::debug_trees() const {
  std::fprintf(
      stderr, "rank %d gives up at t=%lld ms\n", p_.rank,
      static_cast<long long>(
          std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now().time_since_epoch()).count() % 1000000));
  for (size_t u = 0; u < T; ++u) {
    const TreeState& z = tr_[u];
    const Slot* nx = z.sent < z.slots.size() ? &z.slots[z.sent] : nullptr;
    std::fprintf(stderr,
                 "rank %d tree %zu: n %zu sent %zu settled %zu acked %zu inflight %zu silent %zu held %zu done "
                 "%d next kind %d round %d index %zu cwnd %d give_ups %zu since_progress %lld ms since_result %lld ms "
                 "since_call_progress %lld ms\n",
                 p_.rank, u, z.n, z.sent, z.settled, z.acked, z.inflight(), z.silent, z.held, z.done,
                 nx ? static_cast<int>(nx->kind) : -1, nx ? nx->round : -1, nx ? nx->index : 0, cc_[u].allowed(),
                 z.give_ups, ms_since(z.last_progress), ms_since(z.last_result), ms_since(last_progress_));
  }
}

// PANAMA_HOST_DEBUG: the repair history of every vector still missing at the end.
void ReduceCall::debug_missing() const {
  for (size_t k = 0; k < K; ++k) {
    if (have_[k]) continue;
    const size_t t = k % T, j = k / T;
    const TreeState& z = tr_[t];
    std::fprintf(stderr, "rank %d missing k %zu tree %zu j %zu part %zu:", p_.rank, k, t, j, j / z.vp);
    for (int r = 0; r < static_cast<int>(z.rounds); ++r) {
      const size_t pos = z.n + static_cast<size_t>(r) * (z.ns * z.copies + z.n) + z.ns * z.copies + j;
      std::fprintf(stderr, " r%d[part %d plan %d slot sent %d skipped %d lost %d]", r,
                   static_cast<int>(z.part[static_cast<size_t>(r)][j / z.vp]),
                   z.plan[static_cast<size_t>(r)].empty() ? -9 : z.plan[static_cast<size_t>(r)][j], pos < z.sent,
                   z.slots[pos].skipped, z.slots[pos].lost);
    }
    std::fprintf(stderr, "\n");
  }
}

}  // namespace panama::host::detail
