// SPDX-License-Identifier: MIT
// panama_mgmt_eth: management over Ethernet around the request engine (docs/mgmt.md, "Framing").
// Sits in the core clock domain between the ports and the core:
//   receive:  per port, panama_mgmt_match diverts management requests (Ethernet II to MAC, IPv4
//             IHL 5 unfragmented, UDP to IP:UDP_PORT) away from the core; every other frame
//             reaches the core unchanged. One collector takes a whole request (from any port:
//             the engine counts those from non-management ports), checks its lengths, and hands
//             the UDP payload and the receiving port to panama_mgmt. A request arriving while
//             the collector is busy is dropped and counted (cnt_rx_busy).
//   transmit: the engine's response is framed (addresses and ports swapped, IPv4 header checksum
//             per RFC 1071, UDP checksum 0) and merged, a whole frame at a time, into the
//             transmit stream of the port the request came in on (panama_axis_arb2 on each
//             management port; other ports pass through untouched).
// The engine's AXI4-Lite master drives the core's register file; the address range just above it
// (2^AW + 0x00 .. 0x14) reads this block's six counters (docs/mgmt.md), so a controller can see
// refused requests over the same protocol. With EXT = 1, the 2 KiB from 2^AW + L2SW_WINDOW
// (panama_defs.vh) are a second AXI4-Lite slave (x_axil_*, 11-bit addresses): the standalone
// switch's registers (panama_l2sw.v).
`timescale 1ns / 1ps
`default_nettype none
`include "panama_proto.vh"

module panama_mgmt_eth #(
  parameter PORTS = 4,                                  // ports
  parameter DATA_W = 64,                                 // tdata bits (64..512, a multiple of 64)
  parameter ADDR_W = 14,                                // register-file address bits
  parameter [PORTS-1:0] MGMT_PORTS = 1,                 // ports requests are accepted from
  parameter [127:0] KEY = 128'h0f0e0d0c0b0a09080706050403020100,  // SipHash-2-4 key (k0 = [63:0])
  parameter [47:0] MAC = 48'h02504e4d0001,          // board MAC (first byte on the wire = [47:40])
  parameter [31:0] IP = 32'h0a0000fe,               // board management IPv4 address
  parameter [15:0] UDP_PORT = `PANAMA_MGMT_UDP_PORT_DEFAULT,  // management UDP port
  parameter MAX_OPS = `PANAMA_MGMT_MAX_OPS,         // most operations in one request
  parameter EXT = 0                                 // 1: the x_axil_* window at 2^ADDR_W + L2SW_WINDOW
) (
  input  wire             clk,
  input  wire             rst,
  // from the ports (receive)
  input  wire [PORTS*DATA_W-1:0]   s_rx_tdata,
  input  wire [PORTS*DATA_W/8-1:0] s_rx_tkeep,
  input  wire [PORTS-1:0]     s_rx_tvalid,
  input  wire [PORTS-1:0]     s_rx_tlast,
  input  wire [PORTS-1:0]     s_rx_tuser,
  output wire [PORTS-1:0]     s_rx_tready,
  // to the core (receive, requests removed)
  output wire [PORTS*DATA_W-1:0]   m_rx_tdata,
  output wire [PORTS*DATA_W/8-1:0] m_rx_tkeep,
  output wire [PORTS-1:0]     m_rx_tvalid,
  output wire [PORTS-1:0]     m_rx_tlast,
  output wire [PORTS-1:0]     m_rx_tuser,
  input  wire [PORTS-1:0]     m_rx_tready,
  // from the core (transmit)
  input  wire [PORTS*DATA_W-1:0]   s_tx_tdata,
  input  wire [PORTS*DATA_W/8-1:0] s_tx_tkeep,
  input  wire [PORTS-1:0]     s_tx_tvalid,
  input  wire [PORTS-1:0]     s_tx_tlast,
  input  wire [PORTS-1:0]     s_tx_tuser,
  output wire [PORTS-1:0]     s_tx_tready,
  // to the ports (transmit, responses merged)
  output wire [PORTS*DATA_W-1:0]   m_tx_tdata,
  output wire [PORTS*DATA_W/8-1:0] m_tx_tkeep,
  output wire [PORTS-1:0]     m_tx_tvalid,
  output wire [PORTS-1:0]     m_tx_tlast,
  output wire [PORTS-1:0]     m_tx_tuser,
  input  wire [PORTS-1:0]     m_tx_tready,
  // AXI4-Lite master to the register file
  output wire [ADDR_W-1:0]    m_axil_awaddr,
  output wire             m_axil_awvalid,
  input  wire             m_axil_awready,
  output wire [31:0]      m_axil_wdata,
  output wire             m_axil_wvalid,
  input  wire             m_axil_wready,
  input  wire [1:0]       m_axil_bresp,
  input  wire             m_axil_bvalid,
  output wire             m_axil_bready,
  output wire [ADDR_W-1:0]    m_axil_araddr,
  output wire             m_axil_arvalid,
  input  wire             m_axil_arready,
  input  wire [31:0]      m_axil_rdata,
  input  wire [1:0]       m_axil_rresp,
  input  wire             m_axil_rvalid,
  output wire             m_axil_rready,
  // AXI4-Lite master to the switch's registers (EXT = 1; unused otherwise)
  output wire [10:0]      x_axil_awaddr,
  output wire             x_axil_awvalid,
  input  wire             x_axil_awready,
  output wire [31:0]      x_axil_wdata,
  output wire             x_axil_wvalid,
  input  wire             x_axil_wready,
  input  wire [1:0]       x_axil_bresp,
  input  wire             x_axil_bvalid,
  output wire             x_axil_bready,
  output wire [10:0]      x_axil_araddr,
  output wire             x_axil_arvalid,
  input  wire             x_axil_arready,
  input  wire [31:0]      x_axil_rdata,
  input  wire [1:0]       x_axil_rresp,
  input  wire             x_axil_rvalid,
  output wire             x_axil_rready,
  // counters (saturating; the engine's, and requests dropped because the collector was busy)
  output wire [31:0]      cnt_accepted,
  output wire [31:0]      cnt_bad_port,
  output wire [31:0]      cnt_malformed,
  output wire [31:0]      cnt_bad_tag,
  output wire [31:0]      cnt_replay,
  output reg  [31:0]      cnt_rx_busy
);

`include "panama_defs.vh"
`include "panama_require.vh"

  // Parameter contract (docs/rtl.md, "Parameter contracts").
  `PANAMA_REQUIRE(g_req_ports, PORTS >= 1 && PORTS <= 256, "panama_mgmt_eth: PORTS must be 1..256")
  `PANAMA_REQUIRE(g_req_data_w, DATA_W >= 64 && DATA_W <= 512 && DATA_W % 64 == 0,
                  "panama_mgmt_eth: DATA_W must be a multiple of 64, 64..512")
  `PANAMA_REQUIRE(g_req_addr_w, ADDR_W >= 2 && ADDR_W <= 31, "panama_mgmt_eth: ADDR_W must be 2..31")
  `PANAMA_REQUIRE(g_req_l2sw_window, L2SW_WINDOW % 2048 == 0 && L2SW_WINDOW > 0 && L2SW_WINDOW < 4096,
                  "panama_mgmt_eth: L2SW_WINDOW must be the upper 2 KiB of the 4 KiB above the registers")
  `PANAMA_REQUIRE(g_req_max_ops, MAX_OPS >= 1, "panama_mgmt_eth: MAX_OPS must be at least 1")
  `PANAMA_REQUIRE(g_req_ext, EXT == 0 || EXT == 1, "panama_mgmt_eth: EXT must be 0 or 1")

  // Short names used below.
  localparam N = PORTS;
  localparam W = DATA_W;
  localparam AW = ADDR_W;

  // Port, word and beat indices are 6 or 8 bits whatever N and W are; narrower vectors are
  // indexed with them on purpose.
  /* verilator lint_off WIDTH */
  localparam KB = W / 8;
  localparam HDR = OFF_UDP_CSUM + 2;                // Ethernet, IPv4 (no options) and UDP headers
  localparam [15:0] IP_HDR = OFF_UDP_SPORT - OFF_IP;  // IPv4 header bytes
  localparam [15:0] UDP_HDR = HDR - OFF_UDP_SPORT;    // UDP header bytes
  // The response's fixed IPv4 words: version/IHL with DSCP 0, DF, TTL 64 with UDP.
  localparam [15:0] RSP_VER_TOS = {IPV4_VER_IHL, 8'h00};
  localparam [15:0] RSP_FRAG = 16'h4000;
  localparam [15:0] RSP_TTL_PROTO = {8'd64, IP_PROTO_UDP};
  localparam MAXW = MGMT_WORD_OPS + MGMT_OP_WORDS * MAX_OPS + MGMT_TAG_WORDS;  // words of the longest request
  localparam RBEATS = (HDR + 8 * MAXW + KB - 1) / KB;  // collector capacity in beats
  localparam RSPW = MGMT_WORD_OPS + MAX_OPS + MGMT_TAG_WORDS;  // words of the longest response
  localparam TBEATS = (HDR + 8 * RSPW + KB - 1) / KB;

  function [31:0] sat_inc(input [31:0] x, input [7:0] by);
    sat_inc = (x + by < x) ? 32'hffffffff : x + by;
  endfunction

  // ---- receive: per-port diverters ----
  wire [N*W-1:0]   mg_tdata;
  wire [N*W/8-1:0] mg_tkeep;
  wire [N-1:0]     mg_tvalid, mg_tlast, mg_tuser;

  genvar p;
  generate
    for (p = 0; p < N; p = p + 1) begin : g_match
      panama_mgmt_match #(.DATA_W(W), .MAC(MAC), .IP(IP), .UDP_PORT(UDP_PORT)) u_match (
        .clk(clk), .rst(rst),
        .s_tdata(s_rx_tdata[p*W +: W]), .s_tkeep(s_rx_tkeep[p*KB +: KB]), .s_tvalid(s_rx_tvalid[p]),
        .s_tlast(s_rx_tlast[p]), .s_tuser(s_rx_tuser[p]), .s_tready(s_rx_tready[p]),
        .m_core_tdata(m_rx_tdata[p*W +: W]), .m_core_tkeep(m_rx_tkeep[p*KB +: KB]),
        .m_core_tvalid(m_rx_tvalid[p]), .m_core_tlast(m_rx_tlast[p]), .m_core_tuser(m_rx_tuser[p]),
        .m_core_tready(m_rx_tready[p]),
        .m_mgmt_tdata(mg_tdata[p*W +: W]), .m_mgmt_tkeep(mg_tkeep[p*KB +: KB]),
        .m_mgmt_tvalid(mg_tvalid[p]), .m_mgmt_tlast(mg_tlast[p]), .m_mgmt_tuser(mg_tuser[p]));
    end
  endgenerate

  // ---- receive: the collector (one request at a time) ----
  localparam [2:0] C_IDLE = 3'd0, C_RECV = 3'd1, C_LEN = 3'd2, C_CHK = 3'd3, C_XFER = 3'd4;
  reg  [2:0]        c_state_q;
  reg  [RBEATS*W-1:0] rbuf_q;
  reg  [N-1:0]      mg_inf_q;       // port p is inside a diverted frame
  reg  [7:0]        owner_q;        // port of the collected request
  reg  [7:0]        cbeat_q;        // beats collected
  reg               ovf_q, bad_q;   // longer than the buffer; bad frame (tuser)
  reg  [15:0]       flen_q;         // frame bytes
  reg  [16:0]       plen_q;         // UDP payload bytes (UDP length - 8, bit 16 = underflow)
  reg               ipok_q, ok_q;
  reg  [5:0]        nw_q, nj_q;     // payload words; index of the next word to load
  reg  [63:0]       xd_q;           // word offered to the engine: payload word nj_q - 1
  wire              e_tready;

  function [7:0] rbyte(input integer k);
    rbyte = rbuf_q[8 * k +: 8];
  endfunction

  // The lowest port starting a diverted frame, if any.
  wire [N-1:0] starts = mg_tvalid & ~mg_inf_q;
  reg  [7:0]   first_start;
  reg  [7:0]   n_dropped;
  integer i;
  always @* begin
    first_start = 8'hff;
    for (i = N - 1; i >= 0; i = i - 1)
      if (starts[i]) first_start = i;
    n_dropped = 8'd0;
    for (i = 0; i < N; i = i + 1)
      if (starts[i] && !(c_state_q == C_IDLE && first_start == i)) n_dropped = n_dropped + 8'd1;
  end

  wire         own_v = mg_tvalid[owner_q];
  wire [W-1:0] own_d = mg_tdata[owner_q * W +: W];
  wire [KB-1:0] own_k = mg_tkeep[owner_q * KB +: KB];
  wire         own_l = mg_tlast[owner_q];
  wire         own_u = mg_tuser[owner_q];
  wire [W-1:0] st_d = mg_tdata[first_start * W +: W];
  wire [KB-1:0] st_k = mg_tkeep[first_start * KB +: KB];
  wire         st_l = mg_tlast[first_start];
  wire         st_u = mg_tuser[first_start];
  // Bytes on a last beat (tkeep contiguous from bit 0).
  function [15:0] ones(input [KB-1:0] k);
    integer j;
    begin
      ones = 16'd0;
      for (j = 0; j < KB; j = j + 1) ones = ones + k[j];
    end
  endfunction

  // Payload word j (bytes HDR + 8j ..): the engine's little-endian words.
  function [63:0] pword(input [5:0] j);
    integer m;
    begin
      pword = 64'd0;
      for (m = 0; m < MAXW; m = m + 1)
        if (j == m) pword = rbuf_q[8 * (HDR + 8 * m) +: 64];
    end
  endfunction
  wire [2:0] prem = plen_q[2:0];
  wire [7:0] last_keep = prem == 3'd0 ? 8'hff : (8'hff >> (4'd8 - prem));
  // A request that cannot be a whole payload is handed over as one empty word, so the engine
  // counts it as malformed (after its port check).
  wire       x_last = !ok_q || nj_q == nw_q;
  wire [7:0] x_keep = !ok_q ? 8'h00 : (nj_q == nw_q) ? last_keep : 8'hff;

  // Reply-to of the request the engine works on, latched when it takes the first word.
  reg  [47:0] rt_mac_q;
  reg  [31:0] rt_ip_q;
  reg  [15:0] rt_udp_q;
  reg  [7:0]  rt_port_q;

  always @(posedge clk) begin
    if (rst) begin
      c_state_q <= C_IDLE;
      mg_inf_q <= {N{1'b0}};
      owner_q <= 8'd0;
      cbeat_q <= 8'd0;
      ovf_q <= 1'b0;
      bad_q <= 1'b0;
      flen_q <= 16'd0;
      plen_q <= 17'd0;
      ipok_q <= 1'b0;
      ok_q <= 1'b0;
      nw_q <= 6'd0;
      nj_q <= 6'd0;
      xd_q <= 64'd0;
      cnt_rx_busy <= 32'd0;
      rt_mac_q <= 48'd0;
      rt_ip_q <= 32'd0;
      rt_udp_q <= 16'd0;
      rt_port_q <= 8'd0;
    end else begin
      for (i = 0; i < N; i = i + 1)
        if (mg_tvalid[i]) mg_inf_q[i] <= !mg_tlast[i];
      if (n_dropped != 8'd0) cnt_rx_busy <= sat_inc(cnt_rx_busy, n_dropped);
      case (c_state_q)
        C_IDLE: if (first_start != 8'hff) begin
          owner_q <= first_start;
          rbuf_q[0 +: W] <= st_d;
          cbeat_q <= 8'd1;
          ovf_q <= 1'b0;
          bad_q <= st_l && st_u;
          flen_q <= ones(st_k);
          c_state_q <= st_l ? C_LEN : C_RECV;
        end
        C_RECV: if (own_v) begin
          for (i = 0; i < RBEATS; i = i + 1)
            if (cbeat_q == i) rbuf_q[i * W +: W] <= own_d;
          if (cbeat_q >= RBEATS) ovf_q <= 1'b1;
          if (cbeat_q != 8'hff) cbeat_q <= cbeat_q + 8'd1;
          if (own_l) begin
            bad_q <= own_u;
            flen_q <= {8'd0, cbeat_q} * KB + ones(own_k);
            c_state_q <= C_LEN;
          end
        end
        C_LEN: begin
          plen_q <= {1'b0, rbyte(OFF_UDP_LEN), rbyte(OFF_UDP_LEN + 1)} - UDP_HDR;
          ipok_q <= {rbyte(OFF_IP_TOTAL_LEN), rbyte(OFF_IP_TOTAL_LEN + 1)} ==
                    {rbyte(OFF_UDP_LEN), rbyte(OFF_UDP_LEN + 1)} + IP_HDR;
          c_state_q <= C_CHK;
        end
        C_CHK: begin
          // Lengths agree, the frame holds the whole payload (any Ethernet padding after it).
          ok_q <= !ovf_q && !bad_q && !plen_q[16] && plen_q != 17'd0 && ipok_q &&
                  {1'b0, flen_q} >= plen_q + HDR;
          nw_q <= plen_q[8:3] + (plen_q[2:0] != 3'd0);
          nj_q <= 6'd1;
          xd_q <= pword(6'd0);
          c_state_q <= C_XFER;
        end
        C_XFER: begin
          // The engine takes a request only after the previous response has left it, so the
          // reply-to fields change only once the response framer has taken its copy.
          if (e_tready && nj_q == 6'd1) begin
            rt_mac_q <= {rbyte(OFF_ETH_SRC), rbyte(OFF_ETH_SRC + 1), rbyte(OFF_ETH_SRC + 2),
                         rbyte(OFF_ETH_SRC + 3), rbyte(OFF_ETH_SRC + 4), rbyte(OFF_ETH_SRC + 5)};
            rt_ip_q <= {rbyte(OFF_IP_SRC), rbyte(OFF_IP_SRC + 1), rbyte(OFF_IP_SRC + 2), rbyte(OFF_IP_SRC + 3)};
            rt_udp_q <= {rbyte(OFF_UDP_SPORT), rbyte(OFF_UDP_SPORT + 1)};
            rt_port_q <= owner_q;
          end
          if (e_tready && x_last) begin
            c_state_q <= C_IDLE;
          end else if (e_tready) begin
            xd_q <= pword(nj_q);
            nj_q <= nj_q + 6'd1;
          end
        end
        default: c_state_q <= C_IDLE;
      endcase
    end
  end

  // ---- the engine, and the counters above the register file ----
  wire [63:0] e_rdata;
  wire        e_rvalid, e_rlast, e_rready;
  wire [AW:0] e_awaddr, e_araddr;
  wire [31:0] e_wdata;
  wire        e_awvalid, e_wvalid, e_arvalid, e_bready, e_rready_axil;
  reg         loc_b_q, loc_r_q;       // a local write / read answers one cycle after its address
  reg  [1:0]  loc_rresp_q;
  reg  [31:0] loc_rdata_q;
  // Above the register file (2^AW >= 0x1000): the switch's 2 KiB window (EXT, from offset
  // L2SW_WINDOW, a multiple of 2 KiB) or the counters.
  wire        x_aw = EXT != 0 && e_awaddr[AW] && e_awaddr[AW-1:11] == L2SW_WINDOW / 2048;
  wire        x_ar = EXT != 0 && e_araddr[AW] && e_araddr[AW-1:11] == L2SW_WINDOW / 2048;
  wire        loc_aw = e_awaddr[AW] && !x_aw, loc_ar = e_araddr[AW] && !x_ar;
  // The engine has one transaction outstanding at a time, so the split needs no ordering.
  assign m_axil_awaddr = e_awaddr[AW-1:0];
  assign m_axil_awvalid = e_awvalid && !e_awaddr[AW];
  assign m_axil_wdata = e_wdata;
  assign m_axil_wvalid = e_wvalid && !e_awaddr[AW];
  assign m_axil_bready = e_bready;
  assign m_axil_araddr = e_araddr[AW-1:0];
  assign m_axil_arvalid = e_arvalid && !e_araddr[AW];
  assign m_axil_rready = e_rready_axil;
  assign x_axil_awaddr = e_awaddr[10:0];
  assign x_axil_awvalid = e_awvalid && x_aw;
  assign x_axil_wdata = e_wdata;
  assign x_axil_wvalid = e_wvalid && x_aw;
  assign x_axil_bready = e_bready;
  assign x_axil_araddr = e_araddr[10:0];
  assign x_axil_arvalid = e_arvalid && x_ar;
  assign x_axil_rready = e_rready_axil;
  wire x_b = EXT != 0 && x_axil_bvalid, x_r = EXT != 0 && x_axil_rvalid;
  wire unused_x = &{1'b0, x_axil_awready, x_axil_wready, x_axil_arready};  // read only through x_aw / x_ar

  panama_mgmt #(.PORTS(N), .MGMT_PORTS(MGMT_PORTS), .KEY(KEY), .MAX_OPS(MAX_OPS), .ADDR_W(AW + 1)) u_engine (
    .clk(clk), .rst(rst),
    .s_axis_tdata(xd_q), .s_axis_tkeep(x_keep), .s_axis_tvalid(c_state_q == C_XFER), .s_axis_tlast(x_last),
    .s_port(owner_q), .s_axis_tready(e_tready),
    .m_axis_tdata(e_rdata), .m_axis_tvalid(e_rvalid), .m_axis_tlast(e_rlast), .m_axis_tready(e_rready),
    .m_axil_awaddr(e_awaddr), .m_axil_awvalid(e_awvalid),
    .m_axil_awready(x_aw ? x_axil_awready : (loc_aw || m_axil_awready)),
    .m_axil_wdata(e_wdata), .m_axil_wvalid(e_wvalid),
    .m_axil_wready(x_aw ? x_axil_wready : (loc_aw || m_axil_wready)),
    .m_axil_bresp(loc_b_q ? 2'b10 : x_b ? x_axil_bresp : m_axil_bresp),
    .m_axil_bvalid(loc_b_q || x_b || m_axil_bvalid),
    .m_axil_bready(e_bready),
    .m_axil_araddr(e_araddr), .m_axil_arvalid(e_arvalid),
    .m_axil_arready(x_ar ? x_axil_arready : (loc_ar || m_axil_arready)),
    .m_axil_rdata(loc_r_q ? loc_rdata_q : x_r ? x_axil_rdata : m_axil_rdata),
    .m_axil_rresp(loc_r_q ? loc_rresp_q : x_r ? x_axil_rresp : m_axil_rresp),
    .m_axil_rvalid(loc_r_q || x_r || m_axil_rvalid), .m_axil_rready(e_rready_axil),
    .cnt_accepted(cnt_accepted), .cnt_bad_port(cnt_bad_port), .cnt_malformed(cnt_malformed),
    .cnt_bad_tag(cnt_bad_tag), .cnt_replay(cnt_replay));

  // Counters: read-only (a write answers SLVERR); an address past them answers DECERR.
  wire [AW-1:0] la = e_araddr[AW-1:0];
  wire          la_ok = la < 24 && la[1:0] == 2'b00;
  always @(posedge clk) begin
    if (rst) begin
      loc_b_q <= 1'b0;
      loc_r_q <= 1'b0;
      loc_rresp_q <= 2'b00;
      loc_rdata_q <= 32'd0;
    end else begin
      loc_b_q <= e_awvalid && loc_aw;
      loc_r_q <= e_arvalid && loc_ar;
      loc_rresp_q <= la_ok ? 2'b00 : 2'b11;
      if (!la_ok) loc_rdata_q <= 32'd0;
      else case (la[4:2])
        3'd0: loc_rdata_q <= cnt_accepted;
        3'd1: loc_rdata_q <= cnt_bad_port;
        3'd2: loc_rdata_q <= cnt_malformed;
        3'd3: loc_rdata_q <= cnt_bad_tag;
        3'd4: loc_rdata_q <= cnt_replay;
        default: loc_rdata_q <= cnt_rx_busy;
      endcase
    end
  end

  // ---- transmit: the response frame ----
  localparam [2:0] T_IDLE = 3'd0, T_COLL = 3'd1, T_SUM = 3'd2, T_FOLD = 3'd3, T_FOLD2 = 3'd4, T_SEND = 3'd5;
  reg  [2:0]        t_state_q;
  reg  [64*RSPW-1:0] resp_q;
  reg  [5:0]        rw_q;            // response words collected
  reg  [47:0]       tx_mac_q;
  reg  [31:0]       tx_ip_q;
  reg  [15:0]       tx_udp_q;
  reg  [7:0]        tx_port_q;
  reg  [19:0]       sum_q;
  reg  [15:0]       csum_q;
  reg  [7:0]        tb_q;            // next beat to send
  reg  [W-1:0]      t_tdata_q;
  reg  [KB-1:0]     t_tkeep_q;
  reg               t_tvalid_q, t_tlast_q;
  wire [N-1:0]      t_tready;        // per port: the merge takes a response beat
  wire              t_ready = t_tready[tx_port_q];
  wire [15:0]       ip_len = IP_HDR + UDP_HDR + {7'd0, rw_q, 3'd0};
  wire [15:0]       f_len = HDR + {7'd0, rw_q, 3'd0};
  wire [15:0]       udp_len = UDP_HDR + {7'd0, rw_q, 3'd0};

  assign e_rready = t_state_q == T_IDLE || t_state_q == T_COLL;

  // The whole response frame, byte k at bits [8k +: 8].
  reg [8*TBEATS*KB-1:0] frame;
  always @* begin
    frame = {(8 * TBEATS * KB){1'b0}};
    frame[8 * HDR +: 64 * RSPW] = resp_q;
    // Multi-byte fields big-endian on the wire: first byte at the lowest bits.
    frame[8*OFF_ETH_DST +: 48] = {tx_mac_q[7:0], tx_mac_q[15:8], tx_mac_q[23:16], tx_mac_q[31:24],
                                  tx_mac_q[39:32], tx_mac_q[47:40]};
    frame[8*OFF_ETH_SRC +: 48] = {MAC[7:0], MAC[15:8], MAC[23:16], MAC[31:24], MAC[39:32], MAC[47:40]};
    frame[8*OFF_ETH_TYPE +: 16] = {ETHERTYPE_IPV4[7:0], ETHERTYPE_IPV4[15:8]};
    frame[8*OFF_IP +: 16] = {RSP_VER_TOS[7:0], RSP_VER_TOS[15:8]};
    frame[8*OFF_IP_TOTAL_LEN +: 16] = {ip_len[7:0], ip_len[15:8]};
    frame[8*(OFF_IP_TOTAL_LEN + 2) +: 16] = 16'h0000;          // identification
    frame[8*OFF_IP_FRAG +: 16] = {RSP_FRAG[7:0], RSP_FRAG[15:8]};
    frame[8*(OFF_IP_PROTO - 1) +: 16] = {RSP_TTL_PROTO[7:0], RSP_TTL_PROTO[15:8]};
    frame[8*OFF_IP_CSUM +: 16] = {csum_q[7:0], csum_q[15:8]};
    frame[8*OFF_IP_SRC +: 32] = {IP[7:0], IP[15:8], IP[23:16], IP[31:24]};
    frame[8*OFF_IP_DST +: 32] = {tx_ip_q[7:0], tx_ip_q[15:8], tx_ip_q[23:16], tx_ip_q[31:24]};
    frame[8*OFF_UDP_SPORT +: 16] = {UDP_PORT[7:0], UDP_PORT[15:8]};
    frame[8*OFF_UDP_DPORT +: 16] = {tx_udp_q[7:0], tx_udp_q[15:8]};
    frame[8*OFF_UDP_LEN +: 16] = {udp_len[7:0], udp_len[15:8]};
    frame[8*OFF_UDP_CSUM +: 16] = 16'h0000;                     // UDP checksum: none
  end
  reg [W-1:0] beat;
  integer b;
  always @* begin
    beat = {W{1'b0}};
    for (b = 0; b < TBEATS; b = b + 1)
      if (tb_q == b) beat = frame[b * W +: W];
  end
  wire [15:0] sent = {8'd0, tb_q} * KB;          // bytes before this beat
  wire        is_last = sent + KB >= f_len;
  wire [15:0] left = f_len - sent;
  reg  [KB-1:0] beat_keep;
  always @* begin
    for (b = 0; b < KB; b = b + 1) beat_keep[b] = b < left;
  end

  always @(posedge clk) begin
    if (rst) begin
      t_state_q <= T_IDLE;
      resp_q <= {(64 * RSPW){1'b0}};
      rw_q <= 6'd0;
      tx_mac_q <= 48'd0;
      tx_ip_q <= 32'd0;
      tx_udp_q <= 16'd0;
      tx_port_q <= 8'd0;
      sum_q <= 20'd0;
      csum_q <= 16'd0;
      tb_q <= 8'd0;
      t_tdata_q <= {W{1'b0}};
      t_tkeep_q <= {KB{1'b0}};
      t_tvalid_q <= 1'b0;
      t_tlast_q <= 1'b0;
    end else begin
      case (t_state_q)
        T_IDLE, T_COLL: if (e_rvalid) begin
          for (i = 0; i < RSPW; i = i + 1)
            if ((t_state_q == T_IDLE ? 6'd0 : rw_q) == i) resp_q[64 * i +: 64] <= e_rdata;
          rw_q <= (t_state_q == T_IDLE ? 6'd0 : rw_q) + 6'd1;
          if (t_state_q == T_IDLE) begin
            // The engine returns to its next request only after this response's last word.
            tx_mac_q <= rt_mac_q;
            tx_ip_q <= rt_ip_q;
            tx_udp_q <= rt_udp_q;
            tx_port_q <= rt_port_q;
          end
          t_state_q <= e_rlast ? T_SUM : T_COLL;
        end
        T_SUM: begin
          // RFC 1071 over the IPv4 header, the constant words folded in by synthesis.
          sum_q <= {4'd0, RSP_VER_TOS} + {4'd0, ip_len} + {4'd0, RSP_FRAG} + {4'd0, RSP_TTL_PROTO} +
                   {4'd0, IP[31:16]} + {4'd0, IP[15:0]} + {4'd0, tx_ip_q[31:16]} + {4'd0, tx_ip_q[15:0]};
          t_state_q <= T_FOLD;
        end
        T_FOLD: begin
          sum_q <= {4'd0, sum_q[15:0]} + {16'd0, sum_q[19:16]};
          t_state_q <= T_FOLD2;
        end
        T_FOLD2: begin
          csum_q <= ~(sum_q[15:0] + {15'd0, sum_q[16]});
          tb_q <= 8'd0;
          t_state_q <= T_SEND;
        end
        T_SEND: if (!t_tvalid_q || t_ready) begin
          if (t_tvalid_q && t_tlast_q) begin
            t_tvalid_q <= 1'b0;
            t_tlast_q <= 1'b0;
            t_state_q <= T_IDLE;
          end else begin
            t_tvalid_q <= 1'b1;
            t_tdata_q <= beat;
            t_tkeep_q <= is_last ? beat_keep : {KB{1'b1}};
            t_tlast_q <= is_last;
            tb_q <= tb_q + 8'd1;
          end
        end
        default: t_state_q <= T_IDLE;
      endcase
    end
  end

  // ---- transmit: merge into the receiving port's stream ----
  generate
    for (p = 0; p < N; p = p + 1) begin : g_tx
      if (MGMT_PORTS[p]) begin : g_arb
        panama_axis_arb2 #(.DATA_W(W), .USER_W(1)) u_arb (
          .clk(clk), .rst(rst),
          .s0_axis_tdata(s_tx_tdata[p*W +: W]), .s0_axis_tkeep(s_tx_tkeep[p*KB +: KB]),
          .s0_axis_tvalid(s_tx_tvalid[p]), .s0_axis_tlast(s_tx_tlast[p]), .s0_axis_tuser(s_tx_tuser[p]),
          .s0_axis_tready(s_tx_tready[p]),
          .s1_axis_tdata(t_tdata_q), .s1_axis_tkeep(t_tkeep_q),
          .s1_axis_tvalid(t_tvalid_q && tx_port_q == p), .s1_axis_tlast(t_tlast_q), .s1_axis_tuser(1'b0),
          .s1_axis_tready(t_tready[p]),
          .m_axis_tdata(m_tx_tdata[p*W +: W]), .m_axis_tkeep(m_tx_tkeep[p*KB +: KB]),
          .m_axis_tvalid(m_tx_tvalid[p]), .m_axis_tlast(m_tx_tlast[p]), .m_axis_tuser(m_tx_tuser[p]),
          .m_axis_tready(m_tx_tready[p]));
      end else begin : g_pass
        // Responses only go to management ports.
        assign m_tx_tdata[p*W +: W] = s_tx_tdata[p*W +: W];
        assign m_tx_tkeep[p*KB +: KB] = s_tx_tkeep[p*KB +: KB];
        assign m_tx_tvalid[p] = s_tx_tvalid[p];
        assign m_tx_tlast[p] = s_tx_tlast[p];
        assign m_tx_tuser[p] = s_tx_tuser[p];
        assign s_tx_tready[p] = m_tx_tready[p];
        assign t_tready[p] = 1'b0;
      end
    end
  endgenerate

  /* verilator lint_on WIDTH */

endmodule

`default_nettype wire
