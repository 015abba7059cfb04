// The fast kernel must never touch memory outside its operands, on any SIMD target: every operand here either
// ends exactly at a PROT_NONE page or starts right after one, so a read or write one element past either end is a
// crash, whatever the heap layout (valgrind and ASan can miss reads that land inside other allocations, and a
// full-vector load of an N tail is exactly such a read).
#include <gtest/gtest.h>
#include <hwy/targets.h>
#include <sys/mman.h>
#include <unistd.h>

#include <stdexcept>
#include <vector>

#include "pevp/pe_array/compute.h"

namespace {

enum class Guard { After, Before };

class Guarded {
 public:
  Guarded(std::size_t floats, Guard guard) {
    const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    const std::size_t bytes = floats * sizeof(float);
    size_ = ((bytes + page - 1) / page + 1) * page;
    base_ = static_cast<char*>(mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    if (base_ == MAP_FAILED) throw std::runtime_error("mmap failed");
    if (guard == Guard::After) {
      if (mprotect(base_ + size_ - page, page, PROT_NONE) != 0) throw std::runtime_error("mprotect failed");
      data_ = reinterpret_cast<float*>(base_ + size_ - page - bytes);
    } else {
      if (mprotect(base_, page, PROT_NONE) != 0) throw std::runtime_error("mprotect failed");
      data_ = reinterpret_cast<float*>(base_ + page);
    }
    for (std::size_t i = 0; i < floats; ++i) data_[i] = 1.0f;
  }
  ~Guarded() { munmap(base_, size_); }
  Guarded(const Guarded&) = delete;
  Guarded& operator=(const Guarded&) = delete;
  float* data() { return data_; }

 private:
  char* base_ = nullptr;
  std::size_t size_ = 0;
  float* data_ = nullptr;
};

TEST(GuardPage, FastKernelStaysInsideItsOperandsOnEveryTarget) {
  for (const std::int64_t target : hwy::SupportedAndGeneratedTargets()) {
    hwy::SetSupportedTargetsForTest(target);
    for (const Guard guard : {Guard::After, Guard::Before})
      for (std::size_t k : {0u, 1u, 2u, 7u, 128u})
        for (std::size_t m : {1u, 2u, 3u, 4u, 5u, 6u, 7u, 126u, 128u})
          for (std::size_t n : {1u, 4u, 8u, 9u, 15u, 16u, 17u, 33u, 47u, 48u, 63u, 64u, 65u, 512u}) {
            Guarded st(k * m, guard), mv(k * n, guard), dst(m * n, guard);
            pevp::pe::matmul_pass_fast(st.data(), mv.data(), dst.data(), {k, m, n}, true);
            // All ones: every element is 1 + K. The first and last are the ones next to a guard page.
            ASSERT_EQ(dst.data()[0], 1.0f + static_cast<float>(k)) << hwy::TargetName(target) << " " << k << "x"
                                                                   << m << "x" << n;
            ASSERT_EQ(dst.data()[m * n - 1], 1.0f + static_cast<float>(k))
                << hwy::TargetName(target) << " " << k << "x" << m << "x" << n;
          }
  }
  hwy::SetSupportedTargetsForTest(0);
}

}  // namespace
