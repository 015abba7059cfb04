#include "pevp/platform/regs.h"

#include <iomanip>
#include <nlohmann/json.hpp>
#include <ostream>
#include <sstream>

#include "pevp/regfile/register_file.h"
#include "tpb_arr_seq_cluster_host_visible_regs.h"
#include "tpb_arr_seq_top_host_visible_regs.h"
#include "tpb_arr_seq_top_protected_regs.h"
#include "vp_seq_regs.h"

namespace pevp::platform {

namespace {
using regfile::Access;

std::string_view access_name(Access a) {
  switch (a) {
    case Access::RW: return "RW";
    case Access::RO: return "RO";
    case Access::PulseOnW: return "PulseOnW";
  }
  return "?";
}

// A register's access: its fields' access when they agree, else "mixed".
std::string register_access(const regfile::RegisterDesc& r) {
  std::string_view a = r.num_fields ? access_name(r.fields[0].access) : "";
  for (std::size_t k = 1; k < r.num_fields; ++k)
    if (access_name(r.fields[k].access) != a) return "mixed";
  return std::string(a);
}

std::string hex(std::uint32_t v, int width) {
  std::ostringstream o;
  o << "0x" << std::hex << std::setw(width) << std::setfill('0') << v;
  return o.str();
}

std::string position(const regfile::FieldDesc& f) {
  if (f.width == 1) return "[" + std::to_string(f.lsb) + "]";
  return "[" + std::to_string(f.lsb + f.width - 1) + ":" + std::to_string(f.lsb) + "]";
}
}  // namespace

std::optional<const regfile::RegFileDesc*> regfile_by_name(std::string_view name) {
  namespace r = pevp::regs;
  if (name == "top" || name == "tpb_arr_seq_top_host_visible") return &r::tpb_arr_seq_top_host_visible::regfile_desc();
  if (name == "cluster" || name == "tpb_arr_seq_cluster_host_visible")
    return &r::tpb_arr_seq_cluster_host_visible::regfile_desc();
  if (name == "protected" || name == "tpb_arr_seq_top_protected") return &r::tpb_arr_seq_top_protected::regfile_desc();
  if (name == "vp" || name == "vp_seq") return &r::vp_seq::regfile_desc();
  return std::nullopt;
}

void print_regfile(const regfile::RegFileDesc& d, bool json, std::ostream& out) {
  if (json) {
    nlohmann::json j = {{"regfile", d.name},         {"addr_width", d.addr_width}, {"size_bytes", d.size_bytes},
                        {"interface", d.interface},  {"flavor", d.flavor},         {"data_width", d.data_width},
                        {"vp_defined", d.vp_defined}, {"registers", nlohmann::json::array()}};
    for (std::size_t i = 0; i < d.num_registers; ++i) {
      const auto& r = d.registers[i];
      nlohmann::json fields = nlohmann::json::array();
      for (std::size_t k = 0; k < r.num_fields; ++k) {
        const auto& f = r.fields[k];
        fields.push_back({{"name", f.name}, {"lsb", f.lsb}, {"width", f.width}, {"position", position(f)},
                          {"access", access_name(f.access)}, {"reset", f.reset}, {"description", f.description}});
      }
      j["registers"].push_back({{"name", r.name}, {"bundle", r.bundle}, {"instance", r.instance},
                                {"offset", r.offset}, {"access", register_access(r)},
                                {"reset", regfile::reset_value(r)}, {"fields", fields}});
    }
    out << j.dump(1) << '\n';
    return;
  }
  out << d.name << (d.vp_defined ? " (VP-defined)" : "") << ": " << d.interface << ", " << d.data_width
      << "-bit, AddrWidth " << d.addr_width << ", " << hex(d.size_bytes, 4) << " bytes, " << d.num_registers
      << " registers (" << d.num_definitions << " definitions, " << d.num_field_definitions << " fields)\n";
  std::string_view bundle;
  for (std::size_t i = 0; i < d.num_registers; ++i) {
    const auto& r = d.registers[i];
    if (r.bundle != bundle) {
      bundle = r.bundle;
      out << "  -- " << bundle << '\n';
    }
    out << "  " << hex(r.offset, 3) << "  " << std::left << std::setw(40) << r.name << std::right << " "
        << std::setw(6) << register_access(r) << "  reset " << hex(regfile::reset_value(r), 8) << '\n';
    for (std::size_t k = 0; k < r.num_fields; ++k) {
      const auto& f = r.fields[k];
      out << "         " << std::left << std::setw(30) << (std::string(f.name) + position(f)) << std::right << " "
          << std::setw(8) << access_name(f.access) << "  reset " << hex(f.reset, 1) << '\n';
    }
  }
}

}  // namespace pevp::platform
