// The DMA descriptor (D-DMA-DESCRIPTOR, the model's own format; not in the spec): a 64-byte little-endian record
// that software writes into a queue's ring in memory. It moves a pattern of up to three dimensions -- `planes` of
// `rows` of `row_bytes` contiguous bytes, each side with its own row and plane strides -- so an SBUF/PSUM partition
// pattern (one row per partition, a row stride of one partition) is one descriptor. It optionally casts each element
// between dtypes with the project's numerics (RNE), waits on an EVENTS semaphore before it starts and updates one
// when it completes (the modes of D-EVENTS). Plain C++ without SystemC: the host side and tests build descriptors
// with it. docs/dma.md has the byte table.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "pevp/isa/enums.h"

namespace pevp::dma {

inline constexpr std::size_t kDescriptorBytes = 64;
using DescriptorBytes = std::array<std::uint8_t, kDescriptorBytes>;

enum class Kind : std::uint8_t {
  INVALID = 0,  // an all-zero (never written) ring slot decodes as an error, not as a no-op
  COPY = 1,     // move (and optionally cast) the pattern, then update
  SIGNAL = 2,   // no data: only its wait and its update
};

// Flag bits (offset 1); the other bits are reserved and must be 0.
inline constexpr std::uint8_t kFlagIrq = 0x01;   // raise irq_status.completion when the descriptor completes
inline constexpr std::uint8_t kFlagCast = 0x02;  // convert each element from src_dtype to dst_dtype
inline constexpr std::uint8_t kFlagsDefined = kFlagIrq | kFlagCast;

struct Descriptor {
  Kind kind = Kind::COPY;
  std::uint8_t flags = 0;
  isa::Dtype src_dtype = isa::Dtype::INVALID;  // with kFlagCast only; else INVALID
  isa::Dtype dst_dtype = isa::Dtype::INVALID;
  isa::WaitMode wait_mode = isa::WaitMode::NONE;
  std::uint8_t wait_sem = 0;
  isa::UpdateMode update_mode = isa::UpdateMode::NONE;
  std::uint8_t update_sem = 0;
  std::uint32_t wait_value = 0;
  std::uint32_t update_value = 0;
  std::uint64_t src = 0;  // DMA address space (address_space.h)
  std::uint64_t dst = 0;
  std::uint32_t row_bytes = 0;  // source bytes per row (a cast writes row_bytes / src size x dst size)
  std::uint32_t rows = 0;
  std::uint32_t planes = 0;
  std::uint8_t elem_bytes = 0;  // 1, 2, 4 or 8: the alignment of rows, addresses and strides (source size on a cast)
  std::uint32_t src_row_stride = 0;
  std::uint32_t dst_row_stride = 0;
  std::uint32_t src_plane_stride = 0;
  std::uint32_t dst_plane_stride = 0;

  bool casts() const { return (flags & kFlagCast) != 0; }
  bool irq() const { return (flags & kFlagIrq) != 0; }
  // Bytes one row writes: row_bytes, or on a cast the same element count in the destination dtype.
  std::uint32_t dst_row_bytes() const;
  // Bytes read (and written, before a cast) by the whole descriptor.
  std::uint64_t total_src_bytes() const { return std::uint64_t{row_bytes} * rows * planes; }
  std::uint64_t total_dst_bytes() const { return std::uint64_t{dst_row_bytes()} * rows * planes; }
};

// Byte offsets of the fields (the error record's field id is the offset, as the SEQ's is for an instruction).
namespace offset {
inline constexpr std::uint8_t kKind = 0, kFlags = 1, kSrcDtype = 2, kDstDtype = 3, kWaitMode = 4, kWaitSem = 5,
                              kUpdateMode = 6, kUpdateSem = 7, kWaitValue = 8, kUpdateValue = 12, kSrc = 16,
                              kDst = 24, kRowBytes = 32, kRows = 36, kPlanes = 40, kElemBytes = 44,
                              kReserved = 45, kSrcRowStride = 48, kDstRowStride = 52, kSrcPlaneStride = 56,
                              kDstPlaneStride = 60;
}  // namespace offset

// Field ids that are not a descriptor byte offset: errors of the queue itself.
namespace field {
inline constexpr std::uint8_t kRingBase = 0xF0;     // the ring does not lie inside one mapped endpoint
inline constexpr std::uint8_t kRingEntries = 0xF1;  // zero or too many entries
inline constexpr std::uint8_t kTail = 0xF2;         // the doorbell moved the tail more than `entries` past head
inline constexpr std::uint8_t kNone = 0xFF;
}  // namespace field

// The broken rule, as a number for the error record (docs/dma.md lists them).
enum class Rule : std::uint16_t {
  None = 0,
  UnknownKind = 1,
  ReservedNonZero = 2,
  UnknownMode = 3,
  NoneModeWithOperands = 4,
  SemaphoreIndex = 5,
  ZeroSize = 6,
  ElemBytes = 7,
  Misaligned = 8,
  UnsupportedCast = 9,
  SignalWithData = 10,
  AddressRange = 11,
  RingRange = 12,
  RingEntries = 13,
  QueueOverflow = 14,
  SemaphoreUpdate = 15,
  TransferFailed = 16,
};
std::string_view rule_name(Rule r);

// What is wrong with a descriptor (or a queue): which field, its value, which rule, and a sentence saying so.
struct DescriptorError {
  std::uint8_t field = field::kNone;
  std::uint64_t value = 0;
  Rule rule = Rule::None;
  std::string message;
  bool ok() const { return rule == Rule::None; }
};

// The dtype casts the engines perform (RNE narrowing, exact widening): fp32 <-> bf16, fp32 <-> fp16,
// fp32 <-> fp8 e5m2 (FP8_EXP5) and fp32 <-> fp8 e3m4 (FP8_EXP3).
bool cast_supported(isa::Dtype from, isa::Dtype to);
// Bytes of one element of a dtype the casts use (0 for any other).
unsigned cast_elem_bytes(isa::Dtype d);

// The format rules that need no address map; `semaphores` is the number of EVENTS semaphores. "ok()" when valid.
DescriptorError validate(const Descriptor& d, unsigned semaphores);

DescriptorBytes encode(const Descriptor& d);

struct Decoded {
  Descriptor descriptor;
  DescriptorError error;  // error.ok() when descriptor is valid
};
// Decodes and validates: reserved bytes, unknown enum ordinals and every validate() rule.
Decoded decode(const DescriptorBytes& bytes, unsigned semaphores);

// A host-side helper: a 2-D copy of `rows` rows of `row_bytes` from src (row stride src_row_stride) to dst (row
// stride dst_row_stride), elements of `elem_bytes`, no cast, no wait, no update.
Descriptor copy_2d(std::uint64_t src, std::uint32_t src_row_stride, std::uint64_t dst, std::uint32_t dst_row_stride,
                   std::uint32_t row_bytes, std::uint32_t rows, std::uint8_t elem_bytes = 1);

}  // namespace pevp::dma
