// SPDX-License-Identifier: MIT
// panama_sume_top: board shell for the NetFPGA SUME (Virtex-7 xc7vx690tffg1761-3), four SFP+
// ports at 10 Gbit/s. Each port is an AXI 10G Ethernet Subsystem (10GBASE-R, 64-bit AXI-Stream
// at the MAC clock, 156.25 MHz, one clock for all four ports, from port 0's shared logic); the
// core (panama_top, --ports 4 --gbps 10 --mhz 200) runs on its own 200 MHz clock from the board
// oscillator through an MMCM. Between each MAC and the core, panama_port_cdc holds two frame-safe
// asynchronous FIFOs. The frames the core builds (m_agg) leave on port AGG_PORT, interleaved frame
// by frame with that port's own traffic, towards the switch that multicasts them (switch-attached
// placement, accelerator.md). Servers reach the register file through management over Ethernet
// (panama_mgmt_eth in the shell, docs/mgmt.md) on the ports MGMT_PORTS.
`timescale 1ns / 1ps
`default_nettype none
`include "panama_proto.vh"

module panama_sume_top #(
  // Port (0-3, SFP+ cage sfp_{AGG_PORT+1}) that carries the built frames.
  parameter AGG_PORT = 3,
  // The core's contexts and register-file address bits (regmap.json's size), and the standalone
  // switch functions (panama_l2sw in the shell instead of the switch beside the board): set by
  // panama-gen (--contexts, --standalone).
  parameter CONTEXTS = 8,  // panama-gen: contexts
  parameter ADDR_W = 14,  // panama-gen: addr-bits
  parameter STANDALONE = 0,  // panama-gen: standalone
  // Management over Ethernet (docs/mgmt.md): the values on the marked lines are set by panama-gen
  // (--mgmt-ports, --mgmt-key, --mgmt-mac, --mgmt-ip, --mgmt-udp-port).
  parameter [3:0] MGMT_PORTS = 4'b0001,  // panama-gen: mgmt-ports
  parameter [127:0] MGMT_KEY = 128'h0f0e0d0c0b0a09080706050403020100,  // panama-gen: mgmt-key
  parameter [47:0] MGMT_MAC = 48'h02504e4d0001,  // panama-gen: mgmt-mac
  parameter [31:0] MGMT_IP = 32'h0a0000fe,  // panama-gen: mgmt-ip
  parameter [15:0] MGMT_UDP_PORT = `PANAMA_MGMT_UDP_PORT_DEFAULT  // panama-gen: mgmt-udp-port
) (
  input  wire       clk_200mhz_p,      // board oscillator, 200 MHz LVDS
  input  wire       clk_200mhz_n,
  input  wire       btn0,              // push button: reset while pressed
  input  wire       sfp_mgt_refclk_p,  // 156.25 MHz from the Si5324 (IC20), MGTREFCLK0_118
  input  wire       sfp_mgt_refclk_n,
  input  wire [3:0] sfp_rx_p,
  input  wire [3:0] sfp_rx_n,
  output wire [3:0] sfp_tx_p,
  output wire [3:0] sfp_tx_n,
  input  wire [3:0] sfp_tx_fault,
  output wire [3:0] sfp_tx_disable,
  output wire [1:0] led               // 0: core out of reset, 1: all four PCS blocks up
);

  // Short names used below.
  localparam C = CONTEXTS;
  localparam AW = ADDR_W;

  localparam N = 4;
  localparam W = 64;

  // ---------------- core clock: 200 MHz oscillator -> MMCM -> 200 MHz core, 100 MHz DRP -------
  wire clk_200_ibuf, clk_200_bufg, mmcm_fb, mmcm_locked, clk_core_mmcm, clk_drp_mmcm;
  wire core_clk, drp_clk;

  IBUFDS u_clk200_ibuf (.I(clk_200mhz_p), .IB(clk_200mhz_n), .O(clk_200_ibuf));
  BUFG u_clk200_bufg (.I(clk_200_ibuf), .O(clk_200_bufg));

  // VCO 1000 MHz: /5 = 200 MHz core, /10 = 100 MHz transceiver DRP clock.
  MMCME2_BASE #(
    .CLKIN1_PERIOD(5.000), .CLKFBOUT_MULT_F(5.000), .DIVCLK_DIVIDE(1),
    .CLKOUT0_DIVIDE_F(5.000), .CLKOUT1_DIVIDE(10)
  ) u_mmcm (
    .CLKIN1(clk_200_bufg), .CLKFBIN(mmcm_fb), .CLKFBOUT(mmcm_fb), .CLKFBOUTB(),
    .CLKOUT0(clk_core_mmcm), .CLKOUT0B(), .CLKOUT1(clk_drp_mmcm), .CLKOUT1B(),
    .CLKOUT2(), .CLKOUT2B(), .CLKOUT3(), .CLKOUT3B(), .CLKOUT4(), .CLKOUT5(), .CLKOUT6(),
    .LOCKED(mmcm_locked), .PWRDWN(1'b0), .RST(btn0));
  BUFG u_core_bufg (.I(clk_core_mmcm), .O(core_clk));
  BUFG u_drp_bufg (.I(clk_drp_mmcm), .O(drp_clk));

  // One asynchronous reset source, synchronised into every domain.
  wire arst = btn0 || !mmcm_locked;
  wire core_rst;
  panama_reset_sync u_core_rst (.clk(core_clk), .rst_in(arst), .rst_out(core_rst));

  // ---------------- MACs ----------------
  wire mac_clk;                 // coreclk_out of port 0: user clock of all four MACs
  wire areset_datapathclk, txusrclk, txusrclk2, gttxreset, gtrxreset, txuserrdy;
  wire qplllock, qplloutclk, qplloutrefclk, reset_counter_done;
  wire [N-1:0] resetdone;
  wire [N-1:0] pcs_block_lock;
  wire mac_rst;
  panama_reset_sync u_mac_rst (.clk(mac_clk), .rst_in(arst || !(&resetdone)), .rst_out(mac_rst));

  wire [N*W-1:0]   mac_rx_tdata, mac_tx_tdata;
  wire [N*W/8-1:0] mac_rx_tkeep, mac_tx_tkeep;
  wire [N-1:0]     mac_rx_tvalid, mac_rx_tlast, mac_rx_good;
  wire [N-1:0]     mac_tx_tvalid, mac_tx_tlast, mac_tx_tuser, mac_tx_tready;
  wire [8*N-1:0]   pcspma_status;

  // Transmitter and receiver enabled (bit 1 of each configuration vector, PG072); everything
  // else at its default: FCS added on transmit and stripped and checked on receive.
  localparam [79:0] MAC_TX_CONFIG = 80'h2;
  localparam [79:0] MAC_RX_CONFIG = 80'h2;

  // Port i's data, configuration and status connections, the same for both MAC variants.
  `define PANAMA_SUME_MAC_PORT(i) \
    .tx_axis_aresetn(!mac_rst), .rx_axis_aresetn(!mac_rst), .tx_ifg_delay(8'd0),                 \
    .s_axis_tx_tdata(mac_tx_tdata[(i)*W +: W]), .s_axis_tx_tkeep(mac_tx_tkeep[(i)*W/8 +: W/8]),  \
    .s_axis_tx_tlast(mac_tx_tlast[i]), .s_axis_tx_tuser(mac_tx_tuser[i]),                        \
    .s_axis_tx_tvalid(mac_tx_tvalid[i]), .s_axis_tx_tready(mac_tx_tready[i]),                    \
    .s_axis_pause_tdata(16'd0), .s_axis_pause_tvalid(1'b0),                                      \
    .m_axis_rx_tdata(mac_rx_tdata[(i)*W +: W]), .m_axis_rx_tkeep(mac_rx_tkeep[(i)*W/8 +: W/8]),  \
    .m_axis_rx_tlast(mac_rx_tlast[i]), .m_axis_rx_tuser(mac_rx_good[i]),                         \
    .m_axis_rx_tvalid(mac_rx_tvalid[i]),                                                         \
    .tx_statistics_valid(), .tx_statistics_vector(), .rx_statistics_valid(),                     \
    .rx_statistics_vector(),                                                                     \
    .mac_tx_configuration_vector(MAC_TX_CONFIG), .mac_rx_configuration_vector(MAC_RX_CONFIG),    \
    .mac_status_vector(), .pcs_pma_configuration_vector(536'd0), .pcs_pma_status_vector(),       \
    .pcspma_status(pcspma_status[(i)*8 +: 8]), .sim_speedup_control(1'b0), .signal_detect(1'b1), \
    .tx_fault(sfp_tx_fault[i]), .tx_disable(sfp_tx_disable[i]), .resetdone_out(resetdone[i]),    \
    .txp(sfp_tx_p[i]), .txn(sfp_tx_n[i]), .rxp(sfp_rx_p[i]), .rxn(sfp_rx_n[i])

  axi_10g_ethernet_shared u_mac0 (
    .refclk_p(sfp_mgt_refclk_p), .refclk_n(sfp_mgt_refclk_n), .dclk(drp_clk), .reset(arst),
    .coreclk_out(mac_clk), .rxrecclk_out(), .areset_datapathclk_out(areset_datapathclk),
    .txusrclk_out(txusrclk), .txusrclk2_out(txusrclk2), .gttxreset_out(gttxreset),
    .gtrxreset_out(gtrxreset), .txuserrdy_out(txuserrdy), .qplllock_out(qplllock),
    .qplloutclk_out(qplloutclk), .qplloutrefclk_out(qplloutrefclk),
    .reset_counter_done_out(reset_counter_done),
    `PANAMA_SUME_MAC_PORT(0));

  genvar p;
  generate
    for (p = 1; p < N; p = p + 1) begin : g_mac
      axi_10g_ethernet_nonshared u_mac (
        .coreclk(mac_clk), .dclk(drp_clk), .txusrclk(txusrclk), .txusrclk2(txusrclk2),
        .txoutclk(), .rxrecclk_out(), .areset(arst), .areset_coreclk(areset_datapathclk),
        .gttxreset(gttxreset), .gtrxreset(gtrxreset), .txuserrdy(txuserrdy),
        .qplllock(qplllock), .qplloutclk(qplloutclk), .qplloutrefclk(qplloutrefclk),
        .reset_counter_done(reset_counter_done),
        `PANAMA_SUME_MAC_PORT(p));
    end
  endgenerate

  `undef PANAMA_SUME_MAC_PORT

  // ---------------- clock-domain crossing and the core ----------------
  // The 10G MAC flags a good frame with tuser on its last beat; the core wants bad = 1.
  panama_board_shell #(.PORTS(N), .DATA_W(W), .CONTEXTS(C), .ADDR_W(AW), .AGG_PORT(AGG_PORT), .STANDALONE(STANDALONE),
    .FIFO_ADDR_W(9), .MGMT_PORTS(MGMT_PORTS), .MGMT_KEY(MGMT_KEY), .MGMT_MAC(MGMT_MAC), .MGMT_IP(MGMT_IP),
    .MGMT_UDP_PORT(MGMT_UDP_PORT)) u_shell (
    .core_clk(core_clk), .core_rst(core_rst), .mac_clk({N{mac_clk}}), .mac_rst({N{mac_rst}}),
    .mac_rx_tdata(mac_rx_tdata), .mac_rx_tkeep(mac_rx_tkeep), .mac_rx_tvalid(mac_rx_tvalid),
    .mac_rx_tlast(mac_rx_tlast), .mac_rx_tuser(mac_rx_tlast & ~mac_rx_good),
    .mac_tx_tdata(mac_tx_tdata), .mac_tx_tkeep(mac_tx_tkeep), .mac_tx_tvalid(mac_tx_tvalid),
    .mac_tx_tlast(mac_tx_tlast), .mac_tx_tuser(mac_tx_tuser), .mac_tx_tready(mac_tx_tready),
    .rx_drop(), .mgmt_accepted(), .mgmt_bad_port(), .mgmt_malformed(), .mgmt_bad_tag(), .mgmt_replay(),
    .mgmt_rx_busy());
  generate
    for (p = 0; p < N; p = p + 1) begin : g_lock
      assign pcs_block_lock[p] = pcspma_status[p*8];
    end
  endgenerate

  // Status LEDs, registered in the core domain (the lock bits cross as quasi-static levels).
  reg [1:0] led_q;
  always @(posedge core_clk) led_q <= {&pcs_block_lock, !core_rst};
  assign led = led_q;


endmodule

`default_nettype wire
