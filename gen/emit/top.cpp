// The top (docs/rtl.md): the only Verilog written here is <prefix>_top, one named sPP/mPP port
// pair per port (names cannot be generated in Verilog) around the instance of the fixed block
// rtl/panama_core.v, whose ${NAME} tokens (fill_template) are filled with the configuration's
// numbers (datapath_values, gen/config/params.cpp) and the core's parameter overrides (core_params).
#include <cstdio>
#include <map>
#include <sstream>
#include <stdexcept>
#include <utility>
#include <vector>

#include "emit.h"
#include "regmap.h"
#include "rtl_lib.h"
#include "top.h"

namespace panama {

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

}  // namespace

std::string emit_top(const Config& c) {
  std::ostringstream o;
  top_ports(o, c);
  top_streams(o, c);
  o << kCoreInstanceHead << kAxilPassThrough << kCoreInstanceTail;
  auto values = datapath_values(c);
  values["AW"] = clog2(RegMap::from(c).size);
  const std::string core_params_text = param_overrides(core_params(c), "    ");
  const std::string text = fill_template(o.str(), "$", [&](char, const std::string& name) {
    if (name == "CORE_PARAMS") return core_params_text;
    const auto it = values.find(name);
    if (it == values.end()) throw std::logic_error("top.cpp: no value for ${" + name + "}");
    return std::to_string(it->second);
  });
  return with_prefix(text, c.in.prefix);
}

}  // namespace panama
