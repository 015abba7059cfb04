/* The hard reset from a C99 driver (pevp_reset, docs/sdk.md "Reset"): a program whose first instruction waits on a
 * semaphore nothing sets is stuck -- its wait times out, the SEQ stays busy -- and pevp_reset drops it at once:
 * no simulated time passes, every register checked holds again the value it had when the VP was opened, SBUF and
 * PSUM read zero, setting the semaphore afterwards runs nothing, and a fresh program gives the integer product
 * bit-exactly. Then the refusal of a null handle.
 *
 *   reset            the VP in this process (pevp_open)
 *   reset ENDPOINT   a `pe-vp serve` VP (pevp_connect): the same checks
 *
 * Prints one line per failed check; exit status 0 when none failed. */
#include <stdio.h>

#include "pevp/pevp.h"
#include "pevp/pevp_numerics.h"

enum { K = 64, M = 32, N = 48, MV_OFFSET = 0x1000, STUCK_SEMAPHORE = 7 };

static int failures;

#define CHECK(cond, ...)                 \
  do {                                   \
    if (!(cond)) {                       \
      printf("reset:%d: ", __LINE__);    \
      printf(__VA_ARGS__);               \
      printf("\n");                      \
      ++failures;                        \
    }                                    \
  } while (0)

/* bf16 of a small integer (exact), by the VP's own conversion. */
static uint16_t bf16(int v) { return pevp_f32_to_bf16((float)v); }

static int st_value(int k, int m) { return (k * 3 + m) % 7 - 3; }
static int mv_value(int k, int n) { return (k + 2 * n) % 5 - 2; }

/* C[M x N] = st^T @ mv: a Ldweights and a Matmul (the same program as c_driver.c). */
static const char* kProgram =
    ".gen MARIANA\n"
    "ldweights src=sbuf[0]:[1,32] in_dtype=bf16 num_active_rows=64 num_active_cols=32 row_grp=0xF col_grp=0xF\n"
    "matmul src=sbuf[0]+0x1000:[1,48] in_dtype=bf16 num_active_rows=64 num_active_cols=32 row_grp=0xF col_grp=0xF "
    "psum_accumulate_flags=SINGLE dst=psum[0]:[1,48]\n";

/* The same program whose Ldweights first waits for semaphore 7 to reach 1, which nothing sets. */
static const char* kStuckProgram =
    ".gen MARIANA\n"
    "ldweights src=sbuf[0]:[1,32] in_dtype=bf16 num_active_rows=64 num_active_cols=32 row_grp=0xF col_grp=0xF "
    "events.wait_mode=WAIT_GE events.wait_sem=7 events.wait_value=1\n"
    "matmul src=sbuf[0]+0x1000:[1,48] in_dtype=bf16 num_active_rows=64 num_active_cols=32 row_grp=0xF col_grp=0xF "
    "psum_accumulate_flags=SINGLE dst=psum[0]:[1,48]\n";

static void load_operands(pevp_vp* vp, const pevp_map* map) {
  int k, m, n;
  for (k = 0; k < K; ++k) {
    uint16_t st[M], mv[N];
    for (m = 0; m < M; ++m) st[m] = bf16(st_value(k, m));
    for (n = 0; n < N; ++n) mv[n] = bf16(mv_value(k, n));
    CHECK(pevp_write(vp, map->sbuf + (uint64_t)k * map->sbuf_partition_bytes, st, sizeof st) == PEVP_OK, "load st");
    CHECK(pevp_write(vp, map->sbuf + (uint64_t)k * map->sbuf_partition_bytes + MV_OFFSET, mv, sizeof mv) == PEVP_OK,
          "load mv");
  }
}

static size_t assemble(pevp_vp* vp, const char* source, unsigned char* records) {
  size_t count = 0;
  CHECK(pevp_assemble(vp, source, records, 4, &count) == PEVP_OK && count == 2, "assemble: %s", pevp_last_error(vp));
  return count;
}

/* Runs kProgram to completion; the number of PSUM elements that differ from the integer product. */
static int run_matmul(pevp_vp* vp) {
  unsigned char records[4 * 64];
  pevp_completion done;
  float row[N];
  int m, n, k, wrong = 0;
  const size_t count = assemble(vp, kProgram, records);
  CHECK(pevp_submit(vp, records, count) == PEVP_OK, "submit: %s", pevp_last_error(vp));
  CHECK(pevp_wait_idle(vp, 1000000, &done) == PEVP_OK && done.done && !done.error, "wait: %s (done %d error %d)",
        pevp_last_error(vp), done.done, done.error);
  for (m = 0; m < M; ++m) {
    CHECK(pevp_read_psum(vp, (uint32_t)m, 0, row, sizeof row) == PEVP_OK, "read PSUM partition %d: %s", m,
          pevp_last_error(vp));
    for (n = 0; n < N; ++n) {
      int want = 0;
      for (k = 0; k < K; ++k) want += st_value(k, m) * mv_value(k, n);
      wrong += row[n] != (float)want;
    }
  }
  return wrong;
}

/* Registers a driver sets or the engine moves, with the value each holds when the VP is opened. */
typedef struct {
  const char* face;
  const char* name;
  uint32_t at_open;
} watched_reg;

static watched_reg watched[] = {
    {"vp", "irq_enable", 0},
    {"vp", "seq_status", 0},
    {"vp", "semaphore_7", 0},
    {"vp", "err_info", 0},
    {"top", "queue_cfg", 0},
    {"top", "perf_cntr_cfg", 0},
    {"cluster", "arr_cluster_cfg.inter_instr_dly_cnt", 0},
};
enum { WATCHED = sizeof watched / sizeof watched[0] };

static int all_zero(pevp_vp* vp, uint64_t address, size_t bytes) {
  unsigned char buf[4096];
  size_t i;
  if (bytes > sizeof buf || pevp_read(vp, address, buf, bytes) != PEVP_OK) return 0;
  for (i = 0; i < bytes; ++i)
    if (buf[i] != 0) return 0;
  return 1;
}

int main(int argc, char** argv) {
  const char* endpoint = argc > 1 ? argv[1] : NULL;
  pevp_vp* vp = NULL;
  pevp_map map;
  pevp_completion done;
  unsigned char records[4 * 64];
  size_t count, i;
  uint32_t value = 0;
  uint64_t retired = 0, before_ps = 0, after_ps = 0;
  int wrong;

  if (endpoint == NULL) {
    CHECK(pevp_open("MARIANA", &vp) == PEVP_OK && vp != NULL, "open MARIANA: %s", pevp_open_error());
  } else {
    CHECK(pevp_connect(endpoint, &vp) == PEVP_OK && vp != NULL, "connect %s: %s", endpoint, pevp_open_error());
  }
  if (vp == NULL) return 1;
  CHECK(pevp_get_map(vp, &map) == PEVP_OK, "map");
  for (i = 0; i < WATCHED; ++i)
    CHECK(pevp_read_reg(vp, watched[i].face, watched[i].name, &watched[i].at_open) == PEVP_OK, "read %s %s: %s",
          watched[i].face, watched[i].name, pevp_last_error(vp));

  /* A first program leaves results, counts and configuration behind. */
  CHECK(pevp_arm(vp, 1, 0, 0) == PEVP_OK, "arm: %s", pevp_last_error(vp));
  CHECK(pevp_write_reg(vp, "cluster", "arr_cluster_cfg.inter_instr_dly_cnt", 32) == PEVP_OK, "delay: %s",
        pevp_last_error(vp));
  load_operands(vp, &map);
  wrong = run_matmul(vp);
  CHECK(wrong == 0, "before the reset: %d of %d elements differ from the integer product", wrong, M * N);

  /* The stuck program: its wait never ends, the SEQ stays busy with both instructions. */
  count = assemble(vp, kStuckProgram, records);
  CHECK(pevp_submit(vp, records, count) == PEVP_OK, "submit the stuck program: %s", pevp_last_error(vp));
  CHECK(pevp_wait_idle(vp, 100000, &done) == PEVP_ERR_TIMEOUT && done.timed_out && !done.done && done.retired == 2,
        "the stuck program times out (timed_out %d done %d retired %llu): %s", done.timed_out, done.done,
        (unsigned long long)done.retired, pevp_last_error(vp));
  CHECK(pevp_read_reg(vp, "vp", "seq_status.busy", &value) == PEVP_OK && value == 1, "busy while stuck: %u", value);
  CHECK(pevp_read_reg(vp, "vp", "iq_status.level", &value) == PEVP_OK && value == 2, "2 queued while stuck: %u",
        value);

  /* The reset: at once, in no simulated time. */
  CHECK(pevp_time_ps(vp, &before_ps) == PEVP_OK, "time");
  CHECK(pevp_reset(vp) == PEVP_OK, "reset: %s", pevp_last_error(vp));
  CHECK(pevp_time_ps(vp, &after_ps) == PEVP_OK && after_ps == before_ps, "the reset took simulated time: %llu -> %llu ps",
        (unsigned long long)before_ps, (unsigned long long)after_ps);
  for (i = 0; i < WATCHED; ++i)
    CHECK(pevp_read_reg(vp, watched[i].face, watched[i].name, &value) == PEVP_OK && value == watched[i].at_open,
          "after the reset %s %s = 0x%x, at open 0x%x", watched[i].face, watched[i].name, value, watched[i].at_open);
  CHECK(pevp_read_reg(vp, "vp", "iq_status.level", &value) == PEVP_OK && value == 0, "queue level %u", value);
  CHECK(pevp_read_counter48(vp, "vp", "retired_cnt_lsb", &retired) == PEVP_OK && retired == 0, "retired %llu",
        (unsigned long long)retired);
  CHECK(all_zero(vp, map.psum, N * 4), "PSUM partition 0 is not zero after the reset");
  CHECK(all_zero(vp, map.sbuf + MV_OFFSET, N * 2), "SBUF partition 0 is not zero after the reset");

  /* The dropped instructions are gone: the semaphore they waited for releases nothing. */
  CHECK(pevp_write_reg(vp, "vp", "semaphore_7", 1) == PEVP_OK, "set the semaphore: %s", pevp_last_error(vp));
  CHECK(pevp_wait_idle(vp, 100000, &done) == PEVP_ERR_TIMEOUT && done.retired == 0 && !done.error,
        "nothing runs once the semaphore is set (retired %llu, error %d)", (unsigned long long)done.retired,
        done.error);

  /* A fresh program runs bit-exactly. */
  CHECK(pevp_arm(vp, 0, 0, 0) == PEVP_OK, "arm again: %s", pevp_last_error(vp));
  load_operands(vp, &map);
  wrong = run_matmul(vp);
  CHECK(wrong == 0, "after the reset: %d of %d elements differ from the integer product", wrong, M * N);
  CHECK(pevp_read_counter48(vp, "vp", "retired_cnt_lsb", &retired) == PEVP_OK && retired == 2,
        "retired after the fresh program %llu, not 2", (unsigned long long)retired);

  CHECK(pevp_reset(NULL) == PEVP_ERR_ARGUMENT, "a null handle");
  pevp_close(vp);
  if (failures != 0) printf("reset: %d checks failed\n", failures);
  return failures == 0 ? 0 : 1;
}
