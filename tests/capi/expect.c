/* The scoreboard from a C99 driver (pevp_expect, docs/cosim-reference.md "Scoreboard"): a hand-derived 2 x 2 x 3
 * bf16 matmul predicted instruction by instruction -- the weight load writes no PSUM, the matmul the window
 * partitions 0..1 x bytes 0x40..0x4B holding the product worked out below -- checked against the VP's own PSUM and
 * its micro-op log's cycles; then every error: a small buffer (the size needed named, the window still had with
 * pevp_expect_data), an invalid instruction (its rule named, nothing run), one refused at execution (its rule named,
 * the SEQ stopped on its record), a busy SEQ, null pointers.
 *
 *   expect            the VP in this process (pevp_open)
 *   expect ENDPOINT   a `pe-vp serve` VP (pevp_connect): the same checks through the protocol's expect op
 *
 * Prints one line per failed check; exit status 0 when none failed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pevp/pevp.h"
#include "pevp/pevp_numerics.h"

enum { K = 2, M = 2, N = 3, MV_OFFSET = 0x1000, DST_OFFSET = 0x40 };

static int failures;

#define CHECK(cond, ...)                 \
  do {                                   \
    if (!(cond)) {                       \
      printf("expect:%d: ", __LINE__);   \
      printf(__VA_ARGS__);               \
      printf("\n");                      \
      ++failures;                        \
    }                                    \
  } while (0)

/* st[k][m] (the stationary, K x M) and mv[k][n] (the moving data, K x N). */
static const int kSt[K][M] = {{1, 2}, {3, 4}};
static const int kMv[K][N] = {{1, 0, 2}, {0, 1, 1}};
/* PSUM partition m, element n = sum over k of st[k][m] * mv[k][n], by hand:
 *   m = 0: 1*1 + 3*0 = 1,  1*0 + 3*1 = 3,  1*2 + 3*1 = 5
 *   m = 1: 2*1 + 4*0 = 2,  2*0 + 4*1 = 4,  2*2 + 4*1 = 8 */
static const float kProduct[M][N] = {{1, 3, 5}, {2, 4, 8}};

static const char* kProgram =
    ".gen MARIANA\n"
    "ldweights src=sbuf[0]:[1,2] in_dtype=bf16 num_active_rows=2 num_active_cols=2 row_grp=0xF col_grp=0xF\n"
    "matmul src=sbuf[0]+0x1000:[1,3] in_dtype=bf16 num_active_rows=2 num_active_cols=2 row_grp=0xF col_grp=0xF "
    "psum_accumulate_flags=SINGLE dst=psum[0]+0x40:[1,3]\n"
    /* Valid alone, refused at execution: 4 contraction rows against the 2 the stationary has. */
    "matmul src=sbuf[0]+0x1000:[1,3] in_dtype=bf16 num_active_rows=4 num_active_cols=2 row_grp=0xF col_grp=0xF "
    "psum_accumulate_flags=SINGLE dst=psum[0]+0x40:[1,3]\n"
    /* Held at the head until semaphore 5 reaches 1, which nothing sets. */
    "ldweights src=sbuf[0]:[1,2] in_dtype=bf16 num_active_rows=2 num_active_cols=2 row_grp=0xF col_grp=0xF "
    "events.wait_mode=WAIT_GE events.wait_sem=5 events.wait_value=1\n";

/* The value of "key": in one micro-op log line, or -1. */
static long long field_of(const char* line, const char* key) {
  char pattern[64];
  const char* at;
  snprintf(pattern, sizeof pattern, "\"%s\":", key);
  at = strstr(line, pattern);
  return at ? atoll(at + strlen(pattern)) : -1;
}

int main(int argc, char** argv) {
  const char* endpoint = argc > 1 ? argv[1] : NULL;
  pevp_vp* vp = NULL;
  pevp_map map;
  pevp_expectation e;
  pevp_completion done;
  pevp_error_info info;
  unsigned char records[4 * 64], bad[64];
  size_t count = 0, length = 0;
  float window[M * N], small[2], row[N];
  static char log[1 << 16];
  int k, m, n, matched = 0;
  char* line;
  pevp_status s;

  if (endpoint == NULL) {
    CHECK(pevp_open("MARIANA", &vp) == PEVP_OK, "open: %s", pevp_open_error());
  } else {
    CHECK(pevp_connect(endpoint, &vp) == PEVP_OK, "connect %s: %s", endpoint, pevp_open_error());
  }
  if (vp == NULL) return 1;
  CHECK(pevp_get_map(vp, &map) == PEVP_OK, "map");
  CHECK(pevp_arm(vp, 0, 0, 0) == PEVP_OK, "arm: %s", pevp_last_error(vp));
  for (k = 0; k < K; ++k) {
    uint16_t st[M], mv[N];
    for (m = 0; m < M; ++m) st[m] = pevp_f32_to_bf16((float)kSt[k][m]);
    for (n = 0; n < N; ++n) mv[n] = pevp_f32_to_bf16((float)kMv[k][n]);
    CHECK(pevp_write(vp, map.sbuf + (uint64_t)k * map.sbuf_partition_bytes, st, sizeof st) == PEVP_OK, "load st");
    CHECK(pevp_write(vp, map.sbuf + (uint64_t)k * map.sbuf_partition_bytes + MV_OFFSET, mv, sizeof mv) == PEVP_OK,
          "load mv");
  }
  CHECK(pevp_assemble(vp, kProgram, records, 4, &count) == PEVP_OK && count == 4, "assemble: %s",
        pevp_last_error(vp));
  CHECK(pevp_micro_op_log(vp, 1) == PEVP_OK, "micro-op log: %s", pevp_last_error(vp));

  /* The weight load: one micro-op, no PSUM. */
  s = pevp_expect(vp, records, NULL, 0, &e);
  CHECK(s == PEVP_OK, "expect the weight load: %d %s", s, pevp_last_error(vp));
  CHECK(e.instruction == 0 && e.micro_ops == 1, "weight load: instruction %llu, %u micro-ops",
        (unsigned long long)e.instruction, e.micro_ops);
  CHECK(e.partitions == 0 && e.bytes == 0 && e.data_bytes == 0, "a weight load writes no PSUM: %u x %u",
        e.partitions, e.bytes);
  CHECK(e.issue_cycle <= e.start_cycle && e.start_cycle < e.complete_cycle, "weight load cycles %llu %llu %llu",
        (unsigned long long)e.issue_cycle, (unsigned long long)e.start_cycle, (unsigned long long)e.complete_cycle);

  /* The matmul into a buffer too small: the size needed is named, the window still had. */
  s = pevp_expect(vp, records + 64, small, sizeof small, &e);
  CHECK(s == PEVP_ERR_ARGUMENT && strstr(pevp_last_error(vp), "takes 24 bytes") != NULL,
        "a small buffer: %d %s", s, pevp_last_error(vp));
  CHECK(e.instruction == 1 && e.micro_ops == 1, "matmul: instruction %llu, %u micro-ops",
        (unsigned long long)e.instruction, e.micro_ops);
  CHECK(e.first_partition == 0 && e.partitions == M && e.offset == DST_OFFSET && e.bytes == N * 4 &&
            e.element_bytes == 4 && e.data_bytes == sizeof window,
        "the window: partitions %u+%u, bytes 0x%x+%u, element %u, data %zu", e.first_partition, e.partitions,
        e.offset, e.bytes, e.element_bytes, e.data_bytes);
  CHECK(pevp_expect_data(vp, window, sizeof window) == PEVP_OK, "expect_data: %s", pevp_last_error(vp));
  for (m = 0; m < M; ++m)
    for (n = 0; n < N; ++n)
      CHECK(window[m * N + n] == kProduct[m][n], "expected C[%d][%d] = %g, not %g", m, n, kProduct[m][n],
            window[m * N + n]);
  /* The VP's own PSUM holds the same. */
  for (m = 0; m < M; ++m) {
    CHECK(pevp_read_psum(vp, (uint32_t)m, DST_OFFSET, row, sizeof row) == PEVP_OK, "read PSUM");
    CHECK(memcmp(row, window + m * N, sizeof row) == 0, "partition %d: the expectation is not PSUM's", m);
  }
  /* The cycles are the micro-op log's: the matmul's line (instr 1) has the same start and complete. */
  CHECK(pevp_micro_op_log_read(vp, log, sizeof log, &length) == PEVP_OK, "log: %s", pevp_last_error(vp));
  for (line = strtok(log, "\n"); line != NULL; line = strtok(NULL, "\n"))
    if (field_of(line, "instr") == 1) {
      ++matched;
      CHECK(field_of(line, "complete") == (long long)e.complete_cycle && field_of(line, "start") == (long long)e.start_cycle,
            "log complete %lld start %lld, expectation %llu %llu", field_of(line, "complete"), field_of(line, "start"),
            (unsigned long long)e.complete_cycle, (unsigned long long)e.start_cycle);
    }
  CHECK(matched == 1, "%d log lines of instruction 1", matched);

  /* An invalid instruction: refused with its rule, nothing run. */
  memcpy(bad, records + 64, 64);
  bad[0] = 0xEE; /* no generation's opcode */
  s = pevp_expect(vp, bad, window, sizeof window, &e);
  CHECK(s == PEVP_ERR_ARGUMENT && strstr(pevp_last_error(vp), "opcode.unknown") != NULL &&
            strstr(pevp_last_error(vp), "nothing was executed") != NULL,
        "an invalid instruction: %d %s", s, pevp_last_error(vp));
  /* Refused at execution: the rule named, the SEQ stopped on its record. */
  s = pevp_expect(vp, records + 128, window, sizeof window, &e);
  CHECK(s == PEVP_ERR_STATE && strstr(pevp_last_error(vp), "exec.k_mismatch") != NULL,
        "refused at execution: %d %s", s, pevp_last_error(vp));
  CHECK(pevp_error_record(vp, &info) == PEVP_OK && info.valid && strcmp(info.rule, "exec.k_mismatch") == 0,
        "the error record: %s", info.rule);
  s = pevp_expect(vp, records + 64, window, sizeof window, &e);
  CHECK(s == PEVP_ERR_STATE && strstr(pevp_last_error(vp), "error record") != NULL, "a stopped SEQ: %d %s", s,
        pevp_last_error(vp));
  CHECK(pevp_clear_error(vp) == PEVP_OK, "clear_error");
  /* The same matmul again after it: the same window and data (SINGLE overwrites). */
  memset(window, 0, sizeof window);
  s = pevp_expect(vp, records + 64, window, sizeof window, &e);
  CHECK(s == PEVP_OK && window[5] == kProduct[1][2] && window[0] == kProduct[0][0], "again: %d %s %g", s,
        pevp_last_error(vp), window[5]);
  /* A busy SEQ: an instruction held on its semaphore. */
  CHECK(pevp_submit(vp, records + 192, 1) == PEVP_OK, "submit the held instruction");
  CHECK(pevp_wait_idle(vp, 10000, &done) == PEVP_ERR_TIMEOUT, "it holds: %s", pevp_last_error(vp));
  s = pevp_expect(vp, records + 64, window, sizeof window, &e);
  CHECK(s == PEVP_ERR_STATE && strstr(pevp_last_error(vp), "busy") != NULL, "a busy SEQ: %d %s", s,
        pevp_last_error(vp));
  /* Null pointers. */
  CHECK(pevp_expect(vp, NULL, window, sizeof window, &e) == PEVP_ERR_ARGUMENT &&
            strstr(pevp_last_error(vp), "instr64") != NULL,
        "a null instruction: %s", pevp_last_error(vp));
  CHECK(pevp_expect(vp, records, window, sizeof window, NULL) == PEVP_ERR_ARGUMENT, "a null out");
  CHECK(pevp_expect(NULL, records, window, sizeof window, &e) == PEVP_ERR_ARGUMENT, "a null handle");
  pevp_close(vp);
  if (failures == 0) printf("expect: every check passed\n");
  return failures == 0 ? 0 : 1;
}
