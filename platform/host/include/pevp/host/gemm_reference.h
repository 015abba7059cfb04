// References for checking a GEMM: an fp64 reference of the mathematical product, the defined-order fp32 reference
// that predicts the PE array's bits exactly, and error metrics between a result and a reference.
//
// The defined order (../shared/DESIGN.md "Defined numerics", docs/numerics-matmul.md) applied per k-tile: for each
// (m, n) and each k-tile in order, s = +0; for k in the tile: s = s + a * b (fp32 multiply, then fp32 add, never fused:
// this library is built with -ffp-contract=off); C = (first tile ? s : C + s); a NaN result is stored as 0x7FC00000
// after every write to C, as the PE array does. fp32_mode Low rounds each operand to tf32 first (num::to_tf32); High
// uses the fp32 values; Low_High runs, per k-tile, the three passes of compute.h (hi*hi', then + hi*lo', then +
// lo*hi', from pe::split_tf32). The operands must be the quantized ones (EncodedOperand::quantized).
#pragma once

#include <cstddef>

#include "pevp/host/error.h"
#include "pevp/host/gemm_plan.h"
#include "pevp/host/matrix.h"
#include "pevp/isa/enums.h"

namespace pevp::host {

// C = A @ B with fp64 products (each product of two floats is exact in fp64) and fp64 sums, by OpenBLAS dgemm in its
// own summation order; elements whose row of A or column of B holds a NaN or an infinity are summed in k order
// instead, so non-finite inputs give exactly the IEEE result of the plain loop. Throws HostError when the inner
// dimensions differ.
MatrixF64 reference_fp64(const Matrix& a, const Matrix& b);

// sum_k |a[m][k]| * |b[k][n]| in fp64 (OpenBLAS dgemm on |A| and |B|, non-finite rows / columns as above): the scale
// of the rounding-error bound of a dot product.
MatrixF64 abs_product_sums(const Matrix& a, const Matrix& b);

// The defined-order fp32 result for k-tiles of `k_tile` rows (the last one may be shorter).
Matrix reference_defined_order(const Matrix& a, const Matrix& b, isa::Fp32Mode fp32_mode, std::size_t k_tile);

// The vector code reference_defined_order runs: the same bits on each (tests/host/test_reference.cpp pins that), they
// differ only in speed. Auto picks the widest the CPU supports.
enum class ReferenceIsa { Auto, Baseline, Avx2, Avx512 };
// Whether this CPU (and build) can run `isa` (Auto and Baseline: always).
bool reference_isa_supported(ReferenceIsa isa);
struct DefinedOrderOptions {
  unsigned threads = 0;  // host threads over blocks of rows; 0: pe::available_host_threads() (small GEMMs use 1)
  ReferenceIsa isa = ReferenceIsa::Auto;  // one the CPU does not support: HostError
};
// reference_defined_order with explicit threads and vector code; every choice gives the same bits.
Matrix reference_defined_order(const Matrix& a, const Matrix& b, isa::Fp32Mode fp32_mode, std::size_t k_tile,
                               const DefinedOrderOptions& options);
// The same with the plan's k-tiles and fp32_mode on its quantized operands.
Matrix reference_defined_order(const GemmPlan& plan, const EncodedOperand& a, const EncodedOperand& b);

struct ErrorOptions {
  // Relative error = |c - ref| / max(|ref|, tiny): `tiny` keeps a zero reference from dividing by zero (the default
  // is the smallest normal fp32, so for |ref| below it the relative error reads as an absolute error scaled by
  // 2^126).
  double tiny = 0x1p-126;
  // An element is a mismatch when its relative error exceeds this (0: any difference).
  double rel_tolerance = 0.0;
};

struct ErrorStats {
  std::size_t elements = 0;
  double max_abs_error = 0.0;  // max |c - ref|
  double max_rel_error = 0.0;  // max |c - ref| / max(|ref|, tiny)
  std::size_t mismatches = 0;  // relative error > rel_tolerance
  std::size_t worst_row = 0, worst_col = 0;  // where max_rel_error is
  std::size_t non_finite_equal = 0;  // NaN or infinite where the reference is the same: equal, not in the maxima
};

// Non-finite values: NaN against NaN and an infinity against the same infinity count as equal (error 0); any other
// pairing with a NaN or an infinity is an infinite error and a mismatch. Throws HostError when the shapes differ.
ErrorStats compare(const Matrix& c, const MatrixF64& ref, const ErrorOptions& options = {});

// Elements whose fp32 bit patterns differ (the bit-exact check against reference_defined_order).
std::size_t count_bit_mismatches(const Matrix& c, const Matrix& ref);

}  // namespace pevp::host
