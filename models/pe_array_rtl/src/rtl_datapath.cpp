#include "pevp/pe_array_rtl/rtl_datapath.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "pevp/numerics/convert.h"
#include "pevp/pe_rtl/rtl_tile.h"

namespace pevp::pe_array_rtl {

namespace {

pe_rtl::Variant rtl_variant(Variant v) {
  return v == Variant::BrokenRounding ? pe_rtl::Variant::BrokenRounding : pe_rtl::Variant::Exact;
}

pe_rtl::TileDtype tile_dtype(isa::Dtype d) {
  return d == isa::Dtype::FP16 ? pe_rtl::TileDtype::Fp16 : pe_rtl::TileDtype::Bf16;
}

// The 16-bit element a decoded bf16 or fp16 value came from: the decode is exact, so encoding it again gives the
// element back (a NaN's payload may differ, and a NaN result is canonical whatever it was).
std::uint16_t element(float v, isa::Dtype d) { return d == isa::Dtype::FP16 ? num::to_fp16(v) : num::to_bf16(v); }

}  // namespace

bool available() { return pe_rtl::available(); }

std::string geometry_refusal(const isa::ArrayGeometry& geo, Variant variant) {
  if (!pe_rtl::available())
    return "this build has no PE tile RTL (Verilator was not found when it was configured; scripts/setup.sh "
           "installs it)";
  std::string built;
  for (const pe_rtl::TileSize& s : pe_rtl::built_sizes(rtl_variant(variant))) {
    if (s.rows == geo.pe_rows && s.cols == geo.pe_cols) return "";
    built += (built.empty() ? "" : ", ") + std::to_string(s.rows) + "x" + std::to_string(s.cols);
  }
  return "the RTL tile was built for " + (built.empty() ? std::string("no size") : built) + ", not a " +
         std::to_string(geo.pe_rows) + "x" + std::to_string(geo.pe_cols) +
         " array (--set geometry.pe_rows=32 --set geometry.pe_cols=32)";
}

RtlDatapath::RtlDatapath(unsigned rows, unsigned cols, Variant variant)
    : tile_(std::make_unique<pe_rtl::RtlTile>(rows, cols, rtl_variant(variant))), variant_(variant) {}

RtlDatapath::~RtlDatapath() = default;

std::string RtlDatapath::name() const {
  return "RTL tile " + std::to_string(tile_->rows()) + "x" + std::to_string(tile_->cols()) +
         (variant_ == Variant::BrokenRounding ? " (broken rounding)" : "");
}

std::string RtlDatapath::refusal(const pe::MicroOp& op) const {
  return pe_array_rtl::refusal(op, tile_->rows(), tile_->cols());
}

std::uint64_t RtlDatapath::ensure_loaded(const pe::Stationary& s) {
  // Compared as bits: a NaN element is not equal to itself.
  const bool same_values = held_values_.size() == s.values.size() &&
                           std::memcmp(held_values_.data(), s.values.data(), s.values.size() * sizeof(float)) == 0;
  if (holds_ && held_tile_ == s.tile && held_dtype_ == s.type.dtype && same_values) return 0;
  raw_.resize(s.k * s.m);
  for (std::size_t i = 0; i < raw_.size(); ++i) raw_[i] = element(s.values[i], s.type.dtype);
  const std::uint64_t cycles = tile_->load_stationary(tile_dtype(s.type.dtype), raw_.data(),
                                                      static_cast<unsigned>(s.k), static_cast<unsigned>(s.m));
  holds_ = true;
  held_tile_ = s.tile;
  held_dtype_ = s.type.dtype;
  held_values_ = s.values;
  return cycles;
}

pe::DatapathTiming RtlDatapath::load(const pe::Stationary& s) {
  holds_ = false;  // a load always goes through the port, even of the values it holds
  const std::uint64_t cycles = ensure_loaded(s);
  return {cycles, cycles};
}

pe::DatapathTiming RtlDatapath::matmul(const pe::Stationary& s, const float* moving, std::size_t n, bool accumulate,
                                       float* dst) {
  const std::uint64_t reload = ensure_loaded(s);
  raw_.resize(s.k * n);
  for (std::size_t i = 0; i < raw_.size(); ++i) raw_[i] = element(moving[i], s.type.dtype);
  psum_.resize(s.m * n);
  std::memcpy(psum_.data(), dst, psum_.size() * sizeof(float));
  const pe_rtl::RtlTile::StreamTiming t = tile_->stream(tile_dtype(s.type.dtype), raw_.data(),
                                                        static_cast<unsigned>(n), psum_.data(), accumulate, psum_.data());
  std::memcpy(dst, psum_.data(), psum_.size() * sizeof(float));
  return {reload + t.cycles, reload + t.first_result};
}

std::uint64_t RtlDatapath::cycle() const { return tile_->cycle(); }
void RtlDatapath::trace(const std::string& path) { tile_->trace(path); }

}  // namespace pevp::pe_array_rtl
