// The RTL PE-array tile (rtl/pe_tile.sv), Verilated, behind a call-level interface: load a stationary, stream
// moving vectors through the skewed array, collect what its PSUM write port writes. The numerics are the executor's
// defined order (pevp::pe::matmul_pass_reference, docs/numerics-matmul.md) computed by the RTL's own fp32
// multipliers and adders; the cycle counts are the RTL's. docs/cosim.md "The RTL PE tile".
//
// Built only with Verilator (like models/regfile_rtl): without it available() is false, built_sizes() is empty and
// constructing an RtlTile throws.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace pevp::pe_rtl {

// The element format of the load port and the moving stream; both are unpacked to fp32 exactly.
enum class TileDtype : std::uint8_t { Bf16, Fp16 };

// Exact: round to nearest even everywhere. BrokenRounding: the same RTL built with BROKEN_ROUNDING=1, whose fp32
// adders (the PEs' and the PSUM port's) truncate -- a deliberate defect, for the tests that must see a divergence.
enum class Variant : std::uint8_t { Exact, BrokenRounding };

struct TileSize {
  unsigned rows = 0, cols = 0;
};

// False when built without Verilator.
bool available();
// The ROWS x COLS sizes of `v` this build Verilated.
std::vector<TileSize> built_sizes(Variant v = Variant::Exact);

class RtlTile {
 public:
  // Throws std::invalid_argument naming the sizes that were built when rows x cols (of that variant) was not.
  RtlTile(unsigned rows, unsigned cols, Variant variant = Variant::Exact);
  ~RtlTile();
  RtlTile(const RtlTile&) = delete;
  RtlTile& operator=(const RtlTile&) = delete;

  unsigned rows() const;
  unsigned cols() const;

  // The load port: w[k * m_count + m], raw 16-bit elements of `dt`, k < k_count <= rows, m < m_count <= cols; the
  // PEs outside k_count x m_count hold +0. One row per cycle (the first also clears the others): returns the cycles
  // the load took, max(k_count, 1). Throws std::invalid_argument for counts past the tile or a null w with
  // k_count * m_count > 0.
  std::uint64_t load_stationary(TileDtype dt, const std::uint16_t* w, unsigned k_count, unsigned m_count);

  // The moving stream: n vectors x[k * n + j] (k < the loaded k_count; rows past it enter as +0), one per cycle,
  // through the array; for each loaded column m and j < n: sum = +0; for k = 0..k_count-1: sum = fp32_add(sum,
  // fp32_mul(w[k][m], x[k][j])) (each rounded RNE with subnormals, never fused), then through the PSUM write port:
  // out[m * n + j] = accumulate ? fp32_add(psum_in[m * n + j], sum) : sum, a NaN stored as 0x7FC00000. Values are
  // fp32 bit patterns. psum_in may equal out; psum_in may be null when !accumulate. Only out[m * n + j] for loaded
  // columns m is written. Throws std::invalid_argument for a null x or out with n > 0, or a null psum_in with
  // accumulate.
  struct StreamTiming {
    std::uint64_t cycles = 0;        // first vector accepted to last PSUM word written: n + rows + cols for n > 0
    std::uint64_t first_result = 0;  // first vector accepted to first PSUM word written: rows + cols + 1
  };
  StreamTiming stream(TileDtype dt, const std::uint16_t* x, unsigned n, const std::uint32_t* psum_in,
                      bool accumulate, std::uint32_t* out);

  // Clock cycles (rising edges) since construction, the reset included.
  std::uint64_t cycle() const;
  // FST waveform of the tile from now on to `path` ("" stops and closes it). Throws std::runtime_error when the
  // file cannot be opened.
  void trace(const std::string& path);

  class Model;  // the Verilated model of one size, behind a size-independent face (src/rtl_tile.cpp)

 private:
  std::unique_ptr<Model> model_;
  unsigned rows_ = 0, cols_ = 0;
  unsigned loaded_k_ = 0, loaded_m_ = 0;
};

}  // namespace pevp::pe_rtl
