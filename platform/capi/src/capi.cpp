// The C driver API (pevp/pevp.h) over the platform and its driver library.
//
// SystemC runs in the caller's thread: each call hands its work to a host module's thread on the platform bus and
// runs the simulation until that work is done, when the host pauses it (sc_pause). So simulated time advances only
// inside calls, and a C program needs no sc_main of its own (a weak one here satisfies libsystemc's reference).
#include "pevp/pevp.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include "pevp/isa/decode.h"
#include "pevp/isa/generation.h"
#include "pevp/isa_text/assembly.h"
#include "pevp/platform/config.h"
#include "pevp/platform/driver.h"
#include "pevp/platform/platform.h"

// libsystemc's main calls sc_main; a C program has its own main, so this one is never called. Weak: a C++ program
// that links the C API and has an sc_main keeps its own.
__attribute__((weak)) int sc_main(int, char*[]) { return 0; }

namespace {

using namespace pevp;

// The bus master of the C API: runs one request at a time in simulated time, then pauses the simulation.
class Host : public sc_core::sc_module {
 public:
  tlm_utils::simple_initiator_socket<Host> socket;
  std::function<void(platform::Driver&)> request;
  std::exception_ptr failure;
  bool busy = false;
  sc_core::sc_event wake;

  SC_HAS_PROCESS(Host);
  Host(sc_core::sc_module_name n, const platform::AddressMap& map, const sc_core::sc_signal_in_if<bool>& irq)
      : sc_core::sc_module(n), socket("socket"), driver_(socket, map, irq) {
    SC_THREAD(serve);
  }

 private:
  void serve() {
    for (;;) {
      while (!request) sc_core::wait(wake);
      const auto work = std::move(request);
      request = nullptr;
      try {
        work(driver_);
      } catch (...) {
        failure = std::current_exception();
      }
      busy = false;
      sc_core::sc_pause();
    }
  }
  platform::Driver driver_;
};

struct Machine {
  platform::VpConfig config;
  platform::Platform platform;
  Host host;
  bool started = false, broken = false;
  explicit Machine(const platform::VpConfig& c)
      : config(c), platform("vp", c), host("capi_host", c.platform.map, platform.seq.irq) {
    host.socket.bind(platform.bus.target);
  }
};

// One platform per process (SystemC elaborates once); it lives until the process ends, since SystemC cannot take
// modules apart after the simulation started.
Machine* g_machine = nullptr;

}  // namespace

struct pevp_vp {
  Machine* machine = nullptr;
  std::string error;
};

namespace {

pevp_status fail(pevp_vp* vp, pevp_status s, const std::string& message) {
  if (vp) vp->error = message;
  return s;
}

// Runs `work` on the platform in simulated time. Every C++ exception becomes a status and a message.
pevp_status run(pevp_vp* vp, const std::function<void(platform::Driver&)>& work) {
  if (vp == nullptr) return PEVP_ERR_ARGUMENT;
  vp->error.clear();
  Machine& m = *vp->machine;
  if (m.broken) return fail(vp, PEVP_ERR_STATE, "the VP stopped in an earlier call (a deadlock); open a new process");
  m.host.request = work;
  m.host.busy = true;
  m.host.failure = nullptr;
  if (m.started) m.host.wake.notify(sc_core::SC_ZERO_TIME);
  m.started = true;
  try {
    sc_core::sc_start();
  } catch (const std::exception& e) {
    m.broken = true;
    return fail(vp, PEVP_ERR_INTERNAL, std::string("the simulation failed: ") + e.what());
  }
  if (m.host.busy) {
    m.broken = true;
    return fail(vp, PEVP_ERR_INTERNAL, "the simulation ran out of events before the call finished (a deadlock)");
  }
  if (!m.host.failure) return PEVP_OK;
  try {
    std::rethrow_exception(m.host.failure);
  } catch (const platform::BusError& e) {
    return fail(vp, PEVP_ERR_BUS, e.what());
  } catch (const std::invalid_argument& e) {
    return fail(vp, PEVP_ERR_ARGUMENT, e.what());
  } catch (const std::out_of_range& e) {
    return fail(vp, PEVP_ERR_ARGUMENT, e.what());
  } catch (const std::exception& e) {
    return fail(vp, PEVP_ERR_INTERNAL, e.what());
  }
}

template <class T>
pevp_status need(pevp_vp* vp, const T* p, const char* what) {
  if (p != nullptr) return PEVP_OK;
  return fail(vp, PEVP_ERR_ARGUMENT, std::string(what) + " is a null pointer");
}

void copy_text(char* dst, std::size_t size, const std::string& src) {
  std::snprintf(dst, size, "%s", src.c_str());
}

}  // namespace

extern "C" {

pevp_status pevp_open(const char* generation, pevp_vp** vp) {
  if (vp == nullptr) return PEVP_ERR_ARGUMENT;
  *vp = nullptr;
  if (generation == nullptr) return PEVP_ERR_ARGUMENT;
  const auto gen = isa::parse_generation(generation);
  if (!gen) return PEVP_ERR_ARGUMENT;
  if (g_machine != nullptr) return PEVP_ERR_STATE;
  try {
    setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
    // The normal end of a call pauses the simulation; the kernel's info messages about it are not news.
    sc_core::sc_report_handler::set_actions("/OSCI/SystemC", sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
    g_machine = new Machine(platform::preset(*gen));
    auto handle = std::make_unique<pevp_vp>();
    handle->machine = g_machine;
    *vp = handle.release();
    return PEVP_OK;
  } catch (...) {
    return PEVP_ERR_INTERNAL;
  }
}

void pevp_close(pevp_vp* vp) {
  if (vp == nullptr) return;
  delete vp;  // the platform itself stays until the process ends (see g_machine)
}

const char* pevp_last_error(const pevp_vp* vp) { return vp ? vp->error.c_str() : "no VP (a null handle)"; }

pevp_status pevp_get_map(pevp_vp* vp, pevp_map* map) {
  if (vp == nullptr) return PEVP_ERR_ARGUMENT;
  if (pevp_status s = need(vp, map, "map"); s != PEVP_OK) return s;
  const platform::VpConfig& c = vp->machine->config;
  map->sbuf = c.platform.map.sbuf;
  map->psum = c.platform.map.psum;
  map->apb = c.platform.map.apb;
  map->iq = c.platform.map.iq;
  map->sbuf_partition_bytes = c.geometry.sbuf_partition_bytes;
  map->psum_partition_bytes = c.geometry.psum_partition_bytes();
  map->partitions = c.geometry.partitions;
  return PEVP_OK;
}

pevp_status pevp_time_ps(pevp_vp* vp, uint64_t* ps) {
  if (vp == nullptr) return PEVP_ERR_ARGUMENT;
  if (pevp_status s = need(vp, ps, "ps"); s != PEVP_OK) return s;
  *ps = sc_core::sc_time_stamp().value();  // the default time resolution is 1 ps
  return PEVP_OK;
}

pevp_status pevp_read32(pevp_vp* vp, uint64_t address, int privileged, uint32_t* value) {
  if (pevp_status s = need(vp, value, "value"); s != PEVP_OK) return s;
  return run(vp, [&](platform::Driver& d) { *value = d.read32(address, privileged != 0); });
}

pevp_status pevp_write32(pevp_vp* vp, uint64_t address, int privileged, uint32_t value) {
  return run(vp, [&](platform::Driver& d) { d.write32(address, value, privileged != 0); });
}

pevp_status pevp_read(pevp_vp* vp, uint64_t address, void* data, size_t bytes) {
  if (pevp_status s = need(vp, data, "data"); s != PEVP_OK) return s;
  return run(vp, [&](platform::Driver& d) { d.read(address, data, bytes); });
}

pevp_status pevp_write(pevp_vp* vp, uint64_t address, const void* data, size_t bytes) {
  if (pevp_status s = need(vp, data, "data"); s != PEVP_OK) return s;
  return run(vp, [&](platform::Driver& d) { d.write(address, data, bytes); });
}

pevp_status pevp_read_reg(pevp_vp* vp, const char* face, const char* name, uint32_t* value) {
  if (pevp_status s = need(vp, face, "face"); s != PEVP_OK) return s;
  if (pevp_status s = need(vp, name, "name"); s != PEVP_OK) return s;
  if (pevp_status s = need(vp, value, "value"); s != PEVP_OK) return s;
  return run(vp, [&](platform::Driver& d) { *value = d.read(platform::resolve_register(d.map(), face, name)); });
}

pevp_status pevp_write_reg(pevp_vp* vp, const char* face, const char* name, uint32_t value) {
  if (pevp_status s = need(vp, face, "face"); s != PEVP_OK) return s;
  if (pevp_status s = need(vp, name, "name"); s != PEVP_OK) return s;
  return run(vp, [&](platform::Driver& d) {
    const platform::RegisterRef r = platform::resolve_register(d.map(), face, name);
    const unsigned width = r.field ? r.field->width : 32;
    if (width < 32 && value >> width != 0)
      throw std::invalid_argument(r.name() + ": " + std::to_string(value) + " does not fit its " +
                                  std::to_string(width) + " bits");
    d.write(r, value);
  });
}

pevp_status pevp_read_counter48(pevp_vp* vp, const char* face, const char* lsb_name, uint64_t* value) {
  if (pevp_status s = need(vp, face, "face"); s != PEVP_OK) return s;
  if (pevp_status s = need(vp, lsb_name, "lsb_name"); s != PEVP_OK) return s;
  if (pevp_status s = need(vp, value, "value"); s != PEVP_OK) return s;
  return run(vp, [&](platform::Driver& d) { *value = d.read_counter48(face, lsb_name); });
}

pevp_status pevp_arm(pevp_vp* vp, int serialized, int single_entry, int reg_immediate) {
  platform::ArmOptions o;
  o.serialized = serialized != 0;
  o.single_entry = single_entry != 0;
  o.reg_immediate = reg_immediate != 0;
  return run(vp, [&](platform::Driver& d) { d.arm(o); });
}

pevp_status pevp_submit(pevp_vp* vp, const void* records, size_t count) {
  if (pevp_status s = need(vp, records, "records"); s != PEVP_OK) return s;
  std::vector<isa::RawInstruction> program(count);
  const auto* bytes = static_cast<const std::uint8_t*>(records);
  for (std::size_t i = 0; i < count; ++i)
    std::copy(bytes + i * isa::kInstructionBytes, bytes + (i + 1) * isa::kInstructionBytes, program[i].begin());
  return run(vp, [&](platform::Driver& d) { d.submit(program); });
}

pevp_status pevp_wait_idle(pevp_vp* vp, uint64_t timeout_ns, pevp_completion* completion) {
  platform::Completion c;
  const pevp_status s = run(vp, [&](platform::Driver& d) {
    c = d.wait_idle(sc_core::sc_time(static_cast<double>(timeout_ns), sc_core::SC_NS));
  });
  if (s != PEVP_OK) return s;
  if (completion) *completion = {c.done ? 1 : 0, c.error ? 1 : 0, c.timed_out ? 1 : 0, c.retired};
  if (c.timed_out) return fail(vp, PEVP_ERR_TIMEOUT, "the SEQ did not settle in " + std::to_string(timeout_ns) + " ns");
  return PEVP_OK;
}

pevp_status pevp_clear_done(pevp_vp* vp) {
  return run(vp, [&](platform::Driver& d) { d.clear_done(); });
}

pevp_status pevp_error_record(pevp_vp* vp, pevp_error_info* info) {
  if (pevp_status s = need(vp, info, "info"); s != PEVP_OK) return s;
  std::optional<platform::ErrorInfo> e;
  const pevp_status s = run(vp, [&](platform::Driver& d) { e = d.error_record(); });
  if (s != PEVP_OK) return s;
  *info = pevp_error_info{};
  if (!e) return PEVP_OK;
  info->valid = 1;
  info->index = e->index;
  info->opcode = e->opcode;
  info->field_offset = e->field_offset;
  info->rule_number = e->rule_number;
  info->value = e->value;
  copy_text(info->rule, sizeof info->rule, e->rule);
  copy_text(info->description, sizeof info->description, e->describe());
  return PEVP_OK;
}

pevp_status pevp_clear_error(pevp_vp* vp) {
  return run(vp, [&](platform::Driver& d) { d.clear_error(); });
}

pevp_status pevp_assemble(pevp_vp* vp, const char* source, void* records, size_t max_records, size_t* count) {
  if (vp == nullptr) return PEVP_ERR_ARGUMENT;
  if (pevp_status s = need(vp, source, "source"); s != PEVP_OK) return s;
  if (pevp_status s = need(vp, count, "count"); s != PEVP_OK) return s;
  vp->error.clear();
  try {
    const platform::VpConfig& c = vp->machine->config;
    const isa::AsmResult r = isa::assemble(c.gen(), source, isa::AsmOptions(false, c.geometry));
    if (!r.ok()) {
      std::string all;
      for (const auto& d : r.diagnostics) all += (all.empty() ? "" : "\n") + d.describe("source");
      return fail(vp, PEVP_ERR_ASSEMBLY, all);
    }
    *count = r.records.size();
    if (r.records.size() > max_records)
      return fail(vp, PEVP_ERR_ARGUMENT, "the text has " + std::to_string(r.records.size()) + " records, room for " +
                                             std::to_string(max_records));
    if (!r.records.empty() && records == nullptr) return fail(vp, PEVP_ERR_ARGUMENT, "records is a null pointer");
    auto* out = static_cast<std::uint8_t*>(records);
    for (std::size_t i = 0; i < r.records.size(); ++i)
      std::copy(r.records[i].begin(), r.records[i].end(), out + i * isa::kInstructionBytes);
    return PEVP_OK;
  } catch (const std::exception& e) {
    return fail(vp, PEVP_ERR_INTERNAL, e.what());
  }
}

}  // extern "C"
