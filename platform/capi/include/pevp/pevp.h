/* pevp.h -- the C driver API of pe-vp: a virtual platform of the PE matrix engine driven the way a C driver drives
 * a device -- 32-bit register reads and writes and bursts on the platform bus, SBUF and PSUM through it, the arming
 * sequence of spec 003 section 6, instruction submission, waiting for idle or an interrupt with a timeout, the
 * 48-bit counters and the SEQ's error record. C99; no exception crosses it: every call returns a pevp_status, and
 * pevp_last_error() says what went wrong in words. docs/sdk.md.
 *
 * The VP runs in this process (SystemC, one platform per process): simulated time advances only inside the calls,
 * so a program's run is deterministic. Link pevp::capi (CMake) or `pkg-config --libs --static pevp`. */
#ifndef PEVP_PEVP_H
#define PEVP_PEVP_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum pevp_status {
  PEVP_OK = 0,
  PEVP_ERR_ARGUMENT = 1,  /* a null pointer, an unknown generation, face or register, a value out of range */
  PEVP_ERR_STATE = 2,     /* a second VP in this process, or a VP broken by an earlier deadlock */
  PEVP_ERR_BUS = 3,       /* the bus answered with an error (an unmapped address, a privilege violation) */
  PEVP_ERR_ASSEMBLY = 4,  /* pevp_assemble: the text has errors */
  PEVP_ERR_TIMEOUT = 5,   /* pevp_wait_idle: the SEQ did not settle in time */
  PEVP_ERR_INTERNAL = 6   /* anything else; pevp_last_error() has the message */
} pevp_status;

typedef struct pevp_vp pevp_vp;

/* A stopped SEQ's error record (the vp_seq CSRs). */
typedef struct pevp_error_info {
  int valid;                 /* 0: no error recorded */
  uint32_t index;            /* the instruction */
  uint8_t opcode;
  uint8_t field_offset;      /* 0xFF: the instruction as a whole */
  uint16_t rule_number;
  int64_t value;
  char rule[64];             /* "mm.in_dtype", "exec.no_stationary", ... */
  char description[256];     /* the whole record in words */
} pevp_error_info;

typedef struct pevp_completion {
  int done, error, timed_out;
  uint64_t retired;          /* instructions retired so far */
} pevp_completion;

/* The platform's bus addresses (the preset address map). */
typedef struct pevp_map {
  uint64_t sbuf, psum, apb, iq;
  uint32_t sbuf_partition_bytes, psum_partition_bytes, partitions;
} pevp_map;

/* Opens the in-process VP of `generation` ("CAYMAN", "MARIANA", "MARIANA_PLUS", "MAVERICK"), timing and data. */
pevp_status pevp_open(const char* generation, pevp_vp** vp);
/* Frees the handle (a null pointer is ignored). The platform itself lives until the process ends -- SystemC cannot
 * take a simulation apart -- so a later pevp_open in the same process is PEVP_ERR_STATE. */
void pevp_close(pevp_vp* vp);
/* The message of the last failed call on `vp` ("" after a success); valid until the next call. */
const char* pevp_last_error(const pevp_vp* vp);
pevp_status pevp_get_map(pevp_vp* vp, pevp_map* map);
/* Simulated time now, in picoseconds. */
pevp_status pevp_time_ps(pevp_vp* vp, uint64_t* ps);

/* Bus access. `privileged` selects the protected face's PPROT. Bursts are byte-addressed, any length. */
pevp_status pevp_read32(pevp_vp* vp, uint64_t address, int privileged, uint32_t* value);
pevp_status pevp_write32(pevp_vp* vp, uint64_t address, int privileged, uint32_t value);
pevp_status pevp_read(pevp_vp* vp, uint64_t address, void* data, size_t bytes);
pevp_status pevp_write(pevp_vp* vp, uint64_t address, const void* data, size_t bytes);
/* A register or field by its generated name: face "top", "cluster", "protected" or "vp"; name "reg",
 * "bundle.reg", either with ".field" (`pe-vp regs` lists them). A field write is read-modify-write. */
pevp_status pevp_read_reg(pevp_vp* vp, const char* face, const char* name, uint32_t* value);
pevp_status pevp_write_reg(pevp_vp* vp, const char* face, const char* name, uint32_t value);
/* A 48-bit counter from its _lsb register (the _msb read after it). */
pevp_status pevp_read_counter48(pevp_vp* vp, const char* face, const char* lsb_name, uint64_t* value);

/* Spec 003 section 6: queue_cfg (the three flags), the counters reset and enabled, the VP's interrupt enables. */
pevp_status pevp_arm(pevp_vp* vp, int serialized, int single_entry, int reg_immediate);
/* Queues `count` 64-byte records for the instruction queue (written in bursts behind its back-pressure). */
pevp_status pevp_submit(pevp_vp* vp, const void* records, size_t count);
/* Waits until the SEQ is done or stopped on an error, or `timeout_ns` of simulated time passed. */
pevp_status pevp_wait_idle(pevp_vp* vp, uint64_t timeout_ns, pevp_completion* completion);
pevp_status pevp_clear_done(pevp_vp* vp);
pevp_status pevp_error_record(pevp_vp* vp, pevp_error_info* info);
pevp_status pevp_clear_error(pevp_vp* vp);

/* Assembles `source` (docs/assembly.md) for the VP's generation into at most `max_records` 64-byte records at
 * `records`; *count is how many the text has (more than max_records: nothing is written, PEVP_ERR_ARGUMENT).
 * Errors: PEVP_ERR_ASSEMBLY, with every diagnostic in pevp_last_error(). */
pevp_status pevp_assemble(pevp_vp* vp, const char* source, void* records, size_t max_records, size_t* count);

#ifdef __cplusplus
}
#endif

#endif /* PEVP_PEVP_H */
