// pe_array.impl = rtl: the Verilated PE tile (pevp::pe_rtl::RtlTile, models/pe_rtl) as the PE array executor's
// datapath (pevp/pe_array/datapath.h). The executor keeps the SBUF/PSUM addressing and the PSUM group semantics;
// the tile computes the dense weight loads and matmul passes it supports, bit for bit the defined numerics, and its
// clock's cycles become the micro-ops' times (D-ARRAY-SEAM). What it cannot run is refused -- a configuration at
// validation (geometry_refusal), a micro-op before it executes (refusal) -- never computed in C++ instead.
// docs/cosim.md "The datapath in the loop".
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "pevp/isa/geometry.h"
#include "pevp/pe_array/datapath.h"
#include "pevp/pe_array/executor.h"

namespace pevp::pe_rtl {
class RtlTile;
}

namespace pevp::pe_array_rtl {

// The tile's arithmetic variants (pe_rtl::Variant): the exact one, and one whose fp32 adder truncates (a test-only
// build for cosim-check's divergence report).
enum class Variant : std::uint8_t { Exact, BrokenRounding };

// Whether this build has the tile's RTL (Verilator was found when it was configured).
bool available();
// Why a platform of geometry `geo` cannot use the tile (no RTL in the build, or an array size the tile was not
// built for -- naming the sizes that were), or "".
std::string geometry_refusal(const isa::ArrayGeometry& geo, Variant variant = Variant::Exact);
// Why the tile cannot execute `op` on an array of rows x cols, leading with the field as "field = value: reason",
// or "": it runs dense Ldweights and Matmul micro-ops of bf16 or fp16 with fp32 accumulation into an fp32 PSUM
// output, overwrite or accumulate -- no transpose, double_row, MX, structured sparsity, converter table, seed move,
// fp32 or fp8 input, bf16 output, or PE register write.
std::string refusal(const pe::MicroOp& op, unsigned rows, unsigned cols);

class RtlDatapath final : public pe::Datapath {
 public:
  // Throws std::invalid_argument when rows x cols was not built (geometry_refusal says so first).
  RtlDatapath(unsigned rows, unsigned cols, Variant variant = Variant::Exact);
  ~RtlDatapath() override;
  std::string name() const override;
  std::string refusal(const pe::MicroOp& op) const override;
  pe::DatapathTiming load(const pe::Stationary& s) override;
  pe::DatapathTiming matmul(const pe::Stationary& s, const float* moving, std::size_t n, bool accumulate,
                            float* dst) override;

  // The tile's clock and waveform (pe_rtl::RtlTile::cycle / trace).
  std::uint64_t cycle() const;
  void trace(const std::string& path);

 private:
  // Loads `s` into the tile unless it holds it already (a matmul on another tile's stationary reloads it); the
  // load's cycles, 0 when none was needed.
  std::uint64_t ensure_loaded(const pe::Stationary& s);

  std::unique_ptr<pe_rtl::RtlTile> tile_;
  Variant variant_;
  // The stationary the tile holds (its tile rectangle, dtype and values), so a matmul after loads of other tiles
  // finds it again.
  bool holds_ = false;
  isa::TileRect held_tile_;
  isa::Dtype held_dtype_ = isa::Dtype::BFLOAT16;
  std::vector<float> held_values_;
  std::vector<std::uint16_t> raw_;  // 16-bit elements for the ports
  std::vector<std::uint32_t> psum_;
};

}  // namespace pevp::pe_array_rtl
