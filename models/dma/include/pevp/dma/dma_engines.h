// The DMA engines of one core (FACTS.md "Memory and data movement": 16 engines, 16 queues each; the model's own
// design otherwise, docs/dma.md). Each queue is a ring of 64-byte descriptors (descriptor.h) in memory that software
// fills and rings with a doorbell; a queue runs its descriptors in order, and each engine -- one SC_THREAD -- serves
// its queues round-robin, one descriptor per turn. A descriptor is fetched from its ring as a timed read, waits for
// its EVENTS semaphore, moves its pattern through the endpoints' DMI pointers (b_transport where a target refuses
// DMI; nothing in a timing-only run), takes the time of D-DMA-TIMING, and at its completion time updates its
// semaphore and optionally raises the interrupt. A bad descriptor stops only its queue, with an error record.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/multi_passthrough_initiator_socket.h>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "pevp/dma/descriptor.h"
#include "pevp/dma/semaphores.h"
#include "pevp/isa/generation.h"
#include "pevp/memory/timed_target.h"
#include "pevp/params/param.h"
#include "pevp/regfile/regfile_target.h"

namespace pevp::dma {

struct DmaConfig {
  unsigned engines = 16;            // FACTS.md: 16 DMA engines per core
  unsigned queues_per_engine = 16;  // FACTS.md: 16 queues per engine
  // Bytes per ns one engine streams (= GB/s). dma_config() gives the generation's figure (D-DMA-BANDWIDTH).
  double engine_gbps = 23.0;
  // Fixed cost of one descriptor (FACTS.md: about 600 ns per DMA instruction on Trn2, D-DMA-TIMING).
  sc_core::sc_time descriptor = sc_core::sc_time(600, sc_core::SC_NS);
  // Fixed cost per row, which makes small rows inefficient: 16 ns puts a 2 KiB row at 85% and a 4 KiB row at 92% of
  // the engine's rate at 23 GB/s (FACTS.md: about 2-4 KiB per partition for full efficiency; D-DMA-TIMING).
  sc_core::sc_time row_overhead = sc_core::sc_time(16, sc_core::SC_NS);
  unsigned max_ring_entries = 65536;  // the largest ring a queue accepts
};

// An empty string when the config is usable, else why not.
std::string check_config(const DmaConfig& c);
// The configuration keys (section "dma").
const params::Params<DmaConfig>& dma_parameters();
// The defaults with the generation's per-engine bandwidth (D-DMA-BANDWIDTH).
DmaConfig dma_config(isa::Generation gen);

enum class QueueState : std::uint8_t { Idle = 0, Running = 1, WaitingSemaphore = 2, Error = 3 };

// The record of the error that stopped a queue (docs/dma.md "Errors").
struct QueueError {
  std::uint32_t index = 0;  // the descriptor (ring counter value) or, for a doorbell, the head at the time
  DescriptorError error;
};

struct QueueStatus {
  QueueState state = QueueState::Idle;
  bool enabled = false;
  std::uint64_t ring_base = 0;
  std::uint32_t ring_entries = 0;
  std::uint32_t head = 0;  // descriptors consumed (free-running; slot = head % entries)
  std::uint32_t tail = 0;  // descriptors written by software (free-running)
  QueueError error;        // error.error.ok() unless state == Error
};

// Per engine or per queue.
struct DmaStats {
  sc_core::sc_time busy;        // fetch + descriptor + data time
  std::uint64_t bytes = 0;      // bytes written to destinations
  std::uint64_t descriptors = 0;  // completed
};

// The bytes the engines' completed copies read from and wrote to one endpoint (the energy model's SBUF, PSUM and
// device-memory traffic, docs/energy.md).
struct EndpointTraffic {
  std::string name;  // as mapped: "sbuf", "psum", "hbm", ...
  std::uint64_t bytes_read = 0, bytes_written = 0;
};

// One completed descriptor, for the Perfetto tracks.
struct TransferRecord {
  unsigned engine = 0, queue = 0;
  std::uint32_t index = 0;
  std::uint64_t src = 0, dst = 0, bytes = 0;  // bytes written
  sc_core::sc_time start, end;                // after the fetch and the wait; at the completion
  // Where it wrote: `planes` x `rows` rows of `dst_row_bytes` from dst, rows and planes these strides apart.
  std::uint32_t dst_row_bytes = 0, rows = 0, planes = 0;
  std::uint64_t dst_row_stride = 0, dst_plane_stride = 0;
};

// Any 32-bit base-protocol target socket (a simple_target_socket_optional included, whose binding policy makes it
// a different tlm_target_socket type).
using TargetSocket = tlm::tlm_base_target_socket_b<32>;

struct QueueId {
  unsigned engine = 0, queue = 0;
};

class DmaEngines : public sc_core::sc_module {
 public:
  // The register face (docs/dma.md "Registers"): the dma.json registers at [0, 0x1000), the doorbell window of one
  // 32-bit word per queue (engine x queues_per_engine + queue) at kDoorbellOffset.
  static constexpr std::uint32_t kDoorbellOffset = 0x1000;
  static constexpr std::uint32_t kRegsWindowBytes = 0x2000;
  tlm_utils::simple_target_socket_optional<DmaEngines> regs;
  // One binding per mapped endpoint, in map() order.
  tlm_utils::multi_passthrough_initiator_socket<DmaEngines> mem;
  sc_core::sc_signal<bool> irq;

  // `move_data = false`: a timing-only run; descriptors are still read from their rings, operands are not touched.
  DmaEngines(sc_core::sc_module_name name, DmaConfig config, Semaphores& semaphores, bool move_data = true);
  ~DmaEngines() override;
  DmaEngines(const DmaEngines&) = delete;
  DmaEngines& operator=(const DmaEngines&) = delete;

  const DmaConfig& config() const { return config_; }

  // Binds an endpoint before elaboration ends: [base, base + size) of the DMA address space is `target`'s local
  // [0, size), timed by `timing`. "" or why not (an overlap with an endpoint already mapped, a zero size).
  std::string map(const std::string& name, std::uint64_t base, std::uint64_t size,
                  TargetSocket& target, memory::TimedTarget& timing);

  // ---- the queue controls (the register face calls these; so can a test). `q` must be valid(): the face checks
  // queue_sel and the doorbell address; an invalid id throws std::out_of_range. ----
  // Programs a disabled queue's ring (ignored while it is enabled: the ring is latched at enable).
  void set_ring(QueueId q, std::uint64_t base, std::uint32_t entries);
  // Enables (checks the ring: an error record if it does not fit one endpoint) or disables the queue. A disabled
  // queue finishes the descriptor in flight and starts no other.
  void set_enabled(QueueId q, bool enabled);
  // The doorbell: software wrote descriptors up to (not including) `tail`. Moving it more than ring_entries past
  // head stops the queue with a queue_overflow record and leaves the tail where it was.
  void ring_doorbell(QueueId q, std::uint32_t tail);
  // Clears the error record; the queue resumes with the descriptor after the bad one.
  void clear_error(QueueId q);
  // Disables the queue and zeroes head, tail, the error record and the counters. A descriptor being fetched is
  // dropped; one already running completes (data, semaphore, observer) and its counts land after the reset.
  void reset_queue(QueueId q);
  QueueStatus status(QueueId q) const;
  bool valid(QueueId q) const { return q.engine < config_.engines && q.queue < config_.queues_per_engine; }

  // ---- interrupt: irq = any(irq_status & irq_enable) ----
  static constexpr std::uint32_t kIrqCompletion = 1u << 0;
  static constexpr std::uint32_t kIrqError = 1u << 1;
  std::uint32_t irq_status() const { return irq_status_; }
  void clear_irq_status(std::uint32_t bits);  // write 1 to clear
  void set_irq_enable(std::uint32_t bits);
  std::uint32_t irq_enable() const { return irq_enable_; }

  // ---- statistics and observers ----
  const DmaStats& engine_stats(unsigned engine) const;
  const DmaStats& queue_stats(QueueId q) const;
  std::vector<EndpointTraffic> endpoint_traffic() const;  // in the order the endpoints were mapped
  void on_transfer(std::function<void(const TransferRecord&)> observer) { observers_.push_back(std::move(observer)); }
  // "" when every queue is idle with nothing pending, else which queue is not (a checkpoint refuses a busy DMA).
  std::string idle_violation() const;
  bool busy() const;

  // ---- hard reset (pevp/platform/reset.h) ----
  // Returns the engines to their state at construction at the current simulated time, without waiting for
  // anything: every queue disabled with its ring, head, tail, error record and counters zero, a descriptor being
  // fetched, waiting for its semaphore or moving data dropped (a row already read or written stays so; its
  // semaphore update, interrupt and observers never happen), the interrupt causes and enables clear, the register
  // face at its reset values, the statistics and traffic counts zero. Takes no simulated time; needs the
  // simulation running. The memories' channel bookings already made are theirs and stay (D-RESET-MEMORY).
  void hard_reset();

 private:
  struct Endpoint;
  struct Queue;
  struct Engine;

  void engine_thread(unsigned engine);
  void irq_method();
  void invalidate_dmi(int id, sc_dt::uint64 start, sc_dt::uint64 end);
  void update_irq() { irq_changed_.notify(sc_core::SC_ZERO_TIME); }
  Queue& queue(QueueId q);
  const Queue& queue(QueueId q) const;
  void stop_queue(Queue& q, std::uint32_t index, DescriptorError e);
  // The endpoint that holds [address, address + bytes), or nullptr.
  Endpoint* endpoint_for(std::uint64_t address, std::uint64_t bytes);
  // Why the pattern of one side does not fit one endpoint, or "".
  DescriptorError check_side(const Descriptor& d, bool source, Endpoint*& ep, std::uint64_t& last);
  bool wait_holds(const Descriptor& d);
  // Runs one descriptor of queue q from the current time; returns after its completion.
  void run(Engine& e, Queue& q, const Descriptor& d, std::uint32_t index, sc_core::sc_time start);
  bool move_row(Engine& e, Endpoint& src, std::uint64_t src_local, Endpoint& dst, std::uint64_t dst_local,
                const Descriptor& d);
  unsigned char* dmi_pointer(Endpoint& ep);

  // The register face: registers forwarded to face_ (the regfile engine), doorbells decoded here.
  struct FaceFields;
  void regs_b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  unsigned int regs_transport_dbg(tlm::tlm_generic_payload& trans);
  void doorbell_b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  void attach_face();
  // Copies the model's state into the face's registers (the global ones and the selected queue's).
  void publish();
  bool selected(QueueId& q) const;
  void on_face_write(const regfile::RegisterDesc& reg, std::uint32_t value);
  void on_face_pulse(const regfile::RegisterDesc& reg, const regfile::FieldDesc& field);

  DmaConfig config_;
  Semaphores& semaphores_;
  bool move_data_;
  std::vector<std::unique_ptr<Endpoint>> endpoints_;
  std::vector<std::unique_ptr<Engine>> engines_;
  std::vector<sc_core::sc_process_handle> engine_threads_;  // one per engine; hard_reset() restarts them
  regfile::RegFileTarget::State power_on_face_;               // the register face as constructed
  std::uint32_t irq_status_ = 0, irq_enable_ = 0;
  regfile::RegFileTarget face_;
  tlm_utils::simple_initiator_socket<DmaEngines> face_port_;
  std::unique_ptr<FaceFields> f_;
  sc_core::sc_event irq_changed_;
  std::vector<std::function<void(const TransferRecord&)>> observers_;
};

}  // namespace pevp::dma
