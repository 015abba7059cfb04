// Helpers shared by the configuration tests.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "pevp/platform/config.h"

namespace pevp::platform::test {

// Field-by-field equality of everything the configuration carries, so a round
// trip is checked against the structs, not against to_json's own output.
inline void expect_same(const VpConfig& a, const VpConfig& b) {
  EXPECT_EQ(a.gen(), b.gen());
  EXPECT_EQ(a.mode, b.mode);
  EXPECT_DOUBLE_EQ(a.tensor_engine_clock_ghz, b.tensor_engine_clock_ghz);
  EXPECT_EQ(a.platform.map.sbuf, b.platform.map.sbuf);
  EXPECT_EQ(a.platform.map.psum, b.platform.map.psum);
  EXPECT_EQ(a.platform.map.apb, b.platform.map.apb);
  EXPECT_EQ(a.platform.map.apb_size, b.platform.map.apb_size);
  EXPECT_EQ(a.platform.map.iq, b.platform.map.iq);
  EXPECT_EQ(a.platform.map.iq_size, b.platform.map.iq_size);
  EXPECT_EQ(a.platform.arr_seq.ififo_depth, b.platform.arr_seq.ififo_depth);
  EXPECT_EQ(a.platform.seq.queue_depth, b.platform.seq.queue_depth);
  EXPECT_EQ(a.platform.seq.window_bytes, b.platform.seq.window_bytes);
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

inline sc_core::sc_time ns(double v) { return sc_core::sc_time(v, sc_core::SC_NS); }

}  // namespace pevp::platform::test
