// SCALE-Sim v2's weight-stationary compute model, for cross-checking pe-vp against published SCALE-Sim figures
// (`--set timing.model=scalesim_ws`, docs/sweeps.md "The SCALE-Sim preset"). In SCALE-Sim's words a GEMM has K on
// the array's rows, its N (the filters) on the columns and its M (the ifmap rows) streamed in time; in pe-vp's,
// `pe-vp gemm --m M --k K --n N` keeps A's M on the columns and streams B's N, so SCALE-Sim's (M, N, K) is pe-vp's
// (N, M, K). The GEMM is cut into ceil(K / R) x ceil(M / C) folds of the R x C array that run one after another,
// never overlapping, each 2R + C + T - 2 cycles (T = the streamed dimension) whatever part of the array it uses;
// SCALE-Sim reports the index of the last cycle, one less than the count.
#pragma once

#include <cstdint>

#include "pevp/host/gemm_plan.h"

namespace pevp::host {

struct ScaleSimWs {
  std::uint64_t row_folds = 0, col_folds = 0;  // ceil(K / R), ceil(M / C)
  std::uint64_t folds = 0;
  std::uint64_t cycles_per_fold = 0;  // 2R + C + T - 2
  std::uint64_t cycles = 0;           // folds x cycles_per_fold: the count
  std::uint64_t total_cycles = 0;     // cycles - 1: what SCALE-Sim's COMPUTE_REPORT.csv calls Total Cycles
  // PE-cycles of the folds: the active K x M PEs' T streaming cycles (useful), the inactive PEs of partial folds
  // over those cycles (mapping), and every PE over the 2R + C - 2 fill and drain cycles of each fold.
  double useful = 0, mapping = 0, fill_drain = 0;
};

// `rows` x `cols` is the array (geometry.pe_rows x geometry.pe_cols).
ScaleSimWs scalesim_ws(const GemmShape& shape, std::uint64_t rows, std::uint64_t cols);

}  // namespace pevp::host
