// RtlTile: drives the Verilated pe_tile (rtl/pe_tile.sv) cycle by cycle through RtlTile::Model -- the load port one
// stationary row per cycle, the moving stream one vector per cycle, PSUM reads answered as a synchronous memory
// would (the request sampled at an edge, its data valid after it), PSUM writes collected as the port presents them.
#include "pevp/pe_rtl/rtl_tile.h"

#include <stdexcept>

#include "tile_model.h"

namespace pevp::pe_rtl {

namespace {

std::string variant_name(Variant v) { return v == Variant::Exact ? "exact" : "broken-rounding"; }

std::string sizes_text(Variant v) {
  std::string text;
  for (const TileSize& s : built_sizes(v)) {
    if (!text.empty()) text += ", ";
    text += std::to_string(s.rows) + "x" + std::to_string(s.cols);
  }
  return text.empty() ? "none" : text;
}

unsigned dtype_code(TileDtype dt) {
  switch (dt) {
    case TileDtype::Bf16:
      return 0;
    case TileDtype::Fp16:
      return 1;
  }
  throw std::invalid_argument("RTL tile: unknown element format " + std::to_string(static_cast<unsigned>(dt)) +
                              " (Bf16 or Fp16)");
}

}  // namespace

std::vector<TileSize> built_sizes(Variant v) {
  std::vector<TileSize> sizes;
  for (const BuiltTile& t : built_tiles())
    if (t.variant == v) sizes.push_back(t.size);
  return sizes;
}

RtlTile::RtlTile(unsigned rows, unsigned cols, Variant variant) : rows_(rows), cols_(cols) {
  for (const BuiltTile& t : built_tiles())
    if (t.variant == variant && t.size.rows == rows && t.size.cols == cols) model_ = t.make();
  if (!model_) {
    if (!available())
      throw std::invalid_argument("RTL tile: this build has no RTL (Verilator was not found when it was configured)");
    throw std::invalid_argument("RTL tile: no " + variant_name(variant) + " " + std::to_string(rows) + "x" +
                                std::to_string(cols) + " tile was built (built: " + sizes_text(variant) + ")");
  }
  // Reset for one cycle, with a load that clears every stationary to +0.
  model_->set_reset(true);
  model_->set_load(true, true, 0);
  for (unsigned m = 0; m < cols_; ++m) model_->set_load_element(m, 0);
  model_->clock();
  model_->set_reset(false);
  model_->set_load(false, false, 0);
}

RtlTile::~RtlTile() = default;

unsigned RtlTile::rows() const { return rows_; }
unsigned RtlTile::cols() const { return cols_; }
std::uint64_t RtlTile::cycle() const { return model_->cycles(); }
void RtlTile::trace(const std::string& path) { model_->trace(path); }

std::uint64_t RtlTile::load_stationary(TileDtype dt, const std::uint16_t* w, unsigned k_count, unsigned m_count) {
  const unsigned code = dtype_code(dt);
  if (k_count > rows_ || m_count > cols_)
    throw std::invalid_argument("RTL tile: a " + std::to_string(k_count) + "x" + std::to_string(m_count) +
                                " stationary does not fit the " + std::to_string(rows_) + "x" +
                                std::to_string(cols_) + " tile (k_count <= rows, m_count <= cols)");
  if (w == nullptr && k_count > 0 && m_count > 0)
    throw std::invalid_argument("RTL tile: the stationary's elements are null (" + std::to_string(k_count) + "x" +
                                std::to_string(m_count) + ")");
  model_->set_dtype(code);
  const std::uint64_t start = model_->cycles();
  // Row 0 goes first with ld_first, which clears the rows no later cycle writes; k_count = 0 clears them all.
  const unsigned load_rows = k_count > 0 ? k_count : 1;
  for (unsigned k = 0; k < load_rows; ++k) {
    model_->set_load(true, k == 0, k);
    for (unsigned m = 0; m < cols_; ++m)
      model_->set_load_element(m, k < k_count && m < m_count ? w[k * m_count + m] : std::uint16_t{0});
    model_->clock();
  }
  model_->set_load(false, false, 0);
  loaded_k_ = k_count;
  loaded_m_ = m_count;
  return model_->cycles() - start;
}

RtlTile::StreamTiming RtlTile::stream(TileDtype dt, const std::uint16_t* x, unsigned n,
                                      const std::uint32_t* psum_in, bool accumulate, std::uint32_t* out) {
  const unsigned code = dtype_code(dt);
  if (n == 0) return {};
  if (x == nullptr && loaded_k_ > 0) throw std::invalid_argument("RTL tile: the moving vectors are null");
  if (out == nullptr) throw std::invalid_argument("RTL tile: the PSUM output is null");
  if (accumulate && psum_in == nullptr)
    throw std::invalid_argument("RTL tile: accumulate needs the PSUM input, which is null");
  model_->set_dtype(code);
  for (unsigned k = loaded_k_; k < rows_; ++k) model_->set_stream_element(k, 0);  // rows past k_count: +0

  // Vector j is sampled at edge j + 1 of this stream; a write the port presents after edge e is sampled at e + 1.
  // The array's pipeline is rows + cols + 1 cycles deep, so the last write comes well within `limit` edges.
  const std::uint64_t limit = std::uint64_t{n} + rows_ + cols_ + 8;
  StreamTiming timing;
  bool done = false;
  bool read_pending = false;
  std::uint32_t read_row = 0;
  for (std::uint64_t edge = 1; !done; ++edge) {
    if (edge > limit)
      throw std::logic_error("RTL tile: the last PSUM row of a " + std::to_string(n) + "-vector stream was not "
                             "written within " + std::to_string(limit) + " cycles");
    const std::uint64_t j = edge - 1;
    const bool feeding = j < n;
    model_->set_stream(feeding, feeding && j + 1 == n, accumulate);
    if (feeding)
      for (unsigned k = 0; k < loaded_k_; ++k) model_->set_stream_element(k, x[k * n + j]);
    model_->clock();

    if (model_->write_valid()) {
      const std::uint32_t row = model_->write_index();
      if (row >= n)
        throw std::logic_error("RTL tile: the PSUM port wrote row " + std::to_string(row) + " of a " +
                               std::to_string(n) + "-vector stream");
      for (unsigned m = 0; m < loaded_m_; ++m) out[std::size_t{m} * n + row] = model_->write_word(m);
      // sampled at edge + 1; vector 0 was sampled at edge 1
      if (timing.first_result == 0) timing.first_result = edge;
      timing.cycles = edge;
      done = model_->write_last();
    }
    // A read request the port showed during the cycle before this edge was sampled by it: its data are on
    // rd_data from now until the next edge (a synchronous one-cycle read).
    if (read_pending) {
      for (unsigned m = 0; m < loaded_m_; ++m) model_->set_read_word(m, psum_in[std::size_t{m} * n + read_row]);
      read_pending = false;
    }
    if (model_->read_enable()) {
      read_row = model_->read_index();
      if (read_row >= n)
        throw std::logic_error("RTL tile: the PSUM port read row " + std::to_string(read_row) + " of a " +
                               std::to_string(n) + "-vector stream");
      read_pending = true;
    }
  }
  // The edge that samples the last write.
  model_->set_stream(false, false, accumulate);
  model_->clock();
  return timing;
}

}  // namespace pevp::pe_rtl
