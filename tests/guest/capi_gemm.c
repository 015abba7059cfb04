/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The guest test's GEMM through the C API in this process (no QEMU, no
 * kernel): the same records (gemm.bin from `pe-vp asm gemm.pes`), operands and
 * defined-order reference as tests/guest/pevp_guest_test.c, so its wall time
 * is the baseline of docs/performance.md's guest figures, and the check
 * proves the reference on the host before a guest uses it.
 *
 * usage: capi_gemm GEMM_BIN     exit 0 and "capi gemm: PASS ..." or 1 and why
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "pevp/pevp.h"
#include "gemm_case.h"

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int fail(pevp_vp *vp, const char *what)
{
	printf("capi gemm: FAIL: %s: %s\n", what, vp ? pevp_last_error(vp) : pevp_open_error());
	return 1;
}

int main(int argc, char **argv)
{
	static struct gemm_case g;
	static float got[GEMM_M][GEMM_N];
	unsigned char records[GEMM_RECORDS * 64];
	pevp_completion done;
	pevp_vp *vp = NULL;
	pevp_map map;
	double start, wall[2];
	int run, t, k, m, n, first_m = 0, first_n = 0;
	long differ;
	FILE *f;

	if (argc != 2) {
		fprintf(stderr, "usage: capi_gemm GEMM_BIN\n");
		return 2;
	}
	f = fopen(argv[1], "rb");
	if (!f || fread(records, 1, sizeof records, f) != sizeof records || fgetc(f) != EOF) {
		printf("capi gemm: FAIL: %s is not %d records of 64 bytes\n", argv[1], GEMM_RECORDS);
		return 1;
	}
	fclose(f);
	gemm_make(&g, 1);

	if (pevp_open("MARIANA", &vp) != PEVP_OK)
		return fail(NULL, "pevp_open");
	if (pevp_get_map(vp, &map) != PEVP_OK || pevp_arm(vp, 0, 0, 0) != PEVP_OK)
		return fail(vp, "arm");
	if (map.sbuf_partition_bytes != GEMM_SBUF_PARTITION_BYTES || map.psum != GEMM_PSUM_BASE ||
	    map.psum_partition_bytes != GEMM_PSUM_PARTITION_BYTES) {
		printf("capi gemm: FAIL: the MARIANA map is not gemm_case.h's\n");
		return 1;
	}
	/* Run 0 includes the platform's first-use costs; run 1 is the figure docs/performance.md compares. */
	for (run = 0; run < 2; run++) {
		start = now_us();
		for (t = 0; t < GEMM_TILES; t++)
			for (k = 0; k < GEMM_KT; k++)
				if (pevp_write(vp, map.sbuf + (uint64_t)k * map.sbuf_partition_bytes + GEMM_A_OFFSET(t),
					       g.a[t * GEMM_KT + k], sizeof g.a[0]) != PEVP_OK ||
				    pevp_write(vp, map.sbuf + (uint64_t)k * map.sbuf_partition_bytes + GEMM_B_OFFSET(t),
					       g.b[t * GEMM_KT + k], sizeof g.b[0]) != PEVP_OK)
					return fail(vp, "operands");
		if (pevp_submit(vp, records, GEMM_RECORDS) != PEVP_OK)
			return fail(vp, "submit");
		if (pevp_wait_idle(vp, 1000000000ull, &done) != PEVP_OK || !done.done || done.error)
			return fail(vp, "wait_idle");
		for (m = 0; m < GEMM_M; m++)
			if (pevp_read(vp, map.psum + (uint64_t)m * map.psum_partition_bytes, got[m], sizeof got[m]) != PEVP_OK)
				return fail(vp, "results");
		wall[run] = now_us() - start;
	}
	pevp_close(vp);

	differ = gemm_compare(&g, (const float(*)[GEMM_N])got, &first_m, &first_n);
	if (differ) {
		printf("capi gemm: FAIL: %ld of %d elements differ from the defined-order reference; first C[%d][%d] = %a, expected %a\n",
		       differ, GEMM_M * GEMM_N, first_m, first_n, got[first_m][first_n], g.c[first_m][first_n]);
		return 1;
	}
	n = GEMM_M * GEMM_N;
	printf("capi gemm: PASS: C[%dx%d] = A[%dx%d].T @ B[%dx%d] bit-exact (%d elements), %llu retired; wall (operands in, run, results out) %.0f us first, %.0f us second\n",
	       GEMM_M, GEMM_N, GEMM_K, GEMM_M, GEMM_K, GEMM_N, n, (unsigned long long)done.retired, wall[0], wall[1]);
	return 0;
}
