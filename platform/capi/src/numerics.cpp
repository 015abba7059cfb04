// The C API's number conversions (pevp/pevp_numerics.h): the VP's own (pevp/numerics/convert.h), so a driver's
// packing and the engine's reading cannot drift apart.
#include "pevp/pevp_numerics.h"

#include "pevp/numerics/convert.h"

extern "C" {

uint16_t pevp_f32_to_bf16(float x) { return pevp::num::to_bf16(x); }
float pevp_bf16_to_f32(uint16_t bits) { return pevp::num::from_bf16(bits); }
uint16_t pevp_f32_to_fp16(float x) { return pevp::num::to_fp16(x); }
float pevp_fp16_to_f32(uint16_t bits) { return pevp::num::from_fp16(bits); }

uint8_t pevp_f32_to_fp8_e4m3(float x) { return pevp::num::to_fp8_e4m3(x); }
float pevp_fp8_e4m3_to_f32(uint8_t code) { return pevp::num::from_fp8_e4m3(code); }
uint8_t pevp_f32_to_fp8_e4m3fn(float x) { return pevp::num::to_fp8_e4m3fn(x); }
float pevp_fp8_e4m3fn_to_f32(uint8_t code) { return pevp::num::from_fp8_e4m3fn(code); }
uint8_t pevp_f32_to_fp8_e5m2(float x) { return pevp::num::to_fp8_e5m2(x); }
float pevp_fp8_e5m2_to_f32(uint8_t code) { return pevp::num::from_fp8_e5m2(code); }
uint8_t pevp_f32_to_fp8_e3m4(float x) { return pevp::num::to_fp8_e3m4(x); }
float pevp_fp8_e3m4_to_f32(uint8_t code) { return pevp::num::from_fp8_e3m4(code); }
uint8_t pevp_f32_to_fp8_e2m5(float x) { return pevp::num::to_fp8_e2m5(x); }
float pevp_fp8_e2m5_to_f32(uint8_t code) { return pevp::num::from_fp8_e2m5(code); }

}  // extern "C"
