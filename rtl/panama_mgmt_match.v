// SPDX-License-Identifier: MIT
// panama_mgmt_match: one port's receive stream split in two (docs/mgmt.md, "Framing"). A frame
// is a management request when it is Ethernet II to the board's MAC, IPv4 with IHL 5, not a
// fragment, UDP, to the board's IPv4 address and management UDP port; those frames leave on
// m_mgmt (never back-pressured: the collector behind it drops what it cannot take), all others
// leave unchanged on m_core. Deciding needs bytes 0..37, so a frame waits in a small FIFO until
// its header has been seen (about 38 / (W/8) beats of latency); frames never overtake each other
// and the stream keeps full rate.
`timescale 1ns / 1ps
`default_nettype none
`include "panama_proto.vh"

module panama_mgmt_match #(
  parameter DATA_W = 64,                                // tdata bits
  parameter [47:0] MAC = 48'h02504e4d0001,         // board MAC (first byte on the wire = [47:40])
  parameter [31:0] IP = 32'h0a0000fe,              // board management IPv4 address
  parameter [15:0] UDP_PORT = `PANAMA_MGMT_UDP_PORT_DEFAULT  // management UDP port
) (
  input  wire           clk,
  input  wire           rst,
  input  wire [DATA_W-1:0]   s_tdata,
  input  wire [DATA_W/8-1:0] s_tkeep,
  input  wire           s_tvalid,
  input  wire           s_tlast,
  input  wire           s_tuser,
  output wire           s_tready,
  // everything else, to the core
  output reg  [DATA_W-1:0]   m_core_tdata,
  output reg  [DATA_W/8-1:0] m_core_tkeep,
  output reg            m_core_tvalid,
  output reg            m_core_tlast,
  output reg            m_core_tuser,
  input  wire           m_core_tready,
  // management requests (no ready)
  output reg  [DATA_W-1:0]   m_mgmt_tdata,
  output reg  [DATA_W/8-1:0] m_mgmt_tkeep,
  output reg            m_mgmt_tvalid,
  output reg            m_mgmt_tlast,
  output reg            m_mgmt_tuser
);

`include "panama_defs.vh"
`include "panama_require.vh"

  // Parameter contract (docs/rtl.md, "Parameter contracts").
  `PANAMA_REQUIRE(g_req_data_w, DATA_W >= 64 && DATA_W <= 512 && DATA_W % 64 == 0,
                  "panama_mgmt_match: DATA_W must be a multiple of 64, 64..512")

  // Short names used below.
  localparam W = DATA_W;

  localparam KB = W / 8;
  localparam HB = OFF_UDP_DPORT + 2;     // header bytes the decision reads (to the UDP port)
  localparam D = (HB + KB - 1) / KB;     // beats holding them
  // FIFO of at least D + 2 beats: the head frame's whole header fits behind older beats.
  localparam FA = (D + 2 <= 2) ? 1 : (D + 2 <= 4) ? 2 : (D + 2 <= 8) ? 3 : (D + 2 <= 16) ? 4 : 5;
  localparam DEPTH = 1 << FA;
  localparam EW = W + KB + 2;            // data, keep, last, user
  /* verilator lint_off WIDTH */
  localparam [7:0] DL = D - 1;           // index of the beat completing the header
  /* verilator lint_on WIDTH */

  // Expected header bytes; a byte with mask bit 0 is not compared.
  function [7:0] want(input integer k);
    begin
      if (k < 6) want = MAC[8 * (5 - k) +: 8];
      else if (k == OFF_ETH_TYPE) want = ETHERTYPE_IPV4[15:8];
      else if (k == OFF_ETH_TYPE + 1) want = ETHERTYPE_IPV4[7:0];
      else if (k == OFF_IP) want = IPV4_VER_IHL;    // IPv4, IHL 5
      else if (k == OFF_IP_FRAG) want = 8'h00;      // MF 0, offset 0 (under the mask below)
      else if (k == OFF_IP_FRAG + 1) want = 8'h00;
      else if (k == OFF_IP_PROTO) want = IP_PROTO_UDP;
      else if (k >= OFF_IP_DST && k < OFF_IP_DST + 4) want = IP[8 * (OFF_IP_DST + 3 - k) +: 8];
      else if (k == OFF_UDP_DPORT) want = UDP_PORT[15:8];
      else if (k == OFF_UDP_DPORT + 1) want = UDP_PORT[7:0];
      else want = 8'h00;
    end
  endfunction
  function [7:0] mask(input integer k);
    begin
      if (k < 6 || k == OFF_ETH_TYPE || k == OFF_ETH_TYPE + 1 || k == OFF_IP || k == OFF_IP_FRAG + 1 ||
          k == OFF_IP_PROTO || (k >= OFF_IP_DST && k < OFF_IP_DST + 4) || k == OFF_UDP_DPORT || k == OFF_UDP_DPORT + 1)
        mask = 8'hff;
      else if (k == OFF_IP_FRAG) mask = 8'h3f;      // DF and the reserved bit may be anything
      else mask = 8'h00;
    end
  endfunction

  // ---- FIFO ----
  reg  [EW-1:0]   mem_q [0:DEPTH-1];
  reg  [FA:0]     wr_q, rd_q;
  reg  [DEPTH-1:0] decv_q, dec_q;       // per slot holding a frame's first beat: decided, is management
  wire [FA-1:0]   wa = wr_q[FA-1:0], ra = rd_q[FA-1:0];
  wire            full = (wr_q - rd_q) == DEPTH;
  wire            empty = wr_q == rd_q;
  assign s_tready = !full;
  wire            acc = s_tvalid && !full;

  // ---- input side: header byte matches, one flag per header byte ----
  reg             in_frame_q;            // inside a frame at the input
  reg  [7:0]      bidx_q;                // beats of this frame accepted so far (saturating)
  reg  [FA-1:0]   first_slot_q;          // slot of the frame's first beat
  reg  [HB-1:0]   ok_q;                  // header byte k matched
  reg             decide_q, short_q;     // decide next cycle (ok_q complete); frame too short
  reg  [FA-1:0]   decide_slot_q;
  wire [7:0]      bidx = in_frame_q ? bidx_q : 8'd0;
  wire [FA-1:0]   first_slot = in_frame_q ? first_slot_q : wa;

  genvar k;
  generate
    for (k = 0; k < HB; k = k + 1) begin : g_hdr
      always @(posedge clk)
        if (acc && {24'd0, bidx} == k / KB)
          ok_q[k] <= ((s_tdata[(k % KB) * 8 +: 8] ^ want(k)) & mask(k)) == 8'h00;
    end
  endgenerate

  always @(posedge clk) begin
    if (acc) mem_q[wa] <= {s_tuser, s_tlast, s_tkeep, s_tdata};
    if (rst) begin
      wr_q <= 0;
      in_frame_q <= 1'b0;
      bidx_q <= 8'd0;
      first_slot_q <= 0;
      decide_q <= 1'b0;
      short_q <= 1'b0;
      decide_slot_q <= 0;
    end else begin
      decide_q <= 1'b0;
      if (acc) begin
        wr_q <= wr_q + 1'b1;
        in_frame_q <= !s_tlast;
        if (!in_frame_q) first_slot_q <= wa;
        if (bidx != 8'hff) bidx_q <= bidx + 8'd1;
        // The header is complete with beat D-1, or the frame ended before it (not a request).
        // (With W = 512 the header is in beat 0 and bidx < DL never holds.)
        /* verilator lint_off UNSIGNED */
        if (bidx == DL || (s_tlast && bidx < DL)) begin
        /* verilator lint_on UNSIGNED */
          decide_q <= 1'b1;
          decide_slot_q <= first_slot;
          short_q <= s_tlast && (bidx != DL || !s_tkeep[(HB - 1) % KB]);
        end
      end
    end
  end

  // ---- output side ----
  reg             out_frame_q;           // inside a frame at the output
  reg             route_q;               // its route: 1 = management
  wire [EW-1:0]   head = mem_q[ra];
  wire            head_ok = !empty && (out_frame_q || decv_q[ra]);
  wire            route = out_frame_q ? route_q : dec_q[ra];
  wire            core_free = !m_core_tvalid || m_core_tready;
  wire            pop = head_ok && (route || core_free);

  always @(posedge clk) begin
    if (rst) begin
      rd_q <= 0;
      decv_q <= {DEPTH{1'b0}};
      dec_q <= {DEPTH{1'b0}};
      out_frame_q <= 1'b0;
      route_q <= 1'b0;
      m_core_tvalid <= 1'b0;
      m_core_tdata <= {W{1'b0}};
      m_core_tkeep <= {KB{1'b0}};
      m_core_tlast <= 1'b0;
      m_core_tuser <= 1'b0;
      m_mgmt_tvalid <= 1'b0;
      m_mgmt_tdata <= {W{1'b0}};
      m_mgmt_tkeep <= {KB{1'b0}};
      m_mgmt_tlast <= 1'b0;
      m_mgmt_tuser <= 1'b0;
    end else begin
      // A slot is decided only while it holds an undecided first beat, so set and clear of one
      // slot never meet.
      if (pop && !out_frame_q) decv_q[ra] <= 1'b0;
      if (decide_q) begin
        decv_q[decide_slot_q] <= 1'b1;
        dec_q[decide_slot_q] <= !short_q && (&ok_q);
      end
      if (pop) begin
        rd_q <= rd_q + 1'b1;
        out_frame_q <= !head[W + KB];
        if (!out_frame_q) route_q <= route;
      end
      if (core_free) m_core_tvalid <= pop && !route;
      if (pop && !route) {m_core_tuser, m_core_tlast, m_core_tkeep, m_core_tdata} <= head;
      m_mgmt_tvalid <= pop && route;
      if (pop && route) {m_mgmt_tuser, m_mgmt_tlast, m_mgmt_tkeep, m_mgmt_tdata} <= head;
    end
  end

endmodule

`default_nettype wire
