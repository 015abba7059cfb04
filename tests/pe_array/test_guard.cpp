// The fast kernel must never touch memory outside its operands, on any SIMD target: every operand here either
// ends exactly at a PROT_NONE page or starts right after one, so a read or write one element past either end is a
// crash, whatever the heap layout (valgrind and ASan can miss reads that land inside other allocations, and a
// full-vector load of an N tail is exactly such a read).
#include <gtest/gtest.h>
#include <hwy/targets.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "pevp/pe_array/compute.h"

namespace {

enum class Guard { After, Before };

// `bytes` of memory right before (After) or right after (Before) a PROT_NONE page.
class Guarded {
 public:
  Guarded(std::size_t bytes, Guard guard) {
    const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    size_ = ((bytes + page - 1) / page + 1) * page;
    base_ = static_cast<char*>(mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    if (base_ == MAP_FAILED) throw std::runtime_error("mmap failed");
    if (guard == Guard::After) {
      if (mprotect(base_ + size_ - page, page, PROT_NONE) != 0) throw std::runtime_error("mprotect failed");
      data_ = base_ + size_ - page - bytes;
    } else {
      if (mprotect(base_, page, PROT_NONE) != 0) throw std::runtime_error("mprotect failed");
      data_ = base_ + page;
    }
  }
  ~Guarded() { munmap(base_, size_); }
  Guarded(const Guarded&) = delete;
  Guarded& operator=(const Guarded&) = delete;
  std::uint8_t* bytes() { return reinterpret_cast<std::uint8_t*>(data_); }
  float* floats() { return reinterpret_cast<float*>(data_); }

 private:
  char* base_ = nullptr;
  std::size_t size_ = 0;
  char* data_ = nullptr;
};

// `count` floats of 1.0 next to a guard page.
struct GuardedOnes : Guarded {
  GuardedOnes(std::size_t count, Guard guard) : Guarded(count * sizeof(float), guard) {
    for (std::size_t i = 0; i < count; ++i) floats()[i] = 1.0f;
  }
  float* data() { return floats(); }
};

// `count` bf16 values of 1.0 (0x3F80, little-endian) next to a guard page: the moving operand as SBUF holds it.
struct GuardedBf16Ones : Guarded {
  GuardedBf16Ones(std::size_t count, Guard guard) : Guarded(count * 2, guard) {
    for (std::size_t i = 0; i < count; ++i) bytes()[2 * i] = 0x80, bytes()[2 * i + 1] = 0x3F;
  }
};

TEST(GuardPage, FastKernelStaysInsideItsOperandsOnEveryTarget) {
  for (const std::int64_t target : hwy::SupportedAndGeneratedTargets()) {
    hwy::SetSupportedTargetsForTest(target);
    for (const Guard guard : {Guard::After, Guard::Before})
      for (std::size_t k : {0u, 1u, 2u, 7u, 128u})
        for (std::size_t m : {1u, 2u, 3u, 4u, 5u, 6u, 7u, 126u, 128u})
          for (std::size_t n : {1u, 4u, 8u, 9u, 15u, 16u, 17u, 33u, 47u, 48u, 63u, 64u, 65u, 512u}) {
            GuardedOnes st(k * m, guard), mv(k * n, guard), dst(m * n, guard);
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

// The in-place entry on bf16 rows (widened a vector at a time in the pack) and the bf16 decoder (the same widening
// into the caller's array): the moving operand ends at or starts after a guard page, and so does dst.
TEST(GuardPage, Bf16RowsAndDecodeStayInsideTheirOperandsOnEveryTarget) {
  const pevp::pe::OperandType bf16{pevp::isa::Generation::MARIANA, pevp::isa::Dtype::BFLOAT16,
                                   pevp::isa::Fp32Mode::None};
  for (const std::int64_t target : hwy::SupportedAndGeneratedTargets()) {
    hwy::SetSupportedTargetsForTest(target);
    for (const Guard guard : {Guard::After, Guard::Before}) {
      for (std::size_t k : {1u, 2u, 128u})
        for (std::size_t m : {1u, 5u, 128u})
          for (std::size_t n : {1u, 7u, 8u, 9u, 15u, 16u, 17u, 33u, 63u, 64u, 65u, 77u, 512u}) {
            GuardedOnes st(k * m, guard), dst(m * n, guard);
            GuardedBf16Ones mv(k * n, guard);
            ASSERT_TRUE(pevp::pe::matmul_pass_fast_rows(st.data(), {mv.bytes(), n * 2, bf16}, {dst.data(), n},
                                                         {k, m, n}, true));
            ASSERT_EQ(dst.data()[0], 1.0f + static_cast<float>(k)) << hwy::TargetName(target) << " " << k << "x"
                                                                   << m << "x" << n;
            ASSERT_EQ(dst.data()[m * n - 1], 1.0f + static_cast<float>(k))
                << hwy::TargetName(target) << " " << k << "x" << m << "x" << n;
          }
      for (std::size_t count = 0; count <= 70; ++count) {
        GuardedBf16Ones src(count, guard);
        GuardedOnes out(count, guard);
        ASSERT_TRUE(pevp::pe::decode_operands(bf16, src.bytes(), count, out.data()));
        for (std::size_t i = 0; i < count; ++i)
          ASSERT_EQ(out.data()[i], 1.0f) << hwy::TargetName(target) << ", " << count << " values, value " << i;
      }
    }
  }
  hwy::SetSupportedTargetsForTest(0);
}

}  // namespace
