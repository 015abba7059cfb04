#include "pevp/isa/geometry.h"

#include <algorithm>
#include <tuple>

namespace pevp::isa {

namespace {
bool power_of_two(std::uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

auto members(const ArrayGeometry& g) {
  return std::tie(g.pe_rows, g.pe_cols, g.row_groups, g.col_groups, g.queues, g.sbuf_xbus_ports, g.partitions,
                  g.sbuf_partition_bytes, g.psum_banks, g.psum_bank_bytes);
}
}  // namespace

bool ArrayGeometry::operator==(const ArrayGeometry& o) const { return members(*this) == members(o); }

const ArrayGeometry& preset_geometry(Generation g) {
  // FACTS.md "Geometry": SBUF 128 x 224 KiB (v3), 128 x 256 KiB (v4); PSUM
  // 128 x 16 KiB = 8 banks x 2 KiB on every generation; PE tiling 4 x 32. MAVERICK
  // has no public figures: the model keeps v4's memories and the spec's
  // 256-column array (c256 tiles), on the same 32 x 32 cells.
  static const ArrayGeometry cayman = [] {
    ArrayGeometry geo;
    geo.sbuf_partition_bytes = 224 * 1024;
    return geo;
  }();
  static const ArrayGeometry mariana{};
  static const ArrayGeometry maverick = [] {
    ArrayGeometry geo;
    geo.pe_cols = 256;
    geo.col_groups = 8;
    return geo;
  }();
  switch (g) {
    case Generation::CAYMAN: return cayman;
    case Generation::MARIANA:
    case Generation::MARIANA_PLUS: return mariana;
    case Generation::MAVERICK: return maverick;
  }
  return mariana;
}

std::uint32_t partitions_for_array(std::uint32_t pe_rows, std::uint32_t pe_cols, Generation g) {
  const std::uint32_t fold = is_maverick(g) ? 2 : 1;
  const std::uint32_t for_cols = (pe_cols + fold - 1) / fold;
  return std::max({preset_geometry(g).partitions, pe_rows, for_cols});
}

std::uint32_t sbuf_partition_bytes_for(std::uint32_t partitions, Generation g) {
  constexpr std::uint32_t kPage = 4096;
  if (partitions == 0) return preset_geometry(g).sbuf_partition_bytes;
  return static_cast<std::uint32_t>(preset_geometry(g).sbuf_bytes() / partitions / kPage * kPage);
}

std::string GeometryError::describe() const { return key + " = " + std::to_string(value) + ": " + rule; }

std::optional<GeometryError> check_geometry(const ArrayGeometry& geo, Generation g) {
  const ArrayGeometry& preset = preset_geometry(g);
  auto error = [](const char* key, std::uint64_t value, std::string rule) {
    return std::optional<GeometryError>(GeometryError{std::string("geometry.") + key, value, std::move(rule)});
  };
  const std::string side = std::to_string(ArrayGeometry::kMinArraySide) + ".." +
                           std::to_string(ArrayGeometry::kMaxArraySide);
  if (!power_of_two(geo.pe_rows) || geo.pe_rows < ArrayGeometry::kMinArraySide ||
      geo.pe_rows > ArrayGeometry::kMaxArraySide)
    return error("pe_rows", geo.pe_rows,
                 "must be a power of two in " + side + " (num_active_rows is one byte, 0 meaning 256)");
  if (!power_of_two(geo.pe_cols) || geo.pe_cols < ArrayGeometry::kMinArraySide ||
      geo.pe_cols > ArrayGeometry::kMaxArraySide)
    return error("pe_cols", geo.pe_cols,
                 "must be a power of two in " + side + " (num_active_cols is one byte, 0 meaning 256)");
  // The grid, queues and ports are fixed by ISA field and register widths.
  if (geo.row_groups != preset.row_groups)
    return error("row_groups", geo.row_groups,
                 "fixed at " + std::to_string(preset.row_groups) +
                     " (the 4-bit row_grp mask, the array_stagger_rgN registers, the per-tile counter grid)");
  if (geo.col_groups != preset.col_groups)
    return error("col_groups", geo.col_groups,
                 "fixed at " + std::to_string(preset.col_groups) + " for " + std::string(name(g)) +
                     " (the 4-bit col_grp mask; MAVERICK: c128/c256 halves of 32-column cells)");
  if (geo.queues != preset.queues)
    return error("queues", geo.queues, "fixed at " + std::to_string(preset.queues) + " (003 section 3)");
  if (geo.sbuf_xbus_ports != preset.sbuf_xbus_ports)
    return error("sbuf_xbus_ports", geo.sbuf_xbus_ports,
                 "fixed at " + std::to_string(preset.sbuf_xbus_ports) + " (throttle_cfg.disable_throttle[8:0])");
  if (!power_of_two(geo.partitions) || geo.partitions < ArrayGeometry::kMinArraySide ||
      geo.partitions > ArrayGeometry::kMaxArraySide)
    return error("partitions", geo.partitions, "must be a power of two in " + side);
  if (geo.pe_rows > geo.partitions)
    return error("pe_rows", geo.pe_rows,
                 "exceeds geometry.partitions (" + std::to_string(geo.partitions) +
                     "): each PE row reads one SBUF partition");
  // A MAVERICK c256 tile folds its upper half into the destination's third
  // dimension, so its columns may reach twice the partitions.
  const std::uint32_t fold = is_maverick(g) ? 2 : 1;
  if (geo.pe_cols > fold * geo.partitions)
    return error("pe_cols", geo.pe_cols,
                 "exceeds " + std::string(fold == 2 ? "2 x " : "") + "geometry.partitions (" +
                     std::to_string(geo.partitions) + "): each PE column writes one PSUM partition" +
                     (fold == 2 ? " (c256 folds two halves)" : ""));
  constexpr std::uint32_t kPage = 4096;
  if (geo.sbuf_partition_bytes < kPage || geo.sbuf_partition_bytes % kPage != 0)
    return error("sbuf_partition_bytes", geo.sbuf_partition_bytes, "must be a multiple of 4096, at least 4096");
  if (std::uint64_t{geo.partitions} * geo.sbuf_partition_bytes > ArrayGeometry::kPsumBase)
    return error("sbuf_partition_bytes", geo.sbuf_partition_bytes,
                 "geometry.partitions x geometry.sbuf_partition_bytes must fit below PSUM at 0x2000000 (32 MiB; D-ADDR): at most " +
                     std::to_string(ArrayGeometry::kPsumBase / geo.partitions) + " with " +
                     std::to_string(geo.partitions) + " partitions");
  // psum_zero_region zeroes aligned blocks of 1, 2, 4 or 8 banks: they tile a
  // partition only when its bank count is a power of two.
  if (!power_of_two(geo.psum_banks) || geo.psum_banks > ArrayGeometry::kMaxPsumBanks)
    return error("psum_banks", geo.psum_banks,
                 "must be 1, 2, 4 or 8 (bank masks are one byte; psum_zero_region zeroes aligned blocks of 1, 2, 4 "
                 "or 8 banks)");
  constexpr std::uint32_t kMinBank = 64, kMaxBank = 65536;
  if (geo.psum_bank_bytes < kMinBank || geo.psum_bank_bytes > kMaxBank || geo.psum_bank_bytes % kMinBank != 0)
    return error("psum_bank_bytes", geo.psum_bank_bytes, "must be a multiple of 64 in 64..65536");
  return std::nullopt;
}

}  // namespace pevp::isa
