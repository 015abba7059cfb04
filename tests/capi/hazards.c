/* The hazard checks (checks.hazards, docs/sdk.md "What the VP checks for you") through the C API: one racy driver
 * step per hazard class, each between clean steps, on one VP.
 *
 *   capi_hazards MODE            the VP in this process, opened with checks.hazards = MODE (off, warn, error)
 *   capi_hazards MODE ENDPOINT   a `pe-vp serve --set checks.hazards=MODE` VP (pevp_connect)
 *
 * The program is c_driver's: Ldweights (SBUF partitions 0..63, bytes 0..63) then Matmul (SBUF partitions 0..63,
 * bytes 0x1000..0x105F: 48 bf16; PSUM partitions 0..31, bytes 0..191: 48 fp32). Instruction indices count every
 * record submitted, from 0. What each racy step must report, worked out by hand from those footprints:
 *
 *   submit before pevp_arm          unarmed_submit, instruction 0 (LDWEIGHTS)
 *   read PSUM p0 bytes 0..191 right after a submit (instructions 2, 3)
 *                                   read_in_flight, instruction 3 (MATMUL) writes PSUM partitions 0..31, bytes 0..191
 *   write SBUF p0 0x1000..0x105F right after a submit (4, 5)
 *                                   write_in_flight, instruction 5 (MATMUL) reads SBUF partitions 0..63, 4096..4191
 *   read PSUM after a MULTI_START (6, 7) with no MULTI_END submitted
 *                                   open_group_read, the group instruction 7 (MATMUL) opened
 *   seq_status.busy = 1 by name     register_write, vp:seq_ctrl.seq_status, read-only field busy
 *   write32 0x80000000 to queue_cfg register_write, reserved bits 0x80000000
 *
 * error: each racy call returns PEVP_ERR_HAZARD with the report in pevp_last_error (the access itself took
 * effect); warn: it returns PEVP_OK and the report is the one line pevp_diagnostics gives; off: nothing. Clean
 * calls return PEVP_OK and leave no diagnostics in every mode. The statistics count each class (0 with off).
 * Prints one line per failed check; exit status 0 when none failed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pevp/pevp.h"

enum { K = 64, M = 32, N = 48, MV_OFFSET = 0x1000 };

static int failures;
static enum { OFF, WARN, ERROR } mode;

#define CHECK(cond, ...)                  \
  do {                                    \
    if (!(cond)) {                        \
      printf("hazards:%d: ", __LINE__);   \
      printf(__VA_ARGS__);                \
      printf("\n");                       \
      ++failures;                         \
    }                                     \
  } while (0)

static const char* kProgram =
    ".gen MARIANA\n"
    "ldweights src=sbuf[0]:[1,32] in_dtype=bf16 num_active_rows=64 num_active_cols=32 row_grp=0xF col_grp=0xF\n"
    "matmul src=sbuf[0]+0x1000:[1,48] in_dtype=bf16 num_active_rows=64 num_active_cols=32 row_grp=0xF col_grp=0xF "
    "psum_accumulate_flags=SINGLE dst=psum[0]:[1,48]\n";
static const char* kOpenGroup =
    ".gen MARIANA\n"
    "ldweights src=sbuf[0]:[1,32] in_dtype=bf16 num_active_rows=64 num_active_cols=32 row_grp=0xF col_grp=0xF\n"
    "matmul src=sbuf[0]+0x1000:[1,48] in_dtype=bf16 num_active_rows=64 num_active_cols=32 row_grp=0xF col_grp=0xF "
    "psum_accumulate_flags=MULTI_START dst=psum[0]:[1,48]\n";
static const char* kCloseGroup =
    ".gen MARIANA\n"
    "ldweights src=sbuf[0]:[1,32] in_dtype=bf16 num_active_rows=64 num_active_cols=32 row_grp=0xF col_grp=0xF\n"
    "matmul src=sbuf[0]+0x1000:[1,48] in_dtype=bf16 num_active_rows=64 num_active_cols=32 row_grp=0xF col_grp=0xF "
    "flags.accumulate_flag=ACCUMULATE psum_accumulate_flags=MULTI_END dst=psum[0]:[1,48]\n";

/* The diagnostics taken from the VP now ("" when none). */
static const char* diagnostics(pevp_vp* vp) {
  static char text[1 << 16];
  size_t length = 0;
  pevp_status s = pevp_diagnostics(vp, text, sizeof text, &length);
  CHECK(s == PEVP_OK, "diagnostics: %s", pevp_last_error(vp));
  if (s != PEVP_OK) text[0] = '\0';
  return text;
}

/* A clean call: ok, and no report in any mode. */
static void clean(pevp_vp* vp, pevp_status s, const char* what) {
  const char* d;
  CHECK(s == PEVP_OK, "%s: status %d: %s", what, (int)s, pevp_last_error(vp));
  d = diagnostics(vp);
  CHECK(d[0] == '\0', "%s: diagnostics after a clean call: %s", what, d);
}

/* A racy call: what `mode` makes of it, the report naming each of `parts`. */
static void racy(pevp_vp* vp, pevp_status s, const char* what, const char* const* parts, size_t count) {
  const char* text = NULL;
  size_t i;
  if (mode == OFF) {
    clean(vp, s, what);
    return;
  }
  if (mode == ERROR) {
    CHECK(s == PEVP_ERR_HAZARD, "%s: status %d, not PEVP_ERR_HAZARD: %s", what, (int)s, pevp_last_error(vp));
    static char error[4096];
    snprintf(error, sizeof error, "%s", pevp_last_error(vp));  /* the next call replaces it */
    text = error;
    CHECK(diagnostics(vp)[0] == '\0', "%s: an error is no warning", what);
  } else {
    CHECK(s == PEVP_OK, "%s: status %d: %s", what, (int)s, pevp_last_error(vp));
    text = diagnostics(vp);
    /* One report, one line. */
    CHECK(strchr(text, '\n') != NULL && strchr(text, '\n')[1] == '\0', "%s: not one line: %s", what, text);
  }
  for (i = 0; i < count; ++i) CHECK(strstr(text, parts[i]) != NULL, "%s: '%s' missing from: %s", what, parts[i], text);
}

static void wait_done(pevp_vp* vp, const char* what) {
  pevp_completion c;
  clean(vp, pevp_wait_idle(vp, 1000000, &c), what);
  CHECK(c.done && !c.error, "%s: done %d error %d", what, c.done, c.error);
  clean(vp, pevp_clear_done(vp), "clear_done");
}

static void submit(pevp_vp* vp, const char* source, pevp_status* status) {
  unsigned char records[4 * 64];
  size_t count = 0;
  CHECK(pevp_assemble(vp, source, records, 4, &count) == PEVP_OK && count == 2, "assemble: %s", pevp_last_error(vp));
  *status = pevp_submit(vp, records, count);
}

static unsigned long long stat_of(const char* json, const char* key) {
  char pattern[64];
  const char* at;
  snprintf(pattern, sizeof pattern, "\"%s\":", key);
  at = strstr(json, "\"hazards\":");
  at = at ? strstr(at, pattern) : NULL;
  if (!at) {
    CHECK(0, "no hazards.%s in the statistics", key);
    return 999;
  }
  return strtoull(at + strlen(pattern), NULL, 10);
}

int main(int argc, char** argv) {
  const char* endpoint = argc > 2 ? argv[2] : NULL;
  char setting[64];
  const char* settings[1];
  pevp_vp* vp = NULL;
  pevp_map map;
  pevp_status s;
  unsigned short st[K][M], mv[K][N];
  float row[N];
  int k, m, n;
  static char stats[1 << 20];
  size_t length = 0;
  unsigned long long expected;

  if (argc < 2 || (strcmp(argv[1], "off") != 0 && strcmp(argv[1], "warn") != 0 && strcmp(argv[1], "error") != 0)) {
    fprintf(stderr, "usage: capi_hazards off|warn|error [ENDPOINT]\n");
    return 2;
  }
  mode = strcmp(argv[1], "off") == 0 ? OFF : strcmp(argv[1], "warn") == 0 ? WARN : ERROR;
  snprintf(setting, sizeof setting, "checks.hazards=%s", argv[1]);
  settings[0] = setting;
  s = endpoint ? pevp_connect(endpoint, &vp) : pevp_open_config("MARIANA", settings, 1, &vp);
  if (s != PEVP_OK) {
    printf("hazards: open: %s\n", pevp_open_error());
    return 1;
  }
  clean(vp, pevp_get_map(vp, &map), "map");

  /* The operands (small integers, exact in bf16), one partition per contraction row: nothing is queued yet. */
  for (k = 0; k < K; ++k) {
    for (m = 0; m < M; ++m) st[k][m] = (unsigned short)(k % 3 == 0 ? 0x3F80 : 0);  /* 1.0 or 0 */
    for (n = 0; n < N; ++n) mv[k][n] = 0x3F80;
    clean(vp, pevp_write(vp, map.sbuf + (uint64_t)k * map.sbuf_partition_bytes, st[k], sizeof st[k]), "load st");
    clean(vp, pevp_write(vp, map.sbuf + (uint64_t)k * map.sbuf_partition_bytes + MV_OFFSET, mv[k], sizeof mv[k]),
          "load mv");
  }

  /* unarmed_submit: the program streamed before spec 003 section 6's queue_cfg write. */
  {
    static const char* const parts[] = {"hazard.unarmed_submit", "instruction 0 (LDWEIGHTS)", "not armed",
                                        "queue_cfg"};
    submit(vp, kProgram, &s);
    racy(vp, s, "submit before arming", parts, 4);
    wait_done(vp, "wait after the unarmed submit");
  }
  clean(vp, pevp_arm(vp, 0, 0, 0), "arm");

  /* read_in_flight: PSUM read right after submit, before the Matmul's response. */
  {
    static const char* const parts[] = {"hazard.read_in_flight", "host read of PSUM 0x2000000..0x20000bf",
                                        "instruction 3 (MATMUL)", "write PSUM partitions 0..31, bytes 0..191"};
    submit(vp, kProgram, &s);
    clean(vp, s, "submit");
    racy(vp, pevp_read(vp, map.psum, row, sizeof row), "read PSUM right after submit", parts, 4);
    wait_done(vp, "wait after the racy read");
    /* Waited: the same read is clean, and each of C's 48 columns is the sum over the 22 rows k % 3 == 0 of 1 x 1. */
    clean(vp, pevp_read(vp, map.psum, row, sizeof row), "read PSUM after the wait");
    CHECK(row[0] == 22.0f && row[N - 1] == 22.0f, "C[0][0] = %g, C[0][47] = %g, not 22", row[0], row[N - 1]);
  }

  /* write_in_flight: mv overwritten while the Matmul that reads it is queued or in flight. */
  {
    static const char* const parts[] = {"hazard.write_in_flight", "host write to SBUF 0x1000..0x105f",
                                        "instruction 5 (MATMUL)", "read SBUF partitions 0..63, bytes 4096..4191"};
    submit(vp, kProgram, &s);
    clean(vp, s, "submit");
    racy(vp, pevp_write(vp, map.sbuf + MV_OFFSET, mv[0], sizeof mv[0]), "write SBUF right after submit", parts, 4);
    wait_done(vp, "wait after the racy write");
  }

  /* open_group_read: the group's MULTI_START retired, its MULTI_END never submitted. */
  {
    static const char* const parts[] = {"hazard.open_group_read", "instruction 7 (MATMUL)",
                                        "PSUM partitions 0..31, bytes 0..191", "END"};
    submit(vp, kOpenGroup, &s);
    clean(vp, s, "submit MULTI_START");
    wait_done(vp, "wait for MULTI_START");
    racy(vp, pevp_read(vp, map.psum, row, sizeof row), "read PSUM of an open group", parts, 4);
    submit(vp, kCloseGroup, &s);
    clean(vp, s, "submit MULTI_END");
    wait_done(vp, "wait for MULTI_END");
    clean(vp, pevp_read(vp, map.psum, row, sizeof row), "read PSUM of the closed group");
    CHECK(row[0] == 44.0f, "the closed group's C[0][0] = %g, not 22 + 22", row[0]);
  }

  /* register_write: a read-only field by name, reserved bits by a raw write. */
  {
    static const char* const ro[] = {"hazard.register_write", "vp:seq_ctrl.seq_status", "read-only field busy"};
    static const char* const reserved[] = {"hazard.register_write", "top:", "queue_cfg",
                                           "sets reserved bits 0x80000000"};
    racy(vp, pevp_write_reg(vp, "vp", "seq_status.busy", 1), "seq_status.busy = 1", ro, 3);
    racy(vp, pevp_write32(vp, map.apb, 0, 0x80000000u), "queue_cfg = 0x80000000", reserved, 4);
    clean(vp, pevp_write32(vp, map.apb, 0, 0), "queue_cfg = 0");
    clean(vp, pevp_write_reg(vp, "top", "perf_cntr_cfg.cntr_rst", 1), "cntr_rst pulse by name");
  }

  /* A clean driver after all that: submit, wait, read. */
  {
    submit(vp, kProgram, &s);
    clean(vp, s, "clean submit");
    wait_done(vp, "clean wait");
    clean(vp, pevp_read(vp, map.psum, row, sizeof row), "clean read");
  }

  /* The statistics count each class once, register_write twice; nothing with off. */
  s = pevp_stats_json(vp, stats, sizeof stats, &length);
  CHECK(s == PEVP_OK, "stats: %s", pevp_last_error(vp));
  expected = mode == OFF ? 0 : 1;
  CHECK(stat_of(stats, "unarmed_submit") == expected, "unarmed_submit count");
  CHECK(stat_of(stats, "read_in_flight") == expected, "read_in_flight count");
  CHECK(stat_of(stats, "write_in_flight") == expected, "write_in_flight count");
  CHECK(stat_of(stats, "open_group_read") == expected, "open_group_read count");
  CHECK(stat_of(stats, "register_write") == 2 * expected, "register_write count");
  CHECK(strstr(stats, mode == OFF ? "\"mode\":\"off\"" : mode == WARN ? "\"mode\":\"warn\"" : "\"mode\":\"error\"") !=
            NULL,
        "the statistics' hazards.mode");

  pevp_close(vp);
  if (failures == 0) printf("hazards %s: all checks passed\n", argv[1]);
  return failures == 0 ? 0 : 1;
}
