// The 64-byte operand structs, byte-exact per generation (spec 000 sections 3-9,
// 11). Every offset the spec states is pinned by a static_assert at the bottom of
// this file; fields the spec does not place are model decisions
// (docs/model-decisions.md, D-LAYOUT-*). All multi-byte fields are little-endian.
// Enum-typed fields are stored as raw bytes: a decoder must see any value.
#pragma once

#include <cstddef>
#include <cstdint>

namespace pevp::isa {

inline constexpr std::size_t kInstructionBytes = 64;

// ---- sub-structs ------------------------------------------------------------
// NEURON_ISA_TPB_HEADER (4 B, opcode in byte 0; the rest is model D-HEADER).
struct Header {
  std::uint8_t opcode;
  std::uint8_t inst_word_len;  // instruction length in 32-bit words: 16
  std::uint8_t debug_cmd;
  std::uint8_t debug_hint;
};

// NEURON_ISA_TPB_EVENTS (8 B; insides are model D-EVENTS): wait on one VP
// semaphore before issue, update one on completion.
struct Events {
  std::uint8_t wait_mode;    // WaitMode
  std::uint8_t wait_sem;     // semaphore index
  std::uint8_t update_mode;  // UpdateMode
  std::uint8_t update_sem;
  std::uint16_t wait_value;
  std::uint16_t update_value;
};

// NEURON_ISA_TPB_TENSOR{1,2,3,4}D (model D-TENSOR): a free-dimension access
// pattern inside each partition. Dimension 0 is innermost; steps are signed and
// in elements; the partition count comes from the instruction
// (num_active_rows / num_active_cols).
struct Tensor1D {
  std::uint32_t start_addr;
  std::int16_t step_elem[1];
  std::uint16_t num_elem[1];
};
struct Tensor2D {
  std::uint32_t start_addr;
  std::int16_t step_elem[2];
  std::uint16_t num_elem[2];
};
struct Tensor3D {
  std::uint32_t start_addr;
  std::int16_t step_elem[3];
  std::uint16_t num_elem[3];
};
struct Tensor4D {
  std::uint32_t start_addr;
  std::int16_t step_elem[4];
  std::uint16_t num_elem[4];
};

// MEM_PATTERN3D union members other than TENSOR3D (model D-MEMPAT). The member
// is selected by marker bits in start_addr: ADDR4MARKER_MXTENSOR_V2 = 0x01
// (spec 7) selects mx; the model's ADDR_MARKER_INDIRECT = bit 31 selects i.
inline constexpr std::uint32_t ADDR4MARKER_MXTENSOR_V2 = 0x01;
inline constexpr std::uint32_t ADDR_MARKER_INDIRECT = 0x80000000u;

struct MxTensorV2 {  // MX data + out-of-band E8M0 scales, 2-D free pattern
  std::uint32_t start_addr;  // carries ADDR4MARKER_MXTENSOR_V2
  std::uint32_t scale_addr;
  std::int16_t step_elem[2];
  std::uint16_t num_elem[2];
};
struct Indirect16B {  // gather: num_elem elements at start + index[i] * step_elem
  std::uint32_t start_addr;  // carries ADDR_MARKER_INDIRECT
  std::uint32_t index_addr;  // SBUF address of the uint16 index vector
  std::int16_t step_elem;
  std::uint16_t num_elem;
  std::uint16_t num_index;
  std::uint16_t reserved;
};
union MemPattern3D {
  Tensor3D t;
  Indirect16B i;
  MxTensorV2 mx;
};

// MXMEM_PATTERN1D (v4 LdweightsMX / MatmulMX source, model D-MEMPAT).
struct MxMemPattern1D {
  std::uint32_t start_addr;
  std::uint32_t scale_addr;
  std::int16_t step_elem;
  std::uint16_t num_elem;
  std::uint32_t index_addr;  // 0 = no indirection
};

// ---- CAYMAN (v3) --------------------------------------------------------------
namespace cayman {
struct S3_LW {
  Header header;                 // 0
  Events events;                 // 4
  std::uint8_t reserved0[4];     // 12
  Tensor3D src_mem_pattern;      // 16
  std::uint8_t in_dtype;         // 32
  std::uint8_t fp32_mode;        // 33
  std::uint8_t transpose_mode;   // 34
  std::uint8_t perf_opt;         // 35
  std::uint8_t tag_weight_mode;  // 36 (model: D-LAYOUT-TAG-WEIGHT)
  std::uint8_t reserved1[1];     // 37
  std::uint8_t num_active_rows;  // 38
  std::uint8_t num_active_cols;  // 39
  std::uint8_t reserved2[4];     // 40
  std::uint8_t row_grp;          // 44
  std::uint8_t col_grp;          // 45
  std::uint8_t reserved3[18];    // 46 - 63
};
struct S3D3_MM {
  Header header;                       // 0
  Events events;                       // 4
  std::uint8_t reserved0[4];           // 12
  Tensor3D src_mem_pattern;            // 16
  std::uint8_t in_dtype;               // 32
  std::uint8_t fp32_mode;              // 33
  std::uint8_t transpose_mode;         // 34
  std::uint8_t perf_opt;               // 35
  std::uint8_t reserved1[2];           // 36
  std::uint8_t num_active_rows;        // 38
  std::uint8_t num_active_cols;        // 39
  std::uint8_t out_dtype;              // 40
  std::uint8_t reserved2[2];           // 41 (no flags byte on v3)
  std::uint8_t psum_accumulate_flags;  // 43
  std::uint8_t row_grp;                // 44
  std::uint8_t col_grp;                // 45
  std::uint8_t reserved3[1];           // 46
  std::uint8_t psum_zero_region;       // 47
  Tensor3D dst_mem_pattern;            // 48
};
}  // namespace cayman

// ---- MARIANA / MARIANA_PLUS (v4) ----------------------------------------------
namespace mariana {
struct S3_LW {
  Header header;                 // 0
  Events events;                 // 4
  std::uint8_t bg_xpose_mode;    // 12
  std::uint8_t reserved0[3];     // 13
  MemPattern3D src_mem_pattern;  // 16
  std::uint8_t in_dtype;         // 32
  std::uint8_t fp32_mode;        // 33
  std::uint8_t reserved1[1];     // 34
  std::uint8_t perf_opt;         // 35
  std::uint8_t tag_weight_mode;  // 36 (model: D-LAYOUT-TAG-WEIGHT)
  std::uint8_t reserved2[1];     // 37
  std::uint8_t num_active_rows;  // 38
  std::uint8_t num_active_cols;  // 39
  std::uint8_t reserved3[4];     // 40
  std::uint8_t row_grp;          // 44
  std::uint8_t col_grp;          // 45
  std::uint8_t reserved4[1];     // 46
  std::uint8_t flags;            // 47 LD_WEIGHT_FLAGS
  std::uint8_t reserved5[16];    // 48 - 63
};
struct S3D3_MM {
  Header header;                       // 0
  Events events;                       // 4
  std::uint8_t reserved0[4];           // 12
  MemPattern3D src_mem_pattern;        // 16
  std::uint8_t in_dtype;               // 32
  std::uint8_t fp32_mode;              // 33
  std::uint8_t reserved1[1];           // 34
  std::uint8_t perf_opt;               // 35
  std::uint8_t reserved2[2];           // 36
  std::uint8_t num_active_rows;        // 38
  std::uint8_t num_active_cols;        // 39
  std::uint8_t out_dtype;              // 40
  std::uint8_t reserved3[1];           // 41
  std::uint8_t flags;                  // 42 MATMUL_FLAGS
  std::uint8_t psum_accumulate_flags;  // 43
  std::uint8_t row_grp;                // 44
  std::uint8_t col_grp;                // 45
  std::uint8_t reserved4[1];           // 46
  std::uint8_t psum_zero_region;       // 47
  MemPattern3D dst_mem_pattern;        // 48
};
}  // namespace mariana

// ---- MAVERICK (v5): both in full from the spec ---------------------------------
namespace maverick {
struct S3_LW {
  Header header;                 // 0
  Events events;                 // 4
  std::uint8_t reserved0[4];     // 12
  MemPattern3D src_mem_pattern;  // 16
  std::uint8_t in_dtype;         // 32
  std::uint8_t fp32_mode;        // 33
  std::uint8_t num_active_rows;  // 34
  std::uint8_t num_active_cols;  // 35 (0 => 256)
  std::uint8_t tile_size;        // 36
  std::uint8_t tile_sel;         // 37
  std::uint8_t flags;            // 38 LD_WEIGHT_FLAGS
  std::uint8_t perf_mode;        // 39 MX_PERF_MODE
  std::uint8_t tag_weight_mode;  // 40 (model: D-LAYOUT-TAG-WEIGHT)
  std::uint8_t reserved1[23];    // 41 - 63
};
struct S3D3_MM {
  Header header;                 // 0
  Events events;                 // 4
  std::uint8_t reserved0[4];     // 12
  MemPattern3D src_mem_pattern;  // 16
  std::uint8_t in_dtype;         // 32
  std::uint8_t fp32_mode;        // 33
  std::uint8_t out_dtype;        // 34
  std::uint8_t num_active_rows;  // 35
  std::uint8_t num_active_cols;  // 36
  std::uint8_t tile_size;        // 37
  std::uint8_t tile_sel;         // 38
  std::uint8_t flags;            // 39 MATMUL_FLAGS
  std::uint8_t perf_mode;        // 40
  std::uint8_t reserved1[7];     // 41 - 47
  MemPattern3D dst_mem_pattern;  // 48
};
}  // namespace maverick

// ---- structs shared across generations ---------------------------------------
// MatmulSparse: TENSOR4D src @12-31, TENSOR3D dst @48-63, psum_zero_region@47
// (spec 9); the middle follows the v3/v4 S3D3_MM tail (model). On v3 byte 42 is
// reserved (no flags byte); on v5 the row_grp/col_grp bytes carry tile_size /
// tile_sel (model).
struct S4D3_MM {
  Header header;                       // 0
  Events events;                       // 4
  Tensor4D src_mem_pattern;            // 12
  std::uint8_t in_dtype;               // 32
  std::uint8_t fp32_mode;              // 33
  std::uint8_t reserved0[4];           // 34
  std::uint8_t num_active_rows;        // 38
  std::uint8_t num_active_cols;        // 39
  std::uint8_t out_dtype;              // 40
  std::uint8_t reserved1[1];           // 41
  std::uint8_t flags;                  // 42 MATMUL_FLAGS (v4+; reserved on v3)
  std::uint8_t psum_accumulate_flags;  // 43
  std::uint8_t row_grp;                // 44 (tile_size on v5)
  std::uint8_t col_grp;                // 45 (tile_sel on v5)
  std::uint8_t reserved2[1];           // 46
  std::uint8_t psum_zero_region;       // 47
  Tensor3D dst_mem_pattern;            // 48
};

// PeManageSeed (spec 5, in full).
struct S2S1D2_PE_SEED {
  Header header;                    // 0
  Events events;                    // 4
  Tensor2D src_seed_mem_pattern;    // 12
  Tensor1D identity_mem_pattern;    // 24
  std::uint8_t identity_dtype;      // 32
  std::uint8_t mode;                // 33 PE_SEED_MODE
  std::uint8_t num_active_rows;     // 34 (16)
  std::uint8_t num_active_cols;     // 35 (128)
  Tensor2D dst_seed_mem_pattern;    // 36
  std::uint8_t reserved[16];        // 48 - 63
};

// LdweightsMX (v4, spec 7): src@16, in_dtype@32, rows@38, cols@39, row_grp@44,
// col_grp@45 stated; perf_mode@35 is model.
struct SMX1_LW {
  Header header;                 // 0
  Events events;                 // 4
  std::uint8_t reserved0[4];     // 12
  MxMemPattern1D src_mem_pattern;  // 16
  std::uint8_t in_dtype;         // 32
  std::uint8_t reserved1[2];     // 33
  std::uint8_t perf_mode;        // 35
  std::uint8_t reserved2[2];     // 36
  std::uint8_t num_active_rows;  // 38
  std::uint8_t num_active_cols;  // 39
  std::uint8_t reserved3[4];     // 40
  std::uint8_t row_grp;          // 44
  std::uint8_t col_grp;          // 45
  std::uint8_t reserved4[18];    // 46 - 63
};

// MatmulMX (v4, spec 7): adds out_dtype@40, psum_accumulate_flags@43,
// psum_zero_region@47, dst MEM_PATTERN3D@48.
struct SMX1D3_MM {
  Header header;                       // 0
  Events events;                       // 4
  std::uint8_t reserved0[4];           // 12
  MxMemPattern1D src_mem_pattern;      // 16
  std::uint8_t in_dtype;               // 32
  std::uint8_t reserved1[2];           // 33
  std::uint8_t perf_mode;              // 35
  std::uint8_t reserved2[2];           // 36
  std::uint8_t num_active_rows;        // 38
  std::uint8_t num_active_cols;        // 39
  std::uint8_t out_dtype;              // 40
  std::uint8_t reserved3[2];           // 41
  std::uint8_t psum_accumulate_flags;  // 43
  std::uint8_t row_grp;                // 44
  std::uint8_t col_grp;                // 45
  std::uint8_t reserved4[1];           // 46
  std::uint8_t psum_zero_region;       // 47
  MemPattern3D dst_mem_pattern;        // 48
};

// LdTags (S3_LT; only the name is in the spec -- whole layout is model): 4-bit
// tags packed four per uint16 (spec 9), force_tag_bits OR'd into the low bits.
struct S3_LT {
  Header header;                 // 0
  Events events;                 // 4
  std::uint8_t reserved0[4];     // 12
  Tensor3D src_mem_pattern;      // 16
  std::uint8_t in_dtype;         // 32 (UINT16)
  std::uint8_t force_tag_bits;   // 33 {0x00, 0x04, 0x08, 0x0C}
  std::uint8_t reserved1[4];     // 34
  std::uint8_t num_active_rows;  // 38
  std::uint8_t num_active_cols;  // 39
  std::uint8_t reserved2[4];     // 40
  std::uint8_t row_grp;          // 44 (tile_size on v5)
  std::uint8_t col_grp;          // 45 (tile_sel on v5)
  std::uint8_t reserved3[18];    // 46 - 63
};

// PeRegWrite (no struct in the spec -- VP layout, model D-LAYOUT-PEREGWRITE).
// The value comes from SBUF (src_mem_pattern, one element) unless
// queue_cfg.bypass_peregwrite_instr makes it register-immediate (imm_value).
struct S_PE_REG_WRITE {
  Header header;                 // 0
  Events events;                 // 4
  std::uint32_t reg_addr;        // 12 PE-array register index
  std::uint32_t imm_value;       // 16
  Tensor1D src_mem_pattern;      // 20
  std::uint8_t reserved0[16];    // 28
  std::uint8_t row_grp;          // 44 (tile_size on v5)
  std::uint8_t col_grp;          // 45 (tile_sel on v5)
  std::uint8_t reserved1[18];    // 46 - 63
};

// ConvLutLoad (v4+, S2_CONVLUT; VP layout): loads a converter table from SBUF.
struct S2_CONVLUT {
  Header header;                 // 0
  Events events;                 // 4
  Tensor2D src_mem_pattern;      // 12
  std::uint8_t lut_dtype;        // 24
  std::uint8_t reserved[39];     // 25 - 63
};

// ---- the contract ----------------------------------------------------------------
#define PEVP_ASSERT_SIZE(T, n) static_assert(sizeof(T) == (n), #T " must be " #n " bytes")
#define PEVP_ASSERT_AT(T, f, n) static_assert(offsetof(T, f) == (n), #T "." #f " must sit at byte " #n)

PEVP_ASSERT_SIZE(Header, 4);
PEVP_ASSERT_AT(Header, opcode, 0);
PEVP_ASSERT_SIZE(Events, 8);
PEVP_ASSERT_SIZE(Tensor1D, 8);
PEVP_ASSERT_SIZE(Tensor2D, 12);
PEVP_ASSERT_SIZE(Tensor3D, 16);
PEVP_ASSERT_SIZE(Tensor4D, 20);
PEVP_ASSERT_SIZE(MxTensorV2, 16);
PEVP_ASSERT_SIZE(Indirect16B, 16);
PEVP_ASSERT_SIZE(MemPattern3D, 16);
PEVP_ASSERT_AT(MxTensorV2, start_addr, 0);
PEVP_ASSERT_AT(Indirect16B, start_addr, 0);
PEVP_ASSERT_SIZE(MxMemPattern1D, 16);

// MAVERICK S3_LW, every field (spec 3).
PEVP_ASSERT_SIZE(maverick::S3_LW, 64);
PEVP_ASSERT_AT(maverick::S3_LW, header, 0);
PEVP_ASSERT_AT(maverick::S3_LW, events, 4);
PEVP_ASSERT_AT(maverick::S3_LW, reserved0, 12);
PEVP_ASSERT_AT(maverick::S3_LW, src_mem_pattern, 16);
PEVP_ASSERT_AT(maverick::S3_LW, in_dtype, 32);
PEVP_ASSERT_AT(maverick::S3_LW, fp32_mode, 33);
PEVP_ASSERT_AT(maverick::S3_LW, num_active_rows, 34);
PEVP_ASSERT_AT(maverick::S3_LW, num_active_cols, 35);
PEVP_ASSERT_AT(maverick::S3_LW, tile_size, 36);
PEVP_ASSERT_AT(maverick::S3_LW, tile_sel, 37);
PEVP_ASSERT_AT(maverick::S3_LW, flags, 38);
PEVP_ASSERT_AT(maverick::S3_LW, perf_mode, 39);
PEVP_ASSERT_AT(maverick::S3_LW, tag_weight_mode, 40);  // model (D-LAYOUT-TAG-WEIGHT)
PEVP_ASSERT_AT(maverick::S3_LW, reserved1, 41);

// MAVERICK S3D3_MM, every field (spec 4); one byte looser than S3_LW.
PEVP_ASSERT_SIZE(maverick::S3D3_MM, 64);
PEVP_ASSERT_AT(maverick::S3D3_MM, header, 0);
PEVP_ASSERT_AT(maverick::S3D3_MM, events, 4);
PEVP_ASSERT_AT(maverick::S3D3_MM, reserved0, 12);
PEVP_ASSERT_AT(maverick::S3D3_MM, src_mem_pattern, 16);
PEVP_ASSERT_AT(maverick::S3D3_MM, in_dtype, 32);
PEVP_ASSERT_AT(maverick::S3D3_MM, fp32_mode, 33);
PEVP_ASSERT_AT(maverick::S3D3_MM, out_dtype, 34);
PEVP_ASSERT_AT(maverick::S3D3_MM, num_active_rows, 35);
PEVP_ASSERT_AT(maverick::S3D3_MM, num_active_cols, 36);
PEVP_ASSERT_AT(maverick::S3D3_MM, tile_size, 37);
PEVP_ASSERT_AT(maverick::S3D3_MM, tile_sel, 38);
PEVP_ASSERT_AT(maverick::S3D3_MM, flags, 39);
PEVP_ASSERT_AT(maverick::S3D3_MM, perf_mode, 40);
PEVP_ASSERT_AT(maverick::S3D3_MM, reserved1, 41);
PEVP_ASSERT_AT(maverick::S3D3_MM, dst_mem_pattern, 48);

// MARIANA S3_LW (spec 3.2).
PEVP_ASSERT_SIZE(mariana::S3_LW, 64);
PEVP_ASSERT_AT(mariana::S3_LW, bg_xpose_mode, 12);
PEVP_ASSERT_AT(mariana::S3_LW, src_mem_pattern, 16);
PEVP_ASSERT_AT(mariana::S3_LW, row_grp, 44);
PEVP_ASSERT_AT(mariana::S3_LW, col_grp, 45);
PEVP_ASSERT_AT(mariana::S3_LW, flags, 47);

// MARIANA S3D3_MM (spec 4).
PEVP_ASSERT_SIZE(mariana::S3D3_MM, 64);
PEVP_ASSERT_AT(mariana::S3D3_MM, out_dtype, 40);
PEVP_ASSERT_AT(mariana::S3D3_MM, flags, 42);
PEVP_ASSERT_AT(mariana::S3D3_MM, psum_accumulate_flags, 43);
PEVP_ASSERT_AT(mariana::S3D3_MM, row_grp, 44);
PEVP_ASSERT_AT(mariana::S3D3_MM, col_grp, 45);
PEVP_ASSERT_AT(mariana::S3D3_MM, psum_zero_region, 47);

// CAYMAN S3_LW (spec 3.2).
PEVP_ASSERT_SIZE(cayman::S3_LW, 64);
PEVP_ASSERT_AT(cayman::S3_LW, transpose_mode, 34);
PEVP_ASSERT_AT(cayman::S3_LW, perf_opt, 35);
PEVP_ASSERT_AT(cayman::S3_LW, num_active_rows, 38);
PEVP_ASSERT_AT(cayman::S3_LW, num_active_cols, 39);
PEVP_ASSERT_AT(cayman::S3_LW, row_grp, 44);
PEVP_ASSERT_AT(cayman::S3_LW, col_grp, 45);

// CAYMAN S3D3_MM (spec 4).
PEVP_ASSERT_SIZE(cayman::S3D3_MM, 64);
PEVP_ASSERT_AT(cayman::S3D3_MM, psum_accumulate_flags, 43);
PEVP_ASSERT_AT(cayman::S3D3_MM, row_grp, 44);
PEVP_ASSERT_AT(cayman::S3D3_MM, col_grp, 45);
PEVP_ASSERT_AT(cayman::S3D3_MM, psum_zero_region, 47);

// S4D3_MM (spec 9): TENSOR4D src @12-31, TENSOR3D dst @48-63.
PEVP_ASSERT_SIZE(S4D3_MM, 64);
PEVP_ASSERT_AT(S4D3_MM, src_mem_pattern, 12);
PEVP_ASSERT_AT(S4D3_MM, in_dtype, 32);
PEVP_ASSERT_AT(S4D3_MM, psum_zero_region, 47);
PEVP_ASSERT_AT(S4D3_MM, dst_mem_pattern, 48);

// S2S1D2_PE_SEED, every field (spec 5).
PEVP_ASSERT_SIZE(S2S1D2_PE_SEED, 64);
PEVP_ASSERT_AT(S2S1D2_PE_SEED, header, 0);
PEVP_ASSERT_AT(S2S1D2_PE_SEED, events, 4);
PEVP_ASSERT_AT(S2S1D2_PE_SEED, src_seed_mem_pattern, 12);
PEVP_ASSERT_AT(S2S1D2_PE_SEED, identity_mem_pattern, 24);
PEVP_ASSERT_AT(S2S1D2_PE_SEED, identity_dtype, 32);
PEVP_ASSERT_AT(S2S1D2_PE_SEED, mode, 33);
PEVP_ASSERT_AT(S2S1D2_PE_SEED, num_active_rows, 34);
PEVP_ASSERT_AT(S2S1D2_PE_SEED, num_active_cols, 35);
PEVP_ASSERT_AT(S2S1D2_PE_SEED, dst_seed_mem_pattern, 36);
PEVP_ASSERT_AT(S2S1D2_PE_SEED, reserved, 48);

// SMX1_LW / SMX1D3_MM (spec 7).
PEVP_ASSERT_SIZE(SMX1_LW, 64);
PEVP_ASSERT_AT(SMX1_LW, src_mem_pattern, 16);
PEVP_ASSERT_AT(SMX1_LW, in_dtype, 32);
PEVP_ASSERT_AT(SMX1_LW, num_active_rows, 38);
PEVP_ASSERT_AT(SMX1_LW, num_active_cols, 39);
PEVP_ASSERT_AT(SMX1_LW, row_grp, 44);
PEVP_ASSERT_AT(SMX1_LW, col_grp, 45);
PEVP_ASSERT_SIZE(SMX1D3_MM, 64);
PEVP_ASSERT_AT(SMX1D3_MM, src_mem_pattern, 16);
PEVP_ASSERT_AT(SMX1D3_MM, in_dtype, 32);
PEVP_ASSERT_AT(SMX1D3_MM, num_active_rows, 38);
PEVP_ASSERT_AT(SMX1D3_MM, num_active_cols, 39);
PEVP_ASSERT_AT(SMX1D3_MM, out_dtype, 40);
PEVP_ASSERT_AT(SMX1D3_MM, psum_accumulate_flags, 43);
PEVP_ASSERT_AT(SMX1D3_MM, row_grp, 44);
PEVP_ASSERT_AT(SMX1D3_MM, col_grp, 45);
PEVP_ASSERT_AT(SMX1D3_MM, psum_zero_region, 47);
PEVP_ASSERT_AT(SMX1D3_MM, dst_mem_pattern, 48);

PEVP_ASSERT_SIZE(S3_LT, 64);
PEVP_ASSERT_SIZE(S_PE_REG_WRITE, 64);
PEVP_ASSERT_SIZE(S2_CONVLUT, 64);

#undef PEVP_ASSERT_SIZE
#undef PEVP_ASSERT_AT

}  // namespace pevp::isa
