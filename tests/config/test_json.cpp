// from_json / to_json: round trips, partial objects on a base, the generation
// key, and every error class with the message a user reads.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "config_test_util.h"

namespace pevp::platform {
namespace {

using isa::Generation;
using nlohmann::json;
using test::config_error;
using test::ns;

VpConfig customised() {
  VpConfig c = preset(Generation::CAYMAN);
  c.tensor_engine_clock_ghz = 1.75;
  c.platform.map.sbuf = 0x10000000;
  c.platform.map.psum = 0x20000000;
  c.platform.map.apb = 0x30000000;
  c.platform.map.apb_size = 0x8000;
  c.platform.map.iq = 0x30100000;
  c.platform.map.iq_size = 0x2000;
  c.platform.seq.window_bytes = 0x2000;
  c.platform.arr_seq.ififo_depth = 3;
  c.platform.seq.queue_depth = 65536;
  c.sbuf.access_latency = ns(12.5);
  c.sbuf.beat_latency = sc_core::sc_time(250, sc_core::SC_PS);
  c.sbuf.beat_bytes = 128;
  c.psum.access_latency = ns(0);
  c.psum.beat_latency = ns(2);
  c.psum.beat_bytes = 1;
  c.csrs.access_time = ns(1000000);
  c.csrs.unmapped = regfile::UnmappedPolicy::ReadZeroWriteIgnore;
  c.mode = SimMode::Timing;
  c.platform.seq.quantum = ns(2500);
  // Every cost-model key off its default (default + 3, and the bounds for two).
  for (const test::TimingKey& k : test::timing_keys()) c.platform.arr_seq.timing.*k.member = k.default_value + 3;
  c.platform.arr_seq.timing.mm_init_latency = test::kTimingMax;
  c.platform.arr_seq.timing.fill_cycles_per_row = 0;
  c.platform.arr_seq.timing.throttle_fraction = 0.5;
  return c;
}

TEST(Json, EveryPresetRoundTrips) {
  for (Generation g : isa::kAllGenerations) {
    SCOPED_TRACE(std::string(isa::name(g)));
    const VpConfig p = preset(g);
    // From a base of another generation: the dumped "generation" must select the right preset.
    const Generation other = g == Generation::CAYMAN ? Generation::MAVERICK : Generation::CAYMAN;
    test::expect_same(from_json(to_json(p), preset(other)), p);
    // Through text as well, as --dump-config then --config would do.
    test::expect_same(from_json(json::parse(to_json(p).dump(2)), preset(other)), p);
  }
}

TEST(Json, ACustomisedConfigurationRoundTrips) {
  const VpConfig c = customised();
  ASSERT_NO_THROW(validate(c));
  const json j = to_json(c);
  EXPECT_EQ(j["sbuf"]["access_latency_ns"], 12.5);
  EXPECT_EQ(j["sbuf"]["beat_latency_ns"], 0.25);
  EXPECT_EQ(j["address_map"]["iq"], "0x30100000");
  EXPECT_EQ(j["csrs"]["unmapped"], "read_zero_write_ignore");
  EXPECT_EQ(j["mode"], "timing");
  EXPECT_EQ(j["seq"]["quantum_ns"], 2500);
  EXPECT_EQ(j["timing"]["mm_init_latency"], 1048576);
  EXPECT_EQ(j["timing"]["fill_cycles_per_row"], 0);
  EXPECT_EQ(j["timing"]["sbuf_access_cycles"], 63);
  EXPECT_EQ(j["timing"]["throttle_fraction"], 0.5);
  test::expect_same(from_json(j), c);
  test::expect_same(from_json(json::parse(j.dump())), c);
}

TEST(Json, APartialObjectChangesOnlyItsKeys) {
  VpConfig base = preset(Generation::CAYMAN);
  base.platform.seq.queue_depth = 17;
  const VpConfig c = from_json(json::parse(R"({"arr_seq": {"ififo_depth": 4}, "psum": {"beat_bytes": 32}})"), base);
  VpConfig expected = base;
  expected.platform.arr_seq.ififo_depth = 4;
  expected.psum.beat_bytes = 32;
  test::expect_same(c, expected);
  test::expect_same(from_json(json::object(), base), base);
}

TEST(Json, TheGenerationKeySelectsItsPresetFirst) {
  VpConfig base = preset(Generation::MARIANA);
  base.platform.seq.queue_depth = 17;
  const VpConfig c = from_json(json::parse(R"({"generation": "v3", "seq": {"queue_depth": 8}})"), base);
  VpConfig expected = preset(Generation::CAYMAN);
  expected.platform.seq.queue_depth = 8;
  test::expect_same(c, expected);
  // Geometry equal to the selected generation's is accepted (here CAYMAN's, not the base's).
  EXPECT_NO_THROW(from_json(json::parse(R"({"generation": "CAYMAN", "geometry": {"sbuf_partition_bytes": 229376}})"),
                            base));
}

TEST(Json, EveryModeIsAcceptedAndRoundTrips) {
  const std::pair<const char*, SimMode> cases[] = {{"functional", SimMode::Functional}, {"timing", SimMode::Timing},
                                                   {"both", SimMode::Both},             {"FUNCTIONAL", SimMode::Functional},
                                                   {"Timing", SimMode::Timing},         {"BoTh", SimMode::Both}};
  for (const auto& [text, mode] : cases) {
    SCOPED_TRACE(text);
    json j;
    j["mode"] = text;
    // From a base in another mode, so the key is what sets it.
    VpConfig base = preset(Generation::CAYMAN);
    base.mode = mode == SimMode::Both ? SimMode::Functional : SimMode::Both;
    const VpConfig c = from_json(j, base);
    EXPECT_EQ(c.mode, mode);
    VpConfig expected = base;
    expected.mode = mode;
    test::expect_same(c, expected);  // nothing else changed
    // A dump writes the lower-case name, and it loads back.
    EXPECT_EQ(to_json(c)["mode"], std::string(name(mode)));
    test::expect_same(from_json(to_json(c), preset(Generation::MARIANA)), c);
    EXPECT_NO_THROW(validate(c));
  }
  EXPECT_EQ(name(SimMode::Functional), "functional");
  EXPECT_EQ(name(SimMode::Timing), "timing");
  EXPECT_EQ(name(SimMode::Both), "both");
}

TEST(Json, TimingKeysRoundTripOneByOne) {
  for (const test::TimingKey& k : test::timing_keys()) {
    SCOPED_TRACE(k.name);
    for (const unsigned v : {k.lo, k.default_value + 1, test::kTimingMax}) {
      json j;
      j["timing"][k.name] = v;
      const VpConfig c = from_json(j);
      VpConfig expected = preset(Generation::MARIANA);
      expected.platform.arr_seq.timing.*k.member = v;
      test::expect_same(c, expected);  // this key alone changed
      EXPECT_EQ(to_json(c)["timing"][k.name], v);
      test::expect_same(from_json(json::parse(to_json(c).dump()), preset(Generation::CAYMAN)), c);
    }
  }
  for (const double f : {1.0, 0.25, 0.001}) {
    json j;
    j["timing"]["throttle_fraction"] = f;
    const VpConfig c = from_json(j);
    EXPECT_DOUBLE_EQ(c.platform.arr_seq.timing.throttle_fraction, f);
    EXPECT_EQ(to_json(c)["timing"]["throttle_fraction"], f);
    test::expect_same(from_json(json::parse(to_json(c).dump()), preset(Generation::CAYMAN)), c);
  }
  // An integer is a number too.
  EXPECT_DOUBLE_EQ(from_json(json::parse(R"({"timing": {"throttle_fraction": 1}})")).platform.arr_seq.timing.throttle_fraction,
                   1.0);
}

TEST(Json, SeqQuantumIsATime) {
  const VpConfig c = from_json(json::parse(R"({"seq": {"quantum_ns": 2000}})"));
  EXPECT_EQ(c.platform.seq.quantum, sc_core::sc_time(2, sc_core::SC_US));
  EXPECT_EQ(c.platform.seq.queue_depth, 256u);  // the other seq key keeps its value
  EXPECT_EQ(to_json(c)["seq"]["quantum_ns"], 2000);
  EXPECT_EQ(from_json(json::parse(R"({"seq": {"quantum_ns": 0.5}})")).platform.seq.quantum,
            sc_core::sc_time(500, sc_core::SC_PS));
  // 0 is no run-ahead at all (the SEQ synchronises after every instruction); 1 ms is the time bound.
  EXPECT_EQ(from_json(json::parse(R"({"seq": {"quantum_ns": 0}})")).platform.seq.quantum, sc_core::SC_ZERO_TIME);
  EXPECT_EQ(from_json(json::parse(R"({"seq": {"quantum_ns": 1000000}})")).platform.seq.quantum,
            sc_core::sc_time(1, sc_core::SC_MS));
}

TEST(Json, TimesAndAddressesAcceptTheirDocumentedForms) {
  const VpConfig c = from_json(json::parse(
      R"({"address_map": {"iq": 50397184, "iq_size": "0x2000"}, "csrs": {"access_time_ns": 7.5},
          "tensor_engine": {"clock_ghz": 1}})"));
  EXPECT_EQ(c.platform.map.iq, 0x3010000u);
  EXPECT_EQ(c.platform.map.iq_size, 0x2000u);
  EXPECT_EQ(c.platform.seq.window_bytes, 0x2000u);  // one parameter
  EXPECT_EQ(c.csrs.access_time, sc_core::sc_time(7500, sc_core::SC_PS));
  EXPECT_DOUBLE_EQ(c.tensor_engine_clock_ghz, 1.0);
}

// ---- error classes ------------------------------------------------------------------

TEST(JsonErrors, UnknownTopLevelKey) {
  const std::string m = config_error([] { from_json(json::parse(R"({"clock": 2})")); }, "clock");
  EXPECT_EQ(m,
            "unknown key 'clock' (valid top-level keys: generation, mode, tensor_engine, geometry, address_map, "
            "arr_seq, seq, sbuf, psum, timing, csrs, pe_array, hbm, host_memory, dma, energy, checks)");
}

TEST(JsonErrors, UnknownKeyInEverySection) {
  const std::pair<const char*, const char*> cases[] = {
      {"tensor_engine", "clock_ghz, psum_rounding"},
      {"geometry",
       "partitions, sbuf_partition_bytes, psum_partition_bytes, psum_bank_bytes, psum_banks, pe_rows, pe_cols, "
       "row_groups, col_groups, queues, sbuf_xbus_ports"},
      {"address_map", "sbuf, psum, apb, apb_size, iq, iq_size, dma, dma_size, hbm_window, hbm_window_size"},
      {"arr_seq", "ififo_depth"},
      {"seq", "queue_depth, quantum_ns"},
      {"sbuf", "access_latency_ns, beat_latency_ns, beat_bytes"},
      {"psum", "access_latency_ns, beat_latency_ns, beat_bytes"},
      {"timing", test::kTimingKeyList},
      {"csrs", "access_time_ns, unmapped, impl"},
      {"checks", "hazards"},
      {"hbm", "bytes, channels, bandwidth_gbps, latency_ns, interleave_bytes"},
      {"host_memory", "bytes, channels, bandwidth_gbps, latency_ns, interleave_bytes"},
      {"dma", "engines, queues_per_engine, engine_gbps, descriptor_ns, row_overhead_ns, max_ring_entries"}};
  for (const auto& [section, valid] : cases) {
    json j;
    j[section]["bogus"] = 1;
    const std::string key = std::string(section) + ".bogus";
    EXPECT_EQ(config_error([&] { from_json(j); }, key),
              "unknown key '" + key + "' (valid keys in '" + section + "': " + valid + ")");
  }
  // The old spelling of the queue window is not a second key for the same thing.
  EXPECT_NE(config_error([] { from_json(json::parse(R"({"seq": {"window_bytes": 4096}})")); }, "seq.window_bytes")
                .find("valid keys in 'seq': queue_depth, quantum_ns)"),
            std::string::npos);
}

TEST(JsonErrors, NotAnObject) {
  EXPECT_EQ(config_error([] { from_json(json::parse("[1, 2]")); }, ""),
            "the configuration must be a JSON object, got an array");
  EXPECT_EQ(config_error([] { from_json(json::parse(R"({"seq": 5})")); }, "seq"),
            "seq = 5: expected an object with the keys queue_depth, quantum_ns, got a number");
  EXPECT_EQ(config_error([] { from_json(json::parse(R"({"timing": [64]})")); }, "timing"),
            std::string("timing = [64]: expected an object with the keys ") + test::kTimingKeyList + ", got an array");
  // A timing key at the top level is not one.
  EXPECT_NE(config_error([] { from_json(json::parse(R"({"mm_init_latency": 64})")); }, "mm_init_latency")
                .find("unknown key 'mm_init_latency' (valid top-level keys: "),
            std::string::npos);
}

TEST(JsonErrors, WrongTypes) {
  EXPECT_EQ(config_error([] { from_json(json::parse(R"({"arr_seq": {"ififo_depth": "16"}})")); },
                         "arr_seq.ififo_depth"),
            "arr_seq.ififo_depth = \"16\": expected an integer (1..65536), got a string");
  EXPECT_EQ(config_error([] { from_json(json::parse(R"({"seq": {"queue_depth": 2.5}})")); }, "seq.queue_depth"),
            "seq.queue_depth = 2.5: expected an integer (1..65536), got a fraction");
  EXPECT_EQ(config_error([] { from_json(json::parse(R"({"sbuf": {"access_latency_ns": "20 ns"}})")); },
                         "sbuf.access_latency_ns"),
            "sbuf.access_latency_ns = \"20 ns\": expected a number of nanoseconds, got a string");
  EXPECT_EQ(config_error([] { from_json(json::parse(R"({"address_map": {"apb": "0x30zz"}})")); }, "address_map.apb"),
            "address_map.apb = \"0x30zz\": expected an integer or a \"0x...\" string (0x0..0xfffff000)");
  EXPECT_EQ(config_error([] { from_json(json::parse(R"({"address_map": {"apb": true}})")); }, "address_map.apb"),
            "address_map.apb = true: expected an integer or a \"0x...\" string (0x0..0xfffff000), got a boolean");
  EXPECT_EQ(config_error([] { from_json(json::parse(R"({"mode": 1})")); }, "mode"),
            "mode = 1: expected a string, got a number");
  EXPECT_EQ(config_error([] { from_json(json::parse(R"({"generation": null})")); }, "generation"),
            "generation = null: expected a string, got null");
  EXPECT_EQ(config_error([] { from_json(json::parse(R"({"tensor_engine": {"clock_ghz": "fast"}})")); },
                         "tensor_engine.clock_ghz"),
            "tensor_engine.clock_ghz = \"fast\": expected a number of GHz, got a string");
  EXPECT_EQ(config_error([] { from_json(json::parse(R"({"csrs": {"unmapped": "ignore"}})")); }, "csrs.unmapped"),
            "csrs.unmapped = \"ignore\": unknown policy (error, read_zero_write_ignore)");
  EXPECT_EQ(config_error([] { from_json(json::parse(R"({"timing": {"mm_init_latency": "64"}})")); },
                         "timing.mm_init_latency"),
            "timing.mm_init_latency = \"64\": expected an integer (0..1048576), got a string");
  EXPECT_EQ(config_error([] { from_json(json::parse(R"({"timing": {"fp32_factor": 2.5}})")); }, "timing.fp32_factor"),
            "timing.fp32_factor = 2.5: expected an integer (1..1048576), got a fraction");
  EXPECT_EQ(config_error([] { from_json(json::parse(R"({"seq": {"quantum_ns": "2 us"}})")); }, "seq.quantum_ns"),
            "seq.quantum_ns = \"2 us\": expected a number of nanoseconds, got a string");
}

// JSON has one number type: 1e2 and 64.0 are whole numbers, and an integer past 64 bits (2^64) parses as a double.
// A count key takes the first two as integers and holds the third to its range; neither is "a fraction".
TEST(JsonErrors, AWholeNumberWrittenAsADoubleIsAnInteger) {
  const VpConfig c = from_json(json::parse(R"({"timing": {"fp32_factor": 1e2}, "seq": {"queue_depth": 64.0},
                                              "address_map": {"apb_size": 3.2768e4}})"));
  EXPECT_EQ(c.platform.arr_seq.timing.fp32_factor, 100u);
  EXPECT_EQ(c.platform.seq.queue_depth, 64u);
  EXPECT_EQ(c.platform.map.apb_size, 0x8000u);
  EXPECT_EQ(config_error([] { from_json(json::parse(R"({"timing": {"fp32_factor": 18446744073709551616}})")); },
                         "timing.fp32_factor"),
            "timing.fp32_factor = 1.8446744073709552e+19: out of range (1..1048576)");
  EXPECT_EQ(config_error([] { from_json(json::parse(R"({"timing": {"fp32_factor": 1e300}})")); }, "timing.fp32_factor"),
            "timing.fp32_factor = 1e+300: out of range (1..1048576)");
  EXPECT_EQ(config_error([] { from_json(json::parse(R"({"seq": {"queue_depth": 1e6}})")); }, "seq.queue_depth"),
            "seq.queue_depth = 1000000.0: out of range (1..65536)");
  EXPECT_EQ(config_error([] { from_json(json::parse(R"({"seq": {"queue_depth": -1e2}})")); }, "seq.queue_depth"),
            "seq.queue_depth = -100.0: out of range (1..65536)");
  EXPECT_EQ(config_error([] { from_json(json::parse(R"({"seq": {"queue_depth": 1.5e0}})")); }, "seq.queue_depth"),
            "seq.queue_depth = 1.5: expected an integer (1..65536), got a fraction");
}

TEST(JsonErrors, OutOfRange) {
  EXPECT_EQ(config_error([] { from_json(json::parse(R"({"arr_seq": {"ififo_depth": 0}})")); }, "arr_seq.ififo_depth"),
            "arr_seq.ififo_depth = 0: out of range (1..65536)");
  EXPECT_EQ(config_error([] { from_json(json::parse(R"({"seq": {"queue_depth": 65537}})")); }, "seq.queue_depth"),
            "seq.queue_depth = 65537: out of range (1..65536)");
  EXPECT_EQ(config_error([] { from_json(json::parse(R"({"psum": {"beat_bytes": -64}})")); }, "psum.beat_bytes"),
            "psum.beat_bytes = -64: out of range (1..65536)");
  EXPECT_EQ(config_error([] { from_json(json::parse(R"({"sbuf": {"beat_latency_ns": -1}})")); },
                         "sbuf.beat_latency_ns"),
            "sbuf.beat_latency_ns = -1: out of range (0..1000000 ns)");
  EXPECT_EQ(config_error([] { from_json(json::parse(R"({"csrs": {"access_time_ns": 0.0001}})")); },
                         "csrs.access_time_ns"),
            "csrs.access_time_ns = 0.0001: below the simulation time resolution (1 ps)");
  EXPECT_EQ(config_error([] { from_json(json::parse(R"({"tensor_engine": {"clock_ghz": 0.05}})")); },
                         "tensor_engine.clock_ghz"),
            "tensor_engine.clock_ghz = 0.05: out of range (0.1..10 GHz)");
  EXPECT_EQ(config_error([] { from_json(json::parse(R"({"address_map": {"apb_size": "0x3000"}})")); },
                         "address_map.apb_size"),
            "address_map.apb_size = \"0x3000\": out of range (0x4000..0x1000000)");
  EXPECT_EQ(config_error([] { from_json(json::parse(R"({"address_map": {"iq_size": 100}})")); }, "address_map.iq_size"),
            "address_map.iq_size = 100: must be a multiple of 0x40");
  EXPECT_EQ(config_error([] { from_json(json::parse(R"({"address_map": {"apb": "0x3000800"}})")); },
                         "address_map.apb"),
            "address_map.apb = \"0x3000800\": must be a multiple of 0x1000");
  EXPECT_EQ(config_error([] { from_json(json::parse(R"({"address_map": {"iq": "0x100000000"}})")); },
                         "address_map.iq"),
            "address_map.iq = \"0x100000000\": out of range (0x0..0xfffff000)");
  // The bounds themselves are accepted.
  EXPECT_NO_THROW(from_json(json::parse(R"({"arr_seq": {"ififo_depth": 1}, "seq": {"queue_depth": 65536},
      "tensor_engine": {"clock_ghz": 10}, "csrs": {"access_time_ns": 1000000}})")));
}

TEST(JsonErrors, TimingKeysOutOfRangeNameTheKeyTheValueAndTheRange) {
  EXPECT_EQ(config_error([] { from_json(json::parse(R"({"timing": {"fp32_factor": 0}})")); }, "timing.fp32_factor"),
            "timing.fp32_factor = 0: out of range (1..1048576)");
  for (const test::TimingKey& k : test::timing_keys()) {
    SCOPED_TRACE(k.name);
    const std::string key = std::string("timing.") + k.name;
    const std::string range = " (" + std::to_string(k.lo) + "..1048576)";
    json j;
    j["timing"][k.name] = test::kTimingMax + 1;
    EXPECT_EQ(config_error([&] { from_json(j); }, key), key + " = 1048577: out of range" + range);
    j["timing"][k.name] = -1;
    EXPECT_EQ(config_error([&] { from_json(j); }, key), key + " = -1: out of range" + range);
    // Far beyond unsigned: rejected, not truncated into range.
    j["timing"][k.name] = std::uint64_t{1} << 32;
    EXPECT_EQ(config_error([&] { from_json(j); }, key), key + " = 4294967296: out of range" + range);
    if (k.lo > 0) {
      j["timing"][k.name] = k.lo - 1;
      EXPECT_EQ(config_error([&] { from_json(j); }, key), key + " = " + std::to_string(k.lo - 1) + ": out of range" + range);
    }
  }
}

TEST(JsonErrors, ThrottleFractionIsInZeroToOne) {
  const char* const key = "timing.throttle_fraction";
  EXPECT_EQ(config_error([] { from_json(json::parse(R"({"timing": {"throttle_fraction": 0}})")); }, key),
            "timing.throttle_fraction = 0: out of range (0.0009765625 .. 1, a share of the full rate)");
  EXPECT_EQ(config_error([] { from_json(json::parse(R"({"timing": {"throttle_fraction": 0.0}})")); }, key),
            "timing.throttle_fraction = 0.0: out of range (0.0009765625 .. 1, a share of the full rate)");
  EXPECT_EQ(config_error([] { from_json(json::parse(R"({"timing": {"throttle_fraction": 1.5}})")); }, key),
            "timing.throttle_fraction = 1.5: out of range (0.0009765625 .. 1, a share of the full rate)");
  EXPECT_EQ(config_error([] { from_json(json::parse(R"({"timing": {"throttle_fraction": -1}})")); }, key),
            "timing.throttle_fraction = -1: out of range (0.0009765625 .. 1, a share of the full rate)");
  EXPECT_EQ(config_error([] { from_json(json::parse(R"({"timing": {"throttle_fraction": 1.0000001}})")); }, key),
            "timing.throttle_fraction = 1.0000001: out of range (0.0009765625 .. 1, a share of the full rate)");
  for (const char* text : {R"("half")", R"("0.5")", "true", "null", "[0.5]"}) {
    SCOPED_TRACE(text);
    const std::string m =
        config_error([&] { from_json(json::parse(std::string(R"({"timing": {"throttle_fraction": )") + text + "}}")); },
                     key);
    // "timing.throttle_fraction = <text>: expected a number in [2^-10, 1], got a <type>"
    EXPECT_EQ(m.rfind(std::string("timing.throttle_fraction = ") + text + ": expected a number", 0), 0u) << m;
    EXPECT_NE(m.find("[0.0009765625, 1]"), std::string::npos) << m;
    const json v = json::parse(text);
    const std::string type = v.is_null() ? "got null" : v.is_array() ? "got an array" : std::string("got a ") + v.type_name();
    EXPECT_EQ(m.substr(m.size() - std::min(m.size(), type.size())), type) << m;
  }
}

TEST(JsonErrors, SeqQuantumOutOfRange) {
  EXPECT_EQ(config_error([] { from_json(json::parse(R"({"seq": {"quantum_ns": -1}})")); }, "seq.quantum_ns"),
            "seq.quantum_ns = -1: out of range (0..1000000 ns)");
  EXPECT_EQ(config_error([] { from_json(json::parse(R"({"seq": {"quantum_ns": -0.5}})")); }, "seq.quantum_ns"),
            "seq.quantum_ns = -0.5: out of range (0..1000000 ns)");
  EXPECT_EQ(config_error([] { from_json(json::parse(R"({"seq": {"quantum_ns": 1000001}})")); }, "seq.quantum_ns"),
            "seq.quantum_ns = 1000001: out of range (0..1000000 ns)");
  EXPECT_EQ(config_error([] { from_json(json::parse(R"({"seq": {"quantum_ns": 0.0001}})")); }, "seq.quantum_ns"),
            "seq.quantum_ns = 0.0001: below the simulation time resolution (1 ps)");
}

TEST(JsonErrors, WindowsThatLeaveThe32BitMap) {
  EXPECT_EQ(config_error([] { from_json(json::parse(R"({"address_map": {"iq": "0xfffff000", "iq_size": "0x2000"}})")); },
                         "address_map.iq"),
            "address_map.iq = 0xfffff000: the window [0xfffff000, 0x100001000) (size 0x2000, address_map.iq_size) "
            "ends beyond the 32-bit address map");
  // The SBUF window's size comes from the generation: 28 MiB on CAYMAN.
  EXPECT_EQ(config_error([] { from_json(json::parse(R"({"generation": "CAYMAN", "address_map": {"sbuf": "0xff000000"}})")); },
                         "address_map.sbuf"),
            "address_map.sbuf = 0xff000000: the window [0xff000000, 0x100c00000) (size 0x1c00000, the CAYMAN SBUF "
            "size) ends beyond the 32-bit address map");
}

TEST(JsonErrors, OverlappingWindows) {
  // iq inside the CSR block.
  EXPECT_EQ(config_error([] { from_json(json::parse(R"({"address_map": {"iq": "0x3002000"}})")); }, "address_map.iq"),
            "address_map.iq = 0x3002000: the iq window [0x3002000, 0x3003000) overlaps the apb window "
            "[0x3000000, 0x3004000) (address_map.apb = 0x3000000)");
  // The CSR block inside PSUM (2 MiB from 0x2000000).
  EXPECT_EQ(config_error([] { from_json(json::parse(R"({"address_map": {"apb": "0x21ff000"}})")); }, "address_map.apb"),
            "address_map.apb = 0x21ff000: the apb window [0x21ff000, 0x2203000) overlaps the psum window "
            "[0x2000000, 0x2200000) (address_map.psum = 0x2000000)");
  // PSUM over SBUF: MARIANA's 32 MiB SBUF ends exactly at 0x2000000, so one page lower collides.
  EXPECT_EQ(config_error([] { from_json(json::parse(R"({"address_map": {"psum": "0x1fff000"}})")); },
                         "address_map.psum"),
            "address_map.psum = 0x1fff000: the psum window [0x1fff000, 0x21ff000) overlaps the sbuf window "
            "[0x0, 0x2000000) (address_map.sbuf = 0x0)");
  // A bigger CSR block that grows into the queue.
  EXPECT_NE(config_error([] { from_json(json::parse(R"({"address_map": {"apb_size": "0x20000"}})")); },
                         "address_map.iq")
                .find("overlaps the apb window [0x3000000, 0x3020000)"),
            std::string::npos);
  // Windows that touch are fine; moving two windows at once is fine when the result does not overlap.
  EXPECT_NO_THROW(from_json(json::parse(R"({"address_map": {"iq": "0x3004000"}})")));
  EXPECT_NO_THROW(from_json(json::parse(R"({"address_map": {"apb": "0x3010000", "iq": "0x3000000"}})")));
}

// The geometry's own rules are tested in test_geometry.cpp; here, that a file reaches them.
TEST(JsonErrors, GeometryOutsideWhatTheModelAddresses) {
  EXPECT_EQ(config_error([] { from_json(json::parse(R"({"geometry": {"sbuf_partition_bytes": 1000}})")); },
                         "geometry.sbuf_partition_bytes"),
            "geometry.sbuf_partition_bytes = 1000: must be a multiple of 4096, at least 4096");
  EXPECT_NO_THROW(from_json(json::parse(R"({"generation": "CAYMAN", "geometry": {"sbuf_partition_bytes": 262144}})")));
  EXPECT_NO_THROW(from_json(json::parse(R"({"generation": "MAVERICK", "geometry": {"pe_cols": 128}})")));
  // Members that follow from the generation or from the others are accepted only with their value.
  for (const char* key : {"psum_partition_bytes", "row_groups", "col_groups", "queues", "sbuf_xbus_ports"}) {
    json j;
    j["geometry"][key] = 7;
    EXPECT_NE(config_error([&] { from_json(j); }, std::string("geometry.") + key).find(" = 7: "), std::string::npos)
        << key;
  }
  EXPECT_EQ(config_error([] { from_json(json::parse(R"({"geometry": {"queues": 8}})")); }, "geometry.queues"),
            "geometry.queues = 8: fixed by the generation in this model (MARIANA: 16)");
  EXPECT_EQ(config_error([] { from_json(json::parse(R"({"geometry": {"psum_partition_bytes": 8192}})")); },
                         "geometry.psum_partition_bytes"),
            "geometry.psum_partition_bytes = 8192: derived: geometry.psum_banks x geometry.psum_bank_bytes (16384); "
            "set those instead");
  EXPECT_NO_THROW(from_json(json::parse(R"({"geometry": {"psum_banks": 4, "psum_partition_bytes": 8192}})")));
  EXPECT_EQ(config_error([] { from_json(json::parse(R"({"geometry": {"pe_rows": "128"}})")); }, "geometry.pe_rows"),
            "geometry.pe_rows = \"128\": expected an integer (1..256), got a string");
}

TEST(JsonErrors, UnknownGeneration) {
  EXPECT_EQ(config_error([] { from_json(json::parse(R"({"generation": "SUNDA"})")); }, "generation"),
            "generation = \"SUNDA\": unknown generation (CAYMAN, MARIANA, MARIANA_PLUS, MAVERICK; or v3, v4, v4+, v5)");
}

TEST(JsonErrors, UnknownMode) {
  EXPECT_EQ(config_error([] { from_json(json::parse(R"({"mode": "fast"})")); }, "mode"),
            "mode = \"fast\": unknown mode (functional, timing or both)");
  for (const char* mode : {"", "functional+timing", " timing", "time", "all"}) {
    json j;
    j["mode"] = mode;
    EXPECT_EQ(config_error([&] { from_json(j); }, "mode"),
              "mode = " + j["mode"].dump() + ": unknown mode (functional, timing or both)");
  }
  EXPECT_EQ(config_error([] { from_json(json::parse(R"({"mode": ["timing"]})")); }, "mode"),
            "mode = [\"timing\"]: expected a string, got an array");
}

TEST(JsonErrors, TheBaseIsUntouchedByAFailedApply) {
  const VpConfig base = preset(Generation::CAYMAN);
  VpConfig copy = base;
  EXPECT_THROW(copy = from_json(json::parse(R"({"arr_seq": {"ififo_depth": 2}, "seq": {"queue_depth": 0}})"), base),
               ConfigError);
  test::expect_same(copy, base);
}

TEST(Validate, ConfigurationsBuiltInCode) {
  VpConfig c = preset(Generation::MARIANA);
  c.platform.arr_seq.ififo_depth = 0;
  EXPECT_EQ(config_error([&] { validate(c); }, "arr_seq.ififo_depth"), "arr_seq.ififo_depth = 0: out of range (1..65536)");

  c = preset(Generation::MARIANA);
  c.sbuf = memory::sbuf_config(Generation::CAYMAN);  // a memory that does not follow the geometry
  EXPECT_EQ(config_error([&] { validate(c); }, "geometry.sbuf_partition_bytes"),
            "geometry.sbuf_partition_bytes = 229376 (sbuf): differs from geometry.sbuf_partition_bytes (262144)");

  c = preset(Generation::MARIANA);
  c.platform.map.iq_size = 0x2000;  // without seq.window_bytes
  EXPECT_EQ(config_error([&] { validate(c); }, "address_map.iq_size"),
            "address_map.iq_size = 0x2000: differs from seq.window_bytes (0x1000); the two are one parameter");

  // Every mode is valid (the preset's is Both).
  for (const SimMode m : {SimMode::Functional, SimMode::Timing, SimMode::Both}) {
    c = preset(Generation::MARIANA);
    c.mode = m;
    EXPECT_NO_THROW(validate(c)) << name(m);
  }

  c = preset(Generation::MARIANA);
  c.platform.arr_seq.timing.sbuf_read_bytes_per_cycle = 0;
  EXPECT_EQ(config_error([&] { validate(c); }, "timing.sbuf_read_bytes_per_cycle"),
            "timing.sbuf_read_bytes_per_cycle = 0: out of range (1..1048576)");
  c = preset(Generation::MARIANA);
  c.platform.arr_seq.timing.psum_write_cycles = 2000000;
  EXPECT_EQ(config_error([&] { validate(c); }, "timing.psum_write_cycles"),
            "timing.psum_write_cycles = 2000000: out of range (0..1048576)");
  for (const double f : {0.0, 1.5, -1.0}) {
    c = preset(Generation::MARIANA);
    c.platform.arr_seq.timing.throttle_fraction = f;
    EXPECT_EQ(config_error([&] { validate(c); }, "timing.throttle_fraction"),
              "timing.throttle_fraction = " + std::string(f == 0 ? "0" : f > 0 ? "1.5" : "-1") +
                  ": out of range (0.0009765625 .. 1, a share of the full rate)");
  }
  c = preset(Generation::MARIANA);
  c.platform.arr_seq.timing.throttle_fraction = std::nan("");
  EXPECT_NE(config_error([&] { validate(c); }, "timing.throttle_fraction").find("out of range (0.0009765625 .. 1, a share of the full rate)"),
            std::string::npos);
  c = preset(Generation::MARIANA);
  c.platform.seq.quantum = sc_core::sc_time(2, sc_core::SC_MS);
  EXPECT_EQ(config_error([&] { validate(c); }, "seq.quantum_ns"), "seq.quantum_ns = 2000000: out of range (0..1000000 ns)");

  c = preset(Generation::MARIANA);
  c.csrs.map.vp_seq = 0x4000;
  EXPECT_NE(config_error([&] { validate(c); }, "").find("csrs.map"), std::string::npos);

  c = preset(Generation::MARIANA);
  c.sbuf.beat_latency = ns(2e6);
  EXPECT_EQ(config_error([&] { validate(c); }, "sbuf.beat_latency_ns"),
            "sbuf.beat_latency_ns = 2000000: out of range (0..1000000 ns)");
}

}  // namespace
}  // namespace pevp::platform

namespace {
// tensor_engine.psum_rounding: rne (default) or stochastic, which needs NeuronCore-v4's PSUM seeds.
TEST(PsumRounding, ParsedFromJsonAndSetAndRefusedOffV4) {
  using pevp::platform::apply_override;
  using pevp::platform::ConfigError;
  using pevp::platform::from_json;
  using pevp::platform::preset;
  using pevp::platform::to_json;
  using pevp::pe::Bf16Rounding;
  pevp::platform::VpConfig c = preset(pevp::isa::Generation::MARIANA);
  EXPECT_EQ(c.psum_rounding, Bf16Rounding::NearestEven);
  apply_override(c, "tensor_engine.psum_rounding=stochastic");
  EXPECT_EQ(c.psum_rounding, Bf16Rounding::Stochastic);
  EXPECT_EQ(to_json(c)["tensor_engine"]["psum_rounding"], "stochastic");
  EXPECT_EQ(from_json(to_json(c)).psum_rounding, Bf16Rounding::Stochastic);
  EXPECT_EQ(pevp::platform::test::config_error([&] { apply_override(c, "tensor_engine.psum_rounding=up"); },
                                               "tensor_engine.psum_rounding"),
            "tensor_engine.psum_rounding = \"up\": unknown rounding (rne, stochastic)");
  for (const auto g : {pevp::isa::Generation::CAYMAN, pevp::isa::Generation::MAVERICK}) {
    pevp::platform::VpConfig other = preset(g);
    const std::string e = pevp::platform::test::config_error(
        [&] { apply_override(other, "tensor_engine.psum_rounding=stochastic"); }, "tensor_engine.psum_rounding");
    EXPECT_NE(e.find("the PSUM stochastic-rounding seeds exist on NeuronCore-v4 only (MARIANA, MARIANA_PLUS)"),
              std::string::npos)
        << e;
  }
}
}  // namespace

namespace {
// checks.hazards: off, warn (the default) or error, case-insensitive; anything else named with the three.
TEST(HazardChecks, ParsedFromJsonAndSetAndRefused) {
  using pevp::platform::apply_override;
  using pevp::platform::from_json;
  using pevp::platform::HazardMode;
  using pevp::platform::preset;
  using pevp::platform::to_json;
  pevp::platform::VpConfig c = preset(pevp::isa::Generation::CAYMAN);
  EXPECT_EQ(c.hazards, HazardMode::Warn);
  EXPECT_EQ(to_json(c)["checks"]["hazards"], "warn");
  apply_override(c, "checks.hazards=ERROR");
  EXPECT_EQ(c.hazards, HazardMode::Error);
  EXPECT_EQ(to_json(c)["checks"]["hazards"], "error");
  EXPECT_EQ(from_json(nlohmann::json::parse(R"({"checks": {"hazards": "off"}})")).hazards, HazardMode::Off);
  EXPECT_EQ(from_json(to_json(c)).hazards, HazardMode::Error);
  EXPECT_EQ(pevp::platform::test::config_error([&] { apply_override(c, "checks.hazards=strict"); }, "checks.hazards"),
            "checks.hazards = \"strict\": unknown hazard mode (off, warn, error)");
  EXPECT_EQ(pevp::platform::test::config_error(
                [] { from_json(nlohmann::json::parse(R"({"checks": {"hazards": 1}})")); }, "checks.hazards"),
            "checks.hazards = 1: expected a string, got a number");
}
}  // namespace

