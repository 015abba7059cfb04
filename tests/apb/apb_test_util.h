// Benches of the APB4 pin-level tests: a scripted TLM initiator, a TLM memory with per-address latency, blocking
// and forced statuses that records what it saw, a loopback (initiator -> TlmToApb -> pins + checker -> ApbToTlm ->
// target), a pin-level APB master written from the protocol (independent of TlmToApb) and a row driver that puts
// any pin values on the bus cycle by cycle. Every bench runs on a 10 ns PCLK.
#pragma once

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <systemc>
#include <tlm>
#include <tlm_utils/multi_passthrough_target_socket.h>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>
#include <vector>

#include "pevp/apb/apb_bus.h"
#include "pevp/apb/apb_checker.h"
#include "pevp/apb/apb_to_tlm.h"
#include "pevp/apb/tlm_to_apb.h"
#include "pevp/regfile/apb_prot.h"

namespace apbt {

using namespace pevp::apb;
using pevp::regfile::ApbProt;
using sc_core::sc_time;
using sc_core::SC_NS;

inline const sc_time kT(10, SC_NS);  // PCLK period of every bench
inline sc_time ns(double v) { return sc_time(v, SC_NS); }

inline std::vector<unsigned char> le_bytes(std::uint32_t v, unsigned n = 4) {
  std::vector<unsigned char> b(n);
  for (unsigned i = 0; i < n && i < 4; ++i) b[i] = static_cast<unsigned char>(v >> (8 * i));
  return b;
}
inline std::uint32_t le_word(const std::vector<unsigned char>& b, unsigned at = 0) {
  std::uint32_t v = 0;
  for (unsigned i = 0; i < 4 && at + i < b.size(); ++i) v |= std::uint32_t{b[at + i]} << (8 * i);
  return v;
}

// ---- the TLM side -----------------------------------------------------------------------------------------------

struct Result {
  tlm::tlm_response_status status = tlm::TLM_INCOMPLETE_RESPONSE;
  std::vector<unsigned char> data;
  sc_time delay;  // the annotated delay after the call
  sc_time end;    // simulated time after the call
};

struct Access {
  tlm::tlm_command cmd = tlm::TLM_READ_COMMAND;
  std::uint64_t addr = 0;
  std::vector<unsigned char> data;  // the buffer (a read's initial contents)
  std::vector<unsigned char> be;    // empty: no byte enables
  std::optional<ApbProt> prot;      // none: no extension
  sc_time delay = sc_core::SC_ZERO_TIME;
  std::optional<unsigned> streaming_width;  // none: the data length
  std::optional<unsigned> length;  // none: data.size()
  bool null_data = false;
  bool be_length_zero = false;
};

// A TLM initiator whose SC_THREAD runs the test's script.
class Initiator : public sc_core::sc_module {
 public:
  tlm_utils::simple_initiator_socket<Initiator> socket;
  std::function<void(Initiator&)> script;
  bool done = false;

  SC_HAS_PROCESS(Initiator);
  explicit Initiator(sc_core::sc_module_name n) : sc_core::sc_module(n), socket("socket") { SC_THREAD(main); }

  Result access(Access a) {
    tlm::tlm_generic_payload trans;
    trans.set_command(a.cmd);
    trans.set_address(a.addr);
    trans.set_data_ptr(a.null_data ? nullptr : a.data.data());
    const unsigned length = a.length.value_or(static_cast<unsigned>(a.data.size()));
    trans.set_data_length(length);
    trans.set_streaming_width(a.streaming_width.value_or(length));
    if (!a.be.empty() || a.be_length_zero) {
      trans.set_byte_enable_ptr(a.be.empty() ? a.data.data() : a.be.data());
      trans.set_byte_enable_length(a.be_length_zero ? 0 : static_cast<unsigned>(a.be.size()));
    }
    if (a.prot) trans.set_extension(&*a.prot);
    trans.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    sc_time delay = a.delay;
    socket->b_transport(trans, delay);
    if (a.prot) trans.clear_extension(&*a.prot);
    return {trans.get_response_status(), a.data, delay, sc_core::sc_time_stamp()};
  }
  Result write32(std::uint64_t addr, std::uint32_t v, std::optional<ApbProt> prot = std::nullopt) {
    Access a;
    a.cmd = tlm::TLM_WRITE_COMMAND;
    a.addr = addr;
    a.data = le_bytes(v);
    a.prot = prot;
    return access(a);
  }
  Result read32(std::uint64_t addr, std::optional<ApbProt> prot = std::nullopt) {
    Access a;
    a.addr = addr;
    a.data = le_bytes(0);
    a.prot = prot;
    return access(a);
  }

 private:
  void main() {
    if (script) script(*this);
    done = true;
  }
};

// Lets several initiators share one target socket, as an interconnect would.
class Fanin : public sc_core::sc_module {
 public:
  tlm_utils::multi_passthrough_target_socket<Fanin> target;
  tlm_utils::simple_initiator_socket<Fanin> initiator;
  explicit Fanin(sc_core::sc_module_name n) : sc_core::sc_module(n), target("target"), initiator("initiator") {
    target.register_b_transport(this, &Fanin::b_transport);
  }

 private:
  void b_transport(int, tlm::tlm_generic_payload& t, sc_time& d) { initiator->b_transport(t, d); }
};

// What the memory saw of one transaction.
struct Seen {
  sc_time time;
  tlm::tlm_command cmd;
  std::uint64_t addr;
  unsigned length;
  std::vector<unsigned char> be;  // empty: none
  std::vector<unsigned char> data;
  bool has_prot;
  ApbProt prot;
};

// A 4 KiB byte-addressed TLM memory: word-aligned 4-byte accesses (like an APB slave), byte enables honoured.
class Memory : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<Memory> socket;
  std::vector<unsigned char> bytes = std::vector<unsigned char>(4096, 0);
  sc_time latency = sc_core::SC_ZERO_TIME;              // annotated on every access
  std::map<std::uint64_t, sc_time> latency_at;          // per word address, instead of `latency`
  std::map<std::uint64_t, sc_time> block_at;            // waited inside b_transport, per word address
  std::map<std::uint64_t, tlm::tlm_response_status> status_at;  // forced status, nothing changes
  std::vector<Seen> seen;

  explicit Memory(sc_core::sc_module_name n) : sc_core::sc_module(n), socket("socket") {
    socket.register_b_transport(this, &Memory::b_transport);
  }
  std::uint32_t word(std::uint64_t a) const { return le_word(bytes, static_cast<unsigned>(a)); }
  void set_word(std::uint64_t a, std::uint32_t v) {
    for (unsigned i = 0; i < 4; ++i) bytes[a + i] = static_cast<unsigned char>(v >> (8 * i));
  }

 private:
  void b_transport(tlm::tlm_generic_payload& t, sc_time& delay) {
    const std::uint64_t a = t.get_address();
    Seen s{sc_core::sc_time_stamp(), t.get_command(), a, t.get_data_length(), {}, {}, false, ApbProt{}};
    if (t.get_byte_enable_ptr() != nullptr)
      s.be.assign(t.get_byte_enable_ptr(), t.get_byte_enable_ptr() + t.get_byte_enable_length());
    if (t.is_write()) s.data.assign(t.get_data_ptr(), t.get_data_ptr() + t.get_data_length());
    if (const ApbProt* p = t.get_extension<ApbProt>()) {
      s.has_prot = true;
      s.prot = *p;
    }
    seen.push_back(s);
    if (auto b = block_at.find(a); b != block_at.end()) sc_core::wait(b->second);
    auto l = latency_at.find(a);
    delay += l != latency_at.end() ? l->second : latency;
    if (auto f = status_at.find(a); f != status_at.end()) {
      t.set_response_status(f->second);
      return;
    }
    if (t.get_data_length() != 4 || a % 4 != 0 || a + 4 > bytes.size()) {
      t.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
      return;
    }
    for (unsigned i = 0; i < 4; ++i) {
      if (t.get_byte_enable_ptr() != nullptr && t.get_byte_enable_ptr()[i % t.get_byte_enable_length()] == 0) continue;
      if (t.is_write()) bytes[a + i] = t.get_data_ptr()[i];
      else t.get_data_ptr()[i] = bytes[a + i];
    }
    t.set_response_status(tlm::TLM_OK_RESPONSE);
  }
};

// ---- the loopback -------------------------------------------------------------------------------------------------

struct LoopbackConfig {
  unsigned addr_bits = 32;
  unsigned initiators = 1;
  TlmToApbConfig master;
  ApbToTlmConfig slave;
  ApbCheckerConfig checker;
};

// initiator(s) -> TlmToApb -> ApbBus (+ ApbChecker) -> ApbToTlm -> Memory
struct Loopback {
  sc_core::sc_clock clk;
  ApbBus bus;
  TlmToApb master;
  ApbToTlm slave;
  ApbChecker checker;
  Memory mem;
  Fanin fanin;
  Initiator cpu;
  std::optional<Initiator> cpu2;

  explicit Loopback(LoopbackConfig c = {})
      : clk("pclk", kT),
        bus("apb", ApbBusConfig{c.addr_bits}),
        master("master", c.master),
        slave("slave", c.slave),
        checker("checker", c.checker),
        mem("mem"),
        fanin("fanin"),
        cpu("cpu") {
    master.pclk(clk);
    master.connect(bus);
    slave.pclk(clk);
    slave.connect(bus);
    checker.pclk(clk);
    checker.connect(bus);
    cpu.socket.bind(fanin.target);
    if (c.initiators > 1) {
      cpu2.emplace("cpu2");
      cpu2->socket.bind(fanin.target);
    }
    fanin.initiator.bind(master.socket);
    slave.socket.bind(mem.socket);
  }

  // Runs the script(s) for `limit` of simulated time; the scripts must have finished.
  void run(std::function<void(Initiator&)> script, std::function<void(Initiator&)> script2 = {},
           sc_time limit = sc_time(10, sc_core::SC_US)) {
    cpu.script = std::move(script);
    if (cpu2) cpu2->script = std::move(script2);
    sc_core::sc_start(limit);
    EXPECT_TRUE(cpu.done) << "the script did not finish";
    if (cpu2) {
      EXPECT_TRUE(cpu2->done) << "the second script did not finish";
    }
  }
};

// ---- the pin side -------------------------------------------------------------------------------------------------

// An APB4 master written from the protocol, on the pins alone: one transfer = a setup cycle, an access cycle,
// then one more cycle per PREADY-low edge.
class PinMaster : public sc_core::sc_module {
 public:
  sc_core::sc_in<bool> pclk;
  std::function<void(PinMaster&)> script;
  bool done = false;

  struct Out {
    std::uint32_t rdata = 0;
    bool slverr = false;
    unsigned waits = 0;
    sc_time end;
  };

  SC_HAS_PROCESS(PinMaster);
  PinMaster(sc_core::sc_module_name n, ApbBus& bus) : sc_core::sc_module(n), pclk("PCLK"), bus_(bus) {
    SC_THREAD(main);
  }

  Out transfer(bool write, std::uint32_t addr, std::uint32_t wdata, std::uint32_t strb, std::uint32_t prot) {
    sc_core::wait(pclk.posedge_event());
    bus_.psel.write(true);
    bus_.penable.write(false);
    bus_.pwrite.write(write);
    bus_.paddr.write(addr);
    bus_.pwdata.write(wdata);
    bus_.pstrb.write(strb);
    bus_.pprot.write(prot);
    sc_core::wait(pclk.posedge_event());
    bus_.penable.write(true);
    Out out;
    for (;;) {
      sc_core::wait(pclk.posedge_event());
      if (bus_.pready.read()) break;
      ++out.waits;
    }
    out.rdata = bus_.prdata.read();
    out.slverr = bus_.pslverr.read();
    out.end = sc_core::sc_time_stamp();
    bus_.psel.write(false);
    bus_.penable.write(false);
    return out;
  }
  Out write(std::uint32_t addr, std::uint32_t v, std::uint32_t prot = pprot::kNonsecure, std::uint32_t strb = 0xF) {
    return transfer(true, addr, v, strb, prot);
  }
  Out read(std::uint32_t addr, std::uint32_t prot = pprot::kNonsecure) { return transfer(false, addr, 0, 0, prot); }

 private:
  void main() {
    if (script) script(*this);
    done = true;
  }
  ApbBus& bus_;
};

// Puts one row of pin values (every pin but PCLK) on the bus at each rising edge; the checker samples row i at the
// edge after the one that drove it.
class PinDriver : public sc_core::sc_module {
 public:
  sc_core::sc_in<bool> pclk;
  std::vector<ApbPins> rows;
  std::vector<sc_time> driven_at;

  SC_HAS_PROCESS(PinDriver);
  PinDriver(sc_core::sc_module_name n, ApbBus& bus) : sc_core::sc_module(n), pclk("PCLK"), bus_(bus) {
    SC_THREAD(main);
  }

 private:
  void main() {
    for (const ApbPins& p : rows) {
      sc_core::wait(pclk.posedge_event());
      driven_at.push_back(sc_core::sc_time_stamp());
      bus_.presetn.write(p.presetn);
      bus_.psel.write(p.psel);
      bus_.penable.write(p.penable);
      bus_.pwrite.write(p.pwrite);
      bus_.paddr.write(p.paddr);
      bus_.pwdata.write(p.pwdata);
      bus_.pstrb.write(p.pstrb);
      bus_.pprot.write(p.pprot);
      bus_.pready.write(p.pready);
      bus_.prdata.write(p.prdata);
      bus_.pslverr.write(p.pslverr);
    }
  }
  ApbBus& bus_;
};

}  // namespace apbt
