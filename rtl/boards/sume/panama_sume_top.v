// panama_sume_top: board shell for the NetFPGA SUME (Virtex-7 xc7vx690tffg1761-3), four SFP+
// ports at 10 Gbit/s. Each port is an AXI 10G Ethernet Subsystem (10GBASE-R, 64-bit AXI-Stream
// at the MAC clock, 156.25 MHz, one clock for all four ports, from port 0's shared logic); the
// core (panama_top, --ports 4 --gbps 10 --mhz 200) runs on its own 200 MHz clock from the board
// oscillator through an MMCM. Between each MAC and the core, panama_port_cdc holds two frame-safe
// asynchronous FIFOs. The frames the core builds (m_agg) leave on port AGG_PORT, interleaved frame
// by frame with that port's own traffic, towards the switch that multicasts them (switch-attached
// placement, accelerator.md). The register file's AXI4-Lite slave is reached through
// S_AXIL_* ports of this top, tied off here until management over Ethernet is attached.
`timescale 1ns / 1ps
`default_nettype none

module panama_sume_top #(
  // Port (0-3, SFP+ cage sfp_{AGG_PORT+1}) that carries the built frames.
  parameter AGG_PORT = 3
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

  localparam N = 4;
  localparam W = 64;
  localparam AW = 14;   // register-file address bits of the core (regmap.json)

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

  axi_10g_ethernet_shared u_mac0 (
    .refclk_p(sfp_mgt_refclk_p), .refclk_n(sfp_mgt_refclk_n), .dclk(drp_clk), .reset(arst),
    .coreclk_out(mac_clk), .rxrecclk_out(), .areset_datapathclk_out(areset_datapathclk),
    .txusrclk_out(txusrclk), .txusrclk2_out(txusrclk2), .gttxreset_out(gttxreset),
    .gtrxreset_out(gtrxreset), .txuserrdy_out(txuserrdy), .qplllock_out(qplllock),
    .qplloutclk_out(qplloutclk), .qplloutrefclk_out(qplloutrefclk),
    .reset_counter_done_out(reset_counter_done),
    .tx_axis_aresetn(!mac_rst), .rx_axis_aresetn(!mac_rst), .tx_ifg_delay(8'd0),
    .s_axis_tx_tdata(mac_tx_tdata[0 +: W]), .s_axis_tx_tkeep(mac_tx_tkeep[0 +: W/8]),
    .s_axis_tx_tlast(mac_tx_tlast[0]), .s_axis_tx_tuser(mac_tx_tuser[0]),
    .s_axis_tx_tvalid(mac_tx_tvalid[0]), .s_axis_tx_tready(mac_tx_tready[0]),
    .s_axis_pause_tdata(16'd0), .s_axis_pause_tvalid(1'b0),
    .m_axis_rx_tdata(mac_rx_tdata[0 +: W]), .m_axis_rx_tkeep(mac_rx_tkeep[0 +: W/8]),
    .m_axis_rx_tlast(mac_rx_tlast[0]), .m_axis_rx_tuser(mac_rx_good[0]),
    .m_axis_rx_tvalid(mac_rx_tvalid[0]),
    .tx_statistics_valid(), .tx_statistics_vector(), .rx_statistics_valid(),
    .rx_statistics_vector(),
    .mac_tx_configuration_vector(MAC_TX_CONFIG), .mac_rx_configuration_vector(MAC_RX_CONFIG),
    .mac_status_vector(), .pcs_pma_configuration_vector(536'd0), .pcs_pma_status_vector(),
    .pcspma_status(pcspma_status[0 +: 8]), .sim_speedup_control(1'b0), .signal_detect(1'b1),
    .tx_fault(sfp_tx_fault[0]), .tx_disable(sfp_tx_disable[0]), .resetdone_out(resetdone[0]),
    .txp(sfp_tx_p[0]), .txn(sfp_tx_n[0]), .rxp(sfp_rx_p[0]), .rxn(sfp_rx_n[0]));

  genvar p;
  generate
    for (p = 1; p < N; p = p + 1) begin : g_mac
      axi_10g_ethernet_nonshared u_mac (
        .coreclk(mac_clk), .dclk(drp_clk), .txusrclk(txusrclk), .txusrclk2(txusrclk2),
        .txoutclk(), .rxrecclk_out(), .areset(arst), .areset_coreclk(areset_datapathclk),
        .gttxreset(gttxreset), .gtrxreset(gtrxreset), .txuserrdy(txuserrdy),
        .qplllock(qplllock), .qplloutclk(qplloutclk), .qplloutrefclk(qplloutrefclk),
        .reset_counter_done(reset_counter_done),
        .tx_axis_aresetn(!mac_rst), .rx_axis_aresetn(!mac_rst), .tx_ifg_delay(8'd0),
        .s_axis_tx_tdata(mac_tx_tdata[p*W +: W]), .s_axis_tx_tkeep(mac_tx_tkeep[p*W/8 +: W/8]),
        .s_axis_tx_tlast(mac_tx_tlast[p]), .s_axis_tx_tuser(mac_tx_tuser[p]),
        .s_axis_tx_tvalid(mac_tx_tvalid[p]), .s_axis_tx_tready(mac_tx_tready[p]),
        .s_axis_pause_tdata(16'd0), .s_axis_pause_tvalid(1'b0),
        .m_axis_rx_tdata(mac_rx_tdata[p*W +: W]), .m_axis_rx_tkeep(mac_rx_tkeep[p*W/8 +: W/8]),
        .m_axis_rx_tlast(mac_rx_tlast[p]), .m_axis_rx_tuser(mac_rx_good[p]),
        .m_axis_rx_tvalid(mac_rx_tvalid[p]),
        .tx_statistics_valid(), .tx_statistics_vector(), .rx_statistics_valid(),
        .rx_statistics_vector(),
        .mac_tx_configuration_vector(MAC_TX_CONFIG), .mac_rx_configuration_vector(MAC_RX_CONFIG),
        .mac_status_vector(), .pcs_pma_configuration_vector(536'd0), .pcs_pma_status_vector(),
        .pcspma_status(pcspma_status[p*8 +: 8]), .sim_speedup_control(1'b0),
        .signal_detect(1'b1), .tx_fault(sfp_tx_fault[p]), .tx_disable(sfp_tx_disable[p]),
        .resetdone_out(resetdone[p]),
        .txp(sfp_tx_p[p]), .txn(sfp_tx_n[p]), .rxp(sfp_rx_p[p]), .rxn(sfp_rx_n[p]));
    end
  endgenerate

  // ---------------- clock-domain crossing, per port ----------------
  wire [N*W-1:0]   core_s_tdata, core_m_tdata;
  wire [N*W/8-1:0] core_s_tkeep, core_m_tkeep;
  wire [N-1:0]     core_s_tvalid, core_s_tlast, core_s_tuser, core_s_tready;
  wire [N-1:0]     core_m_tvalid, core_m_tlast, core_m_tuser, core_m_tready;
  wire [N-1:0]     agg_tready;
  wire [W-1:0]     agg_tdata;
  wire [W/8-1:0]   agg_tkeep;
  wire             agg_tvalid, agg_tlast;

  generate
    for (p = 0; p < N; p = p + 1) begin : g_cdc
      assign pcs_block_lock[p] = pcspma_status[p*8];
      panama_port_cdc #(.DATA_WIDTH(W), .ADDR_WIDTH(9), .AGG(p == AGG_PORT)) u_cdc (
        .mac_clk(mac_clk), .mac_rst(mac_rst), .core_clk(core_clk), .core_rst(core_rst),
        .mac_rx_tdata(mac_rx_tdata[p*W +: W]), .mac_rx_tkeep(mac_rx_tkeep[p*W/8 +: W/8]),
        .mac_rx_tvalid(mac_rx_tvalid[p]), .mac_rx_tlast(mac_rx_tlast[p]),
        // The 10G MAC flags a good frame with tuser on its last beat; the core wants bad = 1.
        .mac_rx_tuser(mac_rx_tlast[p] && !mac_rx_good[p]),
        .mac_tx_tdata(mac_tx_tdata[p*W +: W]), .mac_tx_tkeep(mac_tx_tkeep[p*W/8 +: W/8]),
        .mac_tx_tvalid(mac_tx_tvalid[p]), .mac_tx_tlast(mac_tx_tlast[p]),
        .mac_tx_tuser(mac_tx_tuser[p]), .mac_tx_tready(mac_tx_tready[p]),
        .rx_drop(),
        .s_axis_tdata(core_s_tdata[p*W +: W]), .s_axis_tkeep(core_s_tkeep[p*W/8 +: W/8]),
        .s_axis_tvalid(core_s_tvalid[p]), .s_axis_tlast(core_s_tlast[p]),
        .s_axis_tuser(core_s_tuser[p]), .s_axis_tready(core_s_tready[p]),
        .m_axis_tdata(core_m_tdata[p*W +: W]), .m_axis_tkeep(core_m_tkeep[p*W/8 +: W/8]),
        .m_axis_tvalid(core_m_tvalid[p]), .m_axis_tlast(core_m_tlast[p]),
        .m_axis_tuser(core_m_tuser[p]), .m_axis_tready(core_m_tready[p]),
        .agg_axis_tdata(agg_tdata), .agg_axis_tkeep(agg_tkeep), .agg_axis_tvalid(agg_tvalid),
        .agg_axis_tlast(agg_tlast), .agg_axis_tready(agg_tready[p]));
    end
  endgenerate

  // ---------------- the core ----------------
  // Register-file access: tied off until management over Ethernet (docs/mgmt.md) drives it.
  wire s_axil_awready, s_axil_wready, s_axil_bvalid, s_axil_arready, s_axil_rvalid;
  wire [1:0] s_axil_bresp, s_axil_rresp;
  wire [31:0] s_axil_rdata;

  panama_top u_core (
    .clk(core_clk), .rst(core_rst),
    .s00_axis_tdata(core_s_tdata[0*W +: W]), .s00_axis_tkeep(core_s_tkeep[0*W/8 +: W/8]),
    .s00_axis_tvalid(core_s_tvalid[0]), .s00_axis_tlast(core_s_tlast[0]),
    .s00_axis_tuser(core_s_tuser[0]), .s00_axis_tready(core_s_tready[0]),
    .m00_axis_tdata(core_m_tdata[0*W +: W]), .m00_axis_tkeep(core_m_tkeep[0*W/8 +: W/8]),
    .m00_axis_tvalid(core_m_tvalid[0]), .m00_axis_tlast(core_m_tlast[0]),
    .m00_axis_tuser(core_m_tuser[0]), .m00_axis_tready(core_m_tready[0]),
    .s01_axis_tdata(core_s_tdata[1*W +: W]), .s01_axis_tkeep(core_s_tkeep[1*W/8 +: W/8]),
    .s01_axis_tvalid(core_s_tvalid[1]), .s01_axis_tlast(core_s_tlast[1]),
    .s01_axis_tuser(core_s_tuser[1]), .s01_axis_tready(core_s_tready[1]),
    .m01_axis_tdata(core_m_tdata[1*W +: W]), .m01_axis_tkeep(core_m_tkeep[1*W/8 +: W/8]),
    .m01_axis_tvalid(core_m_tvalid[1]), .m01_axis_tlast(core_m_tlast[1]),
    .m01_axis_tuser(core_m_tuser[1]), .m01_axis_tready(core_m_tready[1]),
    .s02_axis_tdata(core_s_tdata[2*W +: W]), .s02_axis_tkeep(core_s_tkeep[2*W/8 +: W/8]),
    .s02_axis_tvalid(core_s_tvalid[2]), .s02_axis_tlast(core_s_tlast[2]),
    .s02_axis_tuser(core_s_tuser[2]), .s02_axis_tready(core_s_tready[2]),
    .m02_axis_tdata(core_m_tdata[2*W +: W]), .m02_axis_tkeep(core_m_tkeep[2*W/8 +: W/8]),
    .m02_axis_tvalid(core_m_tvalid[2]), .m02_axis_tlast(core_m_tlast[2]),
    .m02_axis_tuser(core_m_tuser[2]), .m02_axis_tready(core_m_tready[2]),
    .s03_axis_tdata(core_s_tdata[3*W +: W]), .s03_axis_tkeep(core_s_tkeep[3*W/8 +: W/8]),
    .s03_axis_tvalid(core_s_tvalid[3]), .s03_axis_tlast(core_s_tlast[3]),
    .s03_axis_tuser(core_s_tuser[3]), .s03_axis_tready(core_s_tready[3]),
    .m03_axis_tdata(core_m_tdata[3*W +: W]), .m03_axis_tkeep(core_m_tkeep[3*W/8 +: W/8]),
    .m03_axis_tvalid(core_m_tvalid[3]), .m03_axis_tlast(core_m_tlast[3]),
    .m03_axis_tuser(core_m_tuser[3]), .m03_axis_tready(core_m_tready[3]),
    .m_agg_axis_tdata(agg_tdata), .m_agg_axis_tkeep(agg_tkeep), .m_agg_axis_tvalid(agg_tvalid),
    .m_agg_axis_tlast(agg_tlast), .m_agg_axis_tready(agg_tready[AGG_PORT]),
    .s_axil_awaddr({AW{1'b0}}), .s_axil_awprot(3'd0), .s_axil_awvalid(1'b0),
    .s_axil_awready(s_axil_awready), .s_axil_wdata(32'd0), .s_axil_wstrb(4'd0),
    .s_axil_wvalid(1'b0), .s_axil_wready(s_axil_wready), .s_axil_bresp(s_axil_bresp),
    .s_axil_bvalid(s_axil_bvalid), .s_axil_bready(1'b1), .s_axil_araddr({AW{1'b0}}),
    .s_axil_arprot(3'd0), .s_axil_arvalid(1'b0), .s_axil_arready(s_axil_arready),
    .s_axil_rdata(s_axil_rdata), .s_axil_rresp(s_axil_rresp), .s_axil_rvalid(s_axil_rvalid),
    .s_axil_rready(1'b1));

  // Status LEDs, registered in the core domain (the lock bits cross as quasi-static levels).
  reg [1:0] led_q;
  always @(posedge core_clk) led_q <= {&pcs_block_lock, !core_rst};
  assign led = led_q;


endmodule

`default_nettype wire
