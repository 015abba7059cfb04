#include "pevp/arr_seq/timeline.h"

#include <algorithm>
#include <cmath>

namespace pevp::arrseq {
namespace {

Cycle ceil_of(double cycles) { return static_cast<Cycle>(std::ceil(cycles)); }

// Credits a streaming Matmul's tile-cycles to ArrayAccounting (timeline.h): its active k x m PEs over the
// occupancy split into the data's full-rate cycles and what stretched them, the rest of its tile as mapping.
void account(const Slot& s, ArrayAccounting& a) {
  const double tile = static_cast<double>(s.shape.tile.rows) * s.shape.tile.cols;
  const double occupancy = static_cast<double>(s.cost.occupancy);
  if (s.shape.transpose) {
    a.transpose += tile * occupancy;
    return;
  }
  const double active = static_cast<double>(s.shape.k) * s.shape.m;
  a.useful += active * s.cost.data_cycles;
  a.short_stream += active * (static_cast<double>(s.cost.compute) - s.cost.data_cycles);
  a.sbuf_bandwidth += active * static_cast<double>(s.cost.unthrottled - s.cost.compute);
  a.throttle += active * static_cast<double>(s.cost.occupancy - s.cost.unthrottled);
  a.mapping += (tile - active) * occupancy;
}

}  // namespace

// One rgN counter register set and one stagger register per row group, for the
// row groups every preset geometry has (check_geometry keeps them fixed).
static_assert(Timeline::kRowGroups == regfile::ClusterCfg::kStaggerGroups);
static_assert(Timeline::kRowGroups == isa::kCounterGridSide);

const char* name(Stall s) {
  switch (s) {
    case Stall::IfifoFull: return "ififo_full";
    case Stall::Dependency: return "dependency";
    case Stall::Serialised: return "serialised";
    case Stall::Throttle: return "throttle";
    case Stall::P2fFull: return "p2f_full";
    case Stall::InterInstrDelay: return "inter_instr_delay";
    case Stall::StaggerWake: return "stagger_wake";
    case Stall::SbufBandwidth: return "sbuf_bandwidth";
    case Stall::ShortStream: return "short_stream";
  }
  return "?";
}

// ---- ActivityCounter ------------------------------------------------------------------

void ActivityCounter::settle(Cycle now) {
  // Counts [a, b) up to `now`; false when it reaches past `now` (the rest waits).
  const auto count = [&](Cycle& a, Cycle b) {
    if (b <= now) {
      counted_ += b - a;
      return true;
    }
    counted_ += now - a;
    a = now;
    return false;
  };
  bool all_closed_counted = true;
  while (!closed_.empty()) {
    auto& [a, b] = closed_.front();
    if (a >= now || !count(a, b)) {
      all_closed_counted = false;
      break;
    }
    closed_.pop_front();
  }
  if (all_closed_counted && open_ && open_start_ < now && count(open_start_, open_end_)) open_ = false;
  counted_until_ = std::max(counted_until_, now);
}

std::uint64_t ActivityCounter::counted_at(Cycle t) const {
  std::uint64_t n = counted_;
  for (const auto& [a, b] : closed_) {
    if (a >= t) return n;
    n += std::min(b, t) - a;
  }
  if (open_ && open_start_ < t) n += std::min(open_end_, t) - open_start_;
  return n;
}

void ActivityCounter::reset(Cycle now) {
  settle(now);
  counted_ = 0;
}

// ---- Timeline ---------------------------------------------------------------------------

Timeline::Timeline(CostModel cost, unsigned ififo_depth, bool zero_time)
    : cost_(cost), ififo_depth_(std::max(ififo_depth, 1u)), zero_time_(zero_time) {}

Cycle Timeline::push_time(Cycle ready, unsigned capacity) const {
  capacity = std::max(capacity, 1u);
  if (starts_.size() < capacity) return ready;
  // The slot frees when the micro-op `capacity` places earlier leaves the IFIFO.
  return std::max(ready, starts_[starts_.size() - capacity]);
}

Cycle Timeline::p2f_clear(Cycle t, unsigned threshold) const {
  // The P2F FIFO holds responses the array produced (done) that the SEQ has
  // not taken yet (response). At `threshold` entries it back-pressures issue.
  for (;;) {
    unsigned level = 0;
    Cycle next_exit = 0;
    for (const auto& [done, response] : responses_)
      if (done <= t && response > t) {
        ++level;
        next_exit = level == 1 ? response : std::min(next_exit, response);
      }
    if (level < threshold) return t;
    t = next_exit;
  }
}

Timeline::TileState& Timeline::tile_state(const isa::TileRect& tile) {
  const std::uint64_t key = tile.key();
  for (auto it = tiles_.rbegin(); it != tiles_.rend(); ++it)
    if (it->first == key) return it->second;
  tiles_.emplace_back(key, TileState{});
  return tiles_.back().second;
}

const Slot& Timeline::schedule(const OpShape& shape_in, Cycle ready, const TimingCsrs& csrs, bool after_idle) {
  return *schedule(shape_in, ready, csrs, after_idle, Execute{});
}

void Timeline::take_decided(Slot& s, const pe::ArrayTiming& t, const TimingCsrs& csrs) const {
  // The implementation's occupancy is its unthrottled compute; a throttled XBUS stretches it as the cost model's
  // figures say (the throttle stays the sequencer's, D-ARRAY-SEAM).
  const OpCost modelled = cost_.cost(s.shape, csrs.throttled);
  const Cycle stretch = modelled.occupancy - modelled.unthrottled;
  OpCost& c = s.cost;
  c.compute = c.unthrottled = t.end - t.accept;
  c.occupancy = c.unthrottled + stretch;
  c.data_cycles = std::min(c.data_cycles, static_cast<double>(c.compute));
  c.fill_drain = t.complete - t.end;
  c.commit = 0;
  c.first_commit = t.first_result - t.accept;
  s.start = t.accept;
  s.end = t.end + stretch;
  s.complete = t.complete + stretch;
  s.done = s.shape.kind == pe::MicroOpKind::Matmul && !csrs.cluster.matmul_done_last ? t.first_result : s.complete;
}

const Slot* Timeline::schedule(const OpShape& shape_in, Cycle ready, const TimingCsrs& csrs, bool after_idle,
                               const Execute& execute) {
  Slot& s = slot_;
  s = Slot{};
  s.shape = shape_in;
  s.ready = ready;
  const bool is_mm = s.shape.kind == pe::MicroOpKind::Matmul;
  const bool is_wl = s.shape.kind == pe::MicroOpKind::WeightLoad;
  // enable_wl_last_active_col: a weight load stops at wl_last_active_col.
  if (is_wl && csrs.cluster.enable_wl_last_active_col) {
    s.shape.m = pe::loaded_columns(s.shape.m, s.shape.tile.col0, csrs.cluster.wl_last_active_col);
  }

  if (zero_time_) {
    std::optional<pe::ArrayTiming> ignored;  // the functional-only mode takes no time, whatever was decided
    if (execute && !execute(ready, ignored)) return nullptr;
    s.push = s.start = s.end = s.complete = s.done = ready;
    s.response = std::max(ready, last_response_);
  } else {
    // 1. An IFIFO slot.
    const unsigned capacity = csrs.queue.fifo_size_sel ? 1 : ififo_depth_;
    s.push = push_time(ready, capacity);
    s.stalls[static_cast<unsigned>(Stall::IfifoFull)] = s.push - ready;

    // 2. In-order issue from the IFIFO head, then the structural resource and
    //    the conflicts. Issue order also protects the background stationary: a
    //    weight load cannot start before the Matmul ahead of it has started,
    //    i.e. taken the previous stationary out of the shadow buffer.
    const Cycle head = std::max(s.push, last_start_);
    in_flight_.erase(std::remove_if(in_flight_.begin(), in_flight_.end(),
                                    [&](const InFlight& f) { return f.complete <= head; }),
                     in_flight_.end());
    TileState& tile = tile_state(s.shape.tile);
    Cycle structural = head;
    Cycle dependency = head;
    if (is_wl) structural = std::max(structural, tile.wl_free);
    if (is_mm) {
      structural = std::max(structural, tile.stream_free);
      dependency = std::max(dependency, tile.weights_ready + cost_.params().ls_to_mm_cycles);
    }
    Cycle serial = head;
    const bool depchk = !csrs.queue.disable_dependency_check;
    for (const InFlight& f : in_flight_) {
      if (!depchk) {
        serial = std::max(serial, f.complete);  // single-threaded: nothing may be in flight
        continue;
      }
      const bool same_tile = f.tile == s.shape.tile;
      const bool pipelined = same_tile && !f.regwrite && s.shape.kind != pe::MicroOpKind::PeRegWrite;
      if (!pipelined && (f.tile.overlaps(s.shape.tile) || (f.banks & s.shape.banks)))
        dependency = std::max(dependency, f.complete);
    }
    Cycle start = std::max({structural, dependency, serial});
    if (start > structural) {
      const Stall why = serial > std::max(structural, dependency) ? Stall::Serialised : Stall::Dependency;
      s.stalls[static_cast<unsigned>(why)] = start - structural;
    }

    // 3. The P2F FIFO's almost-full back-pressure (flush_p2f_fifos empties it).
    if (!csrs.cluster.flush_p2f_fifos && csrs.cluster.p2fifo_af > 0) {
      const Cycle clear = p2f_clear(start, csrs.cluster.p2fifo_af);
      s.stalls[static_cast<unsigned>(Stall::P2fFull)] = clear - start;
      start = clear;
    }

    // 4. The launch stagger: row groups idle past their limit wake one by one.
    unsigned waking = 0;
    const std::uint8_t groups = s.shape.row_groups;
    for (unsigned g = 0; g < kRowGroups; ++g)
      if ((groups >> g & 1) && start > group_last_active_[g] + csrs.cluster.stagger_idle_limit[g]) ++waking;
    const Cycle wake = Cycle{waking} * cost_.params().stagger_wake_cycles;
    s.stalls[static_cast<unsigned>(Stall::StaggerWake)] = wake;
    start += wake;

    // 5. The micro-op executes, offered at `start`; its phases are the implementation's times when it decided
    //    them (D-ARRAY-SEAM), else the cost model's.
    std::optional<pe::ArrayTiming> decided;
    if (execute && !execute(start, decided)) return nullptr;
    s.cost = cost_.cost(s.shape, csrs.throttled);
    if (decided) {
      take_decided(s, *decided, csrs);
    } else {
      s.start = start;
      s.end = start + s.cost.occupancy;
      s.complete = is_mm ? s.end + s.cost.fill_drain + s.cost.commit : s.end;
      s.done = is_mm && !csrs.cluster.matmul_done_last ? s.start + s.cost.first_commit : s.complete;
    }
    s.stalls[static_cast<unsigned>(Stall::Throttle)] = s.cost.occupancy - s.cost.unthrottled;
    s.stalls[static_cast<unsigned>(Stall::SbufBandwidth)] = s.cost.unthrottled - s.cost.compute;
    s.stalls[static_cast<unsigned>(Stall::ShortStream)] =
        is_mm && !s.shape.transpose && s.cost.compute > ceil_of(s.cost.data_cycles)
            ? s.cost.compute - ceil_of(s.cost.data_cycles)
            : 0;

    // 6. The response, in order, spaced by the inter-instruction delay.
    const Cycle in_order = std::max(s.done, last_response_);
    s.response = in_order;
    if (csrs.cluster.en_inter_instr_dly && !csrs.cluster.flush_p2f_fifos && any_response_)
      s.response = std::max(in_order, last_response_ + csrs.cluster.inter_instr_dly_cnt);
    s.stalls[static_cast<unsigned>(Stall::InterInstrDelay)] = s.response - in_order;

    // 7. State for the micro-ops after it.
    if (is_wl) tile.wl_free = tile.weights_ready = s.end;
    if (is_mm) tile.stream_free = s.end;
    in_flight_.push_back({s.shape.tile, s.shape.banks, s.complete, s.shape.kind == pe::MicroOpKind::PeRegWrite});
    starts_.push_back(s.start);
    if (starts_.size() > ififo_depth_) starts_.pop_front();
    last_start_ = s.start;
    responses_.push_back({s.done, s.response});
    while (!responses_.empty() && responses_.front().second <= s.start) responses_.pop_front();
    for (unsigned g = 0; g < kRowGroups; ++g) {
      if (!(groups >> g & 1)) continue;
      group_last_active_[g] = std::max(group_last_active_[g], s.end);
      if (!csrs.counters_enabled || s.shape.kind == pe::MicroOpKind::PeRegWrite) continue;
      (is_mm ? groups_[g].matmul : groups_[g].weight_load).add(s.start, s.end);
      groups_[g].busy.add(s.start, s.end);
    }
  }
  last_response_ = s.response;
  any_response_ = true;

  // Statistics: the busy span sums the periods the engine had work, so host
  // time between submissions (loading, read-back) is not counted -- only a gap
  // in which both the SEQ waited for software and the array had drained.
  TimelineStats& st = stats_;
  const auto kind = static_cast<unsigned>(s.shape.kind);
  ++st.micro_ops[kind];
  st.busy_cycles[kind] += s.cost.occupancy;
  st.macs += s.shape.macs;
  st.macs_by_kind[static_cast<unsigned>(s.shape.mac_kind)] += s.shape.macs;
  st.sbuf_read_bytes += s.shape.sbuf_read_bytes();
  st.psum_bytes += s.shape.psum_bytes();
  if (is_mm) account(s, st.pe_cycles);
  for (unsigned i = 0; i < kStallKinds; ++i) {
    st.stall_cycles[i] += s.stalls[i];
    st.stalled_ops[i] += s.stalls[i] > 0;
  }
  const Cycle finish = std::max(s.complete, s.response);
  if (!st.any) {
    st.any = true;
    st.first_start = period_start_ = s.start;
    period_end_ = finish;
  } else if (after_idle && s.ready >= period_end_) {  // the engine had drained: a new busy period
    closed_span_ += period_end_ - period_start_;
    period_start_ = s.start;
    period_end_ = finish;
  }
  period_end_ = std::max(period_end_, finish);
  st.last_complete = std::max(st.last_complete, finish);
  st.busy_span = closed_span_ + (period_end_ - period_start_);

  return &s;
}

void Timeline::settle_counters(Cycle now) {
  for (RowGroupCounters& g : groups_) {
    g.matmul.settle(now);
    g.weight_load.settle(now);
    g.busy.settle(now);
  }
}

void Timeline::reset_counters(Cycle now) {
  for (RowGroupCounters& g : groups_) {
    g.matmul.reset(now);
    g.weight_load.reset(now);
    g.busy.reset(now);
    g.origin = now;
  }
}

Timeline::State Timeline::state() const {
  State s;
  s.starts.assign(starts_.begin(), starts_.end());
  s.last_start = last_start_;
  s.last_response = last_response_;
  s.any_response = any_response_;
  s.tiles = tiles_;
  s.in_flight = in_flight_;
  s.responses.assign(responses_.begin(), responses_.end());
  for (unsigned g = 0; g < kRowGroups; ++g)
    s.groups[g] = {groups_[g].matmul.state(), groups_[g].weight_load.state(), groups_[g].busy.state(),
                   groups_[g].origin, group_last_active_[g]};
  s.stats = stats_;
  s.period_start = period_start_;
  s.period_end = period_end_;
  s.closed_span = closed_span_;
  return s;
}

namespace {

std::string at_cycle(Cycle c) { return "cycle " + std::to_string(c); }

std::string after_time(const RestoreTimes& t) { return ", after the checkpoint's time (" + at_cycle(t.now) + ")"; }
std::string past_limit(const RestoreTimes& t) {
  return ", past the latest cycle this pe-vp supports (" + std::to_string(t.limit) + ")";
}

// What may still be busy after an idle point's time: up to `horizon`, the later of the time and the completions
// in flight that hold it (a micro-op that responded early still occupies its tile until it completes).
std::string later_problem(const std::string& what, Cycle at, Cycle horizon, const RestoreTimes& t) {
  if (at > t.limit) return what + " at " + at_cycle(at) + past_limit(t);
  if (at > horizon)
    return what + " at " + at_cycle(at) + after_time(t) + " and every in-flight completion that could hold it (" +
           at_cycle(horizon) + ")";
  return "";
}

// One row-group activity counter: counted up to a time not after now, no more cycles than have passed since its
// origin, and what is not counted yet as disjoint intervals in increasing order, from where it counted until, up
// to the horizon (ActivityCounter::add and settle keep them so).
std::string counter_problem(const std::string& what, const ActivityCounter::State& c, Cycle origin, Cycle horizon,
                            const RestoreTimes& t) {
  if (c.counted_until > t.now) return what + " counted until " + at_cycle(c.counted_until) + after_time(t);
  if (c.counted_until < origin)
    return what + " counted until " + at_cycle(c.counted_until) + ", before its origin (" + at_cycle(origin) + ")";
  if (c.counted > c.counted_until - origin)
    return what + " counted " + std::to_string(c.counted) + " cycles, more than the " +
           std::to_string(c.counted_until - origin) + " from its origin to where it counted until";
  Cycle floor = c.counted_until;
  const auto interval = [&](const std::string& which, Cycle a, Cycle b) -> std::string {
    if (a < floor || b <= a)
      return what + ": " + which + " [" + std::to_string(a) + ", " + std::to_string(b) +
             ") is empty, or starts before " + at_cycle(floor) + " (what it counted, or the interval before)";
    floor = b;
    return later_problem(what + ": " + which + " ending", b, horizon, t);
  };
  for (std::size_t i = 0; i < c.closed.size(); ++i)
    if (std::string why = interval("interval " + std::to_string(i), c.closed[i].first, c.closed[i].second);
        !why.empty())
      return why;
  if (c.open) return interval("the open interval", c.open_start, c.open_end);
  // Closed by settle(): what is left of it was counted, up to where the counter counted until.
  if (c.open_start > c.open_end || c.open_end > c.counted_until)
    return what + ": the last interval [" + std::to_string(c.open_start) + ", " + std::to_string(c.open_end) +
           "), counted and closed, ends after where it counted until (" + at_cycle(c.counted_until) + ")";
  return "";
}

// The statistics: the busy periods lie between the first start and the last completion, and the busy span is
// the closed periods plus the current one, as schedule() sums them.
std::string stats_problem(const Timeline::State& s, Cycle horizon, const RestoreTimes& t) {
  const TimelineStats& st = s.stats;
  std::uint64_t micro_ops = 0;
  for (std::uint64_t n : st.micro_ops) micro_ops += std::min<std::uint64_t>(n, ~std::uint64_t{0} - micro_ops);
  for (unsigned i = 0; i < kStallKinds; ++i)
    if (st.stalled_ops[i] > micro_ops)
      return std::to_string(st.stalled_ops[i]) + " micro-ops stalled by " + name(static_cast<Stall>(i)) + ", of " +
             std::to_string(micro_ops) + " scheduled";
  const ArrayAccounting& a = st.pe_cycles;
  for (double d : {a.useful, a.short_stream, a.sbuf_bandwidth, a.throttle, a.mapping, a.transpose})
    if (!(d >= 0) || !std::isfinite(d)) return "an array accounting sum is " + std::to_string(d);
  if (!st.any) {
    // Nothing scheduled yet: the first micro-op sets the first start and the busy period, but the last completion
    // and the spans carry on from what was restored.
    for (const auto& [what, at] : {std::pair{"first start", st.first_start}, std::pair{"last completion", st.last_complete},
                                   std::pair{"busy period's start", s.period_start},
                                   std::pair{"busy period's end", s.period_end}})
      if (at > t.now) return std::string("no micro-op scheduled, but the ") + what + " at " + at_cycle(at) + after_time(t);
    if (s.closed_span != 0 || st.busy_span != 0)
      return "no micro-op scheduled, but a busy span of " + std::to_string(st.busy_span) + " cycles (" +
             std::to_string(s.closed_span) + " closed)";
    return "";
  }
  if (std::string why = later_problem("the last completion", st.last_complete, horizon, t); !why.empty()) return why;
  if (st.last_complete < s.last_response)
    return "the last completion at " + at_cycle(st.last_complete) + " is before the last response (" +
           at_cycle(s.last_response) + ")";
  if (st.first_start > s.period_start || s.period_start > s.period_end || s.period_end > st.last_complete)
    return "the busy period [" + std::to_string(s.period_start) + ", " + std::to_string(s.period_end) +
           ") does not lie between the first start (" + at_cycle(st.first_start) + ") and the last completion (" +
           at_cycle(st.last_complete) + ")";
  if (s.closed_span > s.period_start - st.first_start)
    return "the closed busy span of " + std::to_string(s.closed_span) + " cycles is longer than the " +
           std::to_string(s.period_start - st.first_start) + " before the current busy period";
  if (st.busy_span != s.closed_span + (s.period_end - s.period_start))
    return "the busy span of " + std::to_string(st.busy_span) + " cycles is not the closed span (" +
           std::to_string(s.closed_span) + ") plus the current busy period (" +
           std::to_string(s.period_end - s.period_start) + ")";
  return "";
}

}  // namespace

std::string Timeline::check(const State& s, const RestoreTimes& t) const {
  if (s.starts.size() > ififo_depth_)
    return std::to_string(s.starts.size()) + " IFIFO starts, more than its depth " + std::to_string(ififo_depth_);
  // What an idle point has seen happen: every response retired, so nothing started or responded after the time.
  if (s.last_response > t.now) return "the last response at " + at_cycle(s.last_response) + after_time(t);
  if (s.last_start > s.last_response)
    return "the last start at " + at_cycle(s.last_start) + " is after the last response (" +
           at_cycle(s.last_response) + ")";
  for (std::size_t i = 0; i < s.starts.size(); ++i)
    if (s.starts[i] > s.last_start || (i > 0 && s.starts[i] < s.starts[i - 1]))
      return "IFIFO start " + std::to_string(i) + " at " + at_cycle(s.starts[i]) +
             " is out of issue order or after the last start (" + at_cycle(s.last_start) + ")";
  if (!s.starts.empty() && s.starts.back() != s.last_start)
    return "the newest IFIFO start (" + at_cycle(s.starts.back()) + ") is not the last start (" +
           at_cycle(s.last_start) + ")";
  for (std::size_t i = 0; i < s.responses.size(); ++i) {
    const auto& [done, response] = s.responses[i];
    if (done > response || response > s.last_response || (i > 0 && response < s.responses[i - 1].second))
      return "P2F entry " + std::to_string(i) + " (done at " + at_cycle(done) + ", response at " + at_cycle(response) +
             ") is done after its response, out of order, or after the last response (" + at_cycle(s.last_response) +
             ")";
  }
  if (s.any_response != s.stats.any)
    return std::string("the statistics ") + (s.stats.any ? "count" : "do not count") +
           " a micro-op, the response flag says " + (s.any_response ? "one responded" : "none responded");
  // What is still busy after the time is held by a micro-op still in flight.
  Cycle horizon = t.now;
  for (std::size_t i = 0; i < s.in_flight.size(); ++i) {
    if (s.in_flight[i].complete > t.limit)
      return "in-flight micro-op " + std::to_string(i) + " completes at " + at_cycle(s.in_flight[i].complete) +
             past_limit(t);
    horizon = std::max(horizon, s.in_flight[i].complete);
  }
  for (std::size_t i = 0; i < s.tiles.size(); ++i) {
    const auto& [key, ts] = s.tiles[i];
    for (std::size_t j = 0; j < i; ++j)
      if (s.tiles[j].first == key)
        return "tile states " + std::to_string(j) + " and " + std::to_string(i) + " are of the same tile";
    Cycle tile_horizon = t.now;
    for (const InFlight& f : s.in_flight)
      if (f.tile.key() == key) tile_horizon = std::max(tile_horizon, f.complete);
    const std::string tile = "tile state " + std::to_string(i) + ": its ";
    for (const auto& [what, at] : {std::pair{"weight-load port frees", ts.wl_free},
                                   std::pair{"weights are ready", ts.weights_ready},
                                   std::pair{"stream frees", ts.stream_free}})
      if (std::string why = later_problem(tile + what, at, tile_horizon, t); !why.empty()) return why;
  }
  for (unsigned g = 0; g < kRowGroups; ++g) {
    const GroupState& gs = s.groups[g];
    const std::string group = "row group " + std::to_string(g);
    if (gs.origin > t.now) return group + ": its counters' origin at " + at_cycle(gs.origin) + after_time(t);
    if (std::string why = later_problem(group + " last active", gs.last_active, horizon, t); !why.empty()) return why;
    for (const auto& [what, c] : {std::pair{"'s matmul counter", &gs.matmul},
                                  std::pair{"'s weight-load counter", &gs.weight_load},
                                  std::pair{"'s busy counter", &gs.busy}})
      if (std::string why = counter_problem(group + what, *c, gs.origin, horizon, t); !why.empty()) return why;
  }
  return stats_problem(s, horizon, t);
}

void Timeline::restore(const State& s) {
  starts_.assign(s.starts.begin(), s.starts.end());
  last_start_ = s.last_start;
  last_response_ = s.last_response;
  any_response_ = s.any_response;
  tiles_ = s.tiles;
  in_flight_ = s.in_flight;
  responses_.assign(s.responses.begin(), s.responses.end());
  for (unsigned g = 0; g < kRowGroups; ++g) {
    groups_[g].matmul.restore(s.groups[g].matmul);
    groups_[g].weight_load.restore(s.groups[g].weight_load);
    groups_[g].busy.restore(s.groups[g].busy);
    groups_[g].origin = s.groups[g].origin;
    group_last_active_[g] = s.groups[g].last_active;
  }
  stats_ = s.stats;
  period_start_ = s.period_start;
  period_end_ = s.period_end;
  closed_span_ = s.closed_span;
}

}  // namespace pevp::arrseq
