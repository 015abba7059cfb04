#include "pevp/isa/tiles.h"

#include "pevp/isa/enums.h"

namespace pevp::isa {

std::optional<TileRect> tile_of(const Decoded& d) {
  if (d.has("row_grp") && d.has("col_grp")) {
    const auto r = decode_group_mask(static_cast<std::uint8_t>(d.get("row_grp")));
    const auto c = decode_group_mask(static_cast<std::uint8_t>(d.get("col_grp")));
    if (!r || !c) return std::nullopt;
    return TileRect{r->start(), r->size(), c->start(), c->size()};
  }
  if (d.has("tile_size.row") && d.has("tile_sel.row_sel")) {
    const auto row = d.get("tile_size.row"), col = d.get("tile_size.col");
    const auto row_sel = d.get("tile_sel.row_sel"), col_sel = d.get("tile_sel.col_sel");
    if ((row != tile_size::R64 && row != tile_size::R128) || (col != tile_size::C128 && col != tile_size::C256))
      return std::nullopt;
    const unsigned rows = 1u << row, cols = 1u << col;
    const Geometry& geo = geometry(d.gen);
    if ((row_sel + 1) * rows > geo.pe_rows || (col_sel + 1) * cols > geo.pe_cols) return std::nullopt;
    return TileRect{static_cast<unsigned>(row_sel) * rows, rows, static_cast<unsigned>(col_sel) * cols, cols};
  }
  return std::nullopt;
}

std::string counter_tile_name(const TileRect& t) {
  auto ok = [](unsigned origin, unsigned size) {
    return (size == 32 || size == 64 || size == 128) && origin % size == 0 && origin + size <= 128;
  };
  if (!ok(t.row0, t.rows) || !ok(t.col0, t.cols)) return "";
  const unsigned index = (t.row0 / 32) * 4 + t.col0 / 32;
  return "tile_" + std::to_string(t.rows) + "x" + std::to_string(t.cols) + "_tile" + std::to_string(index);
}

}  // namespace pevp::isa
