// Operand decoders compiled once per SIMD target with the fast kernel (matmul_simd.cpp) and dispatched to the
// best one the CPU supports; operands.cpp's decoders call them where they apply.
#pragma once

#include <cstddef>
#include <cstdint>

namespace pevp::pe {

// `count` bf16 values at `src` (little-endian, `src` 2-byte aligned) widened to fp32 -- each value's 16 bits as the
// high half of the float's -- a vector at a time: the bits of the scalar decoder, NaN payloads included.
void widen_bf16(const std::uint8_t* src, std::size_t count, float* dst);

}  // namespace pevp::pe
