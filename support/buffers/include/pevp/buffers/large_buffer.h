// Large zero-initialised byte buffers (the SBUF and PSUM backing stores, whole operands) mapped straight from the
// kernel and advised to use transparent huge pages.
//
// Why not std::vector: the PE array and the driver walk these buffers a row per partition, 256 KiB apart in SBUF,
// so with 4 KiB pages every row is a TLB miss and a new stream for the prefetchers; 2 MiB pages hold eight
// partitions each. An anonymous mapping is also zero already, so a 32 MiB SBUF costs no memset (its pages are
// touched when first used). Where the kernel does not honour the advice (THP "never"), the buffer works the same
// with small pages.
//
// A device memory (HBM, 12 GiB and more per core) is a different use: most of it is never touched, and a run that
// only times its accesses touches none of it. Backing::Sparse maps it MAP_NORESERVE without the huge-page advice, so
// it costs address space only, and a touched byte commits one small page, not 2 MiB.
#pragma once

#include <cstddef>
#include <cstdint>

namespace pevp::buffers {

// How the pages behind the buffer are committed.
enum class Backing : std::uint8_t {
  HugePages,  // swap space reserved for the whole buffer; advised onto 2 MiB pages (dense use: SBUF, PSUM)
  Sparse,     // no reservation (MAP_NORESERVE), small pages: memory only for the pages touched
};

class LargeBuffer {
 public:
  LargeBuffer() = default;
  // `bytes` zero bytes. Throws std::bad_alloc when the mapping fails.
  explicit LargeBuffer(std::size_t bytes, Backing backing = Backing::HugePages);
  ~LargeBuffer();
  LargeBuffer(LargeBuffer&& other) noexcept;
  LargeBuffer& operator=(LargeBuffer&& other) noexcept;
  LargeBuffer(const LargeBuffer&) = delete;
  LargeBuffer& operator=(const LargeBuffer&) = delete;

  std::uint8_t* data() { return data_; }
  const std::uint8_t* data() const { return data_; }
  std::size_t size() const { return size_; }
  // Advises the 2 MiB pages wholly inside [offset, offset + bytes) onto huge pages: for a range of a sparse buffer
  // that its user is about to fill densely (a GEMM's operands and result in device memory), where one fault per small
  // page would cost more than the data. Advice only, as at construction; the rest of the buffer stays sparse.
  void advise_dense(std::size_t offset, std::size_t bytes);
  // Every byte zero again, at the same address (pointers into the buffer stay valid); the pages go back to the
  // kernel, so a sparse buffer costs nothing again until touched.
  void zero();

 private:
  void release();
  void* mapping_ = nullptr;  // what munmap gets back: the mapping, larger than the buffer by the alignment slack
  std::size_t mapped_ = 0;
  std::uint8_t* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace pevp::buffers
