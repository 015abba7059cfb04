// The PE array's arithmetic as functions: 16-bit element unpack, the fp32 multiplier, the fp32 adder and the one
// rounding step they share. The modules pe_unpack16, pe_fp32_mul and pe_fp32_add wrap them one to one; the tile
// calls them inside loops over its PEs (pe_tile.sv says why).
package pe_fp32_pkg;

  localparam logic [31:0] CanonicalNan = 32'h7FC00000;

  /* verilator lint_off UNUSEDSIGNAL */  // f[31]: a NaN of either sign
  function automatic logic is_nan(input logic [31:0] f);
    return f[30:0] > 31'h7F800000;
  endfunction
  /* verilator lint_on UNUSEDSIGNAL */

  // A 16-bit element to fp32, exactly. dtype 0, bf16: fp32's upper half. dtype 1, fp16 (1-5-10): the exponent
  // re-biased by 112; a subnormal becomes a normal fp32 (its leading one the hidden bit); NaN payloads and signs
  // kept.
  function automatic logic [31:0] unpack16(input logic [15:0] h, input logic [1:0] dtype);
    logic [4:0] e;
    logic [9:0] m, frac;
    logic [7:0] exp;
    e = h[14:10];
    m = h[9:0];
    if (dtype == 2'd0) return {h, 16'd0};
    if (e == 5'd31) return {h[15], 8'hFF, m, 13'd0};
    if (e != 5'd0) return {h[15], 8'(e) + 8'd112, m, 13'd0};
    if (m == 10'd0) return {h[15], 31'd0};
    // A subnormal m * 2^-24: shift the leading one out at bit 10 (frac keeps the bits below it); each place
    // shifted lowers the exponent of 1.frac * 2^(9 - 24) = 2^-15 (biased 112) by one.
    frac = m;
    exp = 8'd112;
    if (frac[9:2] == 8'd0) begin frac = frac << 8; exp = exp - 8'd8; end
    if (frac[9:6] == 4'd0) begin frac = frac << 4; exp = exp - 8'd4; end
    if (frac[9:8] == 2'd0) begin frac = frac << 2; exp = exp - 8'd2; end
    if (frac[9] == 1'b0) begin frac = frac << 1; exp = exp - 8'd1; end
    frac = frac << 1;  // drop the leading one
    return {h[15], exp, frac, 13'd0};
  endfunction

  // Rounds an exact, non-zero magnitude sig * 2^(top_exp - 127 - 47) to fp32 (top_exp: the biased exponent the
  // result would have if sig's bit 47 were its leading one). Round to nearest, ties to even -- or, with truncate,
  // toward zero (the broken variant's adder). Below the normal range the value becomes a subnormal, rounded once at
  // its own precision, or 0; past the largest finite value, Inf. Bits below the 25th under the leading one may be
  // folded into one sticky bit (the adder's alignment does).
  function automatic logic [31:0] round_pack(input logic sign, input logic signed [11:0] top_exp,
                                             input logic [47:0] sig, input logic truncate);
    logic [47:0] norm, aligned;
    logic signed [11:0] exp;
    logic [11:0] rshift;
    logic subnormal, lost, guard, sticky;
    logic [24:0] rounded;
    // Normalise in six steps (32, 16, 8, 4, 2, 1 places): the leading one ends at bit 47.
    norm = sig;
    exp = top_exp;
    if (norm[47:16] == 32'd0) begin norm = norm << 32; exp = exp - 12'sd32; end
    if (norm[47:32] == 16'd0) begin norm = norm << 16; exp = exp - 12'sd16; end
    if (norm[47:40] == 8'd0) begin norm = norm << 8; exp = exp - 12'sd8; end
    if (norm[47:44] == 4'd0) begin norm = norm << 4; exp = exp - 12'sd4; end
    if (norm[47:46] == 2'd0) begin norm = norm << 2; exp = exp - 12'sd2; end
    if (norm[47] == 1'b0) begin norm = norm << 1; exp = exp - 12'sd1; end
    // Below exponent 1 the significand shifts right into the subnormal range (exponent field 0).
    subnormal = exp < 12'sd1;
    rshift = subnormal ? 12'(12'sd1 - exp) : 12'd0;
    aligned = norm >> rshift;
    lost = (aligned << rshift) != norm;
    guard = aligned[23];
    sticky = lost | (|aligned[22:0]);
    rounded = {1'b0, aligned[47:24]} + 25'(!truncate && guard && (sticky || aligned[24]));
    // A subnormal that rounds up into bit 23 is the smallest normal: exponent field 1.
    if (subnormal) return {sign, 7'd0, rounded[23], rounded[22:0]};
    // A carry out of the mantissa (1.11..1 + ulp = 10.0): one binade up, mantissa 0.
    if (rounded[24]) exp = exp + 12'sd1;
    if (exp >= 12'sd255) return {sign, 8'hFF, 23'd0};
    return {sign, exp[7:0], rounded[24] ? 23'd0 : rounded[22:0]};
  endfunction

  // fp32 multiply: the exact 48-bit product of the significands, rounded once (RNE, subnormals, overflow to Inf).
  // Inf * 0 and any NaN give the canonical NaN; a zero operand gives a zero signed by the sign rule.
  function automatic logic [31:0] fp32_mul(input logic [31:0] a, input logic [31:0] b);
    logic sign, a_zero, b_zero, a_inf, b_inf;
    logic [7:0] a_exp, b_exp;  // the exponent each significand scales by: 1 for subnormals
    sign = a[31] ^ b[31];
    a_zero = a[30:0] == 31'd0;
    b_zero = b[30:0] == 31'd0;
    a_inf = a[30:0] == 31'h7F800000;
    b_inf = b[30:0] == 31'h7F800000;
    if (is_nan(a) || is_nan(b) || (a_inf && b_zero) || (b_inf && a_zero)) return CanonicalNan;
    if (a_inf || b_inf) return {sign, 8'hFF, 23'd0};
    if (a_zero || b_zero) return {sign, 31'd0};
    a_exp = a[30:23] == 8'd0 ? 8'd1 : a[30:23];
    b_exp = b[30:23] == 8'd0 ? 8'd1 : b[30:23];
    // bit 47 of the product weighs 2^(a_exp - 150 + b_exp - 150 + 47): biased, a_exp + b_exp - 126
    return round_pack(sign, $signed(12'(a_exp)) + $signed(12'(b_exp)) - 12'sd126,
                      {24'd0, a[30:23] != 8'd0, a[22:0]} * {24'd0, b[30:23] != 8'd0, b[22:0]}, 1'b0);
  endfunction

  // fp32 add: the operand of smaller magnitude aligned to the larger with guard, round and sticky bits (27 bits,
  // enough for one correct rounding), added or subtracted, rounded once (RNE or, with truncate, toward zero). An
  // exact zero sum is +0 unless both operands are -0. Any NaN, and Inf - Inf, give the canonical NaN.
  function automatic logic [31:0] fp32_add(input logic [31:0] a, input logic [31:0] b, input logic truncate);
    logic a_inf, b_inf;
    logic [31:0] major, minor;       // |major| >= |minor|: magnitudes order like their bit patterns
    logic [7:0] major_exp, minor_exp;
    logic [7:0] distance;
    logic [26:0] major_sig, minor_sig, minor_shifted;
    logic [27:0] sum;
    a_inf = a[30:0] == 31'h7F800000;
    b_inf = b[30:0] == 31'h7F800000;
    if (is_nan(a) || is_nan(b) || (a_inf && b_inf && a[31] != b[31])) return CanonicalNan;
    major = b[30:0] > a[30:0] ? b : a;
    minor = b[30:0] > a[30:0] ? a : b;
    if (a_inf || b_inf) return {major[31], 8'hFF, 23'd0};
    major_exp = major[30:23] == 8'd0 ? 8'd1 : major[30:23];
    minor_exp = minor[30:23] == 8'd0 ? 8'd1 : minor[30:23];
    distance = major_exp - minor_exp;
    major_sig = {major[30:23] != 8'd0, major[22:0], 3'b000};
    minor_sig = {minor[30:23] != 8'd0, minor[22:0], 3'b000};
    minor_shifted = minor_sig >> distance;
    minor_shifted[0] = minor_shifted[0] | ((minor_shifted << distance) != minor_sig);  // sticky
    sum = major[31] == minor[31] ? {1'b0, major_sig} + {1'b0, minor_shifted}
                                 : {1'b0, major_sig} - {1'b0, minor_shifted};
    if (sum == 28'd0) return {a[31] & b[31], 31'd0};  // x + -x = +0; -0 + -0 = -0
    // bit 26 of major_sig weighs 2^(major_exp - 127); placed at bits 47..20, sum's bit 47 has biased exponent
    // major_exp + 1
    return round_pack(major[31], $signed(12'(major_exp)) + 12'sd1, {sum, 20'd0}, truncate);
  endfunction

  // One PE's step: the partial sum from above plus its stationary times the moving value, a rounded multiply then
  // a rounded add, never fused.
  function automatic logic [31:0] pe_mac(input logic [31:0] ps_in, input logic [31:0] w, input logic [31:0] x,
                                         input logic truncate);
    return fp32_add(ps_in, fp32_mul(w, x), truncate);
  endfunction

endpackage
