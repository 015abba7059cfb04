// Which SIMD instruction set the fast matmul kernel (compute.h, matmul_pass_fast) runs with on this host.
//
// matmul_pass_fast is compiled once per x86 SIMD target (Google Highway: AVX-512, AVX2, SSE4, SSSE3, portable) and
// picks the best one the CPU supports at its first call, so one binary runs on any x86-64. The results are the same
// bits on every target (docs/numerics-matmul.md "The kernels"); this name is for tests that force each target in
// turn and for benchmark labels.
#pragma once

namespace pevp::pe {

// Highway's name of the target matmul_pass_fast dispatches to now ("AVX3" = AVX-512, "AVX2", "SSE4", "SSSE3", or
// the portable C++ fallback, "SCALAR" with GCC < 12.3, "EMU128" otherwise). Follows
// hwy::SetSupportedTargetsForTest when a test forces a target.
const char* matmul_fast_target();

}  // namespace pevp::pe
