// GEMM references and error metrics (see gemm_reference.h). Built with -ffp-contract=off (CMakeLists.txt): the
// defined-order loops must round every product before the add, exactly as the PE array kernels do.
#include "pevp/host/gemm_reference.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "pevp/numerics/convert.h"
#include "pevp/pe_array/compute.h"

namespace pevp::host {
namespace {

void check_inner(const Matrix& a, const Matrix& b, const char* what) {
  if (a.cols != b.rows)
    throw HostError(std::string(what) + ": A is (" + std::to_string(a.rows) + ", " + std::to_string(a.cols) +
                    ") and B is (" + std::to_string(b.rows) + ", " + std::to_string(b.cols) +
                    "): A's columns must equal B's rows");
}

// B transposed (n-major), so every dot product below walks both operands contiguously.
std::vector<float> transpose(const Matrix& b) {
  std::vector<float> t(b.rows * b.cols);
  for (std::size_t k = 0; k < b.rows; ++k)
    for (std::size_t n = 0; n < b.cols; ++n) t[n * b.rows + k] = b.at(k, n);
  return t;
}

// The defined order's inner loop: from +0, one rounded multiply and one rounded add per k, in k order.
float dot_in_order(const float* x, const float* y, std::size_t len) {
  float s = 0.0f;
  for (std::size_t i = 0; i < len; ++i) s = s + x[i] * y[i];
  return s;
}

float canonical(float v) { return v != v ? num::bits_float(pe::kCanonicalNan) : v; }

}  // namespace

MatrixF64 reference_fp64(const Matrix& a, const Matrix& b) {
  check_inner(a, b, "reference_fp64");
  const auto bt = transpose(b);
  MatrixF64 c(a.rows, b.cols);
  for (std::size_t m = 0; m < a.rows; ++m)
    for (std::size_t n = 0; n < b.cols; ++n) {
      double s = 0.0;
      for (std::size_t k = 0; k < a.cols; ++k)
        s += static_cast<double>(a.at(m, k)) * static_cast<double>(bt[n * a.cols + k]);
      c.at(m, n) = s;
    }
  return c;
}

MatrixF64 abs_product_sums(const Matrix& a, const Matrix& b) {
  check_inner(a, b, "abs_product_sums");
  const auto bt = transpose(b);
  MatrixF64 c(a.rows, b.cols);
  for (std::size_t m = 0; m < a.rows; ++m)
    for (std::size_t n = 0; n < b.cols; ++n) {
      double s = 0.0;
      for (std::size_t k = 0; k < a.cols; ++k)
        s += std::fabs(static_cast<double>(a.at(m, k))) * std::fabs(static_cast<double>(bt[n * a.cols + k]));
      c.at(m, n) = s;
    }
  return c;
}

Matrix reference_defined_order(const Matrix& a, const Matrix& b, isa::Fp32Mode mode, std::size_t k_tile) {
  check_inner(a, b, "reference_defined_order");
  if (k_tile == 0) throw HostError("reference_defined_order: k_tile must be at least 1");
  const std::size_t M = a.rows, K = a.cols, N = b.cols;
  // The operand values the array multiplies: tf32-rounded (Low), or the hi / lo parts of the Low_High split.
  std::vector<float> a_hi = a.data, b_hi = transpose(b), a_lo, b_lo;
  if (mode == isa::Fp32Mode::Low) {
    for (float& v : a_hi) v = num::to_tf32(v);
    for (float& v : b_hi) v = num::to_tf32(v);
  } else if (mode == isa::Fp32Mode::Low_High) {
    a_lo.resize(a_hi.size());
    b_lo.resize(b_hi.size());
    for (std::size_t i = 0; i < a_hi.size(); ++i) std::tie(a_hi[i], a_lo[i]) = pe::split_tf32(a_hi[i]);
    for (std::size_t i = 0; i < b_hi.size(); ++i) std::tie(b_hi[i], b_lo[i]) = pe::split_tf32(b_hi[i]);
  }
  const bool three_pass = mode == isa::Fp32Mode::Low_High;
  Matrix c(M, N);
  for (std::size_t m = 0; m < M; ++m)
    for (std::size_t n = 0; n < N; ++n) {
      float acc = 0.0f;
      for (std::size_t t0 = 0; t0 < K; t0 += k_tile) {
        const std::size_t len = std::min(k_tile, K - t0);
        const std::size_t ai = m * K + t0, bi = n * K + t0;
        const float s = dot_in_order(&a_hi[ai], &b_hi[bi], len);
        acc = canonical(t0 == 0 ? s : acc + s);
        if (three_pass) {
          acc = canonical(acc + dot_in_order(&a_hi[ai], &b_lo[bi], len));
          acc = canonical(acc + dot_in_order(&a_lo[ai], &b_hi[bi], len));
        }
      }
      c.at(m, n) = acc;
    }
  return c;
}

Matrix reference_defined_order(const GemmPlan& plan, const EncodedOperand& a, const EncodedOperand& b) {
  check_operands(plan, a, b);
  return reference_defined_order(a.quantized, b.quantized, plan.options.fp32_mode, plan.k_tile);
}

ErrorStats compare(const Matrix& c, const MatrixF64& ref, const ErrorOptions& o) {
  if (c.rows != ref.rows || c.cols != ref.cols)
    throw HostError("compare: the result is (" + std::to_string(c.rows) + ", " + std::to_string(c.cols) +
                    ") and the reference (" + std::to_string(ref.rows) + ", " + std::to_string(ref.cols) + ")");
  ErrorStats s;
  s.elements = c.data.size();
  const double inf = HUGE_VAL;
  for (std::size_t i = 0; i < c.data.size(); ++i) {
    const double x = c.data[i], r = ref.data[i];
    double abs = 0.0, rel = 0.0;
    if (std::isnan(x) || std::isnan(r)) {
      abs = rel = std::isnan(x) && std::isnan(r) ? 0.0 : inf;
      s.non_finite_equal += std::isnan(x) && std::isnan(r);
    } else if (std::isinf(x) || std::isinf(r)) {
      abs = rel = x == r ? 0.0 : inf;
      s.non_finite_equal += x == r;
    } else {
      abs = std::fabs(x - r);
      rel = abs / std::max(std::fabs(r), o.tiny);
    }
    s.max_abs_error = std::max(s.max_abs_error, abs);
    if (rel > s.max_rel_error) {
      s.max_rel_error = rel;
      s.worst_row = i / c.cols;
      s.worst_col = i % c.cols;
    }
    if (rel > o.rel_tolerance) ++s.mismatches;
  }
  return s;
}

std::size_t count_bit_mismatches(const Matrix& c, const Matrix& ref) {
  if (c.rows != ref.rows || c.cols != ref.cols)
    throw HostError("count_bit_mismatches: shapes (" + std::to_string(c.rows) + ", " + std::to_string(c.cols) +
                    ") and (" + std::to_string(ref.rows) + ", " + std::to_string(ref.cols) + ") differ");
  std::size_t n = 0;
  for (std::size_t i = 0; i < c.data.size(); ++i) n += num::float_bits(c.data[i]) != num::float_bits(ref.data[i]);
  return n;
}

}  // namespace pevp::host
