// The register-file engine: one instance per generated schema (desc.h), plain
// C++ (no SystemC) so drivers' unit tests and the TLM target share it. It holds
// the value of every expanded register and applies the schema's access types:
// RW fields are write-masked, RO fields ignore bus writes (counted), PulseOnW
// fields read 0 and fire a callback. The model side (sequencer, counters) uses
// resolved FieldRef / CounterRef handles: name look-ups happen once.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "pevp/regfile/desc.h"

namespace pevp::regfile {

// A resolved field of one register instance.
struct FieldRef {
  std::uint32_t reg = 0;  // index into RegFileDesc::registers
  std::uint8_t lsb = 0;
  std::uint8_t width = 0;
  std::uint32_t mask() const { return (width >= 32 ? ~0u : ((1u << width) - 1u)) << lsb; }
};

// A 48-bit split counter: <name>_lsb (cntr_lsb [31:0]) + <name>_msb (cntr_msb [15:0]).
struct CounterRef {
  std::uint32_t lsb_reg = 0;
  std::uint32_t msb_reg = 0;
};

inline constexpr std::uint64_t kCounterMask48 = (std::uint64_t{1} << 48) - 1;

// What a bus access to an offset with no register returns (docs/registers.md).
enum class UnmappedPolicy : std::uint8_t {
  Error,               // address error, nothing changes (matches the generated RTL's PSLVERR)
  ReadZeroWriteIgnore  // reads 0, writes dropped, both counted
};

class RegisterFile {
 public:
  explicit RegisterFile(const RegFileDesc& desc, UnmappedPolicy unmapped = UnmappedPolicy::Error);
  RegisterFile(const RegisterFile&) = delete;
  RegisterFile& operator=(const RegisterFile&) = delete;

  const RegFileDesc& desc() const { return desc_; }
  UnmappedPolicy unmapped_policy() const { return unmapped_; }

  // ---- the bus (software) view -------------------------------------------------
  enum class BusStatus : std::uint8_t { Ok, Unmapped };
  // `offset` is window-relative and 4-byte aligned; `byte_mask` has 0xFF in the
  // bytes the access enables (APB PSTRB).
  BusStatus bus_read(std::uint32_t offset, std::uint32_t& value, std::uint32_t byte_mask = ~0u);
  BusStatus bus_write(std::uint32_t offset, std::uint32_t value, std::uint32_t byte_mask = ~0u);

  // Back-door access for transport_dbg and tests: no side effects, RO writable.
  bool peek(std::uint32_t offset, std::uint32_t& value) const;
  bool poke(std::uint32_t offset, std::uint32_t value);

  // ---- the model side --------------------------------------------------------------
  // Resolve by instance name ("queue_cfg") or bundle-qualified name
  // ("arr_seq_ififo_perf_matmul.tile_64x64_tile2_instr_cnt_lsb") and field name;
  // throws std::invalid_argument naming the register file, register and field
  // when either does not exist or an unqualified name is ambiguous.
  const RegisterDesc& reg(std::string_view name) const;
  FieldRef field(std::string_view reg_name, std::string_view field_name) const;
  CounterRef counter(std::string_view lsb_reg_name) const;

  std::uint32_t get(const FieldRef& f) const { return (values_[f.reg] & f.mask()) >> f.lsb; }
  // Sets a field from the hardware side (RO fields included). Values wider than
  // the field are truncated -- the caller owns the width.
  void set(const FieldRef& f, std::uint32_t value);
  std::uint32_t value(std::uint32_t reg_index) const { return values_[reg_index]; }

  std::uint64_t read_counter(const CounterRef& c) const;
  void add_to_counter(const CounterRef& c, std::uint64_t n = 1);  // wraps at 2^48
  void write_counter(const CounterRef& c, std::uint64_t value);

  // Called after a bus write changed a register (old, new).
  void on_write(std::function<void(const RegisterDesc&, std::uint32_t, std::uint32_t)> cb) {
    on_write_.push_back(std::move(cb));
  }
  // Called when a bus write sets a PulseOnW bit.
  void on_pulse(std::function<void(const RegisterDesc&, const FieldDesc&)> cb) { on_pulse_.push_back(std::move(cb)); }

  // Restores every register's reset value; counts are kept.
  void reset();

  // Every register's value and the policy counts, as plain data, for a VP
  // checkpoint (docs/checkpoint.md). restore() sets them as the hardware side
  // does: no callbacks fire (the owner tells its listeners).
  struct State {
    std::vector<std::uint32_t> values;  // by register index
    std::uint64_t ignored_ro_writes = 0;
    std::uint64_t unmapped_accesses = 0;
  };
  State state() const { return {values_, ignored_ro_writes_, unmapped_accesses_}; }
  // Why `s` cannot be this file's state -- the wrong number of registers, a
  // value with bits no field of its register stores -- or "".
  std::string check(const State& s) const;
  void restore(const State& s);

  // Statistics of the policies above.
  std::uint64_t ignored_ro_writes() const { return ignored_ro_writes_; }
  std::uint64_t unmapped_accesses() const { return unmapped_accesses_; }

  // Index of the register at `offset`, or -1.
  int index_at(std::uint32_t offset) const;

 private:
  const RegFileDesc& desc_;
  UnmappedPolicy unmapped_;
  std::vector<std::uint32_t> values_;
  std::vector<int> index_by_word_;  // offset / 4 -> register index or -1
  std::vector<std::function<void(const RegisterDesc&, std::uint32_t, std::uint32_t)>> on_write_;
  std::vector<std::function<void(const RegisterDesc&, const FieldDesc&)>> on_pulse_;
  std::uint64_t ignored_ro_writes_ = 0;
  std::uint64_t unmapped_accesses_ = 0;
};

// The value a register holds after reset.
std::uint32_t reset_value(const RegisterDesc& r);

}  // namespace pevp::regfile
