// The fast fp32 matmul kernel, matmul_pass_fast (compute.h, docs/numerics-matmul.md "The kernels"): explicit SIMD
// with Google Highway, compiled once per x86 target (AVX-512, AVX2, SSE4, SSSE3 and a portable fallback -- SCALAR,
// which Highway 1.0.3 uses instead of EMU128 with GCC < 12.3) by re-including this file through
// hwy/foreach_target.h, and dispatched at run time to the best target the CPU supports.
//
// Why it is bit-identical to matmul_pass_reference on every target: each SIMD lane owns one output column n and
// runs the k loop in order, so every lane performs exactly the reference's "sum = sum + a * b" from +0; vectors
// only put independent columns side by side, and register blocking only interleaves independent outputs. The
// product and the sum are a Mul and an Add: GCC implements the x86 mul/add intrinsics as plain vector arithmetic,
// so with the AVX2/AVX-512 targets' FMA enabled it would fuse them unless contraction is off -- this target is
// built with -ffp-contract=off (CMakeLists.txt), and the per-target tests would catch a fused build.
//
// Why it never touches memory outside its operands (tests/pe_array/test_guard.cpp): the kernel loads full vectors
// only from packed, zero-padded scratch copies of the operands; the packing reads the caller's arrays with
// vectors only where a whole vector lies inside the row and element by element otherwise, and dst is read and
// written with full vectors only where all lanes are inside the row, through a small buffer otherwise.

// foreach_target.h re-includes this file once per target; the path is relative to models/pe_array, which is a
// private include directory of pevp_pe_compute.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "src/matmul_simd.cpp"
#include <hwy/foreach_target.h>  // must precede highway.h

#include <hwy/aligned_allocator.h>
#include <hwy/cache_control.h>
#include <hwy/highway.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "pevp/buffers/oom_headroom.h"
#include "pevp/pe_array/compute.h"
#include "pevp/pe_array/fast_kernel.h"
#include "src/simd_decode.h"

HWY_BEFORE_NAMESPACE();
namespace pevp::pe {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using std::size_t;
using D = hn::ScalableTag<float>;
using V = hn::Vec<D>;

// Register block: kMr rows of M x kNv vectors of N accumulators, plus kNv moving vectors, one broadcast and one
// product in flight. The kernel is arithmetic-bound (an unfused MAC is two vector operations), so the shape only
// has to leave enough independent adds to hide the add latency, keep the loads (kNv + kMr per k) well below the
// arithmetic, and avoid spills. Measured on a Sapphire Rapids host at 128 x 128 x 512 (docs/performance.md):
// AVX-512 (32 registers) 4 x 4 = 16 accumulators was fastest, ahead of 5 x 4, 6 x 4, 3 x 8 and by 5-8 % of 8 x 3,
// 12 x 2 and 8 x 2; the 16-register targets (AVX2, SSE) 4 x 3 (AVX2 within noise of 6 x 2, 3 x 4 and 2 x 4; SSE4
// 12 % ahead of 6 x 2, whose two-operand SSE code needs register copies).
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
constexpr size_t kMr = 4;
constexpr size_t kNv = 4;
#else
constexpr size_t kMr = 4;
constexpr size_t kNv = 3;
#endif

// Per-thread scratch for the packed operands, grown on demand and reused: a fresh allocation per call would cost
// an mmap and page faults per matmul once K x N outgrows malloc's mmap threshold. Every element that is read is
// rewritten by the packing of the same call, so nothing carries over between calls. Two slots: the stationary pack
// (the calling thread's buffer, written and read by the whole team of the call) and the moving panel (one per
// worker thread).
enum class Slot { Stationary, Moving };
float* Scratch(Slot slot, size_t floats) {
  struct Buffer {
    hwy::AlignedFreeUniquePtr<float[]> data;
    size_t capacity = 0;
  };
  thread_local Buffer buffers[2];
  Buffer& b = buffers[static_cast<int>(slot)];
  if (floats > b.capacity || !b.data) {
    b.data.reset();
    b.capacity = 0;
    // Highway's allocator returns null on failure: handled as operator new would (pevp/buffers/oom_headroom.h).
    while (!(b.data = hwy::AllocateAligned<float>(floats))) buffers::handle_allocation_failure();
    b.capacity = floats;
  }
  return b.data.get();
}

// A thread joins a matmul only for at least this many MACs (about 10 us of one AVX-512 core): starting and joining a
// team of waiting threads costs about a microsecond, so smaller shares would lose more than they gain.
constexpr size_t kMinMacsPerThread = size_t{1} << 20;

// Stationary rows m0 .. m0 + kMr - 1 as [k][i] (kMr consecutive floats per k: the broadcasts of one k are
// adjacent), rows past M zero. The zero rows are computed and never stored.
void PackStationary(const float* st, const MatmulShape& s, size_t m0, float* out) {
  const size_t rows = s.m - m0 < kMr ? s.m - m0 : kMr;
  if (rows == kMr) {  // a whole block: fixed-size copies the compiler turns into one vector move each
    for (size_t k = 0; k < s.k; ++k) std::memcpy(out + k * kMr, st + k * s.m + m0, kMr * sizeof(float));
    return;
  }
  for (size_t k = 0; k < s.k; ++k) {
    float* o = out + k * kMr;
    std::memcpy(o, st + k * s.m + m0, rows * sizeof(float));
    for (size_t i = rows; i < kMr; ++i) o[i] = 0.0f;
  }
}

// The moving operand as decoded fp32 rows, `stride` floats apart. Copied with vectors where a whole vector lies
// inside the row (GCC turns a 256-byte memcpy of runtime length into "rep movsq", whose start-up cost showed in
// profiles).
struct DecodedRows {
  const float* data;
  size_t stride;
  HWY_INLINE void Row(D d, size_t k, size_t n0, size_t cols, float* o) const {
    const size_t L = hn::Lanes(d);
    const float* src = data + k * stride + n0;
    size_t j = 0;
    for (; j + L <= cols; j += L) hn::Store(hn::LoadU(d, src + j), d, o + j);
    for (; j < cols; ++j) o[j] = src[j];
  }
};

// The moving operand as it lies in memory (MovingRows): each row's columns are decoded straight into the pack.
struct EncodedRows {
  const std::uint8_t* data;
  size_t stride_bytes, element_bytes;
  RowDecoder decode;
  HWY_INLINE void Row(D, size_t k, size_t n0, size_t cols, float* o) const {
    decode(data + k * stride_bytes + n0 * element_bytes, cols, o);
  }
};

// The moving operand as bf16 in memory, the platform's default dtype: a bf16 value is the high half of its fp32
// bits, so each row's columns widen to u32 and shift left by 16 -- the same bits as decode_operands' bf16 decoder,
// a vector of columns at a time where the indirect call per row did it element by element (6.8 % of a
// two-thread 4096^3 run). decode_bf16 (the RowDecoder EncodedRows would call) widens the same way through
// widen_bf16; inlined here it also saves that call and its dispatch per packed row (4 % of a 128 x 128 x 512 bf16
// matmul: BM_rows_group_region_per_matmul/1, 3.15 against 3.28 ms per group).
struct Bf16Rows {
  const std::uint8_t* data;
  size_t stride_bytes;
  HWY_INLINE void Row(D d, size_t k, size_t n0, size_t cols, float* o) const {
    const hn::RebindToUnsigned<D> du32;
    const hn::Rebind<std::uint16_t, D> du16;
    const size_t L = hn::Lanes(d);
    // data and stride_bytes are even (PassFastRows and decode_bf16 check), so every load below is of a 2-byte
    // aligned u16 run; src and o may have any vector alignment (o is the aligned pack, or decode_operands' caller's
    // array).
    const std::uint8_t* src = data + k * stride_bytes + 2 * n0;
    size_t j = 0;
    for (; j + L <= cols; j += L) {
      const auto codes = hn::LoadU(du16, reinterpret_cast<const std::uint16_t*>(src + 2 * j));
      hn::StoreU(hn::BitCast(d, hn::ShiftLeft<16>(hn::PromoteTo(du32, codes))), d, o + j);
    }
    for (; j < cols; ++j) {
      std::uint16_t h;
      std::memcpy(&h, src + 2 * j, 2);
      const std::uint32_t bits = static_cast<std::uint32_t>(h) << 16;
      std::memcpy(o + j, &bits, 4);
    }
  }
};

// Moving columns n0 .. n0 + pitch - 1 as [k][j] with a row pitch of kNv vectors, columns past N zero, so the
// kernel's full-vector loads stay inside the scratch.
template <class Rows>
HWY_INLINE void PackMoving(D d, const Rows& rows, const MatmulShape& s, size_t n0, size_t pitch, float* out) {
  const size_t cols = s.n - n0 < pitch ? s.n - n0 : pitch;
  for (size_t k = 0; k < s.k; ++k) {
    float* o = out + k * pitch;
    rows.Row(d, k, n0, cols, o);
    for (size_t j = cols; j < pitch; ++j) o[j] = 0.0f;
  }
}

// dst = accumulate ? dst + acc : acc, NaN stored as kCanonicalNan -- the reference's store_value. `lanes` (1 ..
// Lanes(d)) columns of dst are valid; a partial vector goes through a buffer so dst is touched element-exactly.
HWY_INLINE void StoreLanes(D d, V acc, float* dst, size_t lanes, bool accumulate) {
  const hn::RebindToUnsigned<D> du;
  const V canonical = hn::BitCast(d, hn::Set(du, kCanonicalNan));
  if (lanes == hn::Lanes(d)) {
    V out = accumulate ? hn::Add(hn::LoadU(d, dst), acc) : acc;
    hn::StoreU(hn::IfThenElse(hn::IsNaN(out), canonical, out), d, dst);
    return;
  }
  HWY_ALIGN float buf[hn::MaxLanes(D())] = {};
  std::memcpy(buf, dst, lanes * sizeof(float));
  V out = accumulate ? hn::Add(hn::Load(d, buf), acc) : acc;
  hn::Store(hn::IfThenElse(hn::IsNaN(out), canonical, out), d, buf);
  std::memcpy(dst, buf, lanes * sizeof(float));
}

// One kMr x (kNv vectors) block of dst over the whole K: `a` is the packed stationary block, `b` the packed moving
// panel (pitch kNv vectors); `rows` / `cols` say how much of the block lies inside dst. The loops over i and v have
// constant trip counts, so the compiler unrolls them and keeps acc in registers.
HWY_INLINE void Block(D d, const float* HWY_RESTRICT a, const float* HWY_RESTRICT b, size_t K, float* dst,
                      size_t ldd, size_t rows, size_t cols, bool accumulate) {
  const size_t L = hn::Lanes(d);
  // dst is 2 KiB per row at N = 512 and mostly in L2 by now; fetching the block's lines while the k loop runs
  // hides that latency from the stores at the end (measured: the dst load stalled about 5% of the time).
  for (size_t i = 0; i < rows; ++i)
    for (size_t j = 0; j < cols; j += 64 / sizeof(float)) hwy::Prefetch(dst + i * ldd + j);
  V acc[kMr][kNv];
  for (size_t i = 0; i < kMr; ++i)
    for (size_t v = 0; v < kNv; ++v) acc[i][v] = hn::Zero(d);  // +0: the defined starting value
  for (size_t k = 0; k < K; ++k) {
    V bv[kNv];
    for (size_t v = 0; v < kNv; ++v) bv[v] = hn::Load(d, b + (k * kNv + v) * L);
    for (size_t i = 0; i < kMr; ++i) {
      const V ai = hn::Set(d, a[k * kMr + i]);
      for (size_t v = 0; v < kNv; ++v) acc[i][v] = hn::Add(acc[i][v], hn::Mul(ai, bv[v]));
    }
  }
  for (size_t i = 0; i < kMr; ++i) {
    if (i == rows) break;
    for (size_t v = 0; v < kNv; ++v) {
      if (v * L >= cols) break;
      const size_t lanes = cols - v * L < L ? cols - v * L : L;
      StoreLanes(d, acc[i][v], dst + i * ldd + v * L, lanes, accumulate);
    }
  }
}

// The whole pass: dst rows `ldd` floats apart, the moving operand read through `rows` (DecodedRows or EncodedRows).
template <class Rows>
void Pass(const float* stationary, const Rows& rows, float* dst, size_t ldd, const MatmulShape& s, bool accumulate,
          unsigned threads) {
  if (s.m == 0 || s.n == 0) return;
  const D d;
  const size_t L = hn::Lanes(d);
  const size_t pitch = kNv * L;  // floats per packed moving row = columns per block
  const size_t m_blocks = (s.m + kMr - 1) / kMr;
  float* const st_pack = Scratch(Slot::Stationary, m_blocks * s.k * kMr + 1);
  // Column panels outside, row blocks inside: the K x pitch moving panel (32 KiB for K = 128 on AVX-512) stays in
  // L1 while every row block streams its packed stationary block past it. Packing also keeps the panel's rows
  // contiguous: read in place, rows N floats apart (2 KiB at N = 512) would all fall into a few L1 sets.
  // Threads take whole panels: each output element belongs to one panel, so one thread sums it, in the defined
  // order, whatever the thread count -- the bits do not depend on it. A panel's moving columns are packed (and,
  // from EncodedRows, decoded) by the thread that uses them.
  const size_t panels = (s.n + pitch - 1) / pitch;
  const size_t worth = s.k * s.m * s.n / kMinMacsPerThread;  // threads the work pays for
  size_t team = threads < panels ? threads : panels;
  if (team > worth) team = worth > 0 ? worth : 1;
  [[maybe_unused]] const int team_size = static_cast<int>(team);  // read by the OpenMP pragma only
#ifdef _OPENMP  // built without OpenMP (PEVP_OPENMP=OFF), everything runs on the calling thread
#pragma omp parallel num_threads(team_size) if (team_size > 1)
#endif
  {
    // One region per call: the team packs the stationary blocks, waits for all of them (the implicit barrier),
    // then takes the panels.
#ifdef _OPENMP
#pragma omp for schedule(static)
#endif
    for (size_t mb = 0; mb < m_blocks; ++mb) PackStationary(stationary, s, mb * kMr, st_pack + mb * s.k * kMr);
#ifdef _OPENMP
#pragma omp for schedule(static)
#endif
    for (size_t panel = 0; panel < panels; ++panel) {
      const size_t n0 = panel * pitch;
      float* const mv_pack = Scratch(Slot::Moving, s.k * pitch + 1);
      PackMoving(d, rows, s, n0, pitch, mv_pack);
      const size_t cols = s.n - n0 < pitch ? s.n - n0 : pitch;
      for (size_t mb = 0; mb < m_blocks; ++mb) {
        const size_t m0 = mb * kMr;
        const size_t block_rows = s.m - m0 < kMr ? s.m - m0 : kMr;
        Block(d, st_pack + mb * s.k * kMr, mv_pack, s.k, dst + m0 * ldd + n0, ldd, block_rows, cols, accumulate);
      }
    }
  }
}

void PassFast(const float* stationary, const float* moving, float* dst, const MatmulShape& s, bool accumulate,
              unsigned threads) {
  Pass(stationary, DecodedRows{moving, s.n}, dst, s.n, s, accumulate, threads);
}

void PassFastRows(const float* stationary, const MovingRows& moving, const DstRows& dst, const MatmulShape& s,
                  bool accumulate, unsigned threads) {
  const bool u16_rows = reinterpret_cast<std::uintptr_t>(moving.data) % 2 == 0 && moving.row_bytes % 2 == 0;
  if (moving.type.dtype == isa::Dtype::BFLOAT16 && u16_rows) {
    Pass(stationary, Bf16Rows{moving.data, moving.row_bytes}, dst.data, dst.row_floats, s, accumulate, threads);
    return;
  }
  const EncodedRows rows{moving.data, moving.row_bytes, operand_bytes(moving.type.dtype), row_decoder(moving.type)};
  Pass(stationary, rows, dst.data, dst.row_floats, s, accumulate, threads);
}

// decode_operands' bf16 decoder for an even address (widen_bf16 in simd_decode.h).
void WidenBf16(const std::uint8_t* src, size_t count, float* dst) { Bf16Rows{src, 0}.Row(D(), 0, 0, count, dst); }

const char* TargetName() { return hwy::TargetName(HWY_TARGET); }

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace pevp::pe
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace pevp::pe {

HWY_EXPORT(PassFast);
HWY_EXPORT(PassFastRows);
HWY_EXPORT(TargetName);
HWY_EXPORT(WidenBf16);

void matmul_pass_fast(const float* stationary, const float* moving, float* dst, const MatmulShape& shape,
                      bool accumulate, unsigned threads) {
  HWY_DYNAMIC_DISPATCH(PassFast)(stationary, moving, dst, shape, accumulate, threads == 0 ? 1 : threads);
}

bool matmul_pass_fast_rows(const float* stationary, const MovingRows& moving, const DstRows& dst,
                           const MatmulShape& shape, bool accumulate, unsigned threads) {
  if (!row_decoder(moving.type) || moving.type.fp32_mode == isa::Fp32Mode::Low_High) return false;
  if (shape.n > dst.row_floats && shape.m > 1) return false;  // dst rows would overlap
  HWY_DYNAMIC_DISPATCH(PassFastRows)(stationary, moving, dst, shape, accumulate, threads == 0 ? 1 : threads);
  return true;
}

const char* matmul_fast_target() { return HWY_DYNAMIC_DISPATCH(TargetName)(); }

void widen_bf16(const std::uint8_t* src, std::size_t count, float* dst) {
  HWY_DYNAMIC_DISPATCH(WidenBf16)(src, count, dst);
}

}  // namespace pevp::pe
#endif  // HWY_ONCE
