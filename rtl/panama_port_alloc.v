// SPDX-License-Identifier: MIT
// A port's contribution memory and its allocator (docs/rtl.md): beats of DATA_W bits, each with
// the address of its frame's next beat (block RAM), and the chain of free beats (a fresh segment
// after reset, then the frames freed since, through a FIFO of free segments). A frame being
// received takes beats speculatively from the allocation point; admission (commit) keeps them,
// any other outcome forgets them. Instantiated by panama_port.
`timescale 1ns / 1ps
`default_nettype none

module panama_port_alloc #(
  // Bus width in bits: a power of two, 64..4096.
  parameter DATA_W = 64,
  // Beats of the largest frame (the longest contribution): at least 1.
  parameter FRAME_BEATS = 189,
  // Bits of 0..FRAME_BEATS: derived; leave it unset.
  parameter FRAME_CNT_W = $clog2(FRAME_BEATS + 1),
  // Beats of the contribution memory: at least FRAME_BEATS.
  parameter MEM_BEATS = 4285,
  // Bits of a contribution memory address: derived; leave it unset.
  parameter MEM_PTR_W = MEM_BEATS > 1 ? $clog2(MEM_BEATS) : 1,
  // Entries of the free-segment FIFO: more than the most contributions the memory holds.
  parameter SEGS = 477
) (
  input  wire clk,
  input  wire rst,
  // The receive stage's beat (valid, tlast, tdata).
  input  wire rx_valid,
  input  wire rx_last,
  input  wire [DATA_W-1:0] rx_data,
  // On a frame's last beat: admission keeps the frame's beats.
  input  wire commit,
  // A frame's beats go back to the free chain: its first beat and beats.
  input  wire free,
  input  wire [MEM_PTR_W-1:0] free_first,
  input  wire [FRAME_CNT_W-1:0] free_beats,
  // On the last beat: every beat of the frame was written (else it does not fit).
  output wire room_ok,
  // Beats of this frame before this one (saturating at FRAME_BEATS), and on its last beat its
  // first beat and beats.
  output wire [FRAME_CNT_W-1:0] cur_beat,
  output wire [MEM_PTR_W-1:0] frame_first,
  output wire [FRAME_CNT_W-1:0] frame_beats,
  // Read port, one cycle of latency: the beat at rd_addr and the address of its frame's next beat.
  input  wire [MEM_PTR_W-1:0] rd_addr,
  output wire [DATA_W-1:0] rd_data,
  output wire [MEM_PTR_W-1:0] rd_link
);

`include "panama_require.vh"

  // Parameter contract (docs/rtl.md, "Parameter contracts").
  `PANAMA_REQUIRE(g_req_data_w, DATA_W >= 64 && DATA_W <= 4096 && (DATA_W & (DATA_W - 1)) == 0,
                  "panama_port_alloc: DATA_W must be a power of two, 64..4096")
  `PANAMA_REQUIRE(g_req_frame_beats, FRAME_BEATS >= 1, "panama_port_alloc: FRAME_BEATS must be at least 1")
  `PANAMA_REQUIRE(g_req_frame_cnt_w, FRAME_CNT_W == $clog2(FRAME_BEATS + 1),
                  "panama_port_alloc: FRAME_CNT_W is derived from FRAME_BEATS; do not set it")
  `PANAMA_REQUIRE(g_req_mem_beats, MEM_BEATS >= FRAME_BEATS, "panama_port_alloc: MEM_BEATS must be at least FRAME_BEATS")
  `PANAMA_REQUIRE(g_req_mem_ptr_w, MEM_PTR_W == (MEM_BEATS > 1 ? $clog2(MEM_BEATS) : 1),
                  "panama_port_alloc: MEM_PTR_W is derived from MEM_BEATS; do not set it")
  `PANAMA_REQUIRE(g_req_segs, SEGS >= 1, "panama_port_alloc: SEGS must be at least 1")

  // Short names used below.
  localparam W = DATA_W;
  // Contribution memory: beats, pointer width, beat count (0..T) width.
  localparam T = MEM_BEATS;
  localparam BW = MEM_PTR_W;
  localparam RW = $clog2(MEM_BEATS + 1);
  // Beats of the largest frame and their counter width.
  localparam SB = FRAME_BEATS;
  localparam SBW = FRAME_CNT_W;
  localparam [RW-1:0] REM_ONE = 1;
  // Free-segment FIFO: index width (0..SEGS-1) and last entry.
  localparam SGW = SEGS > 1 ? $clog2(SEGS) : 1;
  localparam integer SG_LAST_I = SEGS - 1;
  localparam [SGW-1:0] SG_LAST = SG_LAST_I[SGW-1:0];

  wire rx_beat = rx_valid;
  wire rx_end = rx_valid & rx_last;
  wire rx_last_q = rx_last;
  wire [W-1:0] rx_data_q = rx_data;
  wire commit_contrib = commit;
  wire free_any = free;
  wire [BW-1:0] pop_first = free_first;
  wire [SBW-1:0] pop_beats = free_beats;

  // Beats of W bits, each stored with the address of the next beat of its frame (the link):
  // one write port (receive) and one synchronous read port (the scheduler), block RAM.
  // It is two memories when the beat's bits are not a whole number of block RAM widths at depth
  // T: the widest whole number of them, and the rest (which fits a RAMB18 or less), instead of
  // one more whole RAMB36 for the last few bits (at W 64, T 4096: 8.5 BRAM36 instead of 9).
  localparam integer BEAT_BITS = W + BW;
  localparam integer B36W = T <= 512 ? 72 : T <= 1024 ? 36 : T <= 2048 ? 18 : T <= 4096 ? 9 :
                            T <= 8192 ? 4 : T <= 16384 ? 2 : 1;
  localparam integer BLO_F = (BEAT_BITS / B36W) * B36W;
  localparam integer BLO = (BLO_F == 0) ? BEAT_BITS : BLO_F;
  localparam integer BHI = BEAT_BITS - BLO;
  // The same links again, for the allocator walking a free segment (block RAM).
  reg [BW-1:0] link_mem [0:T-1];
  // The free beats are a chain of segments: after reset the fresh segment 0..T-1, whose links
  // are implicit (beat + 1), then the frames freed since, in the order they were freed (their own
  // links chain their beats). The segments after the current one wait in a FIFO of
  // {first beat, beat count} (block RAM): every free segment is a freed contribution of at least
  // 64 + ES bytes, so fewer than SEGS of them wait at once (gen/emit/top.cpp, buffer_plan).
  reg [BW+SBW-1:0] seg_mem [0:SEGS-1];
  // Committed allocation point: the next free beat, the beats left in its segment, whether that
  // segment is the fresh one, and the FIFO entry of the segment after it.
  reg [BW-1:0] fl_ptr_q;
  reg [RW-1:0] fl_rem_q;
  reg fl_fresh_q;
  reg [SGW-1:0] fl_sg_q;
  reg fl_wait_q;
  // Where the next freed frame is appended to the FIFO.
  reg [SGW-1:0] sg_wr_q;
  // The frame being received takes beats speculatively from the allocation point; admission
  // commits the walk, any other outcome forgets it (its beats stay free, in the same order).
  reg in_frame_q;
  reg [SBW-1:0] cur_beat_q;  // beats written so far, saturating at SB
  reg [BW-1:0] first_q;      // the frame's first beat
  // The allocation point in use: the committed one between frames, the frame's own walk
  // inside one. It is registered as such (cur_* <= cur_*_d, below), so the walk's loop through
  // the link memory's read address starts from flip-flops, not from a selection between the two.
  reg [BW-1:0] cur_ptr;
  reg [RW-1:0] cur_rem;
  reg cur_fresh;
  reg [SGW-1:0] cur_sg;
  // link_mem[cur_ptr] and seg_mem[cur_sg] as an asynchronous read would give them, from
  // synchronous reads: each memory is read every cycle at the address the allocation point
  // takes next (cur_*_d below), and a write in the cycle before, which that read did not see,
  // is taken from the registers that remember it.
  reg [BW-1:0] link_rd_q;
  reg [BW+SBW-1:0] seg_rd_q;
  reg link_pw_q, seg_pw_q;
  reg [BW-1:0] link_pa_q, link_pd_q;
  reg [SGW-1:0] seg_pa_q;
  reg [BW+SBW-1:0] seg_pd_q;
  wire [BW-1:0] link_cur = (link_pw_q & (link_pa_q == cur_ptr)) ? link_pd_q : link_rd_q;
  wire [BW+SBW-1:0] seg_next = (seg_pw_q & (seg_pa_q == cur_sg)) ? seg_pd_q : seg_rd_q;
  wire seg_end = cur_rem == REM_ONE;
  // The beat after cur_ptr in the free chain: where this frame's next beat goes.
  wire [BW-1:0] nxt_ptr = seg_end ? seg_next[BW+SBW-1:SBW] : cur_fresh ? cur_ptr + 1'b1 : link_cur;
  wire [RW-1:0] nxt_rem = seg_end ? {{(RW-SBW){1'b0}}, seg_next[SBW-1:0]} : cur_rem - 1'b1;
  wire nxt_fresh = cur_fresh & ~seg_end;
  wire [SGW-1:0] nxt_sg = ~seg_end ? cur_sg : (cur_sg == SG_LAST) ? {SGW{1'b0}} : cur_sg + 1'b1;
  // A contribution is at most SB beats: longer frames (never admitted here) stop being written.
  // The memory holds exactly the contribution half (T = CAPB beats), so the free chain may be
  // shorter than the frame being received while the buffer is within one frame of full: a beat
  // is written only while the chain has it and, unless it is the frame's last, the beat after
  // it (its link, and where the next beat goes). left_q counts the free beats beyond those this
  // frame has taken; once a beat finds none, the frame writes nothing more (no_room_q) and is
  // not admitted (`room_ok` below: it counts as overflow, docs/rtl.md "Buffer depth").
  reg [RW-1:0] left_q;
  reg left_1, left_2;  // left_q >= 1, left_q >= 2 (registered with it)
  reg no_room_q;
  reg [SBW-1:0] wcnt_q;  // beats this frame has written
  wire has_room = ~no_room_q & (rx_last_q ? left_1 : left_2);
  wire beat_write = rx_beat & (cur_beat_q != SB[SBW-1:0]) & has_room;
  assign room_ok = has_room;  // on the last beat: the whole frame was written
  always @(posedge clk) begin
    if (beat_write) link_mem[cur_ptr] <= nxt_ptr;
  end
  // The scheduler's read port: one beat and its link per cycle, one cycle of latency.
  wire [BEAT_BITS-1:0] beat_wr = {nxt_ptr, rx_data_q};
  wire [BEAT_BITS-1:0] beat_rd;
  assign {rd_link, rd_data} = beat_rd;
  reg [BLO-1:0] beat_lo [0:T-1];
  reg [BLO-1:0] beat_lo_q;
  always @(posedge clk) begin
    if (beat_write) beat_lo[cur_ptr] <= beat_wr[BLO-1:0];
    beat_lo_q <= beat_lo[rd_addr];
  end
  assign beat_rd[BLO-1:0] = beat_lo_q;
  generate
    if (BHI > 0) begin : g_beat_hi
      reg [BHI-1:0] beat_hi [0:T-1];
      reg [BHI-1:0] beat_hi_q;
      always @(posedge clk) begin
        if (beat_write) beat_hi[cur_ptr] <= beat_wr[BEAT_BITS-1:BLO];
        beat_hi_q <= beat_hi[rd_addr];
      end
      assign beat_rd[BEAT_BITS-1:BLO] = beat_hi_q;
    end
  endgenerate
  assign frame_first = in_frame_q ? first_q : cur_ptr;
  assign frame_beats = cur_beat_q + 1'b1;  // on the last beat of a contribution (<= FRAME_BEATS)
  assign cur_beat = cur_beat_q;

  // Frame state and the free chain: admission commits the walk; a removed frame is appended
  // to the FIFO of free segments whole (its links already chain its beats).
  // A frame that takes the chain's last free beat (left_q = 1: the end of the current segment,
  // the FIFO empty) leaves nothing to advance to: the allocation point waits (fl_wait_q) at
  // the FIFO entry the next freed frame is written to, and takes that frame as its segment when
  // it comes (in the same cycle as the admission, or later).
  wire [SGW-1:0] sg_wr_next = (sg_wr_q == SG_LAST) ? {SGW{1'b0}} : sg_wr_q + 1'b1;
  wire last_free = left_1 & ~left_2;  // left_q == 1
  wire [RW-1:0] pop_rem = {{(RW-SBW){1'b0}}, pop_beats};
  wire take_c = free_any & last_free;   // admitting takes the last beat; a frame is freed
  wire take_w = free_any & fl_wait_q;   // waiting, and a frame is freed
  wire [BW-1:0] fl_ptr_d = commit_contrib ? (take_c ? pop_first : nxt_ptr) : (take_w ? pop_first : fl_ptr_q);
  wire [RW-1:0] fl_rem_d = commit_contrib ? (take_c ? pop_rem : nxt_rem) : (take_w ? pop_rem : fl_rem_q);
  wire fl_fresh_d = commit_contrib ? (~take_c & nxt_fresh) : (~take_w & fl_fresh_q);
  wire [SGW-1:0] fl_sg_d = commit_contrib ? (take_c ? sg_wr_next : last_free ? cur_sg : nxt_sg)
                                          : (take_w ? sg_wr_next : fl_sg_q);
  wire fl_wait_d = commit_contrib ? (last_free & ~free_any) : (fl_wait_q & ~free_any);
  always @(posedge clk) begin
    if (rst) begin
      in_frame_q <= 1'b0;
      cur_beat_q <= {SBW{1'b0}};
      fl_ptr_q <= {BW{1'b0}};
      fl_rem_q <= T[RW-1:0];
      fl_fresh_q <= 1'b1;
      fl_sg_q <= {SGW{1'b0}};
      fl_wait_q <= 1'b0;
      sg_wr_q <= {SGW{1'b0}};
    end else begin
      if (rx_end) begin
        in_frame_q <= 1'b0;
        cur_beat_q <= {SBW{1'b0}};
      end else if (rx_beat) begin
        in_frame_q <= 1'b1;
        if (cur_beat_q != SB[SBW-1:0]) cur_beat_q <= cur_beat_q + 1'b1;
      end
      fl_ptr_q <= fl_ptr_d;
      fl_rem_q <= fl_rem_d;
      fl_fresh_q <= fl_fresh_d;
      fl_sg_q <= fl_sg_d;
      fl_wait_q <= fl_wait_d;
      if (free_any) sg_wr_q <= sg_wr_next;
    end
    if (rx_beat & ~in_frame_q) first_q <= cur_ptr;
  end
  always @(posedge clk) begin
    if (free_any) seg_mem[sg_wr_q] <= {pop_first, pop_beats};
  end
  // The free chain's length beyond the frame's beats (see beat_write): a written beat takes
  // one, a freed frame adds its beats, and a frame that is not admitted gives back its own.
  wire [RW-1:0] left_fr = left_q + (free_any ? {{(RW-SBW){1'b0}}, pop_beats} : {RW{1'b0}});
  wire [RW-1:0] left_rw = left_fr + {{(RW-SBW){1'b0}}, wcnt_q};        // the frame is forgotten
  wire [RW-1:0] left_tk = left_fr - {{(RW-1){1'b0}}, beat_write};     // otherwise
  // left_fr >= 1, 2, 3, so that the flags of left_tk need beat_write only to choose.
  wire fr_ge1 = left_fr != {RW{1'b0}};
  wire fr_ge2 = left_fr[RW-1:1] != {(RW-1){1'b0}};
  wire fr_ge3 = (left_fr[RW-1:2] != {(RW-2){1'b0}}) | (left_fr[1] & left_fr[0]);
  always @(posedge clk) begin
    if (rst) begin
      left_q <= T[RW-1:0];
      left_1 <= 1'b1;
      left_2 <= 1'b1;
      no_room_q <= 1'b0;
      wcnt_q <= {SBW{1'b0}};
    end else begin
      if (rx_end & ~commit_contrib) begin
        left_q <= left_rw;
        left_1 <= left_rw != {RW{1'b0}};
        left_2 <= left_rw[RW-1:1] != {(RW-1){1'b0}};
      end else begin
        left_q <= left_tk;
        left_1 <= beat_write ? fr_ge2 : fr_ge1;
        left_2 <= beat_write ? fr_ge3 : fr_ge2;
      end
      no_room_q <= ~rx_end & (no_room_q | (rx_beat & ~has_room));
      wcnt_q <= rx_end ? {SBW{1'b0}} : wcnt_q + {{(SBW-1){1'b0}}, beat_write};
    end
  end
  // The allocation point of the next cycle (what the registers above take), which addresses the
  // two reads; and the writes of this cycle, which those reads do not see.
  wire in_frame_d = ~rx_end & (rx_beat | in_frame_q);
  // Inside a frame the walk moves with each written beat (a frame whose first beat finds no room
  // keeps the committed point, and writes nothing more); between frames it is the committed
  // point. The reset values are the committed point's.
  wire [BW-1:0] cur_ptr_d = rst ? {BW{1'b0}}
                          : in_frame_d ? (beat_write ? nxt_ptr : cur_ptr)
                          : fl_ptr_d;
  wire [RW-1:0] cur_rem_d = rst ? T[RW-1:0]
                          : in_frame_d ? (beat_write ? nxt_rem : cur_rem)
                          : fl_rem_d;
  wire cur_fresh_d = rst | (in_frame_d ? (beat_write ? nxt_fresh : cur_fresh) : fl_fresh_d);
  wire [SGW-1:0] cur_sg_d = rst ? {SGW{1'b0}}
                          : in_frame_d ? (beat_write ? nxt_sg : cur_sg)
                          : fl_sg_d;
  always @(posedge clk) begin
    cur_ptr <= cur_ptr_d;
    cur_rem <= cur_rem_d;
    cur_fresh <= cur_fresh_d;
    cur_sg <= cur_sg_d;
    link_rd_q <= link_mem[cur_ptr_d];
    seg_rd_q <= seg_mem[cur_sg_d];
    link_pw_q <= beat_write & ~rst;
    link_pa_q <= cur_ptr;
    link_pd_q <= nxt_ptr;
    seg_pw_q <= free_any & ~rst;
    seg_pa_q <= sg_wr_q;
    seg_pd_q <= {pop_first, pop_beats};
  end

endmodule

`default_nettype wire
