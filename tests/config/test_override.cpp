// apply_override: --set key=value with the value parsed for the key's type.
#include <gtest/gtest.h>

#include "config_test_util.h"
#include "pevp/pe_array_rtl/rtl_datapath.h"

namespace pevp::platform {
namespace {

using isa::Generation;
using nlohmann::json;
using test::config_error;
using test::ns;

TEST(Override, IntegersInDecimalAndHex) {
  VpConfig c = preset(Generation::MARIANA);
  apply_override(c, "arr_seq.ififo_depth=8");
  apply_override(c, "seq.queue_depth=0x40");
  apply_override(c, " address_map.iq = 0x3020000 ");
  apply_override(c, "address_map.iq_size=8192");
  EXPECT_EQ(c.platform.arr_seq.ififo_depth, 8u);
  EXPECT_EQ(c.platform.seq.queue_depth, 64u);
  EXPECT_EQ(c.platform.map.iq, 0x3020000u);
  EXPECT_EQ(c.platform.map.iq_size, 0x2000u);
  EXPECT_EQ(c.platform.seq.window_bytes, 0x2000u);
}

// A configuration file takes a whole number in any JSON spelling (test_json.cpp); --set takes the same, so a sweep
// or script that writes its numbers through JSON (1e2 comes back as 100.0) passes them on unchanged.
TEST(Override, WholeNumbersInTheSpellingsOfAFile) {
  VpConfig c = preset(Generation::MARIANA);
  apply_override(c, "timing.fp32_factor=1e2");
  apply_override(c, "seq.queue_depth=64.0");
  apply_override(c, "geometry.pe_rows=6.4e1");
  apply_override(c, "address_map.iq_size=8.192E3");
  EXPECT_EQ(c.platform.arr_seq.timing.fp32_factor, 100u);
  EXPECT_EQ(c.platform.seq.queue_depth, 64u);
  EXPECT_EQ(c.geometry.pe_rows, 64u);
  EXPECT_EQ(c.platform.map.iq_size, 8192u);
  // Zero with a sign is zero, in either spelling.
  for (const char* zero : {"-0", "-0.0", "0e0"}) {
    apply_override(c, std::string("timing.mm_init_latency=") + zero);
    EXPECT_EQ(c.platform.arr_seq.timing.mm_init_latency, 0u) << zero;
  }
  // Held to the key's range like any other integer.
  EXPECT_EQ(config_error([&] { apply_override(c, "seq.queue_depth=1e5"); }, "seq.queue_depth"),
            "seq.queue_depth = 100000: out of range (1..65536)");
  EXPECT_EQ(config_error([&] { apply_override(c, "seq.queue_depth=1e20"); }, "seq.queue_depth"),
            "seq.queue_depth = \"1e20\": out of range (1..65536)");
  EXPECT_EQ(config_error([&] { apply_override(c, "geometry.psum_partition_bytes=18446744073709551616"); },
                         "geometry.psum_partition_bytes"),
            "geometry.psum_partition_bytes = \"18446744073709551616\": out of range (< 2^64)");
  // Not whole, negative, not a JSON number, or one no double holds: not an integer of the key.
  for (const char* v : {"2.5", "-1e2", "-0.5", "1e400", "nan", "inf", "1e2x", "0x1p4", "1e"})
    EXPECT_EQ(config_error([&] { apply_override(c, std::string("seq.queue_depth=") + v); }, "seq.queue_depth"),
              std::string("seq.queue_depth = \"") + v + "\": expected an integer (decimal or 0x hex) in 1..65536")
        << v;
  EXPECT_EQ(c.platform.seq.queue_depth, 64u);
}

TEST(Override, TimesWithAndWithoutUnits) {
  VpConfig c = preset(Generation::MARIANA);
  apply_override(c, "sbuf.access_latency_ns=20 ns");
  apply_override(c, "sbuf.beat_latency_ns=500ps");
  apply_override(c, "psum.access_latency_ns=1.5 us");
  apply_override(c, "psum.beat_latency_ns=3");  // a bare number is in the key's unit
  apply_override(c, "csrs.access_time_ns=0.001 ms");
  EXPECT_EQ(c.sbuf.access_latency, ns(20));
  EXPECT_EQ(c.sbuf.beat_latency, sc_core::sc_time(500, sc_core::SC_PS));
  EXPECT_EQ(c.psum.access_latency, ns(1500));
  EXPECT_EQ(c.psum.beat_latency, ns(3));
  EXPECT_EQ(c.csrs.access_time, ns(1000));
}

TEST(Override, ClockInGhzOrMhz) {
  VpConfig c = preset(Generation::MARIANA);
  apply_override(c, "tensor_engine.clock_ghz=2.8");
  EXPECT_DOUBLE_EQ(c.tensor_engine_clock_ghz, 2.8);
  apply_override(c, "tensor_engine.clock_ghz=1400 MHz");
  EXPECT_DOUBLE_EQ(c.tensor_engine_clock_ghz, 1.4);
  apply_override(c, "tensor_engine.clock_ghz=3 GHz");
  EXPECT_DOUBLE_EQ(c.tensor_engine_clock_ghz, 3.0);
}

TEST(Override, NamesAndTheGeneration) {
  VpConfig c = preset(Generation::MARIANA);
  apply_override(c, "seq.queue_depth=9");
  apply_override(c, "csrs.unmapped=read_zero_write_ignore");
  EXPECT_EQ(c.csrs.unmapped, regfile::UnmappedPolicy::ReadZeroWriteIgnore);
  apply_override(c, "mode=functional");
  EXPECT_EQ(c.mode, SimMode::Functional);
  // The generation selects its preset, as in a file: earlier settings are gone.
  apply_override(c, "generation=cayman");
  test::expect_same(c, preset(Generation::CAYMAN));
  // A geometry value equal to the generation's is accepted, in hex too.
  EXPECT_NO_THROW(apply_override(c, "geometry.sbuf_partition_bytes=0x38000"));
}

TEST(Override, EveryMode) {
  VpConfig c = preset(Generation::MARIANA);
  const std::pair<const char*, SimMode> cases[] = {{"functional", SimMode::Functional}, {"timing", SimMode::Timing},
                                                   {"both", SimMode::Both},             {"Functional", SimMode::Functional},
                                                   {" TIMING ", SimMode::Timing},       {"BOTH", SimMode::Both}};
  for (const auto& [text, mode] : cases) {
    SCOPED_TRACE(text);
    apply_override(c, std::string("mode=") + text);
    EXPECT_EQ(c.mode, mode);
    // What a dump says is what --set accepts back.
    VpConfig again = preset(Generation::MARIANA);
    apply_override(again, "mode=" + to_json(c)["mode"].get<std::string>());
    test::expect_same(again, c);
  }
}

TEST(Override, EveryTimingKey) {
  for (const test::TimingKey& k : test::timing_keys()) {
    SCOPED_TRACE(k.name);
    const std::string key = std::string("timing.") + k.name;
    VpConfig c = preset(Generation::MARIANA);
    const unsigned v = k.default_value * 2 + 1;  // off the default
    apply_override(c, key + "=" + std::to_string(v));
    VpConfig expected = preset(Generation::MARIANA);
    expected.platform.arr_seq.timing.*k.member = v;
    test::expect_same(c, expected);  // this key alone changed
    // Through JSON and back.
    EXPECT_EQ(to_json(c)["timing"][k.name], v);
    test::expect_same(from_json(json::parse(to_json(c).dump(2)), preset(Generation::CAYMAN)), c);
    // Hex, and both bounds.
    apply_override(c, key + "=0x100000");
    EXPECT_EQ(c.platform.arr_seq.timing.*k.member, test::kTimingMax);
    apply_override(c, key + "=" + std::to_string(k.lo));
    EXPECT_EQ(c.platform.arr_seq.timing.*k.member, k.lo);
  }
  VpConfig c = preset(Generation::MARIANA);
  apply_override(c, "timing.throttle_fraction=0.5");
  EXPECT_DOUBLE_EQ(c.platform.arr_seq.timing.throttle_fraction, 0.5);
  EXPECT_EQ(to_json(c)["timing"]["throttle_fraction"], 0.5);
  test::expect_same(from_json(json::parse(to_json(c).dump(2)), preset(Generation::CAYMAN)), c);
}

TEST(Override, ThrottleFractionAcceptsOneAndAQuarter) {
  VpConfig c = preset(Generation::MARIANA);
  apply_override(c, "timing.throttle_fraction=1");
  EXPECT_DOUBLE_EQ(c.platform.arr_seq.timing.throttle_fraction, 1.0);
  apply_override(c, "timing.throttle_fraction= 0.25 ");
  EXPECT_DOUBLE_EQ(c.platform.arr_seq.timing.throttle_fraction, 0.25);
  apply_override(c, "timing.throttle_fraction=1e-3");
  EXPECT_DOUBLE_EQ(c.platform.arr_seq.timing.throttle_fraction, 0.001);
}

TEST(Override, SeqQuantumWithAndWithoutUnits) {
  VpConfig c = preset(Generation::MARIANA);
  apply_override(c, "seq.quantum_ns=2 us");
  EXPECT_EQ(c.platform.seq.quantum, sc_core::sc_time(2, sc_core::SC_US));
  EXPECT_EQ(to_json(c)["seq"]["quantum_ns"], 2000);
  apply_override(c, "seq.quantum_ns=250");  // a bare number is nanoseconds
  EXPECT_EQ(c.platform.seq.quantum, ns(250));
  apply_override(c, "seq.quantum_ns=0");
  EXPECT_EQ(c.platform.seq.quantum, sc_core::SC_ZERO_TIME);
  apply_override(c, "seq.quantum_ns=1 ms");
  EXPECT_EQ(c.platform.seq.quantum, sc_core::sc_time(1, sc_core::SC_MS));
  EXPECT_EQ(c.platform.seq.queue_depth, 256u);  // the other seq key is untouched
}

TEST(OverrideErrors, Malformed) {
  VpConfig c = preset(Generation::MARIANA);
  EXPECT_EQ(config_error([&] { apply_override(c, "arr_seq.ififo_depth"); }, ""),
            "--set 'arr_seq.ififo_depth': expected key=value, e.g. arr_seq.ififo_depth=8");
  EXPECT_EQ(config_error([&] { apply_override(c, "=8"); }, ""), "--set '=8': expected key=value, e.g. arr_seq.ififo_depth=8");
  EXPECT_EQ(config_error([&] { apply_override(c, ""); }, ""), "--set '': expected key=value, e.g. arr_seq.ififo_depth=8");
  EXPECT_EQ(config_error([&] { apply_override(c, "seq=5"); }, "seq"),
            "--set 'seq=5': 'seq' is a section; set one of its keys: queue_depth, quantum_ns");
  EXPECT_EQ(config_error([&] { apply_override(c, "timing=64"); }, "timing"),
            std::string("--set 'timing=64': 'timing' is a section; set one of its keys: ") + test::kTimingKeyList);
  test::expect_same(c, preset(Generation::MARIANA));
}

TEST(OverrideErrors, UnknownKeys) {
  VpConfig c = preset(Generation::MARIANA);
  EXPECT_EQ(config_error([&] { apply_override(c, "seq.depth=4"); }, "seq.depth"),
            "unknown key 'seq.depth' (valid keys in 'seq': queue_depth, quantum_ns)");
  EXPECT_EQ(config_error([&] { apply_override(c, "seq.queue_depth.x=4"); }, "seq.queue_depth.x"),
            "unknown key 'seq.queue_depth.x' (valid keys in 'seq': queue_depth, quantum_ns)");
  // The cost model's keys live in `timing`, not in the section of the block they describe.
  EXPECT_EQ(config_error([&] { apply_override(c, "seq.seq_dispatch_cycles=4"); }, "seq.seq_dispatch_cycles"),
            "unknown key 'seq.seq_dispatch_cycles' (valid keys in 'seq': queue_depth, quantum_ns)");
  EXPECT_EQ(config_error([&] { apply_override(c, "timing.mm_init=64"); }, "timing.mm_init"),
            std::string("unknown key 'timing.mm_init' (valid keys in 'timing': ") + test::kTimingKeyList + ")");
  EXPECT_NE(config_error([&] { apply_override(c, "queue.depth=4"); }, "queue.depth")
                .find("unknown key 'queue.depth' (valid top-level keys: generation, mode,"),
            std::string::npos);
  EXPECT_NE(config_error([&] { apply_override(c, "clock=4"); }, "clock").find("valid top-level keys"), std::string::npos);
}

TEST(OverrideErrors, ValuesThatDoNotParse) {
  VpConfig c = preset(Generation::MARIANA);
  EXPECT_EQ(config_error([&] { apply_override(c, "arr_seq.ififo_depth=eight"); }, "arr_seq.ififo_depth"),
            "arr_seq.ififo_depth = \"eight\": expected an integer (decimal or 0x hex) in 1..65536");
  EXPECT_EQ(config_error([&] { apply_override(c, "arr_seq.ififo_depth=-1"); }, "arr_seq.ififo_depth"),
            "arr_seq.ififo_depth = \"-1\": expected an integer (decimal or 0x hex) in 1..65536");
  EXPECT_EQ(config_error([&] { apply_override(c, "address_map.apb=0x"); }, "address_map.apb"),
            "address_map.apb = \"0x\": expected an integer (decimal or 0x hex) in 0x0..0xfffff000");
  EXPECT_EQ(config_error([&] { apply_override(c, "sbuf.access_latency_ns=20 furlongs"); }, "sbuf.access_latency_ns"),
            "sbuf.access_latency_ns = \"20 furlongs\": expected a time such as 20, \"20 ns\" or \"1.5 us\" (units ps, "
            "ns, us, ms, s)");
  EXPECT_NE(config_error([&] { apply_override(c, "sbuf.access_latency_ns="); }, "sbuf.access_latency_ns")
                .find("expected a time"),
            std::string::npos);
  EXPECT_EQ(config_error([&] { apply_override(c, "tensor_engine.clock_ghz=fast"); }, "tensor_engine.clock_ghz"),
            "tensor_engine.clock_ghz = \"fast\": expected a frequency such as 2.4, \"2.4 GHz\" or \"2400 MHz\"");
  EXPECT_EQ(config_error([&] { apply_override(c, "geometry.pe_rows=many"); }, "geometry.pe_rows"),
            "geometry.pe_rows = \"many\": expected an integer (decimal or 0x hex) in 1..256");
  EXPECT_EQ(config_error([&] { apply_override(c, "timing.fp32_factor=four"); }, "timing.fp32_factor"),
            "timing.fp32_factor = \"four\": expected an integer (decimal or 0x hex) in 1..1048576");
  EXPECT_EQ(config_error([&] { apply_override(c, "timing.mm_init_latency=-1"); }, "timing.mm_init_latency"),
            "timing.mm_init_latency = \"-1\": expected an integer (decimal or 0x hex) in 0..1048576");
  EXPECT_EQ(config_error([&] { apply_override(c, "timing.psum_rmw_cycles=2.5"); }, "timing.psum_rmw_cycles"),
            "timing.psum_rmw_cycles = \"2.5\": expected an integer (decimal or 0x hex) in 0..1048576");
  EXPECT_EQ(config_error([&] { apply_override(c, "seq.quantum_ns=2 quanta"); }, "seq.quantum_ns"),
            "seq.quantum_ns = \"2 quanta\": expected a time such as 20, \"20 ns\" or \"1.5 us\" (units ps, ns, us, ms, "
            "s)");
  test::expect_same(c, preset(Generation::MARIANA));
}

TEST(OverrideErrors, RangeAndModelChecksAreFromJsons) {
  VpConfig c = preset(Generation::MARIANA);
  EXPECT_EQ(config_error([&] { apply_override(c, "seq.queue_depth=0"); }, "seq.queue_depth"),
            "seq.queue_depth = 0: out of range (1..65536)");
  EXPECT_EQ(config_error([&] { apply_override(c, "tensor_engine.clock_ghz=20000 MHz"); }, "tensor_engine.clock_ghz"),
            "tensor_engine.clock_ghz = \"20000 MHz\": out of range (0.1..10 GHz)");
  EXPECT_EQ(config_error([&] { apply_override(c, "sbuf.access_latency_ns=2 ms"); }, "sbuf.access_latency_ns"),
            "sbuf.access_latency_ns = \"2 ms\": out of range (0..1000000 ns)");
  EXPECT_EQ(config_error([&] { apply_override(c, "geometry.sbuf_partition_bytes=1000"); },
                         "geometry.sbuf_partition_bytes"),
            "geometry.sbuf_partition_bytes = 1000: must be a multiple of 4096, at least 4096");
  EXPECT_EQ(config_error([&] { apply_override(c, "mode=fast"); }, "mode"),
            "mode = \"fast\": unknown mode (functional, timing or both)");
  EXPECT_EQ(config_error([&] { apply_override(c, "mode="); }, "mode"), "mode = \"\": unknown mode (functional, timing or both)");
  EXPECT_EQ(config_error([&] { apply_override(c, "generation=v9"); }, "generation"),
            "generation = \"v9\": unknown generation (CAYMAN, MARIANA, MARIANA_PLUS, MAVERICK; or v3, v4, v4+, v5)");
  EXPECT_NE(config_error([&] { apply_override(c, "address_map.iq=0x3000000"); }, "address_map.iq")
                .find("overlaps the apb window"),
            std::string::npos);
  test::expect_same(c, preset(Generation::MARIANA));
}

// A time or clock is checked against the text as given, before its unit is converted: "1e308 s" is 1e317 ns, an
// infinity as a double, which the JSON of the override held as null and the message showed as "= null".
TEST(OverrideErrors, ATimeOrClockOutOfRangeIsNamedAsGiven) {
  VpConfig c = preset(Generation::MARIANA);
  EXPECT_EQ(config_error([&] { apply_override(c, "sbuf.access_latency_ns=1e308 s"); }, "sbuf.access_latency_ns"),
            "sbuf.access_latency_ns = \"1e308 s\": out of range (0..1000000 ns)");
  EXPECT_EQ(config_error([&] { apply_override(c, "seq.quantum_ns=1e300 ms"); }, "seq.quantum_ns"),
            "seq.quantum_ns = \"1e300 ms\": out of range (0..1000000 ns)");
  EXPECT_EQ(config_error([&] { apply_override(c, "sbuf.beat_latency_ns=0.1 ps"); }, "sbuf.beat_latency_ns"),
            "sbuf.beat_latency_ns = \"0.1 ps\": below the simulation time resolution (1 ps)");
  EXPECT_EQ(config_error([&] { apply_override(c, "tensor_engine.clock_ghz=1e308 MHz"); }, "tensor_engine.clock_ghz"),
            "tensor_engine.clock_ghz = \"1e308 MHz\": out of range (0.1..10 GHz)");
  EXPECT_EQ(config_error([&] { apply_overrides(c, {"sbuf.access_latency_ns=1e308 s"}); }, "sbuf.access_latency_ns"),
            "sbuf.access_latency_ns = \"1e308 s\": out of range (0..1000000 ns)");
  test::expect_same(c, preset(Generation::MARIANA));
}

TEST(OverrideErrors, TimingKeysOutOfRange) {
  VpConfig c = preset(Generation::MARIANA);
  EXPECT_EQ(config_error([&] { apply_override(c, "timing.fp32_factor=0"); }, "timing.fp32_factor"),
            "timing.fp32_factor = 0: out of range (1..1048576)");
  for (const test::TimingKey& k : test::timing_keys()) {
    SCOPED_TRACE(k.name);
    const std::string key = std::string("timing.") + k.name;
    const std::string range = " (" + std::to_string(k.lo) + "..1048576)";
    EXPECT_EQ(config_error([&] { apply_override(c, key + "=1048577"); }, key), key + " = 1048577: out of range" + range);
    EXPECT_EQ(config_error([&] { apply_override(c, key + "=0x100000000"); }, key),
              key + " = 4294967296: out of range" + range);
    if (k.lo > 0) {
      EXPECT_EQ(config_error([&] { apply_override(c, key + "=0"); }, key), key + " = 0: out of range" + range);
    }
  }
  test::expect_same(c, preset(Generation::MARIANA));
}

TEST(OverrideErrors, ThrottleFraction) {
  VpConfig c = preset(Generation::MARIANA);
  const char* const key = "timing.throttle_fraction";
  EXPECT_EQ(config_error([&] { apply_override(c, "timing.throttle_fraction=0"); }, key),
            "timing.throttle_fraction = 0.0: out of range (0.0009765625 .. 1, a share of the full rate)");
  EXPECT_EQ(config_error([&] { apply_override(c, "timing.throttle_fraction=1.5"); }, key),
            "timing.throttle_fraction = 1.5: out of range (0.0009765625 .. 1, a share of the full rate)");
  EXPECT_EQ(config_error([&] { apply_override(c, "timing.throttle_fraction=-1"); }, key),
            "timing.throttle_fraction = -1.0: out of range (0.0009765625 .. 1, a share of the full rate)");
  EXPECT_EQ(config_error([&] { apply_override(c, "timing.throttle_fraction=half"); }, key),
            "timing.throttle_fraction = \"half\": expected a number such as 0.25");
  EXPECT_EQ(config_error([&] { apply_override(c, "timing.throttle_fraction=25%"); }, key),
            "timing.throttle_fraction = \"25%\": expected a number such as 0.25");
  EXPECT_EQ(config_error([&] { apply_override(c, "timing.throttle_fraction="); }, key),
            "timing.throttle_fraction = \"\": expected a number such as 0.25");
  EXPECT_EQ(config_error([&] { apply_override(c, "timing.throttle_fraction=nan"); }, key),
            "timing.throttle_fraction = \"nan\": expected a number such as 0.25");
  test::expect_same(c, preset(Generation::MARIANA));
}

TEST(OverrideErrors, SeqQuantumIsNeverNegative) {
  VpConfig c = preset(Generation::MARIANA);
  EXPECT_EQ(config_error([&] { apply_override(c, "seq.quantum_ns=-1"); }, "seq.quantum_ns"),
            "seq.quantum_ns = \"-1\": out of range (0..1000000 ns)");
  EXPECT_EQ(config_error([&] { apply_override(c, "seq.quantum_ns=-2 us"); }, "seq.quantum_ns"),
            "seq.quantum_ns = \"-2 us\": out of range (0..1000000 ns)");
  EXPECT_EQ(config_error([&] { apply_override(c, "seq.quantum_ns=2 ms"); }, "seq.quantum_ns"),
            "seq.quantum_ns = \"2 ms\": out of range (0..1000000 ns)");
  test::expect_same(c, preset(Generation::MARIANA));
}

}  // namespace
}  // namespace pevp::platform

namespace pevp::platform {
namespace {

TEST(OverrideErrors, InvalidUtf8IsRefusedWithItsOffset) {
  VpConfig c = preset(isa::Generation::MARIANA);
  // A lone continuation byte, a truncated sequence, an overlong NUL, a surrogate:
  // each refused with the byte and offset, never echoed raw or thrown as a JSON type error.
  EXPECT_EQ(test::config_error([&] { apply_override(c, "generation=\xff"); }, ""),
            "--set 'generation=\\xFF': not valid UTF-8 (byte 0xff at offset 11)");
  EXPECT_EQ(test::config_error([&] { apply_override(c, "mode=caf\xc3"); }, ""),
            "--set 'mode=caf\\xC3': not valid UTF-8 (byte 0xc3 at offset 8)");
  EXPECT_EQ(test::config_error([&] { apply_override(c, "timing.\xc0\x80=1"); }, ""),
            "--set 'timing.\\xC0\\x80=1': not valid UTF-8 (byte 0xc0 at offset 7)");
  EXPECT_EQ(test::config_error([&] { apply_override(c, "mode=\xed\xa0\x80"); }, ""),
            "--set 'mode=\\xED\\xA0\\x80': not valid UTF-8 (byte 0xed at offset 5)");
  // Well-formed UTF-8 reaches the key's own check.
  EXPECT_NE(test::config_error([&] { apply_override(c, "mode=caf\xc3\xa9"); }, "mode").find("unknown mode"),
            std::string::npos);
}

// pe_array.impl (docs/configuration.md): cpp or rtl, the RTL only where this build has the PE tile and on an array
// of the size it was built for (32 x 32), and never in the timing-only mode.
TEST(Override, PeArrayImplTakesCppOrRtlAndRefusesWhatTheTileCannotRun) {
  using pevp::platform::PeArrayImpl;
  VpConfig c = preset(Generation::MARIANA);
  EXPECT_EQ(c.pe_array_impl, PeArrayImpl::Cpp);
  EXPECT_EQ(to_json(c)["pe_array"]["impl"], "cpp");
  const std::string unknown = config_error([&] { apply_override(c, "pe_array.impl=verilog"); }, "pe_array.impl");
  EXPECT_NE(unknown.find("unknown implementation (cpp, rtl)"), std::string::npos) << unknown;
  const std::vector<std::string> rtl_32 = {"geometry.pe_rows=32", "geometry.pe_cols=32", "pe_array.impl=rtl"};
  if (!pevp::pe_array_rtl::available()) {
    // A build without Verilator has no tile to run: refused at validation, saying why.
    const std::string why = config_error([&] { apply_overrides(c, rtl_32); }, "pe_array.impl");
    EXPECT_NE(why.find("this build has no PE tile RTL"), std::string::npos) << why;
    return;
  }
  VpConfig rtl = c;
  apply_overrides(rtl, rtl_32);
  EXPECT_EQ(rtl.pe_array_impl, PeArrayImpl::Rtl);
  EXPECT_EQ(to_json(rtl)["pe_array"]["impl"], "rtl");
  // The preset's 128 x 128 array is not a size the tile was built for: the message names the sizes that were.
  const std::string size = config_error([&] { apply_override(c, "pe_array.impl=rtl"); }, "pe_array.impl");
  EXPECT_NE(size.find("the RTL tile was built for 32x32"), std::string::npos) << size;
  EXPECT_NE(size.find("not a 128x128 array"), std::string::npos) << size;
  const std::string timing =
      config_error([&] { apply_overrides(c, {"geometry.pe_rows=32", "geometry.pe_cols=32", "pe_array.impl=rtl",
                                             "mode=timing"}); },
                   "pe_array.impl");
  EXPECT_NE(timing.find("mode = timing executes no arithmetic"), std::string::npos) << timing;
}

}  // namespace
}  // namespace pevp::platform
