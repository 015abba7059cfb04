// The PE array's functional core: operand decode and the fp32 matmul kernel, in plain C++ (no SystemC).
//
// The PE array module reads the stationary tile [K][M] and the moving tile [K][N] from SBUF, decodes
// both to fp32 and computes dst[M][N] = stationary.T @ moving into PSUM. The numerics are the ones ../shared/DESIGN.md
// "Defined numerics" fixes: for each (m, n) the K products are summed in fp32 in row order k = 0..K-1 starting from
// +0, then added to dst in one fp32 add (accumulate) or stored (overwrite); a NaN result is stored as the canonical
// quiet NaN 0x7FC00000 so the bits do not depend on the host's NaN propagation rules. Two kernels compute exactly
// that: a plain reference loop and a register-blocked fast kernel; they agree bit for bit.
// The fp32_mode split (tf32, full fp32, Low_High) and the model decisions behind it are in docs/numerics-matmul.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>

#include "pevp/isa/enums.h"
#include "pevp/isa/generation.h"

namespace pevp::pe {

// fp32 pattern every NaN result is stored as.
inline constexpr std::uint32_t kCanonicalNan = 0x7FC00000u;

// What one matmul operand is: its dtype on a generation plus the fp32 multiplier mode (None unless dtype is FP32).
struct OperandType {
  isa::Generation gen = isa::Generation::MARIANA;
  isa::Dtype dtype = isa::Dtype::BFLOAT16;
  isa::Fp32Mode fp32_mode = isa::Fp32Mode::None;
};

// Why `t` cannot be a dense matmul operand, or "" when it can: the dtype must be BFLOAT16, FP16, FP8_EXP2/3/4/5 or
// FP32 (docs/model-decisions.md D-DTYPE-INPUT) and fp32_mode must be Low/High/Low_High for FP32, None otherwise.
std::string operand_error(const OperandType& t);

// Bytes one element of `d` occupies in SBUF (1, 2 or 4), or 0 when `d` is not a dense matmul input.
std::size_t operand_bytes(isa::Dtype d);

// Decodes `count` little-endian elements of type `t` at `src` (count * operand_bytes(t.dtype) bytes) into fp32.
// Narrow formats decode exactly (pevp::num); FP32 with Low rounds each value to tf32 (RNE, pevp::num::to_tf32);
// FP32 with High or Low_High keeps the fp32 value exactly (the Low_High split happens in matmul()). Returns false
// and writes nothing when operand_error(t) is not empty.
bool decode_operands(const OperandType& t, const std::uint8_t* src, std::size_t count, float* dst);

// decode_operands for one type, resolved once: decodes `count` elements at `src` into `dst`.
using RowDecoder = void (*)(const std::uint8_t* src, std::size_t count, float* dst);
// The decoder of `t`, or null when operand_error(t) is not empty.
RowDecoder row_decoder(const OperandType& t);

// The Low_High split of one fp32 value: hi = tf32(x) (RNE; truncated instead when RNE would overflow a finite x to
// Inf), lo = tf32(x - hi) for finite x, lo = 0 for Inf and NaN. hi * hi', hi * lo' and lo * hi' are exact in fp32
// (barring underflow); hi + lo is x to within 2^-22 relative.
std::pair<float, float> split_tf32(float x);

// The extents of one matmul: dst[m][n] (row-major, N contiguous) from stationary[k][m] and moving[k][n].
struct MatmulShape {
  std::size_t k = 0;  // contraction: rows of both tiles
  std::size_t m = 0;  // stationary columns = output partitions
  std::size_t n = 0;  // moving columns = output free size
};

enum class Kernel : std::uint8_t { Reference, Fast };

// One pass of the defined order on decoded fp32 operands. Products are rounded fp32 multiplies (exact for decoded
// bf16/fp16/fp8/tf32 inputs), never fused with the add. K == 0 gives sum = +0. dst must not alias the inputs.
void matmul_pass_reference(const float* stationary, const float* moving, float* dst, const MatmulShape& shape,
                           bool accumulate);
// The fast kernel may split the output's columns over up to `threads` host threads (OpenMP; 0 counts as 1); it
// uses fewer when the matmul is too small to pay for them. Each output element is still summed by one thread in the
// defined order, so the result is the same bits for every thread count. The threads' shares of a row meet on a
// cache line when dst's rows start on one (PSUM's do); rows that start off a line share one line per row between
// two threads, which costs a third of the second thread's gain at 128 x 128 x 512 (docs/performance.md).
void matmul_pass_fast(const float* stationary, const float* moving, float* dst, const MatmulShape& shape,
                      bool accumulate, unsigned threads = 1);

// Where a matmul's moving operand lies: K rows of N elements of `type` (as decode_operands reads them), row k
// starting at data + k * row_bytes -- e.g. the moving tile in SBUF, one partition per row.
struct MovingRows {
  const std::uint8_t* data = nullptr;
  std::size_t row_bytes = 0;
  OperandType type;
};
// Where dst lies: M rows of N fp32 values, row m starting at data + m * row_floats (row_floats >= N).
struct DstRows {
  float* data = nullptr;
  std::size_t row_floats = 0;
};

// matmul_pass_fast reading the moving operand where it lies and writing dst in place: each panel of moving columns
// is decoded while it is packed, by the thread that computes it, so no decoded copy of the whole tile is made. The
// same bits as decode_operands + matmul_pass_fast. Returns false, touching nothing, when `moving.type` is no dense
// operand or is FP32 with fp32_mode Low_High (whose split needs the whole operands: use matmul()), or when dst
// rows would overlap.
bool matmul_pass_fast_rows(const float* stationary, const MovingRows& moving, const DstRows& dst,
                           const MatmulShape& shape, bool accumulate, unsigned threads = 1);

// A whole matmul on operands decoded by decode_operands() with the same fp32_mode:
//   None / Low / High: one pass.
//   Low_High: three passes over split operands (split_tf32), in this fixed order, each a full pass of the defined
//   order: dst = (accumulate ? dst + S(hi, hi) : S(hi, hi)); dst = dst + S(hi, lo'); dst = dst + S(lo, hi'), where
//   S(a, b') sums stationary part a times moving part b'. So a Low_High matmul costs 3 passes and the lo * lo' term
//   is dropped.
// `threads` as for matmul_pass_fast (the reference kernel is single-threaded).
void matmul(Kernel kernel, isa::Fp32Mode fp32_mode, const float* stationary, const float* moving, float* dst,
            const MatmulShape& shape, bool accumulate, unsigned threads = 1);

// How many host threads this process may run on: the CPUs of its affinity mask (what taskset, cgroups and Slurm
// allocations leave it), at least 1. The default of every `threads` setting of the platform.
unsigned available_host_threads();

// Calls share(begin, end) for contiguous shares of [0, count), each on its own host thread of the kernel's team
// (at most `threads`, and only as many as give every share at least `min_share` items, 0 counting as 1; one share --
// the calling thread alone -- when threads <= 1 or in a build without OpenMP). Returns when every share has
// returned. For bulk host copies beside the arithmetic (the GEMM driver's SBUF loads and PSUM read-backs): `share`
// must touch only its own items, so the result does not depend on the thread count, and must not throw.
void for_each_share(std::size_t count, std::size_t min_share, unsigned threads,
                    const std::function<void(std::size_t begin, std::size_t end)>& share);

}  // namespace pevp::pe
