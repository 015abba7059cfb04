// A ROWS x COLS weight-stationary PE array tile with its PSUM write port.
//
//            in_data (one vector x[.][j] per cycle, ROWS elements)
//              |  skew: row k delayed k cycles, then unpacked to fp32
//              v
//   row 0  ->[PE 0,0]->[PE 0,1]-> ... ->[PE 0,C-1]      PE k,m holds w[k][m] (load port: one row per cycle)
//   row 1  ->[PE 1,0]->[PE 1,1]-> ... ->[PE 1,C-1]      moving values flow right, partial sums flow down:
//     ...       |          |                 |           column m sums k = 0, 1, ..., ROWS-1 in row order
//   row R-1->[PE R-1,0]->  ...      ->[PE R-1,C-1]
//              |  deskew: column m delayed C-1-m cycles
//              v
//   stage A: one output row j of COLS sums       -> PSUM read request (rd_en, rd_index = j)
//   stage B: + rd_data (accumulate), NaN -> 0x7FC00000 -> PSUM write port (wr_valid, wr_index = j, wr_data)
//
// Latency: a vector sampled with in_valid at rising edge a is written to PSUM (wr_valid sampled) at edge
// a + ROWS + COLS + 1; vectors are accepted back to back, one per cycle. The PSUM memory reads synchronously:
// rd_en/rd_index are sampled at an edge, and rd_data holds that row from that edge to the next. A load must not
// overlap a stream.
module pe_tile #(
    parameter int ROWS = 4,
    parameter int COLS = 4,
    parameter int BROKEN_ROUNDING = 0,                    // 1: the fp32 adders truncate (the broken variant)
    localparam int RowBits = ROWS > 1 ? $clog2(ROWS) : 1
) (
    input  logic                 clk,
    input  logic                 rst,
    input  logic [1:0]           dtype,      // element format of ld_data and in_data: 0 bf16, 1 fp16
    // load port: stationary row ld_row; ld_first also clears every other row to +0
    input  logic                 ld_valid,
    input  logic                 ld_first,
    input  logic [RowBits-1:0]   ld_row,
    input  logic [COLS*16-1:0]   ld_data,    // element m at bits [16m +: 16]
    // moving stream, one vector per cycle; in_last marks the last vector of a pass
    input  logic                 in_valid,
    input  logic                 in_last,
    input  logic [ROWS*16-1:0]   in_data,    // element k at bits [16k +: 16]
    // PSUM port
    input  logic                 acc_en,     // 1: write rd_data + sum, 0: write sum
    output logic                 rd_en,
    output logic [31:0]          rd_index,
    input  logic [COLS*32-1:0]   rd_data,
    output logic                 wr_valid,
    output logic                 wr_last,
    output logic [31:0]          wr_index,
    output logic [COLS*32-1:0]   wr_data
);
  localparam bit TRUNCATE = BROKEN_ROUNDING != 0;

  // The PEs are registers updated in loops that call pe_fp32_pkg's functions, not ROWS x COLS module instances:
  // as Verilator 5.006 generates code per instance (about 175 MB of C++ for 32 x 32 instantiated PEs, against one loop
  // body here), which would make the build slow and the simulation's code far larger than any cache.

  // ---- load port: each column's element unpacked; the addressed row written, the others cleared on ld_first ----
  logic [31:0] w [ROWS][COLS], w_next [ROWS][COLS];   // PE k,m's stationary
  always_comb begin
    for (int k = 0; k < ROWS; k++)
      for (int m = 0; m < COLS; m++)
        if (ld_valid && ld_row == RowBits'(k)) w_next[k][m] = pe_fp32_pkg::unpack16(ld_data[16*m +: 16], dtype);
        else if (ld_valid && ld_first) w_next[k][m] = 32'd0;
        else w_next[k][m] = w[k][m];
  end
  always_ff @(posedge clk) w <= w_next;

  // ---- input skew: row k's element passes k registers (skew[k][0..k-1]), then is unpacked ----
  /* verilator lint_off UNUSEDSIGNAL */
  logic [15:0] skew [ROWS][ROWS], skew_next [ROWS][ROWS];  // only skew[k][d] with d < k are ever read
  /* verilator lint_on UNUSEDSIGNAL */
  always_comb begin
    skew_next = skew;
    for (int k = 1; k < ROWS; k++) begin
      skew_next[k][0] = in_data[16*k +: 16];
      for (int d = 1; d < k; d++) skew_next[k][d] = skew[k][d-1];
    end
  end
  always_ff @(posedge clk) skew <= skew_next;
  logic [31:0] row_in [ROWS];      // the moving value entering PE k,0
  always_comb begin
    row_in[0] = pe_fp32_pkg::unpack16(in_data[15:0], dtype);
    for (int k = 1; k < ROWS; k++) row_in[k] = pe_fp32_pkg::unpack16(skew[k][k-1], dtype);
  end

  // ---- the array ----
  // x[k][m]: the moving value PE k,m passes right (it entered PE k,m one cycle earlier); ps[k][m]: the partial sum
  // PE k,m passes down, with its handshake. The handshake enters with row 0 and moves right along it in step with
  // row 0's moving values (top_valid), then down each column with the partial sums.
  /* verilator lint_off UNUSEDSIGNAL */
  logic [31:0] x [ROWS][COLS];     // x[k][COLS-1] leaves the array unused
  logic ps_valid [ROWS][COLS];     // only the last column's handshake leaves the array: the columns run in step
  logic ps_last [ROWS][COLS];
  logic top_valid [COLS];          // top_*[COLS-1] is not passed on
  logic top_last [COLS];
  /* verilator lint_on UNUSEDSIGNAL */
  logic [31:0] ps [ROWS][COLS];
  // The next state is computed at the clock edge only (blocking assignments to step variables no other block
  // reads, then one non-blocking assignment of each whole array): computed as always_comb, the PE loop would run
  // again whenever an input changed between edges.
  logic [31:0] x_step [ROWS][COLS], ps_step [ROWS][COLS];
  logic ps_valid_step [ROWS][COLS], ps_last_step [ROWS][COLS], top_valid_step [COLS], top_last_step [COLS];
  /* verilator lint_off BLKSEQ */
  always_ff @(posedge clk) begin
    for (int m = 0; m < COLS; m++) begin
      top_valid_step[m] = !rst && (m == 0 ? in_valid : top_valid[m-1]);
      top_last_step[m] = m == 0 ? in_last : top_last[m-1];
    end
    for (int k = 0; k < ROWS; k++)
      for (int m = 0; m < COLS; m++) begin
        // PE k,m: its moving value comes from the left (or the skew), its partial sum from above (or +0: every
        // sum starts at +0)
        x_step[k][m] = m == 0 ? row_in[k] : x[k][m-1];
        ps_step[k][m] = pe_fp32_pkg::pe_mac(k == 0 ? 32'd0 : ps[k-1][m], w[k][m], x_step[k][m], TRUNCATE);
        ps_valid_step[k][m] = !rst && (k == 0 ? (m == 0 ? in_valid : top_valid[m-1]) : ps_valid[k-1][m]);
        ps_last_step[k][m] = k == 0 ? (m == 0 ? in_last : top_last[m-1]) : ps_last[k-1][m];
      end
    top_valid <= top_valid_step;
    top_last <= top_last_step;
    x <= x_step;
    ps <= ps_step;
    ps_valid <= ps_valid_step;
    ps_last <= ps_last_step;
  end
  /* verilator lint_on BLKSEQ */

  // ---- output deskew: column m passes COLS-1-m registers (deskew[m][0..COLS-2-m]), so that one output row
  // leaves per cycle ----
  /* verilator lint_off UNUSEDSIGNAL */
  logic [31:0] deskew [COLS][COLS], deskew_next [COLS][COLS];  // only deskew[m][d], d < COLS-1-m, are read
  /* verilator lint_on UNUSEDSIGNAL */
  always_comb begin
    deskew_next = deskew;
    for (int m = 0; m < COLS - 1; m++) begin
      deskew_next[m][0] = ps[ROWS-1][m];
      for (int d = 1; d < COLS - 1 - m; d++) deskew_next[m][d] = deskew[m][d-1];
    end
  end
  always_ff @(posedge clk) deskew <= deskew_next;
  logic [31:0] aligned [COLS];
  always_comb begin
    for (int m = 0; m < COLS - 1; m++) aligned[m] = deskew[m][COLS-2-m];
    aligned[COLS-1] = ps[ROWS-1][COLS-1];
  end

  // ---- stage A: the aligned output row; the PSUM read request ----
  logic a_valid, a_last;
  logic [31:0] a_index;
  assign a_valid = ps_valid[ROWS-1][COLS-1];
  assign a_last = ps_last[ROWS-1][COLS-1];
  always_ff @(posedge clk) begin
    if (rst || (a_valid && a_last)) a_index <= 32'd0;
    else if (a_valid) a_index <= a_index + 32'd1;
  end
  assign rd_en = a_valid && acc_en;
  assign rd_index = a_index;

  // ---- stage B: the accumulate adder and NaN canonicalisation, into the write port ----
  logic b_valid, b_last;
  logic [31:0] b_index;
  logic [31:0] b_sum [COLS];
  always_ff @(posedge clk) begin
    b_last <= a_last;
    b_index <= a_index;
    b_sum <= aligned;
    if (rst) b_valid <= 1'b0;
    else b_valid <= a_valid;
  end

  logic [31:0] accumulated [COLS];
  logic [COLS*32-1:0] accumulated_bits;
  always_comb begin
    for (int m = 0; m < COLS; m++) begin
      // the adder returns the canonical NaN itself; a sum stored without the add may be any NaN the PEs made
      accumulated[m] = acc_en ? pe_fp32_pkg::fp32_add(rd_data[32*m +: 32], b_sum[m], TRUNCATE) : b_sum[m];
      if (pe_fp32_pkg::is_nan(accumulated[m])) accumulated[m] = pe_fp32_pkg::CanonicalNan;
      accumulated_bits[32*m +: 32] = accumulated[m];
    end
  end

  always_ff @(posedge clk) begin
    wr_last <= b_last;
    wr_index <= b_index;
    wr_data <= accumulated_bits;
    if (rst) wr_valid <= 1'b0;
    else wr_valid <= b_valid;
  end
endmodule
