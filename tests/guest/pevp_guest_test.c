/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The guest side of scripts/run-guest-test.sh: runs in a QEMU guest against
 * /dev/pevp0 (drivers/linux) and checks, through the ioctls of uapi/pevp.h:
 *   - the device's identity and BAR sizes (the contract of docs/qemu.md);
 *   - a bf16 GEMM (gemm.pes, assembled on the host by `pe-vp asm`): operands
 *     in by DMA, the records through the SEQ queue, fp32 results out by DMA,
 *     bit-exact against the defined-order reference of gemm_case.h; the
 *     instructions retired, the perf counters of the tile, and interrupts on
 *     both vectors;
 *   - a faulting program: -EIO, the rule (opcode.unknown) and the instruction,
 *     -EBUSY until the error is cleared, then a clean run again;
 *   - a refused DMA descriptor: -EIO and the engine's rule (address_range);
 *   - argument errors: -ENOTTY for an unknown ioctl, -EINVAL for bad sizes;
 * and prints figures for docs/performance.md. With --stuck (stuck.pes: an
 * instruction waiting on a semaphore nothing sets) it checks that a submit
 * ends at its timeout with -ETIMEDOUT, the next one gets -EBUSY, and setting
 * the semaphore (PEVP_IOC_SEMAPHORE) lets the SEQ finish and run again;
 * then it submits the program once more and leaves the device stuck on it for
 * the reboot. With --after-reset (run after the guest rebooted, which makes
 * QEMU send DEVICE_RESET to the stuck device) it checks that the device is at
 * its power-on state -- no instruction retired since the reset, the stuck
 * program gone, PSUM (which held the GEMM's results) all zeros -- and that the
 * GEMM runs again, bit-exact.
 * Ends with "guest test: PASS" (exit 0) or one "guest test: FAIL: ..." line
 * per failed check (exit 1).
 *
 * usage: pevp_guest_test GEMM_BIN [DEVICE]
 *        pevp_guest_test --stuck STUCK_BIN [DEVICE]
 *        pevp_guest_test --after-reset GEMM_BIN [DEVICE]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "../../drivers/linux/uapi/pevp.h"
#include "gemm_case.h"

#define TIMEOUT_MS 20000
#define OPCODE_NOT_ON_MARIANA 0x05	/* docs/datapath.md: faults with opcode.unknown */
#define RULE_OPCODE_UNKNOWN 0x001	/* docs/errors.md */
#define DMA_RULE_ADDRESS_RANGE 11	/* docs/dma.md */
#define UNMAPPED_DEVICE_ADDRESS 0x80000000000ull	/* between HBM and host memory */
#define STUCK_SEMAPHORE 7	/* stuck.pes waits on it */
#define PEVP_VP_SEMAPHORES 32	/* vp_seq semaphore_0..31 */

static int failures;

static void fail(const char *fmt, ...)
{
	va_list ap;

	printf("guest test: FAIL: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	failures++;
}

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int dma(int fd, int direction, void *buf, uint64_t device, uint32_t rows, uint32_t row_bytes,
	       uint32_t stride, uint32_t elem, struct pevp_dma *out)
{
	struct pevp_dma d;

	memset(&d, 0, sizeof d);
	d.user_addr = (uintptr_t)buf;
	d.device_addr = device;
	d.rows = rows;
	d.row_bytes = row_bytes;
	d.device_row_stride = stride;
	d.direction = direction;
	d.elem_bytes = elem;
	d.timeout_ms = TIMEOUT_MS;
	if (ioctl(fd, PEVP_IOC_DMA, &d) != 0) {
		if (out)
			*out = d;
		return -errno;
	}
	if (out)
		*out = d;
	return 0;
}

static int submit(int fd, const void *records, uint32_t count, struct pevp_submit *s)
{
	memset(s, 0, sizeof *s);
	s->records = (uintptr_t)records;
	s->count = count;
	s->timeout_ms = TIMEOUT_MS;
	return ioctl(fd, PEVP_IOC_SUBMIT, s) ? -errno : 0;
}

static int perf(int fd, struct pevp_perf *p)
{
	return ioctl(fd, PEVP_IOC_PERF, p) ? -errno : 0;
}

/* Operands in, the program, results out; returns the wall time in us, or -1 after reporting a failure. */
static double run_gemm(int fd, const struct gemm_case *g, const uint8_t *records, float got[GEMM_M][GEMM_N],
		       unsigned *dma_irqs, unsigned *seq_irqs)
{
	static uint16_t tile[GEMM_KT][GEMM_N];
	struct pevp_submit s;
	struct pevp_dma d;
	double start = now_us();
	int t, r;

	*dma_irqs = *seq_irqs = 0;
	for (t = 0; t < GEMM_TILES; t++) {
		/* Stationary k-tile t: partition k gets a[tK + k][0..M), at byte GEMM_A_OFFSET(t). */
		r = dma(fd, PEVP_DMA_TO_DEVICE, (void *)g->a[t * GEMM_KT], GEMM_A_OFFSET(t), GEMM_KT,
			sizeof g->a[0], GEMM_SBUF_PARTITION_BYTES, 2, &d);
		if (r) {
			fail("DMA of A's k-tile %d into SBUF: %s (DMA rule %u)", t, strerror(-r), d.dma_error.rule_id);
			return -1;
		}
		*dma_irqs += d.irqs;
		memcpy(tile, g->b[t * GEMM_KT], sizeof tile);
		r = dma(fd, PEVP_DMA_TO_DEVICE, tile, GEMM_B_OFFSET(t), GEMM_KT, sizeof tile[0],
			GEMM_SBUF_PARTITION_BYTES, 2, &d);
		if (r) {
			fail("DMA of B's k-tile %d into SBUF: %s (DMA rule %u)", t, strerror(-r), d.dma_error.rule_id);
			return -1;
		}
		*dma_irqs += d.irqs;
	}
	r = submit(fd, records, GEMM_RECORDS, &s);
	if (r) {
		fail("GEMM submit: %s; instruction %llu faulted with rule 0x%03x %s", strerror(-r),
		     (unsigned long long)s.error.program_index, s.error.rule_id, s.error.rule);
		return -1;
	}
	*seq_irqs = s.irqs;
	if (s.retired != GEMM_RECORDS)
		fail("GEMM: %llu instructions retired, expected %d", (unsigned long long)s.retired, GEMM_RECORDS);
	r = dma(fd, PEVP_DMA_FROM_DEVICE, got, GEMM_PSUM_BASE, GEMM_M, sizeof got[0], GEMM_PSUM_PARTITION_BYTES, 4,
		&d);
	if (r) {
		fail("DMA of C out of PSUM: %s (DMA rule %u)", strerror(-r), d.dma_error.rule_id);
		return -1;
	}
	*dma_irqs += d.irqs;
	return now_us() - start;
}

static void check_gemm(const struct gemm_case *g, const float got[GEMM_M][GEMM_N], const char *when)
{
	int fm = 0, fn = 0;
	long differ = gemm_compare(g, got, &fm, &fn);

	if (differ)
		fail("%s: %ld of %d elements differ from the defined-order reference; first C[%d][%d] = %a, expected %a",
		     when, differ, GEMM_M * GEMM_N, fm, fn, got[fm][fn], g->c[fm][fn]);
	else
		printf("guest test: %s: C[%dx%d] bit-exact against the defined-order reference\n", when, GEMM_M,
		       GEMM_N);
}

static void check_identity(int fd)
{
	struct pevp_info info;

	if (ioctl(fd, PEVP_IOC_INFO, &info) != 0) {
		fail("PEVP_IOC_INFO: %s", strerror(errno));
		return;
	}
	if (info.vendor != PEVP_PCI_VENDOR_ID || info.device != PEVP_PCI_DEVICE_ID || info.revision != 1)
		fail("identity %04x:%04x rev %u, expected %04x:%04x rev 1", info.vendor, info.device, info.revision,
		     PEVP_PCI_VENDOR_ID, PEVP_PCI_DEVICE_ID);
	/* docs/qemu.md: BAR0 2 MiB (registers, queue, DMA face), BAR2 64 MiB (SBUF, PSUM), BAR4 64 MiB (HBM). */
	if (info.bar_bytes[0] != 2u << 20 || info.bar_bytes[1] != 64u << 20 || info.bar_bytes[2] != 64u << 20)
		fail("BAR sizes %llu, %llu, %llu bytes, expected 2 MiB, 64 MiB, 64 MiB",
		     (unsigned long long)info.bar_bytes[0], (unsigned long long)info.bar_bytes[1],
		     (unsigned long long)info.bar_bytes[2]);
	if (info.dma_engines != 16 || info.dma_queues_per_engine != 16)
		fail("DMA geometry %u x %u, expected the default 16 x 16", info.dma_engines,
		     info.dma_queues_per_engine);
	printf("guest test: device %04x:%04x rev %u, DMA %u x %u\n", info.vendor, info.device, info.revision,
	       info.dma_engines, info.dma_queues_per_engine);
}

static void check_fault(int fd, const uint8_t *records, const struct gemm_case *g, float got[GEMM_M][GEMM_N])
{
	uint8_t bad[2 * PEVP_RECORD_BYTES];
	struct pevp_submit s;
	struct pevp_error e;
	unsigned dma_irqs, seq_irqs;
	int r;

	/* Instruction 0: the first ldweights; instruction 1: a matmul whose opcode byte MARIANA does not have. */
	memcpy(bad, records, sizeof bad);
	bad[PEVP_RECORD_BYTES] = OPCODE_NOT_ON_MARIANA;
	r = submit(fd, bad, 2, &s);
	if (r != -EIO)
		fail("faulting program: %s, expected EIO", r ? strerror(-r) : "success");
	else if (!s.error.valid || s.error.rule_id != RULE_OPCODE_UNKNOWN || strcmp(s.error.rule, "opcode.unknown") ||
		 s.error.program_index != 1 || s.error.opcode != OPCODE_NOT_ON_MARIANA || s.retired != 1)
		fail("faulting program: record rule 0x%03x '%s' at instruction %llu opcode 0x%02x, %llu retired; expected 0x001 'opcode.unknown' at 1, opcode 0x05, 1 retired",
		     s.error.rule_id, s.error.rule, (unsigned long long)s.error.program_index, s.error.opcode,
		     (unsigned long long)s.retired);
	else
		printf("guest test: faulting program: EIO, instruction %llu (opcode 0x%02x) broke rule 0x%03x %s\n",
		       (unsigned long long)s.error.program_index, s.error.opcode, s.error.rule_id, s.error.rule);

	if (ioctl(fd, PEVP_IOC_ERROR, &e) != 0 || e.rule_id != RULE_OPCODE_UNKNOWN)
		fail("PEVP_IOC_ERROR does not hold the last record (rule 0x%03x)", e.rule_id);
	r = submit(fd, records, GEMM_RECORDS, &s);
	if (r != -EBUSY)
		fail("submit while stopped on an error: %s, expected EBUSY", r ? strerror(-r) : "success");
	if (ioctl(fd, PEVP_IOC_CLEAR_ERROR) != 0)
		fail("PEVP_IOC_CLEAR_ERROR: %s", strerror(errno));
	if (ioctl(fd, PEVP_IOC_CLEAR_ERROR) != -1 || errno != EINVAL)
		fail("PEVP_IOC_CLEAR_ERROR without an error: expected EINVAL");
	memset(got, 0, sizeof(float) * GEMM_M * GEMM_N);
	if (run_gemm(fd, g, records, got, &dma_irqs, &seq_irqs) >= 0)
		check_gemm(g, (const float(*)[GEMM_N])got, "GEMM after the cleared fault");
}

static void check_dma_fault(int fd)
{
	uint32_t word = 0x12345678, back = 0;
	struct pevp_dma d;
	int r;

	r = dma(fd, PEVP_DMA_TO_DEVICE, &word, UNMAPPED_DEVICE_ADDRESS, 1, 4, 4, 4, &d);
	if (r != -EIO || !d.dma_error.valid || d.dma_error.rule_id != DMA_RULE_ADDRESS_RANGE)
		fail("DMA to an unmapped device address: %s, rule %u; expected EIO and rule %d (address_range)",
		     r ? strerror(-r) : "success", d.dma_error.rule_id, DMA_RULE_ADDRESS_RANGE);
	else
		printf("guest test: refused DMA: EIO, rule %u (address_range), field 0x%02x\n", d.dma_error.rule_id,
		       d.dma_error.field_id);
	/* The queue resumes behind the refused descriptor: a word through SBUF and back. */
	r = dma(fd, PEVP_DMA_TO_DEVICE, &word, 0x3000, 1, 4, 4, 4, NULL);
	if (!r)
		r = dma(fd, PEVP_DMA_FROM_DEVICE, &back, 0x3000, 1, 4, 4, 4, NULL);
	if (r || back != word)
		fail("DMA after a refused descriptor: %s, read back 0x%08x, expected 0x%08x", r ? strerror(-r) : "ok",
		     back, word);
}

static void check_arguments(int fd)
{
	struct pevp_submit s;
	uint8_t record[PEVP_RECORD_BYTES] = { 0 };
	uint32_t word;
	int r;

	if (ioctl(fd, _IO(PEVP_IOC_MAGIC, 0x7f)) != -1 || errno != ENOTTY)
		fail("an unknown ioctl: expected ENOTTY");
	r = submit(fd, record, 0, &s);
	if (r != -EINVAL)
		fail("submit of 0 records: %s, expected EINVAL", r ? strerror(-r) : "success");
	r = dma(fd, 3, &word, 0, 1, 4, 4, 4, NULL);
	if (r != -EINVAL)
		fail("DMA direction 3: %s, expected EINVAL", r ? strerror(-r) : "success");
	r = dma(fd, PEVP_DMA_TO_DEVICE, &word, 0, 1, 4, 4, 3, NULL);
	if (r != -EINVAL)
		fail("DMA element size 3: %s, expected EINVAL", r ? strerror(-r) : "success");
	r = dma(fd, PEVP_DMA_TO_DEVICE, NULL, 0, 1, 4, 4, 4, NULL);
	if (r != -EFAULT)
		fail("DMA from a NULL buffer: %s, expected EFAULT", r ? strerror(-r) : "success");
}

/* Median of n values (sorts them). */
static uint64_t median(uint64_t *v, int n)
{
	int i, j;

	for (i = 1; i < n; i++)
		for (j = i; j > 0 && v[j - 1] > v[j]; j--) {
			uint64_t t = v[j];

			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	return v[n / 2];
}

static void figures(int fd, const uint8_t *records)
{
	struct pevp_bar_timing b = { .iterations = 2000 };
	uint64_t latency[15];
	struct pevp_submit s;
	int i, n = 0;

	if (ioctl(fd, PEVP_IOC_BAR_TIMING, &b) != 0)
		fail("PEVP_IOC_BAR_TIMING: %s", strerror(errno));
	else
		printf("guest figure: BAR0 round trip: read %.2f us, write %.2f us (mean of %u)\n", b.read_ns / 1e3,
		       b.write_ns / 1e3, b.iterations);
	/* One ldweights: from the store that completes its record to the SEQ's interrupt. */
	for (i = 0; i < 15; i++)
		if (submit(fd, records, 1, &s) == 0 && s.irqs > 0 && s.irq_latency_ns > 0)
			latency[n++] = s.irq_latency_ns;
	if (n == 0)
		fail("no interrupt for a one-instruction program");
	else
		printf("guest figure: interrupt latency (last store of a one-instruction program -> SEQ vector handler): median %.1f us of %d\n",
		       median(latency, n) / 1e3, n);
}

static int read_records(const char *path, uint8_t *records, size_t count)
{
	FILE *f = fopen(path, "rb");
	int ok = f && fread(records, PEVP_RECORD_BYTES, count, f) == count && fgetc(f) == EOF;

	if (f)
		fclose(f);
	if (!ok)
		printf("guest test: FAIL: %s is not %zu records of 64 bytes\n", path, count);
	return ok;
}

static int stuck(const char *path, const char *device)
{
	uint8_t record[PEVP_RECORD_BYTES];
	struct pevp_semaphore sem = { 0 };
	struct pevp_submit s;
	double start, waited_ms;
	int fd, r, i;

	if (!read_records(path, record, 1))
		return 1;
	fd = open(device, O_RDWR);
	if (fd < 0) {
		printf("guest test: FAIL: open %s: %s\n", device, strerror(errno));
		return 1;
	}
	memset(&s, 0, sizeof s);
	s.records = (uintptr_t)record;
	s.count = 1;
	s.timeout_ms = 500;
	start = now_us();
	r = ioctl(fd, PEVP_IOC_SUBMIT, &s) ? -errno : 0;
	waited_ms = (now_us() - start) / 1e3;
	if (r != -ETIMEDOUT || s.retired != 0)
		fail("a program waiting on a semaphore nothing sets: %s, %llu retired; expected ETIMEDOUT, 0",
		     r ? strerror(-r) : "success", (unsigned long long)s.retired);
	else if (waited_ms < 500 || waited_ms > 5000)
		fail("the 500 ms timeout returned after %.0f ms", waited_ms);
	else
		printf("guest test: stuck program: ETIMEDOUT after %.0f ms (timeout 500 ms)\n", waited_ms);
	r = submit(fd, record, 1, &s);
	if (r != -EBUSY)
		fail("submit while the SEQ is busy: %s, expected EBUSY", r ? strerror(-r) : "success");

	/* Release it: the semaphore it waits on reaches 1, it retires, and the SEQ takes work again. */
	sem.index = STUCK_SEMAPHORE;
	sem.write = 1;
	sem.value = 1;
	if (ioctl(fd, PEVP_IOC_SEMAPHORE, &sem) != 0 || sem.value != 1)
		fail("PEVP_IOC_SEMAPHORE %u = 1: %s, reads %u", STUCK_SEMAPHORE, strerror(errno), sem.value);
	for (i = 0, r = -EBUSY; i < 100 && r == -EBUSY; i++) {
		r = submit(fd, record, 1, &s);
		if (r == -EBUSY)
			usleep(20000);
	}
	if (r != 0 || s.retired != 1)
		fail("the same program once its semaphore is set: %s, %llu retired; expected success, 1",
		     r ? strerror(-r) : "success", (unsigned long long)s.retired);
	else
		printf("guest test: stuck program released by semaphore %u: the SEQ runs again\n", STUCK_SEMAPHORE);
	sem.value = 0;
	if (ioctl(fd, PEVP_IOC_SEMAPHORE, &sem) != 0 || sem.value != 0)
		fail("PEVP_IOC_SEMAPHORE %u = 0: %s", STUCK_SEMAPHORE, strerror(errno));
	sem.index = PEVP_VP_SEMAPHORES;
	if (ioctl(fd, PEVP_IOC_SEMAPHORE, &sem) != -1 || errno != EINVAL)
		fail("PEVP_IOC_SEMAPHORE %u: expected EINVAL", PEVP_VP_SEMAPHORES);

	/* Stuck again, and left so: the reboot's DEVICE_RESET must drop the program (--after-reset checks). */
	memset(&s, 0, sizeof s);
	s.records = (uintptr_t)record;
	s.count = 1;
	s.timeout_ms = 100;
	r = ioctl(fd, PEVP_IOC_SUBMIT, &s) ? -errno : 0;
	if (r != -ETIMEDOUT)
		fail("the stuck program once more: %s, expected ETIMEDOUT", r ? strerror(-r) : "success");
	else
		printf("guest test: stuck program submitted again and left waiting on semaphore %u for the reset\n",
		       STUCK_SEMAPHORE);
	close(fd);
	if (failures)
		return 1;
	printf("guest test: PASS\n");
	return 0;
}

static int after_reset(const char *gemm_path, const char *device)
{
	static struct gemm_case g;
	static float got[GEMM_M][GEMM_N];
	static float psum[GEMM_M][GEMM_N];
	uint8_t records[GEMM_RECORDS * PEVP_RECORD_BYTES];
	unsigned dma_irqs, seq_irqs;
	struct pevp_perf p;
	long nonzero = 0;
	int fd, r, m, n;

	if (!read_records(gemm_path, records, GEMM_RECORDS))
		return 1;
	fd = open(device, O_RDWR);
	if (fd < 0) {
		printf("guest test: FAIL: open %s: %s\n", device, strerror(errno));
		return 1;
	}
	if (perf(fd, &p))
		fail("PEVP_IOC_PERF: %s", strerror(errno));
	else if (p.retired != 0)
		fail("after the device reset: retired_cnt %llu, expected 0", (unsigned long long)p.retired);
	memset(psum, 0xff, sizeof psum);
	r = dma(fd, PEVP_DMA_FROM_DEVICE, psum, GEMM_PSUM_BASE, GEMM_M, sizeof psum[0], GEMM_PSUM_PARTITION_BYTES, 4,
		NULL);
	if (r)
		fail("DMA out of PSUM after the reset: %s", strerror(-r));
	for (m = 0; m < GEMM_M; m++)
		for (n = 0; n < GEMM_N; n++)
			nonzero += psum[m][n] != 0.0f || signbit(psum[m][n]);
	if (!r && nonzero)
		fail("after the device reset: %ld PSUM elements of the GEMM's output are not +0", nonzero);
	if (!failures)
		printf("guest test: device reset of the stuck device: retired_cnt 0 and the GEMM's PSUM rows zero\n");
	gemm_make(&g, 1);
	if (run_gemm(fd, &g, records, got, &dma_irqs, &seq_irqs) >= 0)
		check_gemm(&g, (const float(*)[GEMM_N])got, "GEMM after the device reset");
	close(fd);
	if (failures)
		return 1;
	printf("guest test: PASS\n");
	return 0;
}

int main(int argc, char **argv)
{
	static struct gemm_case g;
	static float got[GEMM_M][GEMM_N];
	uint8_t records[GEMM_RECORDS * PEVP_RECORD_BYTES];
	const bool mode = argc > 1 && strncmp(argv[1], "--", 2) == 0;
	const char *device = argc > 2 + mode ? argv[2 + mode] : "/dev/pevp0";
	struct pevp_perf before, after;
	unsigned dma_irqs, seq_irqs;
	double wall;
	FILE *f;
	int fd;

	if (argc < 2 + mode || argc > 3 + mode ||
	    (mode && strcmp(argv[1], "--stuck") != 0 && strcmp(argv[1], "--after-reset") != 0)) {
		fprintf(stderr, "usage: pevp_guest_test GEMM_BIN [DEVICE]\n"
				"       pevp_guest_test --stuck STUCK_BIN [DEVICE]\n"
				"       pevp_guest_test --after-reset GEMM_BIN [DEVICE]\n");
		return 2;
	}
	if (strcmp(argv[1], "--stuck") == 0)
		return stuck(argv[2], device);
	if (strcmp(argv[1], "--after-reset") == 0)
		return after_reset(argv[2], device);
	f = fopen(argv[1], "rb");
	if (!f || fread(records, 1, sizeof records, f) != sizeof records || fgetc(f) != EOF) {
		printf("guest test: FAIL: %s is not %d records of 64 bytes\n", argv[1], GEMM_RECORDS);
		return 1;
	}
	fclose(f);
	fd = open(device, O_RDWR);
	if (fd < 0) {
		printf("guest test: FAIL: open %s: %s\n", device, strerror(errno));
		return 1;
	}
	gemm_make(&g, 1);
	check_identity(fd);

	if (perf(fd, &before))
		fail("PEVP_IOC_PERF: %s", strerror(errno));
	wall = run_gemm(fd, &g, records, got, &dma_irqs, &seq_irqs);
	if (wall >= 0) {
		check_gemm(&g, (const float(*)[GEMM_N])got, "GEMM");
		printf("guest figure: GEMM wall time %.0f us (5 DMAs in/out and 4 instructions; interrupts: DMA %u, SEQ %u)\n",
		       wall, dma_irqs, seq_irqs);
		/*
		 * Each vector must have woken a waiter. Not one per transfer: the driver may see a
		 * transfer complete in the status before its interrupt arrives, which then lands after
		 * the wait (or in the next one).
		 */
		if (dma_irqs < 1 || seq_irqs < 1)
			fail("interrupts while waiting: DMA %u, SEQ %u; expected at least one on each vector",
			     dma_irqs, seq_irqs);
		if (perf(fd, &after))
			fail("PEVP_IOC_PERF: %s", strerror(errno));
		/* gemm.pes: 2 ldweights, 2 matmuls, all on tile_128x128_tile0 (row_grp = col_grp = 0xF). */
		else if (after.retired - before.retired != GEMM_RECORDS ||
			 after.weight_load[0] - before.weight_load[0] != 2 || after.matmul[0] - before.matmul[0] != 2 ||
			 after.weight_load[1] != before.weight_load[1])
			fail("counters: retired +%llu, weight_load[128x128 tile0] +%llu, matmul[128x128 tile0] +%llu; expected +4, +2, +2",
			     (unsigned long long)(after.retired - before.retired),
			     (unsigned long long)(after.weight_load[0] - before.weight_load[0]),
			     (unsigned long long)(after.matmul[0] - before.matmul[0]));
		else
			printf("guest test: counters: retired +4, weight_load +2, matmul +2 on tile_128x128_tile0\n");
	}
	check_fault(fd, records, &g, got);
	check_dma_fault(fd);
	check_arguments(fd);
	figures(fd, records);
	close(fd);

	if (failures) {
		printf("guest test: %d check(s) failed\n", failures);
		return 1;
	}
	printf("guest test: PASS\n");
	return 0;
}
