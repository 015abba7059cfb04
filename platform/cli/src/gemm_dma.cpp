// The GEMM's DMA data path (docs/memory-system.md "The GEMM through DMA"): the driver program that queues each step's
// descriptors (host::DmaGemm) into rings in device memory, rings the doorbells, submits the step's program and goes
// on to the next step without waiting -- the semaphores order the loads, the compute and the evictions -- and at the
// end waits for the last eviction and reads C from device memory.
#include "gemm_dma.h"

#include "pevp/platform/interrupt.h"

#include <cstring>
#include <map>
#include <stdexcept>
#include <string>

#include "pevp/dma/address_space.h"
#include "pevp/host/dma_plan.h"
#include "pevp/pe_array/compute.h"

namespace pevp::platform {

namespace {

// A queue's ring: 256 descriptors (16 KiB) -- deep enough that the runner stays a few steps ahead of the engines.
constexpr std::uint32_t kRingEntries = 256;
constexpr std::uint64_t kRingBytes = std::uint64_t{kRingEntries} * dma::kDescriptorBytes;
// How far the runner may run ahead of the SEQ in instructions held unwritten by the driver.
constexpr std::size_t kMaxUnsubmitted = 1u << 14;

// How often the runner looks again at a full ring, an unwritten backlog or the end of the run, in simulated time: a
// driver's polling interval (it costs host time per poll, not engine time).
sc_core::sc_time poll_interval() { return sc_core::sc_time(2, sc_core::SC_US); }

struct Ring {
  dma::QueueId id;
  std::uint64_t base = 0;  // DMA address
  std::uint32_t tail = 0;  // free-running, as the doorbell takes it
  bool dirty = false;      // descriptors written since the last doorbell
};

class DmaRunner {
 public:
  DmaRunner(Driver& d, Platform& p, const host::GemmPlan& header, bool data)
      : d_(d), p_(p), data_(data),
        queues_{p.dma.config().engines, p.dma.config().queues_per_engine},
        lowering_(header, dma::kHbmBase + rings_bytes(queues_), queues_) {
    if (rings_bytes(queues_) > p_.hbm.size())
      throw std::runtime_error("device memory (hbm.bytes = " + std::to_string(p_.hbm.size()) +
                               ") cannot hold the DMA rings: " + std::to_string(rings_bytes(queues_)) + " bytes (" +
                               std::to_string(queues_.engines * queues_.queues_per_engine) + " queues of " +
                               std::to_string(kRingEntries) + " descriptors; available (hbm.bytes))");
    if (data_) {
      const std::uint64_t offset = rings_bytes(queues_);
      const unsigned threads = p_.vp_config().host_threads;
      lowering_.set_hbm_image(p_.hbm.data() + offset, p_.hbm.size() - offset,
                              threads != 0 ? threads : pe::available_host_threads(),
                              [this, offset](std::uint64_t at, std::uint64_t bytes) {
                                p_.hbm.advise_dense(offset + at, bytes);
                              });
    }
    const host::DmaSemaphores& s = lowering_.semaphores();
    for (const unsigned i : s.copies) d_.set_semaphore(i, 0);
    for (const unsigned i : {s.ready[0], s.ready[1], s.done[0], s.done[1]}) d_.set_semaphore(i, 0);
  }

  // Queues one step; false (with `failure` set) when the DMA or the SEQ stopped on an error.
  bool step(const host::Step& step, const host::EncodedOperand* a, const host::EncodedOperand* b,
            std::string& failure) {
    const host::DmaStep lowered = lowering_.lower(step, data_ ? a : nullptr, data_ ? b : nullptr);
    for (const host::QueuedDescriptor& q : lowered.descriptors)
      if (!enqueue(q, failure)) return false;
    ring_doorbells();
    while (d_.unsubmitted() > kMaxUnsubmitted) {
      if (!healthy(failure)) return false;
      sc_core::wait(poll_interval());
    }
    d_.submit(lowered.program);
    load_bytes_ += lowered.load_bytes;
    eviction_bytes_ += lowered.eviction_bytes;
    return healthy(failure);
  }

  // Waits until every copy has completed and the SEQ is idle; false with `failure` when something stopped or
  // nothing moved for `window` of simulated time.
  bool finish(sc_core::sc_time window, std::string& failure) {
    std::uint64_t seen = copies_done();
    sc_core::sc_time last_progress = sc_core::sc_time_stamp();
    while (!all_copies_done()) {
      if (!healthy(failure)) return false;
      const std::uint64_t now = copies_done();
      if (now != seen) {
        seen = now;
        last_progress = sc_core::sc_time_stamp();
      } else if (sc_core::sc_time_stamp() - last_progress > window) {
        failure = "the DMA data path made no progress for " + window.to_string() + ": " + std::to_string(now) +
                  " of " + std::to_string(lowering_.copies()) + " copies done; " + describe();
        return false;
      }
      sc_core::wait(poll_interval());
    }
    return healthy(failure);
  }

  std::uint64_t copies_done() {
    std::uint64_t n = 0;
    for (const unsigned i : lowering_.semaphores().copies) n += d_.semaphore(i);
    return n;
  }
  bool all_copies_done() {
    const host::DmaSemaphores& s = lowering_.semaphores();
    for (unsigned c = 0; c < host::DmaSemaphores::kCopyCounters; ++c)
      if (d_.semaphore(s.copies[c]) < lowering_.copies(c)) return false;
    return true;
  }

  // The synchronisation's state, for a message about a run that stopped moving: the semaphores and every queue.
  std::string describe() {
    const host::DmaSemaphores& s = lowering_.semaphores();
    std::string out = "semaphores copies " + std::to_string(d_.semaphore(s.copies[0])) + "/" +
                      std::to_string(d_.semaphore(s.copies[1])) + "/" + std::to_string(d_.semaphore(s.copies[2])) +
                      "/" + std::to_string(d_.semaphore(s.copies[3])) + ", ready " +
                      std::to_string(d_.semaphore(s.ready[0])) + "/" + std::to_string(d_.semaphore(s.ready[1])) +
                      ", done " + std::to_string(d_.semaphore(s.done[0])) + "/" + std::to_string(d_.semaphore(s.done[1])) +
                      "; SEQ retired " + std::to_string(p_.seq.retired()) + " of " + std::to_string(p_.seq.submitted());
    static const char* const kState[] = {"idle", "running", "waiting on its semaphore", "stopped"};
    for (const auto& [key, r] : rings_) {
      const dma::QueueStatus st = p_.dma.status(r.id);
      if (st.head == r.tail) continue;
      out += "; queue " + std::to_string(r.id.engine) + "." + std::to_string(r.id.queue) + " " +
             kState[static_cast<unsigned>(st.state)] + " at " + std::to_string(st.head) + " of " + std::to_string(r.tail);
    }
    return out;
  }

  std::uint64_t c_address() const { return lowering_.c_address(); }
  std::uint64_t load_bytes() const { return load_bytes_; }
  std::uint64_t eviction_bytes() const { return eviction_bytes_; }

 private:
  static std::uint64_t rings_bytes(const host::DmaQueueUse& q) {
    return std::uint64_t{q.engines} * q.queues_per_engine * kRingBytes;
  }

  Ring& ring(unsigned engine, unsigned queue) {
    const unsigned key = engine * queues_.queues_per_engine + queue;
    auto it = rings_.find(key);
    if (it != rings_.end()) return it->second;
    Ring r;
    r.id = dma::QueueId{engine, queue};
    r.base = dma::kHbmBase + std::uint64_t{key} * kRingBytes;
    p_.dma.reset_queue(r.id);
    p_.dma.set_ring(r.id, r.base, kRingEntries);
    p_.dma.set_enabled(r.id, true);
    return rings_.emplace(key, r).first->second;
  }

  bool enqueue(const host::QueuedDescriptor& q, std::string& failure) {
    Ring& r = ring(q.engine, q.queue);
    while (r.tail - p_.dma.status(r.id).head >= kRingEntries) {  // full: let the engine take some
      ring_doorbells();
      if (!healthy(failure)) return false;
      sc_core::wait(poll_interval());
    }
    const dma::DescriptorBytes bytes = dma::encode(q.descriptor);
    const std::uint64_t slot = r.base - dma::kHbmBase + std::uint64_t{r.tail % kRingEntries} * dma::kDescriptorBytes;
    // The runtime places descriptors in device memory as a compiled program's are (D-GEMM-DMA-RINGS): a store
    // into the memory's bytes, not a timed bus transfer.
    std::memcpy(p_.hbm.data() + slot, bytes.data(), bytes.size());
    ++r.tail;
    r.dirty = true;
    return true;
  }

  void ring_doorbells() {
    for (auto& [key, r] : rings_)
      if (r.dirty) {
        p_.dma.ring_doorbell(r.id, r.tail);
        r.dirty = false;
      }
  }

  // False with `failure` naming the queue and its error record, or the SEQ's error.
  bool healthy(std::string& failure) {
    for (const auto& [key, r] : rings_) {
      const dma::QueueStatus s = p_.dma.status(r.id);
      if (s.state == dma::QueueState::Error) {
        failure = "DMA engine " + std::to_string(r.id.engine) + " queue " + std::to_string(r.id.queue) +
                  " stopped at descriptor " + std::to_string(s.error.index) + ": " + s.error.error.message;
        return false;
      }
    }
    if (p_.seq.error()) {
      failure = "the SEQ stopped on an error";
      return false;
    }
    return true;
  }

  Driver& d_;
  Platform& p_;
  bool data_;
  host::DmaQueueUse queues_;
  host::DmaGemm lowering_;
  std::map<unsigned, Ring> rings_;
  std::uint64_t load_bytes_ = 0, eviction_bytes_ = 0;
};

}  // namespace

DmaPathResult run_dma_steps(Driver& d, Platform& p, const host::GemmPlan& header, const StepWalk& walk,
                            const host::EncodedOperand* a, const host::EncodedOperand* b, host::Matrix* c,
                            Progress* progress, sc_core::sc_time window) {
  DmaPathResult out;
  const bool data = c != nullptr;
  DmaRunner runner(d, p, header, data);
  std::size_t s = 0;
  walk([&](const host::Step& step) {
    // A safe point of the driver program (interrupt.h): in a functional run simulated time may not move at all.
    if (const int signal = interrupt_signal()) throw Interrupted(signal, sc_core::sc_time_stamp());
    if (!runner.step(step, a, b, out.failure)) {
      out.failed_step = s;
      return false;
    }
    ++s;
    if (progress) progress->advance(step.program.size());
    return true;
  });
  if (out.failure.empty() && !runner.finish(window, out.failure)) out.failed_step = s;
  if (out.failure.empty()) {
    const Completion done = d.wait_idle(window);
    if (done.error || done.timed_out) out.failure = done.error ? "the SEQ stopped on an error" : "the SEQ did not finish";
  }
  out.load_bytes = runner.load_bytes();
  out.eviction_bytes = runner.eviction_bytes();
  if (out.failure.empty() && data)
    std::memcpy(c->data.data(), p.hbm.data() + (runner.c_address() - dma::kHbmBase), c->data.size() * sizeof(float));
  return out;
}

}  // namespace pevp::platform
