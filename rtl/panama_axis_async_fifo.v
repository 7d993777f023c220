// SPDX-License-Identifier: MIT
// panama_axis_async_fifo: AXI-Stream FIFO between two unrelated clocks (a MAC clock and the core
// clock). Pointers cross as Gray code through two-flop synchronisers, so each crossing changes
// one bit per step and a sampled pointer is always one the other side really held.
//
// FRAME_FIFO = 1 makes it frame-safe: the read side sees a frame only once its last beat is
// written, so the output never stalls inside a frame (what a transmit MAC needs) and a frame
// that does not fit is dropped whole, never cut. DROP_WHEN_FULL = 1 keeps s_axis_tready high
// (a receive MAC cannot be back-pressured) and drops a frame that meets a full FIFO;
// DROP_WHEN_FULL = 0 back-pressures instead, and drops only a frame longer than the FIFO
// (it could never be committed). Every drop pulses s_drop for one s_clk cycle.
//
// Both resets must be asserted together (panama_reset_sync from one source in each domain):
// resetting one side alone would desynchronise the pointers.
`timescale 1ns / 1ps
`default_nettype none

module panama_axis_async_fifo #(
  // Bits of tdata (a multiple of 8; tkeep has DATA_W/8 bits).
  parameter DATA_W = 64,
  // Bits of tuser.
  parameter USER_W = 1,
  // log2 of the depth in beats (the depth is a power of two so Gray pointers wrap cleanly).
  parameter ADDR_W = 9,
  // 1: frame-safe (commit at tlast, drop whole frames); 0: every beat commits at once.
  parameter FRAME_FIFO = 1,
  // 1: never back-pressure, drop a frame that meets a full FIFO (needs FRAME_FIFO = 1).
  parameter DROP_WHEN_FULL = 0,
  // Synchroniser flops per pointer crossing (>= 2).
  parameter SYNC_STAGES = 2
) (
  input  wire                    s_clk,
  input  wire                    s_rst,
  input  wire [DATA_W-1:0]   s_axis_tdata,
  input  wire [DATA_W/8-1:0] s_axis_tkeep,
  input  wire                    s_axis_tvalid,
  input  wire                    s_axis_tlast,
  input  wire [USER_W-1:0]   s_axis_tuser,
  output wire                    s_axis_tready,
  output reg                     s_drop,

  input  wire                    m_clk,
  input  wire                    m_rst,
  output reg  [DATA_W-1:0]   m_axis_tdata,
  output reg  [DATA_W/8-1:0] m_axis_tkeep,
  output reg                     m_axis_tvalid,
  output reg                     m_axis_tlast,
  output reg  [USER_W-1:0]   m_axis_tuser,
  input  wire                    m_axis_tready
);

`include "panama_require.vh"

  // Parameter contract (docs/rtl.md, "Parameter contracts").
  `PANAMA_REQUIRE(g_req_data_w, DATA_W >= 8 && DATA_W % 8 == 0,
                  "panama_axis_async_fifo: DATA_W must be a multiple of 8")
  `PANAMA_REQUIRE(g_req_user_w, USER_W >= 1, "panama_axis_async_fifo: USER_W must be at least 1")
  `PANAMA_REQUIRE(g_req_addr_w, ADDR_W >= 2 && ADDR_W <= 20, "panama_axis_async_fifo: ADDR_W must be 2..20")
  `PANAMA_REQUIRE(g_req_frame_fifo, FRAME_FIFO == 0 || FRAME_FIFO == 1,
                  "panama_axis_async_fifo: FRAME_FIFO must be 0 or 1")
  `PANAMA_REQUIRE(g_req_drop_when_full, DROP_WHEN_FULL == 0 || (DROP_WHEN_FULL == 1 && FRAME_FIFO == 1),
                  "panama_axis_async_fifo: DROP_WHEN_FULL must be 0, or 1 with FRAME_FIFO = 1")
  `PANAMA_REQUIRE(g_req_sync_stages, SYNC_STAGES >= 2, "panama_axis_async_fifo: SYNC_STAGES must be at least 2")

  localparam KEEP_WIDTH = DATA_W / 8;
  localparam WORD_WIDTH = DATA_W + KEEP_WIDTH + 1 + USER_W;
  localparam DEPTH = 1 << ADDR_W;
  localparam PW = ADDR_W + 1;   // one extra bit tells full from empty

  function [PW-1:0] bin2gray(input [PW-1:0] b);
    bin2gray = b ^ (b >> 1);
  endfunction

  function [PW-1:0] gray2bin(input [PW-1:0] g);
    integer i;
    begin
      gray2bin[PW-1] = g[PW-1];
      for (i = PW - 2; i >= 0; i = i - 1) gray2bin[i] = gray2bin[i+1] ^ g[i];
    end
  endfunction

  reg [WORD_WIDTH-1:0] mem [0:DEPTH-1];
  reg [PW-1:0] rd_ptr_q;           // next slot to read (read side)
  reg [PW-1:0] rd_gray_q;          // rd_ptr_q in Gray code, what the write side sees

  // ---------------- write side (s_clk) ----------------
  reg  [PW-1:0] wr_ptr_q;          // next slot to write (includes the uncommitted frame)
  reg  [PW-1:0] wr_commit_q;       // end of the last committed beat / frame
  reg  [PW-1:0] wr_commit_gray_q;  // what the read side sees
  reg           drop_frame_q;      // discarding the rest of the current frame
  (* ASYNC_REG = "TRUE" *) reg [PW*SYNC_STAGES-1:0] rd_gray_sync_q;  // stage k at [k*PW +: PW]

  wire [PW-1:0] rd_ptr_s = gray2bin(rd_gray_sync_q[(SYNC_STAGES-1)*PW +: PW]);
  wire          full = (wr_ptr_q - rd_ptr_s) == DEPTH[PW-1:0];
  // Frame mode with back-pressure: a frame filling the whole FIFO can never commit; take it in
  // and drop it rather than deadlock.
  wire          frame_too_long = (FRAME_FIFO != 0) && full && (wr_commit_q == rd_ptr_s);

  assign s_axis_tready = (DROP_WHEN_FULL != 0) || !full || drop_frame_q || frame_too_long;

  wire s_xfer = s_axis_tvalid && s_axis_tready;
  wire s_write = s_xfer && !drop_frame_q && !full;

  always @(posedge s_clk) begin
    if (s_write)
      mem[wr_ptr_q[ADDR_W-1:0]] <= {s_axis_tuser, s_axis_tlast, s_axis_tkeep, s_axis_tdata};
  end

  always @(posedge s_clk) begin
    if (s_rst) begin
      wr_ptr_q <= {PW{1'b0}};
      wr_commit_q <= {PW{1'b0}};
      wr_commit_gray_q <= {PW{1'b0}};
      drop_frame_q <= 1'b0;
      s_drop <= 1'b0;
      rd_gray_sync_q <= {(PW*SYNC_STAGES){1'b0}};
    end else begin
      rd_gray_sync_q <= {rd_gray_sync_q[(SYNC_STAGES-1)*PW-1:0], rd_gray_q};
      s_drop <= 1'b0;
      if (s_xfer) begin
        if (drop_frame_q) begin
          if (s_axis_tlast) drop_frame_q <= 1'b0;
        end else if (full) begin
          // Only reachable in frame mode (otherwise tready is low when full): drop the frame.
          wr_ptr_q <= wr_commit_q;
          drop_frame_q <= !s_axis_tlast;
          s_drop <= 1'b1;
        end else begin
          wr_ptr_q <= wr_ptr_q + 1'b1;
          if (s_axis_tlast || FRAME_FIFO == 0) begin
            wr_commit_q <= wr_ptr_q + 1'b1;
            wr_commit_gray_q <= bin2gray(wr_ptr_q + 1'b1);
          end
        end
      end
    end
  end

  // ---------------- read side (m_clk) ----------------
  (* ASYNC_REG = "TRUE" *) reg [PW*SYNC_STAGES-1:0] wr_gray_sync_q;  // stage k at [k*PW +: PW]
  reg  [WORD_WIDTH-1:0] mem_q;      // stage 1: the memory's output register
  reg                   mem_valid_q;

  wire empty = rd_ptr_q == gray2bin(wr_gray_sync_q[(SYNC_STAGES-1)*PW +: PW]);
  wire out_free = !m_axis_tvalid || m_axis_tready;
  wire stage_move = mem_valid_q && out_free;
  wire fetch = !empty && (!mem_valid_q || stage_move);

  always @(posedge m_clk) begin
    if (fetch) mem_q <= mem[rd_ptr_q[ADDR_W-1:0]];
  end

  always @(posedge m_clk) begin
    if (m_rst) begin
      rd_ptr_q <= {PW{1'b0}};
      rd_gray_q <= {PW{1'b0}};
      mem_valid_q <= 1'b0;
      m_axis_tvalid <= 1'b0;
      m_axis_tdata <= {DATA_W{1'b0}};
      m_axis_tkeep <= {KEEP_WIDTH{1'b0}};
      m_axis_tlast <= 1'b0;
      m_axis_tuser <= {USER_W{1'b0}};
      wr_gray_sync_q <= {(PW*SYNC_STAGES){1'b0}};
    end else begin
      wr_gray_sync_q <= {wr_gray_sync_q[(SYNC_STAGES-1)*PW-1:0], wr_commit_gray_q};
      if (fetch) begin
        rd_ptr_q <= rd_ptr_q + 1'b1;
        rd_gray_q <= bin2gray(rd_ptr_q + 1'b1);
        mem_valid_q <= 1'b1;
      end else if (stage_move) begin
        mem_valid_q <= 1'b0;
      end
      if (stage_move) begin
        m_axis_tvalid <= 1'b1;
        {m_axis_tuser, m_axis_tlast, m_axis_tkeep, m_axis_tdata} <= mem_q;
      end else if (m_axis_tready) begin
        m_axis_tvalid <= 1'b0;
      end
    end
  end

endmodule

`default_nettype wire
