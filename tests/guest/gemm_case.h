/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The GEMM of tests/guest/gemm.pes, shared by the guest program (through the
 * Linux driver) and the host program (through the C API): its operands, where
 * they live in SBUF and PSUM, and the reference in the defined order of
 * docs/numerics-matmul.md. Plain C99, header only.
 */
#ifndef PEVP_GEMM_CASE_H
#define PEVP_GEMM_CASE_H

#include <stdint.h>
#include <string.h>

#if !defined(__FLT_EVAL_METHOD__) || __FLT_EVAL_METHOD__ != 0
#error "the reference needs fp32 arithmetic in fp32 (FLT_EVAL_METHOD 0)"
#endif

enum {
	GEMM_KT = 128,		/* rows of one k-tile (SBUF partitions) */
	GEMM_TILES = 2,		/* k-tiles, accumulated in one PSUM group */
	GEMM_K = GEMM_KT * GEMM_TILES,
	GEMM_M = 128,
	GEMM_N = 256,
	GEMM_RECORDS = 4,	/* gemm.pes: ldweights, matmul per k-tile */
};

/* Device addresses (D-ADDR; the MARIANA preset's geometry, which gemm.pes names). */
#define GEMM_SBUF_PARTITION_BYTES 0x40000u	/* 256 KiB */
#define GEMM_PSUM_BASE 0x2000000u
#define GEMM_PSUM_PARTITION_BYTES 0x4000u	/* 16 KiB */
#define GEMM_A_OFFSET(t) (0x100u * (t))		/* stationary k-tile t, bytes into each partition */
#define GEMM_B_OFFSET(t) (0x1000u + 0x400u * (t))	/* moving k-tile t */

/* Operands: a[k][m] (stationary), b[k][n] (moving), bf16 bits. */
struct gemm_case {
	uint16_t a[GEMM_K][GEMM_M];
	uint16_t b[GEMM_K][GEMM_N];
	float c[GEMM_M][GEMM_N];	/* the reference */
};

static inline uint32_t gemm_xorshift(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

/* A finite bf16 of either sign, magnitude 2^-7 .. 2^4 with a random 7-bit fraction. */
static inline uint16_t gemm_random_bf16(uint32_t *s)
{
	const uint32_t r = gemm_xorshift(s);
	const uint32_t sign = r >> 31;
	const uint32_t exponent = 120 + (r >> 8) % 12;
	const uint32_t fraction = r & 0x7f;

	return (uint16_t)(sign << 15 | exponent << 7 | fraction);
}

static inline float gemm_from_bf16(uint16_t h)
{
	const uint32_t bits = (uint32_t)h << 16;
	float f;

	memcpy(&f, &bits, sizeof f);
	return f;
}

/*
 * docs/numerics-matmul.md: per k-tile, sum = +0, then sum += a[k][m] * b[k][n]
 * for k in order (each product exact for bf16, each add rounded to fp32);
 * MULTI_START stores the first tile's sum, MULTI_END adds the next one's.
 */
static inline void gemm_make(struct gemm_case *g, uint32_t seed)
{
	uint32_t s = seed ? seed : 1;
	int k, m, n, t;

	for (k = 0; k < GEMM_K; k++)
		for (m = 0; m < GEMM_M; m++)
			g->a[k][m] = gemm_random_bf16(&s);
	for (k = 0; k < GEMM_K; k++)
		for (n = 0; n < GEMM_N; n++)
			g->b[k][n] = gemm_random_bf16(&s);
	for (m = 0; m < GEMM_M; m++)
		for (n = 0; n < GEMM_N; n++) {
			float dst = 0.0f;

			for (t = 0; t < GEMM_TILES; t++) {
				float sum = +0.0f;

				for (k = t * GEMM_KT; k < (t + 1) * GEMM_KT; k++)
					sum = sum + gemm_from_bf16(g->a[k][m]) * gemm_from_bf16(g->b[k][n]);
				dst = t == 0 ? sum : dst + sum;
			}
			g->c[m][n] = dst;
		}
}

/* Elements of got whose bits differ from the reference; the first one's place in *first_m, *first_n. */
static inline long gemm_compare(const struct gemm_case *g, const float got[GEMM_M][GEMM_N], int *first_m,
				int *first_n)
{
	long differ = 0;
	int m, n;

	for (m = 0; m < GEMM_M; m++)
		for (n = 0; n < GEMM_N; n++)
			if (memcmp(&got[m][n], &g->c[m][n], sizeof(float)) != 0 && differ++ == 0) {
				*first_m = m;
				*first_n = n;
			}
	return differ;
}

#endif /* PEVP_GEMM_CASE_H */
