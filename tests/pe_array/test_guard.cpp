// The fast kernel must never touch memory outside its operands: every operand
// here ends exactly at a PROT_NONE page, so a read or write one element past
// the end is a crash, whatever the heap layout (valgrind and ASan can miss
// reads that land inside other allocations).
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <vector>

#include "pevp/pe_array/compute.h"

namespace {

class Guarded {
 public:
  explicit Guarded(std::size_t floats) {
    const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    const std::size_t bytes = floats * sizeof(float);
    pages_ = (bytes + page - 1) / page + 1;
    size_ = pages_ * page;
    base_ = static_cast<char*>(mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    if (base_ == MAP_FAILED) throw std::runtime_error("mmap failed");
    mprotect(base_ + size_ - page, page, PROT_NONE);
    data_ = reinterpret_cast<float*>(base_ + size_ - page - bytes);
    for (std::size_t i = 0; i < floats; ++i) data_[i] = 1.0f;
  }
  ~Guarded() { munmap(base_, size_); }
  Guarded(const Guarded&) = delete;
  Guarded& operator=(const Guarded&) = delete;
  float* data() { return data_; }

 private:
  char* base_ = nullptr;
  std::size_t pages_ = 0, size_ = 0;
  float* data_ = nullptr;
};

TEST(GuardPage, FastKernelStaysInsideItsOperands) {
  for (std::size_t k : {1u, 2u, 7u, 128u})
    for (std::size_t m : {1u, 2u, 3u, 5u, 6u, 7u, 126u, 128u})
      for (std::size_t n : {1u, 4u, 8u, 9u, 33u, 64u, 65u, 512u}) {
        Guarded st(k * m), mv(k * n), dst(m * n);
        pevp::pe::matmul_pass_fast(st.data(), mv.data(), dst.data(), {k, m, n}, true);
        ASSERT_EQ(dst.data()[m * n - 1], 1.0f + static_cast<float>(k)) << k << "x" << m << "x" << n;
      }
}

}  // namespace
