// Helpers shared by the configuration tests.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "pevp/platform/config.h"

namespace pevp::platform::test {

// Field-by-field equality of everything the configuration carries, so a round
// trip is checked against the structs, not against to_json's own output.
inline void expect_same(const VpConfig& a, const VpConfig& b) {
  EXPECT_EQ(a.gen(), b.gen());
  EXPECT_EQ(a.mode, b.mode);
  EXPECT_DOUBLE_EQ(a.tensor_engine_clock_ghz, b.tensor_engine_clock_ghz);
  EXPECT_EQ(a.psum_rounding, b.psum_rounding);
  EXPECT_EQ(a.hazards, b.hazards);
  EXPECT_EQ(a.geometry, b.geometry);
  EXPECT_EQ(a.platform.map.sbuf, b.platform.map.sbuf);
  EXPECT_EQ(a.platform.map.psum, b.platform.map.psum);
  EXPECT_EQ(a.platform.map.apb, b.platform.map.apb);
  EXPECT_EQ(a.platform.map.apb_size, b.platform.map.apb_size);
  EXPECT_EQ(a.platform.map.iq, b.platform.map.iq);
  EXPECT_EQ(a.platform.map.iq_size, b.platform.map.iq_size);
  EXPECT_EQ(a.platform.arr_seq.ififo_depth, b.platform.arr_seq.ififo_depth);
  EXPECT_EQ(a.platform.seq.queue_depth, b.platform.seq.queue_depth);
  EXPECT_EQ(a.platform.seq.window_bytes, b.platform.seq.window_bytes);
  EXPECT_EQ(a.platform.seq.quantum, b.platform.seq.quantum);
  EXPECT_EQ(a.platform.seq.decode_cache_entries, b.platform.seq.decode_cache_entries);
  const arrseq::TimingParams& ta = a.platform.arr_seq.timing;
  const arrseq::TimingParams& tb = b.platform.arr_seq.timing;
  EXPECT_DOUBLE_EQ(ta.clock_ghz, tb.clock_ghz);
  EXPECT_EQ(ta.mm_init_latency, tb.mm_init_latency);
  EXPECT_EQ(ta.fp32_factor, tb.fp32_factor);
  EXPECT_EQ(ta.ls_elements_per_cycle, tb.ls_elements_per_cycle);
  EXPECT_EQ(ta.ls_to_mm_cycles, tb.ls_to_mm_cycles);
  EXPECT_EQ(ta.sbuf_read_bytes_per_cycle, tb.sbuf_read_bytes_per_cycle);
  EXPECT_EQ(ta.sbuf_access_cycles, tb.sbuf_access_cycles);
  EXPECT_EQ(ta.fill_cycles_per_row, tb.fill_cycles_per_row);
  EXPECT_EQ(ta.drain_cycles_per_col, tb.drain_cycles_per_col);
  EXPECT_EQ(ta.psum_write_cycles, tb.psum_write_cycles);
  EXPECT_EQ(ta.psum_rmw_cycles, tb.psum_rmw_cycles);
  EXPECT_EQ(ta.pe_regwrite_cycles, tb.pe_regwrite_cycles);
  EXPECT_EQ(ta.seq_dispatch_cycles, tb.seq_dispatch_cycles);
  EXPECT_EQ(ta.stagger_wake_cycles, tb.stagger_wake_cycles);
  EXPECT_DOUBLE_EQ(ta.throttle_fraction, tb.throttle_fraction);
  for (memory::MemoryConfig VpConfig::*m : {&VpConfig::sbuf, &VpConfig::psum}) {
    const memory::MemoryConfig& x = a.*m;
    const memory::MemoryConfig& y = b.*m;
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.partitions, y.partitions);
    EXPECT_EQ(x.partition_bytes, y.partition_bytes);
    EXPECT_EQ(x.bank_bytes, y.bank_bytes);
    EXPECT_EQ(x.access_latency, y.access_latency);
    EXPECT_EQ(x.beat_latency, y.beat_latency);
    EXPECT_EQ(x.beat_bytes, y.beat_bytes);
  }
  EXPECT_EQ(a.csrs.access_time, b.csrs.access_time);
  EXPECT_EQ(a.csrs.unmapped, b.csrs.unmapped);
}

// Runs `f`, which must throw ConfigError; returns its message and checks its key.
inline std::string config_error(const std::function<void()>& f, const std::string& key) {
  try {
    f();
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.key(), key) << e.what();
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not a ConfigError: " << e.what();
    return {};
  }
  ADD_FAILURE() << "no ConfigError (key " << key << ")";
  return {};
}

// The integer keys of the `timing` section (the cost model, cost_model.h), in
// the order the configuration lists them, with the documented default and lower
// bound (docs/configuration.md). The upper bound is 2^20 for every one.
struct TimingKey {
  const char* name;
  unsigned arrseq::TimingParams::*member;
  unsigned default_value;
  unsigned lo;
};

constexpr unsigned kTimingMax = 1u << 20;  // 1048576

inline const std::vector<TimingKey>& timing_keys() {
  using T = arrseq::TimingParams;
  static const std::vector<TimingKey> keys = {
      {"mm_init_latency", &T::mm_init_latency, 64, 0},
      {"fp32_factor", &T::fp32_factor, 4, 1},
      {"ls_elements_per_cycle", &T::ls_elements_per_cycle, 4, 1},
      {"ls_to_mm_cycles", &T::ls_to_mm_cycles, 4, 0},
      {"sbuf_read_bytes_per_cycle", &T::sbuf_read_bytes_per_cycle, 8, 1},
      {"sbuf_access_cycles", &T::sbuf_access_cycles, 60, 0},
      {"fill_cycles_per_row", &T::fill_cycles_per_row, 1, 0},
      {"drain_cycles_per_col", &T::drain_cycles_per_col, 1, 0},
      {"psum_write_cycles", &T::psum_write_cycles, 8, 0},
      {"psum_rmw_cycles", &T::psum_rmw_cycles, 4, 0},
      {"pe_regwrite_cycles", &T::pe_regwrite_cycles, 4, 0},
      {"seq_dispatch_cycles", &T::seq_dispatch_cycles, 16, 0},
      {"stagger_wake_cycles", &T::stagger_wake_cycles, 8, 0},
  };
  return keys;
}

// Every key of the `timing` section, as an unknown-key message lists them.
inline const char* const kTimingKeyList =
    "mm_init_latency, fp32_factor, xpose_fp32_factor, ls_elements_per_cycle, ls_to_mm_cycles, sbuf_read_bytes_per_cycle, "
    "sbuf_access_cycles, fill_cycles_per_row, drain_cycles_per_col, psum_write_cycles, psum_rmw_cycles, "
    "pe_regwrite_cycles, seq_dispatch_cycles, stagger_wake_cycles, throttle_fraction, model";

inline sc_core::sc_time ns(double v) { return sc_core::sc_time(v, sc_core::SC_NS); }

}  // namespace pevp::platform::test
