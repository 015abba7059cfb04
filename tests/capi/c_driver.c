/* A driver written in C99 against pevp.h: C[M x N] = st^T @ mv through the VP -- SBUF loads over the bus, arming,
 * an assembled Ldweights + Matmul, the interrupt, the PSUM read-back -- on small integers (exact in bf16 and fp32),
 * checked against the integer product computed here; then the error paths a driver meets: a program that faults
 * (an unknown opcode: its error record, clearing it, running again), a bus error, a register value too wide, unknown
 * names, bad assembly, a timeout, null pointers and a second VP; and the reference-model calls (engine cycles, PSUM by
 * partition, the micro-op log) with their refusals.
 *
 *   c_driver            the VP in this process (pevp_open)
 *   c_driver ENDPOINT   a `pe-vp serve` VP (pevp_connect): the same source, the same checks
 *
 * Prints one line per failed check, then the simulated time at the end ("final time N ps"), which is the same
 * both ways; exit status 0 when no check failed. */
#include <stdio.h>
#include <string.h>

#include "pevp/pevp.h"
#include "pevp/pevp_numerics.h"

enum { K = 64, M = 32, N = 48, MV_OFFSET = 0x1000 };

static int failures;

#define CHECK(cond, ...)                             \
  do {                                               \
    if (!(cond)) {                                   \
      printf("c_driver:%d: ", __LINE__);             \
      printf(__VA_ARGS__);                           \
      printf("\n");                                  \
      ++failures;                                    \
    }                                                \
  } while (0)

/* bf16 of a small integer (exact), by the VP's own conversion. */
static uint16_t bf16(int v) { return pevp_f32_to_bf16((float)v); }

static int st_value(int k, int m) { return (k * 3 + m) % 7 - 3; }
static int mv_value(int k, int n) { return (k + 2 * n) % 5 - 2; }

static const char* kProgram =
    ".gen MARIANA\n"
    "ldweights src=sbuf[0]:[1,32] in_dtype=bf16 num_active_rows=64 num_active_cols=32 row_grp=0xF col_grp=0xF\n"
    "matmul src=sbuf[0]+0x1000:[1,48] in_dtype=bf16 num_active_rows=64 num_active_cols=32 row_grp=0xF col_grp=0xF "
    "psum_accumulate_flags=SINGLE dst=psum[0]:[1,48]\n";


static int run_matmul(pevp_vp* vp, const pevp_map* map) {
  unsigned char records[4 * 64];
  size_t count = 0;
  pevp_completion done;
  float row[N];
  int m, n, k, wrong = 0;
  int raised = 0;
  CHECK(pevp_assemble(vp, kProgram, records, 4, &count) == PEVP_OK, "assemble: %s", pevp_last_error(vp));
  CHECK(count == 2, "assembled %zu records, not 2", count);
  CHECK(pevp_submit(vp, records, count) == PEVP_OK, "submit: %s", pevp_last_error(vp));
  /* The interrupt (irq_enable.done, armed) says the program is done; wait_idle then confirms it. */
  CHECK(pevp_wait_irq(vp, 1000000, &raised) == PEVP_OK && raised == 1, "the done interrupt: %s",
        pevp_last_error(vp));
  CHECK(pevp_wait_idle(vp, 1000000, &done) == PEVP_OK, "wait: %s", pevp_last_error(vp));
  CHECK(done.done && !done.error, "done %d error %d", done.done, done.error);
  CHECK(pevp_clear_done(vp) == PEVP_OK, "clear_done: %s", pevp_last_error(vp));
  for (m = 0; m < M; ++m) {
    CHECK(pevp_read(vp, map->psum + (uint64_t)m * map->psum_partition_bytes, row, sizeof row) == PEVP_OK,
          "read PSUM partition %d: %s", m, pevp_last_error(vp));
    for (n = 0; n < N; ++n) {
      int want = 0;
      for (k = 0; k < K; ++k) want += st_value(k, m) * mv_value(k, n);
      wrong += row[n] != (float)want;
    }
  }
  return wrong;
}

int main(int argc, char** argv) {
  const char* endpoint = argc > 1 ? argv[1] : NULL;
  pevp_vp* vp = NULL;
  pevp_vp* second = NULL;
  pevp_map map;
  pevp_completion done;
  pevp_error_info info;
  unsigned char records[4 * 64];
  size_t count = 0;
  uint32_t value = 0;
  uint64_t matmuls = 0, t0 = 0, t1 = 0;
  int k, m, n, wrong, raised = 0;
  size_t stats_length = 0;
  char stats[1 << 16];

  if (endpoint == NULL) {
    CHECK(pevp_open("MARIANA", &vp) == PEVP_OK && vp != NULL, "open MARIANA: %s", pevp_open_error());
    if (vp == NULL) return 1;
    CHECK(pevp_open("MARIANA", &second) == PEVP_ERR_STATE && second == NULL, "a second VP must be refused");
  } else {
    CHECK(pevp_connect(endpoint, &vp) == PEVP_OK && vp != NULL, "connect %s: %s", endpoint, pevp_open_error());
    if (vp == NULL) return 1;
    CHECK(pevp_connect(endpoint, &second) == PEVP_ERR_STATE && second == NULL &&
              strstr(pevp_open_error(), "busy") != NULL,
          "a second client must be refused while the first is served: %s", pevp_open_error());
  }
  CHECK(pevp_open("NO_SUCH_GEN", &second) == PEVP_ERR_ARGUMENT && strstr(pevp_open_error(), "NO_SUCH_GEN") != NULL,
        "an unknown generation is named: %s", pevp_open_error());
  CHECK(pevp_connect("tcp:", &second) == PEVP_ERR_ARGUMENT && strstr(pevp_open_error(), "port") != NULL,
        "a malformed endpoint: %s", pevp_open_error());
  /* The token is read before anything is connected (nothing listens on port 1). */
  CHECK(pevp_connect_token("tcp:1", "/nonexistent/pevp-token", &second) == PEVP_ERR_ARGUMENT && second == NULL &&
            strstr(pevp_open_error(), "token file /nonexistent/pevp-token") != NULL,
        "a token file that is not there: %s", pevp_open_error());
  CHECK(pevp_get_map(vp, &map) == PEVP_OK, "map");
  CHECK(pevp_arm(vp, 0, 0, 0) == PEVP_OK, "arm: %s", pevp_last_error(vp));

  /* SBUF: partition k holds st[k][0..M) at offset 0 and mv[k][0..N) at MV_OFFSET. */
  for (k = 0; k < K; ++k) {
    uint16_t st[M], mv[N];
    for (m = 0; m < M; ++m) st[m] = bf16(st_value(k, m));
    for (n = 0; n < N; ++n) mv[n] = bf16(mv_value(k, n));
    CHECK(pevp_write(vp, map.sbuf + (uint64_t)k * map.sbuf_partition_bytes, st, sizeof st) == PEVP_OK, "load st");
    CHECK(pevp_write(vp, map.sbuf + (uint64_t)k * map.sbuf_partition_bytes + MV_OFFSET, mv, sizeof mv) == PEVP_OK,
          "load mv");
  }
  CHECK(pevp_time_ps(vp, &t0) == PEVP_OK, "time");
  wrong = run_matmul(vp, &map);
  CHECK(wrong == 0, "%d of %d elements differ from the integer product", wrong, M * N);
  CHECK(pevp_time_ps(vp, &t1) == PEVP_OK && t1 > t0, "simulated time advanced (%llu -> %llu ps)",
        (unsigned long long)t0, (unsigned long long)t1);
  CHECK(pevp_read_counter48(vp, "top", "arr_seq_ififo_perf_matmul.tile_128x128_tile0_instr_cnt_lsb", &matmuls) ==
                PEVP_OK && matmuls == 1,
        "matmul counter %llu: %s", (unsigned long long)matmuls, pevp_last_error(vp));

  /* Registers by name, and their refusals. */
  CHECK(pevp_write_reg(vp, "cluster", "arr_cluster_cfg.inter_instr_dly_cnt", 32) == PEVP_OK, "write field: %s",
        pevp_last_error(vp));
  CHECK(pevp_read_reg(vp, "cluster", "arr_cluster_cfg.inter_instr_dly_cnt", &value) == PEVP_OK && value == 32,
        "read field back: %u", value);
  CHECK(pevp_write_reg(vp, "top", "queue_cfg.fifo_size_sel", 2) == PEVP_ERR_ARGUMENT &&
            strstr(pevp_last_error(vp), "does not fit") != NULL,
        "a value wider than its field: %s", pevp_last_error(vp));
  CHECK(pevp_read_reg(vp, "top", "no_such_register", &value) == PEVP_ERR_ARGUMENT &&
            strstr(pevp_last_error(vp), "no_such_register") != NULL,
        "an unknown register: %s", pevp_last_error(vp));
  /* A name's terminal escape and invalid UTF-8 come back escaped, in-process as from a server. */
  CHECK(pevp_read_reg(vp, "top", "red\x1b[31m\xff", &value) == PEVP_ERR_ARGUMENT &&
            strstr(pevp_last_error(vp), "'red\\x1b[31m\\xff'") != NULL,
        "an unknown register's bytes escaped: %s", pevp_last_error(vp));
  CHECK(pevp_read32(vp, 0x7000000, 0, &value) == PEVP_ERR_BUS && pevp_last_error(vp)[0] != '\0',
        "an unmapped address: %s", pevp_last_error(vp));
  CHECK(pevp_read_reg(vp, NULL, "queue_cfg", &value) == PEVP_ERR_ARGUMENT, "a null face");
  CHECK(pevp_read32(vp, map.apb, 0, NULL) == PEVP_ERR_ARGUMENT, "a null value");
  CHECK(pevp_assemble(vp, "frobnicate x=1\n", records, 4, &count) == PEVP_ERR_ASSEMBLY &&
            strstr(pevp_last_error(vp), "frobnicate") != NULL,
        "bad assembly: %s", pevp_last_error(vp));
  CHECK(pevp_assemble(vp, kProgram, records, 1, &count) == PEVP_ERR_ARGUMENT && count == 2, "no room for 2 records");

  /* A program that faults -- its first record's opcode byte is none of the generation's (0xEE) -- the error record
   * names the rule and the instruction; cleared, the engine runs again. */
  CHECK(pevp_assemble(vp, kProgram, records, 4, &count) == PEVP_OK && count == 2, "assemble");
  records[0] = 0xEE;
  CHECK(pevp_submit(vp, records, count) == PEVP_OK, "submit");
  CHECK(pevp_wait_idle(vp, 1000000, &done) == PEVP_OK && done.error == 1, "the fault is reported (error %d)",
        done.error);
  CHECK(pevp_error_record(vp, &info) == PEVP_OK && info.valid && strcmp(info.rule, "opcode.unknown") == 0 &&
            info.opcode == 0xEE,
        "error record: valid %d rule '%s' opcode 0x%x (%s)", info.valid, info.rule, info.opcode, info.description);
  CHECK(pevp_clear_error(vp) == PEVP_OK, "clear_error: %s", pevp_last_error(vp));
  CHECK(pevp_error_record(vp, &info) == PEVP_OK && !info.valid, "the record is cleared");
  CHECK(pevp_clear_done(vp) == PEVP_OK, "clear_done");
  wrong = run_matmul(vp, &map);
  CHECK(wrong == 0, "after the fault: %d elements differ", wrong);

  /* Nothing submitted, done cleared: waiting ends by its timeout, and so does waiting for the interrupt. */
  CHECK(pevp_wait_idle(vp, 1000, &done) == PEVP_ERR_TIMEOUT && done.timed_out == 1, "a timeout: %s",
        pevp_last_error(vp));
  CHECK(pevp_time_ps(vp, &t0) == PEVP_OK, "time");
  CHECK(pevp_wait_irq(vp, 500, &raised) == PEVP_OK && raised == 0, "no interrupt within 500 ns");
  CHECK(pevp_time_ps(vp, &t1) == PEVP_OK && t1 == t0 + 500000, "the irq wait took its 500 ns: %llu -> %llu ps",
        (unsigned long long)t0, (unsigned long long)t1);

  /* The statistics: asking with no buffer gives the length; the document counts the three Matmuls run. */
  CHECK(pevp_stats_json(vp, NULL, 0, &stats_length) == PEVP_ERR_ARGUMENT && stats_length > 0, "stats length");
  CHECK(stats_length < sizeof stats && pevp_stats_json(vp, stats, sizeof stats, &stats_length) == PEVP_OK &&
            strlen(stats) == stats_length && strstr(stats, "\"cycles\"") != NULL,
        "stats: %s", pevp_last_error(vp));

  /* The reference-model calls: engine cycles, PSUM by partition, the micro-op log of one more run (two lines: the
   * Ldweights and the Matmul, in order, the Matmul's PSUM bank 0), then the refusals. */
  {
    pevp_cycles cycles;
    float psum_row[N];
    char lines[4096];
    size_t lines_length = 0;
    uint64_t before = 0;
    memset(&cycles, 0, sizeof cycles);
    CHECK(pevp_read_cycles(vp, &cycles) == PEVP_OK && cycles.clock_ghz == 2.4 && cycles.now > cycles.last_complete &&
              cycles.last_complete > cycles.first_start && cycles.busy > 0 && cycles.busy <= cycles.last_complete,
          "cycles: now %llu busy %llu first %llu last %llu at %g GHz: %s", (unsigned long long)cycles.now,
          (unsigned long long)cycles.busy, (unsigned long long)cycles.first_start,
          (unsigned long long)cycles.last_complete, cycles.clock_ghz, pevp_last_error(vp));
    before = cycles.busy;
    CHECK(pevp_micro_op_log(vp, 1) == PEVP_OK, "micro-op log on: %s", pevp_last_error(vp));
    wrong = run_matmul(vp, &map);
    CHECK(wrong == 0, "the logged run: %d elements differ", wrong);
    CHECK(pevp_micro_op_log(vp, 0) == PEVP_OK, "micro-op log off: %s", pevp_last_error(vp));
    CHECK(pevp_read_cycles(vp, &cycles) == PEVP_OK && cycles.busy > before, "busy cycles grew: %llu -> %llu",
          (unsigned long long)before, (unsigned long long)cycles.busy);
    CHECK(pevp_micro_op_log_read(vp, NULL, 0, &lines_length) == PEVP_ERR_ARGUMENT && lines_length > 0,
          "the lines' length: %zu", lines_length);
    CHECK(pevp_micro_op_log_read(vp, lines, 8, &lines_length) == PEVP_ERR_ARGUMENT, "a buffer too small");
    CHECK(lines_length < sizeof lines && pevp_micro_op_log_read(vp, lines, sizeof lines, &lines_length) == PEVP_OK &&
              strlen(lines) == lines_length,
          "the lines: %s", pevp_last_error(vp));
    CHECK(strstr(lines, "{\"seq\":0,\"instr\":") == lines && strstr(lines, "\"kind\":\"weight_load\"") != NULL &&
              strstr(lines, "{\"seq\":1,") != NULL && strstr(lines, "\"kind\":\"matmul\"") != NULL &&
              strstr(lines, "\"psum_banks\":[0]") != NULL && strstr(lines, "{\"seq\":2,") == NULL,
          "two lines, the load then the matmul: %s", lines);
    CHECK(pevp_micro_op_log_read(vp, lines, sizeof lines, &lines_length) == PEVP_OK && lines_length == 0 &&
              lines[0] == '\0',
          "read once: %zu bytes left", lines_length);
    CHECK(pevp_read_psum(vp, 1, 0, psum_row, sizeof psum_row) == PEVP_OK, "PSUM partition 1: %s",
          pevp_last_error(vp));
    CHECK(pevp_read_psum(vp, map.partitions, 0, psum_row, 4) == PEVP_ERR_ARGUMENT &&
              strstr(pevp_last_error(vp), "partition") != NULL,
          "a PSUM partition past the last: %s", pevp_last_error(vp));
    CHECK(pevp_read_psum(vp, 0, map.psum_partition_bytes - 2, psum_row, 4) == PEVP_ERR_ARGUMENT,
          "a PSUM range past the partition's end");
    CHECK(pevp_read_psum(vp, 0, 0, NULL, 4) == PEVP_ERR_ARGUMENT, "a null PSUM buffer");
    CHECK(pevp_read_cycles(vp, NULL) == PEVP_ERR_ARGUMENT, "null cycles");
    CHECK(pevp_read_cycles(NULL, &cycles) == PEVP_ERR_ARGUMENT, "a null handle (cycles)");
    CHECK(pevp_micro_op_log(NULL, 1) == PEVP_ERR_ARGUMENT, "a null handle (micro-op log)");
    CHECK(pevp_micro_op_log_read(vp, lines, sizeof lines, NULL) == PEVP_ERR_ARGUMENT, "a null length");
    CHECK(pevp_micro_op_log_write(vp, NULL) == PEVP_ERR_ARGUMENT, "a null path");
    CHECK(pevp_micro_op_log_write(vp, "/no/such/dir/x.jsonl") == PEVP_ERR_ARGUMENT &&
              strstr(pevp_last_error(vp), "/no/such/dir") != NULL,
          "an unwritable log path: %s", pevp_last_error(vp));
  }

  /* A checkpoint of this idle VP; restoring it here is refused (its time has moved on), as is a file that is not
   * one -- and neither changed anything. The round trip into a fresh VP is tested in tests/checkpoint and remote. */
  {
    char path[64];
    FILE* junk;
    /* Per process (a stack address differs with every process's layout): tests run in parallel. */
    snprintf(path, sizeof path, "/tmp/pevp_c_driver_%lx.ckpt", (unsigned long)(uintptr_t)(void*)path);
    CHECK(pevp_save_checkpoint(vp, path) == PEVP_OK, "save a checkpoint: %s", pevp_last_error(vp));
    CHECK(pevp_write_reg(vp, "cluster", "arr_cluster_cfg.inter_instr_dly_cnt", 5) == PEVP_OK, "write");
    CHECK(pevp_restore_checkpoint(vp, path) == PEVP_ERR_ARGUMENT &&
              strstr(pevp_last_error(vp), "already at") != NULL && strstr(pevp_last_error(vp), path) != NULL,
          "restoring into a VP past the checkpoint's time: %s", pevp_last_error(vp));
    junk = fopen(path, "wb");
    if (junk) {
      fputs("not a checkpoint", junk);
      fclose(junk);
    }
    CHECK(pevp_restore_checkpoint(vp, path) == PEVP_ERR_ARGUMENT, "a file that is not a checkpoint");
    CHECK(pevp_read_reg(vp, "cluster", "arr_cluster_cfg.inter_instr_dly_cnt", &value) == PEVP_OK && value == 5,
          "nothing was restored: %u", value);
    CHECK(pevp_restore_checkpoint(vp, "/no/such/dir/x.ckpt") == PEVP_ERR_ARGUMENT, "a missing file");
    remove(path);
  }

  CHECK(pevp_time_ps(vp, &t1) == PEVP_OK, "time");
  pevp_close(vp);
  printf("c_driver: final time %llu ps\n", (unsigned long long)t1);
  printf("c_driver: %s (%d failed checks)\n", failures == 0 ? "ok" : "FAILED", failures);
  return failures != 0;
}
