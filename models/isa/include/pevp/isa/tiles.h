// Where on the PE array an instruction runs: row_grp/col_grp (CAYMAN, MARIANA)
// or tile_size/tile_sel (MAVERICK), reduced to one rectangle, plus the
// per-tile perf-counter naming of 003 section 4.1.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "pevp/isa/decode.h"

namespace pevp::isa {

// The tile of a decoded instruction, or nothing when its tile fields are invalid
// or it has none.
std::optional<TileRect> tile_of(const Decoded& d);
// The same worked out from the fields by path (for a Decoded built by hand;
// decode() stores its typed form's tile in Decoded::tile).
std::optional<TileRect> compute_tile(const Decoded& d);
// The tile that tile fields place on `geo`, or nothing when they are invalid
// or the struct has none.
std::optional<TileRect> tile_rect(const TileFields& fields, const ArrayGeometry& geo);

// num_active_rows / num_active_cols are one byte: 0 encodes 256, and means it
// only on a tile that is 256 wide (the spec's MAVERICK c256 rule, D-GEOMETRY).
// The rows or columns an instruction really uses; `field` is the value as
// encoded, `tile_extent` the tile's rows or columns.
inline constexpr unsigned kActiveZeroMeans = 256;
inline unsigned active_extent(std::int64_t field, unsigned tile_extent) {
  return field == 0 && tile_extent == kActiveZeroMeans ? kActiveZeroMeans : static_cast<unsigned>(field);
}

// The per-tile counter banks of 003 section 4.1 count the tiles of a 4 x 4 grid
// of cells, naming a cell 32 (the 128 x 128 array's cell in PEs).
inline constexpr unsigned kCounterGridSide = 4;
inline constexpr unsigned kCounterCellName = 32;
// A cell of that grid spans a quarter of the array's rows and of its columns: the groups of the 128 x 128 presets
// (32 x 32), 32 x 64 PEs on MAVERICK's 128 x 256 array, so its columns 128-255 are counted and queued too.
inline unsigned counter_cell_rows(const ArrayGeometry& geo) { return geo.pe_rows / kCounterGridSide; }
inline unsigned counter_cell_cols(const ArrayGeometry& geo) { return geo.pe_cols / kCounterGridSide; }

// The 003 counter name of a tile: "tile_64x32_tile10" (shape rows x cols, index
// of the top-left cell, row-major over the 4 x 4 grid). On the 128 x 128 preset
// the shape is in PEs; on another geometry in cells of 32 (D-GEOMETRY: the
// spec's 49 names and offsets count the same fractions of any array). Empty for
// a shape the banks do not count.
std::string counter_tile_name(const TileRect& t, const ArrayGeometry& geo);

}  // namespace pevp::isa
