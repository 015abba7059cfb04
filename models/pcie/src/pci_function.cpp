#include "pevp/pcie/pci_function.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace pevp::pcie {

const char* name(BarStatus s) {
  switch (s) {
    case BarStatus::Ok: return "ok";
    case BarStatus::Disabled: return "memory space disabled";
    case BarStatus::NotDecoded: return "not in a BAR";
    case BarStatus::BadSize: return "bad size";
    case BarStatus::BusError: return "bus error";
  }
  return "?";
}

BarSizes bar_sizes(const std::array<BarWindow, kBarSlots>& bars) {
  BarSizes s{};
  for (unsigned b = 0; b < kBarSlots; ++b) s[b] = bars[b].size;
  return s;
}

std::uint64_t bar_size_covering(std::uint64_t bytes) {
  std::uint64_t s = ConfigSpace::kMinBarBytes;
  while (s < bytes && s <= ConfigSpace::kMaxBarBytes) s <<= 1;
  return s;
}

PciFunction::PciFunction(sc_core::sc_module_name name, PciFunctionConfig config)
    : sc_core::sc_module(name),
      bus("bus"),
      config_(std::move(config)),
      config_space_(config_.identity, bar_sizes(config_.bars)) {
  for (const RecordWindow& w : config_.record_windows) {
    if (w.bar >= kBarSlots || w.record_bytes == 0 || w.size % w.record_bytes != 0 ||
        w.offset + w.size > config_.bars[w.bar].size)
      throw std::invalid_argument("a record window must lie inside an implemented BAR and hold whole records");
    Staging s;
    s.bytes.resize(w.record_bytes);
    s.written.resize(w.record_bytes);
    staging_.push_back(std::move(s));
  }
}

void PciFunction::reset() {
  config_space_.reset();
  for (Staging& s : staging_) s.active = false;
}

bool PciFunction::transact(bool write, std::uint64_t address, std::uint8_t* data, unsigned size) {
  tlm::tlm_generic_payload t;
  t.set_command(write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
  t.set_address(address);
  t.set_data_ptr(data);
  t.set_data_length(size);
  t.set_streaming_width(size);
  t.set_byte_enable_ptr(nullptr);
  t.set_dmi_allowed(false);
  t.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
  bus->b_transport(t, delay);
  // The host waits for the reply (a non-posted access): the bus time passes here.
  if (delay > sc_core::SC_ZERO_TIME) sc_core::wait(delay);
  return t.is_response_ok();
}

BarStatus PciFunction::gather(std::size_t wi, std::uint64_t offset_in_bar, const std::uint8_t* data, unsigned size) {
  const RecordWindow& w = config_.record_windows[wi];
  Staging& s = staging_[wi];
  const std::uint64_t in_window = offset_in_bar - w.offset;
  const std::uint64_t record = in_window - in_window % w.record_bytes;
  const std::uint64_t at = in_window - record;
  if (at + size > w.record_bytes) return BarStatus::BusError;  // spans two records
  if (s.active && s.record != record) {
    ++stats_.records_dropped;
    s.active = false;
  }
  if (!s.active) {
    s.active = true;
    s.record = record;
    s.count = 0;
    std::fill(s.written.begin(), s.written.end(), false);
  }
  for (unsigned i = 0; i < size; ++i) {
    s.bytes[at + i] = data[i];
    if (!s.written[at + i]) {
      s.written[at + i] = true;
      ++s.count;
    }
  }
  if (s.count < w.record_bytes) return BarStatus::Ok;
  s.active = false;
  ++stats_.records_sent;
  return transact(true, config_.bars[w.bar].bus_base + w.offset + record, s.bytes.data(), w.record_bytes)
             ? BarStatus::Ok
             : BarStatus::BusError;
}

std::uint32_t PciFunction::config_read(std::uint32_t offset, std::int64_t length) {
  if (!ConfigSpace::check(offset, length).empty()) {
    ++stats_.config_refused;
    return ~std::uint32_t{0};
  }
  ++stats_.config_reads;
  return config_space_.read(offset, length);
}

bool PciFunction::config_write(std::uint32_t offset, std::uint32_t value, std::int64_t length) {
  if (!config_space_.write(offset, value, length)) {
    ++stats_.config_refused;
    return false;
  }
  ++stats_.config_writes;
  return true;
}

BarStatus PciFunction::access(bool write, std::uint64_t address, unsigned size, std::uint64_t& value) {
  BarRecord r;
  r.write = write;
  r.address = address;
  r.size = size;
  r.start = sc_core::sc_time_stamp();
  const auto finish = [&](BarStatus s) {
    if (s != BarStatus::Ok && !write) value = ~std::uint64_t{0};
    r.status = s;
    r.value = value;
    r.end = sc_core::sc_time_stamp();
    if (observer) observer(r);
    return s;
  };
  if (size != 1 && size != 2 && size != 4 && size != 8) {
    ++stats_.bad_size;
    return finish(BarStatus::BadSize);
  }
  if (!config_space_.memory_enabled()) {
    ++stats_.disabled;
    return finish(BarStatus::Disabled);
  }
  const std::optional<ConfigSpace::Hit> hit = config_space_.decode(address, size);
  if (!hit) {
    ++stats_.not_decoded;
    return finish(BarStatus::NotDecoded);
  }
  r.bar = hit->bar;
  r.offset = hit->offset;
  BarStats& st = stats_.bars[hit->bar];
  ++(write ? st.writes : st.reads);

  std::uint8_t data[8] = {};
  for (unsigned i = 0; i < size; ++i) data[i] = static_cast<std::uint8_t>(value >> (8 * i));
  for (std::size_t w = 0; w < config_.record_windows.size(); ++w) {
    const RecordWindow& rw = config_.record_windows[w];
    if (rw.bar != hit->bar || hit->offset < rw.offset || hit->offset - rw.offset >= rw.size) continue;
    const BarStatus s = write ? gather(w, hit->offset, data, size) : BarStatus::BusError;
    if (s != BarStatus::Ok) ++st.errors;
    return finish(s);
  }
  if (!transact(write, config_.bars[hit->bar].bus_base + hit->offset, data, size)) {
    ++st.errors;
    return finish(BarStatus::BusError);
  }
  if (!write) {
    value = 0;
    for (unsigned i = 0; i < size; ++i) value |= std::uint64_t{data[i]} << (8 * i);
  }
  return finish(BarStatus::Ok);
}

}  // namespace pevp::pcie
