// The fp32 adder as a module (pe_fp32_pkg::fp32_add): RNE -- or truncation with TRUNCATE, the broken variant --,
// subnormals, overflow to Inf, x + -x = +0, -0 + -0 = -0, canonical NaN.
module pe_fp32_add #(
    parameter bit TRUNCATE = 1'b0
) (
    input  logic [31:0] a,
    input  logic [31:0] b,
    output logic [31:0] s
);
  assign s = pe_fp32_pkg::fp32_add(a, b, TRUNCATE);
endmodule
