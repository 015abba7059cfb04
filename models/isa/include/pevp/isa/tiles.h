// Where on the PE array an instruction runs: row_grp/col_grp (CAYMAN, MARIANA)
// or tile_size/tile_sel (MAVERICK), reduced to one rectangle, plus the
// per-tile perf-counter naming of 003 section 4.1.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "pevp/isa/decode.h"

namespace pevp::isa {

struct TileRect {
  unsigned row0 = 0, rows = 0;  // PE rows (contraction)
  unsigned col0 = 0, cols = 0;  // PE columns (output partitions)
  bool operator==(const TileRect& o) const {
    return row0 == o.row0 && rows == o.rows && col0 == o.col0 && cols == o.cols;
  }
  // The rectangle as one integer (each coordinate fits 16 bits), for hash maps.
  std::uint64_t key() const {
    return std::uint64_t{row0} | std::uint64_t{rows} << 16 | std::uint64_t{col0} << 32 | std::uint64_t{cols} << 48;
  }
  bool overlaps(const TileRect& o) const {
    return row0 < o.row0 + o.rows && o.row0 < row0 + rows && col0 < o.col0 + o.cols && o.col0 < col0 + cols;
  }
};

// The tile of a decoded instruction, or nothing when its tile fields are invalid
// or it has none.
std::optional<TileRect> tile_of(const Decoded& d);

// The 003 counter name of a 128x128-array tile: "tile_64x32_tile10" (shape
// rows x cols, index of the top-left 32x32 quadrant, row-major over the 4x4
// grid). Empty for a shape the banks do not count.
std::string counter_tile_name(const TileRect& t);

}  // namespace pevp::isa
