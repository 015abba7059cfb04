// The fp32 multiplier as a module (pe_fp32_pkg::fp32_mul): RNE, subnormals, overflow to Inf, canonical NaN.
module pe_fp32_mul (
    input  logic [31:0] a,
    input  logic [31:0] b,
    output logic [31:0] p
);
  assign p = pe_fp32_pkg::fp32_mul(a, b);
endmodule
