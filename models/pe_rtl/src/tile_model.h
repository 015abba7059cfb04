// The face rtl_tile.cpp drives a Verilated tile through, the same for every size: the pe_tile pins one element at
// a time, and one clock cycle. src/verilated_tiles.cpp implements it per Verilated size; src/no_tiles.cpp is the
// build without Verilator.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "pevp/pe_rtl/rtl_tile.h"

namespace pevp::pe_rtl {

class RtlTile::Model {
 public:
  virtual ~Model() = default;

  // Inputs, held until changed.
  virtual void set_reset(bool on) = 0;
  virtual void set_dtype(unsigned code) = 0;  // pe_tile's dtype: 0 bf16, 1 fp16
  virtual void set_load(bool valid, bool first, unsigned row) = 0;
  virtual void set_load_element(unsigned m, std::uint16_t raw) = 0;
  virtual void set_stream(bool valid, bool last, bool accumulate) = 0;
  virtual void set_stream_element(unsigned k, std::uint16_t raw) = 0;
  virtual void set_read_word(unsigned m, std::uint32_t bits) = 0;

  // Outputs, as they are after the last rising edge.
  virtual bool read_enable() const = 0;
  virtual std::uint32_t read_index() const = 0;
  virtual bool write_valid() const = 0;
  virtual bool write_last() const = 0;
  virtual std::uint32_t write_index() const = 0;
  virtual std::uint32_t write_word(unsigned m) const = 0;

  // One clock cycle: the inputs settle with the clock low, then the rising edge.
  virtual void clock() = 0;
  virtual std::uint64_t cycles() const = 0;
  virtual void trace(const std::string& path) = 0;
};

// One Verilated size of one variant.
struct BuiltTile {
  Variant variant;
  TileSize size;
  std::unique_ptr<RtlTile::Model> (*make)();
};
const std::vector<BuiltTile>& built_tiles();

}  // namespace pevp::pe_rtl
