// libFuzzer harness: the assembler (isa::assemble) on arbitrary text. Its contract (assembly.h): it never throws on
// any text; every problem is a returned diagnostic. Beyond not crashing:
//   - every diagnostic prints (describe) and sits on a line of the text;
//   - without allow_invalid, a result without errors holds only records that decode valid and pass the
//     cross-instruction rules (rule violations are errors there);
//   - whatever assembled without errors prints back (`pe-vp disasm` text) and re-assembles to the same bytes.
// Input: byte 0 selects the generation (bits 0-1), allow_invalid (bit 2) and the geometry (bits 3-5,
// fuzz_util.h; geometry 7 reads its shape from the next three bytes); the rest is the source text.
#include <algorithm>
#include <sstream>
#include <string>
#include <string_view>

#include "fuzz_util.h"
#include "pevp/isa/decode.h"
#include "pevp/isa_text/assembly.h"
#include "pevp/platform/disasm.h"

namespace {

using namespace pevp;
using namespace pevp::isa;

constexpr const char* kTarget = "fuzz_assemble";

std::string diagnostics_of(const AsmResult& r) {
  std::string s;
  for (const AsmDiagnostic& d : r.diagnostics) s += "\n  " + d.describe("text");
  return s;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const Generation g = fuzz::generation_of(data[0]);
  const bool allow_invalid = (data[0] & 4) != 0;
  const unsigned geometry = data[0] >> 3 & 7;
  const std::size_t header = 1 + (geometry == fuzz::kCustomGeometry ? fuzz::kCustomGeometryBytes : 0);
  if (size < header) return 0;
  const ArrayGeometry geo = fuzz::geometry_of(g, geometry, data + 1);
  const std::string_view source(reinterpret_cast<const char*>(data + header), size - header);

  const AsmResult r = assemble(g, source, AsmOptions(allow_invalid, geo));

  const auto lines = static_cast<unsigned>(std::count(source.begin(), source.end(), '\n')) + 1;
  for (const AsmDiagnostic& d : r.diagnostics) {
    const std::string text = d.describe("text");
    if (text.empty()) fuzz::fail(kTarget, "a diagnostic describes as nothing");
    if (d.line > lines) fuzz::fail(kTarget, "a diagnostic on line " + std::to_string(d.line) + " of " +
                                                std::to_string(lines) + ": " + text);
  }
  if (!r.ok()) return 0;

  if (!allow_invalid) {
    StreamChecker stream;
    for (const RawInstruction& rec : r.records) {
      const Decoded d = decode(g, geo, rec);
      if (!d.valid())
        fuzz::fail(kTarget, "assembled without errors but decodes invalid: " + d.violations[0].describe() + "\n  " +
                                fuzz::hex(rec.data(), rec.size()));
      if (const auto v = stream.check(d); !v.empty())
        fuzz::fail(kTarget, "assembled without errors but breaks a stream rule: " + v[0].describe());
    }
  }

  const std::vector<std::uint8_t> bytes = r.bytes();
  std::ostringstream text;
  platform::disassemble(bytes, platform::DisasmOptions(g, false, geo), text);
  const AsmResult back = assemble(g, text.str(), AsmOptions(true, geo));
  if (!back.ok() || back.bytes() != bytes)
    fuzz::fail(kTarget, "the printed records do not assemble back\n" + text.str() + diagnostics_of(back));
  return 0;
}
