// The arr_seq sequencer's timing, computed analytically (plain C++, no SystemC).
//
// Each micro-op is scheduled once, when the SEQ pushes it, from the state the
// earlier micro-ops left: when its IFIFO slot frees, when the IFIFO head may
// issue (in order), when its tile's weight-load port or stream is free, when
// the conflicts the dependency check sees have completed, the P2F response
// FIFO's back-pressure, the launch-stagger wake-up, the XBUS throttle, and the
// inter-instruction delay between responses. Nothing waits in simulated time
// here: the SystemC side (ArrSeq, Seq) only synchronises when software could
// observe the difference -- the loosely-timed, temporally decoupled style of
// TLM-2.0. docs/timing.md gives every rule.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "pevp/arr_seq/cost_model.h"
#include "pevp/pe_array/array_model.h"
#include "pevp/regfile/arr_seq_csrs.h"

namespace pevp::arrseq {

using Cycle = std::uint64_t;

// Why a micro-op started, or responded, later than it could have.
enum class Stall : unsigned {
  IfifoFull,        // the SEQ waited for an IFIFO slot
  Dependency,       // a conflicting micro-op (tile overlap, PSUM bank, weights not loaded yet)
  Serialised,       // queue_cfg.disable_dependency_check: waited for everything in flight
  Throttle,         // an XBUS throttle stretched the micro-op
  P2fFull,          // the P2F response FIFO at its almost-full threshold
  InterInstrDelay,  // arr_cluster_cfg.en_inter_instr_dly between responses
  StaggerWake,      // a row group woke after idling past its array_stagger limit
  SbufBandwidth,    // the SBUF read of the micro-op's operand outlasted its compute (occupancy beyond the II)
  ShortStream,      // a Matmul's II floor (MM_INIT_LATENCY) exceeded its moving data's cycles
};
constexpr unsigned kStallKinds = 9;
const char* name(Stall s);  // "ififo_full", "dependency", ...

// The CSR state timing depends on, as the sequencer sees it for one micro-op.
struct TimingCsrs {
  regfile::QueueCfg queue;
  regfile::ClusterCfg cluster;
  std::uint32_t throttled = 0;  // XBUS ports with the throttle on (~disable_throttle & 0x1FF)
  bool counters_enabled = true;
};

// One scheduled micro-op; times in cycles from the start of simulation.
struct Slot {
  OpShape shape;
  OpCost cost;
  Cycle ready = 0;     // the SEQ had it ready
  Cycle push = 0;      // it entered the IFIFO
  Cycle start = 0;     // it left the IFIFO and started (weight load / stream / register write)
  Cycle end = 0;       // its resource is free again (start + occupancy)
  Cycle complete = 0;  // its last effect: the weights loaded, the last PSUM column committed
  Cycle done = 0;      // the array produced its response (matmul_done_last picks first or last column)
  Cycle response = 0;  // the SEQ saw the response (in order, after the P2F FIFO)
  std::array<Cycle, kStallKinds> stalls{};
};

// Cycles a row group spent doing something, credited as intervals are
// scheduled and counted only once simulated time has passed them, so a
// counter read mid-run shows what happened up to then.
class ActivityCounter {
 public:
  // Intervals in roughly increasing order; overlaps count once. Inline, and
  // the newest interval is kept out of the queue: a stream's back-to-back
  // intervals extend it, the common case, without touching the queue.
  void add(Cycle start, Cycle end) {
    if (start < counted_until_) start = counted_until_;  // what is already counted stays counted once
    if (end <= start) return;
    if (open_ && start <= open_end_) {
      if (start < open_start_) open_start_ = start;
      if (end > open_end_) open_end_ = end;
      return;
    }
    if (open_) closed_.emplace_back(open_start_, open_end_);
    open_ = true;
    open_start_ = start;
    open_end_ = end;
  }
  void settle(Cycle now);            // count everything before `now`
  std::uint64_t counted() const { return counted_; }
  // What settle(t) would make counted(), without settling (t at or after the last settle).
  std::uint64_t counted_at(Cycle t) const;
  void reset(Cycle now);  // forget everything before `now`; intervals after it still count

  // The counter as plain data, for a VP checkpoint (docs/checkpoint.md).
  struct State {
    std::vector<std::pair<Cycle, Cycle>> closed;
    bool open = false;
    Cycle open_start = 0, open_end = 0, counted_until = 0;
    std::uint64_t counted = 0;
  };
  State state() const {
    return {{closed_.begin(), closed_.end()}, open_, open_start_, open_end_, counted_until_, counted_};
  }
  void restore(const State& s) {
    closed_.assign(s.closed.begin(), s.closed.end());
    open_ = s.open;
    open_start_ = s.open_start;
    open_end_ = s.open_end;
    counted_until_ = s.counted_until;
    counted_ = s.counted;
  }

 private:
  // Not yet counted, in order: closed_, then the open (newest) interval.
  std::deque<std::pair<Cycle, Cycle>> closed_;
  bool open_ = false;
  Cycle open_start_ = 0, open_end_ = 0;
  Cycle counted_until_ = 0;
  std::uint64_t counted_ = 0;
};

struct RowGroupCounters {
  ActivityCounter matmul, weight_load, busy;  // busy = matmul or weight load
  Cycle origin = 0;                           // idle counts from here (the last cntr_rst)
  std::uint64_t idle(Cycle now) const { return now > origin + busy.counted() ? now - origin - busy.counted() : 0; }
};

// Where the array's PE-cycles went (docs/timing.md "Array cycle accounting"): every streaming Matmul holds its
// tile's rows x cols PEs for its occupancy; of the active k x m of them, `useful` is what the moving data needs at
// the full rate of the micro-op's dtype and mode (n x fp32_factor x passes cycles each), and the rest of the
// occupancy is lost to the II floor, the SBUF read or a throttle; the inactive PEs of the tile are `mapping`. A
// transposing Matmul moves data (no MACs): all of its tile-cycles are `transpose`. Sums in PE-cycles.
struct ArrayAccounting {
  double useful = 0;            // full-rate work: what the MACs of the run cost at their dtype's peak
  double short_stream = 0;      // the II floor over the data cycles (N x c below MM_INIT_LATENCY)
  double sbuf_bandwidth = 0;    // the SBUF read over the II
  double throttle = 0;          // a throttled XBUS over the unthrottled occupancy
  double mapping = 0;           // PEs of a streaming tile outside its active k x m
  double transpose = 0;         // tile-cycles of transposing Matmuls
  double streaming() const { return useful + short_stream + sbuf_bandwidth + throttle + mapping + transpose; }
};

struct TimelineStats {
  std::array<std::uint64_t, 3> micro_ops{};     // by pe::MicroOpKind
  std::array<std::uint64_t, 3> busy_cycles{};   // occupancy by kind
  std::uint64_t macs = 0;
  // The energy model's counts (docs/energy.md): the MACs by kind, the array's SBUF reads and PSUM traffic.
  std::array<std::uint64_t, energy::kMacKinds> macs_by_kind{};
  std::uint64_t sbuf_read_bytes = 0, psum_bytes = 0;
  ArrayAccounting pe_cycles;                    // where the streaming tiles' PE-cycles went
  std::array<std::uint64_t, kStallKinds> stall_cycles{};
  std::array<std::uint64_t, kStallKinds> stalled_ops{};
  bool any = false;
  Cycle first_start = 0, last_complete = 0;  // last_complete: the latest completion or response
  // Cycles from the first micro-op's start to the last one's completion, summed
  // over the periods the engine had work: a gap in which it had drained and
  // the host was loading or reading back is not counted.
  Cycle busy_span = 0;
};

// The times a restored state is checked against, in engine cycles: the
// checkpoint's simulated time and the latest cycle the VP supports
// (docs/checkpoint.md "What a restore checks").
struct RestoreTimes {
  Cycle now = 0;
  Cycle limit = 0;
};

class Timeline {
 public:
  // The vp_seq rgN counter registers: one per row group of the geometry
  // (ArrayGeometry::row_groups is fixed to their number).
  static constexpr unsigned kRowGroups = 4;

  // `zero_time`: the functional-only mode -- every micro-op takes no time and
  // completes when it is pushed (the order rules still hold trivially).
  Timeline(CostModel cost, unsigned ififo_depth, bool zero_time = false);

  // Schedules the next micro-op, ready at `ready`. The shape's tile and kind
  // decide which rules apply; `csrs` is the CSR state at its push.
  // `after_idle`: the SEQ had drained and waited for software before this
  // micro-op's instruction -- if the array had drained too, the gap is host
  // time and a new busy period starts (TimelineStats::busy_span).
  const Slot& schedule(const OpShape& shape, Cycle ready, const TimingCsrs& csrs, bool after_idle = true);

  // Executes the micro-op offered at its earliest start `earliest` (after every rule above but the phases): false
  // when it failed, and then nothing is scheduled; `decided` set when the implementation decided its time
  // (pe::ArrayModel::offer, D-ARRAY-SEAM).
  using Execute = std::function<bool(Cycle earliest, std::optional<pe::ArrayTiming>& decided)>;
  // schedule() with the execution at the offer: the phases are the implementation's times when it decided them
  // (its accept is the start, its end frees the port or stream, its completion and first result are the
  // micro-op's; a throttled XBUS still stretches them by the cost model's figure), else the cost model's. Null
  // when `execute` failed. An empty `execute` is schedule() above.
  const Slot* schedule(const OpShape& shape, Cycle ready, const TimingCsrs& csrs, bool after_idle,
                       const Execute& execute);

  // When the micro-op scheduled next, ready at `ready`, would enter the IFIFO
  // (the SEQ is blocked until then).
  Cycle push_time(Cycle ready, unsigned capacity) const;
  Cycle last_response() const { return last_response_; }
  Cycle last_complete() const { return stats_.last_complete; }

  const TimelineStats& stats() const { return stats_; }
  const CostModel& cost_model() const { return cost_; }
  bool zero_time() const { return zero_time_; }

  // Row-group activity counters: settle them to `now` before reading.
  void settle_counters(Cycle now);
  const RowGroupCounters& row_group(unsigned g) const { return groups_[g]; }
  void reset_counters(Cycle now);

  // The background (shadow) stationary needs no state of its own: issue order
  // already keeps a weight load behind the Matmul that took the previous one.
  struct TileState {
    Cycle wl_free = 0;        // the weight-load port
    Cycle weights_ready = 0;  // the last weight load finished
    Cycle stream_free = 0;    // the moving stream
  };
  struct InFlight {
    isa::TileRect tile;
    std::uint8_t banks;
    Cycle complete;
    bool regwrite;  // a PeRegWrite: conflicts even with its own tile's pipeline
  };
  struct GroupState {
    ActivityCounter::State matmul, weight_load, busy;
    Cycle origin = 0;
    Cycle last_active = 0;  // for the launch stagger
  };
  // Everything the schedule of a later micro-op or a later figure reads, as
  // plain data, for a VP checkpoint (docs/checkpoint.md). The cost model and
  // the IFIFO depth are configuration; the last slot is scratch.
  struct State {
    std::vector<Cycle> starts;  // at most the IFIFO depth
    Cycle last_start = 0, last_response = 0;
    bool any_response = false;
    std::vector<std::pair<std::uint64_t, TileState>> tiles;
    std::vector<InFlight> in_flight;
    std::vector<std::pair<Cycle, Cycle>> responses;
    std::array<GroupState, kRowGroups> groups;
    TimelineStats stats;
    Cycle period_start = 0, period_end = 0, closed_span = 0;
  };
  State state() const;
  // Why `s` cannot be this timeline's state at an idle point at `times`, or "":
  // more IFIFO starts than its depth; a start or response after the time (every
  // response has been seen at an idle point); starts, responses or counter
  // intervals out of order; a port, counter or statistic later than both the
  // time and the in-flight completions that can hold it; any cycle past
  // times.limit; statistics whose spans do not add up (docs/checkpoint.md).
  std::string check(const State& s, const RestoreTimes& times) const;
  void restore(const State& s);

 private:
  Cycle p2f_clear(Cycle t, unsigned threshold) const;
  // Fills the slot's phases from an implementation's decided times.
  void take_decided(Slot& s, const pe::ArrayTiming& t, const TimingCsrs& csrs) const;
  TileState& tile_state(const isa::TileRect& tile);

  CostModel cost_;
  unsigned ififo_depth_;
  bool zero_time_;
  std::deque<Cycle> starts_;  // the start (IFIFO exit) of the last ififo_depth_ micro-ops
  Cycle last_start_ = 0;
  Cycle last_response_ = 0;
  bool any_response_ = false;
  // By TileRect::key(). A program uses a handful of tiles: a flat list searched
  // from the most recent costs less than hashing.
  std::vector<std::pair<std::uint64_t, TileState>> tiles_;
  std::vector<InFlight> in_flight_;
  std::deque<std::pair<Cycle, Cycle>> responses_;  // (done, response) still in the P2F FIFO window
  std::array<Cycle, kRowGroups> group_last_active_{};
  std::array<RowGroupCounters, kRowGroups> groups_;
  TimelineStats stats_;
  Cycle period_start_ = 0, period_end_ = 0, closed_span_ = 0;
  Slot slot_;
};

}  // namespace pevp::arrseq
