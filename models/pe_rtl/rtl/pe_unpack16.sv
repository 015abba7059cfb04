// A 16-bit element to fp32 as a module (pe_fp32_pkg::unpack16): dtype 0 bf16, 1 fp16; exact.
module pe_unpack16 (
    input  logic [15:0] h,
    input  logic [1:0]  dtype,
    output logic [31:0] f
);
  assign f = pe_fp32_pkg::unpack16(h, dtype);
endmodule
