// The datapath's parameters (planning, library panama_config): buffer_plan() sizes the per-port
// buffers, and port_params(), sched_params() and core_params() are the parameters of the fixed
// blocks rtl/panama_port.v, rtl/panama_sched.v and rtl/panama_core.v for a configuration. The
// emitters set them with #(...) and as the blocks' defaults (gen/emit/top.cpp, gen/emit/emit.cpp).
#include <algorithm>
#include <map>
#include <stdexcept>
#include <utility>
#include <vector>

#include "regs_rtl.h"
#include "top.h"

namespace panama {
namespace {

int bits_for(long max_value) { return std::max(1, clog2(max_value + 1)); }  // holds 0..max_value
int index_bits(long n) { return std::max(1, clog2(n)); }                    // holds 0..n-1

}  // namespace

std::map<std::string, long> datapath_values(const Config& c) {
  const BufferPlan b = buffer_plan(c);
  std::map<std::string, long> v;
  v["N"] = c.in.ports;
  v["C"] = c.in.contexts;
  v["CW"] = index_bits(c.in.contexts);
  v["W"] = c.bus_bits;
  v["BB"] = c.bus_bytes;
  v["ES"] = c.fmt.elem_bytes;
  v["BYP"] = b.byp_beats;
  v["BPW"] = index_bits(b.byp_beats);
  v["BCW"] = bits_for(b.byp_beats);
  v["SB"] = b.frame_beats;
  v["SBW"] = bits_for(b.frame_beats);
  v["CAPB"] = b.contrib_beats;
  v["UW"] = std::max(bits_for(b.contrib_beats), bits_for(b.frame_beats) + 1);
  v["T"] = b.mem_beats;
  v["BW"] = index_bits(b.mem_beats);
  v["RW"] = bits_for(b.mem_beats);
  v["D"] = b.descs;
  v["DW"] = index_bits(b.descs);
  v["DCW"] = bits_for(b.descs);
  v["SG"] = b.segs;
  v["SGW"] = index_bits(b.segs);
  v["FD"] = b.agg_fifo;
  v["FAW"] = index_bits(b.agg_fifo);
  v["FCW"] = bits_for(b.agg_fifo);
  v["L"] = c.addtree_latency;
  v["NB"] = bits_for((c.max_frame_bytes + c.bus_bytes - 1) / c.bus_bytes);  // beats of one frame
  v["PW"] = index_bits(c.in.ports);
  v["W1"] = c.bus_bits - 1;
  v["BB1"] = c.bus_bytes - 1;
  v["MAXE"] = c.max_elems;
  return v;
}

BufferPlan buffer_plan(const Config& c) {
  BufferPlan b;
  b.byp_beats = static_cast<int>(c.bypass_bytes / c.bus_bytes);
  b.frame_beats = (c.max_frame_bytes + c.bus_bytes - 1) / c.bus_bytes;
  b.contrib_beats = static_cast<int>(c.contribution_bytes / c.bus_bytes);
  // Admitted contributions never hold more than the contribution half (rule 9 accounting). The
  // frame being received is written into free beats before its admission; when the buffer is
  // within one frame of full, a frame that finds no free beat is refused (docs/rtl.md, "Buffer
  // depth") rather than one largest frame more of memory spent on it (power-of-two depths).
  b.mem_beats = b.contrib_beats;
  // A contribution is at least 64 bytes long.
  const int min_beats = (64 + c.bus_bytes - 1) / c.bus_bytes;
  b.descs = std::max(1, b.contrib_beats / min_beats);
  // Free segments are freed contributions, each at least 64 + ES bytes long (COUNT >= 1): at
  // most mem_beats / (their beats) of them wait at once.
  const int min_contrib_beats = (64 + c.fmt.elem_bytes + c.bus_bytes - 1) / c.bus_bytes;
  b.segs = b.mem_beats / min_contrib_beats + 1;
  // The whole frame plus the beats in flight behind the reservation: issue, read, tree, FIFO
  // and output registers.
  int need = b.frame_beats + c.addtree_latency + 6;
  b.agg_fifo = 4;
  while (b.agg_fifo < need) b.agg_fifo *= 2;
  return b;
}

std::vector<std::pair<std::string, long>> port_params(const Config& c) {
  // The sizes only: rtl/panama_port.v derives every width from them.
  const auto v = datapath_values(c);
  return {{"CONTEXTS", v.at("C")},
          {"DATA_W", v.at("W")},
          {"DESC_STAGES", c.desc_stages},
          {"ELEM_BYTES", v.at("ES")},
          {"MAX_ELEMS", v.at("MAXE")},
          {"BYP_BEATS", v.at("BYP")},
          {"FRAME_BEATS", v.at("SB")},
          {"CONTRIB_BEATS", v.at("CAPB")},
          {"MEM_BEATS", v.at("T")},
          {"DESCS", v.at("D")},
          {"SEGS", v.at("SG")}};
}

std::vector<std::pair<std::string, long>> sched_params(const Config& c) {
  const auto v = datapath_values(c);
  return {{"PORTS", v.at("N")},   {"CONTEXTS", v.at("C")}, {"DATA_W", v.at("W")},      {"ELEM_BYTES", v.at("ES")},
          {"ADDR_W", v.at("BW")}, {"BEAT_W", v.at("NB")},  {"FIFO_DEPTH", v.at("FD")}, {"TREE_LATENCY", v.at("L")}};
}

std::vector<std::pair<std::string, long>> core_params(const Config& c) {
  // The blocks' own parameter lists, so each value is computed in one place.
  std::map<std::string, long> port, sched, regs;
  for (const auto& [k, v] : port_params(c)) port[k] = v;
  for (const auto& [k, v] : sched_params(c)) sched[k] = v;
  for (const auto& [k, v] : regs_params(c)) regs[k] = v;
  // What rtl/panama_core.v derives instead of taking: check it agrees with the plan.
  const auto v = datapath_values(c);
  if (regs.at("BUS_BITS") != port.at("DATA_W") || sched.at("ADDR_W") != v.at("BW") || sched.at("BEAT_W") != v.at("SBW"))
    throw std::logic_error("top.cpp: rtl/panama_core.v derives a width the plan sets differently");
  return {{"PORTS", sched.at("PORTS")},
          {"CONTEXTS", port.at("CONTEXTS")},
          {"DATA_W", port.at("DATA_W")},
          {"ADDR_W", regs.at("ADDR_W")},
          {"DESC_STAGES", port.at("DESC_STAGES")},
          {"ELEM_BYTES", port.at("ELEM_BYTES")},
          {"MAX_ELEMS", port.at("MAX_ELEMS")},
          {"BYP_BEATS", port.at("BYP_BEATS")},
          {"FRAME_BEATS", port.at("FRAME_BEATS")},
          {"CONTRIB_BEATS", port.at("CONTRIB_BEATS")},
          {"MEM_BEATS", port.at("MEM_BEATS")},
          {"DESCS", port.at("DESCS")},
          {"SEGS", port.at("SEGS")},
          {"FIFO_DEPTH", sched.at("FIFO_DEPTH")},
          {"TREE_LATENCY", sched.at("TREE_LATENCY")},
          {"PEND_W", regs.at("PEND_W")},
          {"FORMAT", regs.at("FORMAT")},
          {"BUFFER_BYTES", regs.at("BUFFER_BYTES")}};
}

}  // namespace panama
