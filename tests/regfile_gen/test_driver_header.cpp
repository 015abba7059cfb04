// The generated driver headers on their own (no pevp/regfile/desc.h): constexpr
// values against the spec (003 sections 3, 4, 7; 000 section 10.2).
#include <gtest/gtest.h>

#include <cstdint>
#include <string_view>

#include "tpb_arr_seq_cluster_host_visible_regs.h"
#include "tpb_arr_seq_top_host_visible_regs.h"
#include "tpb_arr_seq_top_protected_regs.h"
#include "vp_seq_regs.h"

namespace top = pevp::regs::tpb_arr_seq_top_host_visible;
namespace prot = pevp::regs::tpb_arr_seq_top_protected;
namespace clu = pevp::regs::tpb_arr_seq_cluster_host_visible;
namespace vp = pevp::regs::vp_seq;

// Compile-time: the header is usable in constant expressions.
static_assert(top::arr_seq_cfg::queue_cfg::kOffset == 0x000);
static_assert(top::arr_seq_cfg::queue_cfg::disable_dependency_check::kMask == 0x100);
static_assert(top::arr_seq_cfg::perf_cntr_cfg::kOffset == 0x004);
static_assert(top::arr_seq_cfg::perf_cntr_cfg::cntr_rst::kShift == 4);
static_assert(prot::arr_seq_protected_cfg::throttle_cfg::disable_throttle::kReset == 0x1ff);

TEST(DriverHeader, TopArrSeqCfg) {
  namespace cfg = top::arr_seq_cfg;
  EXPECT_EQ(cfg::kBase, 0x000u);
  EXPECT_EQ(cfg::kBundleSize, 0x40u);
  EXPECT_EQ(cfg::queue_cfg::kOffset, 0x000u);
  EXPECT_EQ(cfg::queue_cfg::fifo_size_sel::kMask, 0x001u);
  EXPECT_EQ(cfg::queue_cfg::bypass_peregwrite_instr::kMask, 0x010u);
  EXPECT_EQ(cfg::queue_cfg::disable_dependency_check::kMask, 0x100u);
  EXPECT_EQ(cfg::queue_cfg::disable_dependency_check::kShift, 8u);
  EXPECT_EQ(cfg::queue_cfg::kRwMask, 0x111u);
  EXPECT_EQ(cfg::perf_cntr_cfg::kOffset, 0x004u);
  EXPECT_EQ(cfg::perf_cntr_cfg::cntr_en::kMask, 0x01u);
  EXPECT_EQ(cfg::perf_cntr_cfg::cntr_rst::kShift, 4u);
  EXPECT_EQ(cfg::perf_cntr_cfg::cntr_rst::kMask, 0x10u);
  EXPECT_EQ(std::string_view(cfg::perf_cntr_cfg::cntr_rst::kAccess), "PulseOnW");
  EXPECT_EQ(cfg::perf_cntr_cfg::kPulseMask, 0x10u);
  EXPECT_EQ(cfg::spare_register2::kOffset, 0x010u);
  EXPECT_EQ(cfg::spare_register2::kReset, 0xffffffffu);
  EXPECT_EQ(cfg::spare_register3::kReset, 0xffffffffu);
  EXPECT_EQ(cfg::spare_register1::kReset, 0u);
}

TEST(DriverHeader, TopPerfBanks) {
  EXPECT_EQ(top::arr_seq_ififo_perf_weight_load::kBase, 0x100u);
  EXPECT_EQ(top::arr_seq_ififo_perf_matmul::kBase, 0x300u);
  EXPECT_EQ(top::arr_seq_ififo_perf_pe_regwrite::kBase, 0x500u);
  EXPECT_EQ(top::arr_seq_ififo_perf_matmul::kBundleSize, 0x200u);
  EXPECT_EQ(top::arr_seq_ififo_perf_weight_load::tile_128x128_tile0_instr_cnt_lsb::kOffset, 0x100u);
  EXPECT_EQ(top::arr_seq_ififo_perf_matmul::tile_128x128_tile0_instr_cnt_msb::kOffset, 0x304u);
  EXPECT_EQ(top::arr_seq_ififo_perf_pe_regwrite::tile_32x32_tile15_instr_cnt_msb::kOffset, 0x6c4u);
  namespace msb = top::arr_seq_ififo_perf_matmul::tile_64x32_tile10_instr_cnt_msb::cntr_msb;
  EXPECT_EQ(msb::kMask, 0xffffu);  // 48-bit counters: the MSB half is [15:0]
  EXPECT_EQ(std::string_view(msb::kAccess), "RO");
  EXPECT_EQ(top::offsets::arr_seq_ififo_perf_matmul_tile_32x64_tile0_instr_cnt_lsb, 0x400u);
}

TEST(DriverHeader, TopDebugArrays) {
  namespace q = top::arr_seq_queue_debug;
  EXPECT_EQ(q::kArraySize, 16u);
  EXPECT_EQ(q::queue_debug_vector_2::kOffsets[15], 0x7f8u);
  EXPECT_EQ(top::arr_seq_sbuf_rd_req_debug::kArraySize, 9u);
  EXPECT_EQ(top::arr_seq_top_debug::arr_seq_debug_vector::kOffset, 0x840u);
  EXPECT_EQ(top::offsets::arr_seq_sbuf_rd_req_debug_sbuf_rd_req_debug_vector_8, 0x820u);
  EXPECT_EQ(top::kNumRegisters, 358u);
  EXPECT_EQ(top::kNumDefinitions, 305u);
  EXPECT_EQ(top::kNumFieldDefinitions, 308u);
}

TEST(DriverHeader, ProtectedThrottle) {
  namespace t = prot::arr_seq_protected_cfg::throttle_cfg;
  EXPECT_EQ(t::kOffset, 0x0u);
  EXPECT_EQ(t::disable_throttle::kReset, 0x1ffu);
  EXPECT_EQ(t::disable_throttle::kMask, 0x1ffu);
  EXPECT_EQ(t::hw_only_en_transfer_cnt_upd::kShift, 9u);
  EXPECT_EQ(t::hw_only_en_transfer_cnt_upd::kWidth, 4u);
  EXPECT_EQ(t::hw_only_en_transfer_cnt_upd::kMask, 0x1e00u);
  EXPECT_EQ(t::kReset, 0x1ffu);
}

TEST(DriverHeader, ClusterCfg) {
  namespace c = clu::arr_seq_cluster_cfg::arr_cluster_cfg;
  EXPECT_EQ(c::kOffset, 0x0u);
  EXPECT_EQ(c::matmul_done_last::kMask, 1u << 8);
  EXPECT_EQ(c::en_inter_instr_dly::kMask, 1u << 12);
  EXPECT_EQ(c::inter_instr_dly_cnt::kShift, 16u);
  EXPECT_EQ(c::inter_instr_dly_cnt::kWidth, 6u);
  EXPECT_EQ(c::inter_instr_dly_cnt::kMask, 0x3f0000u);
  EXPECT_EQ(c::inter_instr_dly_cnt::kReset, 8u);
  EXPECT_EQ(c::inter_instr_dly_cnt::get(c::kReset), 8u);
  EXPECT_EQ(c::wl_last_active_col::kWidth, 7u);
  EXPECT_EQ(clu::arr_seq_cluster_cfg::array_stagger_rg3_ctrl1::rg3_ctrl1::kMask, 0xffffu);
  // get/set round trip without touching other fields.
  constexpr std::uint32_t v = c::inter_instr_dly_cnt::set(c::kReset, 0x2a);
  static_assert(c::inter_instr_dly_cnt::get(v) == 0x2a);
  EXPECT_EQ(v & ~c::inter_instr_dly_cnt::kMask, c::kReset & ~c::inter_instr_dly_cnt::kMask);
}

TEST(DriverHeader, VpSeq) {
  EXPECT_TRUE(vp::kVpDefined);
  EXPECT_FALSE(top::kVpDefined);
  EXPECT_EQ(vp::seq_semaphore::kArraySize, 32u);
  EXPECT_EQ(vp::seq_semaphore::semaphore::kOffsets[31], 0x17cu);
  EXPECT_EQ(vp::seq_ctrl::seq_status::idle::kReset, 1u);
}
