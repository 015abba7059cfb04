// The register-file description the generator (scripts/regfile_gen.py) emits
// for every JSON schema in models/regfile/schemas/: plain constant tables, no
// behaviour. The runtime model (regfile.h) and `pe-vp regs` are built from
// these; drivers use the generated <name>_regs.h constants instead.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace pevp::regfile {

// The schema's Access strings.
enum class Access : std::uint8_t {
  RW,        // read/write
  RO,        // read-only: writes ignored (and counted) by the model
  PulseOnW,  // write 1 fires a one-cycle pulse; always reads 0
};

struct FieldDesc {
  std::string_view name;
  std::uint8_t lsb;    // Position low bit
  std::uint8_t width;  // bits
  Access access;
  std::uint32_t reset;  // ResetValue, right-aligned in the field
  std::string_view description;

  std::uint32_t mask() const { return (width >= 32 ? ~0u : ((1u << width) - 1u)) << lsb; }
};

// One register instance: a bundle register replicated ArraySize times appears
// once per instance, at bundle base + instance * BundleSizeInBytes + AddressOffset.
struct RegisterDesc {
  std::string_view name;        // instance name: "<register>" or "<register>_<instance>" for arrays (see generator)
  std::string_view def_name;    // the register's name in its bundle (shared by every instance)
  std::string_view bundle;      // RegistersBundleArrays[].name
  std::uint32_t instance;       // 0 .. ArraySize-1
  std::uint32_t offset;         // absolute byte offset in the window
  std::uint32_t definition;     // index of the unique definition (0 .. num_definitions-1)
  std::string_view description;
  const FieldDesc* fields;
  std::size_t num_fields;
};

struct BundleDesc {
  std::string_view name;
  std::uint32_t base;
  std::uint32_t bundle_size;  // BundleSizeInBytes
  std::uint32_t array_size;   // ArraySize
};

struct RegFileDesc {
  std::string_view name;       // "tpb_arr_seq_top_host_visible"
  std::uint32_t addr_width;    // AddrWidth
  std::uint32_t size_bytes;    // SizeInBytes
  std::string_view interface;  // InterfaceType
  std::string_view flavor;     // RegfileFlavor
  std::uint32_t data_width;    // DataWidth
  bool vp_defined;             // true for the VP's own schema (not from the spec)
  const BundleDesc* bundles;
  std::size_t num_bundles;
  const RegisterDesc* registers;  // expanded, sorted by offset
  std::size_t num_registers;
  std::size_t num_definitions;    // unique register definitions
  std::size_t num_field_definitions;  // bit fields over unique definitions
};

}  // namespace pevp::regfile
