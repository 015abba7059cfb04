#include "pevp/platform/samples.h"

#include "pevp/isa/builders.h"

namespace pevp::platform {

using namespace pevp::isa;

namespace {
// SBUF address of byte `offset` in partition 0 (partition-major layout).
constexpr std::uint32_t sbuf(std::uint32_t offset) { return ArrayGeometry::kSbufBase + offset; }
constexpr std::uint32_t psum_bank(unsigned bank) { return ArrayGeometry::kPsumBase + bank * 2048; }
}  // namespace

std::vector<SampleInstruction> sample_stream(Generation g) {
  std::vector<SampleInstruction> out;
  const bool v5 = is_maverick(g);

  // 1. One bf16 matmul: stationary [128 x 128] at SBUF 0x0, moving [128 x 512]
  //    at 0x400, result [128 x 512] fp32 into PSUM bank 0.
  LdweightsArgs lw;
  lw.src = Pattern::row(sbuf(0x0), 128);
  out.push_back({"load a 128x128 bf16 stationary", encode_ldweights(g, lw)});
  MatmulArgs mm;
  mm.src = Pattern::row(sbuf(0x400), 512);
  mm.dst = Pattern::row(psum_bank(0), 512);
  out.push_back({"stream 128x512 bf16 moving -> PSUM bank 0 (SINGLE)", encode_matmul(g, mm)});

  // 2. A K = 256 accumulation group into bank 1: two stationaries, two matmuls.
  lw.src = Pattern::row(sbuf(0x1000), 128);
  out.push_back({"K-tile 0 stationary", encode_ldweights(g, lw)});
  mm.src = Pattern::row(sbuf(0x1400), 512);
  mm.dst = Pattern::row(psum_bank(1), 512);
  mm.psum_flags = psum_flags::MULTI_START;
  out.push_back({"K-tile 0 matmul opens the group (MULTI_START: overwrite)", encode_matmul(g, mm)});
  lw.src = Pattern::row(sbuf(0x2000), 128);
  out.push_back({"K-tile 1 stationary", encode_ldweights(g, lw)});
  mm.src = Pattern::row(sbuf(0x2400), 512);
  mm.psum_flags = psum_flags::MULTI_END;
  out.push_back({"K-tile 1 matmul closes the group (MULTI_END: accumulate)", encode_matmul(g, mm)});
  mm.psum_flags = psum_flags::SINGLE;

  // 3. tf32: fp32 inputs with fp32_mode Low on both operands.
  LdweightsArgs tf = lw;
  tf.src = Pattern::row(sbuf(0x3000), 128);
  tf.in_dtype = Dtype::FP32;
  tf.fp32_mode = Fp32Mode::Low;
  out.push_back({"tf32 stationary (FP32 + fp32_mode Low)", encode_ldweights(g, tf)});
  MatmulArgs tfm = mm;
  tfm.src = Pattern::row(sbuf(0x3200), 256);
  tfm.dst = Pattern::row(psum_bank(2), 256);
  tfm.in_dtype = Dtype::FP32;
  tfm.fp32_mode = Fp32Mode::Low;
  out.push_back({"tf32 matmul -> PSUM bank 2", encode_matmul(g, tfm)});

  // 4. A sub-array tile with its own stationary.
  LdweightsArgs sub = lw;
  sub.src = Pattern::row(sbuf(0x4000), 64);
  sub.in_dtype = Dtype::FP8_EXP4;
  sub.num_active_rows = 64;
  sub.num_active_cols = 64;
  sub.tile = v5 ? Placement{64, 64, 0, 128} : Placement{0, 64, 64, 64};
  if (v5) {  // the whole r64 x c128 tile: 128 columns, so 128 elements per partition
    sub.num_active_cols = 128;
    sub.src = Pattern::row(sbuf(0x4000), 128);
  }
  out.push_back({v5 ? "fp8 stationary on the lower r64 x c128 tile" : "fp8 stationary on the 64x64 tile at rows 0, cols 64",
                 encode_ldweights(g, sub)});
  MatmulArgs subm = mm;
  subm.src = Pattern::row(sbuf(0x4100), 128);
  subm.dst = Pattern::row(psum_bank(3), 128);
  subm.in_dtype = Dtype::FP8_EXP4;
  subm.num_active_rows = sub.num_active_rows;
  subm.num_active_cols = sub.num_active_cols;
  subm.tile = sub.tile;
  out.push_back({"fp8 matmul on that tile -> PSUM bank 3", encode_matmul(g, subm)});

  if (is_v4(g)) {
    lw.src = Pattern::row(sbuf(0x4800), 128);
    out.push_back({"bf16 stationary over the whole array again", encode_ldweights(g, lw)});
    MatmulArgs bf = mm;
    bf.dst = Pattern::row(psum_bank(4), 512);
    bf.out_dtype = Dtype::BFLOAT16;
    out.push_back({"bf16 PSUM output (v4+)", encode_matmul(g, bf)});

    PeSeedArgs save;
    save.mode = PeSeedMode::SAVE_SEED;
    save.identity = Pattern::row(sbuf(kSampleIdentityAddress), 16);
    save.dst_seed = Pattern{ArrayGeometry::kPsumBase, {1, 512}, {2, 8}};
    out.push_back({"PeManageSeed(SAVE): 2048 SR seeds -> PSUM", encode_pe_seed(g, save)});

    Encoder mx(g, Opcode::LDWEIGHTS_MX);
    mx.set("src_mem_pattern.start_addr", sbuf(0x6000))
        .set("src_mem_pattern.scale_addr", sbuf(0x6800))
        .set("src_mem_pattern.step_elem", 1)
        .set("src_mem_pattern.num_elem", 128)
        .set("in_dtype", static_cast<int>(Dtype::FP8_EXP4))
        .set("perf_mode", static_cast<int>(MxPerfMode::QUAD_ROW))
        .set("num_active_rows", 128)
        .set("num_active_cols", 128)
        .set("row_grp", 0xF)
        .set("col_grp", 0xF);
    out.push_back({"LdweightsMX: e4m3 MX stationary with E8M0 scales (v4)", mx.bytes()});
  }

  if (v5) {
    MatmulArgs wide = mm;
    wide.tile = Placement{0, 128, 0, 256};
    wide.num_active_cols = 256;
    wide.dst = Pattern{psum_bank(5), {1, 0, 512}, {512, 1, 2}};
    LdweightsArgs wlw = lw;  // replaces every cell's stationary (the tf32 one included)
    wlw.tile = wide.tile;
    wlw.num_active_cols = 256;
    wlw.src = Pattern::row(sbuf(0x7000), 256);
    out.push_back({"c256 stationary: the full 256-column array", encode_ldweights(g, wlw)});
    out.push_back({"c256 matmul: dst upper dim 2 holds PE cols 0-127 and 128-255", encode_matmul(g, wide)});

    Encoder mx(g, Opcode::LDWEIGHTS);
    mx.set("src_mem_pattern.start_addr", sbuf(0x8000) | ADDR4MARKER_MXTENSOR_V2)
        .set("src_mem_pattern.scale_addr", sbuf(0x8800))
        .set("src_mem_pattern.step_elem[0]", 1)
        .set("src_mem_pattern.num_elem[0]", 256)  // OCT_ROW: two x4 words per column
        .set("src_mem_pattern.num_elem[1]", 1)
        .set("in_dtype", static_cast<int>(Dtype::FP4_EXP2))
        .set("num_active_rows", 128)
        .set("num_active_cols", 128)
        .set("tile_size.row", tile_size::R128)
        .set("tile_size.col", tile_size::C128)
        .set("perf_mode", static_cast<int>(MxPerfMode::OCT_ROW));
    out.push_back({"Ldweights in MX mode (MXTENSOR_V2 source, fp4, OCT_ROW)", mx.bytes()});
  }
  return out;
}

}  // namespace pevp::platform
