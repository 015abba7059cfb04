// Every Verilated pe_tile size behind RtlTile::Model. CMakeLists.txt Verilates one model per size and variant and
// writes pe_rtl_tiles.h: an #include of each model's header and the list PEVP_RTL_TILES(X), one
// X(Variant, rows, cols, class) per model.
#include <verilated.h>
#include <verilated_fst_c.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <type_traits>

#include "pe_rtl_tiles.h"
#include "tile_model.h"

namespace pevp::pe_rtl {

namespace {

// A packed port of any width as Verilator types it: CData/SData/IData/QData up to 64 bits, VlWide above. Fields are
// 16 or 32 bits wide at multiples of their width, so a field never straddles a 32-bit word.
template <class Port>
void put_field(Port& port, unsigned lsb, unsigned width, std::uint32_t value) {
  const std::uint64_t mask = (width == 32 ? 0xFFFFFFFFull : (1ull << width) - 1) << (lsb % 32);
  if constexpr (std::is_integral_v<Port>) {
    const std::uint64_t wide_mask = mask << (lsb / 32 * 32);
    const std::uint64_t bits = static_cast<std::uint64_t>(value) << lsb;
    port = static_cast<Port>((static_cast<std::uint64_t>(port) & ~wide_mask) | (bits & wide_mask));
  } else {
    EData& word = port[lsb / 32];
    word = static_cast<EData>((word & ~mask) | ((static_cast<std::uint64_t>(value) << (lsb % 32)) & mask));
  }
}

template <class Port>
std::uint32_t get_word(const Port& port, unsigned index) {
  if constexpr (std::is_integral_v<Port>)
    return static_cast<std::uint32_t>(static_cast<std::uint64_t>(port) >> (32 * index));
  else
    return port[index];
}

template <class V>
class VerilatedTile final : public RtlTile::Model {
 public:
  VerilatedTile() {
    context_.traceEverOn(true);
    top_ = std::make_unique<V>(&context_, "pe_tile");
  }
  ~VerilatedTile() override {
    if (fst_) fst_->close();
    top_->final();
  }

  void set_reset(bool on) override { top_->rst = on; }
  void set_dtype(unsigned code) override { top_->dtype = static_cast<CData>(code); }
  void set_load(bool valid, bool first, unsigned row) override {
    top_->ld_valid = valid;
    top_->ld_first = first;
    top_->ld_row = static_cast<std::remove_reference_t<decltype(top_->ld_row)>>(row);
  }
  void set_load_element(unsigned m, std::uint16_t raw) override { put_field(top_->ld_data, 16 * m, 16, raw); }
  void set_stream(bool valid, bool last, bool accumulate) override {
    top_->in_valid = valid;
    top_->in_last = last;
    top_->acc_en = accumulate;
  }
  void set_stream_element(unsigned k, std::uint16_t raw) override { put_field(top_->in_data, 16 * k, 16, raw); }
  void set_read_word(unsigned m, std::uint32_t bits) override { put_field(top_->rd_data, 32 * m, 32, bits); }

  bool read_enable() const override { return top_->rd_en; }
  std::uint32_t read_index() const override { return top_->rd_index; }
  bool write_valid() const override { return top_->wr_valid; }
  bool write_last() const override { return top_->wr_last; }
  std::uint32_t write_index() const override { return top_->wr_index; }
  std::uint32_t write_word(unsigned m) const override { return get_word(top_->wr_data, m); }

  void clock() override {
    // Time in units of a half cycle: the clock falls at 2c (inputs settle), rises at 2c + 1.
    top_->clk = 0;
    top_->eval();
    if (fst_) fst_->dump(2 * cycles_);
    top_->clk = 1;
    top_->eval();
    if (fst_) fst_->dump(2 * cycles_ + 1);
    ++cycles_;
  }
  std::uint64_t cycles() const override { return cycles_; }

  void trace(const std::string& path) override {
    if (fst_) {
      fst_->close();
      fst_.reset();
    }
    if (path.empty()) return;
    // The FST writer does not report a file it cannot create (and then writes through a null handle): try first.
    if (std::FILE* probe = std::fopen(path.c_str(), "wb"))
      std::fclose(probe);
    else
      throw std::runtime_error("RTL tile: cannot open the FST waveform '" + path + "': " + std::strerror(errno));
    auto fst = std::make_unique<VerilatedFstC>();
    top_->trace(fst.get(), 99);
    fst->open(path.c_str());
    if (!fst->isOpen()) throw std::runtime_error("RTL tile: cannot open the FST waveform '" + path + "'");
    fst_ = std::move(fst);
  }

 private:
  VerilatedContext context_;
  std::unique_ptr<V> top_;
  std::unique_ptr<VerilatedFstC> fst_;
  std::uint64_t cycles_ = 0;
};

template <class V>
std::unique_ptr<RtlTile::Model> make_tile() {
  return std::make_unique<VerilatedTile<V>>();
}

}  // namespace

bool available() { return true; }

const std::vector<BuiltTile>& built_tiles() {
#define PEVP_RTL_TILE_ENTRY(variant, rows, cols, model) BuiltTile{Variant::variant, {rows, cols}, &make_tile<model>},
  static const std::vector<BuiltTile> tiles{PEVP_RTL_TILES(PEVP_RTL_TILE_ENTRY)};
#undef PEVP_RTL_TILE_ENTRY
  return tiles;
}

}  // namespace pevp::pe_rtl
