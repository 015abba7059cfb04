// The driver scenario the checkpoint tests cut in two: program A leaves state that crosses the cut -- a stationary
// B's Matmul uses, a PSUM accumulation group still open, a semaphore B waits on, a non-default CSR configuration
// (serialised issue, an inter-instruction delay), PSUM stochastic-rounding seeds advanced by a bf16 drain (v4),
// a PeRegWrite value, and the SEQ stopped on a fault with two instructions still queued -- and B clears the error
// (the queued instructions close the group), then runs on. An observation of the end state (every CSR of every face
// read over the bus, the 48-bit retired count, PSUM and SBUF bytes, the completion time, the run statistics, the
// PE register) is what an uninterrupted run and a restored one must agree on.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pevp/isa/builders.h"
#include "pevp/isa_text/assembly.h"
#include "pevp/platform/checkpoint.h"
#include "pevp/platform/config.h"
#include "pevp/platform/driver.h"
#include "pevp/platform/recorder.h"
#include "pevp/platform/virtual_platform.h"
#include "tpb_arr_seq_cluster_host_visible_regs.h"
#include "tpb_arr_seq_top_host_visible_regs.h"
#include "tpb_arr_seq_top_protected_regs.h"
#include "vp_seq_regs.h"

namespace ckt {

namespace isa = pevp::isa;
namespace platform = pevp::platform;
using isa::Dtype;
using isa::Generation;
namespace pf = isa::psum_flags;

constexpr std::uint32_t kPsumBase = isa::ArrayGeometry::kPsumBase;
constexpr std::uint32_t kBank = 2048;
constexpr unsigned kSemaphore = 3;
constexpr std::uint16_t kSemaphoreValue = 7;

inline bool v4(Generation g) { return g == Generation::MARIANA || g == Generation::MARIANA_PLUS; }

inline platform::VpConfig scenario_config(Generation g) {
  platform::VpConfig c = platform::preset(g);
  if (v4(g)) platform::apply_override(c, "tensor_engine.psum_rounding=stochastic");
  return c;
}

// bf16 bits of small values with bits below bf16 precision in their fp32 products: rounding matters.
inline std::vector<std::uint16_t> operand_row(unsigned p, unsigned n, unsigned salt) {
  std::vector<std::uint16_t> row(n);
  for (unsigned i = 0; i < n; ++i) {
    const unsigned v = (p * 131 + i * 7 + salt * 977) % 251;
    row[i] = static_cast<std::uint16_t>(0x3F80 + v);  // 1.0 .. ~1.98 in bf16
  }
  return row;
}

inline void load_inputs(platform::Driver& d, const isa::ArrayGeometry& geo) {
  for (unsigned p = 0; p < 128; ++p) {
    const std::uint64_t base = d.map().sbuf + std::uint64_t{p} * geo.sbuf_partition_bytes;
    for (unsigned salt = 0; salt < 4; ++salt) {
      const auto row = operand_row(p, 128, salt);
      d.write(base + 0x1000 * salt, row.data(), row.size() * 2);
    }
    const std::uint32_t word = 0x12345600u + p;  // the PeRegWrite source word of partition 0
    d.write(base + 0x40, &word, 4);
  }
}

inline isa::RawInstruction ldweights(Generation g, std::uint32_t src) {
  isa::LdweightsArgs l;
  l.src = isa::Pattern::row(src, 128);
  l.in_dtype = Dtype::BFLOAT16;
  l.num_active_rows = 128;
  l.num_active_cols = 128;
  return isa::encode_ldweights(g, l);
}

inline isa::RawInstruction matmul(Generation g, std::uint32_t src, unsigned bank, std::uint8_t flags,
                                  Dtype out = Dtype::FP32, isa::EventsArgs events = {}) {
  isa::MatmulArgs m;
  m.src = isa::Pattern::row(src, 64);
  m.dst = isa::Pattern::row(kPsumBase + bank * kBank, 64);
  m.in_dtype = Dtype::BFLOAT16;
  m.out_dtype = out;
  m.num_active_rows = 128;
  m.num_active_cols = 128;
  m.psum_flags = flags;
  m.events = events;
  return isa::encode_matmul(g, m);
}

// The instruction of A that faults: at issue, in the array (no stationary on a 64 x 64 tile), when the mode
// executes; a timing-only run executes nothing, so there an invalid dtype faults when it is decoded.
inline bool executes(platform::SimMode mode) { return mode != platform::SimMode::Timing; }
inline const char* fault_rule(platform::SimMode mode) { return executes(mode) ? "exec.no_stationary" : "mm.in_dtype"; }

// Program A; its faulting instruction has two instructions of the open accumulation group queued behind it.
inline std::vector<isa::RawInstruction> program_a(Generation g, platform::SimMode mode) {
  std::vector<isa::RawInstruction> a;
  a.push_back(ldweights(g, 0x0000));
  isa::EventsArgs set;
  set.update_mode = isa::UpdateMode::SET;
  set.update_sem = kSemaphore;
  set.update_value = kSemaphoreValue;
  a.push_back(matmul(g, 0x1000, 0, pf::MULTI_START, Dtype::FP32, set));
  if (v4(g)) a.push_back(matmul(g, 0x2000, 4, pf::SINGLE, Dtype::BFLOAT16));  // advances the seeds
  const isa::AsmResult reg = isa::assemble(
      g, "pe_reg_write reg_addr=0x10 imm_value=0x3f800000 src=sbuf[0]+0x40:[1,1] row_grp=0xF col_grp=0xF\n");
  EXPECT_EQ(reg.records.size(), 1u);
  a.insert(a.end(), reg.records.begin(), reg.records.end());
  isa::MatmulArgs bad;
  bad.src = isa::Pattern::row(0x1000, 64);
  bad.dst = isa::Pattern::row(kPsumBase + 6 * kBank, 64);
  bad.num_active_rows = 64;
  bad.num_active_cols = 64;
  bad.tile = {0, 64, 0, 64};
  bad.psum_flags = pf::SINGLE;
  if (!executes(mode)) {
    bad.tile = {};
    bad.num_active_rows = bad.num_active_cols = 128;
    bad.in_dtype = static_cast<Dtype>(12);
  }
  a.push_back(isa::encode_matmul(g, bad));
  a.push_back(matmul(g, 0x2000, 0, pf::MULTI_MID));
  a.push_back(matmul(g, 0x3000, 0, pf::MULTI_END));
  return a;
}

// Program B: waits on A's semaphore, uses A's stationary (a bf16 drain from the seeds on v4), loads a new one.
inline std::vector<isa::RawInstruction> program_b(Generation g) {
  isa::EventsArgs wait;
  wait.wait_mode = isa::WaitMode::WAIT_GE;
  wait.wait_sem = kSemaphore;
  wait.wait_value = kSemaphoreValue;
  std::vector<isa::RawInstruction> b;
  b.push_back(matmul(g, 0x3000, 2, pf::SINGLE, Dtype::FP32, wait));
  if (v4(g)) b.push_back(matmul(g, 0x2000, 5, pf::SINGLE, Dtype::BFLOAT16));
  b.push_back(ldweights(g, 0x3000));
  b.push_back(matmul(g, 0x1000, 3, pf::SINGLE));
  return b;
}

// A: arm serialised with an inter-instruction delay, load, run to the fault.
inline void run_a(platform::Driver& d, const isa::ArrayGeometry& geo, Generation g, platform::SimMode mode) {
  platform::ArmOptions arm;
  arm.serialized = true;
  d.arm(arm);
  d.write_field("cluster", "arr_cluster_cfg", "en_inter_instr_dly", 1);
  d.write_field("cluster", "arr_cluster_cfg", "inter_instr_dly_cnt", 63);
  load_inputs(d, geo);
  d.submit(program_a(g, mode));
  const platform::Completion c = d.wait_idle();
  ASSERT_TRUE(c.error) << "program A must stop on its fault";
  ASSERT_TRUE(d.error_record());
  EXPECT_EQ(d.error_record()->rule, fault_rule(mode));
}

// B: clear the error (the queued instructions run), un-serialise, then program B to completion.
inline void run_b(platform::Driver& d, Generation g) {
  d.clear_error();
  // The queued instructions run serialised; B's own pipeline, with the inter-instruction delay A configured.
  d.write_field("top", "queue_cfg", "disable_dependency_check", 0);
  d.submit(program_b(g));
  const platform::Completion c = d.wait_idle();
  ASSERT_TRUE(c.done && !c.error) << (d.error_record() ? d.error_record()->describe() : "timeout");
}

inline std::string fnv(const std::uint8_t* p, std::size_t n) {
  std::uint64_t h = 1469598103934665603ull;
  for (std::size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ull;
  return std::to_string(h);
}

// The end state, read the way a driver can (CSRs over the bus, the protected face privileged) plus the memories'
// bytes (per partition), the statistics and the PE register, which software cannot read.
inline nlohmann::json observe(platform::Driver& d, platform::Platform& p) {
  nlohmann::json o;
  o["done_at_ps"] = sc_core::sc_time_stamp().value();
  o["retired"] = d.read_counter48("vp", "retired_cnt_lsb");
  const struct {
    const char* face;
    const pevp::regfile::RegFileDesc& desc;
    std::uint64_t base;
  } faces[] = {{"top", pevp::regs::tpb_arr_seq_top_host_visible::regfile_desc(), d.map().top()},
               {"cluster", pevp::regs::tpb_arr_seq_cluster_host_visible::regfile_desc(), d.map().cluster()},
               {"protected", pevp::regs::tpb_arr_seq_top_protected::regfile_desc(), d.map().protect()},
               {"vp", pevp::regs::vp_seq::regfile_desc(), d.map().vp_seq()}};
  for (const auto& f : faces)
    for (std::size_t i = 0; i < f.desc.num_registers; ++i) {
      const auto& r = f.desc.registers[i];
      o["csrs"][std::string(f.face) + ":" + std::string(r.bundle) + "." + std::string(r.name)] =
          d.read32(f.base + r.offset, std::string(f.face) == "protected");
    }
  const auto& geo = p.geometry();
  for (unsigned part = 0; part < geo.partitions; ++part) {
    o["psum"].push_back(fnv(p.psum.data() + std::uint64_t{part} * geo.psum_partition_bytes(), geo.psum_partition_bytes()));
    o["sbuf"].push_back(fnv(p.sbuf.data() + std::uint64_t{part} * geo.sbuf_partition_bytes, geo.sbuf_partition_bytes));
  }
  o["pe_register"] = p.array.pe_register(0, 0, 0x10);
  o["stats"] = platform::run_stats(p);
  o["end_ps"] = sc_core::sc_time_stamp().value();
  return o;
}

}  // namespace ckt
