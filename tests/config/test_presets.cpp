// The presets against the public figures (FACTS.md "Geometry", "Timing") and the
// model choices recorded in docs/configuration.md and docs/model-decisions.md.
#include <gtest/gtest.h>

#include "config_test_util.h"

namespace pevp::platform {
namespace {

using isa::Generation;
using test::ns;

constexpr std::uint32_t KiB = 1024;

TEST(Presets, SbufAndPsumFollowTheGenerationsPublicGeometry) {
  // FACTS.md: SBUF 128 x 224 KiB (v3), 128 x 256 KiB (v4); PSUM 128 x 16 KiB in
  // 2 KiB banks on every generation. MAVERICK keeps v4's memories (D-GEO-V5).
  const struct {
    Generation gen;
    std::uint32_t sbuf_partition;
  } cases[] = {{Generation::CAYMAN, 224 * KiB},
               {Generation::MARIANA, 256 * KiB},
               {Generation::MARIANA_PLUS, 256 * KiB},
               {Generation::MAVERICK, 256 * KiB}};
  for (const auto& c : cases) {
    SCOPED_TRACE(std::string(isa::name(c.gen)));
    const VpConfig p = preset(c.gen);
    EXPECT_EQ(p.gen(), c.gen);
    EXPECT_EQ(p.sbuf.name, "sbuf");
    EXPECT_EQ(p.sbuf.partitions, 128u);
    EXPECT_EQ(p.sbuf.partition_bytes, c.sbuf_partition);
    EXPECT_EQ(p.sbuf.bank_bytes, 0u);
    EXPECT_EQ(p.psum.name, "psum");
    EXPECT_EQ(p.psum.partitions, 128u);
    EXPECT_EQ(p.psum.partition_bytes, 16 * KiB);
    EXPECT_EQ(p.psum.bank_bytes, 2 * KiB);
    EXPECT_EQ(p.sbuf.size(), 128ull * c.sbuf_partition);
    EXPECT_EQ(p.psum.size(), 2ull * KiB * KiB);
  }
}

TEST(Presets, GeometryIsDumpedPerGeneration) {
  const nlohmann::json cayman = to_json(preset(Generation::CAYMAN))["geometry"];
  EXPECT_EQ(cayman, nlohmann::json::parse(R"({"partitions": 128, "sbuf_partition_bytes": 229376,
      "psum_partition_bytes": 16384, "psum_bank_bytes": 2048, "psum_banks": 8, "pe_rows": 128, "pe_cols": 128,
      "row_groups": 4, "col_groups": 4, "queues": 16, "sbuf_xbus_ports": 8})"));
  const nlohmann::json maverick = to_json(preset(Generation::MAVERICK))["geometry"];
  EXPECT_EQ(maverick["sbuf_partition_bytes"], 262144);
  EXPECT_EQ(maverick["pe_rows"], 128);
  EXPECT_EQ(maverick["pe_cols"], 256);    // spec 11: C256 tiles
  EXPECT_EQ(maverick["col_groups"], 8);   // of 32 columns, as on the 128-column arrays
}

TEST(Presets, TensorEngineClock) {
  // FACTS.md: 2.4 GHz on v3 and v4; the model keeps it on MARIANA_PLUS and MAVERICK.
  for (Generation g : isa::kAllGenerations) EXPECT_DOUBLE_EQ(preset(g).tensor_engine_clock_ghz, 2.4) << isa::name(g);
}

TEST(Presets, ModelChoicesAreTheSameOnEveryGeneration) {
  for (Generation g : isa::kAllGenerations) {
    SCOPED_TRACE(std::string(isa::name(g)));
    const VpConfig p = preset(g);
    EXPECT_EQ(p.mode, SimMode::Both);  // data and time (docs/configuration.md "mode")
    // D-ADDR and D-PLATFORM-MAP.
    EXPECT_EQ(p.platform.map.sbuf, 0x0u);
    EXPECT_EQ(p.platform.map.psum, 0x2000000u);
    EXPECT_EQ(p.platform.map.apb, 0x3000000u);
    EXPECT_EQ(p.platform.map.apb_size, 0x4000u);
    EXPECT_EQ(p.platform.map.iq, 0x3010000u);
    EXPECT_EQ(p.platform.map.iq_size, 0x1000u);
    EXPECT_EQ(p.platform.seq.window_bytes, 0x1000u);
    EXPECT_EQ(p.platform.arr_seq.ififo_depth, 16u);  // D-IFIFO
    EXPECT_EQ(p.platform.seq.queue_depth, 256u);     // D-IQ
    EXPECT_EQ(p.sbuf.access_latency, ns(10));        // docs/memory.md
    EXPECT_EQ(p.sbuf.beat_latency, ns(1));
    EXPECT_EQ(p.sbuf.beat_bytes, 64u);
    EXPECT_EQ(p.psum.access_latency, ns(10));
    EXPECT_EQ(p.psum.beat_latency, ns(1));
    EXPECT_EQ(p.psum.beat_bytes, 64u);
    EXPECT_EQ(p.csrs.access_time, ns(20));  // D-APB-TIME
    EXPECT_EQ(p.csrs.unmapped, regfile::UnmappedPolicy::Error);
    EXPECT_EQ(p.platform.seq.quantum, ns(1000));  // temporal decoupling: 1 us run-ahead
    // The cost model (cost_model.h TimingParams; docs/configuration.md "timing").
    const arrseq::TimingParams& t = p.platform.arr_seq.timing;
    EXPECT_EQ(t.mm_init_latency, 64u);           // FACTS.md MM_INIT_LATENCY (v2)
    EXPECT_EQ(t.fp32_factor, 4u);                // FACTS.md fp32 ~4x
    EXPECT_EQ(t.ls_elements_per_cycle, 4u);      // FACTS.md LoadStationary ~ elements/4
    EXPECT_EQ(t.ls_to_mm_cycles, 4u);
    EXPECT_EQ(t.sbuf_read_bytes_per_cycle, 8u);
    EXPECT_EQ(t.sbuf_access_cycles, 60u);        // FACTS.md static ~60 cycles (v2)
    EXPECT_EQ(t.fill_cycles_per_row, 1u);
    EXPECT_EQ(t.drain_cycles_per_col, 1u);
    EXPECT_EQ(t.psum_write_cycles, 8u);
    EXPECT_EQ(t.psum_rmw_cycles, 4u);
    EXPECT_EQ(t.pe_regwrite_cycles, 4u);
    EXPECT_EQ(t.seq_dispatch_cycles, 16u);
    EXPECT_EQ(t.stagger_wake_cycles, 8u);
    EXPECT_DOUBLE_EQ(t.throttle_fraction, 0.25);
    for (const test::TimingKey& k : test::timing_keys()) EXPECT_EQ(t.*k.member, k.default_value) << k.name;
    EXPECT_NO_THROW(validate(p));
  }
}

TEST(Presets, TimingDefaultsAreTheCostModelsOwn) {
  // One set of defaults: the preset must not drift from TimingParams{} (what
  // CostModel uses when built without a configuration) nor SeqConfig{}.
  const arrseq::TimingParams plain;
  const seq::SeqConfig plain_seq;
  for (Generation g : isa::kAllGenerations) {
    SCOPED_TRACE(std::string(isa::name(g)));
    const VpConfig p = preset(g);
    for (const test::TimingKey& k : test::timing_keys())
      EXPECT_EQ(p.platform.arr_seq.timing.*k.member, plain.*k.member) << k.name;
    EXPECT_DOUBLE_EQ(p.platform.arr_seq.timing.throttle_fraction, plain.throttle_fraction);
    EXPECT_DOUBLE_EQ(p.platform.arr_seq.timing.clock_ghz, p.tensor_engine_clock_ghz);
    EXPECT_EQ(p.platform.seq.quantum, plain_seq.quantum);
  }
}

TEST(Presets, DefaultConstructedIsTheMarianaPreset) {
  test::expect_same(VpConfig{}, preset(Generation::MARIANA));
}

TEST(Presets, PlatformConfigDefaultsAgreeWithThePreset) {
  // Platform is built from PlatformConfig today; the preset must not drift from it.
  const PlatformConfig plain;
  const VpConfig p = preset(plain.gen);
  EXPECT_EQ(p.platform.map.apb, plain.map.apb);
  EXPECT_EQ(p.platform.map.iq, plain.map.iq);
  EXPECT_EQ(p.platform.arr_seq.ififo_depth, plain.arr_seq.ififo_depth);
  EXPECT_EQ(p.platform.seq.queue_depth, plain.seq.queue_depth);
  EXPECT_EQ(p.platform.seq.window_bytes, plain.seq.window_bytes);
  EXPECT_EQ(p.platform.seq.quantum, plain.seq.quantum);
  for (const test::TimingKey& k : test::timing_keys())
    EXPECT_EQ(p.platform.arr_seq.timing.*k.member, plain.arr_seq.timing.*k.member) << k.name;
}

TEST(Presets, MarianaDumpIsExactlyTheDocumentedLayout) {
  // The same text as docs/configuration.md's --dump-config example.
  const nlohmann::json expected = nlohmann::json::parse(R"({
    "address_map": {"apb": "0x3000000", "apb_size": "0x4000", "dma": "0x3100000", "dma_size": "0x2000", "hbm_window": "0x40000000", "hbm_window_size": "0x4000000", "iq": "0x3010000", "iq_size": "0x1000", "psum": "0x2000000", "sbuf": "0x0"},
    "arr_seq": {"ififo_depth": 16},
    "checks": {"hazards": "warn"},
    "csrs": {"access_time_ns": 20, "impl": "tlm", "unmapped": "error"},
    "dma": {"descriptor_ns": 600, "engine_gbps": 33.0, "engines": 16, "max_ring_entries": 65536, "queues_per_engine": 16, "row_overhead_ns": 16},
    "energy": {"dma_pj_per_byte": 2.5, "hbm_pj_per_byte": 31.76, "mac_bf16_pj": 2.0, "mac_fp32_pj": 4.6, "mac_fp8_double_row_pj": 0.65, "mac_fp8_pj": 1.1, "mac_mx_pj": 0.425, "psum_pj_per_byte": 1.25, "sbuf_read_pj_per_byte": 2.5, "sbuf_write_pj_per_byte": 2.5, "static_pj_per_pe_cycle": 0.2},
    "generation": "MARIANA",
    "geometry": {"col_groups": 4, "partitions": 128, "pe_cols": 128, "pe_rows": 128, "psum_bank_bytes": 2048, "psum_banks": 8, "psum_partition_bytes": 16384, "queues": 16, "row_groups": 4, "sbuf_partition_bytes": 262144, "sbuf_xbus_ports": 8},
    "hbm": {"bandwidth_gbps": 612.5, "bytes": 19327352832, "channels": 16, "interleave_bytes": 256, "latency_ns": 100},
    "host_memory": {"bandwidth_gbps": 64.0, "bytes": 1073741824, "channels": 1, "interleave_bytes": 256, "latency_ns": 1000},
    "mode": "both",
    "pe_array": {"impl": "cpp"},
    "psum": {"access_latency_ns": 10, "beat_bytes": 64, "beat_latency_ns": 1},
    "sbuf": {"access_latency_ns": 10, "beat_bytes": 64, "beat_latency_ns": 1},
    "seq": {"quantum_ns": 1000, "queue_depth": 256},
    "tensor_engine": {"clock_ghz": 2.4, "psum_rounding": "rne"},
    "timing": {"drain_cycles_per_col": 1, "fill_cycles_per_row": 1, "fp32_factor": 4, "ls_elements_per_cycle": 4, "ls_to_mm_cycles": 4, "mm_init_latency": 64, "model": "pevp", "pe_regwrite_cycles": 4, "psum_rmw_cycles": 4, "psum_write_cycles": 8, "sbuf_access_cycles": 60, "sbuf_read_bytes_per_cycle": 8, "seq_dispatch_cycles": 16, "stagger_wake_cycles": 8, "throttle_fraction": 0.25, "xpose_fp32_factor": 2}
  })");
  EXPECT_EQ(to_json(preset(Generation::MARIANA)), expected);
  // Byte for byte the block in docs/configuration.md ("Dumped preset"): keys sorted, two-space indent.
  EXPECT_EQ(to_json(preset(Generation::MARIANA)).dump(2), R"({
  "address_map": {
    "apb": "0x3000000",
    "apb_size": "0x4000",
    "dma": "0x3100000",
    "dma_size": "0x2000",
    "hbm_window": "0x40000000",
    "hbm_window_size": "0x4000000",
    "iq": "0x3010000",
    "iq_size": "0x1000",
    "psum": "0x2000000",
    "sbuf": "0x0"
  },
  "arr_seq": {
    "ififo_depth": 16
  },
  "checks": {
    "hazards": "warn"
  },
  "csrs": {
    "access_time_ns": 20,
    "impl": "tlm",
    "unmapped": "error"
  },
  "dma": {
    "descriptor_ns": 600,
    "engine_gbps": 33.0,
    "engines": 16,
    "max_ring_entries": 65536,
    "queues_per_engine": 16,
    "row_overhead_ns": 16
  },
  "energy": {
    "dma_pj_per_byte": 2.5,
    "hbm_pj_per_byte": 31.76,
    "mac_bf16_pj": 2.0,
    "mac_fp32_pj": 4.6,
    "mac_fp8_double_row_pj": 0.65,
    "mac_fp8_pj": 1.1,
    "mac_mx_pj": 0.425,
    "psum_pj_per_byte": 1.25,
    "sbuf_read_pj_per_byte": 2.5,
    "sbuf_write_pj_per_byte": 2.5,
    "static_pj_per_pe_cycle": 0.2
  },
  "generation": "MARIANA",
  "geometry": {
    "col_groups": 4,
    "partitions": 128,
    "pe_cols": 128,
    "pe_rows": 128,
    "psum_bank_bytes": 2048,
    "psum_banks": 8,
    "psum_partition_bytes": 16384,
    "queues": 16,
    "row_groups": 4,
    "sbuf_partition_bytes": 262144,
    "sbuf_xbus_ports": 8
  },
  "hbm": {
    "bandwidth_gbps": 612.5,
    "bytes": 19327352832,
    "channels": 16,
    "interleave_bytes": 256,
    "latency_ns": 100
  },
  "host_memory": {
    "bandwidth_gbps": 64.0,
    "bytes": 1073741824,
    "channels": 1,
    "interleave_bytes": 256,
    "latency_ns": 1000
  },
  "mode": "both",
  "pe_array": {
    "impl": "cpp"
  },
  "psum": {
    "access_latency_ns": 10,
    "beat_bytes": 64,
    "beat_latency_ns": 1
  },
  "sbuf": {
    "access_latency_ns": 10,
    "beat_bytes": 64,
    "beat_latency_ns": 1
  },
  "seq": {
    "quantum_ns": 1000,
    "queue_depth": 256
  },
  "tensor_engine": {
    "clock_ghz": 2.4,
    "psum_rounding": "rne"
  },
  "timing": {
    "drain_cycles_per_col": 1,
    "fill_cycles_per_row": 1,
    "fp32_factor": 4,
    "ls_elements_per_cycle": 4,
    "ls_to_mm_cycles": 4,
    "mm_init_latency": 64,
    "model": "pevp",
    "pe_regwrite_cycles": 4,
    "psum_rmw_cycles": 4,
    "psum_write_cycles": 8,
    "sbuf_access_cycles": 60,
    "sbuf_read_bytes_per_cycle": 8,
    "seq_dispatch_cycles": 16,
    "stagger_wake_cycles": 8,
    "throttle_fraction": 0.25,
    "xpose_fp32_factor": 2
  }
})");
  // Integral times print as integers, not 10.0.
  EXPECT_EQ(to_json(preset(Generation::MARIANA))["sbuf"].dump(),
            R"({"access_latency_ns":10,"beat_bytes":64,"beat_latency_ns":1})");
}

}  // namespace
}  // namespace pevp::platform

namespace pevp::platform {
namespace {

TEST(Presets, MemoryConfigsPassTheMemorysOwnCheck) {
  for (isa::Generation g : isa::kAllGenerations) {
    VpConfig c = preset(g);
    EXPECT_EQ(memory::check_config(c.sbuf), "") << isa::name(g);
    EXPECT_EQ(memory::check_config(c.psum), "") << isa::name(g);
    apply_override(c, "psum.beat_bytes=1");  // the smallest accepted value is still a usable memory
    EXPECT_EQ(memory::check_config(c.psum), "") << isa::name(g);
  }
}

TEST(Presets, ARelocatedMapElaboratesAPlatform) {
  // The bus router throws on overlapping windows; a map the configuration accepts must elaborate.
  VpConfig c = preset(isa::Generation::CAYMAN);
  apply_override(c, "address_map.sbuf=0x10000000");
  apply_override(c, "address_map.apb=0x1c00000");  // right after CAYMAN's 28 MiB SBUF at 0
  apply_override(c, "address_map.sbuf=0x0");
  apply_override(c, "address_map.iq=0x1c04000");   // touching the CSR block
  apply_override(c, "address_map.iq_size=0x2000");
  Platform vp("vp", c.platform);
  EXPECT_EQ(vp.config().map.apb, 0x1c00000u);
  EXPECT_EQ(vp.config().map.iq, 0x1c04000u);
  EXPECT_EQ(vp.sbuf.size(), 128u * 224 * 1024);
}

}  // namespace
}  // namespace pevp::platform
