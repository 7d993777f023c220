// The datapath around the adder tree (docs/rtl.md):
//  <prefix>_port   one per port (the fixed block rtl/panama_port.v; port_params() sets its
//                  parameters): receive stage, parser, bypass FIFO with commit/rewind,
//                  contribution memory of linked beats, descriptor queues per context, admission (rule 2),
//                  transmit to mPP;
//  <prefix>_sched  the aggregation scheduler (rules 5-8: stale, build, count mismatch,
//                  incomplete, skip, timeout), the result builder and the m_agg FIFO: the fixed
//                  block rtl/panama_sched.v, whose parameters sched_params() sets;
//  <prefix>_top    ports + scheduler + register file.
// The module bodies are fixed Verilog text; ${NAME} tokens are replaced by the configuration's
// numbers (ANSI port widths cannot use localparams in Verilog-2005).
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

namespace panama {
namespace {

int bits_for(long max_value) { return std::max(1, clog2(max_value + 1)); }  // holds 0..max_value
int index_bits(long n) { return std::max(1, clog2(n)); }                    // holds 0..n-1

// Every occurrence of `key` in `s` replaced by `text` (the text-valued placeholders, such as
// ${PREFIX}, that subst() cannot fill).
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

// The core up to its register file's instance (regs_instance_head), fixed but for the ${} values.
const char* const kCoreBodyHead = R"V(
  // ---------------------------------------------------------------- register file
  wire [15:0] agg_port;
  wire [C-1:0] ctx_enable, ctx_enable_set, ctx_kill, ctx_upstream;
  wire [C*16-1:0] ctx_jid;
  wire [C*8-1:0] ctx_tid, ctx_upstream_port;
  wire [C*N-1:0] ctx_members;
  wire [${CW}-1:0] hdr_ctx;
  wire [159:0] ctx_hdr;
  wire [C*32-1:0] ctx_timeout, ctx_expected_vid;
  wire [N*16-1:0] port_count_inc;
  wire [C-1:0] ctx_completed_inc, ctx_dropped_inc;
  wire agg_tx_inc;
)V";

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

// The register file's instance up to its AXI4-Lite connections, with its parameters (regs_params).
std::string regs_instance_head(const Config& c) {
  return "  ${PREFIX}_regs #(\n" + param_overrides(regs_params(c), "    ") +
         "\n  ) u_regs (\n    .clk(clk), .rst(rst),\n";
}

// The rest of the core, after the register file's AXI4-Lite connections.
const char* const kCoreBodyTail = R"V(,
    .agg_port(agg_port), .ctx_enable(ctx_enable), .ctx_enable_set(ctx_enable_set), .ctx_kill(ctx_kill),
    .ctx_jid(ctx_jid), .ctx_tid(ctx_tid), .ctx_members(ctx_members), .ctx_upstream(ctx_upstream),
    .ctx_upstream_port(ctx_upstream_port), .hdr_ctx(hdr_ctx), .ctx_hdr(ctx_hdr), .ctx_timeout(ctx_timeout),
    .ctx_expected_vid(ctx_expected_vid), .port_count_inc(port_count_inc),
    .ctx_completed_inc(ctx_completed_inc), .ctx_dropped_inc(ctx_dropped_inc), .agg_tx_inc(agg_tx_inc));

  // ---------------------------------------------------------------- ports and scheduler
  wire [N*C-1:0] q_valid, q_pop, q_expired;
  wire q_hold, q_release;
  wire [${CW}-1:0] ev_ctx, to_ctx;
  wire [31:0] to_cycles;
  wire [31:0] ev_e;
  wire [N-1:0] ev_valid, ev_stale, ev_at_e, ev_fin, ev_ce, ev_expired;
  wire [N*32-1:0] ev_dist;
  wire [N*16-1:0] ev_count;
  wire [N*${BW}-1:0] ev_ptr, pop_first;
  wire [N*${NB}-1:0] ev_beats, pop_beats;
  wire [${CW}-1:0] meta_sel;
  wire [N*48-1:0] meta_eth_dst;
  wire [N*8-1:0] meta_tos;
  wire [N*32-1:0] meta_ip_dst;
  wire [N*16-1:0] meta_csum_part;
  wire [N*${BW}-1:0] rd_addr, rd_link;
  wire [N*W-1:0] rd_data;
  wire [N*4-1:0] drop_inc;
  wire [N*12-1:0] port_inc;
  genvar p;
  generate
    for (p = 0; p < N; p = p + 1) begin : g_port
      // The port's role in each context. "Is the upstream port" is a compare, registered here
      // (fields change only while a context is disabled, and enabling is a later write).
      wire [C-1:0] member;
      reg [C-1:0] uplink;
      genvar k;
      for (k = 0; k < C; k = k + 1) begin : g_role
        assign member[k] = ctx_members[k*N + p];
        always @(posedge clk) uplink[k] <= ctx_upstream[k] & (ctx_upstream_port[k*8 +: 8] == p);
      end
      ${PREFIX}_port #(
${PORT_PARAMS}
      ) u_port (
        .clk(clk), .rst(rst), .now(now_q), .agg_port(agg_port),
        .ctx_enable(ctx_enable), .ctx_jid(ctx_jid), .ctx_tid(ctx_tid), .ctx_member(member), .ctx_uplink(uplink),
        .to_ctx(to_ctx), .to_cycles(to_cycles),
        .s_axis_tdata(s_tdata[p*W +: W]), .s_axis_tkeep(s_tkeep[p*BB +: BB]), .s_axis_tvalid(s_tvalid[p]),
        .s_axis_tlast(s_tlast[p]), .s_axis_tuser(s_tuser[p]), .s_axis_tready(s_tready[p]),
        .m_axis_tdata(m_tdata[p*W +: W]), .m_axis_tkeep(m_tkeep[p*BB +: BB]), .m_axis_tvalid(m_tvalid[p]),
        .m_axis_tlast(m_tlast[p]), .m_axis_tuser(m_tuser[p]), .m_axis_tready(m_tready[p]),
        .q_valid(q_valid[p*C +: C]), .q_expired(q_expired[p*C +: C]),
        .ev_ctx(ev_ctx), .ev_e(ev_e), .ev_valid(ev_valid[p]), .ev_stale(ev_stale[p]), .ev_at_e(ev_at_e[p]),
        .ev_dist(ev_dist[p*32 +: 32]), .ev_count(ev_count[p*16 +: 16]), .ev_fin(ev_fin[p]), .ev_ce(ev_ce[p]),
        .ev_ptr(ev_ptr[p*${BW} +: ${BW}]), .ev_beats(ev_beats[p*${NB} +: ${NB}]), .ev_expired(ev_expired[p]),
        .q_pop(q_pop[p*C +: C]), .pop_first_in(pop_first[p*${BW} +: ${BW}]),
        .pop_beats_in(pop_beats[p*${NB} +: ${NB}]), .q_hold(q_hold), .q_release(q_release),
        .meta_sel(meta_sel), .meta_eth_dst(meta_eth_dst[p*48 +: 48]), .meta_tos(meta_tos[p*8 +: 8]),
        .meta_ip_dst(meta_ip_dst[p*32 +: 32]), .meta_csum_part(meta_csum_part[p*16 +: 16]),
        .rd_addr(rd_addr[p*${BW} +: ${BW}]), .rd_data(rd_data[p*W +: W]), .rd_link(rd_link[p*${BW} +: ${BW}]),
        .count_inc(port_inc[p*12 +: 12]));
      assign port_count_inc[p*16 +: 16] = {drop_inc[p*4 +: 4], port_inc[p*12 +: 12]};
    end
  endgenerate

  ${PREFIX}_sched #(
${SCHED_PARAMS}
  ) u_sched (
    .clk(clk), .rst(rst), .now(now_q),
    .ctx_enable_set(ctx_enable_set), .ctx_kill(ctx_kill), .ctx_members(ctx_members),
    .ctx_upstream(ctx_upstream), .hdr_ctx(hdr_ctx), .ctx_hdr(ctx_hdr), .ctx_timeout(ctx_timeout),
    .ctx_expected_vid(ctx_expected_vid), .to_ctx(to_ctx), .to_cycles(to_cycles),
    .q_valid(q_valid), .q_expired(q_expired), .ev_ctx(ev_ctx), .ev_e(ev_e), .ev_valid(ev_valid),
    .ev_stale(ev_stale), .ev_at_e(ev_at_e), .ev_dist(ev_dist), .ev_count(ev_count), .ev_fin(ev_fin), .ev_ce(ev_ce),
    .ev_ptr(ev_ptr), .ev_beats(ev_beats), .ev_expired(ev_expired), .q_pop(q_pop), .pop_first(pop_first),
    .pop_beats(pop_beats), .q_hold(q_hold), .q_release(q_release),
    .meta_sel(meta_sel), .meta_eth_dst(meta_eth_dst), .meta_tos(meta_tos), .meta_ip_dst(meta_ip_dst),
    .meta_csum_part(meta_csum_part),
    .rd_addr(rd_addr), .rd_data(rd_data), .rd_link(rd_link), .drop_inc(drop_inc),
    .ctx_completed_inc(ctx_completed_inc), .ctx_dropped_inc(ctx_dropped_inc), .agg_tx_inc(agg_tx_inc),
    .m_agg_axis_tdata(m_agg_axis_tdata), .m_agg_axis_tkeep(m_agg_axis_tkeep),
    .m_agg_axis_tvalid(m_agg_axis_tvalid), .m_agg_axis_tlast(m_agg_axis_tlast),
    .m_agg_axis_tready(m_agg_axis_tready));

endmodule
)V";

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

// The core's context-table outputs (kept in the top for switch functions beside it).
const char* const kCoreCfgOut = R"V(
  assign cfg_agg_port = agg_port;
  assign cfg_ctx_enable = ctx_enable;
  assign cfg_ctx_upstream = ctx_upstream;
  assign cfg_ctx_jid = ctx_jid;
  assign cfg_ctx_tid = ctx_tid;
  assign cfg_ctx_upstream_port = ctx_upstream_port;
  assign cfg_ctx_members = ctx_members;
)V";

// The core's instance in the top: every port by name; its context-table outputs unused.
const char* const kCoreInstanceHead = R"V(
  wire [15:0] unused_cfg_agg_port;
  wire [${C}-1:0] unused_cfg_ctx_enable, unused_cfg_ctx_upstream;
  wire [${C}*16-1:0] unused_cfg_ctx_jid;
  wire [${C}*8-1:0] unused_cfg_ctx_tid, unused_cfg_ctx_upstream_port;
  wire [${C}*${N}-1:0] unused_cfg_ctx_members;
  ${PREFIX}_core u_core (
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
  replace_all(text, "${PREFIX}", c.in.prefix);
  return subst(text, top_values(c));
}

}  // namespace

std::string emit_core(const Config& c) {
  std::ostringstream o;
  o << "module " << c.module_name("core") << " (\n"
    << "  input  wire clk,\n"
    << "  input  wire rst,\n"
    << "  // Port p's streams at [p*W +: W], [p*BB +: BB] and bit p (the top's sPP and mPP).\n"
    << "  input  wire [${N}*${W}-1:0] s_tdata,\n"
    << "  input  wire [${N}*${BB}-1:0] s_tkeep,\n"
    << "  input  wire [${N}-1:0] s_tvalid,\n"
    << "  input  wire [${N}-1:0] s_tlast,\n"
    << "  input  wire [${N}-1:0] s_tuser,\n"
    << "  output wire [${N}-1:0] s_tready,\n"
    << "  output wire [${N}*${W}-1:0] m_tdata,\n"
    << "  output wire [${N}*${BB}-1:0] m_tkeep,\n"
    << "  output wire [${N}-1:0] m_tvalid,\n"
    << "  output wire [${N}-1:0] m_tlast,\n"
    << "  output wire [${N}-1:0] m_tuser,\n"
    << "  input  wire [${N}-1:0] m_tready,\n"
    << "  // The context table, for switch functions beside the core (a standalone board shell).\n"
    << "  output wire [15:0] cfg_agg_port,\n"
    << "  output wire [${C}-1:0] cfg_ctx_enable,\n"
    << "  output wire [${C}-1:0] cfg_ctx_upstream,\n"
    << "  output wire [${C}*16-1:0] cfg_ctx_jid,\n"
    << "  output wire [${C}*8-1:0] cfg_ctx_tid,\n"
    << "  output wire [${C}*8-1:0] cfg_ctx_upstream_port,\n"
    << "  output wire [${C}*${N}-1:0] cfg_ctx_members,\n";
  agg_and_axil_ports(o);
  o << "  // Ports, contexts, bus bits and bytes.\n"
    << "  localparam N = ${N};\n  localparam C = ${C};\n  localparam W = ${W};\n  localparam BB = ${BB};\n\n";
  o << "  // Free-running cycle count: the age of queue heads for timeouts.\n"
    << "  reg [31:0] now_q;\n"
    << "  always @(posedge clk) now_q <= rst ? 32'd0 : now_q + 32'd1;\n";
  o << kCoreBodyHead << kCoreCfgOut << regs_instance_head(c) << kAxilPassThrough << kCoreBodyTail;
  std::string text = o.str();
  replace_all(text, "${PORT_PARAMS}", param_overrides(port_params(c), "        "));
  replace_all(text, "${SCHED_PARAMS}", param_overrides(sched_params(c), "    "));
  return with_prefix_subst(c, text);
}

std::string emit_top(const Config& c) {
  std::ostringstream o;
  top_ports(o, c);
  top_streams(o, c);
  o << kCoreInstanceHead << kAxilPassThrough << kCoreInstanceTail;
  return with_prefix_subst(c, o.str());
}

}  // namespace panama
