#include "pevp/host/dma_plan.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "pevp/pe_array/compute.h"

namespace pevp::host {

namespace {

constexpr std::uint64_t kImageAlign = 4096;  // each image starts on a page: rows never straddle two images

std::uint64_t align_up(std::uint64_t v, std::uint64_t a) { return (v + a - 1) / a * a; }

std::string text(std::uint64_t v) { return std::to_string(v); }

// The free range of an operand's loads: A's are indexed by m, B's by n.
std::size_t free_extent(const GemmShape& s, Operand op) { return op == Operand::A ? s.m : s.n; }

// The load over the whole free range of its k-tile, placed at partition 0, byte 0: one k-tile block of the image.
SbufLoad whole_ktile(const SbufLoad& load, std::size_t k0, std::size_t k_count, std::size_t free) {
  SbufLoad w = load;
  w.k0 = k0;
  w.k_count = k_count;
  w.f0 = 0;
  w.f_count = free;
  w.partition0 = 0;
  w.offset = 0;
  return w;
}

}  // namespace

DmaGemm::DmaGemm(const GemmPlan& plan, std::uint64_t hbm_base, DmaQueueUse queues, DmaSemaphores semaphores)
    : header_(plan), geo_(geometry_of(plan.options)), queues_(queues), sem_(semaphores), hbm_base_(hbm_base) {
  header_.steps.clear();
  if (plan.options.sbuf_buffers != 1 && plan.options.sbuf_buffers != 2)
    throw HostError("the DMA data path needs a plan of one or two SBUF buffers, got " + text(plan.options.sbuf_buffers));
  buffers_ = plan.options.sbuf_buffers;
  if (queues_.engines == 0 || queues_.queues_per_engine == 0)
    throw HostError("the DMA data path needs at least one engine with one queue");
  if (plan.psum_buffers != 1 && plan.psum_buffers != 2)
    throw HostError("the DMA data path needs a plan of one or two PSUM buffers, got " + text(plan.psum_buffers));
  c_base_ = align_up(hbm_base, kImageAlign);
  next_ = align_up(c_base_ + std::uint64_t{plan.shape.m} * plan.shape.n * sizeof(float), kImageAlign);
}

void DmaGemm::set_hbm_image(std::uint8_t* at_hbm_base, std::uint64_t bytes_available, unsigned host_threads,
                            DenseRange dense) {
  image_ = at_hbm_base;
  image_bytes_ = bytes_available;
  host_threads_ = host_threads;
  dense_ = std::move(dense);
  if (dense_) dense_(c_base_ - hbm_base_, next_ - c_base_);  // C, laid out at construction
}

std::uint16_t DmaGemm::token(std::size_t step) const {
  return static_cast<std::uint16_t>((step / buffers_) % 65535 + 1);
}

DmaGemm::Image& DmaGemm::image_of(const SbufLoad& load) {
  const auto key = std::make_pair(static_cast<int>(load.operand), static_cast<int>(load.content));
  auto it = images_.find(key);
  if (it != images_.end()) return it->second;
  Image img;
  img.free = free_extent(header_.shape, load.operand);
  const SbufLoad full = whole_ktile(load, 0, header_.k_tile, img.free);
  img.rows_per_ktile = static_cast<std::uint32_t>(full.partitions());
  const std::size_t ktiles = (header_.shape.k + header_.k_tile - 1) / header_.k_tile;
  img.ktiles = ktiles;
  img.block_bytes = full.bytes_per_partition();
  // Sparse fmaps hold F planes of the whole free range one after the other: their image stays one chunk.
  const std::size_t chunk = load.operand == Operand::A ? header_.image_chunk_a : header_.image_chunk_b;
  img.chunk = chunk == 0 || chunk >= img.free || load.content == SbufContent::SparseFmaps ? img.free : chunk;
  SbufLoad one = full;
  one.f_count = 1;
  img.per_free = one.bytes_per_partition();
  const std::uint64_t row = img.block_bytes * ktiles;
  if (row > UINT32_MAX)
    throw HostError("a row of operand " + std::string(load.operand == Operand::A ? "A" : "B") + "'s image is " +
                    text(row) + " bytes, over a descriptor's 32-bit stride");
  img.row_bytes = static_cast<std::uint32_t>(row);
  img.written.assign(ktiles, false);
  img.base = next_;
  next_ = align_up(next_ + std::uint64_t{img.rows_per_ktile} * row, kImageAlign);
  if (dense_ && image_ != nullptr) dense_(img.base - hbm_base_, next_ - img.base);
  return images_.emplace(key, std::move(img)).first->second;
}

void DmaGemm::write_block(Image& img, const SbufLoad& load, std::size_t ktile, const EncodedOperand& a,
                          const EncodedOperand& b) {
  const std::size_t k0 = ktile * header_.k_tile;
  const SbufLoad full = whole_ktile(load, k0, std::min(header_.k_tile, header_.shape.k - k0), img.free);
  // The rows straight from the operand where it holds them (B), else gathered into a buffer kept across blocks.
  const LoadRows rows = load_rows(full, a, b, gather_, host_threads_);
  const std::size_t n = full.partitions();
  const std::uint64_t first = img.base - hbm_base_;
  const std::uint64_t last_end = first + (n == 0 ? 0 : n * std::uint64_t{img.row_bytes});
  if (last_end > image_bytes_)
    throw HostError("the operands' images need " + text(last_end) + " bytes of device memory, more than the " +
                    text(image_bytes_) + " available (hbm.bytes)");
  // Each row's block over the whole free range goes out chunk by chunk, to k-tile `ktile` of each chunk.
  pe::for_each_share(n, kMinCopyShareBytes / std::max<std::uint64_t>(img.block_bytes, 1), host_threads_,
                     [&](std::size_t i0, std::size_t i1) {
                       for (std::size_t c = 0; c < img.chunks(); ++c) {
                         const std::uint64_t to = first + img.chunk_start(c) + ktile * img.chunk_block(c),
                                             from = c * img.chunk * img.per_free;
                         for (std::size_t i = i0; i < i1; ++i)
                           std::memcpy(image_ + to + i * img.row_bytes, rows.data + i * rows.stride + from,
                                       img.chunk_block(c));
                       }
                     });
  img.written[ktile] = true;
}

QueuedDescriptor DmaGemm::next_on(unsigned queue) {
  // Data goes round-robin over the engines other than the control queue's (engine 0), so a signal never waits for
  // its engine to finish a long copy; with one engine it shares it.
  const unsigned data_engines = queues_.engines > 1 ? queues_.engines - 1 : 1;
  QueuedDescriptor q;
  q.engine = queues_.engines > 1 ? 1 + next_engine_ : 0;
  q.queue = queue;
  next_engine_ = (next_engine_ + 1) % data_engines;
  return q;
}

DmaGemm::Slice DmaGemm::slice_of(const SbufLoad& load, const Image& img, std::size_t ktile) const {
  Slice sl;
  sl.image = &img;
  sl.partition0 = load.partition0;
  sl.rows = static_cast<std::uint32_t>(load.partitions());
  sl.dst = sbuf_address(geo_, load.partition0, load.offset);
  sl.reuse_distance = load.reuse_distance;
  // Contents whose bytes per partition grow with the free count hold free index f at f x per_free; sparse fmaps hold
  // F planes of the free range one after the other (sparse_operands.h), so a slice is one plane per fmap.
  sl.planes = load.content == SbufContent::SparseFmaps ? load.rows_per_partition : 1;
  SbufLoad one = load;
  one.f_count = 1;
  const std::uint64_t per_free = sl.planes > 1 ? load.element_bytes : one.bytes_per_partition();
  sl.bytes = per_free * load.f_count;
  const std::size_t c = load.f0 / img.chunk;
  sl.src_col = img.chunk_start(c) + ktile * img.chunk_block(c) + per_free * (load.f0 - c * img.chunk);
  sl.src_plane_stride = sl.planes > 1 ? img.free * load.element_bytes : 0;
  return sl;
}

bool DmaGemm::extends(const Slice& a, const Slice& b) {
  return a.image == b.image && a.reuse_distance == b.reuse_distance && a.planes == 1 && b.planes == 1 && a.partition0 == b.partition0 && a.rows == b.rows &&
         b.dst == a.dst + a.bytes && b.src_col == a.src_col + a.bytes;
}

void DmaGemm::add_slice(const Slice& sl, std::size_t pieces, DmaStep& out) {
  const std::size_t parts = std::max<std::size_t>(1, std::min<std::size_t>(pieces, sl.rows));
  const std::size_t chunk = (sl.rows + parts - 1) / parts;
  for (std::size_t r0 = 0; r0 < sl.rows; r0 += chunk) {
    const std::size_t n = std::min<std::size_t>(chunk, sl.rows - r0);
    QueuedDescriptor q = next_on(queues_.load_queue());
    dma::Descriptor& d = q.descriptor;
    d.kind = dma::Kind::COPY;
    d.elem_bytes = 1;
    d.src = sl.image->base + r0 * sl.image->row_bytes + sl.src_col;
    d.src_row_stride = sl.image->row_bytes;
    d.dst = std::uint64_t{sl.dst} + r0 * geo_.sbuf_partition_bytes;
    d.dst_row_stride = geo_.sbuf_partition_bytes;
    d.row_bytes = static_cast<std::uint32_t>(sl.bytes);
    d.rows = static_cast<std::uint32_t>(n);
    d.planes = sl.planes;
    d.src_plane_stride = static_cast<std::uint32_t>(sl.src_plane_stride);
    d.dst_plane_stride = sl.planes > 1 ? static_cast<std::uint32_t>(sl.bytes) : 0;
    if (sl.reuse_distance > 0) {  // the last step that reads the bytes it overwrites must have computed
      const std::size_t reader = step_ - sl.reuse_distance;
      d.wait_mode = isa::WaitMode::WAIT_EQ;
      d.wait_sem = sem_.done[reader % buffers_];
      d.wait_value = token(reader);
    }
    const unsigned counter = step_ % DmaSemaphores::kCopyCounters;
    d.update_mode = isa::UpdateMode::INCREMENT;
    d.update_sem = sem_.copies[counter];
    d.update_value = 1;
    out.load_bytes += sl.bytes * n * sl.planes;
    out.descriptors.push_back(q);
    ++copies_;
    ++counted_[counter];
  }
}

void DmaGemm::add_eviction(const PsumRead& read, DmaStep& out) {
  const std::uint64_t row_bytes = std::uint64_t{read.elements} * sizeof(float);
  const std::uint64_t c_stride = std::uint64_t{header_.shape.n} * sizeof(float);
  const std::size_t parts = std::max<std::size_t>(
      1, std::min<std::size_t>(read.partitions, std::max<std::size_t>(1, queues_.engines - 1) /
                                                     std::max<std::size_t>(1, reads_in_step_)));
  const std::size_t chunk = (read.partitions + parts - 1) / parts;
  for (std::size_t r0 = 0; r0 < read.partitions; r0 += chunk) {
    const std::size_t n = std::min<std::size_t>(chunk, read.partitions - r0);
    QueuedDescriptor q = next_on(queues_.eviction_queue());
    dma::Descriptor& d = q.descriptor;
    d.kind = dma::Kind::COPY;
    d.elem_bytes = sizeof(float);
    d.src = psum_address(geo_, read.partition0 + static_cast<std::uint32_t>(r0), read.bank, read.offset);
    d.src_row_stride = geo_.psum_partition_bytes();
    d.dst = c_base_ + ((read.row0 + r0) * header_.shape.n + read.col0) * sizeof(float);
    d.dst_row_stride = static_cast<std::uint32_t>(c_stride);
    d.row_bytes = static_cast<std::uint32_t>(row_bytes);
    d.rows = static_cast<std::uint32_t>(n);
    d.planes = 1;
    d.wait_mode = isa::WaitMode::WAIT_EQ;  // the step has computed
    d.wait_sem = sem_.done[step_ % buffers_];
    d.wait_value = token(step_);
    // The signal of the next step to write these banks counts it.
    const unsigned counter = (step_ + header_.psum_buffers) % DmaSemaphores::kCopyCounters;
    d.update_mode = isa::UpdateMode::INCREMENT;
    d.update_sem = sem_.copies[counter];
    d.update_value = 1;
    out.eviction_bytes += row_bytes * n;
    out.descriptors.push_back(q);
    ++copies_;
    ++counted_[counter];
  }
}

DmaStep DmaGemm::lower(const Step& step, const EncodedOperand* a, const EncodedOperand* b) {
  if (step.program.empty()) throw HostError("step " + text(step_) + " has no instruction");
  DmaStep out;
  const std::size_t b_index = step_ % buffers_;
  // The loads as slices of their images, neighbours that continue each other in SBUF and in the image merged into
  // one (a double-buffered plan lays an operand's k-tiles side by side), then spread over the engines.
  std::vector<Slice> slices;
  for (const SbufLoad& load : step.loads) {
    if (load.k0 % header_.k_tile != 0)
      throw HostError("a load of step " + text(step_) + " starts at k = " + text(load.k0) +
                      ", not on a k-tile boundary (" + text(header_.k_tile) + ")");
    Image& img = image_of(load);
    const std::size_t ktile = load.k0 / header_.k_tile;
    if (load.f0 + load.f_count > img.free)
      throw HostError("a load of step " + text(step_) + " reaches free index " + text(load.f0 + load.f_count) +
                      " of " + text(img.free));
    if (load.f_count > 0 && load.f0 / img.chunk != (load.f0 + load.f_count - 1) / img.chunk)
      throw HostError("a load of step " + text(step_) + " spans free indices " + text(load.f0) + " .. " +
                      text(load.f0 + load.f_count - 1) + ", across two chunks of " + text(img.chunk) +
                      " of its operand's image");
    if (image_ != nullptr && a != nullptr && b != nullptr && !img.written[ktile]) write_block(img, load, ktile, *a, *b);
    // A done semaphore keeps a step's token until the step two later computes: a load can wait for one of the two
    // steps before its own, the ones whose done tokens are still to be seen.
    if (load.reuse_distance > std::min<std::size_t>(buffers_, step_))
      throw HostError("a load of step " + text(step_) + " overwrites SBUF bytes step " +
                      (load.reuse_distance > step_ ? "-" + text(load.reuse_distance - step_)
                                                   : text(step_ - load.reuse_distance)) +
                      " reads; a plan of " + text(buffers_) + " buffer(s) can wait for the " +
                      (buffers_ == 1 ? "previous step" : "two previous steps") + " only");
    const Slice sl = slice_of(load, img, ktile);
    if (!slices.empty() && extends(slices.back(), sl)) slices.back().bytes += sl.bytes;
    else slices.push_back(sl);
  }
  // Each slice cut into pieces of about an equal share of the step's bytes per data engine (whole partitions), so
  // every engine carries a similar load whatever the mix of large and small slices.
  const std::uint64_t data_engines = queues_.engines > 1 ? queues_.engines - 1 : 1;
  std::uint64_t total = 0;
  for (const Slice& sl : slices) total += sl.bytes * sl.rows * sl.planes;
  const std::uint64_t share = std::max<std::uint64_t>(1, (total + data_engines - 1) / data_engines);
  for (const Slice& sl : slices) {
    const std::uint64_t bytes = sl.bytes * sl.rows * sl.planes;
    add_slice(sl, static_cast<std::size_t>(std::max<std::uint64_t>(1, bytes / share)), out);
  }
  // The signal: every load through this step and every eviction before it have completed.
  QueuedDescriptor signal;
  signal.engine = 0;
  signal.queue = queues_.control_queue();
  dma::Descriptor& s = signal.descriptor;
  s.kind = dma::Kind::SIGNAL;
  s.wait_mode = isa::WaitMode::WAIT_GE;
  const unsigned counter = step_ % DmaSemaphores::kCopyCounters;
  s.wait_sem = sem_.copies[counter];
  s.wait_value = static_cast<std::uint32_t>(counted_[counter]);
  s.update_mode = isa::UpdateMode::SET;
  s.update_sem = sem_.ready[b_index];
  s.update_value = token(step_);
  out.descriptors.push_back(signal);
  // The program: waits for its buffer, announces it has computed.
  out.program = step.program;
  isa::EventsArgs first, last;
  first.wait_mode = isa::WaitMode::WAIT_EQ;
  first.wait_sem = sem_.ready[b_index];
  first.wait_value = token(step_);
  last.update_mode = isa::UpdateMode::SET;
  last.update_sem = sem_.done[b_index];
  last.update_value = token(step_);
  if (out.program.size() == 1) {
    first.update_mode = last.update_mode;
    first.update_sem = last.update_sem;
    first.update_value = last.update_value;
    out.program.front() = isa::with_events(out.program.front(), first);
  } else {
    out.program.front() = isa::with_events(out.program.front(), first);
    out.program.back() = isa::with_events(out.program.back(), last);
  }
  reads_in_step_ = step.reads.size();
  for (const PsumRead& read : step.reads) add_eviction(read, out);
  ++step_;
  return out;
}

}  // namespace pevp::host
