// SCALE-Sim v2's weight-stationary compute model (see scalesim.h).
#include "pevp/host/scalesim.h"

#include <algorithm>

namespace pevp::host {

ScaleSimWs scalesim_ws(const GemmShape& shape, std::uint64_t rows, std::uint64_t cols) {
  const auto ceil_div = [](std::uint64_t a, std::uint64_t b) { return a / b + (a % b != 0); };
  ScaleSimWs s;
  const std::uint64_t t = shape.n;  // streamed
  s.row_folds = ceil_div(shape.k, rows);
  s.col_folds = ceil_div(shape.m, cols);
  s.folds = s.row_folds * s.col_folds;
  s.cycles_per_fold = 2 * rows + cols + t - 2;
  s.cycles = s.folds * s.cycles_per_fold;
  s.total_cycles = s.cycles - 1;
  const double array = static_cast<double>(rows) * static_cast<double>(cols);
  // Every fold's active PEs: the sum over folds of min(R, K left) x min(C, M left) is K x M.
  const double active = static_cast<double>(shape.k) * static_cast<double>(shape.m);
  s.useful = active * static_cast<double>(t);
  s.mapping = (static_cast<double>(s.folds) * array - active) * static_cast<double>(t);
  s.fill_drain = static_cast<double>(s.folds) * array * static_cast<double>(2 * rows + cols - 2);
  return s;
}

}  // namespace pevp::host
