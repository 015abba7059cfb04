// The scoreboard example (docs/cosim-reference.md "Scoreboard"): a testbench whose device under test computes its
// matmuls its own way -- a naive C++ loop over its own copy of SBUF, standing where an RTL array would -- and checks
// every transaction against the VP's prediction, pevp_expect: the PSUM window the instruction writes (partitions,
// bytes, every fp32 word) and, for the DUT's cycle counter, the completion cycle's presence. The first mismatch is
// reported with the transaction, partition, element and both values, and ends the run with status 1.
//
//   scoreboard_tb                   every transaction matches: exit 0
//   scoreboard_tb --inject N        the DUT adds 1 to one result word of transaction N: exactly that mismatch, exit 1
//   scoreboard_tb --endpoint E      the reference is a `pe-vp serve` VP (pevp_connect) instead of this process's
//
// The transactions: a weight load then a matmul, for several shapes -- full and partial tiles, a PSUM offset, a
// second partition range -- each built as assembly text from the same parameters the DUT is given.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "pevp/pevp.h"
#include "pevp/pevp_numerics.h"

namespace {

constexpr unsigned kMovingOffset = 0x1000;

// One matmul transaction in the DUT's own terms: C[m][n] = sum over k of st[k][m] * mv[k][n] for k < K, m < M,
// n < N, into PSUM partitions psum_partition.. at byte psum_offset.
struct Transaction {
  unsigned k, m, n;
  unsigned psum_partition, psum_offset;
};

// The DUT: its own SBUF image (what the testbench also wrote into the VP's) and a naive loop.
class NaiveArray {
 public:
  NaiveArray(unsigned partitions, unsigned partition_bytes)
      : partition_bytes_(partition_bytes), sbuf_(std::size_t{partitions} * partition_bytes) {}
  void write_sbuf(unsigned partition, unsigned offset, const void* data, std::size_t bytes) {
    std::memcpy(&sbuf_[std::size_t{partition} * partition_bytes_ + offset], data, bytes);
  }
  // The products of one transaction, partition-major: M rows of N fp32 words.
  std::vector<float> matmul(const Transaction& t) const {
    std::vector<float> c(std::size_t{t.m} * t.n, 0.0f);
    for (unsigned m = 0; m < t.m; ++m)
      for (unsigned n = 0; n < t.n; ++n) {
        float acc = 0.0f;
        for (unsigned k = 0; k < t.k; ++k) acc += element(k, m * 2) * element(k, kMovingOffset + n * 2);
        c[std::size_t{m} * t.n + n] = acc;
      }
    return c;
  }

 private:
  float element(unsigned partition, unsigned offset) const {
    std::uint16_t bits;
    std::memcpy(&bits, &sbuf_[std::size_t{partition} * partition_bytes_ + offset], sizeof bits);
    return pevp_bf16_to_f32(bits);
  }
  unsigned partition_bytes_;
  std::vector<std::uint8_t> sbuf_;
};

std::string program_of(const Transaction& t) {
  char text[1024];
  std::snprintf(text, sizeof text,
                ".gen MARIANA\n"
                "ldweights src=sbuf[0]:[1,%u] in_dtype=bf16 num_active_rows=%u num_active_cols=%u row_grp=0xF "
                "col_grp=0xF\n"
                "matmul src=sbuf[0]+0x%x:[1,%u] in_dtype=bf16 num_active_rows=%u num_active_cols=%u row_grp=0xF "
                "col_grp=0xF psum_accumulate_flags=SINGLE dst=psum[%u]+0x%x:[1,%u]\n",
                t.m, t.k, t.m, kMovingOffset, t.n, t.k, t.m, t.psum_partition, t.psum_offset, t.n);
  return text;
}

int fail(pevp_vp* vp, const char* what) {
  std::printf("scoreboard_tb: %s: %s\n", what, vp ? pevp_last_error(vp) : pevp_open_error());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  long inject = -1;
  const char* endpoint = nullptr;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--inject") == 0 && i + 1 < argc) inject = std::atol(argv[++i]);
    else if (std::strcmp(argv[i], "--endpoint") == 0 && i + 1 < argc) endpoint = argv[++i];
    else {
      std::printf("usage: scoreboard_tb [--inject N] [--endpoint ENDPOINT]\n");
      return 2;
    }
  }
  pevp_vp* vp = nullptr;
  if ((endpoint ? pevp_connect(endpoint, &vp) : pevp_open("MARIANA", &vp)) != PEVP_OK) return fail(nullptr, "open");
  // Closed on every return, the mismatch exits included: a leak report at exit would replace the exit status and
  // lose the buffered report.
  const std::unique_ptr<pevp_vp, void (*)(pevp_vp*)> closer(vp, pevp_close);
  pevp_map map;
  if (pevp_get_map(vp, &map) != PEVP_OK || pevp_arm(vp, 0, 0, 0) != PEVP_OK) return fail(vp, "arm");

  // SBUF: partition k holds st[k][0..128) at 0 and mv[k][0..64) at kMovingOffset, small integers (exact in bf16 and
  // in every fp32 sum here), written to the VP and to the DUT alike.
  NaiveArray dut(map.partitions, map.sbuf_partition_bytes);
  for (unsigned k = 0; k < map.partitions; ++k) {
    std::uint16_t st[128], mv[64];
    for (unsigned m = 0; m < 128; ++m) st[m] = pevp_f32_to_bf16(static_cast<float>((k * 3 + m) % 7) - 3.0f);
    for (unsigned n = 0; n < 64; ++n) mv[n] = pevp_f32_to_bf16(static_cast<float>((k + 2 * n) % 5) - 2.0f);
    const std::uint64_t base = map.sbuf + std::uint64_t{k} * map.sbuf_partition_bytes;
    if (pevp_write(vp, base, st, sizeof st) != PEVP_OK || pevp_write(vp, base + kMovingOffset, mv, sizeof mv) != PEVP_OK)
      return fail(vp, "load SBUF");
    dut.write_sbuf(k, 0, st, sizeof st);
    dut.write_sbuf(k, kMovingOffset, mv, sizeof mv);
  }

  const Transaction transactions[] = {
      {128, 128, 64, 0, 0},    // the whole array
      {64, 32, 48, 0, 0x100},  // a partial tile at a PSUM offset
      {17, 5, 3, 40, 0x40},    // odd extents into partitions 40..44
      {128, 1, 1, 127, 0x7FC}, // one column, one element, the last partition
  };
  unsigned checked_words = 0;
  for (unsigned i = 0; i < sizeof transactions / sizeof transactions[0]; ++i) {
    const Transaction& t = transactions[i];
    unsigned char records[2 * 64];
    std::size_t count = 0;
    if (pevp_assemble(vp, program_of(t).c_str(), records, 2, &count) != PEVP_OK || count != 2)
      return fail(vp, "assemble");
    pevp_expectation load, mm;
    if (pevp_expect(vp, records, nullptr, 0, &load) != PEVP_OK) return fail(vp, "expect the weight load");
    std::vector<float> want(std::size_t{t.m} * t.n);
    if (pevp_expect(vp, records + 64, want.data(), want.size() * sizeof(float), &mm) != PEVP_OK)
      return fail(vp, "expect the matmul");
    // The DUT's transaction, checked against the prediction.
    std::vector<float> got = dut.matmul(t);
    if (static_cast<long>(i) == inject) got[got.size() / 2] += 1.0f;
    if (mm.first_partition != t.psum_partition || mm.partitions != t.m || mm.offset != t.psum_offset ||
        mm.bytes != t.n * 4 || mm.element_bytes != 4) {
      std::printf("scoreboard_tb: transaction %u: the DUT writes partitions %u+%u bytes 0x%x+%u, pe-vp predicts "
                  "%u+%u bytes 0x%x+%u\n",
                  i, t.psum_partition, t.m, t.psum_offset, t.n * 4, mm.first_partition, mm.partitions, mm.offset,
                  mm.bytes);
      return 1;
    }
    for (std::size_t w = 0; w < got.size(); ++w)
      if (std::memcmp(&got[w], &want[w], sizeof(float)) != 0) {
        std::printf("scoreboard_tb: transaction %u (instruction %llu, complete at cycle %llu): mismatch at "
                    "partition %u element %u: DUT %g, pe-vp %g\n",
                    i, static_cast<unsigned long long>(mm.instruction),
                    static_cast<unsigned long long>(mm.complete_cycle),
                    t.psum_partition + static_cast<unsigned>(w / t.n), static_cast<unsigned>(w % t.n), got[w],
                    want[w]);
        return 1;
      }
    if (!(load.complete_cycle <= mm.start_cycle && mm.start_cycle < mm.complete_cycle)) {
      std::printf("scoreboard_tb: transaction %u: cycles out of order (load complete %llu, matmul start %llu, "
                  "complete %llu)\n",
                  i, static_cast<unsigned long long>(load.complete_cycle),
                  static_cast<unsigned long long>(mm.start_cycle), static_cast<unsigned long long>(mm.complete_cycle));
      return 1;
    }
    checked_words += static_cast<unsigned>(got.size());
    std::printf("scoreboard_tb: transaction %u: %u x %u x %u matches (%zu words, complete at cycle %llu)\n", i, t.k,
                t.m, t.n, got.size(), static_cast<unsigned long long>(mm.complete_cycle));
  }
  std::printf("scoreboard_tb: every transaction matches (%u words)\n", checked_words);
  return 0;
}
