/* The C API's conversions (pevp/pevp_numerics.h) as a filter, for the Python client's test of the same rounding:
 * reads little-endian fp32 values on stdin until its end, and writes for each, in this order, its fp8 e4m3, e4m3fn,
 * e5m2, e3m4 and e2m5 codes (one byte each) and its bf16 and fp16 codes (two bytes each, little-endian). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "pevp/pevp_numerics.h"

int main(void) {
  unsigned char in[4], out[9];
  while (fread(in, 1, sizeof in, stdin) == sizeof in) {
    const uint32_t bits = (uint32_t)in[0] | (uint32_t)in[1] << 8 | (uint32_t)in[2] << 16 | (uint32_t)in[3] << 24;
    float x;
    uint16_t bf16, fp16;
    memcpy(&x, &bits, sizeof x);
    out[0] = pevp_f32_to_fp8_e4m3(x);
    out[1] = pevp_f32_to_fp8_e4m3fn(x);
    out[2] = pevp_f32_to_fp8_e5m2(x);
    out[3] = pevp_f32_to_fp8_e3m4(x);
    out[4] = pevp_f32_to_fp8_e2m5(x);
    bf16 = pevp_f32_to_bf16(x);
    fp16 = pevp_f32_to_fp16(x);
    out[5] = (unsigned char)(bf16 & 0xFF);
    out[6] = (unsigned char)(bf16 >> 8);
    out[7] = (unsigned char)(fp16 & 0xFF);
    out[8] = (unsigned char)(fp16 >> 8);
    if (fwrite(out, 1, sizeof out, stdout) != sizeof out) return 1;
  }
  return ferror(stdin) ? 1 : 0;
}
