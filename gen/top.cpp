// The datapath's parameters and the top (docs/rtl.md): the fixed blocks rtl/panama_port.v (one per
// port: receive, parser, bypass FIFO, contribution memory, queues, admission, transmit),
// rtl/panama_sched.v (rules 5-8 and the result builder) and rtl/panama_core.v (the register
// file, the ports and the scheduler, per-port streams packed) take their parameters from
// port_params(), sched_params() and core_params(); buffer_plan() sizes the buffers. The only
// Verilog written here is <prefix>_top: one named sPP/mPP port pair per port (names cannot be
// generated in Verilog) around the core's instance, whose ${NAME} tokens are filled with the
// configuration's numbers.
#include "top.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>
#include <stdexcept>
#include <utility>
#include <vector>

#include "regmap.h"
#include "fpadd.h"
#include "emit.h"
#include "regs_rtl.h"
#include "rtl_lib.h"

namespace panama {
namespace {

int bits_for(long max_value) { return std::max(1, clog2(max_value + 1)); }  // holds 0..max_value
int index_bits(long n) { return std::max(1, clog2(n)); }                    // holds 0..n-1

// Every occurrence of `key` in `s` replaced by `text` (the text-valued placeholders, such as
// ${CORE_PARAMS}, that subst() cannot fill).
void replace_all(std::string& s, const std::string& key, const std::string& text) {
  for (size_t at = 0; (at = s.find(key, at)) != std::string::npos; at += text.size()) s.replace(at, key.size(), text);
}

std::string subst(const std::string& text, const std::map<std::string, long>& vals) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '$' && i + 1 < text.size() && text[i + 1] == '{') {
      const size_t e = text.find('}', i);
      const std::string key = text.substr(i + 2, e - i - 2);
      auto it = vals.find(key);
      if (it == vals.end()) throw std::logic_error("top.cpp: no value for ${" + key + "}");
      out += std::to_string(it->second);
      i = e;
    } else {
      out += text[i];
    }
  }
  return out;
}

std::map<std::string, long> common_values(const Config& c) {
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

}  // namespace

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
  const auto v = common_values(c);
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
  const auto v = common_values(c);
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
  const auto v = common_values(c);
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

namespace {

// AXI4-Lite connected through by name (the register file in the core, the core in the top).
const char* const kAxilPassThrough =
    R"V(    .s_axil_awaddr(s_axil_awaddr), .s_axil_awprot(s_axil_awprot), .s_axil_awvalid(s_axil_awvalid),
    .s_axil_awready(s_axil_awready), .s_axil_wdata(s_axil_wdata), .s_axil_wstrb(s_axil_wstrb),
    .s_axil_wvalid(s_axil_wvalid), .s_axil_wready(s_axil_wready), .s_axil_bresp(s_axil_bresp),
    .s_axil_bvalid(s_axil_bvalid), .s_axil_bready(s_axil_bready), .s_axil_araddr(s_axil_araddr),
    .s_axil_arprot(s_axil_arprot), .s_axil_arvalid(s_axil_arvalid), .s_axil_arready(s_axil_arready),
    .s_axil_rdata(s_axil_rdata), .s_axil_rresp(s_axil_rresp), .s_axil_rvalid(s_axil_rvalid),
    .s_axil_rready(s_axil_rready))V";

// A `#(...)` override list, `.NAME(value)` comma-separated, in lines of at most 110 columns
// starting with `indent`.
std::string param_overrides(const std::vector<std::pair<std::string, long>>& params, const std::string& indent) {
  std::string out, line = indent;
  for (size_t i = 0; i < params.size(); ++i) {
    const std::string item =
        "." + params[i].first + "(" + std::to_string(params[i].second) + ")" + (i + 1 < params.size() ? "," : "");
    if (line.size() > indent.size() && line.size() + 1 + item.size() > 110) {
      out += line + "\n";
      line = indent;
    }
    line += (line.size() > indent.size() ? " " : "") + item;
  }
  return out + line;
}

// Ports both the core and the top end with: m_agg, then the AXI4-Lite slave.
void agg_and_axil_ports(std::ostringstream& o) {
  o << "  // Frames the accelerator builds, to the switch chip's internal port.\n"
    << "  output wire [${W}-1:0] m_agg_axis_tdata,\n"
    << "  output wire [${BB}-1:0] m_agg_axis_tkeep,\n"
    << "  output wire m_agg_axis_tvalid,\n"
    << "  output wire m_agg_axis_tlast,\n"
    << "  input  wire m_agg_axis_tready,\n"
    << "  // Configuration and counters (regmap.md).\n"
    << axil_slave_ports("${AW}-1") << "  input  wire s_axil_rready\n"
    << ");\n\n";
}

// The top's port list: per port the receive and transmit streams, then m_agg and AXI4-Lite.
void top_ports(std::ostringstream& o, const Config& c) {
  const int N = c.in.ports;
  char pp[16];
  o << "module " << c.module_name("top") << " (\n"
    << "  input  wire clk,\n"
    << "  input  wire rst,\n";
  for (int p = 0; p < N; ++p) {
    std::snprintf(pp, sizeof pp, "%02d", p);
    const std::string s = std::string("s") + pp + "_axis_", m = std::string("m") + pp + "_axis_";
    o << "  // Port " << p << ": from link " << p << ", and on to the switch chip's port " << p << ".\n"
      << "  input  wire [${W}-1:0] " << s << "tdata,\n"
      << "  input  wire [${BB}-1:0] " << s << "tkeep,\n"
      << "  input  wire " << s << "tvalid,\n"
      << "  input  wire " << s << "tlast,\n"
      << "  input  wire " << s << "tuser,\n"
      << "  output wire " << s << "tready,\n"
      << "  output wire [${W}-1:0] " << m << "tdata,\n"
      << "  output wire [${BB}-1:0] " << m << "tkeep,\n"
      << "  output wire " << m << "tvalid,\n"
      << "  output wire " << m << "tlast,\n"
      << "  output wire " << m << "tuser,\n"
      << "  input  wire " << m << "tready,\n";
  }
  agg_and_axil_ports(o);
}

// The top's per-port streams, packed for the core.
void top_streams(std::ostringstream& o, const Config& c) {
  const int N = c.in.ports;
  char pp[16];
  o << "  // Ports, bus bits and bytes.\n"
    << "  localparam N = ${N};\n  localparam W = ${W};\n  localparam BB = ${BB};\n\n";
  o << "  // The per-port streams, packed: port p at [p*W +: W], [p*BB +: BB] and bit p.\n"
    << "  wire [N*W-1:0] s_tdata, m_tdata;\n  wire [N*BB-1:0] s_tkeep, m_tkeep;\n"
    << "  wire [N-1:0] s_tvalid, s_tlast, s_tuser, s_tready, m_tvalid, m_tlast, m_tuser, m_tready;\n";
  for (int p = 0; p < N; ++p) {
    std::snprintf(pp, sizeof pp, "%02d", p);
    const std::string s = std::string("s") + pp + "_axis_", m = std::string("m") + pp + "_axis_";
    const std::string P = std::to_string(p);
    o << "  assign s_tdata[" << P << "*W +: W] = " << s << "tdata;\n"
      << "  assign s_tkeep[" << P << "*BB +: BB] = " << s << "tkeep;\n"
      << "  assign s_tvalid[" << P << "] = " << s << "tvalid;\n"
      << "  assign s_tlast[" << P << "] = " << s << "tlast;\n"
      << "  assign s_tuser[" << P << "] = " << s << "tuser;\n"
      << "  assign " << s << "tready = s_tready[" << P << "];\n"
      << "  assign " << m << "tdata = m_tdata[" << P << "*W +: W];\n"
      << "  assign " << m << "tkeep = m_tkeep[" << P << "*BB +: BB];\n"
      << "  assign " << m << "tvalid = m_tvalid[" << P << "];\n"
      << "  assign " << m << "tlast = m_tlast[" << P << "];\n"
      << "  assign " << m << "tuser = m_tuser[" << P << "];\n"
      << "  assign m_tready[" << P << "] = " << m << "tready;\n";
  }
}

// The core's instance in the top: every port by name; its context-table outputs unused.
const char* const kCoreInstanceHead = R"V(
  wire [15:0] unused_cfg_agg_port;
  wire [${C}-1:0] unused_cfg_ctx_enable, unused_cfg_ctx_upstream;
  wire [${C}*16-1:0] unused_cfg_ctx_jid;
  wire [${C}*8-1:0] unused_cfg_ctx_tid, unused_cfg_ctx_upstream_port;
  wire [${C}*${N}-1:0] unused_cfg_ctx_members;
  panama_core #(
${CORE_PARAMS}
  ) u_core (
    .clk(clk), .rst(rst),
    .s_tdata(s_tdata), .s_tkeep(s_tkeep), .s_tvalid(s_tvalid), .s_tlast(s_tlast), .s_tuser(s_tuser),
    .s_tready(s_tready),
    .m_tdata(m_tdata), .m_tkeep(m_tkeep), .m_tvalid(m_tvalid), .m_tlast(m_tlast), .m_tuser(m_tuser),
    .m_tready(m_tready),
    .m_agg_axis_tdata(m_agg_axis_tdata), .m_agg_axis_tkeep(m_agg_axis_tkeep),
    .m_agg_axis_tvalid(m_agg_axis_tvalid), .m_agg_axis_tlast(m_agg_axis_tlast),
    .m_agg_axis_tready(m_agg_axis_tready),
    .cfg_agg_port(unused_cfg_agg_port), .cfg_ctx_enable(unused_cfg_ctx_enable),
    .cfg_ctx_upstream(unused_cfg_ctx_upstream), .cfg_ctx_jid(unused_cfg_ctx_jid), .cfg_ctx_tid(unused_cfg_ctx_tid),
    .cfg_ctx_upstream_port(unused_cfg_ctx_upstream_port), .cfg_ctx_members(unused_cfg_ctx_members),
)V";

// The end of the core's instance.
const char* const kCoreInstanceTail = R"V();

endmodule
)V";

std::map<std::string, long> top_values(const Config& c) {
  auto v = common_values(c);
  v["AW"] = clog2(RegMap::from(c).size);
  return v;
}

std::string with_prefix_subst(const Config& c, std::string text) {
  return with_prefix(subst(text, top_values(c)), c.in.prefix);
}

}  // namespace

std::string emit_top(const Config& c) {
  std::ostringstream o;
  top_ports(o, c);
  top_streams(o, c);
  o << kCoreInstanceHead << kAxilPassThrough << kCoreInstanceTail;
  std::string text = o.str();
  replace_all(text, "${CORE_PARAMS}", param_overrides(core_params(c), "    "));
  return with_prefix_subst(c, text);
}

}  // namespace panama
