// The GEMM's DMA data path (docs/memory-system.md "The GEMM through DMA"): A, B and C live in device memory (HBM),
// and each step of a double-buffered plan (GemmOptions::sbuf_buffers = 2) becomes DMA descriptors that load its
// operand tiles into SBUF, a program whose first instruction waits for them, and descriptors that evict its PSUM
// results to C -- synchronised through the SEQ's EVENTS semaphores, so the next step's loads run while this step
// computes. Plain C++: the runner (pe-vp gemm) writes the descriptors into rings and rings the doorbells.
//
// Operands in device memory (D-GEMM-DMA-LAYOUT): for each operand and kind of SBUF content (dense elements, MX words
// or scales, sparse weights or fmaps), one image holding, per k-tile, the rows its loads put in SBUF partitions over
// the operand's whole free range (A's M, B's N) -- the layout a compiler gives a layer's weights and activations in
// device memory. Any load of the plan is then a 2-D (or, for sparse fmaps, 3-D) slice of its image: one descriptor.
//
// Synchronisation (D-GEMM-DMA-SYNC), with B buffers (2, or 1 when two do not fit), token(s) = (s / B) mod 65535 + 1
// for step s in buffer b = s mod B, and P = GemmPlan::psum_buffers (2 when steps alternate between PSUM halves):
//   - each load of step s waits until done[r mod B] == token(r), r = s - its reuse distance (the last step that reads
//     the bytes it overwrites: s - B for a buffer, s - 1 for a B panel, D-GEMM-DMA-PANELS) has computed, and counts
//     itself into copies[s mod 4] when it completes;
//   - each eviction of step s waits until done[b] == token(s) and counts itself into copies[(s + P) mod 4];
//   - a SIGNAL descriptor on the control queue waits until copies[s mod 4] has counted every load of step s and every
//     eviction of step s - P (and of the steps four before them), then sets ready[b] = token(s);
//   - the step's first instruction waits until ready[b] == token(s); its last sets done[b] = token(s).
// Four counters, because one would be reached early by copies of later steps (loads of step s + 2 may finish before
// an eviction of step s - 1); no copy that counts into copies[s mod 4] after step s's can finish before step s's
// signal. EQ waits on tokens that never repeat within two steps keep every value inside the instructions' 16-bit
// wait.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <vector>

#include "pevp/dma/descriptor.h"
#include "pevp/host/gemm_plan.h"
#include "pevp/host/operands.h"
#include "pevp/isa/builders.h"
#include "pevp/isa/geometry.h"

namespace pevp::host {

// The EVENTS semaphores the DMA data path uses: the top five of the SEQ's, so a driver's own low ones stay free.
struct DmaSemaphores {
  static constexpr unsigned kCopyCounters = 4;
  std::uint8_t copies[kCopyCounters] = {24, 25, 26, 27};
  std::uint8_t ready[2] = {28, 29};
  std::uint8_t done[2] = {30, 31};
};

// Which queues carry what (D-GEMM-DMA-QUEUES): the control queue (engine 0, queue 0) the signals; on every other
// engine one queue the loads and another the evictions, so an eviction waiting for its step never holds a later load
// up and a signal never waits behind a copy.
struct DmaQueueUse {
  unsigned engines = 16, queues_per_engine = 16;
  unsigned control_queue() const { return 0; }  // on engine 0
  unsigned load_queue() const { return queues_per_engine > 1 ? 1 : 0; }
  unsigned eviction_queue() const { return queues_per_engine > 2 ? 2 : load_queue(); }
};

struct QueuedDescriptor {
  unsigned engine = 0, queue = 0;
  dma::Descriptor descriptor;
};

// One plan step lowered: descriptors in the order they are queued (loads, the signal, evictions) and the program
// with its EVENTS.
struct DmaStep {
  std::vector<QueuedDescriptor> descriptors;
  std::vector<isa::RawInstruction> program;
  std::uint64_t load_bytes = 0, eviction_bytes = 0;
};

class DmaGemm {
 public:
  // `plan` is the walked plan's header (shape, options, k_tile, element_bytes), of two SBUF buffers (the next step
  // loads while this one computes) or one (a step loads after the previous one computed: the fallback when two
  // buffers do not fit); HostError otherwise. Operands and C are laid out from `hbm_base` (a DMA address).
  DmaGemm(const GemmPlan& plan, std::uint64_t hbm_base, DmaQueueUse queues, DmaSemaphores semaphores = {});

  // Lowers the next step (steps must come in the plan's order). With operands given and an image set
  // (set_hbm_image), the blocks the step's loads read are written into device memory first, each once, when a load
  // first reads it. Throws HostError when a load does not fit its image or the images outgrow the memory.
  DmaStep lower(const Step& step, const EncodedOperand* a, const EncodedOperand* b);

  // Where the device memory's byte at DMA address hbm_base is in host memory (the HBM's backing store), for the
  // blocks lower() writes; null in a timing-only run (nothing is written).
  // The blocks are gathered and copied on up to `host_threads` host threads (pe::for_each_share; the same bytes for
  // every count), as the host data path's loads are. `dense`, when given, hears of each range of the image that the
  // run will fill densely (C, then each operand image as it is laid out), as (offset from hbm_base, bytes), before
  // anything is written there: the backing store may commit it in large pages.
  using DenseRange = std::function<void(std::uint64_t offset, std::uint64_t bytes)>;
  void set_hbm_image(std::uint8_t* at_hbm_base, std::uint64_t bytes_available, unsigned host_threads = 1,
                     DenseRange dense = {});

  // C (M x N fp32, row-major) in device memory, once every step's evictions have completed.
  std::uint64_t c_address() const { return c_base_; }
  // The first DMA address past everything laid out so far.
  std::uint64_t end() const { return next_; }
  // Copies the steps lowered so far count into counter i: the value it reaches when all of them are done.
  std::uint64_t copies(unsigned i) const { return counted_[i]; }
  std::uint64_t copies() const { return copies_; }
  const DmaSemaphores& semaphores() const { return sem_; }
  std::size_t steps() const { return step_; }

 private:
  // An operand's image in device memory: one row per SBUF partition, holding the rows its loads put there -- the
  // free range in chunks (GemmPlan::image_chunk_a / _b), each chunk k-tile after k-tile -- so the k-tiles of a step
  // that lie side by side in SBUF lie side by side here too.
  struct Image {
    std::uint64_t base = 0;         // DMA address of row 0
    std::uint32_t row_bytes = 0;    // one row: every chunk's every k-tile
    std::uint64_t block_bytes = 0;  // one k-tile over the whole free range (what load_payload gives per row)
    std::uint32_t rows_per_ktile = 0;
    std::size_t free = 0;           // the free range: M for A, N for B
    std::size_t chunk = 0;          // free elements per chunk (the last may be shorter); free: one chunk
    std::uint64_t per_free = 0;     // bytes of one free index in a row (chunked images only)
    std::size_t ktiles = 0;
    std::vector<bool> written;      // per k-tile
    std::size_t chunks() const { return (free + chunk - 1) / chunk; }
    // Bytes of one k-tile of chunk c, and where chunk c starts in a row.
    std::uint64_t chunk_block(std::size_t c) const {
      return chunks() == 1 ? block_bytes : std::min(chunk, free - c * chunk) * per_free;
    }
    std::uint64_t chunk_start(std::size_t c) const { return c * chunk * per_free * ktiles; }
  };
  // A load as a part of its image: `rows` partitions from partition0, `bytes` per row from column src_col of the
  // image's rows to SBUF address dst (planes: sparse fmaps, each the free range apart in the image).
  struct Slice {
    const Image* image = nullptr;
    std::uint32_t partition0 = 0, rows = 0, planes = 1;
    std::uint32_t dst = 0;
    std::uint64_t bytes = 0, src_col = 0, src_plane_stride = 0;
    unsigned reuse_distance = 0;  // SbufLoad::reuse_distance
  };
  Image& image_of(const SbufLoad& load);
  void write_block(Image& img, const SbufLoad& load, std::size_t ktile, const EncodedOperand& a,
                   const EncodedOperand& b);
  Slice slice_of(const SbufLoad& load, const Image& img, std::size_t ktile) const;
  static bool extends(const Slice& a, const Slice& b);  // b continues a, in SBUF and in the image
  // The descriptors of one slice, its partitions split into up to `pieces` descriptors (spread over the engines).
  void add_slice(const Slice& slice, std::size_t pieces, DmaStep& out);
  void add_eviction(const PsumRead& read, DmaStep& out);
  QueuedDescriptor next_on(unsigned queue);
  std::uint16_t token(std::size_t step) const;

  GemmPlan header_;
  isa::ArrayGeometry geo_;
  DmaQueueUse queues_;
  DmaSemaphores sem_;
  std::uint64_t c_base_ = 0, next_ = 0, hbm_base_ = 0;
  std::map<std::pair<int, int>, Image> images_;  // by (operand, content)
  std::uint8_t* image_ = nullptr;
  std::uint64_t image_bytes_ = 0;
  unsigned host_threads_ = 1;
  DenseRange dense_;
  std::vector<std::uint8_t> gather_;  // a block's rows where the operand does not hold them as rows (A's gather)
  std::size_t step_ = 0;
  unsigned buffers_ = 2;
  unsigned next_engine_ = 0;
  std::uint64_t copies_ = 0;
  std::uint64_t counted_[DmaSemaphores::kCopyCounters] = {};
  std::size_t reads_in_step_ = 0;
};

}  // namespace pevp::host
