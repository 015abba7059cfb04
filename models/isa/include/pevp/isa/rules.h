// The VP rule table: one stable number per rule id, so an error record read over
// the CSRs (vp_seq err_info.rule_id, 16 bits) names the broken rule. Three ranges:
//   0x001..  ISA validity rules (validate.cpp, docs/isa.md), static per instruction;
//   0x100..  execution rules of the PE array (executor.cpp: the access pattern at
//            execution time, PSUM groups, the loaded stationary);
//   0x200..  SEQ / firmware rules (not modelled yet, semaphore misuse, ...).
// Every rule is written here once with its number (PEVP_RULES). Numbers are
// append-only: add a rule with the next free number of its range, never reuse
// or renumber one -- a released number never changes meaning. The table is a
// model decision (D-RULE-TABLE, docs/model-decisions.md); docs/errors.md lists it.
#pragma once

#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

namespace pevp::isa {

// X(enumerator, number, id)
#define PEVP_RULES(X) \
  X(kOpcodeUnknown, 0x001, "opcode.unknown") \
  X(kHeaderInstWordLen, 0x002, "header.inst_word_len") \
  X(kReservedZero, 0x003, "reserved.zero") \
  X(kEventsWaitMode, 0x004, "events.wait_mode") \
  X(kEventsUpdateMode, 0x005, "events.update_mode") \
  X(kEventsSemIndex, 0x006, "events.sem_index") \
  X(kEventsUnusedZero, 0x007, "events.unused_zero") \
  X(kMmInDtype, 0x008, "mm.in_dtype") \
  X(kMxInDtype, 0x009, "mx.in_dtype") \
  X(kFp32ModeRange, 0x00A, "fp32_mode.range") \
  X(kFp32ModeDtype, 0x00B, "fp32_mode.dtype") \
  X(kMmFp32NoMix, 0x00C, "mm.fp32_no_mix") \
  X(kMmFp32ModeMatch, 0x00D, "mm.fp32_mode_match") \
  X(kMmOutDtype, 0x00E, "mm.out_dtype") \
  X(kTileRowGrp, 0x00F, "tile.row_grp") \
  X(kTileColGrp, 0x010, "tile.col_grp") \
  X(kTileSizeRow, 0x011, "tile_size.row") \
  X(kTileSizeCol, 0x012, "tile_size.col") \
  X(kTileSelRange, 0x013, "tile_sel.range") \
  X(kTileSelFits, 0x014, "tile_sel.fits") \
  X(kTileNumActiveRows, 0x015, "tile.num_active_rows") \
  X(kTileNumActiveCols, 0x016, "tile.num_active_cols") \
  X(kMmC256DstUpperDim, 0x017, "mm.c256_dst_upper_dim") \
  X(kMempatternSrcSbuf, 0x018, "mempattern.src_sbuf") \
  X(kMempatternDstPsum, 0x019, "mempattern.dst_psum") \
  X(kMempatternScaleSbuf, 0x01A, "mempattern.scale_sbuf") \
  X(kMempatternPartitions, 0x01B, "mempattern.partitions") \
  X(kMempatternNumElem, 0x01C, "mempattern.num_elem") \
  X(kMempatternMarker, 0x01D, "mempattern.marker") \
  X(kMempatternMxV5Only, 0x01E, "mempattern.mx_v5_only") \
  X(kMempatternDstMember, 0x01F, "mempattern.dst_member") \
  X(kMmPsumFootprint, 0x020, "mm.psum_footprint") \
  X(kPsumAccumulateFlags, 0x021, "psum.accumulate_flags") \
  X(kPsumZeroRegion, 0x022, "psum.zero_region") \
  X(kFlagsSeedMode, 0x023, "flags.seed_mode") \
  X(kSeedLoadContract, 0x024, "seed.load_contract") \
  X(kSeedSaveContract, 0x025, "seed.save_contract") \
  X(kPeSeedV4Only, 0x026, "pe_seed.v4_only") \
  X(kPeSeedMode, 0x027, "pe_seed.mode") \
  X(kPeSeedNumActiveRows, 0x028, "pe_seed.num_active_rows") \
  X(kPeSeedNumActiveCols, 0x029, "pe_seed.num_active_cols") \
  X(kPeSeedIdentityDtype, 0x02A, "pe_seed.identity_dtype") \
  X(kPeSeedIdentity, 0x02B, "pe_seed.identity") \
  X(kPeSeedSaveDst, 0x02C, "pe_seed.save_dst") \
  X(kPeSeedLoadSrc, 0x02D, "pe_seed.load_src") \
  X(kPeSeedUnusedPattern, 0x02E, "pe_seed.unused_pattern") \
  X(kMxSeparateOpsV4, 0x02F, "mx.separate_ops_v4") \
  X(kMxRowTilingOnly, 0x030, "mx.row_tiling_only") \
  X(kPerfModeRange, 0x031, "perf_mode.range") \
  X(kPerfModeMxOnly, 0x032, "perf_mode.mx_only") \
  X(kPerfOptRange, 0x033, "perf_opt.range") \
  X(kPerfOptDoubleRow, 0x034, "perf_opt.double_row") \
  X(kXposeRange, 0x035, "xpose.range") \
  X(kSparseFmaps, 0x036, "sparse.fmaps") \
  X(kLdtagsInDtype, 0x037, "ldtags.in_dtype") \
  X(kLdtagsForceTagBits, 0x038, "ldtags.force_tag_bits") \
  X(kConvlutLutDtype, 0x039, "convlut.lut_dtype") \
  X(kMmXposeFreeSize, 0x03A, "mm.xpose_free_size") \
  X(kLdweightsTagWeightMode, 0x03B, "ldweights.tag_weight_mode") \
  X(kExecOpcode, 0x100, "exec.opcode") \
  X(kExecInvalid, 0x101, "exec.invalid") \
  X(kExecInDtype, 0x102, "exec.in_dtype") \
  X(kExecOutDtype, 0x103, "exec.out_dtype") \
  X(kExecTile, 0x104, "exec.tile") \
  X(kExecNotModelled, 0x105, "exec.not_modelled") \
  X(kExecPatternRegion, 0x106, "exec.pattern_region") \
  X(kExecPatternAlign, 0x107, "exec.pattern_align") \
  X(kExecPatternPartitions, 0x108, "exec.pattern_partitions") \
  X(kExecPatternPartitionBounds, 0x109, "exec.pattern_partition_bounds") \
  X(kExecPatternCount, 0x10A, "exec.pattern_count") \
  X(kExecBufferBounds, 0x10B, "exec.buffer_bounds") \
  X(kExecKMismatch, 0x10C, "exec.k_mismatch") \
  X(kExecMMismatch, 0x10D, "exec.m_mismatch") \
  X(kExecNoStationary, 0x10E, "exec.no_stationary") \
  X(kExecFp32Mix, 0x10F, "exec.fp32_mix") \
  X(kExecPsumBankCross, 0x110, "exec.psum_bank_cross") \
  X(kExecPsumFlags, 0x111, "exec.psum_flags") \
  X(kExecPsumGroupOpen, 0x112, "exec.psum_group_open") \
  X(kExecPsumGroupUnopened, 0x113, "exec.psum_group_unopened") \
  X(kExecPsumZeroRegion, 0x114, "exec.psum_zero_region") \
  X(kExecXposeStationary, 0x115, "exec.xpose_stationary") \
  X(kExecDoubleRowMix, 0x116, "exec.double_row_mix") \
  X(kExecSeedIdentity, 0x117, "exec.seed_identity") \
  X(kExecMxMix, 0x118, "exec.mx_mix") \
  X(kExecMxScales, 0x119, "exec.mx_scales") \
  X(kExecConvlut, 0x11A, "exec.convlut") \
  X(kExecSparseTag, 0x11B, "exec.sparse_tag") \
  X(kExecSparseNoTags, 0x11C, "exec.sparse_no_tags") \
  X(kExecSparseMix, 0x11D, "exec.sparse_mix") \
  X(kExecDatapath, 0x11E, "exec.datapath") \
  X(kSeqNotModelled, 0x200, "seq.not_modelled") \
  X(kSeqSemaphoreUnderflow, 0x201, "seq.semaphore_underflow") \
  X(kSeqSemaphoreOverflow, 0x202, "seq.semaphore_overflow") \
  X(kSeqPeregwriteSrc, 0x203, "seq.peregwrite_src") \
  X(kSeqArrayTiming, 0x204, "seq.array_timing")

enum class Rule : std::uint16_t {
#define PEVP_RULE_ENUM(name, number, id) name = number,
  PEVP_RULES(PEVP_RULE_ENUM)
#undef PEVP_RULE_ENUM
};

inline constexpr std::uint16_t kUnknownRule = 0xFFFF;

// The id of a rule ("mm.in_dtype").
std::string_view id(Rule rule);
// The rule's number, or kUnknownRule for an id the table does not have.
std::uint16_t rule_number(std::string_view rule_id);
// The id of a number, or "" when unknown.
std::string_view rule_id(std::uint16_t number);
// Every (number, id) pair in number order.
const std::vector<std::pair<std::uint16_t, std::string_view>>& rule_table();

}  // namespace pevp::isa
