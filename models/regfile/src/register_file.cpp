#include "pevp/regfile/register_file.h"

#include <cstdio>
#include <stdexcept>

namespace pevp::regfile {

std::uint32_t reset_value(const RegisterDesc& r) {
  std::uint32_t v = 0;
  for (std::size_t i = 0; i < r.num_fields; ++i)
    if (r.fields[i].access != Access::PulseOnW) v |= (r.fields[i].reset << r.fields[i].lsb) & r.fields[i].mask();
  return v;
}

RegisterFile::RegisterFile(const RegFileDesc& desc, UnmappedPolicy unmapped)
    : desc_(desc), unmapped_(unmapped), values_(desc.num_registers), index_by_word_(desc.size_bytes / 4, -1) {
  for (std::size_t i = 0; i < desc.num_registers; ++i) {
    const std::uint32_t word = desc.registers[i].offset / 4;
    if (word >= index_by_word_.size() || desc.registers[i].offset % 4 != 0 || index_by_word_[word] != -1)
      throw std::invalid_argument(std::string(desc.name) + ": register '" + std::string(desc.registers[i].name) +
                                  "' is misplaced (outside the window, misaligned or overlapping)");
    index_by_word_[word] = static_cast<int>(i);
  }
  reset();
}

void RegisterFile::reset() {
  for (std::size_t i = 0; i < desc_.num_registers; ++i) values_[i] = reset_value(desc_.registers[i]);
}

int RegisterFile::index_at(std::uint32_t offset) const {
  if (offset % 4 != 0 || offset / 4 >= index_by_word_.size()) return -1;
  return index_by_word_[offset / 4];
}

RegisterFile::BusStatus RegisterFile::bus_read(std::uint32_t offset, std::uint32_t& value, std::uint32_t byte_mask) {
  const int i = index_at(offset);
  if (i < 0) {
    ++unmapped_accesses_;
    if (unmapped_ == UnmappedPolicy::Error) return BusStatus::Unmapped;
    value &= ~byte_mask;  // read as zero in the enabled bytes
    return BusStatus::Ok;
  }
  // PulseOnW bits are never stored, so they read 0.
  value = (value & ~byte_mask) | (values_[static_cast<std::size_t>(i)] & byte_mask);
  return BusStatus::Ok;
}

RegisterFile::BusStatus RegisterFile::bus_write(std::uint32_t offset, std::uint32_t data, std::uint32_t byte_mask) {
  const int i = index_at(offset);
  if (i < 0) {
    ++unmapped_accesses_;
    return unmapped_ == UnmappedPolicy::Error ? BusStatus::Unmapped : BusStatus::Ok;
  }
  const RegisterDesc& r = desc_.registers[static_cast<std::size_t>(i)];
  const std::uint32_t old = values_[static_cast<std::size_t>(i)];
  std::uint32_t next = old;
  bool touched_ro = false;
  for (std::size_t k = 0; k < r.num_fields; ++k) {
    const FieldDesc& f = r.fields[k];
    const std::uint32_t m = f.mask() & byte_mask;
    if (f.access == Access::RW) next = (next & ~m) | (data & m);
    if (f.access == Access::RO) touched_ro = touched_ro || ((data ^ old) & m) != 0;
  }
  // A write that tries to change RO bits is dropped for those bits and counted
  // (docs/registers.md "RO writes").
  if (touched_ro) ++ignored_ro_writes_;
  values_[static_cast<std::size_t>(i)] = next;
  if (next != old)
    for (auto& cb : on_write_) cb(r, old, next);
  // Pulses fire after the register is updated (a callback may read it).
  for (std::size_t k = 0; k < r.num_fields; ++k)
    if (r.fields[k].access == Access::PulseOnW && (data & r.fields[k].mask() & byte_mask) != 0)
      for (auto& cb : on_pulse_) cb(r, r.fields[k]);
  return BusStatus::Ok;
}

bool RegisterFile::peek(std::uint32_t offset, std::uint32_t& value) const {
  const int i = index_at(offset);
  if (i < 0) return false;
  value = values_[static_cast<std::size_t>(i)];
  return true;
}

bool RegisterFile::poke(std::uint32_t offset, std::uint32_t value) {
  const int i = index_at(offset);
  if (i < 0) return false;
  std::uint32_t storable = 0;  // pulses are never stored
  const RegisterDesc& r = desc_.registers[static_cast<std::size_t>(i)];
  for (std::size_t k = 0; k < r.num_fields; ++k)
    if (r.fields[k].access != Access::PulseOnW) storable |= r.fields[k].mask();
  values_[static_cast<std::size_t>(i)] = value & storable;
  return true;
}

const RegisterDesc& RegisterFile::reg(std::string_view name) const {
  // "bundle.register" picks one bank of registers that share a name (the three
  // perf banks define the same 98 names).
  std::string_view bundle;
  if (const auto dot = name.find('.'); dot != std::string_view::npos) {
    bundle = name.substr(0, dot);
    name = name.substr(dot + 1);
  }
  const RegisterDesc* found = nullptr;
  std::string candidates;
  for (std::size_t i = 0; i < desc_.num_registers; ++i) {
    const RegisterDesc& r = desc_.registers[i];
    if (r.name != name || (!bundle.empty() && r.bundle != bundle)) continue;
    candidates += (found ? ", " : "") + std::string(r.bundle) + "." + std::string(r.name);
    if (!found) found = &r;
  }
  if (!found)
    throw std::invalid_argument(std::string(desc_.name) + " has no register '" +
                                (bundle.empty() ? "" : std::string(bundle) + ".") + std::string(name) + "'");
  if (candidates.find(',') != std::string::npos)
    throw std::invalid_argument(std::string(desc_.name) + ": register name '" + std::string(name) +
                                "' is ambiguous, qualify it with its bundle: " + candidates);
  return *found;
}

FieldRef RegisterFile::field(std::string_view reg_name, std::string_view field_name) const {
  const RegisterDesc& r = reg(reg_name);
  for (std::size_t k = 0; k < r.num_fields; ++k)
    if (r.fields[k].name == field_name)
      return FieldRef{static_cast<std::uint32_t>(&r - desc_.registers), r.fields[k].lsb, r.fields[k].width};
  throw std::invalid_argument(std::string(desc_.name) + ": register '" + std::string(reg_name) + "' has no field '" +
                              std::string(field_name) + "'");
}

CounterRef RegisterFile::counter(std::string_view lsb_reg_name) const {
  constexpr std::string_view kLsb = "_lsb";
  if (lsb_reg_name.size() <= kLsb.size() || lsb_reg_name.substr(lsb_reg_name.size() - kLsb.size()) != kLsb)
    throw std::invalid_argument(std::string(desc_.name) + ": '" + std::string(lsb_reg_name) +
                                "' is not a counter's _lsb register");
  // Same bundle qualifier (if any) for the _msb half.
  const std::string msb_name = std::string(lsb_reg_name.substr(0, lsb_reg_name.size() - kLsb.size())) + "_msb";
  const RegisterDesc& lsb = reg(lsb_reg_name);
  const RegisterDesc& msb = reg(msb_name);
  return CounterRef{static_cast<std::uint32_t>(&lsb - desc_.registers), static_cast<std::uint32_t>(&msb - desc_.registers)};
}

void RegisterFile::set(const FieldRef& f, std::uint32_t value) {
  values_[f.reg] = (values_[f.reg] & ~f.mask()) | ((value << f.lsb) & f.mask());
}

std::uint64_t RegisterFile::read_counter(const CounterRef& c) const {
  return (static_cast<std::uint64_t>(values_[c.msb_reg] & 0xFFFFu) << 32) | values_[c.lsb_reg];
}

void RegisterFile::write_counter(const CounterRef& c, std::uint64_t value) {
  value &= kCounterMask48;
  values_[c.lsb_reg] = static_cast<std::uint32_t>(value);
  values_[c.msb_reg] = static_cast<std::uint32_t>(value >> 32);
}

void RegisterFile::add_to_counter(const CounterRef& c, std::uint64_t n) {
  write_counter(c, read_counter(c) + n);
}

std::string RegisterFile::check(const State& s) const {
  if (s.values.size() != desc_.num_registers)
    return std::string(desc_.name) + ": " + std::to_string(s.values.size()) + " register values, the file has " +
           std::to_string(desc_.num_registers);
  for (std::size_t i = 0; i < desc_.num_registers; ++i) {
    const RegisterDesc& r = desc_.registers[i];
    std::uint32_t stored = 0;  // PulseOnW bits are never stored
    for (std::size_t k = 0; k < r.num_fields; ++k)
      if (r.fields[k].access != Access::PulseOnW) stored |= r.fields[k].mask();
    if ((s.values[i] & ~stored) != 0)
      return std::string(desc_.name) + ": register '" + std::string(r.name) + "' holds 0x" +
             [](std::uint32_t v) {
               char b[12];
               std::snprintf(b, sizeof b, "%x", v);
               return std::string(b);
             }(s.values[i]) +
             ", with bits no field of it stores";
  }
  return "";
}

void RegisterFile::restore(const State& s) {
  if (const std::string why = check(s); !why.empty()) throw std::invalid_argument(why);
  values_ = s.values;
  ignored_ro_writes_ = s.ignored_ro_writes;
  unmapped_accesses_ = s.unmapped_accesses;
}

}  // namespace pevp::regfile
