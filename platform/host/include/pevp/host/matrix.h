// Dense row-major matrices as the host helpers exchange them: fp32 for operands and results (what the PE array
// reads and PSUM holds), fp64 for references.
#pragma once

#include <cstddef>
#include <vector>

namespace pevp::host {

template <typename T>
struct BasicMatrix {
  std::size_t rows = 0, cols = 0;
  std::vector<T> data;  // row-major: element (r, c) at r * cols + c

  BasicMatrix() = default;
  BasicMatrix(std::size_t r, std::size_t c, T fill = T{}) : rows(r), cols(c), data(r * c, fill) {}

  T& at(std::size_t r, std::size_t c) { return data[r * cols + c]; }
  const T& at(std::size_t r, std::size_t c) const { return data[r * cols + c]; }
};

using Matrix = BasicMatrix<float>;
using MatrixF64 = BasicMatrix<double>;

}  // namespace pevp::host
