// The "RTL" of the co-simulation example: an APB4 master (AMBA APB Protocol Specification, APB4) whose transfers
// come from the testbench through DPI-C. In each idle cycle it asks tb_next() for the next transfer; it drives the
// setup phase, then the access phase until PREADY, and hands the completing cycle's PRDATA and PSLVERR back with
// tb_complete(). tb_next() returning 0 means "nothing yet, ask again next cycle"; 3 means the stimulus is over:
// the master raises `finished` and stays idle. Replace this module with your own RTL master (or a design whose
// APB master port drives the same pins) -- docs/cosim-reference.md, "The testbench".
module apb_master (
    input  logic        PCLK,
    input  logic        PRESETn,
    output logic        PSEL,
    output logic        PENABLE,
    output logic        PWRITE,
    output logic [31:0] PADDR,
    output logic [31:0] PWDATA,
    output logic [3:0]  PSTRB,
    output logic [2:0]  PPROT,
    input  logic        PREADY,
    input  logic [31:0] PRDATA,
    input  logic        PSLVERR,
    output logic        finished
);
  // cmd: 0 none, 1 write, 2 read, 3 finished. The C side owns the sequence (and polls, read-modify-writes).
  import "DPI-C" function int tb_next(output int addr, output int wdata, output int strb, output int prot);
  import "DPI-C" function void tb_complete(input int rdata, input int slverr);

  typedef enum logic [1:0] {IDLE, SETUP, ACCESS, DONE} state_t;
  state_t state;

  // The DPI outputs are C ints; only their low PSTRB / PPROT bits are driven.
  /* verilator lint_off UNUSEDSIGNAL */
  int cmd, addr, wdata, strb, prot;
  /* verilator lint_on UNUSEDSIGNAL */

  always_ff @(posedge PCLK) begin
    if (!PRESETn) begin
      state    <= IDLE;
      PSEL     <= 1'b0;
      PENABLE  <= 1'b0;
      PWRITE   <= 1'b0;
      PADDR    <= 32'h0;
      PWDATA   <= 32'h0;
      PSTRB    <= 4'h0;
      PPROT    <= 3'h0;
      finished <= 1'b0;
    end else begin
      case (state)
        IDLE: begin
          // The transfer is taken and driven in the same cycle: the call's results are used at once.
          /* verilator lint_off BLKSEQ */
          cmd = tb_next(addr, wdata, strb, prot);
          /* verilator lint_on BLKSEQ */
          if (cmd == 1 || cmd == 2) begin
            PSEL    <= 1'b1;
            PENABLE <= 1'b0;
            PWRITE  <= (cmd == 1);
            PADDR   <= addr;
            PWDATA  <= (cmd == 1) ? wdata : 32'h0;
            PSTRB   <= (cmd == 1) ? strb[3:0] : 4'h0;  // APB4: no strobes on a read
            PPROT   <= prot[2:0];
            state   <= SETUP;
          end else if (cmd == 3) begin
            finished <= 1'b1;
            state    <= DONE;
          end
        end
        SETUP: begin
          PENABLE <= 1'b1;
          state   <= ACCESS;
        end
        ACCESS: begin
          if (PREADY) begin
            tb_complete(PRDATA, {31'b0, PSLVERR});
            PSEL    <= 1'b0;
            PENABLE <= 1'b0;
            PWRITE  <= 1'b0;
            PSTRB   <= 4'h0;
            state   <= IDLE;
          end
        end
        default: ;
      endcase
    end
  end
endmodule
