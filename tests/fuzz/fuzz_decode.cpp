// libFuzzer harness: the 64-byte instruction decoder of every generation (isa::decode) and the round trips the
// project guarantees for ANY 64 bytes (tests/isa/test_assembly.cpp, test_roundtrip.cpp, docs/assembly.md):
//   - decode keeps the bytes, names the opcode of the generation or reports exactly opcode.unknown, and every
//     violation carries a rule, a message and a field the record has; decoding is deterministic;
//   - to_text, to_json and tile_of never throw, and to_json agrees with the violations;
//   - to_assembly -> assemble(allow_invalid) gives back exactly the 64 bytes, valid or not, on the geometry the
//     record was decoded for (with the .gen / .geometry lines `pe-vp disasm` prints); a valid record re-assembles
//     with no diagnostic at all, even without allow_invalid;
//   - a record of a known opcode: encode_json(to_json) gives back the 64 bytes, also through the JSON text;
//   - the whole stream: `pe-vp disasm` text (platform::disassemble, rule comments included) re-assembles to the
//     same bytes, and its --json form is one parseable JSON object per record.
// Input: byte 0 selects the generation (bits 0-1) and the geometry (bits 2-4, fuzz_util.h; geometry 7 reads its
// shape from the next three bytes); the rest is up to four 64-byte records, the last one zero-padded. No exception is caught: none is part of these functions' contract.
#include <algorithm>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "fuzz_util.h"
#include "pevp/isa/decode.h"
#include "pevp/isa/tiles.h"
#include "pevp/isa_text/assembly.h"
#include "pevp/isa_text/format.h"
#include "pevp/isa_text/json.h"
#include "pevp/platform/disasm.h"

namespace {

using namespace pevp;
using namespace pevp::isa;

constexpr const char* kTarget = "fuzz_decode";
constexpr std::size_t kMaxRecords = 4;

std::string diagnostics_of(const AsmResult& r) {
  std::string s;
  for (const AsmDiagnostic& d : r.diagnostics) s += "\n  " + d.describe("text");
  return s;
}

// What `pe-vp disasm` puts before the records: the text assembles only for this generation and geometry.
std::string preamble(Generation g, const ArrayGeometry& geo) {
  std::string s = ".gen " + std::string(name(g)) + "\n";
  if (geo != preset_geometry(g)) s += ".geometry " + geometry_operands(geo) + "\n";
  return s;
}

void check_record(Generation g, const ArrayGeometry& geo, const RawInstruction& raw) {
  const std::string where = std::string(name(g)) + " " + fuzz::hex(raw.data(), raw.size()) + ": ";
  auto fail = [&](const std::string& what) { fuzz::fail(kTarget, where + what); };

  const Decoded d = decode(g, geo, raw);
  if (d.raw != raw || d.opcode_byte != raw[0] || d.gen != g || d.geo != geo) fail("decode changed its input");
  if (d.opcode != opcode_from_byte(raw[0], g)) fail("decode disagrees with opcode_from_byte");
  if (!d.opcode) {
    if (d.violations.size() != 1 || d.violations[0].rule != "opcode.unknown")
      fail("an unknown opcode must give exactly the violation opcode.unknown");
  } else if (d.layout == nullptr || d.fields.empty()) {
    fail("a known opcode decoded without layout or fields");
  }
  for (const Violation& v : d.violations) {
    if (v.rule.empty() || v.message.empty()) fail("a violation without rule or message: " + v.describe());
    if (!v.field.empty() && !d.has(v.field)) fail("a violation names a field the record lacks: " + v.field);
    if (v.describe().find("[" + v.rule + "]") == std::string::npos) fail("describe() lacks the rule: " + v.describe());
  }

  // The printers.
  const std::string text = to_text(d);
  if (text.empty()) fail("to_text is empty");
  const nlohmann::json j = to_json(d);
  if (j.at("valid") != d.valid() || j.at("violations").size() != d.violations.size())
    fail("to_json disagrees with the violations: " + j.dump());
  const std::string dumped = j.dump();
  (void)tile_of(d);
  if (to_json(decode(g, geo, raw)) != j) fail("decode is not deterministic");

  // Assembly: the bytes back, on this geometry.
  const std::string line = to_assembly(d);
  const std::string source = preamble(g, geo) + line + "\n";
  const AsmResult lenient = assemble(g, source, AsmOptions(true, geo));
  if (!lenient.ok() || lenient.records.size() != 1 || lenient.records[0] != raw)
    fail("to_assembly does not assemble back (allow_invalid)\n  text: " + line + "\n  out:  " +
         (lenient.records.empty() ? std::string("-") : fuzz::hex(lenient.records[0].data(), kInstructionBytes)) +
         diagnostics_of(lenient));
  if (d.valid()) {
    const AsmResult strict = assemble(g, source, AsmOptions(false, geo));
    if (!strict.diagnostics.empty())
      fail("a valid record re-assembles with diagnostics\n  text: " + line + diagnostics_of(strict));
  }

  // JSON: the bytes back from the object and from its text.
  if (d.opcode) {
    if (encode_json(g, j) != raw) fail("encode_json(to_json) differs: " + dumped);
    if (encode_json(g, nlohmann::json::parse(dumped)) != raw) fail("encode_json(parse(to_json.dump)) differs: " + dumped);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const Generation g = fuzz::generation_of(data[0]);
  const unsigned geometry = data[0] >> 2 & 7;
  const std::size_t header = 1 + (geometry == fuzz::kCustomGeometry ? fuzz::kCustomGeometryBytes : 0);
  if (size <= header) return 0;
  const ArrayGeometry geo = fuzz::geometry_of(g, geometry, data + 1);
  data += header, size -= header;
  const std::size_t records = std::min(kMaxRecords, (size + kInstructionBytes - 1) / kInstructionBytes);
  std::vector<std::uint8_t> bytes(records * kInstructionBytes, 0);
  std::memcpy(bytes.data(), data, std::min(size, bytes.size()));

  for (std::size_t i = 0; i < records; ++i) {
    RawInstruction raw;
    std::memcpy(raw.data(), bytes.data() + i * kInstructionBytes, kInstructionBytes);
    check_record(g, geo, raw);
  }

  // The stream as `pe-vp disasm` prints it (its StreamChecker's comments included), and back through
  // `pe-vp asm --allow-invalid`.
  std::ostringstream text;
  platform::disassemble(bytes, platform::DisasmOptions(g, false, geo), text);
  const AsmResult back = assemble(g, text.str(), AsmOptions(true, geo));
  if (!back.ok() || back.bytes() != bytes)
    fuzz::fail(kTarget, std::string(name(g)) + " " + fuzz::hex(bytes.data(), bytes.size()) +
                            ": the disasm text does not assemble back\n" + text.str() + diagnostics_of(back));
  std::ostringstream json_lines;
  platform::disassemble(bytes, platform::DisasmOptions(g, true, geo), json_lines);
  std::istringstream in(json_lines.str());
  std::size_t n = 0;
  for (std::string l; std::getline(in, l); ++n) (void)nlohmann::json::parse(l);
  if (n != records) fuzz::fail(kTarget, "disasm --json printed " + std::to_string(n) + " lines for " +
                                            std::to_string(records) + " records");
  return 0;
}
