// libFuzzer harness: the register-script parser of `pe-vp run --regs` (platform::parse_script, run.h) and the
// register-name resolution run_program applies to each of its lines before simulating (resolve_register,
// driver.h). Their contract: a bad line or name throws std::invalid_argument naming it (a script error starts
// with FILE:LINE); nothing else is caught
// (an std::out_of_range or bad_alloc escaping is a finding). For a script it accepts:
//   - line numbers are 1-based, increasing and within the text; `submit` appears at most once;
//   - write / expect / poll / read name one of the four faces and a register, dump a face, expect_fault a rule;
//     submit / wait / clear_error name none;
//   - a name that resolves gives a register of that face (and a field of that register) at the face's base plus
//     the register's offset, and its name() prints.
// Input: the script text.
#include <algorithm>
#include <stdexcept>
#include <string>

#include "fuzz_util.h"
#include "pevp/platform/address_map.h"
#include "pevp/platform/driver.h"
#include "pevp/platform/run.h"

// libsystemc.so calls sc_main from its own main; the fuzzer's main runs instead, so this is never called.
int sc_main(int, char*[]) { return 0; }

namespace {

using namespace pevp;
using platform::ScriptLine;

constexpr const char* kTarget = "fuzz_regs";

std::uint64_t face_base(const platform::AddressMap& map, const std::string& face) {
  if (face == "top") return map.top();
  if (face == "cluster") return map.cluster();
  if (face == "protected") return map.protect();
  return map.vp_seq();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<ScriptLine> script;
  try {
    script = platform::parse_script(text, "fuzz.regs");
  } catch (const std::invalid_argument& e) {
    if (std::string(e.what()).rfind("fuzz.regs:", 0) != 0)
      fuzz::fail(kTarget, std::string("a script error that does not name the file and line: ") + e.what());
    return 0;
  }
  const std::size_t lines = static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')) + 1;
  const platform::AddressMap map{};
  std::size_t last = 0, submits = 0;
  for (const ScriptLine& s : script) {
    const std::string at = "line " + std::to_string(s.line) + ": ";
    if (s.line <= last || s.line > lines) fuzz::fail(kTarget, at + "line numbers out of order or past the text");
    last = s.line;
    submits += s.op == ScriptLine::Op::Submit;
    using Op = ScriptLine::Op;
    // A face on the register commands and dump; a name on the register commands and expect_fault (its rule).
    const bool with_face = s.op == Op::Write || s.op == Op::Read || s.op == Op::Expect || s.op == Op::Poll || s.op == Op::Dump;
    const bool with_name = (with_face && s.op != Op::Dump) || s.op == Op::ExpectFault;
    if (with_face != !s.face.empty() || with_name != !s.name.empty())
      fuzz::fail(kTarget, at + "face/name do not fit the command");
    if (with_face && s.face != "top" && s.face != "cluster" && s.face != "protected" && s.face != "vp")
      fuzz::fail(kTarget, at + "accepted the face '" + s.face + "'");
    if (!with_face || !with_name) continue;
    platform::RegisterRef r;
    try {
      r = platform::resolve_register(map, s.face, s.name);
    } catch (const std::invalid_argument&) {
      continue;
    }
    if (r.reg == nullptr || r.face != s.face) fuzz::fail(kTarget, at + "resolved to no register of the face");
    if (r.address != face_base(map, s.face) + r.reg->offset) fuzz::fail(kTarget, at + "resolved to a wrong address");
    if (r.field != nullptr && (r.field < r.reg->fields || r.field >= r.reg->fields + r.reg->num_fields))
      fuzz::fail(kTarget, at + "resolved to a field of another register");
    if (r.name().empty()) fuzz::fail(kTarget, at + "a register without a name");
  }
  if (submits > 1) fuzz::fail(kTarget, "accepted more than one submit");
  return 0;
}
