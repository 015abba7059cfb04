/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * pevp.h - the ioctl interface of the pe-vp PCI driver (/dev/pevpN).
 *
 * Shared by the kernel module (drivers/linux/pevp_main.c) and user space
 * (tests/guest/pevp_guest_test.c). Every struct has fixed-width, naturally
 * aligned fields and explicit reserved words, so 32- and 64-bit callers see
 * the same layout; user pointers travel as __u64. docs/qemu.md "The Linux
 * driver" describes each call.
 */
#ifndef _UAPI_PEVP_H
#define _UAPI_PEVP_H

#include <linux/ioctl.h>
#include <linux/types.h>

/* The model's PCI identity (the model's own, not a product's). */
#define PEVP_PCI_VENDOR_ID	0x1234
#define PEVP_PCI_DEVICE_ID	0x7065

/* The DMA engines' address of guest memory: PEVP_DMA_HOST_BASE + bus address. */
#define PEVP_DMA_HOST_BASE	0x10000000000ULL

#define PEVP_RECORD_BYTES	64	/* one SEQ instruction */
#define PEVP_PERF_TILES		49	/* counters per arr_seq perf bank */
#define PEVP_RULE_NAME_BYTES	48

/* What the device and the driver found at probe. */
struct pevp_info {
	__u16 vendor;
	__u16 device;
	__u8 revision;
	__u8 reserved0[3];
	__u32 dma_engines;		/* dma_geometry.engines */
	__u32 dma_queues_per_engine;	/* dma_geometry.queues_per_engine */
	__u32 iq_window_bytes;		/* the SEQ queue window in BAR0 */
	__u32 reserved1;
	__u64 bar_bytes[3];		/* BAR0, BAR2, BAR4 sizes */
	__u64 max_transfer_bytes;	/* largest PEVP_IOC_DMA buffer */
};

/*
 * The SEQ's error record (docs/errors.md), filled when an instruction faulted.
 * program_index counts from the first record of the submit that faulted.
 */
struct pevp_error {
	__u32 valid;
	__u32 opcode;		/* err_info.opcode: the raw opcode byte */
	__u32 field_id;		/* byte offset of the field, 0xff: none */
	__u32 rule_id;		/* docs/errors.md's rule number */
	__u64 instr_index;	/* err_instr_index: counted since device reset */
	__u64 program_index;	/* index inside the submit that faulted */
	__u64 value;		/* err_value_hi:lo, sign-extended */
	char rule[PEVP_RULE_NAME_BYTES];	/* "exec.no_stationary", NUL-terminated */
};

/*
 * Queue count 64-byte records and wait until the SEQ reports done or an error.
 * Returns 0 when done, -EIO when an instruction faulted (error filled in and
 * copied out), -ETIMEDOUT when neither came within timeout_ms, -EBUSY when the
 * SEQ is still stopped on an earlier error (PEVP_IOC_CLEAR_ERROR first).
 */
struct pevp_submit {
	__u64 records;		/* in: user pointer to count x 64 bytes */
	__u32 count;		/* in: 1 .. PEVP_MAX_SUBMIT */
	__u32 timeout_ms;	/* in: 1 .. PEVP_MAX_TIMEOUT_MS */
	__u64 retired;		/* out: instructions of this submit that retired */
	__u64 elapsed_ns;	/* out: first write to completion seen */
	__u64 irq_latency_ns;	/* out: last store of the last record to the last SEQ interrupt */
	__u32 irqs;		/* out: SEQ interrupts taken while waiting */
	__u32 reserved;		/* in: 0 */
	struct pevp_error error;	/* out */
};
#define PEVP_MAX_SUBMIT		65536
#define PEVP_MAX_TIMEOUT_MS	600000

/* The DMA queue's error record (docs/dma.md "Errors"). */
struct pevp_dma_error {
	__u32 valid;
	__u32 field_id;
	__u32 rule_id;
	__u32 reserved;
	__u64 index;		/* the descriptor's head counter value */
	__u64 value;
};

#define PEVP_DMA_TO_DEVICE	1	/* user buffer -> device memory */
#define PEVP_DMA_FROM_DEVICE	2	/* device memory -> user buffer */

/*
 * Move rows x row_bytes between a user buffer (rows packed back to back) and
 * device memory at device_addr (a DMA address: SBUF, PSUM or HBM), the device
 * rows device_row_stride bytes apart (an SBUF/PSUM partition stride), through
 * a dma_alloc_coherent buffer and one DMA descriptor. Returns 0, -EIO with
 * dma_error filled in when the engine refused the descriptor, -ETIMEDOUT.
 */
struct pevp_dma {
	__u64 user_addr;	/* in */
	__u64 device_addr;	/* in */
	__u32 row_bytes;	/* in: >= 1 */
	__u32 rows;		/* in: >= 1 */
	__u32 device_row_stride;	/* in */
	__u32 direction;	/* in: PEVP_DMA_TO_DEVICE or PEVP_DMA_FROM_DEVICE */
	__u32 elem_bytes;	/* in: 1, 2, 4 or 8 */
	__u32 timeout_ms;	/* in: 1 .. PEVP_MAX_TIMEOUT_MS */
	__u64 elapsed_ns;	/* out: doorbell to completion seen */
	__u32 irqs;		/* out: DMA interrupts taken while waiting */
	__u32 reserved;		/* in: 0 */
	struct pevp_dma_error dma_error;	/* out */
};

/* Counters: the SEQ's retired count and the arr_seq perf banks (48-bit each). */
struct pevp_perf {
	__u64 retired;			/* vp_seq retired_cnt */
	__u64 seq_irqs;			/* interrupts on the SEQ vector since probe */
	__u64 dma_irqs;			/* interrupts on the DMA vector since probe */
	__u64 weight_load[PEVP_PERF_TILES];	/* in the register order of */
	__u64 matmul[PEVP_PERF_TILES];		/* docs/registers.md: */
	__u64 pe_regwrite[PEVP_PERF_TILES];	/* [0] = tile_128x128_tile0 */
};

/* A 32-bit register of BAR0 (4-byte aligned, inside BAR0), for debugging. */
struct pevp_reg {
	__u32 offset;		/* in */
	__u32 value;		/* out */
};

/* BAR0 round trips, measured in the kernel on a semaphore register it restores. */
struct pevp_bar_timing {
	__u32 iterations;	/* in: 1 .. 100000 */
	__u32 reserved;		/* in: 0 */
	__u64 read_ns;		/* out: mean per readl */
	__u64 write_ns;		/* out: mean per writel */
};

/* One of the SEQ's EVENTS semaphores (vp_seq semaphore_N): read it, or write it first when write = 1. */
struct pevp_semaphore {
	__u32 index;		/* in: 0 .. 31 */
	__u32 write;		/* in: 0 or 1 */
	__u32 value;		/* in (write) / out: the value read back */
	__u32 reserved;		/* in: 0 */
};

#define PEVP_IOC_MAGIC	0xE5

#define PEVP_IOC_INFO		_IOR(PEVP_IOC_MAGIC, 0, struct pevp_info)
#define PEVP_IOC_SUBMIT		_IOWR(PEVP_IOC_MAGIC, 1, struct pevp_submit)
#define PEVP_IOC_DMA		_IOWR(PEVP_IOC_MAGIC, 2, struct pevp_dma)
#define PEVP_IOC_PERF		_IOR(PEVP_IOC_MAGIC, 3, struct pevp_perf)
#define PEVP_IOC_ERROR		_IOR(PEVP_IOC_MAGIC, 4, struct pevp_error)
#define PEVP_IOC_CLEAR_ERROR	_IO(PEVP_IOC_MAGIC, 5)
#define PEVP_IOC_READ_REG	_IOWR(PEVP_IOC_MAGIC, 6, struct pevp_reg)
#define PEVP_IOC_BAR_TIMING	_IOWR(PEVP_IOC_MAGIC, 7, struct pevp_bar_timing)
#define PEVP_IOC_SEMAPHORE	_IOWR(PEVP_IOC_MAGIC, 8, struct pevp_semaphore)

#endif /* _UAPI_PEVP_H */
