// SPDX-License-Identifier: MIT
// panama_arp: answers ARP for the board's management address on one management port
// (docs/mgmt.md "ARP"), so servers reach the board without a static neighbour entry. It watches
// the port's receive stream (a tap: every frame, the request included, goes on as it would
// without this block) and, for a good ARP request (Ethernet broadcast or to the board's MAC,
// hardware type 1, protocol IPv4, lengths 6 and 4, operation 1) whose target address is IP,
// sends one ARP reply (operation 2, from MAC/IP to the requester's addresses, padded to 60
// bytes) on m_axis, which the shell merges into the port's transmit stream. A request arriving
// while the previous reply is still waiting is not answered (ARP requests are retried).
`timescale 1ns / 1ps
`default_nettype none

module panama_arp #(
  parameter DATA_W = 64,                                 // tdata bits (64..512)
  parameter [47:0] MAC = 48'h02504e4d0001,          // board MAC (first byte on the wire = [47:40])
  parameter [31:0] IP = 32'h0a0000fe                // board management IPv4 address
) (
  input  wire           clk,
  input  wire           rst,
  // the port's receive stream, one beat when tap_beat (tvalid && tready)
  input  wire [DATA_W-1:0]   tap_tdata,
  input  wire           tap_beat,
  input  wire           tap_tlast,
  input  wire [DATA_W/8-1:0] tap_tkeep,
  input  wire           tap_tuser,
  // the reply
  output reg  [DATA_W-1:0]   m_axis_tdata,
  output reg  [DATA_W/8-1:0] m_axis_tkeep,
  output reg            m_axis_tvalid,
  output reg            m_axis_tlast,
  input  wire           m_axis_tready
);

`include "panama_require.vh"

  // Parameter contract (docs/rtl.md, "Parameter contracts").
  `PANAMA_REQUIRE(g_req_data_w, DATA_W >= 64 && DATA_W <= 512 && DATA_W % 64 == 0,
                  "panama_arp: DATA_W must be a multiple of 64, 64..512")

  // Short names used below.
  localparam W = DATA_W;

  localparam BB = W / 8;
  localparam HB = (42 + BB - 1) / BB;        // beats holding bytes 0..41
  localparam RB = (60 + BB - 1) / BB;        // beats of the reply
  localparam BIW = 4, RIW = 4;               // HB <= 6 and RB <= 8 at 64 bits or more
  localparam HB_M1 = HB - 1, RB_M1 = RB - 1;

  // ---- receive: bytes 0..41 of each frame ----
  reg [BIW-1:0] bidx_q;                      // beat of the frame, saturating at HB
  wire [42*8-1:0] h;                         // only the bytes looked at are registers
  genvar i;
  generate
    for (i = 0; i < 42; i = i + 1) begin : g_cap
      localparam AT = i / BB;
      // eth.dst, eth.type, htype .. oper, sender MAC and IPv4, target IPv4.
      if (i < 6 || (i >= 12 && i <= 31) || i >= 38) begin : g_b
        reg [7:0] b_q;
        always @(posedge clk) if (tap_beat && bidx_q == AT[BIW-1:0]) b_q <= tap_tdata[(i % BB)*8 +: 8];
        assign h[i*8 +: 8] = b_q;
      end else begin : g_n
        assign h[i*8 +: 8] = 8'd0;
      end
    end
  endgenerate
  // The frame reached byte 41 (the target address): on beat HB-1 with that byte kept.
  reg whole_q;
  always @(posedge clk) begin
    if (rst) begin
      bidx_q <= {BIW{1'b0}};
      whole_q <= 1'b0;
    end else if (tap_beat) begin
      bidx_q <= tap_tlast ? {BIW{1'b0}} : (bidx_q == HB[BIW-1:0] ? bidx_q : bidx_q + 1'b1);
      if (bidx_q == {BIW{1'b0}}) whole_q <= 1'b0;
      if (bidx_q == HB_M1[BIW-1:0] && tap_tkeep[41 % BB]) whole_q <= 1'b1;
    end
  end
  // The frame's end, seen the cycle after its last beat (the capture registers then hold it).
  reg end_q, bad_q;
  always @(posedge clk) begin
    end_q <= !rst && tap_beat && tap_tlast;
    bad_q <= tap_tuser;
  end
  wire [47:0] dst = {h[0 +: 8], h[8 +: 8], h[16 +: 8], h[24 +: 8], h[32 +: 8], h[40 +: 8]};
  wire [47:0] sha = {h[22*8 +: 8], h[23*8 +: 8], h[24*8 +: 8], h[25*8 +: 8], h[26*8 +: 8], h[27*8 +: 8]};
  wire [31:0] spa = {h[28*8 +: 8], h[29*8 +: 8], h[30*8 +: 8], h[31*8 +: 8]};
  wire [31:0] tpa = {h[38*8 +: 8], h[39*8 +: 8], h[40*8 +: 8], h[41*8 +: 8]};
  wire [63:0] fixed = {h[12*8 +: 8], h[13*8 +: 8], h[14*8 +: 8], h[15*8 +: 8], h[16*8 +: 8], h[17*8 +: 8],
                       h[18*8 +: 8], h[19*8 +: 8]};
  wire [15:0] oper = {h[20*8 +: 8], h[21*8 +: 8]};
  // Bytes not looked at (zeros), and data lanes past byte 41 on a wide bus.
  wire unused_ok = &{1'b0, h[6*8 +: 6*8], h[32*8 +: 6*8], tap_tdata};
  wire is_req = whole_q && !bad_q && (dst == 48'hffffffffffff || dst == MAC) &&
                fixed == 64'h0806_0001_0800_0604 && oper == 16'd1 && tpa == IP;

  // ---- transmit: the reply ----
  reg busy_q;
  reg [47:0] r_mac_q;
  reg [31:0] r_ip_q;
  reg [RIW-1:0] ridx_q;
  // The reply's 60 bytes, byte j at [j*8 +: 8].
  wire [60*8-1:0] rf;
  wire [42*8-1:0] rf_head = {
    r_ip_q[7:0], r_ip_q[15:8], r_ip_q[23:16], r_ip_q[31:24],                               // 38..41 TPA
    r_mac_q[7:0], r_mac_q[15:8], r_mac_q[23:16], r_mac_q[31:24], r_mac_q[39:32], r_mac_q[47:40],  // 32..37 THA
    IP[7:0], IP[15:8], IP[23:16], IP[31:24],                                              // 28..31 SPA
    MAC[7:0], MAC[15:8], MAC[23:16], MAC[31:24], MAC[39:32], MAC[47:40],                  // 22..27 SHA
    8'h02, 8'h00, 8'h04, 8'h06, 8'h00, 8'h08, 8'h01, 8'h00, 8'h06, 8'h08,                  // 12..21
    MAC[7:0], MAC[15:8], MAC[23:16], MAC[31:24], MAC[39:32], MAC[47:40],                  // 6..11
    r_mac_q[7:0], r_mac_q[15:8], r_mac_q[23:16], r_mac_q[31:24], r_mac_q[39:32], r_mac_q[47:40]};  // 0..5
  assign rf = {144'd0, rf_head};
  wire [RB*BB*8-1:0] rf_pad = {{(RB*BB*8-480){1'b0}}, rf};
  wire last = ridx_q == RB_M1[RIW-1:0];
  integer k;
  always @(posedge clk) begin
    if (rst) begin
      busy_q <= 1'b0;
      ridx_q <= {RIW{1'b0}};
      m_axis_tvalid <= 1'b0;
      m_axis_tlast <= 1'b0;
    end else begin
      if (!busy_q && end_q && is_req) begin
        busy_q <= 1'b1;
        r_mac_q <= sha;
        r_ip_q <= spa;
        ridx_q <= {RIW{1'b0}};
      end
      if (busy_q && (!m_axis_tvalid || m_axis_tready)) begin
        if (m_axis_tvalid && m_axis_tlast) begin
          m_axis_tvalid <= 1'b0;
          m_axis_tlast <= 1'b0;
          busy_q <= 1'b0;
        end else begin
          m_axis_tvalid <= 1'b1;
          m_axis_tlast <= last;
          for (k = 0; k < RB; k = k + 1)
            if (ridx_q == k[RIW-1:0]) m_axis_tdata <= rf_pad[k*W +: W];
          for (k = 0; k < BB; k = k + 1) m_axis_tkeep[k] <= !last || (RB_M1 * BB + k < 60);
          ridx_q <= ridx_q + 1'b1;
        end
      end
    end
  end

endmodule

`default_nettype wire
