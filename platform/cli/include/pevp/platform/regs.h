// `pe-vp regs`: print a register file (name, offset, access, reset, fields) from
// the generated tables, as text or JSON.
#pragma once

#include <iosfwd>
#include <optional>
#include <string_view>

#include "pevp/regfile/desc.h"

namespace pevp::platform {

// The register file `pe-vp regs` and `pe-vp cosim-check` take without --regfile: the one a driver programs first.
inline constexpr std::string_view kDefaultRegfile = "top";

// "top", "cluster", "protected", "vp" (or the schema's full name) -> its tables.
std::optional<const regfile::RegFileDesc*> regfile_by_name(std::string_view name);

void print_regfile(const regfile::RegFileDesc& desc, bool json, std::ostream& out);

}  // namespace pevp::platform
