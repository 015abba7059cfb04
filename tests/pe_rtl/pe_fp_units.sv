// The PE's arithmetic units side by side, for their unit tests (tests/pe_rtl/test_fp_units.cpp): the fp32 adder
// (rounding and truncating), the fp32 multiplier and the 16-bit unpackers, all combinational.
module pe_fp_units (
    input  logic [31:0] a,
    input  logic [31:0] b,
    input  logic [15:0] h,
    output logic [31:0] sum,
    output logic [31:0] sum_truncated,
    output logic [31:0] product,
    output logic [31:0] from_bf16,
    output logic [31:0] from_fp16
);
  pe_fp32_add #(.TRUNCATE(1'b0)) add (.a(a), .b(b), .s(sum));
  pe_fp32_add #(.TRUNCATE(1'b1)) add_truncated (.a(a), .b(b), .s(sum_truncated));
  pe_fp32_mul mul (.a(a), .b(b), .p(product));
  pe_unpack16 bf16 (.h(h), .dtype(2'd0), .f(from_bf16));
  pe_unpack16 fp16 (.h(h), .dtype(2'd1), .f(from_fp16));
endmodule
