/* pevp_numerics.h -- the VP's narrow number formats for C drivers: fp32 to and from bf16, fp16 and each 8-bit
 * float the tensor engine reads, bit for bit as the VP converts (they call its own conversions, pevp/numerics;
 * docs/numerics.md has the formats' tables). A driver packs its operands with these before writing them into SBUF
 * and unpacks results with them, so its host-side reference rounds exactly as the VP does.
 *
 * Every fp32 -> narrow conversion rounds to nearest, ties to even, and keeps subnormals and the sign of zero;
 * narrow -> fp32 is exact. NaN, infinity and overflow follow each format's rules (docs/numerics.md "Special
 * values"):
 *   bf16, fp16           NaN -> the canonical quiet NaN (0x7FC0, 0x7E00); a value at or past max + half an ulp
 *                        -> +-Inf.
 *   fp8 e4m3 (max 240), e5m2 (57344), e3m4 (15.5), e2m5 (3.9375): IEEE-like, Inf and NaN at the top exponent; NaN
 *                        -> the format's canonical NaN, overflow -> +-Inf as for bf16.
 *   fp8 e4m3fn (max 448, OCP): no Inf; NaN -> 0x7F (S.1111.111), finite overflow and +-Inf saturate to +-448.
 * The functions need no VP and no pevp_open: they are plain functions of their argument, safe from any thread.
 * C99; link pevp::capi. */
#ifndef PEVP_PEVP_NUMERICS_H
#define PEVP_PEVP_NUMERICS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

uint16_t pevp_f32_to_bf16(float x);
float pevp_bf16_to_f32(uint16_t bits);
uint16_t pevp_f32_to_fp16(float x);
float pevp_fp16_to_f32(uint16_t bits);

uint8_t pevp_f32_to_fp8_e4m3(float x);   /* IEEE-like, max 240 (CAYMAN's FP8_EXP4) */
float pevp_fp8_e4m3_to_f32(uint8_t code);
uint8_t pevp_f32_to_fp8_e4m3fn(float x); /* OCP e4m3fn, max 448, saturating (FP8_EXP4 from MARIANA on) */
float pevp_fp8_e4m3fn_to_f32(uint8_t code);
uint8_t pevp_f32_to_fp8_e5m2(float x);   /* max 57344 (FP8_EXP5) */
float pevp_fp8_e5m2_to_f32(uint8_t code);
uint8_t pevp_f32_to_fp8_e3m4(float x);   /* max 15.5 (FP8_EXP3; a model decision, docs/numerics.md) */
float pevp_fp8_e3m4_to_f32(uint8_t code);
uint8_t pevp_f32_to_fp8_e2m5(float x);   /* max 3.9375 (FP8_EXP2; a model decision) */
float pevp_fp8_e2m5_to_f32(uint8_t code);

#ifdef __cplusplus
}
#endif

#endif /* PEVP_PEVP_NUMERICS_H */
