// The fast kernel against the reference loop: bit-identical (uint32 patterns, NaN included) for random shapes
// (K 1..128, M 1..128, N 1..512, odd sizes and every block remainder), every input dtype and fp32_mode, with
// accumulate on and off. Operands include raw random codes (NaN, Inf, subnormals) and dst starts with some NaN/Inf.
#include <gtest/gtest.h>

#include <limits>
#include <ostream>

#include "test_util.h"

namespace {

using namespace pe_test;
using isa::Dtype;
using isa::Fp32Mode;
using isa::Generation;

struct KernelCase {
  const char* name;
  pe::OperandType type;
  bool accumulate;
};

void PrintTo(const KernelCase& c, std::ostream* os) { *os << c.name << (c.accumulate ? " acc" : " over"); }

std::string case_name(const ::testing::TestParamInfo<KernelCase>& info) {
  return std::string(info.param.name) + (info.param.accumulate ? "_acc" : "_over");
}

class pe_array_FastKernel : public ::testing::TestWithParam<KernelCase> {};

TEST_P(pe_array_FastKernel, BitIdenticalToReference) {
  const KernelCase& c = GetParam();
  std::mt19937 rng(static_cast<unsigned>(static_cast<unsigned>(c.type.dtype) * 131 +
                                         static_cast<unsigned>(c.type.fp32_mode) * 7 + c.accumulate));
  std::vector<pe::MatmulShape> shapes = {{1, 1, 1},   {128, 128, 512}, {1, 127, 511}, {128, 7, 13},
                                         {3, 6, 8},   {5, 5, 7},       {17, 12, 64},  {64, 1, 512},
                                         {2, 128, 1}, {33, 13, 65}};
  std::uniform_int_distribution<std::size_t> dk(1, 128), dm(1, 128), dn(1, 512);
  for (int i = 0; i < 8; ++i) shapes.push_back({dk(rng), dm(rng), dn(rng)});
  std::uniform_real_distribution<float> dval(-100.0f, 100.0f);
  std::uniform_int_distribution<int> special(0, 199);
  const float specials[] = {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(), -0.0f};
  for (const pe::MatmulShape& s : shapes) {
    SCOPED_TRACE(::testing::Message() << "K " << s.k << " M " << s.m << " N " << s.n);
    const std::vector<float> st = decode(c.type, random_operand(c.type, s.k * s.m, rng, 0.002));
    const std::vector<float> mv = decode(c.type, random_operand(c.type, s.k * s.n, rng, 0.002));
    ASSERT_EQ(st.size(), s.k * s.m);
    std::vector<float> ref(s.m * s.n);
    for (float& v : ref) {
      const int r = special(rng);
      v = r < 4 ? specials[r] : dval(rng);
    }
    std::vector<float> fast = ref;
    pe::matmul(pe::Kernel::Reference, c.type.fp32_mode, st.data(), mv.data(), ref.data(), s, c.accumulate);
    pe::matmul(pe::Kernel::Fast, c.type.fp32_mode, st.data(), mv.data(), fast.data(), s, c.accumulate);
    const long bad = first_bit_mismatch(ref, fast);
    ASSERT_EQ(bad, -1) << "ref " << std::hex << bits(ref[static_cast<std::size_t>(bad)]) << " fast "
                       << bits(fast[static_cast<std::size_t>(bad)]);
    // Same bits on a second run (no hidden state).
    std::vector<float> again(fast.size(), 0.0f);
    if (c.accumulate) {
      // Re-running accumulate needs the original dst; compare overwrite runs instead.
      std::vector<float> a1(fast.size()), a2(fast.size());
      pe::matmul(pe::Kernel::Fast, c.type.fp32_mode, st.data(), mv.data(), a1.data(), s, false);
      pe::matmul(pe::Kernel::Fast, c.type.fp32_mode, st.data(), mv.data(), a2.data(), s, false);
      ASSERT_EQ(first_bit_mismatch(a1, a2), -1);
    } else {
      pe::matmul(pe::Kernel::Fast, c.type.fp32_mode, st.data(), mv.data(), again.data(), s, false);
      ASSERT_EQ(first_bit_mismatch(fast, again), -1);
    }
  }
}

std::vector<KernelCase> all_cases() {
  const std::pair<const char*, pe::OperandType> types[] = {
      {"bf16", {Generation::MARIANA, Dtype::BFLOAT16, Fp32Mode::None}},
      {"fp16", {Generation::MARIANA, Dtype::FP16, Fp32Mode::None}},
      {"e4m3", {Generation::CAYMAN, Dtype::FP8_EXP4, Fp32Mode::None}},
      {"e4m3fn", {Generation::MARIANA, Dtype::FP8_EXP4, Fp32Mode::None}},
      {"e5m2", {Generation::MARIANA, Dtype::FP8_EXP5, Fp32Mode::None}},
      {"e3m4", {Generation::MARIANA, Dtype::FP8_EXP3, Fp32Mode::None}},
      {"e2m5", {Generation::MARIANA, Dtype::FP8_EXP2, Fp32Mode::None}},
      {"tf32_Low", {Generation::MARIANA, Dtype::FP32, Fp32Mode::Low}},
      {"fp32_High", {Generation::MARIANA, Dtype::FP32, Fp32Mode::High}},
      {"fp32_LowHigh", {Generation::MARIANA, Dtype::FP32, Fp32Mode::Low_High}},
  };
  std::vector<KernelCase> out;
  for (const auto& [name, t] : types)
    for (bool acc : {false, true}) out.push_back({name, t, acc});
  return out;
}

INSTANTIATE_TEST_SUITE_P(AllDtypes, pe_array_FastKernel, ::testing::ValuesIn(all_cases()), case_name);

}  // namespace
