// SPDX-License-Identifier: MIT
// A port's bypass FIFO and transmit (docs/rtl.md): every received frame is written
// speculatively; its last beat commits it (bypass, or a final sum passing through) or rewinds
// the write pointer. Committed beats are read into a four-entry FIFO and an output register that
// drive mPP. Instantiated by panama_port, which passes the beats of its receive stage.
`timescale 1ns / 1ps
`default_nettype none

module panama_port_bypass #(
  // Bus width in bits: a power of two, 64..4096.
  parameter DATA_W = 64,
  // FIFO depth in beats: at least 1 (panama_port asks for at least its largest frame).
  parameter BYP_BEATS = 4096
) (
  input  wire clk,
  input  wire rst,
  // The receive stage's beat: valid, tuser, tlast, byte count, tdata.
  input  wire rx_valid,
  input  wire rx_user,
  input  wire rx_last,
  input  wire [$clog2(DATA_W/8):0] rx_bytes,
  input  wire [DATA_W-1:0] rx_data,
  // This beat is written (combinational: on a last beat, the frame fits).
  output wire write,
  // On a frame's last beat: commit the frame (else it is rewound).
  input  wire commit,
  // Transmit (mPP).
  output wire [DATA_W-1:0] m_axis_tdata,
  output wire [DATA_W/8-1:0] m_axis_tkeep,
  output wire m_axis_tvalid,
  output wire m_axis_tlast,
  output wire m_axis_tuser,
  input  wire m_axis_tready
);

`include "panama_require.vh"

  // Parameter contract (docs/rtl.md, "Parameter contracts").
  `PANAMA_REQUIRE(g_req_data_w, DATA_W >= 64 && DATA_W <= 4096 && (DATA_W & (DATA_W - 1)) == 0,
                  "panama_port_bypass: DATA_W must be a power of two, 64..4096")
  `PANAMA_REQUIRE(g_req_byp_beats, BYP_BEATS >= 1, "panama_port_bypass: BYP_BEATS must be at least 1")

  // Bus width in bits and bytes.
  localparam W = DATA_W;
  localparam BB = DATA_W / 8;
  // Bits of a byte index within a beat, and a FIFO word: {tuser, tlast, the beat's bytes
  // (KW + 1 bits), tdata}.
  localparam KW = $clog2(BB);
  localparam XW = W + KW + 3;
  // Depth in beats, pointer (0..BYP-1) and count (0..BYP) widths.
  localparam BYP = BYP_BEATS;
  localparam BPW = BYP_BEATS > 1 ? $clog2(BYP_BEATS) : 1;
  localparam BCW = $clog2(BYP_BEATS + 1);

  wire rx_beat = rx_valid;
  wire rx_end = rx_valid & rx_last;

  // Each word keeps tuser, tlast and the byte count (mPP gets tkeep back from it).
  reg [XW-1:0] byp_mem [0:BYP-1];
  reg [BPW-1:0] byp_wr_q, byp_start_q, byp_rd_q;
  reg [BCW-1:0] byp_count_q;   // committed beats not yet read
  reg [BCW-1:0] byp_spec_q;    // beats of the frame being received
  reg byp_ovf_q;               // the frame being received no longer fits
  wire [BCW-1:0] byp_space = BYP[BCW-1:0] - byp_count_q - byp_spec_q;
  wire byp_write = rx_beat & ~byp_ovf_q & (byp_space != {BCW{1'b0}});
  assign write = byp_write;
  wire [BPW-1:0] byp_wr_next = (byp_wr_q == BYP[BPW-1:0] - 1'b1) ? {BPW{1'b0}} : byp_wr_q + 1'b1;
  always @(posedge clk) begin
    if (byp_write) byp_mem[byp_wr_q] <= {rx_user, rx_last, rx_bytes, rx_data};
  end

  // Pointers.
  wire tx_issue;
  always @(posedge clk) begin
    if (rst) begin
      byp_wr_q <= {BPW{1'b0}};
      byp_start_q <= {BPW{1'b0}};
      byp_spec_q <= {BCW{1'b0}};
      byp_ovf_q <= 1'b0;
      byp_count_q <= {BCW{1'b0}};
    end else begin
      if (rx_end) begin
        if (commit) begin
          byp_wr_q <= byp_wr_next;
          byp_start_q <= byp_wr_next;
        end else begin
          byp_wr_q <= byp_start_q;  // rewind
        end
        byp_spec_q <= {BCW{1'b0}};
        byp_ovf_q <= 1'b0;
      end else if (rx_beat) begin
        if (byp_write) begin
          byp_wr_q <= byp_wr_next;
          byp_spec_q <= byp_spec_q + 1'b1;
        end else begin
          byp_ovf_q <= 1'b1;
        end
      end
      byp_count_q <= byp_count_q + (commit ? byp_spec_q + 1'b1 : {BCW{1'b0}}) - {{(BCW-1){1'b0}}, tx_issue};
    end
  end

  // ---------------------------------------------------------------- transmit (mPP)
  // Reads committed beats into a four-entry FIFO; a read is issued only when the FIFO can take
  // it, so a started frame never underruns (the whole frame is already in memory).
  reg [XW-1:0] tx_word_q;
  reg tx_inflight_q;
  reg [XW-1:0] tx_fifo [0:3];
  reg [1:0] tx_wp_q, tx_rp_q;
  reg [2:0] tx_cnt_q;
  reg tx_out_valid_q;
  assign tx_issue = (byp_count_q != {BCW{1'b0}}) & (({1'b0, tx_cnt_q} + {3'b0, tx_inflight_q}) < 4'd3);
  // A FIFO entry moves to the output register when that is empty or being taken.
  wire tx_pop = (tx_cnt_q != 3'd0) & (~tx_out_valid_q | m_axis_tready);
  wire tx_take = tx_pop;
  always @(posedge clk) begin
    if (tx_issue) tx_word_q <= byp_mem[byp_rd_q];
    if (tx_inflight_q) tx_fifo[tx_wp_q] <= tx_word_q;
  end
  always @(posedge clk) begin
    if (rst) begin
      byp_rd_q <= {BPW{1'b0}};
      tx_inflight_q <= 1'b0;
      tx_wp_q <= 2'd0;
      tx_rp_q <= 2'd0;
      tx_cnt_q <= 3'd0;
    end else begin
      if (tx_issue) byp_rd_q <= (byp_rd_q == BYP[BPW-1:0] - 1'b1) ? {BPW{1'b0}} : byp_rd_q + 1'b1;
      tx_inflight_q <= tx_issue;
      if (tx_inflight_q) tx_wp_q <= tx_wp_q + 1'b1;
      if (tx_pop) tx_rp_q <= tx_rp_q + 1'b1;
      tx_cnt_q <= tx_cnt_q + {2'b0, tx_inflight_q} - {2'b0, tx_pop};
    end
  end
  // Output register: mPP is driven by flip-flops only.
  // tkeep from the byte count as the output register is loaded.
  wire [XW-1:0] tx_head = tx_fifo[tx_rp_q];
  wire [KW:0] tx_bytes = tx_head[W +: KW+1];
  wire [BB-1:0] tx_keep = tx_head[W+KW+1] ? ~({BB{1'b1}} << tx_bytes) : {BB{1'b1}};
  reg [W+BB+1:0] tx_out_q;
  always @(posedge clk) begin
    if (tx_take) tx_out_q <= {tx_head[W+KW+2], tx_head[W+KW+1], tx_keep, tx_head[W-1:0]};
    if (rst) tx_out_valid_q <= 1'b0;
    else tx_out_valid_q <= tx_take | (tx_out_valid_q & ~m_axis_tready);
  end
  assign m_axis_tvalid = tx_out_valid_q;
  assign m_axis_tdata = tx_out_q[W-1:0];
  assign m_axis_tkeep = tx_out_q[W+BB-1:W];
  assign m_axis_tlast = tx_out_q[W+BB];
  assign m_axis_tuser = tx_out_q[W+BB+1];

endmodule

`default_nettype wire
