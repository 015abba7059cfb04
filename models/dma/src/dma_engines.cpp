#include "pevp/dma/dma_engines.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <limits>

#include "dma_regs.h"
#include "pevp/numerics/convert.h"

namespace pevp::dma {

using sc_core::sc_time;
using sc_core::SC_NS;

// ---- configuration ---------------------------------------------------------------------------------------------

namespace {
// The register face gives each queue one doorbell word in a 4 KiB window (docs/dma.md), so engines x queues <= 1024.
constexpr unsigned kMaxQueuesTotal = 1024;
constexpr unsigned kMaxEngines = 64, kMaxQueuesPerEngine = 64;
// How far ahead of simulated time an engine books its rows in the memories (D-DMA-TIMING). A function: an sc_time
// built during static initialisation would fix the time resolution.
sc_core::sc_time booking_horizon() { return sc_core::sc_time(1, sc_core::SC_US); }

std::string hex(std::uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}
}  // namespace

std::string check_config(const DmaConfig& c) {
  if (c.engines == 0 || c.engines > kMaxEngines) return "engines must be 1.." + std::to_string(kMaxEngines);
  if (c.queues_per_engine == 0 || c.queues_per_engine > kMaxQueuesPerEngine)
    return "queues_per_engine must be 1.." + std::to_string(kMaxQueuesPerEngine);
  if (c.engines * c.queues_per_engine > kMaxQueuesTotal)
    return "engines x queues_per_engine must be at most " + std::to_string(kMaxQueuesTotal) +
           " (one doorbell word each in the 4 KiB doorbell window)";
  if (!(c.engine_gbps > 0.0)) return "engine_gbps must be > 0";
  if (c.max_ring_entries == 0) return "max_ring_entries must be > 0";
  return {};
}

const params::Params<DmaConfig>& dma_parameters() {
  using C = DmaConfig;
  static const params::Params<C> list = {
      {"engines", "engines", "FACTS.md Memory and data movement: 16 per core", params::Kind::Count, 1, kMaxEngines,
       &C::engines},
      {"queues_per_engine", "queues", "FACTS.md Memory and data movement: 16 per engine", params::Kind::Count, 1,
       kMaxQueuesPerEngine, &C::queues_per_engine},
      {"engine_gbps", "GB/s", "FACTS.md 17/23/33 bytes per ns (D-DMA-BANDWIDTH)", params::Kind::Real, 1, 10000,
       &C::engine_gbps},
      {"descriptor_ns", "ns", "model choice, D-DMA-TIMING", params::Kind::TimeNs, 0, 0, &C::descriptor},
      {"row_overhead_ns", "ns", "model choice from FACTS.md 2-4 KiB per partition, D-DMA-TIMING",
       params::Kind::TimeNs, 0, 0, &C::row_overhead},
      {"max_ring_entries", "descriptors", "model choice, D-DMA-RING", params::Kind::Count, 1, params::kMaxDepth,
       &C::max_ring_entries},
  };
  return list;
}

DmaConfig dma_config(isa::Generation gen) {
  DmaConfig c;
  switch (gen) {
    case isa::Generation::CAYMAN: c.engine_gbps = 23.0; break;  // Trn2
    case isa::Generation::MARIANA:
    case isa::Generation::MARIANA_PLUS:
    case isa::Generation::MAVERICK: c.engine_gbps = 33.0; break;  // Trn3; v5 has no public figure
  }
  return c;
}

// ---- state -------------------------------------------------------------------------------------------------------

struct DmaEngines::Endpoint {
  std::string name;
  std::uint64_t base = 0, size = 0;
  unsigned socket_index = 0;
  memory::TimedTarget* timing = nullptr;
  std::uint64_t bytes_read = 0, bytes_written = 0;  // by completed copies
  bool dmi_asked = false;
  unsigned char* dmi = nullptr;  // local address 0, the whole [0, size) read/write; nullptr = b_transport
  bool contains(std::uint64_t address, std::uint64_t last) const {
    return address >= base && last >= address && last - base < size;
  }
};

struct DmaEngines::Queue {
  QueueId id;
  bool enabled = false;
  std::uint64_t ring_base = 0;
  std::uint32_t ring_entries = 0;
  std::uint32_t head = 0, tail = 0;
  bool failed = false;
  QueueError error;
  bool has_fetched = false;  // `fetched` was read from the ring (head moved past it) and waits for its semaphore
  bool waiting = false;
  bool in_flight = false;
  unsigned epoch = 0;  // counts resets: a fetch that a reset overtook is dropped
  Descriptor fetched;
  std::uint32_t fetched_index = 0;
  sc_time fetched_at;
  DmaStats stats;
  bool runnable() const { return enabled && !failed && (has_fetched || head != tail); }
};

struct DmaEngines::Engine {
  unsigned index = 0;
  std::vector<Queue> queues;
  unsigned next = 0;  // round-robin: the queue considered first on the next turn
  sc_core::sc_event work;
  DmaStats stats;
  // One row on its way (a b_transport target may wait, letting another engine run, so each engine has its own).
  std::vector<std::uint8_t> row_in, row_out;
};

// ---- construction ------------------------------------------------------------------------------------------------

DmaEngines::DmaEngines(sc_core::sc_module_name name, DmaConfig config, Semaphores& semaphores, bool move_data)
    : sc_core::sc_module(name),
      regs("regs"),
      mem("mem"),
      irq("irq"),
      config_(std::move(config)),
      semaphores_(semaphores),
      move_data_(move_data),
      face_("face", ::pevp::regs::dma::regfile_desc()),
      face_port_("face_port") {
  face_port_.bind(face_.socket);
  if (const std::string why = check_config(config_); !why.empty()) {
    // A platform construction mistake, not a software-visible error.
    SC_REPORT_ERROR("/pevp/dma/config", why.c_str());
    return;
  }
  regs.register_b_transport(this, &DmaEngines::regs_b_transport);
  regs.register_transport_dbg(this, &DmaEngines::regs_transport_dbg);
  mem.register_invalidate_direct_mem_ptr(this, &DmaEngines::invalidate_dmi);
  for (unsigned e = 0; e < config_.engines; ++e) {
    auto engine = std::make_unique<Engine>();
    engine->index = e;
    engine->queues.resize(config_.queues_per_engine);
    for (unsigned q = 0; q < config_.queues_per_engine; ++q) engine->queues[q].id = {e, q};
    engines_.push_back(std::move(engine));
    sc_core::sc_spawn_options opts;
    engine_threads_.push_back(
        sc_core::sc_spawn([this, e] { engine_thread(e); }, sc_core::sc_gen_unique_name("engine"), &opts));
  }
  attach_face();
  power_on_face_ = face_.state();
  sc_core::sc_spawn_options method;
  method.spawn_method();
  method.set_sensitivity(&irq_changed_);
  method.dont_initialize();
  sc_core::sc_spawn([this] { irq_method(); }, "irq_method", &method);
}

DmaEngines::~DmaEngines() = default;

std::string DmaEngines::map(const std::string& name, std::uint64_t base, std::uint64_t size,
                            TargetSocket& target, memory::TimedTarget& timing) {
  if (size == 0) return "endpoint " + name + ": size must be > 0";
  if (base > std::numeric_limits<std::uint64_t>::max() - (size - 1))
    return "endpoint " + name + ": [" + hex(base) + ", +" + hex(size) + ") wraps past 2^64";
  const std::uint64_t last = base + (size - 1);
  for (const auto& ep : endpoints_) {
    const std::uint64_t ep_last = ep->base + (ep->size - 1);
    if (base <= ep_last && ep->base <= last)
      return "endpoint " + name + " [" + hex(base) + ", " + hex(last) + "] overlaps " + ep->name + " [" +
             hex(ep->base) + ", " + hex(ep_last) + "]";
  }
  auto ep = std::make_unique<Endpoint>();
  ep->name = name;
  ep->base = base;
  ep->size = size;
  ep->socket_index = static_cast<unsigned>(endpoints_.size());
  ep->timing = &timing;
  mem.bind(target);
  endpoints_.push_back(std::move(ep));
  return {};
}

void DmaEngines::invalidate_dmi(int id, sc_dt::uint64, sc_dt::uint64) {
  if (id < 0 || static_cast<std::size_t>(id) >= endpoints_.size()) return;
  endpoints_[id]->dmi_asked = false;  // asked again before the next row
  endpoints_[id]->dmi = nullptr;
}

// ---- queue controls ---------------------------------------------------------------------------------------------

DmaEngines::Queue& DmaEngines::queue(QueueId q) { return engines_.at(q.engine)->queues.at(q.queue); }
const DmaEngines::Queue& DmaEngines::queue(QueueId q) const { return engines_.at(q.engine)->queues.at(q.queue); }

void DmaEngines::set_ring(QueueId id, std::uint64_t base, std::uint32_t entries) {
  Queue& q = queue(id);
  if (q.enabled) return;  // latched while enabled, like a running engine's registers
  q.ring_base = base;
  q.ring_entries = entries;
}

void DmaEngines::set_enabled(QueueId id, bool enabled) {
  Queue& q = queue(id);
  if (enabled == q.enabled) return;
  if (enabled) {
    if (q.failed) return;  // clear_error first
    DescriptorError e;
    e.field = field::kRingEntries;
    e.value = q.ring_entries;
    if (q.ring_entries == 0 || q.ring_entries > config_.max_ring_entries) {
      e.rule = Rule::RingEntries;
      e.message = "ring_entries = " + std::to_string(q.ring_entries) + ": ring_entries: must be 1.." +
                  std::to_string(config_.max_ring_entries);
      return stop_queue(q, q.head, e);
    }
    e.field = field::kRingBase;
    e.value = q.ring_base;
    const std::uint64_t bytes = std::uint64_t{q.ring_entries} * kDescriptorBytes;
    if (q.ring_base % kDescriptorBytes != 0) {
      e.rule = Rule::Misaligned;
      e.message = "ring_base = " + hex(q.ring_base) + ": misaligned: must be a multiple of " +
                  std::to_string(kDescriptorBytes);
      return stop_queue(q, q.head, e);
    }
    if (endpoint_for(q.ring_base, bytes) == nullptr) {
      e.rule = Rule::RingRange;
      e.message = "ring_base = " + hex(q.ring_base) + ": ring_range: the ring of " + std::to_string(q.ring_entries) +
                  " descriptors (" + std::to_string(bytes) + " bytes) does not lie inside one mapped endpoint";
      return stop_queue(q, q.head, e);
    }
  }
  q.enabled = enabled;
  engines_[id.engine]->work.notify(sc_core::SC_ZERO_TIME);
}

void DmaEngines::ring_doorbell(QueueId id, std::uint32_t tail) {
  Queue& q = queue(id);
  // Free-running counters: the pending count is tail - head modulo 2^32, at most one ring.
  const std::uint32_t pending = tail - q.head;
  if (pending > q.ring_entries) {
    if (q.failed) return;  // the first error's record stays
    DescriptorError e;
    e.field = field::kTail;
    e.value = tail;
    e.rule = Rule::QueueOverflow;
    e.message = "tail = " + std::to_string(tail) + ": queue_overflow: " + std::to_string(pending) +
                " descriptors past head " + std::to_string(q.head) + ", the ring holds " +
                std::to_string(q.ring_entries);
    return stop_queue(q, q.head, e);
  }
  q.tail = tail;
  engines_[id.engine]->work.notify(sc_core::SC_ZERO_TIME);
}

void DmaEngines::clear_error(QueueId id) {
  Queue& q = queue(id);
  q.failed = false;
  q.error = {};
  engines_[id.engine]->work.notify(sc_core::SC_ZERO_TIME);
}

void DmaEngines::reset_queue(QueueId id) {
  Queue& q = queue(id);
  q.enabled = false;
  q.head = q.tail = 0;
  q.failed = false;
  q.error = {};
  q.has_fetched = false;
  q.waiting = false;
  q.stats = {};
  ++q.epoch;
}

void DmaEngines::hard_reset() {
  for (auto& e : engines_) {
    for (Queue& q : e->queues) {
      const QueueId id = q.id;
      const unsigned epoch = q.epoch + 1;
      q = Queue{};
      q.id = id;
      q.epoch = epoch;
    }
    e->next = 0;
    e->stats = {};
    e->work.cancel();
  }
  for (auto& ep : endpoints_) ep->bytes_read = ep->bytes_written = 0;
  // An engine may be inside a descriptor -- fetching it, waiting for its booking horizon or for its completion
  // time. Its thread is reset (IEEE 1666 sc_process_handle::reset), as the SEQ's dispatcher is: the stack unwinds,
  // dropping the descriptor, and engine_thread() starts again, finds no queue enabled and waits for work, before
  // this call returns. No reset event threads through every wait of the descriptor's path.
  for (sc_core::sc_process_handle& h : engine_threads_) h.reset();
  irq_status_ = irq_enable_ = 0;
  face_.restore(power_on_face_);
  publish();
  update_irq();
}

QueueStatus DmaEngines::status(QueueId id) const {
  const Queue& q = queue(id);
  QueueStatus s;
  s.enabled = q.enabled;
  s.ring_base = q.ring_base;
  s.ring_entries = q.ring_entries;
  s.head = q.head;
  s.tail = q.tail;
  s.error = q.error;
  if (q.failed) s.state = QueueState::Error;
  else if (q.waiting) s.state = QueueState::WaitingSemaphore;
  else if (q.in_flight || q.runnable()) s.state = QueueState::Running;
  else s.state = QueueState::Idle;
  return s;
}

void DmaEngines::stop_queue(Queue& q, std::uint32_t index, DescriptorError e) {
  q.failed = true;
  q.waiting = false;
  q.error.index = index;
  q.error.error = std::move(e);
  irq_status_ |= kIrqError;
  update_irq();
  const std::string msg = "engine " + std::to_string(q.id.engine) + " queue " + std::to_string(q.id.queue) +
                          " descriptor " + std::to_string(index) + ": " + q.error.error.message;
  SC_REPORT_INFO_VERB("/pevp/dma/queue_error", msg.c_str(), sc_core::SC_DEBUG);
}

void DmaEngines::clear_irq_status(std::uint32_t bits) {
  irq_status_ &= ~bits;
  update_irq();
}

void DmaEngines::set_irq_enable(std::uint32_t bits) {
  irq_enable_ = bits & (kIrqCompletion | kIrqError);
  update_irq();
}

void DmaEngines::irq_method() { irq.write((irq_status_ & irq_enable_) != 0); }

const DmaStats& DmaEngines::engine_stats(unsigned engine) const { return engines_.at(engine)->stats; }
const DmaStats& DmaEngines::queue_stats(QueueId q) const { return queue(q).stats; }

std::vector<EndpointTraffic> DmaEngines::endpoint_traffic() const {
  std::vector<EndpointTraffic> out;
  for (const auto& ep : endpoints_) out.push_back({ep->name, ep->bytes_read, ep->bytes_written});
  return out;
}

bool DmaEngines::busy() const {
  for (const auto& e : engines_)
    for (const Queue& q : e->queues)
      if (q.in_flight || q.runnable() || q.waiting) return true;
  return false;
}

std::string DmaEngines::idle_violation() const {
  for (const auto& e : engines_)
    for (const Queue& q : e->queues) {
      const std::string where = "dma engine " + std::to_string(q.id.engine) + " queue " + std::to_string(q.id.queue);
      if (q.in_flight) return where + ": a descriptor is in flight";
      if (q.has_fetched) return where + ": descriptor " + std::to_string(q.fetched_index) + " waits for its semaphore";
      if (q.head != q.tail)
        return where + ": " + std::to_string(q.tail - q.head) + " descriptors pending (head " +
               std::to_string(q.head) + ", tail " + std::to_string(q.tail) + ")";
    }
  return {};
}

// ---- address resolution -----------------------------------------------------------------------------------------

DmaEngines::Endpoint* DmaEngines::endpoint_for(std::uint64_t address, std::uint64_t bytes) {
  if (bytes == 0 || address > std::numeric_limits<std::uint64_t>::max() - (bytes - 1)) return nullptr;
  for (auto& ep : endpoints_)
    if (ep->contains(address, address + (bytes - 1))) return ep.get();
  return nullptr;
}

DescriptorError DmaEngines::check_side(const Descriptor& d, bool source, Endpoint*& ep, std::uint64_t& last) {
  const std::uint64_t base = source ? d.src : d.dst;
  const std::uint64_t row_stride = source ? d.src_row_stride : d.dst_row_stride;
  const std::uint64_t plane_stride = source ? d.src_plane_stride : d.dst_plane_stride;
  const std::uint64_t row_bytes = source ? d.row_bytes : d.dst_row_bytes();
  // The last byte the pattern touches; strides are unsigned, so every byte lies in [base, last].
  std::uint64_t span = 0, part = 0;
  bool overflow = __builtin_mul_overflow(std::uint64_t{d.planes} - 1, plane_stride, &span);
  overflow |= __builtin_mul_overflow(std::uint64_t{d.rows} - 1, row_stride, &part);
  overflow |= __builtin_add_overflow(span, part, &span);
  overflow |= __builtin_add_overflow(span, row_bytes - 1, &span);
  overflow |= __builtin_add_overflow(base, span, &last);
  ep = nullptr;
  if (!overflow)
    for (auto& e : endpoints_)
      if (e->contains(base, last)) ep = e.get();
  if (ep != nullptr) return {};
  DescriptorError e;
  e.field = source ? offset::kSrc : offset::kDst;
  e.value = base;
  e.rule = Rule::AddressRange;
  e.message = std::string(source ? "src" : "dst") + " = " + hex(base) + ": address_range: the pattern's bytes " +
              hex(base) + ".." + (overflow ? std::string("(past 2^64)") : hex(last)) +
              " do not lie inside one mapped endpoint";
  return e;
}

bool DmaEngines::wait_holds(const Descriptor& d) {
  if (d.wait_mode == isa::WaitMode::NONE) return true;
  const std::uint32_t v = semaphores_.value(d.wait_sem);
  return d.wait_mode == isa::WaitMode::WAIT_GE ? v >= d.wait_value : v == d.wait_value;
}

// ---- data movement ---------------------------------------------------------------------------------------------

unsigned char* DmaEngines::dmi_pointer(Endpoint& ep) {
  if (!ep.dmi_asked) {
    ep.dmi_asked = true;
    tlm::tlm_generic_payload trans;
    trans.set_command(tlm::TLM_READ_COMMAND);
    trans.set_address(0);
    tlm::tlm_dmi dmi;
    ep.dmi = nullptr;
    // Usable only when it covers the whole endpoint for reading and writing from local address 0.
    if (mem[ep.socket_index]->get_direct_mem_ptr(trans, dmi) && dmi.is_read_write_allowed() &&
        dmi.get_start_address() == 0 && dmi.get_end_address() >= ep.size - 1)
      ep.dmi = dmi.get_dmi_ptr();
  }
  return ep.dmi;
}

namespace {

float load_as_float(const std::uint8_t* p, isa::Dtype t) {
  switch (t) {
    case isa::Dtype::FP32: {
      std::uint32_t u;
      std::memcpy(&u, p, 4);
      return num::bits_float(u);
    }
    case isa::Dtype::BFLOAT16: return num::from_bf16(static_cast<std::uint16_t>(p[0] | (p[1] << 8)));
    case isa::Dtype::FP16: return num::from_fp16(static_cast<std::uint16_t>(p[0] | (p[1] << 8)));
    case isa::Dtype::FP8_EXP5: return num::from_fp8_e5m2(p[0]);
    case isa::Dtype::FP8_EXP3: return num::from_fp8_e3m4(p[0]);
    default: return 0.0f;  // validate() admits no other dtype
  }
}

void store_float(std::uint8_t* p, isa::Dtype t, float x) {
  auto store16 = [p](std::uint16_t h) {
    p[0] = static_cast<std::uint8_t>(h);
    p[1] = static_cast<std::uint8_t>(h >> 8);
  };
  switch (t) {
    case isa::Dtype::FP32: {
      const std::uint32_t u = num::float_bits(x);
      std::memcpy(p, &u, 4);
      break;
    }
    case isa::Dtype::BFLOAT16: store16(num::to_bf16(x)); break;
    case isa::Dtype::FP16: store16(num::to_fp16(x)); break;
    case isa::Dtype::FP8_EXP5: p[0] = num::to_fp8_e5m2(x); break;
    case isa::Dtype::FP8_EXP3: p[0] = num::to_fp8_e3m4(x); break;
    default: break;
  }
}

// Converts one row; widening is exact, narrowing rounds to nearest even (docs/numerics.md).
void cast_row(const std::uint8_t* src, std::uint8_t* dst, const Descriptor& d) {
  const unsigned from = cast_elem_bytes(d.src_dtype), to = cast_elem_bytes(d.dst_dtype);
  const std::uint32_t elements = d.row_bytes / from;
  for (std::uint32_t i = 0; i < elements; ++i)
    store_float(dst + std::size_t{i} * to, d.dst_dtype, load_as_float(src + std::size_t{i} * from, d.src_dtype));
}

}  // namespace

bool DmaEngines::move_row(Engine& e, Endpoint& src, std::uint64_t src_local, Endpoint& dst, std::uint64_t dst_local,
                          const Descriptor& d) {
  const std::uint32_t out_bytes = d.dst_row_bytes();
  std::vector<std::uint8_t>& row_in = e.row_in;
  std::vector<std::uint8_t>& row_out = e.row_out;
  unsigned char* const src_dmi = dmi_pointer(src);
  unsigned char* const dst_dmi = dmi_pointer(dst);
  if (src_dmi != nullptr && dst_dmi != nullptr && !d.casts()) {
    // memmove reads the whole row before it writes, as the staged copy below does when src and dst overlap.
    std::memmove(dst_dmi + dst_local, src_dmi + src_local, d.row_bytes);
    return true;
  }
  // The source row into row_in (so a cast or an overlap of src and dst reads the bytes before the write).
  row_in.resize(d.row_bytes);
  if (src_dmi != nullptr) {
    std::memcpy(row_in.data(), src_dmi + src_local, d.row_bytes);
  } else {
    tlm::tlm_generic_payload t;
    sc_time ignored;  // the time comes from the endpoint's TimedTarget (D-DMA-TIMING)
    t.set_command(tlm::TLM_READ_COMMAND);
    t.set_address(src_local);
    t.set_data_ptr(row_in.data());
    t.set_data_length(d.row_bytes);
    t.set_streaming_width(d.row_bytes);
    t.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    mem[src.socket_index]->b_transport(t, ignored);
    if (!t.is_response_ok()) return false;
  }
  const std::uint8_t* row = row_in.data();
  if (d.casts()) {
    row_out.resize(out_bytes);
    cast_row(row_in.data(), row_out.data(), d);
    row = row_out.data();
  }
  if (dst_dmi != nullptr) {
    std::memcpy(dst_dmi + dst_local, row, out_bytes);
    return true;
  }
  tlm::tlm_generic_payload t;
  sc_time ignored;
  t.set_command(tlm::TLM_WRITE_COMMAND);
  t.set_address(dst_local);
  t.set_data_ptr(const_cast<unsigned char*>(row));
  t.set_data_length(out_bytes);
  t.set_streaming_width(out_bytes);
  t.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  mem[dst.socket_index]->b_transport(t, ignored);
  return t.is_response_ok();
}

// ---- the engines ---------------------------------------------------------------------------------------------------

void DmaEngines::engine_thread(unsigned index) {
  Engine& e = *engines_[index];
  const unsigned n = config_.queues_per_engine;
  for (;;) {
    bool served = false;
    for (unsigned k = 0; k < n && !served; ++k) {
      const unsigned qi = (e.next + k) % n;
      Queue& q = e.queues[qi];
      if (!q.runnable()) continue;
      if (!q.has_fetched) {
        // The fetch: one timed 64-byte read of the ring, even in a timing-only run.
        const std::uint32_t index_in_ring = q.head;
        const std::uint64_t address = q.ring_base + std::uint64_t{q.head % q.ring_entries} * kDescriptorBytes;
        Endpoint* ring = endpoint_for(address, kDescriptorBytes);  // checked at enable
        const sc_time begin = sc_core::sc_time_stamp();
        const unsigned epoch = q.epoch;
        const sc_time done = ring->timing->access(
            {address - ring->base, kDescriptorBytes, memory::Direction::Read, begin, index});
        q.in_flight = true;
        wait(std::max(done, begin) - begin);
        DescriptorBytes bytes{};
        bool read_ok = true;
        if (unsigned char* p = dmi_pointer(*ring)) {
          std::memcpy(bytes.data(), p + (address - ring->base), kDescriptorBytes);
        } else {
          tlm::tlm_generic_payload t;
          sc_time ignored;
          t.set_command(tlm::TLM_READ_COMMAND);
          t.set_address(address - ring->base);
          t.set_data_ptr(bytes.data());
          t.set_data_length(kDescriptorBytes);
          t.set_streaming_width(kDescriptorBytes);
          t.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
          mem[ring->socket_index]->b_transport(t, ignored);
          read_ok = t.is_response_ok();
        }
        q.in_flight = false;
        e.stats.busy += done - begin;
        q.stats.busy += done - begin;
        e.next = (qi + 1) % n;
        served = true;
        if (q.epoch != epoch) continue;  // reset while fetching: the queue is empty now
        ++q.head;  // consumed: software may reuse the slot
        Decoded dec = decode(bytes, semaphores_.count());
        if (!read_ok) {
          dec.error = {field::kRingBase, address, Rule::TransferFailed,
                       "ring read at " + hex(address) + ": transfer_failed: the endpoint refused the read"};
        }
        Endpoint* src = nullptr;
        Endpoint* dst = nullptr;
        std::uint64_t last = 0;
        if (dec.error.ok() && dec.descriptor.kind == Kind::COPY) {
          dec.error = check_side(dec.descriptor, true, src, last);
          if (dec.error.ok()) dec.error = check_side(dec.descriptor, false, dst, last);
        }
        if (!dec.error.ok()) {
          stop_queue(q, index_in_ring, dec.error);
          continue;
        }
        q.fetched = dec.descriptor;
        q.fetched_index = index_in_ring;
        q.has_fetched = true;
      }
      if (!wait_holds(q.fetched)) {
        q.waiting = true;
        continue;  // a fetch already took this turn, or the next queue gets it
      }
      q.waiting = false;
      q.has_fetched = false;
      run(e, q, q.fetched, q.fetched_index, sc_core::sc_time_stamp());
      e.next = (qi + 1) % n;
      served = true;
    }
    if (!served) wait(e.work | semaphores_.changed());
  }
}

void DmaEngines::run(Engine& e, Queue& q, const Descriptor& d, std::uint32_t index, sc_time start) {
  q.in_flight = true;
  // D-DMA-TIMING: the descriptor's fixed cost, then the rows issued at the engine's pace (a per-row overhead plus
  // the bytes at the engine's rate), each read from the source when issued and written to the destination when
  // read: the memories' latencies overlap across rows (an engine keeps reads outstanding), their bandwidth and
  // contention do not. The descriptor completes when its last row is written and the engine has issued it.
  sc_time t = start + config_.descriptor;
  sc_time issue = t;
  Endpoint* src = nullptr;
  Endpoint* dst = nullptr;
  std::uint64_t unused = 0;
  if (d.kind == Kind::COPY) {
    check_side(d, true, src, unused);  // checked at the fetch: the map does not change after elaboration
    check_side(d, false, dst, unused);
    const std::uint32_t out_bytes = d.dst_row_bytes();
    const sc_time engine_row =
        config_.row_overhead + sc_time(std::max(d.row_bytes, out_bytes) / config_.engine_gbps, SC_NS);
    for (std::uint32_t p = 0; p < d.planes; ++p)
      for (std::uint32_t r = 0; r < d.rows; ++r) {
        const std::uint64_t s = d.src - src->base + std::uint64_t{p} * d.src_plane_stride +
                                std::uint64_t{r} * d.src_row_stride;
        const std::uint64_t w = d.dst - dst->base + std::uint64_t{p} * d.dst_plane_stride +
                                std::uint64_t{r} * d.dst_row_stride;
        // Book the memories at most a horizon ahead of simulated time: a memory serves its bookings in the order
        // they come, so an engine booking a long descriptor's rows all at once would push other engines' earlier
        // rows behind its later ones. Within the horizon the order may still be off by at most the horizon.
        if (issue > sc_core::sc_time_stamp() + booking_horizon()) wait(issue - booking_horizon() - sc_core::sc_time_stamp());
        const sc_time read_done = src->timing->access({s, d.row_bytes, memory::Direction::Read, issue, e.index});
        const sc_time write_done =
            dst->timing->access({w, out_bytes, memory::Direction::Write, read_done, e.index});
        issue += engine_row;
        t = std::max({t, issue, write_done});
      }
  }
  // The engine's time is its own: every effect (data, semaphore, interrupt) lands at the completion time, so the
  // SEQ and other engines see them when they happen (the wait is the engine's quantum of one descriptor).
  wait(std::max(t, sc_core::sc_time_stamp()) - sc_core::sc_time_stamp());
  bool moved = true;
  if (d.kind == Kind::COPY && move_data_) {
    for (std::uint32_t p = 0; p < d.planes && moved; ++p)
      for (std::uint32_t r = 0; r < d.rows && moved; ++r)
        moved = move_row(e, *src,
                         d.src - src->base + std::uint64_t{p} * d.src_plane_stride +
                             std::uint64_t{r} * d.src_row_stride,
                         *dst,
                         d.dst - dst->base + std::uint64_t{p} * d.dst_plane_stride +
                             std::uint64_t{r} * d.dst_row_stride,
                         d);
  }
  q.in_flight = false;
  const std::uint64_t bytes = d.total_dst_bytes();
  if (moved && src != nullptr && dst != nullptr) {
    src->bytes_read += d.total_src_bytes();
    dst->bytes_written += bytes;
  }
  e.stats.busy += t - start;
  q.stats.busy += t - start;
  if (!moved) {
    stop_queue(q, index,
               {offset::kSrc, d.src, Rule::TransferFailed,
                "src = " + hex(d.src) + ": transfer_failed: an endpoint refused a row (the destination may hold "
                "part of the pattern)"});
    return;
  }
  if (d.update_mode != isa::UpdateMode::NONE) {
    const std::string why = semaphores_.update(d.update_sem, d.update_mode, d.update_value);
    if (!why.empty()) {
      stop_queue(q, index,
                 {offset::kUpdateValue, d.update_value, Rule::SemaphoreUpdate,
                  "update_value = " + std::to_string(d.update_value) + " on semaphore " +
                      std::to_string(d.update_sem) + ": semaphore_update: " + why + " (the data has moved)"});
      e.stats.bytes += bytes;
      q.stats.bytes += bytes;
      return;
    }
  }
  e.stats.bytes += bytes;
  q.stats.bytes += bytes;
  ++e.stats.descriptors;
  ++q.stats.descriptors;
  if (d.irq()) {
    irq_status_ |= kIrqCompletion;
    update_irq();
  }
  TransferRecord rec{e.index, q.id.queue, index, d.src, d.dst, bytes, start, t};
  if (d.kind == Kind::COPY) {
    rec.dst_row_bytes = d.dst_row_bytes();
    rec.rows = d.rows;
    rec.planes = d.planes;
    rec.dst_row_stride = d.dst_row_stride;
    rec.dst_plane_stride = d.dst_plane_stride;
  }
  for (const auto& observer : observers_) observer(rec);
}

// ---- the register face (docs/dma.md "Registers") ---------------------------------------------------------------

// Every field the face reads or writes, resolved once by name.
struct DmaEngines::FaceFields {
  explicit FaceFields(regfile::RegisterFile& r)
      : engines(r.field("dma_geometry", "engines")),
        queues(r.field("dma_geometry", "queues_per_engine")),
        busy(r.field("dma_status", "busy")),
        error(r.field("dma_status", "error")),
        irq_completion(r.field("irq_status", "completion")),
        irq_error(r.field("irq_status", "error")),
        enable_completion(r.field("irq_enable", "completion")),
        enable_error(r.field("irq_enable", "error")),
        first_error(r.field("dma_error_summary", "first_queue")),
        errors(r.field("dma_error_summary", "count")),
        queue_sel(r.field("queue_sel", "index")),
        base_lo(r.field("ring_base_lo", "addr")),
        base_hi(r.field("ring_base_hi", "addr")),
        entries(r.field("ring_entries", "entries")),
        head(r.field("head", "index")),
        tail(r.field("tail", "index")),
        enable(r.field("queue_control", "enable")),
        clear_error(r.field("queue_control", "clear_error")),
        reset(r.field("queue_control", "reset")),
        clear_completion(r.field("irq_clear", "completion")),
        clear_irq_error(r.field("irq_clear", "error")),
        state(r.field("queue_state", "state")),
        err_index(r.field("err_index", "index")),
        err_field(r.field("err_info", "field_id")),
        err_rule(r.field("err_info", "rule_id")),
        err_lo(r.field("err_value_lo", "value")),
        err_hi(r.field("err_value_hi", "value")),
        descriptors(r.counter("descriptors_cnt_lsb")),
        bytes(r.counter("bytes_cnt_lsb")),
        r_irq_enable(&r.reg("irq_enable")),
        r_queue_sel(&r.reg("queue_sel")),
        r_base_lo(&r.reg("ring_base_lo")),
        r_base_hi(&r.reg("ring_base_hi")),
        r_entries(&r.reg("ring_entries")),
        r_tail(&r.reg("tail")),
        r_control(&r.reg("queue_control")),
        r_irq_clear(&r.reg("irq_clear")) {}
  regfile::FieldRef engines, queues, busy, error, irq_completion, irq_error, enable_completion, enable_error, first_error, errors, queue_sel, base_lo,
      base_hi, entries, head, tail, enable, clear_error, reset, clear_completion, clear_irq_error, state, err_index,
      err_field, err_rule, err_lo, err_hi;
  regfile::CounterRef descriptors, bytes;
  const regfile::RegisterDesc *r_irq_enable, *r_queue_sel, *r_base_lo, *r_base_hi, *r_entries, *r_tail, *r_control,
      *r_irq_clear;
};

namespace {
bool is_field(const regfile::FieldDesc& f, const regfile::RegisterDesc& reg, const regfile::RegisterDesc* want_reg,
              const regfile::FieldRef& want) {
  return &reg == want_reg && f.lsb == want.lsb;
}
}  // namespace

void DmaEngines::attach_face() {
  regfile::RegisterFile& r = face_.regs();
  f_ = std::make_unique<FaceFields>(r);
  r.on_write([this](const regfile::RegisterDesc& reg, std::uint32_t, std::uint32_t value) {
    on_face_write(reg, value);
  });
  r.on_pulse([this](const regfile::RegisterDesc& reg, const regfile::FieldDesc& field) { on_face_pulse(reg, field); });
  publish();
}

bool DmaEngines::selected(QueueId& q) const {
  const std::uint32_t index = face_.regs().get(f_->queue_sel);
  if (index >= config_.engines * config_.queues_per_engine) return false;
  q = {index / config_.queues_per_engine, index % config_.queues_per_engine};
  return true;
}

void DmaEngines::on_face_write(const regfile::RegisterDesc& reg, std::uint32_t value) {
  const regfile::RegisterFile& r = face_.regs();
  if (&reg == f_->r_irq_enable) return set_irq_enable(value);
  QueueId q;
  if (&reg == f_->r_queue_sel || !selected(q)) return;  // publish() shows the selected queue
  if (&reg == f_->r_base_lo || &reg == f_->r_base_hi || &reg == f_->r_entries) {
    const std::uint64_t base = (std::uint64_t{r.get(f_->base_hi)} << 32) | r.get(f_->base_lo);
    set_ring(q, base, r.get(f_->entries));
  } else if (&reg == f_->r_tail) {
    ring_doorbell(q, value);
  } else if (&reg == f_->r_control) {
    set_enabled(q, r.get(f_->enable) != 0);
  }
}

void DmaEngines::on_face_pulse(const regfile::RegisterDesc& reg, const regfile::FieldDesc& field) {
  if (is_field(field, reg, f_->r_irq_clear, f_->clear_completion)) return clear_irq_status(kIrqCompletion);
  if (is_field(field, reg, f_->r_irq_clear, f_->clear_irq_error)) return clear_irq_status(kIrqError);
  QueueId q;
  if (!selected(q)) return;
  if (is_field(field, reg, f_->r_control, f_->clear_error)) {
    clear_error(q);
    // The same write may have set enable, which a stopped queue ignored (a ring refused at enable): apply it now.
    set_enabled(q, face_.regs().get(f_->enable) != 0);
  } else if (is_field(field, reg, f_->r_control, f_->reset)) reset_queue(q);
}

void DmaEngines::publish() {
  regfile::RegisterFile& r = face_.regs();
  r.set(f_->engines, config_.engines);
  r.set(f_->queues, config_.queues_per_engine);
  r.set(f_->irq_completion, (irq_status_ & kIrqCompletion) ? 1 : 0);
  r.set(f_->irq_error, (irq_status_ & kIrqError) ? 1 : 0);
  r.set(f_->enable_completion, (irq_enable_ & kIrqCompletion) ? 1 : 0);
  r.set(f_->enable_error, (irq_enable_ & kIrqError) ? 1 : 0);
  unsigned errors = 0, first = 0xFFFF;
  for (const auto& e : engines_)
    for (const Queue& q : e->queues)
      if (q.failed) {
        first = std::min(first, q.id.engine * config_.queues_per_engine + q.id.queue);
        ++errors;
      }
  r.set(f_->busy, busy() ? 1 : 0);
  r.set(f_->error, errors != 0 ? 1 : 0);
  r.set(f_->first_error, first);
  r.set(f_->errors, errors);
  QueueId id;
  if (!selected(id)) {
    for (const regfile::FieldRef* f : {&f_->base_lo, &f_->base_hi, &f_->entries, &f_->head, &f_->tail, &f_->enable,
                                       &f_->state, &f_->err_index, &f_->err_field, &f_->err_rule, &f_->err_lo,
                                       &f_->err_hi})
      r.set(*f, 0);
    r.write_counter(f_->descriptors, 0);
    r.write_counter(f_->bytes, 0);
    return;
  }
  const QueueStatus s = status(id);
  r.set(f_->base_lo, static_cast<std::uint32_t>(s.ring_base));
  r.set(f_->base_hi, static_cast<std::uint32_t>(s.ring_base >> 32));
  r.set(f_->entries, s.ring_entries);
  r.set(f_->head, s.head);
  r.set(f_->tail, s.tail);
  r.set(f_->enable, s.enabled ? 1 : 0);
  r.set(f_->state, static_cast<std::uint32_t>(s.state));
  const bool failed = s.state == QueueState::Error;
  r.set(f_->err_index, failed ? s.error.index : 0);
  r.set(f_->err_field, failed ? s.error.error.field : 0);
  r.set(f_->err_rule, static_cast<std::uint32_t>(s.error.error.rule));
  r.set(f_->err_lo, static_cast<std::uint32_t>(s.error.error.value));
  r.set(f_->err_hi, static_cast<std::uint32_t>(s.error.error.value >> 32));
  const DmaStats& st = queue_stats(id);
  r.write_counter(f_->descriptors, st.descriptors & regfile::kCounterMask48);
  r.write_counter(f_->bytes, st.bytes & regfile::kCounterMask48);
}

void DmaEngines::regs_b_transport(tlm::tlm_generic_payload& trans, sc_time& delay) {
  // A write acts on the engines at the initiator's local time: consume its annotated delay first, so a doorbell
  // rung late in a quantum does not start a queue early (reads need no sync: they change nothing).
  if (trans.get_command() == tlm::TLM_WRITE_COMMAND && delay != sc_core::SC_ZERO_TIME) {
    wait(delay);
    delay = sc_core::SC_ZERO_TIME;
  }
  if (trans.get_address() >= kDoorbellOffset) return doorbell_b_transport(trans, delay);
  publish();  // a read sees the model's state at this access
  face_port_->b_transport(trans, delay);
  publish();  // a write's effect (a new queue_sel, a refused tail) is visible to the next access
}

void DmaEngines::doorbell_b_transport(tlm::tlm_generic_payload& trans, sc_time& delay) {
  trans.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  delay += face_.config().access_time;
  const tlm::tlm_command cmd = trans.get_command();
  const sc_dt::uint64 addr = trans.get_address();
  const std::uint64_t queues = std::uint64_t{config_.engines} * config_.queues_per_engine;
  if (addr % 4 != 0 || addr >= kDoorbellOffset + 4 * queues) {
    trans.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return;
  }
  if (cmd == tlm::TLM_IGNORE_COMMAND) {
    trans.set_response_status(tlm::TLM_OK_RESPONSE);
    return;
  }
  if (trans.get_data_length() != 4 || trans.get_streaming_width() < 4 || trans.get_data_ptr() == nullptr) {
    trans.set_response_status(tlm::TLM_BURST_ERROR_RESPONSE);
    return;
  }
  if (trans.get_byte_enable_ptr() != nullptr) {
    // A doorbell is one whole word: a partial tail would ring the queue with a torn value.
    trans.set_response_status(tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE);
    return;
  }
  const auto index = static_cast<unsigned>((addr - kDoorbellOffset) / 4);
  const QueueId q{index / config_.queues_per_engine, index % config_.queues_per_engine};
  unsigned char* data = trans.get_data_ptr();
  if (cmd == tlm::TLM_READ_COMMAND) {
    const std::uint32_t tail = queue(q).tail;
    for (int i = 0; i < 4; ++i) data[i] = static_cast<unsigned char>(tail >> (8 * i));
  } else {
    std::uint32_t tail = 0;
    for (int i = 0; i < 4; ++i) tail |= std::uint32_t{data[i]} << (8 * i);
    ring_doorbell(q, tail);
  }
  trans.set_response_status(tlm::TLM_OK_RESPONSE);
}

unsigned int DmaEngines::regs_transport_dbg(tlm::tlm_generic_payload& trans) {
  if (trans.get_address() >= kDoorbellOffset) return 0;  // a doorbell has a side effect; debug reads the tail register
  publish();
  return face_port_->transport_dbg(trans);
}

}  // namespace pevp::dma
