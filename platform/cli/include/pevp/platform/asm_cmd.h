// `pe-vp asm`: assemble a text file of PE instructions (docs/assembly.md) into a
// binary stream of 64-byte records, the input `pe-vp disasm` and the SEQ read.
#pragma once

#include <optional>

#include "pevp/isa/geometry.h"

#include <iosfwd>
#include <string>

#include "pevp/isa/generation.h"

namespace pevp::platform {

struct AsmCmdOptions {
  AsmCmdOptions(bool allow_invalid_ = false, std::optional<isa::ArrayGeometry> geometry_ = std::nullopt)
      : allow_invalid(allow_invalid_), geometry(geometry_) {}
  // Rule violations (validate.cpp, StreamChecker) become warnings and the
  // records are written anyway: for negative tests that need invalid records.
  bool allow_invalid = false;
  // The machine sbuf[P] / psum[P] and the rules refer to (--set geometry.*); none: the preset.
  std::optional<isa::ArrayGeometry> geometry;
};

// Assembles `input_path` for `gen` into `output_path`. Every diagnostic goes to
// `err` as FILE:LINE:COL: error|warning: field: message [rule]; a summary line to
// `out`. The output file is written only when assembly succeeds, through a
// temporary file renamed over it, so a failed run never leaves a partial or
// truncated file. Returns 0 on success, 1 on assembly errors, 2 when a file
// cannot be read or written.
int run_asm(isa::Generation gen, const std::string& input_path, const std::string& output_path,
            const AsmCmdOptions& options, std::ostream& out, std::ostream& err);
// The same for a source already read; `input_path` names it in the diagnostics. `pe-vp asm` reads its source once,
// for the .gen directive that chooses the generation and for the records alike (a FIFO can be read only once).
int assemble_source(isa::Generation gen, const std::string& input_path, const std::string& source,
                    const std::string& output_path, const AsmCmdOptions& options, std::ostream& out,
                    std::ostream& err);

}  // namespace pevp::platform
