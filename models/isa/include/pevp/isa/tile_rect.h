// A rectangle of PEs: where on the array an instruction runs (tiles.h works it
// out from an instruction's tile fields).
#pragma once

#include <cstdint>

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

}  // namespace pevp::isa
