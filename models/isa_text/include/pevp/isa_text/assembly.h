// The PE instruction stream as text: an assembler that turns
// one line per instruction into 64-byte records, and the printer `pe-vp disasm`
// uses, whose output assembles back to the same bytes for any 64 bytes. The
// syntax is documented in docs/assembly.md; operands are the leaf paths of
// fields.h, so the text names exactly what the decoder and validate.cpp name.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pevp/isa/decode.h"

namespace pevp::isa {

// One message of the assembler, anchored at a 1-based line and column.
struct AsmDiagnostic {
  enum class Severity : std::uint8_t { Error, Warning };
  Severity severity = Severity::Error;
  unsigned line = 0;
  unsigned column = 0;
  std::string field;    // leaf path or operand key the message is about ("" if none)
  std::string rule;     // validate.cpp rule id ("mm.in_dtype") or an asm.* id
  std::string message;  // what is wrong, with the offending text or value
  // "FILE:LINE:COL: error: <field>: <message> [<rule>]"
  std::string describe(std::string_view file) const;
};

struct AsmOptions {
  AsmOptions(bool allow_invalid_ = false, std::optional<ArrayGeometry> geometry_ = std::nullopt)
      : allow_invalid(allow_invalid_), geometry(geometry_) {}
  // Instructions that break a validity rule (validate.cpp, StreamChecker) are
  // warnings instead of errors: a driver engineer's negative tests need such
  // records. Value errors (unknown names, ranges, syntax) stay errors.
  bool allow_invalid = false;
  // The machine sbuf[P] / psum[P] and the validity rules are read against;
  // none: the generation's preset.
  std::optional<ArrayGeometry> geometry;
};

struct AsmResult {
  std::vector<RawInstruction> records;
  std::vector<AsmDiagnostic> diagnostics;
  bool ok() const;  // no diagnostic is an error
  std::vector<std::uint8_t> bytes() const;
};

// Assembles `source` for generation `g`. Never throws on any text: every
// problem is a diagnostic, and all of them are reported (not only the first).
AsmResult assemble(Generation g, std::string_view source, const AsmOptions& options = {});

// The operand of the source's first `.gen` directive, found as assemble() finds it (comments cut, labels before it
// skipped, the directive's name in any case), or nothing when there is none; the name itself is not checked. A
// command without --gen takes the generation from it.
std::optional<std::string> gen_directive(std::string_view source);

// The settable geometry members as a `.geometry` directive's operands:
// "pe_rows=64 pe_cols=64 partitions=128 sbuf_partition_bytes=262144 psum_banks=8
// psum_bank_bytes=2048". A file that carries the directive assembles only for
// that geometry (sbuf[P] / psum[P] and the rules depend on it).
std::string geometry_operands(const ArrayGeometry& geo);

// The assembly mnemonic of an opcode ("matmul_sparse").
std::string mnemonic(Opcode op);

// One line of assembly (no newline, no comment) that assembles back to exactly
// `d.raw` on `d.gen`: reserved bytes, markers and out-of-range values included.
// An unknown opcode prints as `.raw <128 hex digits>`.
std::string to_assembly(const Decoded& d);

}  // namespace pevp::isa
