#include "pevp/isa/tiles.h"

#include "pevp/isa/enums.h"

namespace pevp::isa {

std::optional<TileRect> tile_of(const Decoded& d) {
  if (d.tile_known) return d.tile;
  return compute_tile(d);
}

std::optional<TileRect> compute_tile(const Decoded& d) {
  auto field = [&](std::string_view path) {
    const DecodedField* f = d.field(path);
    return f ? std::optional<std::int64_t>(f->value) : std::nullopt;
  };
  TileFields f;
  f.row_grp = field("row_grp");
  f.col_grp = field("col_grp");
  f.size_row = field("tile_size.row");
  f.size_col = field("tile_size.col");
  f.row_sel = field("tile_sel.row_sel");
  f.col_sel = field("tile_sel.col_sel");
  return tile_rect(f, d.geo);
}

std::optional<TileRect> tile_rect(const TileFields& f, const ArrayGeometry& geo) {
  if (f.row_grp && f.col_grp) {
    const auto r = decode_group_mask(static_cast<std::uint8_t>(*f.row_grp));
    const auto c = decode_group_mask(static_cast<std::uint8_t>(*f.col_grp));
    if (!r || !c) return std::nullopt;
    const unsigned gr = geo.group_rows(), gc = geo.group_cols();
    return TileRect{r->first * gr, r->count * gr, c->first * gc, c->count * gc};
  }
  if (f.size_row && f.size_col && f.row_sel && f.col_sel) {
    const auto row = *f.size_row, col = *f.size_col, row_sel = *f.row_sel, col_sel = *f.col_sel;
    if ((row != tile_size::R64 && row != tile_size::R128) || (col != tile_size::C128 && col != tile_size::C256))
      return std::nullopt;
    // D-GEOMETRY: R128 / C256 name the whole array, R64 / C128 half of it (the
    // sizes they spell on the spec's 128 x 256 array).
    const unsigned rows = row == tile_size::R128 ? geo.pe_rows : geo.pe_rows / 2;
    const unsigned cols = col == tile_size::C256 ? geo.pe_cols : geo.pe_cols / 2;
    if ((row_sel + 1) * rows > geo.pe_rows || (col_sel + 1) * cols > geo.pe_cols) return std::nullopt;
    return TileRect{static_cast<unsigned>(row_sel) * rows, rows, static_cast<unsigned>(col_sel) * cols, cols};
  }
  return std::nullopt;
}

std::string counter_tile_name(const TileRect& t, const ArrayGeometry& geo) {
  // In grid cells: 1, 2 or 4 cells wide, aligned, inside the counted 4 x 4 cells.
  const unsigned gr = counter_cell_rows(geo), gc = counter_cell_cols(geo);
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
