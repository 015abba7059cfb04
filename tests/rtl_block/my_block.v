// An example APB4 slave for docs/cosim.md section 4, "Your own RTL block behind the bridge": two registers,
//   0x000 scratch  RW, every byte lane by PSTRB, reset 0xA5A5_0000
//   0x004 writes   RO, the number of writes the block accepted (wraps at 2^32)
// and one wait state on every transfer (PREADY low in the first access cycle), PSLVERR for any other offset.
`default_nettype none
module my_block (
  input  wire        PCLK,
  input  wire        PRESETn,
  input  wire        PSEL,
  input  wire        PENABLE,
  input  wire        PWRITE,
  input  wire [11:0] PADDR,
  input  wire [31:0] PWDATA,
  input  wire [3:0]  PSTRB,
  input  wire [2:0]  PPROT,
  output wire [31:0] PRDATA,
  output wire        PREADY,
  output wire        PSLVERR
);
  reg [31:0] scratch_q;
  reg [31:0] writes_q;
  reg        waited_q;  // the access phase has had its wait state
  wire access = PSEL & PENABLE;
  wire hit = PADDR == 12'h000 || PADDR == 12'h004;
  wire done = access & waited_q;
  wire [31:0] lanes = {{8{PSTRB[3]}}, {8{PSTRB[2]}}, {8{PSTRB[1]}}, {8{PSTRB[0]}}};
  always @(posedge PCLK or negedge PRESETn) begin
    if (!PRESETn) begin
      scratch_q <= 32'hA5A50000;
      writes_q <= 32'h0;
      waited_q <= 1'b0;
    end else begin
      waited_q <= access & ~waited_q;
      if (done & PWRITE & hit) begin
        if (PADDR == 12'h000) scratch_q <= (scratch_q & ~lanes) | (PWDATA & lanes);
        writes_q <= writes_q + 32'h1;
      end
    end
  end
  assign PREADY = ~access | waited_q;
  assign PRDATA = (done & ~PWRITE & hit) ? (PADDR == 12'h000 ? scratch_q : writes_q) : 32'h0;
  assign PSLVERR = done & ~hit;
  /* verilator lint_off UNUSEDSIGNAL */
  wire unused_ok = &{1'b0, PPROT};
  /* verilator lint_on UNUSEDSIGNAL */
endmodule
`default_nettype wire
