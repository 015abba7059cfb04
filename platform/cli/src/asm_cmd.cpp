#include "pevp/platform/asm_cmd.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <ostream>
#include <system_error>

#include "pevp/isa_text/assembly.h"
#include "pevp/files/input_file.h"
#include "pevp/files/output_file.h"

namespace pevp::platform {

int run_asm(isa::Generation gen, const std::string& input_path, const std::string& output_path,
            const AsmCmdOptions& options, std::ostream& out, std::ostream& err) {
  std::string why;
  const std::optional<std::string> read = files::read_file(input_path, &why);
  if (!read) {
    err << "pe-vp asm: " << why << '\n';
    return 2;
  }
  return assemble_source(gen, input_path, *read, output_path, options, out, err);
}

int assemble_source(isa::Generation gen, const std::string& input_path, const std::string& source,
                    const std::string& output_path, const AsmCmdOptions& options, std::ostream& out,
                    std::ostream& err) {
  std::string why;
  if (output_path.empty()) {
    err << "pe-vp asm: no output file given\n";
    return 2;
  }
  const isa::AsmResult result = isa::assemble(gen, source, isa::AsmOptions(options.allow_invalid, options.geometry));
  std::size_t errors = 0, warnings = 0;
  for (const auto& d : result.diagnostics) {
    err << d.describe(input_path) << '\n';
    (d.severity == isa::AsmDiagnostic::Severity::Error ? errors : warnings)++;
  }
  if (!result.ok()) {
    err << "pe-vp asm: " << errors << " error(s); '" << output_path << "' not written\n";
    return 1;
  }
  const std::vector<std::uint8_t> bytes = result.bytes();
  if (!files::write_file(output_path, bytes.data(), bytes.size(), &why)) {
    err << "pe-vp asm: " << why << '\n';
    return 2;
  }
  out << "pe-vp asm: wrote " << result.records.size() << " instruction(s) (" << result.records.size() * 64
      << " bytes) for " << isa::name(gen) << " to " << output_path;
  if (warnings) out << ", " << warnings << " warning(s)";
  out << '\n';
  return 0;
}

}  // namespace pevp::platform
