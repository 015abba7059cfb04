/* pevp.h -- the C driver API of pe-vp: a virtual platform of the PE matrix engine driven the way a C driver drives
 * a device -- 32-bit register reads and writes and bursts on the platform bus, SBUF and PSUM through it, the arming
 * sequence of spec 003 section 6, instruction submission, waiting for idle or an interrupt with a timeout, the
 * 48-bit counters and the SEQ's error record. C99; no exception crosses it: every call returns a pevp_status, and
 * pevp_last_error() says what went wrong in words. docs/sdk.md.
 *
 * The VP runs in this process (pevp_open; SystemC, one platform per process) or in a `pe-vp serve` process
 * (pevp_connect; docs/protocol.md): the same calls, results, errors and simulated times either way. Simulated time
 * advances only inside the calls, so a program's run is deterministic. Link pevp::capi (CMake) or
 * `pkg-config --libs --static pevp`. */
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
  PEVP_ERR_STATE = 2,     /* a second VP in this process, a server serving another client, or a VP broken by an
                             earlier deadlock */
  PEVP_ERR_BUS = 3,       /* the bus answered with an error (an unmapped address, a bad width or alignment) */
  PEVP_ERR_ASSEMBLY = 4,  /* pevp_assemble: the text has errors */
  PEVP_ERR_TIMEOUT = 5,   /* pevp_wait_idle: the SEQ did not settle in time */
  PEVP_ERR_INTERNAL = 6,  /* anything else; pevp_last_error() has the message */
  PEVP_ERR_PROTOCOL = 7,  /* a remote VP: a frame or payload broke the protocol (docs/protocol.md) */
  PEVP_ERR_CONNECTION = 8, /* a remote VP: the connection failed or closed (the handle is then unusable) */
  PEVP_ERR_AUTH = 9,       /* a remote VP over TCP refused this client's token (none, or not the server's) */
  PEVP_ERR_HAZARD = 10,    /* the call met a driver hazard with checks.hazards = error: pevp_last_error() is the
                              report (docs/sdk.md "What the VP checks for you"); the access itself took effect */
  PEVP_ERR_PRIVILEGE = 11  /* an unprivileged access to the protected face, which answers only privileged ones
                              (PPROT[0] = 1, spec 003 section 7): pevp_last_error() names the address and the
                              register; nothing was read or written */
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
  char description[256];     /* the record's CSRs in words (index, opcode byte, field offset, value, rule) */
  /* What the VP knows beyond the CSRs (empty when not valid, or for a VP that predates them): */
  char field[64];            /* the instruction field's name ("in_dtype", "events.update_value"; "" for the whole
                                instruction) */
  char message[512];         /* the full sentence: "instruction 3 (MATMUL): in_dtype = 12: ... [mm.in_dtype]"
                                (cut at 511 bytes; docs/errors.md) */
} pevp_error_info;

typedef struct pevp_completion {
  int done, error, timed_out;
  uint64_t retired;          /* instructions retired so far */
} pevp_completion;

/* The platform's bus addresses (the preset address map). */
typedef struct pevp_map {
  uint64_t sbuf, psum, apb, iq;
  uint32_t sbuf_partition_bytes, psum_partition_bytes, partitions;
  /* Each register face's bus base (absolute: a generated <name>_regs_c.h offset added to it is the register's bus
   * address): the arr_seq faces top (tpb_arr_seq_top_host_visible), cluster (tpb_arr_seq_cluster_host_visible),
   * protect (tpb_arr_seq_top_protected; privileged accesses only) and vp_seq, each inside the apb window. */
  uint64_t top, cluster, protect, vp_seq;
} pevp_map;

/* The same bases in the preset address map, for code that needs them as constants (every generation's preset;
 * pevp_map has the VP's own). */
#define PEVP_PRESET_SBUF_BASE UINT64_C(0x0000000)
#define PEVP_PRESET_PSUM_BASE UINT64_C(0x2000000)
#define PEVP_PRESET_APB_BASE UINT64_C(0x3000000)
#define PEVP_PRESET_IQ_BASE UINT64_C(0x3010000)
#define PEVP_PRESET_TOP_BASE UINT64_C(0x3000000)
#define PEVP_PRESET_CLUSTER_BASE UINT64_C(0x3001000)
#define PEVP_PRESET_PROTECT_BASE UINT64_C(0x3002000)
#define PEVP_PRESET_VP_SEQ_BASE UINT64_C(0x3003000)

/* Opens the in-process VP of `generation` ("CAYMAN", "MARIANA", "MARIANA_PLUS", "MAVERICK"), timing and data. */
pevp_status pevp_open(const char* generation, pevp_vp** vp);
/* The same with configuration overrides, each "key=value" as `pe-vp --set` takes it (docs/configuration.md), e.g.
 * "arr_seq.ififo_depth=4", "mode=functional", "geometry.pe_rows=64"; a refused key or value is PEVP_ERR_ARGUMENT. */
pevp_status pevp_open_config(const char* generation, const char* const* settings, size_t count, pevp_vp** vp);
/* Connects to a VP that `pe-vp serve --listen ENDPOINT` runs: "unix:PATH", "tcp:PORT" (127.0.0.1) or
 * "tcp:HOST:PORT". PEVP_ERR_CONNECTION when nothing answers, PEVP_ERR_STATE when the server is serving another
 * client. The server's VP keeps its state from client to client (a device, not a session), unless the server runs
 * with --reset-between-clients (then each client finds it at its power-on state).
 * Over TCP the server takes a client only with the token it wrote to its token file (docs/protocol.md,
 * Authentication): pevp_connect presents the one in the file $PEVP_TOKEN_FILE names, else in the server's default
 * token file (~/.pe-vp/tcp-HOST-PORT.token) when there is one; a refused or missing token is PEVP_ERR_AUTH. */
pevp_status pevp_connect(const char* endpoint, pevp_vp** vp);
/* The same with the token file given (NULL or "": as pevp_connect); an unreadable or empty file is
 * PEVP_ERR_ARGUMENT before anything is connected. A Unix socket takes no token: `token_file` is not read. */
pevp_status pevp_connect_token(const char* endpoint, const char* token_file, pevp_vp** vp);
/* Why the last pevp_open, pevp_open_config, pevp_connect or pevp_connect_token of this thread failed ("" after a
 * success). */
const char* pevp_open_error(void);
/* Frees the handle (a null pointer is ignored); a remote one closes its connection, and the server takes its next
 * client. An in-process platform lives until the process ends -- SystemC cannot take a simulation apart -- so a
 * later pevp_open in the same process is PEVP_ERR_STATE. */
void pevp_close(pevp_vp* vp);
/* The message of the last failed call on `vp` ("" after a success); valid until the next call. */
const char* pevp_last_error(const pevp_vp* vp);
pevp_status pevp_get_map(pevp_vp* vp, pevp_map* map);
/* Simulated time now, in picoseconds. */
pevp_status pevp_time_ps(pevp_vp* vp, uint64_t* ps);

/* The tensor engine's clock in cycles (docs/timing.md: the cycles the Timeline schedules in, the micro-op log's). */
typedef struct pevp_cycles {
  uint64_t now;            /* the engine cycle of the current simulated time (the first boundary at or after it) */
  uint64_t busy;           /* cycles the engine was busy so far: the statistics' "cycles" (idle gaps excluded) */
  uint64_t first_start;    /* the first micro-op's start cycle (0 before any) */
  uint64_t last_complete;  /* the latest completion or response cycle so far */
  double clock_ghz;        /* tensor_engine.clock_ghz: one cycle is 1000 / clock_ghz ps */
} pevp_cycles;
pevp_status pevp_read_cycles(pevp_vp* vp, pevp_cycles* cycles);

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

/* PSUM partition `partition` from byte `offset` (a Matmul's fp32 results): `bytes` bytes through the bus, as
 * pevp_read at pevp_map's psum + partition x psum_partition_bytes + offset. A partition past the map's, or a range
 * past the partition's end, is PEVP_ERR_ARGUMENT before anything is read. */
pevp_status pevp_read_psum(pevp_vp* vp, uint32_t partition, uint32_t offset, void* data, size_t bytes);

/* Spec 003 section 6: queue_cfg (the three flags), the counters reset and enabled, the VP's interrupt enables. */
pevp_status pevp_arm(pevp_vp* vp, int serialized, int single_entry, int reg_immediate);
/* Queues `count` 64-byte records for the instruction queue (written in bursts behind its back-pressure). */
pevp_status pevp_submit(pevp_vp* vp, const void* records, size_t count);
/* Waits until the SEQ is done or stopped on an error, or `timeout_ns` of simulated time passed. */
pevp_status pevp_wait_idle(pevp_vp* vp, uint64_t timeout_ns, pevp_completion* completion);
/* Waits until the interrupt line is high (irq_status & irq_enable: done or error, armed by pevp_arm) or
 * `timeout_ns` of simulated time passed: *raised 1 or 0 (a timeout is not an error here: the line is the news). */
pevp_status pevp_wait_irq(pevp_vp* vp, uint64_t timeout_ns, int* raised);
pevp_status pevp_clear_done(pevp_vp* vp);
pevp_status pevp_error_record(pevp_vp* vp, pevp_error_info* info);
pevp_status pevp_clear_error(pevp_vp* vp);

/* Assembles `source` (docs/assembly.md) for the VP's generation into at most `max_records` 64-byte records at
 * `records`; *count is how many the text has (more than max_records: nothing is written, PEVP_ERR_ARGUMENT).
 * Errors: PEVP_ERR_ASSEMBLY, with every diagnostic in pevp_last_error(). */
pevp_status pevp_assemble(pevp_vp* vp, const char* source, void* records, size_t max_records, size_t* count);

/* Checkpoint and restore (docs/checkpoint.md): the whole VP state -- SBUF, PSUM, every CSR, the PE array, the
 * SEQ and the timeline, simulated time -- at an idle point (nothing in flight), to a file of this process (the
 * bytes travel over the connection for a remote VP). Restoring into a VP of the same generation and configuration
 * whose simulated time is not past the checkpoint's continues bit- and cycle-identically; a truncated, corrupt,
 * wrong-version or mismatched checkpoint is PEVP_ERR_ARGUMENT with the reason, and the VP is left as it was.
 * Saving away from an idle point is PEVP_ERR_STATE. */
pevp_status pevp_save_checkpoint(pevp_vp* vp, const char* path);
pevp_status pevp_restore_checkpoint(pevp_vp* vp, const char* path);

/* The hard reset (docs/sdk.md "Reset"): the VP as at power-on, at once, whatever it was doing. Everything queued,
 * blocked or in flight is dropped -- the SEQ's queue, an instruction waiting on a semaphore nothing will set, the
 * instructions in the array, the DMA queues and their descriptors, records submitted and not yet written, the
 * interrupts -- and every register, counter, semaphore, SBUF, PSUM and device memory (HBM) is as at power-on; the
 * host's memory stays (D-RESET-MEMORY). Simulated time does not move (the reset takes no simulated time) and the
 * statistics start again. Arm the VP again before the next program. PEVP_ERR_STATE when the VP has no power-on
 * state to return to (csrs.impl = rtl: D-CSR-RTL-CKPT). */
pevp_status pevp_reset(pevp_vp* vp);

/* The micro-op log (docs/cosim-reference.md): one JSON line per micro-op the sequencer schedules -- instruction,
 * opcode, kind, tile, PSUM banks, ready / issue / start / end / complete / done / response cycles, stalls -- for a
 * testbench to compare with an RTL's events. pevp_micro_op_log(vp, 1) starts keeping the lines of the micro-ops
 * issued from then on, (vp, 0) stops (the lines kept stay readable). pevp_micro_op_log_read takes the lines kept
 * so far, each ending in '\n', as pevp_stats_json gives its text: written with a terminating NUL when `size` >
 * *length, and then gone from the VP; else nothing is written, the lines stay (on this handle) and the call is
 * PEVP_ERR_ARGUMENT (ask again with a larger buffer; a null buffer with size 0 asks for the length).
 * pevp_micro_op_log_write takes them all into the file `path` (replaced atomically; written in this process, so a
 * remote VP's lines travel over the connection). The lines are byte-identical for the same requests. */
pevp_status pevp_micro_op_log(pevp_vp* vp, int on);
pevp_status pevp_micro_op_log_read(pevp_vp* vp, char* buffer, size_t size, size_t* length);
pevp_status pevp_micro_op_log_write(pevp_vp* vp, const char* path);

/* The scoreboard (docs/cosim-reference.md "Scoreboard"): predict, then compare. pevp_expect executes one 64-byte
 * instruction, as submitted, on the VP -- which must be armed and idle (nothing in flight, no error record) -- waits
 * until it retires, and reports what it wrote to PSUM and when, for a testbench to check its own array against,
 * transaction by transaction. The instruction runs on the VP's state (the stationary loaded before, PSUM's
 * contents, the cycle counter), so a stream checked instruction by instruction gives the same PSUM as submitted
 * whole; its cycles are those of an instruction issued into an idle engine.
 *
 * The window: PSUM partitions [first_partition, first_partition + partitions) and, in each, bytes
 * [offset, offset + bytes) -- the region its matmuls' destination patterns cover (every matmul micro-op's, as a
 * bounding box); 0 x 0 for an instruction that writes no PSUM (a weight load, a register write). `data` receives it
 * partition-major (partition first_partition's bytes first), as PSUM then holds it: fp32 words (element_bytes 4), or
 * bf16 halves for an out_dtype BFLOAT16 output (element_bytes 2), little-endian.
 *
 * The cycles are the tensor engine's (pevp_read_cycles, the micro-op log): issue (its first micro-op entered the
 * IFIFO), start (it left the IFIFO), complete -- the completion: the latest `complete` of its micro-ops, its last
 * effect, the last PSUM column committed (a weight load: the weights loaded) -- and response (the SEQ saw the last
 * response and retired it).
 *
 * Errors: PEVP_ERR_ARGUMENT for an instruction that breaks a validity rule (the message names the rule and the
 * field; nothing was executed) or a `data` buffer smaller than the window -- the instruction ran, *out is filled,
 * out->data_bytes says the size needed and pevp_expect_data takes the window; PEVP_ERR_STATE for a busy SEQ, one
 * stopped on an error record, or an instruction the VP refused at execution (the message names the rule; the SEQ
 * stops on its error record as after pevp_submit); PEVP_ERR_TIMEOUT when it did not retire within 10 ms of
 * simulated time (an EVENTS wait nothing satisfies, an unarmed VP). */
typedef struct pevp_expectation {
  uint64_t instruction;       /* its index in the stream the VP was submitted */
  uint32_t micro_ops;         /* the micro-ops it was lowered into */
  uint64_t issue_cycle, start_cycle, complete_cycle, response_cycle;
  uint32_t first_partition, partitions;  /* the PSUM window's partitions */
  uint32_t offset, bytes;     /* its bytes in each partition */
  uint32_t element_bytes;     /* 4: fp32 words; 2: bf16 */
  size_t data_bytes;          /* partitions x bytes: what `data` needs */
} pevp_expectation;
pevp_status pevp_expect(pevp_vp* vp, const void* instr64, void* data, size_t capacity, pevp_expectation* out);
/* The window of the last pevp_expect on this handle, when its buffer was too small: `capacity` >= its data_bytes. */
pevp_status pevp_expect_data(pevp_vp* vp, void* data, size_t capacity);

/* The run statistics as JSON (what `pe-vp run --stats-json` writes: cycles, utilisation, TFLOPS, stalls by reason,
 * instructions by opcode; docs/timing.md): *length is the text's length; it is written with its terminating NUL
 * when `size` > *length, else nothing is written and the call is PEVP_ERR_ARGUMENT (ask again with a larger
 * buffer; a null buffer with size 0 asks for the length). */
pevp_status pevp_stats_json(pevp_vp* vp, char* buffer, size_t size, size_t* length);

/* The VP's warnings since the last take, one a line, each ending in '\n': the hazards it found with checks.hazards =
 * warn (the default; docs/sdk.md "What the VP checks for you"), which the library never prints. As
 * pevp_micro_op_log_read: written with a terminating NUL when `size` > *length, and then gone; else nothing is
 * written, the lines stay and the call is PEVP_ERR_ARGUMENT (a null buffer with size 0 asks for the length). The VP
 * keeps at most a frame's worth of lines between takes and says how many it did not keep. */
pevp_status pevp_diagnostics(pevp_vp* vp, char* buffer, size_t size, size_t* length);

#ifdef __cplusplus
}
#endif

#endif /* PEVP_PEVP_H */
