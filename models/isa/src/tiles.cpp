#include "pevp/isa/tiles.h"

#include "pevp/isa/enums.h"

namespace pevp::isa {

std::optional<TileRect> tile_of(const Decoded& d) {
  if (d.tile_known) return d.tile;
  return compute_tile(d);
}

std::optional<TileRect> compute_tile(const Decoded& d) {
  if (d.has("row_grp") && d.has("col_grp")) {
    const auto r = decode_group_mask(static_cast<std::uint8_t>(d.get("row_grp")));
    const auto c = decode_group_mask(static_cast<std::uint8_t>(d.get("col_grp")));
    if (!r || !c) return std::nullopt;
    const unsigned gr = d.geo.group_rows(), gc = d.geo.group_cols();
    return TileRect{r->first * gr, r->count * gr, c->first * gc, c->count * gc};
  }
  if (d.has("tile_size.row") && d.has("tile_sel.row_sel")) {
    const auto row = d.get("tile_size.row"), col = d.get("tile_size.col");
    const auto row_sel = d.get("tile_sel.row_sel"), col_sel = d.get("tile_sel.col_sel");
    if ((row != tile_size::R64 && row != tile_size::R128) || (col != tile_size::C128 && col != tile_size::C256))
      return std::nullopt;
    // D-GEOMETRY: R128 / C256 name the whole array, R64 / C128 half of it (the
    // sizes they spell on the spec's 128 x 256 array).
    const ArrayGeometry& geo = d.geo;
    const unsigned rows = row == tile_size::R128 ? geo.pe_rows : geo.pe_rows / 2;
    const unsigned cols = col == tile_size::C256 ? geo.pe_cols : geo.pe_cols / 2;
    if ((row_sel + 1) * rows > geo.pe_rows || (col_sel + 1) * cols > geo.pe_cols) return std::nullopt;
    return TileRect{static_cast<unsigned>(row_sel) * rows, rows, static_cast<unsigned>(col_sel) * cols, cols};
  }
  return std::nullopt;
}

std::string counter_tile_name(const TileRect& t, const ArrayGeometry& geo) {
  // In grid cells: 1, 2 or 4 cells wide, aligned, inside the counted 4 x 4 cells.
  const unsigned gr = geo.group_rows(), gc = geo.group_cols();
  auto ok = [](unsigned origin, unsigned size, unsigned cell) {
    if (origin % cell != 0 || size % cell != 0) return false;
    const unsigned o = origin / cell, n = size / cell;
    return (n == 1 || n == 2 || n == 4) && o % n == 0 && o + n <= kCounterGridSide;
  };
  if (!ok(t.row0, t.rows, gr) || !ok(t.col0, t.cols, gc)) return "";
  const unsigned index = (t.row0 / gr) * kCounterGridSide + t.col0 / gc;
  return "tile_" + std::to_string(t.rows / gr * kCounterCellName) + "x" + std::to_string(t.cols / gc * kCounterCellName) +
         "_tile" + std::to_string(index);
}

}  // namespace pevp::isa
