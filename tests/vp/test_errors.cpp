// A negative test for every error class a driver can hit with an instruction (issue 4 section 7): unknown and not
// modelled opcodes, bad dtypes and dtype mixes, out-of-range patterns, PSUM bank overflow, accumulate into an
// unopened group, a matmul with no stationary, malformed EVENTS and headers. Each runs the same frame:
//
//   [0] Ldweights tile A  [1] Matmul A -> bank 0  [prelude...]  [bad]  [Matmul A += bank 1]  [Matmul A += bank 2]
//
// and checks: the queue stopped with seq_status.error and the interrupt line raised; the error record names the
// instruction index, opcode, field byte offset, value and rule (isa::rule_id of the number); everything before the
// faulting instruction executed and nothing after it did (all of PSUM against the reference, retired count, the two
// later instructions back in the queue); after clear_error the queue resumes with the next instruction and completes.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>

#include "vp_test_util.h"

namespace {

using namespace vpt;

constexpr int kNoCheck = -1;
const sc_core::sc_time kTimeout(2, sc_core::SC_MS);  // simulated; the programs need a few microseconds

struct Frame {
  Generation g;
  DtypeCase c{Dtype::BFLOAT16, Fp32Mode::None};
  unsigned K = 64, M = 64, N = 32;
  isa::Placement a;  // tile A: loaded
  isa::Placement b;  // tile B: disjoint from A, nothing loaded
  std::uint32_t st = 0, mv = 0x400;
  explicit Frame(Generation gen) : g(gen) {
    if (isa::is_maverick(g)) {
      a = {0, 64, 0, 128};
      b = {64, 64, 128, 128};
    } else {
      a = {0, 64, 0, 64};
      b = {64, 64, 64, 64};
    }
  }
  isa::LdweightsArgs lw() const { return ldw(c, st, K, M, a); }
  isa::MatmulArgs mm(unsigned bank) const { return mmul(c, mv, psum_addr(0, bank * kBank), K, M, N, pf::SINGLE, a); }
  // A one-shot accumulate onto what the bank holds: BEGIN_ACCUM|END on v3/v4, accumulate_flag on v5.
  isa::MatmulArgs acc(unsigned bank) const {
    auto x = mm(bank);
    x.psum_flags = pf::BEGIN_ACCUM_MATMUL_GROUP | pf::END_MATMUL_GROUP;
    x.accumulate = true;
    return x;
  }
  isa::RawInstruction enc(const isa::MatmulArgs& x) const { return isa::encode_matmul(g, x); }
};

struct ErrorCase {
  std::string name;
  Generation g;
  std::string rule;
  int field = kNoCheck;                // expected field byte offset (0xFF = no single field)
  std::optional<std::int64_t> value;   // expected err_value
  std::function<std::vector<Step>(const Frame&)> prelude;
  std::function<isa::RawInstruction(const Frame&)> bad;
  std::string self_name;  // a firmware self-name the log must show ("S: LdTags")
  bool must_decode_valid = false;  // the bad instruction is valid ISA (a not-modelled or execution-time error)

  ErrorCase(std::string n, Generation gen, std::string r, int fld, std::optional<std::int64_t> val,
            std::function<std::vector<Step>(const Frame&)> pre, std::function<isa::RawInstruction(const Frame&)> b,
            std::string self = "", bool valid = false)
      : name(std::move(n)), g(gen), rule(std::move(r)), field(fld), value(val), prelude(std::move(pre)),
        bad(std::move(b)), self_name(std::move(self)), must_decode_valid(valid) {}
};

isa::RawInstruction raw_opcode(std::uint8_t op) {
  isa::RawInstruction r{};
  r[0] = op;
  r[1] = 16;
  return r;
}

// ---- valid instances of the opcodes whose errors show at execution ------------------------------------------
void set_tile(isa::Encoder& e, Generation g) {
  if (isa::is_maverick(g)) {
    e.set("tile_size.row", isa::tile_size::R128).set("tile_size.col", isa::tile_size::C128);
  } else {
    e.set("row_grp", 0xF).set("col_grp", 0xF);
  }
}
// `words` u16 tag words per partition: 32 cover the 128 columns (four tags a word).
isa::RawInstruction ldtags(Generation g, unsigned words = 32) {
  isa::Encoder e(g, isa::Opcode::LDTAGS);
  e.set("src_mem_pattern.start_addr", 0x800)
      .set("src_mem_pattern.step_elem[0]", 1)
      .set("src_mem_pattern.num_elem[0]", words)
      .set("src_mem_pattern.num_elem[1]", 1)
      .set("src_mem_pattern.num_elem[2]", 1)
      .set("in_dtype", static_cast<int>(Dtype::UINT16))
      .set("num_active_rows", 128)
      .set("num_active_cols", 128);
  set_tile(e, g);
  return e.bytes();
}
isa::RawInstruction matmul_sparse(Generation g) {
  isa::Encoder e(g, isa::Opcode::MATMUL_SPARSE);
  e.set("src_mem_pattern.start_addr", 0x800)
      .set("src_mem_pattern.step_elem[0]", 1)
      .set("src_mem_pattern.num_elem[0]", 32)
      .set("src_mem_pattern.num_elem[1]", 1)
      .set("src_mem_pattern.num_elem[2]", 1)
      .set("src_mem_pattern.num_elem[3]", 2)
      .set("dst_mem_pattern.start_addr", psum_addr(0, 5 * kBank))
      .set("dst_mem_pattern.step_elem[0]", 1)
      .set("dst_mem_pattern.num_elem[0]", 32)
      .set("dst_mem_pattern.num_elem[1]", 1)
      .set("dst_mem_pattern.num_elem[2]", 1)
      .set("in_dtype", static_cast<int>(Dtype::BFLOAT16))
      .set("out_dtype", g == Generation::CAYMAN ? 0 : static_cast<int>(Dtype::FP32))  // v3: 0 = FP32
      .set("num_active_rows", 64)
      .set("num_active_cols", 64)
      .set("psum_accumulate_flags", pf::SINGLE);
  // Tile A of the frame, whose stationary the frame loaded (without tags).
  if (isa::is_maverick(g))
    e.set("tile_size.row", isa::tile_size::R64).set("tile_size.col", isa::tile_size::C128);
  else
    e.set("row_grp", 0x3).set("col_grp", 0x3);
  return e.bytes();
}
isa::RawInstruction conv_lut(Generation g) {
  isa::Encoder e(g, isa::Opcode::CONV_LUT_LOAD);
  e.set("src_mem_pattern.start_addr", 0x800)
      .set("src_mem_pattern.step_elem[0]", 1)
      .set("src_mem_pattern.num_elem[0]", 16)
      .set("src_mem_pattern.num_elem[1]", 1)
      .set("lut_dtype", static_cast<int>(Dtype::BFLOAT16));
  return e.bytes();
}
isa::RawInstruction pe_seed_load(Generation g) {
  isa::PeSeedArgs a;
  a.mode = isa::PeSeedMode::LOAD_SEED;
  a.src_seed = isa::Pattern{0, {1, 0}, {128, 1}};
  a.identity = isa::Pattern::row(0x5000, 16);
  return isa::encode_pe_seed(g, a);
}
isa::RawInstruction ldweights_mx(Generation g, std::uint32_t scale_addr = 0x6800) {
  isa::Encoder e(g, isa::Opcode::LDWEIGHTS_MX);
  e.set("src_mem_pattern.start_addr", 0x6000)
      .set("src_mem_pattern.scale_addr", scale_addr)
      .set("src_mem_pattern.step_elem", 1)
      .set("src_mem_pattern.num_elem", 128)
      .set("in_dtype", static_cast<int>(Dtype::FP8_EXP4))
      .set("num_active_rows", 128)
      .set("num_active_cols", 128)
      .set("row_grp", 0xF)
      .set("col_grp", 0xF);
  return e.bytes();
}
isa::RawInstruction matmul_mx(Generation g) {
  isa::Encoder e(g, isa::Opcode::MATMUL_MX);
  e.set("src_mem_pattern.start_addr", 0x6000)
      .set("src_mem_pattern.scale_addr", 0x6800)
      .set("src_mem_pattern.step_elem", 1)
      .set("src_mem_pattern.num_elem", 128)
      .set("dst_mem_pattern.start_addr", psum_addr(0, 5 * kBank))
      .set("dst_mem_pattern.step_elem[0]", 1)
      .set("dst_mem_pattern.num_elem[0]", 128)
      .set("dst_mem_pattern.num_elem[1]", 1)
      .set("dst_mem_pattern.num_elem[2]", 1)
      .set("in_dtype", static_cast<int>(Dtype::FP8_EXP4))
      .set("out_dtype", static_cast<int>(Dtype::FP32))
      .set("psum_accumulate_flags", pf::SINGLE)
      .set("num_active_rows", 128)
      .set("num_active_cols", 128)
      .set("row_grp", 0xF)
      .set("col_grp", 0xF);
  return e.bytes();
}
// MAVERICK: an Ldweights whose source is the MXTENSOR_V2 member (spec 7).
isa::RawInstruction ldweights_mx_v5(Generation g, std::uint32_t scale_addr = 0x8800) {
  isa::Encoder e(g, isa::Opcode::LDWEIGHTS);
  e.set("src_mem_pattern.start_addr", 0x8000 | isa::ADDR4MARKER_MXTENSOR_V2)
      .set("src_mem_pattern.scale_addr", scale_addr)
      .set("src_mem_pattern.step_elem[0]", 1)
      .set("src_mem_pattern.num_elem[0]", 128)
      .set("src_mem_pattern.num_elem[1]", 1)
      .set("in_dtype", static_cast<int>(Dtype::FP8_EXP4))
      .set("num_active_rows", 128)
      .set("num_active_cols", 128)
      .set("tile_size.row", isa::tile_size::R128)
      .set("tile_size.col", isa::tile_size::C128);
  return e.bytes();
}

// The SBUF address of the last partition's first byte.
std::uint32_t last_partition(Generation g) {
  const auto geo = isa::preset_geometry(g);
  return (geo.partitions - 1) * geo.sbuf_partition_bytes;
}

// Field byte offsets (spec 000 for the structs; D-HEADER / D-EVENTS for the header and EVENTS).
constexpr int kOpcode = 0, kWordLen = 1, kWaitSem = 5, kUpdateSem = 7, kUpdateValue = 10, kSrcStart = 16,
              kInDtype = 32, kFp32Mode = 33, kPsumFlags = 43, kZeroRegion = 47, kDstStart = 48, kNone = 0xFF;
int rows_offset(Generation g) { return isa::is_maverick(g) ? 35 : 38; }

std::vector<ErrorCase> error_cases() {
  std::vector<ErrorCase> v;
  auto none = [](const Frame&) { return std::vector<Step>{}; };
  for (Generation g : isa::kAllGenerations) {
    const bool v5 = isa::is_maverick(g);
    const std::string G = std::string(isa::name(g)) + "_";
    v.push_back({G + "UnknownOpcode05", g, "opcode.unknown", kOpcode, 5, none,
                 [](const Frame&) { return raw_opcode(0x05); }});
    v.push_back({G + "HeaderWordLength", g, "header.inst_word_len", kWordLen, 8, none, [](const Frame& f) {
                   auto r = f.enc(f.mm(4));
                   r[1] = 8;
                   return r;
                 }});
    // LdTags and MatmulSparse execute (D-SPARSE-*): 31 tag words do not cover 128 columns, and the frame's tile A
    // holds a stationary but no tags.
    v.push_back({G + "LdTagsWordsDoNotCoverTheColumns", g, "exec.pattern_count", kNoCheck, std::nullopt, none,
                 [](const Frame& f) { return ldtags(f.g, 31); }, "S: LdTags", true});
    v.push_back({G + "MatmulSparseWithoutTags", g, "exec.sparse_no_tags", kNoCheck, std::nullopt, none,
                 [](const Frame& f) { return matmul_sparse(f.g); }, "S: MatmulSparse", true});
    if (isa::is_v4_plus(g))
      // ConvLutLoad executes (D-CONVLUT); a bf16 lut_dtype is valid ISA but has no converter table.
      v.push_back({G + "ConvLutLoadOfADtypeWithoutATable", g, "exec.convlut", kNoCheck, std::nullopt, none,
                   [](const Frame& f) { return conv_lut(f.g); }, "S: ConvLutLoad", true});
    if (isa::is_v4(g)) {
      // PeManageSeed executes; its identity (what SBUF holds at 0x5000) is checked at run time.
      v.push_back({G + "PeManageSeedThroughANonIdentity", g, "exec.seed_identity", kNoCheck, std::nullopt, none,
                   [](const Frame& f) { return pe_seed_load(f.g); }, "S: PeManageSeed(LOAD)", true});
      // The MX ops execute: scales that leave SBUF (16 groups of 8 partitions from partition 127) fault at run
      // time, and a MatmulMX finds no stationary on its 128 x 128 tile (the frame loaded 64 x 64).
      v.push_back({G + "LdweightsMxScalesLeaveSbuf", g, "exec.mx_scales", kNoCheck, std::nullopt, none,
                   [](const Frame& f) { return ldweights_mx(f.g, last_partition(f.g)); },
                   "S: LdweightsMX", true});
      v.push_back({G + "MatmulMxWithoutAStationary", g, "exec.no_stationary", kNoCheck, std::nullopt, none,
                   [](const Frame& f) { return matmul_mx(f.g); }, "XS: MatmulMX", true});
    }
    if (g == Generation::CAYMAN) {
      for (std::uint8_t op : {0x08, 0x09, 0x0A, 0xE4})
        v.push_back({G + "UnknownOpcode" + hex(op).substr(2), g, "opcode.unknown", kOpcode, op, none,
                     [op](const Frame&) { return raw_opcode(op); }});
    }
    if (v5) {
      v.push_back({G + "PeManageSeedIsV4Only", g, "pe_seed.v4_only", kOpcode, 0x08, none,
                   [](const Frame& f) { return pe_seed_load(f.g); }, "S: PeManageSeed(LOAD)"});
      v.push_back({G + "SeparateMxOpsReplaced", g, "mx.separate_ops_v4", kOpcode, 0x09, none,
                   [](const Frame& f) { return ldweights_mx(f.g); }, "S: LdweightsMX"});
      v.push_back({G + "MxTensorLdweightsScalesLeaveSbuf", g, "exec.mx_scales", kNoCheck, std::nullopt, none,
                   [](const Frame& f) { return ldweights_mx_v5(f.g, last_partition(f.g)); },
                   "S: Ldweights", true});
    }
    // dtypes
    v.push_back({G + "BadInDtype", g, "mm.in_dtype", kInDtype, static_cast<int>(Dtype::INT8), none,
                 [](const Frame& f) {
                   auto a = f.mm(4);
                   a.in_dtype = Dtype::INT8;
                   return f.enc(a);
                 }});
    v.push_back({G + "Fp32StationaryBf16Moving", g, "mm.fp32_no_mix", kInDtype, static_cast<int>(Dtype::BFLOAT16),
                 [](const Frame& f) {
                   auto l = ldw({Dtype::FP32, Fp32Mode::High}, 0x1000, f.K, f.M, f.b);
                   return std::vector<Step>{lw_step(f.g, l)};
                 },
                 [](const Frame& f) {
                   auto a = f.mm(4);
                   a.tile = f.b;
                   return f.enc(a);
                 }});
    v.push_back({G + "Bf16StationaryFp32Moving", g, "mm.fp32_no_mix", kInDtype, static_cast<int>(Dtype::FP32), none,
                 [](const Frame& f) {
                   auto a = f.mm(4);
                   a.in_dtype = Dtype::FP32;
                   a.fp32_mode = Fp32Mode::Low;
                   return f.enc(a);
                 }});
    v.push_back({G + "Fp32ModeMismatch", g, "mm.fp32_mode_match", kFp32Mode, static_cast<int>(Fp32Mode::Low),
                 [](const Frame& f) {
                   auto l = ldw({Dtype::FP32, Fp32Mode::High}, 0x1000, f.K, f.M, f.b);
                   return std::vector<Step>{lw_step(f.g, l)};
                 },
                 [](const Frame& f) {
                   auto a = f.mm(4);
                   a.tile = f.b;
                   a.in_dtype = Dtype::FP32;
                   a.fp32_mode = Fp32Mode::Low;
                   return f.enc(a);
                 }});
    // patterns
    v.push_back({G + "SbufPartitionsOverflow", g, "mempattern.partitions", kSrcStart, std::nullopt, none,
                 [](const Frame& f) {
                   auto a = f.mm(4);
                   a.src.start_addr = 100 * isa::preset_geometry(f.g).sbuf_partition_bytes;  // 100 + 64 > 128
                   return f.enc(a);
                 }});
    v.push_back({G + "SbufAddressOutside", g, "mempattern.src_sbuf", kSrcStart,
                 static_cast<std::int64_t>(isa::preset_geometry(g).sbuf_bytes()), none, [](const Frame& f) {
                   auto a = f.mm(4);
                   a.src.start_addr = isa::preset_geometry(f.g).sbuf_bytes();
                   return f.enc(a);
                 }});
    v.push_back({G + "PsumPartitionsOverflow", g, "mempattern.partitions", kDstStart, psum_addr(100, 0), none,
                 [](const Frame& f) {
                   auto a = f.mm(4);
                   a.dst.start_addr = psum_addr(100, 0);
                   return f.enc(a);
                 }});
    v.push_back({G + "DestinationInSbuf", g, "mempattern.dst_psum", kDstStart, 0x2000, none, [](const Frame& f) {
                   auto a = f.mm(4);
                   a.dst.start_addr = 0x2000;
                   return f.enc(a);
                 }});
    v.push_back({G + "SourceLeavesItsPartition", g, "exec.pattern_partition_bounds", kNoCheck, std::nullopt, none,
                 [](const Frame& f) {
                   auto a = f.mm(4);
                   a.src.start_addr = isa::preset_geometry(f.g).sbuf_partition_bytes - 16;  // 32 bf16 = 64 bytes
                   return f.enc(a);
                 },
                 "", true});
    // PSUM bank overflow: 32 fp32 elements from 64 bytes before the end of bank 0.
    if (!isa::is_v4_plus(g)) {
      v.push_back({G + "PsumBankOverflow", g, "mm.psum_footprint", kDstStart, psum_addr(0, kBank - 64), none,
                   [](const Frame& f) {
                     auto a = f.mm(4);
                     a.dst.start_addr = psum_addr(0, kBank - 64);
                     return f.enc(a);
                   }});
    } else {
      // A v4+ output may span the banks of its partition (D-EXEC-MULTIBANK), not leave the partition.
      v.push_back({G + "PsumPartitionOverflow", g, "mm.psum_footprint", kDstStart, psum_addr(0, kPsumPart - 64),
                   none, [](const Frame& f) {
                     auto a = f.mm(4);
                     a.dst.start_addr = psum_addr(0, kPsumPart - 64);
                     return f.enc(a);
                   }});
    }
    // groups (v3/v4 only; MAVERICK has no group bits)
    if (!v5) {
      v.push_back({G + "AccumulateIntoUnopenedGroupMid", g, "exec.psum_group_unopened", kPsumFlags, pf::MULTI_MID,
                   none,
                   [](const Frame& f) {
                     auto a = f.mm(3);
                     a.psum_flags = pf::MULTI_MID;
                     return f.enc(a);
                   },
                   "", true});
      v.push_back({G + "AccumulateIntoUnopenedGroupEnd", g, "exec.psum_group_unopened", kPsumFlags, pf::MULTI_END,
                   none,
                   [](const Frame& f) {
                     auto a = f.mm(3);
                     a.psum_flags = pf::MULTI_END;
                     return f.enc(a);
                   },
                   "", true});
      if (g != Generation::CAYMAN)
        v.push_back({G + "OverwriteIntoUnopenedGroupMid", g, "exec.psum_group_unopened", kPsumFlags, pf::MULTI_MID,
                     none,
                     [](const Frame& f) {
                       auto a = f.mm(3);
                       a.psum_flags = pf::MULTI_MID;
                       a.accumulate = false;  // D-EXEC-UNOPENED-MARIANA: still needs an open group
                       return f.enc(a);
                     },
                     "", true});
      v.push_back({G + "GroupAlreadyOpen", g, "exec.psum_group_open", kPsumFlags, pf::MULTI_START,
                   [](const Frame& f) {
                     auto a = f.mm(3);
                     a.psum_flags = pf::MULTI_START;
                     return std::vector<Step>{mm_step(f.g, a)};
                   },
                   [](const Frame& f) {
                     auto a = f.mm(3);
                     a.psum_flags = pf::MULTI_START;
                     return f.enc(a);
                   },
                   "", true});
      v.push_back({G + "BadZeroRegion", g, "psum.zero_region", kZeroRegion, 5, none, [](const Frame& f) {
                     auto r = f.enc(f.mm(4));
                     r[kZeroRegion] = 5;
                     return r;
                   }});
    }
    // the stationary
    v.push_back({G + "MatmulWithoutStationary", g, "exec.no_stationary", kNone, 0, none,
                 [](const Frame& f) {
                   auto a = f.mm(4);
                   a.tile = f.b;
                   return f.enc(a);
                 },
                 "", true});
    v.push_back({G + "MatmulKDiffersFromStationary", g, "exec.k_mismatch", rows_offset(g), 32, none,
                 [](const Frame& f) {
                   auto a = f.mm(4);
                   a.num_active_rows = 32;
                   return f.enc(a);
                 },
                 "", true});
    // A transposing matmul routes through a 0/1 stationary; the frame's random weights are not one.
    v.push_back({G + "TransposeThroughANonIdentityStationary", g, "exec.xpose_stationary", kNoCheck, std::nullopt, none,
                 [](const Frame& f) {
                   auto a = f.mm(4);
                   a.xpose = true;
                   a.dst.num_elem = {static_cast<std::uint16_t>(f.M)};  // N partitions of M
                   return f.enc(a);
                 },
                 "", true});
    // EVENTS
    v.push_back({G + "EventsNoneModeWithIndex", g, "events.unused_zero", kUpdateSem, 3, none, [](const Frame& f) {
                   auto a = f.mm(4);
                   a.events.update_sem = 3;  // update_mode NONE
                   return f.enc(a);
                 }});
    v.push_back({G + "EventsNoneModeWithValue", g, "events.unused_zero", kUpdateValue, 9, none, [](const Frame& f) {
                   auto a = f.mm(4);
                   a.events.update_value = 9;
                   return f.enc(a);
                 }});
    v.push_back({G + "EventsSemaphoreIndex", g, "events.sem_index", kWaitSem, 40, none, [](const Frame& f) {
                   auto a = f.mm(4);
                   a.events.wait_mode = isa::WaitMode::WAIT_GE;
                   a.events.wait_sem = 40;
                   return f.enc(a);
                 }});
  }
  return v;
}

void PrintTo(const ErrorCase& c, std::ostream* os) { *os << c.name; }

class InstructionError : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(InstructionError, StopsRecordsAndResumes) {
  const ErrorCase& ec = GetParam();
  const Generation g = ec.g;
  platform::PlatformConfig cfg;
  cfg.gen = g;
  platform::VirtualPlatform vp(cfg);
  const Frame f(g);
  vp.run([&](platform::Driver& d) {
    d.arm();
    Bench bench(d, g);
    std::mt19937 rng(3);
    bench.garbage_psum(rng);
    bench.put_rows(0, f.st, random_elems(g, f.c, f.K * f.M, rng), f.K);
    bench.put_rows(0, f.mv, random_elems(g, f.c, f.K * f.N, rng), f.K);
    bench.put_rows(0, 0x1000, random_elems(g, {Dtype::FP32, Fp32Mode::High}, f.K * f.M, rng), f.K);
    std::vector<Step> before = {lw_step(g, f.lw()), mm_step(g, f.mm(0))};
    for (auto& s : ec.prelude(f)) before.push_back(s);
    const isa::RawInstruction bad = ec.bad(f);
    if (ec.must_decode_valid) {
      const auto dec = isa::decode(g, bad);
      for (const auto& viol : dec.violations) ADD_FAILURE() << "test bug, the instruction is not valid: " << viol.describe();
    }
    // The later instructions accumulate onto PSUM, so one that ran twice (or not at all) shows.
    const std::vector<Step> after = {mm_step(g, f.acc(1)), mm_step(g, f.acc(2))};
    std::vector<isa::RawInstruction> prog;
    for (const auto& s : before) prog.push_back(s.raw);
    prog.push_back(bad);
    for (const auto& s : after) prog.push_back(s.raw);
    const std::uint32_t bad_index = static_cast<std::uint32_t>(before.size());

    d.submit(prog);
    const platform::Completion c = d.wait_idle(kTimeout);
    sc_core::wait(sc_core::sc_time(1, sc_core::SC_US));  // let anything still in flight settle
    EXPECT_TRUE(c.error);
    EXPECT_FALSE(c.done);
    EXPECT_EQ(d.read_field("vp", "seq_status", "error"), 1u);
    EXPECT_EQ(d.read_field("vp", "seq_status", "done"), 0u);
    EXPECT_EQ(d.read_field("vp", "irq_status", "error"), 1u);
    EXPECT_TRUE(vp.platform().seq.irq.read()) << "interrupt line (irq_enable.error set by arm)";
    const auto e = d.error_record();
    ASSERT_TRUE(e.has_value());
    EXPECT_EQ(e->index, bad_index) << e->describe();
    EXPECT_EQ(e->opcode, bad[0]) << e->describe();
    EXPECT_EQ(e->rule, ec.rule) << e->describe();
    EXPECT_EQ(e->rule_number, isa::rule_number(ec.rule)) << e->describe();
    EXPECT_NE(e->rule_number, isa::kUnknownRule);
    if (ec.field != kNoCheck) {
      EXPECT_EQ(e->field_offset, ec.field) << e->describe();
    }
    if (ec.value) {
      EXPECT_EQ(e->value, *ec.value) << e->describe();
    }
    if (vp.platform().seq.error()) {
      EXPECT_NE(vp.platform().seq.error()->message.find(ec.rule), std::string::npos)
          << vp.platform().seq.error()->message;
    }
    // Everything before the fault executed, nothing after it.
    EXPECT_EQ(d.read_counter48("vp", "retired_cnt_lsb"), before.size());
    EXPECT_EQ(d.read_field("vp", "iq_status", "level"), after.size()) << "the later instructions wait in the queue";
    for (const auto& s : before) s.apply(bench.ref);
    bench.expect_psum_matches("after the fault");
    if (!ec.self_name.empty()) {
      const auto& log = vp.platform().seq.firmware_log();
      EXPECT_NE(std::find(log.begin(), log.end(), ec.self_name), log.end()) << "no '" << ec.self_name << "' in the log";
    }

    // Resume with the next instruction.
    d.clear_error();
    const platform::Completion c2 = d.wait_idle(kTimeout);
    EXPECT_TRUE(c2.done);
    EXPECT_FALSE(c2.error);
    EXPECT_EQ(c2.retired, before.size() + after.size());
    EXPECT_FALSE(d.error_record().has_value());
    EXPECT_EQ(d.read_field("vp", "irq_status", "error"), 0u);
    EXPECT_EQ(d.read_field("vp", "err_info", "rule_id"), 0u);
    for (const auto& s : after) s.apply(bench.ref);
    bench.expect_psum_matches("after clear_error");
  });
}

// An Ldweights that faults at execution changes nothing -- not the array's stationary, and not the dtype the
// firmware's cross-instruction check (fp32/tf32 no-mix) believes is loaded: after clear_error a bf16 matmul on the
// tile runs against the bf16 stationary that is still there.
TEST(FaultState, FaultingLdweightsLeavesTheStationaryDtype) {
  const Generation g = Generation::MARIANA;
  platform::PlatformConfig cfg;
  cfg.gen = g;
  platform::VirtualPlatform vp(cfg);
  const Frame f(g);
  vp.run([&](platform::Driver& d) {
    d.arm();
    Bench bench(d, g);
    std::mt19937 rng(17);
    bench.garbage_psum(rng);
    bench.put_rows(0, f.st, random_elems(g, f.c, f.K * f.M, rng), f.K);
    bench.put_rows(0, f.mv, random_elems(g, f.c, f.K * f.N, rng), f.K);
    // fp32 stationary whose rows run past the end of their SBUF partition: exec.pattern_partition_bounds.
    auto bad = ldw({Dtype::FP32, Fp32Mode::High}, isa::preset_geometry(g).sbuf_partition_bytes - 64, f.K, f.M, f.a);
    const std::vector<Step> s = {lw_step(g, f.lw()), raw_step(isa::encode_ldweights(g, bad)), mm_step(g, f.mm(0))};
    d.submit({s[0].raw, s[1].raw, s[2].raw});
    const platform::Completion c = d.wait_idle(kTimeout);
    EXPECT_TRUE(c.error);
    const auto e = d.error_record();
    ASSERT_TRUE(e.has_value());
    EXPECT_EQ(e->index, 1u) << e->describe();
    EXPECT_EQ(e->rule, "exec.pattern_partition_bounds") << e->describe();
    d.clear_error();
    const platform::Completion c2 = d.wait_idle(kTimeout);
    EXPECT_TRUE(c2.done);
    EXPECT_FALSE(c2.error);
    if (const auto e2 = d.error_record()) ADD_FAILURE() << "after clear_error: " << e2->describe();
    EXPECT_EQ(c2.retired, 2u);
    s[0].apply(bench.ref);
    s[2].apply(bench.ref);
    bench.expect_psum_matches("matmul on the bf16 stationary");
  });
}

// Two faults back to back: an Ldweights that faults at execution, followed by an instruction that is invalid on its
// own (unknown opcode). The record shows the first fault in program order; clear_error resumes with the next
// instruction, which is the invalid one -- it must fault in its turn (its own record), not vanish; a second
// clear_error runs the rest.
TEST(FaultState, FaultBehindAnExecutionFaultIsNotLost) {
  const Generation g = Generation::MARIANA;
  platform::PlatformConfig cfg;
  cfg.gen = g;
  platform::VirtualPlatform vp(cfg);
  const Frame f(g);
  vp.run([&](platform::Driver& d) {
    d.arm();
    Bench bench(d, g);
    std::mt19937 rng(19);
    bench.garbage_psum(rng);
    bench.put_rows(0, f.st, random_elems(g, f.c, f.K * f.M, rng), f.K);
    bench.put_rows(0, f.mv, random_elems(g, f.c, f.K * f.N, rng), f.K);
    auto bad_lw = f.lw();
    bad_lw.src.start_addr = isa::preset_geometry(g).sbuf_partition_bytes - 64;  // rows leave their partition
    const std::vector<Step> s = {lw_step(g, f.lw()), raw_step(isa::encode_ldweights(g, bad_lw)),
                                 raw_step(raw_opcode(0x05)), mm_step(g, f.acc(1))};
    d.submit({s[0].raw, s[1].raw, s[2].raw, s[3].raw});
    EXPECT_TRUE(d.wait_idle(kTimeout).error);
    sc_core::wait(sc_core::sc_time(2, sc_core::SC_US));
    auto e = d.error_record();
    ASSERT_TRUE(e.has_value());
    EXPECT_EQ(e->index, 1u) << e->describe();
    EXPECT_EQ(e->rule, "exec.pattern_partition_bounds") << e->describe();
    EXPECT_EQ(d.read_field("vp", "iq_status", "level"), 2u) << "instructions 2 and 3 wait in the queue";
    d.clear_error();
    EXPECT_TRUE(d.wait_idle(kTimeout).error) << "instruction 2 (opcode 0x05) must fault when its turn comes";
    e = d.error_record();
    ASSERT_TRUE(e.has_value()) << "instruction 2 was dropped without a record";
    EXPECT_EQ(e->index, 2u) << e->describe();
    EXPECT_EQ(e->rule, "opcode.unknown") << e->describe();
    d.clear_error();
    const platform::Completion c = d.wait_idle(kTimeout);
    EXPECT_TRUE(c.done);
    EXPECT_EQ(c.retired, 2u);
    s[0].apply(bench.ref);
    s[3].apply(bench.ref);
    bench.expect_psum_matches("after both faults");
  });
}

// An execution fault while a later instruction waits for its semaphore at the head of the queue: the instruction
// already in the IFIFO between them is taken back in front of the waiting one. After clear_error the taken-back
// instruction runs (it waits on nothing), the waiting one runs once its semaphore is set, and each runs once.
TEST(FaultState, TakenBackInstructionsAheadOfASemaphoreWait) {
  const Generation g = Generation::MARIANA;
  platform::PlatformConfig cfg;
  cfg.gen = g;
  platform::VirtualPlatform vp(cfg);
  const Frame f(g);
  vp.run([&](platform::Driver& d) {
    d.arm();
    Bench bench(d, g);
    std::mt19937 rng(20);
    bench.garbage_psum(rng);
    bench.put_rows(0, f.st, random_elems(g, f.c, f.K * f.M, rng), f.K);
    bench.put_rows(0, f.mv, random_elems(g, f.c, f.K * f.N, rng), f.K);
    auto bad_lw = f.lw();
    bad_lw.src.start_addr = isa::preset_geometry(g).sbuf_partition_bytes - 64;  // exec.pattern_partition_bounds
    auto waiting = f.acc(2);
    waiting.events.wait_mode = isa::WaitMode::WAIT_GE;
    waiting.events.wait_sem = 4;
    waiting.events.wait_value = 1;
    const std::vector<Step> s = {lw_step(g, f.lw()), raw_step(isa::encode_ldweights(g, bad_lw)),
                                 mm_step(g, f.acc(1)), mm_step(g, waiting)};
    d.submit({s[0].raw, s[1].raw, s[2].raw, s[3].raw});
    EXPECT_TRUE(d.wait_idle(kTimeout).error);
    sc_core::wait(sc_core::sc_time(2, sc_core::SC_US));
    const auto e = d.error_record();
    ASSERT_TRUE(e.has_value());
    EXPECT_EQ(e->index, 1u) << e->describe();
    EXPECT_EQ(d.read_field("vp", "iq_status", "level"), 2u);
    d.clear_error();
    sc_core::wait(sc_core::sc_time(5, sc_core::SC_US));
    EXPECT_EQ(d.read_counter48("vp", "retired_cnt_lsb"), 2u) << "instruction 2 waits on nothing and runs";
    EXPECT_EQ(d.read_field("vp", "iq_status", "level"), 1u) << "instruction 3 waits for semaphore 4";
    d.set_semaphore(4, 1);
    const platform::Completion c = d.wait_idle(kTimeout);
    EXPECT_TRUE(c.done);
    EXPECT_FALSE(c.error);
    EXPECT_EQ(c.retired, 3u);
    s[0].apply(bench.ref);
    s[2].apply(bench.ref);
    s[3].apply(bench.ref);
    bench.expect_psum_matches("each instruction once");
  });
}

// The last instruction of a program faults: after clear_error nothing is left, so the program is complete --
// seq_status.done rises (and the driver's wait_idle returns instead of timing out).
TEST(FaultState, ClearingAFaultAtTheEndCompletesTheProgram) {
  const Generation g = Generation::MAVERICK;
  platform::PlatformConfig cfg;
  cfg.gen = g;
  platform::VirtualPlatform vp(cfg);
  const Frame f(g);
  vp.run([&](platform::Driver& d) {
    d.arm();
    Bench bench(d, g);
    std::mt19937 rng(22);
    bench.put_rows(0, f.st, random_elems(g, f.c, f.K * f.M, rng), f.K);
    bench.put_rows(0, f.mv, random_elems(g, f.c, f.K * f.N, rng), f.K);
    d.submit({isa::encode_ldweights(g, f.lw()), f.enc(f.mm(0)), raw_opcode(0x05)});
    EXPECT_TRUE(d.wait_idle(kTimeout).error);
    d.clear_error();
    const platform::Completion c = d.wait_idle(sc_core::sc_time(100, sc_core::SC_US));
    EXPECT_FALSE(c.timed_out);
    EXPECT_TRUE(c.done);
    EXPECT_EQ(c.retired, 2u);
    EXPECT_EQ(d.read_field("vp", "seq_status", "idle"), 1u);
  });
}

// While the queue is stopped on an error the driver may keep queuing; clear_error then runs the rest in order.
TEST(FaultState, QueuingWhileStoppedRunsAfterClear) {
  const Generation g = Generation::CAYMAN;
  platform::PlatformConfig cfg;
  cfg.gen = g;
  platform::VirtualPlatform vp(cfg);
  const Frame f(g);
  vp.run([&](platform::Driver& d) {
    d.arm();
    Bench bench(d, g);
    std::mt19937 rng(18);
    bench.garbage_psum(rng);
    bench.put_rows(0, f.st, random_elems(g, f.c, f.K * f.M, rng), f.K);
    bench.put_rows(0, f.mv, random_elems(g, f.c, f.K * f.N, rng), f.K);
    const std::vector<Step> first = {lw_step(g, f.lw()), raw_step(raw_opcode(0x05)), mm_step(g, f.acc(1))};
    const std::vector<Step> more = {mm_step(g, f.acc(2)), mm_step(g, f.acc(1))};
    d.submit({first[0].raw, first[1].raw, first[2].raw});
    EXPECT_TRUE(d.wait_idle(kTimeout).error);
    d.submit({more[0].raw, more[1].raw});
    sc_core::wait(sc_core::sc_time(2, sc_core::SC_US));
    EXPECT_EQ(d.read_field("vp", "iq_status", "level"), 3u);
    EXPECT_EQ(d.read_counter48("vp", "retired_cnt_lsb"), 1u);
    d.clear_error();
    const platform::Completion c = d.wait_idle(kTimeout);
    EXPECT_TRUE(c.done);
    EXPECT_EQ(c.retired, 4u);
    for (const auto& s : first) s.apply(bench.ref);
    for (const auto& s : more) s.apply(bench.ref);
    bench.expect_psum_matches("after the resumed queue");
  });
}

INSTANTIATE_TEST_SUITE_P(EveryClass, InstructionError, ::testing::ValuesIn(error_cases()),
                         [](const ::testing::TestParamInfo<ErrorCase>& i) { return i.param.name; });

}  // namespace
