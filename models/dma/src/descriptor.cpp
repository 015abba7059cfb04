#include "pevp/dma/descriptor.h"

#include <cstring>

namespace pevp::dma {
namespace {

using isa::Dtype;

DescriptorError fail(std::uint8_t field, std::string_view field_name, std::uint64_t value, Rule rule,
                     std::string_view why) {
  DescriptorError e;
  e.field = field;
  e.value = value;
  e.rule = rule;
  e.message = std::string(field_name) + " = " + std::to_string(value) + " (offset " + std::to_string(field) +
              "): " + std::string(rule_name(rule)) + ": " + std::string(why);
  return e;
}

template <class T>
void put(DescriptorBytes& b, std::size_t at, T v) {
  for (std::size_t i = 0; i < sizeof(T); ++i) b[at + i] = static_cast<std::uint8_t>(std::uint64_t{v} >> (8 * i));
}

template <class T>
T get(const DescriptorBytes& b, std::size_t at) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < sizeof(T); ++i) v |= std::uint64_t{b[at + i]} << (8 * i);
  return static_cast<T>(v);
}

bool is_elem_size(unsigned n) { return n == 1 || n == 2 || n == 4 || n == 8; }

}  // namespace

std::string_view rule_name(Rule r) {
  switch (r) {
    case Rule::None: return "none";
    case Rule::UnknownKind: return "unknown_kind";
    case Rule::ReservedNonZero: return "reserved_nonzero";
    case Rule::UnknownMode: return "unknown_mode";
    case Rule::NoneModeWithOperands: return "none_mode_with_operands";
    case Rule::SemaphoreIndex: return "semaphore_index";
    case Rule::ZeroSize: return "zero_size";
    case Rule::ElemBytes: return "elem_bytes";
    case Rule::Misaligned: return "misaligned";
    case Rule::UnsupportedCast: return "unsupported_cast";
    case Rule::SignalWithData: return "signal_with_data";
    case Rule::AddressRange: return "address_range";
    case Rule::RingRange: return "ring_range";
    case Rule::RingEntries: return "ring_entries";
    case Rule::QueueOverflow: return "queue_overflow";
    case Rule::SemaphoreUpdate: return "semaphore_update";
    case Rule::TransferFailed: return "transfer_failed";
  }
  return "unknown";
}

unsigned cast_elem_bytes(Dtype d) {
  switch (d) {
    case Dtype::FP32: return 4;
    case Dtype::BFLOAT16:
    case Dtype::FP16: return 2;
    case Dtype::FP8_EXP5:
    case Dtype::FP8_EXP3: return 1;
    default: return 0;
  }
}

bool cast_supported(Dtype from, Dtype to) {
  // One side is fp32: the numerics library rounds fp32 to each narrow format and widens each exactly.
  if (from == to) return false;
  if (from == Dtype::FP32) return to != Dtype::FP32 && cast_elem_bytes(to) != 0;
  if (to == Dtype::FP32) return cast_elem_bytes(from) != 0;
  return false;
}

std::uint32_t Descriptor::dst_row_bytes() const {
  if (!casts()) return row_bytes;
  const unsigned from = cast_elem_bytes(src_dtype), to = cast_elem_bytes(dst_dtype);
  if (from == 0) return 0;
  return static_cast<std::uint32_t>(std::uint64_t{row_bytes} / from * to);
}

DescriptorError validate(const Descriptor& d, unsigned semaphores) {
  namespace o = offset;
  if (d.kind != Kind::COPY && d.kind != Kind::SIGNAL)
    return fail(o::kKind, "kind", static_cast<unsigned>(d.kind), Rule::UnknownKind,
                "kind must be COPY (1) or SIGNAL (2)");
  if ((d.flags & ~kFlagsDefined) != 0)
    return fail(o::kFlags, "flags", d.flags, Rule::ReservedNonZero, "only bits 0 (irq) and 1 (cast) are defined");
  if (static_cast<unsigned>(d.wait_mode) > static_cast<unsigned>(isa::WaitMode::WAIT_EQ))
    return fail(o::kWaitMode, "wait_mode", static_cast<unsigned>(d.wait_mode), Rule::UnknownMode,
                "wait_mode must be NONE (0), WAIT_GE (1) or WAIT_EQ (2)");
  if (static_cast<unsigned>(d.update_mode) > static_cast<unsigned>(isa::UpdateMode::DECREMENT))
    return fail(o::kUpdateMode, "update_mode", static_cast<unsigned>(d.update_mode), Rule::UnknownMode,
                "update_mode must be NONE (0), SET (1), INCREMENT (2) or DECREMENT (3)");
  if (d.wait_mode == isa::WaitMode::NONE) {
    if (d.wait_sem != 0)
      return fail(o::kWaitSem, "wait_sem", d.wait_sem, Rule::NoneModeWithOperands, "wait_mode NONE requires 0");
    if (d.wait_value != 0)
      return fail(o::kWaitValue, "wait_value", d.wait_value, Rule::NoneModeWithOperands,
                  "wait_mode NONE requires 0");
  } else if (d.wait_sem >= semaphores) {
    return fail(o::kWaitSem, "wait_sem", d.wait_sem, Rule::SemaphoreIndex,
                "must be below the " + std::to_string(semaphores) + " EVENTS semaphores");
  }
  if (d.update_mode == isa::UpdateMode::NONE) {
    if (d.update_sem != 0)
      return fail(o::kUpdateSem, "update_sem", d.update_sem, Rule::NoneModeWithOperands,
                  "update_mode NONE requires 0");
    if (d.update_value != 0)
      return fail(o::kUpdateValue, "update_value", d.update_value, Rule::NoneModeWithOperands,
                  "update_mode NONE requires 0");
  } else if (d.update_sem >= semaphores) {
    return fail(o::kUpdateSem, "update_sem", d.update_sem, Rule::SemaphoreIndex,
                "must be below the " + std::to_string(semaphores) + " EVENTS semaphores");
  }

  if (d.kind == Kind::SIGNAL) {
    // A SIGNAL moves nothing: every data field stays 0, so a COPY mistyped as SIGNAL is caught.
    const struct {
      std::uint8_t at;
      std::string_view name;
      std::uint64_t value;
    } data_fields[] = {
        {o::kFlags, "flags (cast)", static_cast<std::uint64_t>(d.flags & kFlagCast)},
        {o::kSrcDtype, "src_dtype", static_cast<std::uint64_t>(d.src_dtype)},
        {o::kDstDtype, "dst_dtype", static_cast<std::uint64_t>(d.dst_dtype)},
        {o::kSrc, "src", d.src},
        {o::kDst, "dst", d.dst},
        {o::kRowBytes, "row_bytes", d.row_bytes},
        {o::kRows, "rows", d.rows},
        {o::kPlanes, "planes", d.planes},
        {o::kElemBytes, "elem_bytes", d.elem_bytes},
        {o::kSrcRowStride, "src_row_stride", d.src_row_stride},
        {o::kDstRowStride, "dst_row_stride", d.dst_row_stride},
        {o::kSrcPlaneStride, "src_plane_stride", d.src_plane_stride},
        {o::kDstPlaneStride, "dst_plane_stride", d.dst_plane_stride},
    };
    for (const auto& f : data_fields)
      if (f.value != 0)
        return fail(f.at, f.name, f.value, Rule::SignalWithData, "a SIGNAL descriptor moves no data: must be 0");
    return {};
  }

  if (d.row_bytes == 0)
    return fail(o::kRowBytes, "row_bytes", 0, Rule::ZeroSize, "a COPY moves at least one byte per row");
  if (d.rows == 0) return fail(o::kRows, "rows", 0, Rule::ZeroSize, "a COPY has at least one row");
  if (d.planes == 0) return fail(o::kPlanes, "planes", 0, Rule::ZeroSize, "a COPY has at least one plane (1 for 2-D)");
  if (!is_elem_size(d.elem_bytes))
    return fail(o::kElemBytes, "elem_bytes", d.elem_bytes, Rule::ElemBytes, "must be 1, 2, 4 or 8");

  unsigned dst_elem = d.elem_bytes;
  if (d.casts()) {
    if (!cast_supported(d.src_dtype, d.dst_dtype))
      return fail(o::kSrcDtype, "src_dtype", static_cast<unsigned>(d.src_dtype), Rule::UnsupportedCast,
                  "no cast from dtype " + std::to_string(static_cast<unsigned>(d.src_dtype)) + " to dtype " +
                      std::to_string(static_cast<unsigned>(d.dst_dtype)) +
                      " (supported: FP32 <-> BFLOAT16, FP16, FP8_EXP5, FP8_EXP3)");
    if (d.elem_bytes != cast_elem_bytes(d.src_dtype))
      return fail(o::kElemBytes, "elem_bytes", d.elem_bytes, Rule::ElemBytes,
                  "a cast's elem_bytes is the source dtype's size (" +
                      std::to_string(cast_elem_bytes(d.src_dtype)) + ")");
    dst_elem = cast_elem_bytes(d.dst_dtype);
  } else {
    if (d.src_dtype != Dtype::INVALID)
      return fail(o::kSrcDtype, "src_dtype", static_cast<unsigned>(d.src_dtype), Rule::UnsupportedCast,
                  "a dtype is given only with the cast flag");
    if (d.dst_dtype != Dtype::INVALID)
      return fail(o::kDstDtype, "dst_dtype", static_cast<unsigned>(d.dst_dtype), Rule::UnsupportedCast,
                  "a dtype is given only with the cast flag");
  }
  const unsigned e = d.elem_bytes;
  const std::string src_rule = "must be a multiple of elem_bytes (" + std::to_string(e) + ")";
  const std::string dst_rule = "must be a multiple of the destination element size (" + std::to_string(dst_elem) + ")";
  if (d.row_bytes % e != 0) return fail(o::kRowBytes, "row_bytes", d.row_bytes, Rule::Misaligned, src_rule);
  if (d.src % e != 0) return fail(o::kSrc, "src", d.src, Rule::Misaligned, src_rule);
  if (d.src_row_stride % e != 0)
    return fail(o::kSrcRowStride, "src_row_stride", d.src_row_stride, Rule::Misaligned, src_rule);
  if (d.src_plane_stride % e != 0)
    return fail(o::kSrcPlaneStride, "src_plane_stride", d.src_plane_stride, Rule::Misaligned, src_rule);
  if (d.dst % dst_elem != 0) return fail(o::kDst, "dst", d.dst, Rule::Misaligned, dst_rule);
  if (d.dst_row_stride % dst_elem != 0)
    return fail(o::kDstRowStride, "dst_row_stride", d.dst_row_stride, Rule::Misaligned, dst_rule);
  if (d.dst_plane_stride % dst_elem != 0)
    return fail(o::kDstPlaneStride, "dst_plane_stride", d.dst_plane_stride, Rule::Misaligned, dst_rule);
  return {};
}

DescriptorBytes encode(const Descriptor& d) {
  namespace o = offset;
  DescriptorBytes b{};
  put<std::uint8_t>(b, o::kKind, static_cast<std::uint8_t>(d.kind));
  put<std::uint8_t>(b, o::kFlags, d.flags);
  put<std::uint8_t>(b, o::kSrcDtype, static_cast<std::uint8_t>(d.src_dtype));
  put<std::uint8_t>(b, o::kDstDtype, static_cast<std::uint8_t>(d.dst_dtype));
  put<std::uint8_t>(b, o::kWaitMode, static_cast<std::uint8_t>(d.wait_mode));
  put<std::uint8_t>(b, o::kWaitSem, d.wait_sem);
  put<std::uint8_t>(b, o::kUpdateMode, static_cast<std::uint8_t>(d.update_mode));
  put<std::uint8_t>(b, o::kUpdateSem, d.update_sem);
  put<std::uint32_t>(b, o::kWaitValue, d.wait_value);
  put<std::uint32_t>(b, o::kUpdateValue, d.update_value);
  put<std::uint64_t>(b, o::kSrc, d.src);
  put<std::uint64_t>(b, o::kDst, d.dst);
  put<std::uint32_t>(b, o::kRowBytes, d.row_bytes);
  put<std::uint32_t>(b, o::kRows, d.rows);
  put<std::uint32_t>(b, o::kPlanes, d.planes);
  put<std::uint8_t>(b, o::kElemBytes, d.elem_bytes);
  put<std::uint32_t>(b, o::kSrcRowStride, d.src_row_stride);
  put<std::uint32_t>(b, o::kDstRowStride, d.dst_row_stride);
  put<std::uint32_t>(b, o::kSrcPlaneStride, d.src_plane_stride);
  put<std::uint32_t>(b, o::kDstPlaneStride, d.dst_plane_stride);
  return b;
}

Decoded decode(const DescriptorBytes& b, unsigned semaphores) {
  namespace o = offset;
  Decoded r;
  Descriptor& d = r.descriptor;
  d.kind = static_cast<Kind>(get<std::uint8_t>(b, o::kKind));
  d.flags = get<std::uint8_t>(b, o::kFlags);
  d.src_dtype = static_cast<Dtype>(get<std::uint8_t>(b, o::kSrcDtype));
  d.dst_dtype = static_cast<Dtype>(get<std::uint8_t>(b, o::kDstDtype));
  d.wait_mode = static_cast<isa::WaitMode>(get<std::uint8_t>(b, o::kWaitMode));
  d.wait_sem = get<std::uint8_t>(b, o::kWaitSem);
  d.update_mode = static_cast<isa::UpdateMode>(get<std::uint8_t>(b, o::kUpdateMode));
  d.update_sem = get<std::uint8_t>(b, o::kUpdateSem);
  d.wait_value = get<std::uint32_t>(b, o::kWaitValue);
  d.update_value = get<std::uint32_t>(b, o::kUpdateValue);
  d.src = get<std::uint64_t>(b, o::kSrc);
  d.dst = get<std::uint64_t>(b, o::kDst);
  d.row_bytes = get<std::uint32_t>(b, o::kRowBytes);
  d.rows = get<std::uint32_t>(b, o::kRows);
  d.planes = get<std::uint32_t>(b, o::kPlanes);
  d.elem_bytes = get<std::uint8_t>(b, o::kElemBytes);
  d.src_row_stride = get<std::uint32_t>(b, o::kSrcRowStride);
  d.dst_row_stride = get<std::uint32_t>(b, o::kDstRowStride);
  d.src_plane_stride = get<std::uint32_t>(b, o::kSrcPlaneStride);
  d.dst_plane_stride = get<std::uint32_t>(b, o::kDstPlaneStride);
  // The fields first, then the reserved bytes: a record names the field a driver most likely got wrong.
  r.error = validate(d, semaphores);
  if (r.error.ok()) {
    for (std::size_t i = o::kReserved; i < o::kSrcRowStride; ++i)
      if (b[i] != 0) {
        r.error = fail(static_cast<std::uint8_t>(i), "reserved byte", b[i], Rule::ReservedNonZero, "must be 0");
        break;
      }
  }
  return r;
}

Descriptor copy_2d(std::uint64_t src, std::uint32_t src_row_stride, std::uint64_t dst, std::uint32_t dst_row_stride,
                   std::uint32_t row_bytes, std::uint32_t rows, std::uint8_t elem_bytes) {
  Descriptor d;
  d.kind = Kind::COPY;
  d.src = src;
  d.dst = dst;
  d.src_row_stride = src_row_stride;
  d.dst_row_stride = dst_row_stride;
  d.row_bytes = row_bytes;
  d.rows = rows;
  d.planes = 1;
  d.elem_bytes = elem_bytes;
  return d;
}

}  // namespace pevp::dma
