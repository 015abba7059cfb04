// The build without Verilator: no Verilated tile (RtlTile's constructor then says so).
#include "tile_model.h"

namespace pevp::pe_rtl {

bool available() { return false; }

const std::vector<BuiltTile>& built_tiles() {
  static const std::vector<BuiltTile> none;
  return none;
}

}  // namespace pevp::pe_rtl
