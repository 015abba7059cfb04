/* What a C driver learns when something goes wrong, and that the library prints nothing on its stdout:
 *   - a fault's full record (pevp_error_info's field and message: the sentence the VP knows);
 *   - an unprivileged access to the protected face refused with PEVP_ERR_PRIVILEGE, naming face, address and rule;
 *   - each face's absolute bus base in pevp_map;
 *   - stdout, captured in a file for the whole run, empty: the VP's reports are pevp_diagnostics lines.
 *
 *   capi_diagnostics            the in-process VP (pevp_open)
 *   capi_diagnostics ENDPOINT   a `pe-vp serve` VP (pevp_connect): the same checks
 * Messages go to stderr (stdout is what is checked); exit status 0 when every check held. */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pevp/pevp.h"

static int failures;

#define CHECK(cond, ...)                             \
  do {                                               \
    if (!(cond)) {                                   \
      fprintf(stderr, "diagnostics:%d: ", __LINE__); \
      fprintf(stderr, __VA_ARGS__);                  \
      fprintf(stderr, "\n");                         \
      ++failures;                                    \
    }                                                \
  } while (0)

/* Semaphore 0 starts at 0: decrementing it by 1 is the SEQ's rule seq.semaphore_underflow on the field
 * events.update_value of instruction 0 (docs/errors.md). */
static const char* kUnderflow =
    ".gen MARIANA\n"
    "ldweights src=sbuf[0]:[1,32] in_dtype=bf16 num_active_rows=64 num_active_cols=32 row_grp=0xF col_grp=0xF "
    "events.update_mode=DECREMENT events.update_sem=0 events.update_value=1\n";

static void check_fault_record(pevp_vp* vp) {
  unsigned char records[2 * 64];
  size_t count = 0;
  pevp_completion done;
  pevp_error_info info;
  memset(&info, 0x55, sizeof info);
  CHECK(pevp_arm(vp, 0, 0, 0) == PEVP_OK, "arm: %s", pevp_last_error(vp));
  CHECK(pevp_assemble(vp, kUnderflow, records, 2, &count) == PEVP_OK && count == 1, "assemble: %s",
        pevp_last_error(vp));
  CHECK(pevp_submit(vp, records, count) == PEVP_OK, "submit: %s", pevp_last_error(vp));
  CHECK(pevp_wait_idle(vp, 1000000, &done) == PEVP_OK && done.error == 1, "the fault: error %d (%s)", done.error,
        pevp_last_error(vp));
  CHECK(pevp_error_record(vp, &info) == PEVP_OK && info.valid, "error record: %s", pevp_last_error(vp));
  CHECK(strcmp(info.rule, "seq.semaphore_underflow") == 0 && info.index == 0 && info.value == 1, "rule '%s' index %u "
        "value %lld", info.rule, (unsigned)info.index, (long long)info.value);
  CHECK(strcmp(info.field, "events.update_value") == 0, "field '%s'", info.field);
  /* The SEQ's sentence: "instruction 0 (LDWEIGHTS): events.update_value = 1: semaphore 0 = 0 would go below 0
   * [seq.semaphore_underflow]" -- the instruction, its opcode's name, the field and value, why, the rule. */
  CHECK(strncmp(info.message, "instruction 0 (LDWEIGHTS): events.update_value = 1: ", 52) == 0 &&
            strstr(info.message, "semaphore 0 = 0 would go below 0") != NULL &&
            strstr(info.message, "[seq.semaphore_underflow]") != NULL,
        "message '%s'", info.message);
  CHECK(memchr(info.message, '\0', sizeof info.message) != NULL, "the message is a C string");
  CHECK(pevp_clear_error(vp) == PEVP_OK && pevp_clear_done(vp) == PEVP_OK, "clear: %s", pevp_last_error(vp));
  memset(&info, 0x55, sizeof info);
  CHECK(pevp_error_record(vp, &info) == PEVP_OK && !info.valid && info.field[0] == '\0' && info.message[0] == '\0',
        "a cleared record has no field or message: valid %d '%s' '%s'", info.valid, info.field, info.message);
}

static void check_privilege(pevp_vp* vp, const pevp_map* map) {
  uint32_t value = 0;
  const char* e;
  /* throttle_cfg, the protected face's first register: disable_throttle [8:0] resets to 0x1ff. */
  CHECK(pevp_read32(vp, map->protect, 0, &value) == PEVP_ERR_PRIVILEGE, "an unprivileged read: %s",
        pevp_last_error(vp));
  e = pevp_last_error(vp);
  CHECK(strstr(e, "unprivileged read of 4 bytes at 0x3002000") != NULL &&
            strstr(e, "protected:arr_seq_protected_cfg.throttle_cfg") != NULL &&
            strstr(e, "answers only privileged accesses (PPROT[0] = 1") != NULL,
        "the refusal names the access, the register and the rule: %s", e);
  CHECK(pevp_write32(vp, map->protect, 0, 0) == PEVP_ERR_PRIVILEGE &&
            strstr(pevp_last_error(vp), "unprivileged write of 4 bytes at 0x3002000") != NULL,
        "an unprivileged write: %s", pevp_last_error(vp));
  CHECK(pevp_read32(vp, map->protect, 1, &value) == PEVP_OK && (value & 0x1ff) == 0x1ff,
        "privileged, the register still has its reset value 0x1ff: 0x%x (%s)", (unsigned)value, pevp_last_error(vp));
  CHECK(pevp_read_reg(vp, "protected", "throttle_cfg.disable_throttle", &value) == PEVP_OK && value == 0x1ff,
        "by name on the protected face: 0x%x (%s)", (unsigned)value, pevp_last_error(vp));
  /* Past the face's registers but inside it: still refused for privilege first, and says there is no register. */
  CHECK(pevp_read32(vp, map->protect + 0xFFC, 0, &value) == PEVP_ERR_PRIVILEGE &&
            strstr(pevp_last_error(vp), "no register") != NULL,
        "an unprivileged read of an empty offset: %s", pevp_last_error(vp));
  /* An unmapped address stays a bus error, and the top face answers unprivileged reads. */
  CHECK(pevp_read32(vp, 0x7000000, 0, &value) == PEVP_ERR_BUS, "unmapped: %s", pevp_last_error(vp));
  CHECK(pevp_read32(vp, map->top, 0, &value) == PEVP_OK, "the top face: %s", pevp_last_error(vp));
}

static void check_map(const pevp_map* map) {
  /* The preset map (docs/sdk.md): the apb window at 0x3000000, its faces 4 KiB apart. */
  CHECK(map->apb == 0x3000000 && map->top == 0x3000000 && map->cluster == 0x3001000 && map->protect == 0x3002000 &&
            map->vp_seq == 0x3003000,
        "face bases 0x%llx 0x%llx 0x%llx 0x%llx", (unsigned long long)map->top, (unsigned long long)map->cluster,
        (unsigned long long)map->protect, (unsigned long long)map->vp_seq);
  CHECK(PEVP_PRESET_TOP_BASE == map->top && PEVP_PRESET_CLUSTER_BASE == map->cluster &&
            PEVP_PRESET_PROTECT_BASE == map->protect && PEVP_PRESET_VP_SEQ_BASE == map->vp_seq &&
            PEVP_PRESET_APB_BASE == map->apb && PEVP_PRESET_SBUF_BASE == map->sbuf &&
            PEVP_PRESET_PSUM_BASE == map->psum && PEVP_PRESET_IQ_BASE == map->iq,
        "the PEVP_PRESET_*_BASE constants are the preset VP's map");
}

/* The VP's reports since the last take, as pevp_diagnostics gives them: the fault's Info, and the Warning of a read
 * from the write-only instruction-queue window (a bus error for the caller too), each one line. */
static void check_diagnostics(pevp_vp* vp, const pevp_map* map) {
  static char lines[1 << 16];
  const char* warning;
  size_t length = 0;
  uint32_t value = 0;
  CHECK(pevp_read32(vp, map->iq, 0, &value) == PEVP_ERR_BUS, "a read of the queue: %s", pevp_last_error(vp));
  CHECK(pevp_diagnostics(vp, lines, sizeof lines, &length) == PEVP_OK, "diagnostics: %s", pevp_last_error(vp));
  CHECK(strstr(lines, "Info: /pevp/seq: instruction 0 (LDWEIGHTS): events.update_value = 1") != NULL,
        "the fault's report is a diagnostics line: '%s'", lines);
  warning = strstr(lines, "\nWarning: /pevp/seq: instruction queue: reads are not supported (write-only window)\n");
  CHECK(warning != NULL, "the queue's warning is one diagnostics line: '%s'", lines);
  CHECK(strstr(lines, "In file") == NULL, "no SystemC file lines: '%s'", lines);
}

int main(int argc, char** argv) {
  const char* endpoint = argc > 1 ? argv[1] : NULL;
  char captured_path[] = "/tmp/pevp-diagnostics-stdout-XXXXXX";
  const int captured = mkstemp(captured_path);
  const int saved_stdout = dup(STDOUT_FILENO);
  pevp_vp* vp = NULL;
  pevp_map map;
  char out[4096];
  ssize_t n;
  if (captured < 0 || saved_stdout < 0 || dup2(captured, STDOUT_FILENO) < 0) {
    perror("diagnostics: capturing stdout");
    return 2;
  }
  unlink(captured_path);

  if ((endpoint ? pevp_connect(endpoint, &vp) : pevp_open("MARIANA", &vp)) != PEVP_OK) {
    fprintf(stderr, "diagnostics: open: %s\n", pevp_open_error());
    return 1;
  }
  CHECK(pevp_get_map(vp, &map) == PEVP_OK, "map");
  check_map(&map);
  check_fault_record(vp);
  check_privilege(vp, &map);
  check_diagnostics(vp, &map);
  pevp_close(vp);

  /* Everything the library wrote on stdout (nothing is the rule). */
  fflush(stdout);
  n = pread(captured, out, sizeof out - 1, 0);
  out[n > 0 ? n : 0] = '\0';
  CHECK(n == 0, "the library wrote %zd bytes on stdout: '%s'", n, out);
  dup2(saved_stdout, STDOUT_FILENO);
  if (failures) fprintf(stderr, "diagnostics: %d checks failed\n", failures);
  return failures ? 1 : 0;
}
