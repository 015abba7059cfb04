// SPDX-License-Identifier: GPL-2.0
/*
 * pevp - the Linux driver of pe-vp as a PCI device (docs/qemu.md "The Linux driver").
 *
 * Two PCI functions make one device: the pe-vp function (BAR0 registers and the
 * SEQ instruction queue, BAR2 SBUF/PSUM, BAR4 HBM) and its interrupt companion,
 * QEMU's stock ivshmem-doorbell, whose MSI-X vector 0 carries the SEQ's
 * interrupt and vector 1 the DMA engines' (under TCG the proxy's INTx does not
 * reach the guest). A misc device /dev/pevpN takes the ioctls of uapi/pevp.h:
 * submit an instruction stream, move data by DMA, read the counters and the
 * error record.
 *
 * Register offsets come from the generated C99 headers of models/regfile (the
 * build tree), the rule names and the perf-counter list from pevp_tables.h,
 * which gen_tables.py writes from the same sources.
 */

#include <linux/atomic.h>
#include <linux/delay.h>
#include <linux/dma-mapping.h>
#include <linux/fs.h>
#include <linux/idr.h>
#include <linux/interrupt.h>
#include <linux/io.h>
#include <linux/kref.h>
#include <linux/ktime.h>
#include <linux/list.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/pci.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/uaccess.h>
#include <linux/wait.h>
#include <asm/unaligned.h>

#include "dma_regs_c.h"
#include "tpb_arr_seq_top_host_visible_regs_c.h"
#include "vp_seq_regs_c.h"
#include "uapi/pevp.h"

/*
 * The ioctl structs have one layout for 32- and 64-bit callers (every __u64 at
 * an 8-byte offset, sizes multiples of 8), which compat_ptr_ioctl relies on.
 */
static_assert(sizeof(struct pevp_info) == 56);
static_assert(sizeof(struct pevp_error) == 88);
static_assert(sizeof(struct pevp_submit) == 136);
static_assert(sizeof(struct pevp_dma) == 88);
static_assert(sizeof(struct pevp_perf) == 1200);
static_assert(sizeof(struct pevp_bar_timing) == 24);
static_assert(sizeof(struct pevp_semaphore) == 16);

struct pevp_rule_name {
	u16 number;
	const char *name;
};

#include "pevp_tables.h"

#define DRV_NAME "pevp"

/*
 * BAR0 is the platform's register space from address_map.apb (docs/qemu.md):
 * the arr_seq faces, the SEQ queue window and the DMA register face.
 */
#define PEVP_BAR_REGS		0
#define PEVP_BAR_SBUF_PSUM	2
#define PEVP_BAR_HBM		4
#define PEVP_TOP		0x0000
#define PEVP_VP_SEQ		0x3000
#define PEVP_IQ			0x10000
#define PEVP_IQ_BYTES		0x1000
#define PEVP_DMA		0x100000
#define PEVP_DMA_DOORBELLS	(PEVP_DMA + 0x1000)	/* DmaEngines::kDoorbellOffset */

/* Short names for the generated register macros this file uses (offsets inside their face). */
#define DMAG_IRQ_CLEAR	PEVP_DMA_DMA_GLOBAL_IRQ_CLEAR_OFFSET
#define DMAG_IRQ_CLEAR_COMPLETION	PEVP_DMA_DMA_GLOBAL_IRQ_CLEAR_COMPLETION_MASK
#define DMAG_IRQ_CLEAR_ERROR	PEVP_DMA_DMA_GLOBAL_IRQ_CLEAR_ERROR_MASK
#define DMAG_IRQ_ENABLE	PEVP_DMA_DMA_GLOBAL_IRQ_ENABLE_OFFSET
#define DMAG_IRQ_ENABLE_COMPLETION	PEVP_DMA_DMA_GLOBAL_IRQ_ENABLE_COMPLETION_MASK
#define DMAG_IRQ_ENABLE_ERROR	PEVP_DMA_DMA_GLOBAL_IRQ_ENABLE_ERROR_MASK
#define DMAQ_CONTROL	PEVP_DMA_DMA_QUEUE_QUEUE_CONTROL_OFFSET
#define DMAQ_CONTROL_CLEAR_ERROR	PEVP_DMA_DMA_QUEUE_QUEUE_CONTROL_CLEAR_ERROR_MASK
#define DMAQ_CONTROL_ENABLE	PEVP_DMA_DMA_QUEUE_QUEUE_CONTROL_ENABLE_MASK
#define DMAQ_CONTROL_RESET	PEVP_DMA_DMA_QUEUE_QUEUE_CONTROL_RESET_MASK
#define DMAQ_DESCRIPTORS_CNT	PEVP_DMA_DMA_QUEUE_DESCRIPTORS_CNT_LSB_OFFSET
#define DMAQ_STATE	PEVP_DMA_DMA_QUEUE_QUEUE_STATE_OFFSET
#define DMAQ_STATE_STATE	PEVP_DMA_DMA_QUEUE_QUEUE_STATE_STATE_MASK
#define SEQ_CMD	PEVP_VP_SEQ_SEQ_CTRL_SEQ_CMD_OFFSET
#define SEQ_CMD_CLEAR_DONE	PEVP_VP_SEQ_SEQ_CTRL_SEQ_CMD_CLEAR_DONE_MASK
#define SEQ_CMD_CLEAR_ERROR	PEVP_VP_SEQ_SEQ_CTRL_SEQ_CMD_CLEAR_ERROR_MASK
#define SEQ_IQ_STATUS	PEVP_VP_SEQ_SEQ_CTRL_IQ_STATUS_OFFSET
#define SEQ_IRQ_ENABLE	PEVP_VP_SEQ_SEQ_CTRL_IRQ_ENABLE_OFFSET
#define SEQ_IRQ_ENABLE_DONE	PEVP_VP_SEQ_SEQ_CTRL_IRQ_ENABLE_DONE_MASK
#define SEQ_IRQ_ENABLE_ERROR	PEVP_VP_SEQ_SEQ_CTRL_IRQ_ENABLE_ERROR_MASK
#define SEQ_STATUS	PEVP_VP_SEQ_SEQ_CTRL_SEQ_STATUS_OFFSET
#define SEQ_STATUS_DONE	PEVP_VP_SEQ_SEQ_CTRL_SEQ_STATUS_DONE_MASK
#define SEQ_STATUS_ERROR	PEVP_VP_SEQ_SEQ_CTRL_SEQ_STATUS_ERROR_MASK
#define SEQ_STATUS_IDLE	PEVP_VP_SEQ_SEQ_CTRL_SEQ_STATUS_IDLE_MASK
/* retired_cnt as a BAR0 offset */
#define SEQ_RETIRED	(PEVP_VP_SEQ + PEVP_VP_SEQ_SEQ_CTRL_RETIRED_CNT_LSB_OFFSET)

/* The companion's MSI-X vectors. */
#define PEVP_VECTOR_SEQ		0
#define PEVP_VECTOR_DMA		1
#define PEVP_VECTORS		2

#define PEVP_DMA_QUEUE		0	/* the driver's one DMA queue: engine 0, queue 0 */
#define PEVP_RING_ENTRIES	64
#define PEVP_RING_BYTES		(PEVP_RING_ENTRIES * sizeof(struct pevp_desc))
#define PEVP_MAX_TRANSFER	(16u << 20)
#define PEVP_DMA_MASK_BITS	40	/* DMA address = PEVP_DMA_HOST_BASE + bus address */
#define PEVP_QUEUE_STOPPED	3	/* queue_state.state: stopped on an error */
#define PEVP_POLL_JIFFIES	(HZ / 10)	/* re-read the status at least this often */

/* The DMA descriptor, models/dma/include/pevp/dma/descriptor.h (docs/dma.md). */
struct pevp_desc {
	u8 kind;
	u8 flags;
	u8 src_dtype;
	u8 dst_dtype;
	u8 wait_mode;
	u8 wait_sem;
	u8 update_mode;
	u8 update_sem;
	__le32 wait_value;
	__le32 update_value;
	__le64 src;
	__le64 dst;
	__le32 row_bytes;
	__le32 rows;
	__le32 planes;
	u8 elem_bytes;
	u8 reserved[3];
	__le32 src_row_stride;
	__le32 dst_row_stride;
	__le32 src_plane_stride;
	__le32 dst_plane_stride;
} __packed;
static_assert(sizeof(struct pevp_desc) == 64);
#define PEVP_DESC_COPY		1
#define PEVP_DESC_FLAG_IRQ	0x01

/* A coherent buffer a timed-out transfer may still touch: freed at remove. */
struct pevp_orphan {
	struct list_head node;
	size_t bytes;
	void *cpu;
	dma_addr_t dma;
};

struct pevp_dev {
	struct kref ref;
	struct pci_dev *pdev;
	void __iomem *regs;
	struct miscdevice misc;
	char name[16];
	int id;
	struct mutex lock;	/* one ioctl at a time; guards everything below */
	bool gone;		/* removed while a file was open */

	struct pevp_desc *ring;
	dma_addr_t ring_dma;
	u32 dma_tail;		/* descriptors written to the ring */
	u32 dma_completed;	/* descriptors_cnt_lsb expected when the queue is idle */
	u32 dma_engines, dma_queues;
	struct list_head orphans;
	u32 iq_slot;		/* next 64-byte slot of the queue window */

	wait_queue_head_t wq;	/* woken by either vector */
	atomic64_t seq_irqs, dma_irqs;
	ktime_t last_seq_irq;
	ktime_t last_iq_write;	/* when the last 8-byte store of the last record began */
	struct pevp_error last_error;
};

/*
 * The pairing of the device with its interrupt companion. One pe-vp device per
 * guest: the first of each function pairs (D-LINUX-COMPANION).
 */
static DEFINE_SPINLOCK(pevp_pair_lock);
static struct pevp_dev *pevp_paired;
static struct pci_dev *pevp_companion;
static atomic64_t pevp_stray_irqs;
static DEFINE_IDA(pevp_ida);

static u32 pevp_rd(struct pevp_dev *pd, u32 offset)
{
	return readl(pd->regs + offset);
}

static void pevp_wr(struct pevp_dev *pd, u32 offset, u32 value)
{
	writel(value, pd->regs + offset);
}

/* A 48-bit counter: msb, lsb, msb again, so a carry between the halves is never mixed. */
static u64 pevp_rd_counter48(struct pevp_dev *pd, u32 lsb_offset)
{
	u32 hi, lo, hi2;

	do {
		hi = pevp_rd(pd, lsb_offset + 4);
		lo = pevp_rd(pd, lsb_offset);
		hi2 = pevp_rd(pd, lsb_offset + 4);
	} while (hi != hi2);
	return ((u64)(hi & 0xffff) << 32) | lo;
}

static u32 pevp_seq_rd(struct pevp_dev *pd, u32 offset)
{
	return pevp_rd(pd, PEVP_VP_SEQ + offset);
}

static void pevp_seq_wr(struct pevp_dev *pd, u32 offset, u32 value)
{
	pevp_wr(pd, PEVP_VP_SEQ + offset, value);
}

static u32 pevp_dma_rd(struct pevp_dev *pd, u32 offset)
{
	return pevp_rd(pd, PEVP_DMA + offset);
}

static void pevp_dma_wr(struct pevp_dev *pd, u32 offset, u32 value)
{
	pevp_wr(pd, PEVP_DMA + offset, value);
}

static const char *pevp_rule_name(u32 number)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(pevp_rule_names); i++)
		if (pevp_rule_names[i].number == number)
			return pevp_rule_names[i].name;
	return "unknown rule";
}

/* ---- interrupts: the companion's vectors */

static irqreturn_t pevp_irq(int irq, void *data)
{
	const bool seq = (uintptr_t)data == PEVP_VECTOR_SEQ;
	struct pevp_dev *pd;

	spin_lock(&pevp_pair_lock);
	pd = pevp_paired;
	if (pd) {
		if (seq) {
			pd->last_seq_irq = ktime_get();
			atomic64_inc(&pd->seq_irqs);
		} else {
			atomic64_inc(&pd->dma_irqs);
		}
		wake_up(&pd->wq);
	} else {
		atomic64_inc(&pevp_stray_irqs);
	}
	spin_unlock(&pevp_pair_lock);
	return IRQ_HANDLED;
}

static int pevp_doorbell_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	int ret, v;

	spin_lock_irq(&pevp_pair_lock);
	if (pevp_companion) {
		spin_unlock_irq(&pevp_pair_lock);
		return -EBUSY;	/* one companion per pe-vp device (D-LINUX-COMPANION) */
	}
	pevp_companion = pdev;
	spin_unlock_irq(&pevp_pair_lock);

	ret = pcim_enable_device(pdev);
	if (ret)
		goto unclaim;
	/* The doorbell's MSI writes are dropped unless the function is a bus master. */
	pci_set_master(pdev);
	ret = pci_alloc_irq_vectors(pdev, PEVP_VECTORS, PEVP_VECTORS, PCI_IRQ_MSIX);
	if (ret < 0) {
		dev_err(&pdev->dev, "needs %d MSI-X vectors (ivshmem-doorbell vectors=%d): %d\n",
			PEVP_VECTORS, PEVP_VECTORS, ret);
		goto unclaim;
	}
	for (v = 0; v < PEVP_VECTORS; v++) {
		ret = devm_request_irq(&pdev->dev, pci_irq_vector(pdev, v), pevp_irq, 0,
				       v == PEVP_VECTOR_SEQ ? "pevp-seq" : "pevp-dma",
				       (void *)(uintptr_t)v);
		if (ret)
			goto free_vectors;
	}
	dev_info(&pdev->dev, "pe-vp interrupt companion: vector %d SEQ, vector %d DMA\n",
		 PEVP_VECTOR_SEQ, PEVP_VECTOR_DMA);
	return 0;

free_vectors:
	while (--v >= 0)
		devm_free_irq(&pdev->dev, pci_irq_vector(pdev, v), (void *)(uintptr_t)v);
	pci_free_irq_vectors(pdev);
unclaim:
	spin_lock_irq(&pevp_pair_lock);
	pevp_companion = NULL;
	spin_unlock_irq(&pevp_pair_lock);
	return ret;
}

static void pevp_doorbell_remove(struct pci_dev *pdev)
{
	int v;

	for (v = 0; v < PEVP_VECTORS; v++)
		devm_free_irq(&pdev->dev, pci_irq_vector(pdev, v), (void *)(uintptr_t)v);
	pci_free_irq_vectors(pdev);
	spin_lock_irq(&pevp_pair_lock);
	pevp_companion = NULL;
	spin_unlock_irq(&pevp_pair_lock);
}

/* ---- the SEQ */

/*
 * The arm sequence of spec 003 section 6, as platform/driver's Driver::arm
 * does it with its defaults: issue policy (16-entry IFIFO, PeRegWrite values
 * from SBUF, dependency check on), then telemetry (pulse cntr_rst, then
 * cntr_en), then the VP's completion interrupt.
 */
static void pevp_arm_seq(struct pevp_dev *pd)
{
	pevp_wr(pd, PEVP_TOP + PEVP_TPB_ARR_SEQ_TOP_HOST_VISIBLE_ARR_SEQ_CFG_QUEUE_CFG_OFFSET, 0);
	pevp_wr(pd, PEVP_TOP + PEVP_TPB_ARR_SEQ_TOP_HOST_VISIBLE_ARR_SEQ_CFG_PERF_CNTR_CFG_OFFSET,
		PEVP_TPB_ARR_SEQ_TOP_HOST_VISIBLE_ARR_SEQ_CFG_PERF_CNTR_CFG_CNTR_RST_MASK);
	pevp_wr(pd, PEVP_TOP + PEVP_TPB_ARR_SEQ_TOP_HOST_VISIBLE_ARR_SEQ_CFG_PERF_CNTR_CFG_OFFSET,
		PEVP_TPB_ARR_SEQ_TOP_HOST_VISIBLE_ARR_SEQ_CFG_PERF_CNTR_CFG_CNTR_EN_MASK);
	pevp_seq_wr(pd, SEQ_IRQ_ENABLE,
		    SEQ_IRQ_ENABLE_DONE | SEQ_IRQ_ENABLE_ERROR);
}

static void pevp_read_error(struct pevp_dev *pd, u64 retired_before, struct pevp_error *e)
{
	u32 info = pevp_seq_rd(pd, PEVP_VP_SEQ_SEQ_ERROR_ERR_INFO_OFFSET);

	memset(e, 0, sizeof(*e));
	e->valid = 1;
	e->instr_index = pevp_seq_rd(pd, PEVP_VP_SEQ_SEQ_ERROR_ERR_INSTR_INDEX_OFFSET);
	e->opcode = pevp_vp_seq_seq_error_err_info_opcode_get(info);
	e->field_id = pevp_vp_seq_seq_error_err_info_field_id_get(info);
	e->rule_id = pevp_vp_seq_seq_error_err_info_rule_id_get(info);
	e->value = ((u64)pevp_seq_rd(pd, PEVP_VP_SEQ_SEQ_ERROR_ERR_VALUE_HI_OFFSET) << 32) |
		   pevp_seq_rd(pd, PEVP_VP_SEQ_SEQ_ERROR_ERR_VALUE_LO_OFFSET);
	/*
	 * Every instruction before the faulting one retired first
	 * (docs/datapath.md, program order of faults).
	 */
	e->program_index = pevp_rd_counter48(pd, SEQ_RETIRED) -
			   retired_before;
	strscpy(e->rule, pevp_rule_name(e->rule_id), sizeof(e->rule));
}

/*
 * Writes one 64-byte record as eight ascending 8-byte stores into the next
 * slot of the queue window; the device queues it when its last byte arrives.
 */
static void pevp_write_record(struct pevp_dev *pd, const u8 *record)
{
	void __iomem *slot = pd->regs + PEVP_IQ + pd->iq_slot * PEVP_RECORD_BYTES;
	int q;

	for (q = 0; q < PEVP_RECORD_BYTES / 8; q++) {
		/* This store queues the record: interrupt latency counts from here. */
		if (q == PEVP_RECORD_BYTES / 8 - 1)
			pd->last_iq_write = ktime_get();
		writeq(get_unaligned_le64(record + 8 * q), slot + 8 * q);
	}
	pd->iq_slot = (pd->iq_slot + 1) % (PEVP_IQ_BYTES / PEVP_RECORD_BYTES);
}

/*
 * Waits until cond(pd) holds, re-reading the device whenever an interrupt of
 * the vector counted by irqs arrives (and every PEVP_POLL_JIFFIES, in case one
 * was lost). Returns 0, or -ETIMEDOUT once deadline (jiffies) passes.
 */
static int pevp_wait(struct pevp_dev *pd, atomic64_t *irqs, bool (*cond)(struct pevp_dev *pd),
		     unsigned long deadline)
{
	for (;;) {
		const s64 seen = atomic64_read(irqs);
		long left;

		if (cond(pd))
			return 0;
		left = (long)(deadline - jiffies);
		if (left <= 0)
			return -ETIMEDOUT;
		wait_event_timeout(pd->wq, atomic64_read(irqs) != seen,
				   min_t(long, left, PEVP_POLL_JIFFIES));
	}
}

static bool pevp_seq_finished(struct pevp_dev *pd)
{
	const u32 st = pevp_seq_rd(pd, SEQ_STATUS);

	return st & (SEQ_STATUS_DONE | SEQ_STATUS_ERROR);
}

static bool pevp_seq_has_room(struct pevp_dev *pd)
{
	const u32 iq = pevp_seq_rd(pd, SEQ_IQ_STATUS);

	return pevp_vp_seq_seq_ctrl_iq_status_space_get(iq) > 0 || pevp_seq_finished(pd);
}

static int pevp_submit(struct pevp_dev *pd, struct pevp_submit *s)
{
	const u8 __user *user = u64_to_user_ptr(s->records);
	unsigned long deadline;
	u64 retired_before;
	ktime_t start;
	s64 irqs_before;
	u8 record[PEVP_RECORD_BYTES];
	u32 i = 0, st;
	int ret;

	if (s->count == 0 || s->count > PEVP_MAX_SUBMIT || s->timeout_ms == 0 ||
	    s->timeout_ms > PEVP_MAX_TIMEOUT_MS)
		return -EINVAL;
	st = pevp_seq_rd(pd, SEQ_STATUS);
	if (st & SEQ_STATUS_ERROR)
		return -EBUSY;
	if (!(st & SEQ_STATUS_IDLE) &&
	    !(st & SEQ_STATUS_DONE))
		return -EBUSY;

	deadline = jiffies + msecs_to_jiffies(s->timeout_ms);
	retired_before = pevp_rd_counter48(pd, SEQ_RETIRED);
	irqs_before = atomic64_read(&pd->seq_irqs);
	pevp_seq_wr(pd, SEQ_CMD, SEQ_CMD_CLEAR_DONE);
	start = ktime_get();
	while (i < s->count) {
		u32 space;

		ret = pevp_wait(pd, &pd->seq_irqs, pevp_seq_has_room, deadline);
		if (ret)
			goto timed_out;
		if (pevp_seq_rd(pd, SEQ_STATUS) &
		    SEQ_STATUS_ERROR)
			break;	/* stopped on a fault: the rest is not written */
		space = pevp_vp_seq_seq_ctrl_iq_status_space_get(
			pevp_seq_rd(pd, SEQ_IQ_STATUS));
		for (; space > 0 && i < s->count; space--, i++) {
			const u8 __user *from = user + (size_t)i * PEVP_RECORD_BYTES;

			if (copy_from_user(record, from, sizeof(record))) {
				ret = -EFAULT;
				goto out;
			}
			pevp_write_record(pd, record);
		}
	}
	ret = pevp_wait(pd, &pd->seq_irqs, pevp_seq_finished, deadline);
	if (ret)
		goto timed_out;

	s->elapsed_ns = ktime_to_ns(ktime_sub(ktime_get(), start));
	s->retired = pevp_rd_counter48(pd, SEQ_RETIRED) -
		     retired_before;
	s->irqs = atomic64_read(&pd->seq_irqs) - irqs_before;
	if (s->irqs && ktime_after(pd->last_seq_irq, pd->last_iq_write))
		s->irq_latency_ns = ktime_to_ns(ktime_sub(pd->last_seq_irq, pd->last_iq_write));
	if (pevp_seq_rd(pd, SEQ_STATUS) & SEQ_STATUS_ERROR) {
		pevp_read_error(pd, retired_before, &s->error);
		pd->last_error = s->error;
		dev_err(&pd->pdev->dev,
			"instruction %llu of the submit (%llu since reset, opcode 0x%02x) faulted: rule 0x%03x %s, field 0x%02x, value 0x%llx\n",
			s->error.program_index, s->error.instr_index, s->error.opcode,
			s->error.rule_id, s->error.rule, s->error.field_id, s->error.value);
		return -EIO;
	}
	return 0;

timed_out:
	s->retired = pevp_rd_counter48(pd, SEQ_RETIRED) -
		     retired_before;
	dev_err(&pd->pdev->dev,
		"submit: %u of %u records written, %llu retired, no completion within %u ms\n",
		i, s->count, s->retired, s->timeout_ms);
out:
	return ret;
}

static int pevp_clear_error(struct pevp_dev *pd)
{
	if (!(pevp_seq_rd(pd, SEQ_STATUS) & SEQ_STATUS_ERROR))
		return -EINVAL;
	pevp_seq_wr(pd, SEQ_CMD, SEQ_CMD_CLEAR_ERROR);
	return 0;
}

/* ---- the DMA engines: one queue, its ring in guest memory */

static int pevp_dma_queue_start(struct pevp_dev *pd)
{
	const u64 base = PEVP_DMA_HOST_BASE + pd->ring_dma;
	u32 state;

	pevp_dma_wr(pd, PEVP_DMA_DMA_GLOBAL_QUEUE_SEL_OFFSET, PEVP_DMA_QUEUE);
	/* Reset zeroes head, tail, the error record and the counters. */
	pevp_dma_wr(pd, DMAQ_CONTROL, DMAQ_CONTROL_RESET);
	pd->dma_tail = 0;
	pd->dma_completed = 0;
	pevp_dma_wr(pd, PEVP_DMA_DMA_QUEUE_RING_BASE_LO_OFFSET, lower_32_bits(base));
	pevp_dma_wr(pd, PEVP_DMA_DMA_QUEUE_RING_BASE_HI_OFFSET, upper_32_bits(base));
	pevp_dma_wr(pd, PEVP_DMA_DMA_QUEUE_RING_ENTRIES_OFFSET, PEVP_RING_ENTRIES);
	pevp_dma_wr(pd, DMAQ_CONTROL, DMAQ_CONTROL_ENABLE);
	state = pevp_dma_rd(pd, DMAQ_STATE) & DMAQ_STATE_STATE;
	if (state == PEVP_QUEUE_STOPPED) {
		u32 info = pevp_dma_rd(pd, PEVP_DMA_DMA_QUEUE_ERR_INFO_OFFSET);

		dev_err(&pd->pdev->dev,
			"DMA queue %d refused its ring at 0x%llx: field 0x%02x rule %u\n",
			PEVP_DMA_QUEUE, base, pevp_dma_dma_queue_err_info_field_id_get(info),
			pevp_dma_dma_queue_err_info_rule_id_get(info));
		return -EIO;
	}
	pevp_dma_wr(pd, DMAG_IRQ_ENABLE,
		    DMAG_IRQ_ENABLE_COMPLETION | DMAG_IRQ_ENABLE_ERROR);
	return 0;
}

static void pevp_dma_queue_stop(struct pevp_dev *pd)
{
	pevp_dma_wr(pd, DMAG_IRQ_ENABLE, 0);
	pevp_dma_wr(pd, PEVP_DMA_DMA_GLOBAL_QUEUE_SEL_OFFSET, PEVP_DMA_QUEUE);
	pevp_dma_wr(pd, DMAQ_CONTROL, DMAQ_CONTROL_RESET);
}

static bool pevp_dma_finished(struct pevp_dev *pd)
{
	const u32 state = pevp_dma_rd(pd, DMAQ_STATE) &
			  DMAQ_STATE_STATE;

	if (state == PEVP_QUEUE_STOPPED)
		return true;
	return (s32)(pevp_dma_rd(pd, DMAQ_DESCRIPTORS_CNT) - pd->dma_completed) >= 0;
}

static void pevp_fill_desc(struct pevp_desc *d, const struct pevp_dma *req, u64 host)
{
	const bool to_device = req->direction == PEVP_DMA_TO_DEVICE;

	memset(d, 0, sizeof(*d));
	d->kind = PEVP_DESC_COPY;
	d->flags = PEVP_DESC_FLAG_IRQ;
	d->src = cpu_to_le64(to_device ? host : req->device_addr);
	d->dst = cpu_to_le64(to_device ? req->device_addr : host);
	d->row_bytes = cpu_to_le32(req->row_bytes);
	d->rows = cpu_to_le32(req->rows);
	d->planes = cpu_to_le32(1);
	d->elem_bytes = req->elem_bytes;
	d->src_row_stride = cpu_to_le32(to_device ? req->row_bytes : req->device_row_stride);
	d->dst_row_stride = cpu_to_le32(to_device ? req->device_row_stride : req->row_bytes);
}

static void pevp_read_dma_error(struct pevp_dev *pd, struct pevp_dma_error *e)
{
	const u32 info = pevp_dma_rd(pd, PEVP_DMA_DMA_QUEUE_ERR_INFO_OFFSET);

	memset(e, 0, sizeof(*e));
	e->valid = 1;
	e->index = pevp_dma_rd(pd, PEVP_DMA_DMA_QUEUE_ERR_INDEX_OFFSET);
	e->field_id = pevp_dma_dma_queue_err_info_field_id_get(info);
	e->rule_id = pevp_dma_dma_queue_err_info_rule_id_get(info);
	e->value = ((u64)pevp_dma_rd(pd, PEVP_DMA_DMA_QUEUE_ERR_VALUE_HI_OFFSET) << 32) |
		   pevp_dma_rd(pd, PEVP_DMA_DMA_QUEUE_ERR_VALUE_LO_OFFSET);
}

static int pevp_dma(struct pevp_dev *pd, struct pevp_dma *req)
{
	void __user *user = u64_to_user_ptr(req->user_addr);
	const bool to_device = req->direction == PEVP_DMA_TO_DEVICE;
	struct device *dev = &pd->pdev->dev;
	struct pevp_orphan *orphan;
	dma_addr_t buf_dma;
	s64 irqs_before;
	ktime_t start;
	size_t bytes;
	void *buf;
	int ret;

	if ((req->direction != PEVP_DMA_TO_DEVICE && req->direction != PEVP_DMA_FROM_DEVICE) ||
	    req->row_bytes == 0 || req->rows == 0 || req->timeout_ms == 0 ||
	    req->timeout_ms > PEVP_MAX_TIMEOUT_MS || req->reserved ||
	    !(req->elem_bytes == 1 || req->elem_bytes == 2 || req->elem_bytes == 4 ||
	      req->elem_bytes == 8))
		return -EINVAL;
	bytes = (size_t)req->row_bytes * req->rows;
	if (bytes > PEVP_MAX_TRANSFER)
		return -E2BIG;

	buf = dma_alloc_coherent(dev, bytes, &buf_dma, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	if (to_device && copy_from_user(buf, user, bytes)) {
		ret = -EFAULT;
		goto free;
	}

	pevp_fill_desc(&pd->ring[pd->dma_tail % PEVP_RING_ENTRIES], req,
		       PEVP_DMA_HOST_BASE + buf_dma);
	/* The descriptor is in memory before the doorbell makes the engine read it. */
	dma_wmb();
	pd->dma_tail++;
	pd->dma_completed++;
	irqs_before = atomic64_read(&pd->dma_irqs);
	start = ktime_get();
	writel(pd->dma_tail, pd->regs + PEVP_DMA_DOORBELLS + 4 * PEVP_DMA_QUEUE);
	ret = pevp_wait(pd, &pd->dma_irqs, pevp_dma_finished,
			jiffies + msecs_to_jiffies(req->timeout_ms));
	req->elapsed_ns = ktime_to_ns(ktime_sub(ktime_get(), start));
	req->irqs = atomic64_read(&pd->dma_irqs) - irqs_before;
	pevp_dma_wr(pd, DMAG_IRQ_CLEAR, DMAG_IRQ_CLEAR_COMPLETION);
	if (ret) {
		dev_err(dev,
			"DMA of %zu bytes %s device address 0x%llx: no completion within %u ms; queue reset\n",
			bytes, to_device ? "to" : "from", req->device_addr, req->timeout_ms);
		goto orphan;
	}
	if ((pevp_dma_rd(pd, DMAQ_STATE) & DMAQ_STATE_STATE) ==
	    PEVP_QUEUE_STOPPED) {
		pevp_read_dma_error(pd, &req->dma_error);
		dev_err(dev,
			"DMA descriptor %llu (%zu bytes %s device address 0x%llx) refused: field 0x%02x rule %u, value 0x%llx\n",
			req->dma_error.index, bytes, to_device ? "to" : "from", req->device_addr,
			req->dma_error.field_id, req->dma_error.rule_id, req->dma_error.value);
		/* The refused descriptor moved nothing and is consumed: resume behind it. */
		pd->dma_completed--;
		pevp_dma_wr(pd, DMAQ_CONTROL,
			    DMAQ_CONTROL_ENABLE | DMAQ_CONTROL_CLEAR_ERROR);
		pevp_dma_wr(pd, DMAG_IRQ_CLEAR, DMAG_IRQ_CLEAR_ERROR);
		ret = -EIO;
		goto free;
	}
	if (!to_device && copy_to_user(user, buf, bytes))
		ret = -EFAULT;
free:
	dma_free_coherent(dev, bytes, buf, buf_dma);
	return ret;

orphan:
	/* The engine may still write the buffer: keep it until remove, restart the queue. */
	orphan = kzalloc(sizeof(*orphan), GFP_KERNEL);
	if (orphan) {
		orphan->bytes = bytes;
		orphan->cpu = buf;
		orphan->dma = buf_dma;
		list_add(&orphan->node, &pd->orphans);
	}
	pevp_dma_queue_stop(pd);
	if (pevp_dma_queue_start(pd))
		dev_err(dev, "DMA queue %d did not restart\n", PEVP_DMA_QUEUE);
	return ret;
}

/* ---- counters and registers */

static void pevp_perf(struct pevp_dev *pd, struct pevp_perf *p)
{
	int t;

	memset(p, 0, sizeof(*p));
	p->retired = pevp_rd_counter48(pd, SEQ_RETIRED);
	p->seq_irqs = atomic64_read(&pd->seq_irqs);
	p->dma_irqs = atomic64_read(&pd->dma_irqs);
	for (t = 0; t < PEVP_PERF_TILES; t++) {
		p->weight_load[t] = pevp_rd_counter48(pd, PEVP_TOP + pevp_perf_weight_load[t]);
		p->matmul[t] = pevp_rd_counter48(pd, PEVP_TOP + pevp_perf_matmul[t]);
		p->pe_regwrite[t] = pevp_rd_counter48(pd, PEVP_TOP + pevp_perf_pe_regwrite[t]);
	}
}

/* Average BAR0 read and write round trips over a register without side effects. */
static int pevp_bar_timing(struct pevp_dev *pd, struct pevp_bar_timing *b)
{
	const u32 sem = PEVP_VP_SEQ + PEVP_VP_SEQ_SEQ_SEMAPHORE_SEMAPHORE_OFFSET_AT(
		PEVP_VP_SEQ_SEQ_SEMAPHORE_SEMAPHORE_COUNT - 1);
	u32 i, saved;
	ktime_t t0;

	if (b->iterations == 0 || b->iterations > 100000 || b->reserved)
		return -EINVAL;
	saved = pevp_rd(pd, sem);
	t0 = ktime_get();
	for (i = 0; i < b->iterations; i++)
		pevp_rd(pd, sem);
	b->read_ns = ktime_to_ns(ktime_sub(ktime_get(), t0)) / b->iterations;
	t0 = ktime_get();
	for (i = 0; i < b->iterations; i++)
		pevp_wr(pd, sem, saved);
	b->write_ns = ktime_to_ns(ktime_sub(ktime_get(), t0)) / b->iterations;
	return 0;
}

/* A program waiting on a semaphore (EVENTS WAIT_GE / WAIT_EQ) goes on when the host sets it. */
static int pevp_semaphore(struct pevp_dev *pd, struct pevp_semaphore *sem)
{
	u32 offset;

	if (sem->index >= PEVP_VP_SEQ_SEQ_SEMAPHORE_SEMAPHORE_COUNT || sem->write > 1 || sem->reserved)
		return -EINVAL;
	offset = PEVP_VP_SEQ + PEVP_VP_SEQ_SEQ_SEMAPHORE_SEMAPHORE_OFFSET_AT(sem->index);
	if (sem->write)
		pevp_wr(pd, offset, sem->value);
	sem->value = pevp_rd(pd, offset);
	return 0;
}

/* ---- the character device */

static void pevp_release_dev(struct kref *ref)
{
	struct pevp_dev *pd = container_of(ref, struct pevp_dev, ref);

	kfree(pd);
}

static int pevp_open(struct inode *inode, struct file *file)
{
	struct pevp_dev *pd = container_of(file->private_data, struct pevp_dev, misc);

	kref_get(&pd->ref);
	file->private_data = pd;
	return 0;
}

static int pevp_release(struct inode *inode, struct file *file)
{
	struct pevp_dev *pd = file->private_data;

	kref_put(&pd->ref, pevp_release_dev);
	return 0;
}

static void pevp_info(struct pevp_dev *pd, struct pevp_info *info)
{
	memset(info, 0, sizeof(*info));
	info->vendor = pd->pdev->vendor;
	info->device = pd->pdev->device;
	info->revision = pd->pdev->revision;
	info->dma_engines = pd->dma_engines;
	info->dma_queues_per_engine = pd->dma_queues;
	info->iq_window_bytes = PEVP_IQ_BYTES;
	info->bar_bytes[0] = pci_resource_len(pd->pdev, PEVP_BAR_REGS);
	info->bar_bytes[1] = pci_resource_len(pd->pdev, PEVP_BAR_SBUF_PSUM);
	info->bar_bytes[2] = pci_resource_len(pd->pdev, PEVP_BAR_HBM);
	info->max_transfer_bytes = PEVP_MAX_TRANSFER;
}

static long pevp_ioctl_locked(struct pevp_dev *pd, unsigned int cmd, void __user *arg)
{
	union {
		struct pevp_info info;
		struct pevp_submit submit;
		struct pevp_dma dma;
		struct pevp_error error;
		struct pevp_reg reg;
		struct pevp_bar_timing timing;
		struct pevp_semaphore sem;
	} u;
	struct pevp_perf *perf;
	long ret;

	switch (cmd) {
	case PEVP_IOC_INFO:
		pevp_info(pd, &u.info);
		return copy_to_user(arg, &u.info, sizeof(u.info)) ? -EFAULT : 0;
	case PEVP_IOC_SUBMIT:
		if (copy_from_user(&u.submit, arg, sizeof(u.submit)))
			return -EFAULT;
		if (u.submit.reserved)
			return -EINVAL;
		memset(&u.submit.error, 0, sizeof(u.submit.error));
		u.submit.retired = u.submit.elapsed_ns = u.submit.irq_latency_ns = 0;
		u.submit.irqs = 0;
		ret = pevp_submit(pd, &u.submit);
		if (ret == 0 || ret == -EIO || ret == -ETIMEDOUT)
			if (copy_to_user(arg, &u.submit, sizeof(u.submit)))
				return -EFAULT;
		return ret;
	case PEVP_IOC_DMA:
		if (copy_from_user(&u.dma, arg, sizeof(u.dma)))
			return -EFAULT;
		memset(&u.dma.dma_error, 0, sizeof(u.dma.dma_error));
		u.dma.elapsed_ns = 0;
		u.dma.irqs = 0;
		ret = pevp_dma(pd, &u.dma);
		if (ret == 0 || ret == -EIO || ret == -ETIMEDOUT)
			if (copy_to_user(arg, &u.dma, sizeof(u.dma)))
				return -EFAULT;
		return ret;
	case PEVP_IOC_PERF:
		perf = kmalloc(sizeof(*perf), GFP_KERNEL);
		if (!perf)
			return -ENOMEM;
		pevp_perf(pd, perf);
		ret = copy_to_user(arg, perf, sizeof(*perf)) ? -EFAULT : 0;
		kfree(perf);
		return ret;
	case PEVP_IOC_ERROR:
		return copy_to_user(arg, &pd->last_error, sizeof(pd->last_error)) ? -EFAULT : 0;
	case PEVP_IOC_CLEAR_ERROR:
		return pevp_clear_error(pd);
	case PEVP_IOC_READ_REG:
		if (copy_from_user(&u.reg, arg, sizeof(u.reg)))
			return -EFAULT;
		if (u.reg.offset % 4 || u.reg.offset >= pci_resource_len(pd->pdev, PEVP_BAR_REGS))
			return -EINVAL;
		u.reg.value = pevp_rd(pd, u.reg.offset);
		return copy_to_user(arg, &u.reg, sizeof(u.reg)) ? -EFAULT : 0;
	case PEVP_IOC_BAR_TIMING:
		if (copy_from_user(&u.timing, arg, sizeof(u.timing)))
			return -EFAULT;
		ret = pevp_bar_timing(pd, &u.timing);
		if (ret)
			return ret;
		return copy_to_user(arg, &u.timing, sizeof(u.timing)) ? -EFAULT : 0;
	case PEVP_IOC_SEMAPHORE:
		if (copy_from_user(&u.sem, arg, sizeof(u.sem)))
			return -EFAULT;
		ret = pevp_semaphore(pd, &u.sem);
		if (ret)
			return ret;
		return copy_to_user(arg, &u.sem, sizeof(u.sem)) ? -EFAULT : 0;
	default:
		return -ENOTTY;
	}
}

static long pevp_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct pevp_dev *pd = file->private_data;
	long ret;

	if (mutex_lock_interruptible(&pd->lock))
		return -ERESTARTSYS;
	ret = pd->gone ? -ENODEV : pevp_ioctl_locked(pd, cmd, (void __user *)arg);
	mutex_unlock(&pd->lock);
	return ret;
}

static const struct file_operations pevp_fops = {
	.owner = THIS_MODULE,
	.open = pevp_open,
	.release = pevp_release,
	.unlocked_ioctl = pevp_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = noop_llseek,
};

/* ---- the pe-vp function: probe and remove in Documentation/PCI/pci.rst's order and its mirror */

static int pevp_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct pevp_dev *pd;
	u32 dma_id, geometry;
	int ret;

	pd = kzalloc(sizeof(*pd), GFP_KERNEL);
	if (!pd)
		return -ENOMEM;
	kref_init(&pd->ref);
	pd->pdev = pdev;
	mutex_init(&pd->lock);
	init_waitqueue_head(&pd->wq);
	INIT_LIST_HEAD(&pd->orphans);

	/* 1. enable, 2. regions, 3. DMA mask, 4. coherent control data, 5. IRQ, 6. the engines. */
	ret = pci_enable_device_mem(pdev);
	if (ret)
		goto free_pd;
	ret = pci_request_regions(pdev, DRV_NAME);
	if (ret)
		goto disable;
	pci_set_master(pdev);
	ret = dma_set_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(PEVP_DMA_MASK_BITS));
	if (ret) {
		dev_err(&pdev->dev, "no %d-bit DMA: %d\n", PEVP_DMA_MASK_BITS, ret);
		goto release;
	}
	pd->regs = pci_iomap(pdev, PEVP_BAR_REGS, 0);
	if (!pd->regs) {
		ret = -ENOMEM;
		goto release;
	}
	dma_id = pevp_dma_rd(pd, PEVP_DMA_DMA_GLOBAL_DMA_ID_OFFSET);
	if (pevp_dma_dma_global_dma_id_id_get(dma_id) != PEVP_DMA_DMA_GLOBAL_DMA_ID_ID_RESET) {
		dev_err(&pdev->dev, "BAR0+0x%x reads dma_id 0x%08x, not the DMA face's 0x%04x\n",
			PEVP_DMA,
			dma_id, PEVP_DMA_DMA_GLOBAL_DMA_ID_ID_RESET);
		ret = -ENODEV;
		goto unmap;
	}
	geometry = pevp_dma_rd(pd, PEVP_DMA_DMA_GLOBAL_DMA_GEOMETRY_OFFSET);
	pd->dma_engines = pevp_dma_dma_global_dma_geometry_engines_get(geometry);
	pd->dma_queues = pevp_dma_dma_global_dma_geometry_queues_per_engine_get(geometry);

	pd->ring = dma_alloc_coherent(&pdev->dev, PEVP_RING_BYTES, &pd->ring_dma,
				      GFP_KERNEL);
	if (!pd->ring) {
		ret = -ENOMEM;
		goto unmap;
	}

	spin_lock_irq(&pevp_pair_lock);
	if (pevp_paired) {
		spin_unlock_irq(&pevp_pair_lock);
		dev_err(&pdev->dev, "a pe-vp device is bound already: one per guest\n");
		ret = -EBUSY;
		goto free_ring;
	}
	pevp_paired = pd;
	spin_unlock_irq(&pevp_pair_lock);
	if (!pevp_companion)
		dev_warn(&pdev->dev, "no interrupt companion bound yet: completions are polled\n");

	pevp_arm_seq(pd);
	ret = pevp_dma_queue_start(pd);
	if (ret)
		goto unpair;

	pd->id = ida_alloc(&pevp_ida, GFP_KERNEL);
	if (pd->id < 0) {
		ret = pd->id;
		goto stop;
	}
	snprintf(pd->name, sizeof(pd->name), DRV_NAME "%d", pd->id);
	pd->misc.minor = MISC_DYNAMIC_MINOR;
	pd->misc.name = pd->name;
	pd->misc.fops = &pevp_fops;
	pd->misc.parent = &pdev->dev;
	ret = misc_register(&pd->misc);
	if (ret)
		goto free_id;
	pci_set_drvdata(pdev, pd);
	dev_info(&pdev->dev, "pe-vp rev %u: /dev/%s, BAR0 %llu KiB, DMA %u engines x %u queues\n",
		 pdev->revision, pd->name, (u64)pci_resource_len(pdev, PEVP_BAR_REGS) >> 10,
		 pd->dma_engines, pd->dma_queues);
	return 0;

free_id:
	ida_free(&pevp_ida, pd->id);
stop:
	pevp_dma_queue_stop(pd);
unpair:
	pevp_seq_wr(pd, SEQ_IRQ_ENABLE, 0);
	spin_lock_irq(&pevp_pair_lock);
	pevp_paired = NULL;
	spin_unlock_irq(&pevp_pair_lock);
free_ring:
	dma_free_coherent(&pdev->dev, PEVP_RING_BYTES, pd->ring, pd->ring_dma);
unmap:
	pci_iounmap(pdev, pd->regs);
release:
	pci_release_regions(pdev);
disable:
	pci_disable_device(pdev);
free_pd:
	kfree(pd);
	return ret;
}

static void pevp_remove(struct pci_dev *pdev)
{
	struct pevp_dev *pd = pci_get_drvdata(pdev);
	struct pevp_orphan *o, *next;

	/* No new users; an open file keeps pd and gets -ENODEV. */
	misc_deregister(&pd->misc);
	mutex_lock(&pd->lock);
	pd->gone = true;
	mutex_unlock(&pd->lock);
	ida_free(&pevp_ida, pd->id);
	/* Quiesce: interrupts off at the source, then stop delivering them, then stop DMA. */
	pevp_seq_wr(pd, SEQ_IRQ_ENABLE, 0);
	spin_lock_irq(&pevp_pair_lock);
	pevp_paired = NULL;
	spin_unlock_irq(&pevp_pair_lock);
	pevp_dma_queue_stop(pd);
	list_for_each_entry_safe(o, next, &pd->orphans, node) {
		dma_free_coherent(&pdev->dev, o->bytes, o->cpu, o->dma);
		list_del(&o->node);
		kfree(o);
	}
	dma_free_coherent(&pdev->dev, PEVP_RING_BYTES, pd->ring, pd->ring_dma);
	pci_iounmap(pdev, pd->regs);
	pci_release_regions(pdev);
	pci_disable_device(pdev);
	kref_put(&pd->ref, pevp_release_dev);
}

static const struct pci_device_id pevp_ids[] = {
	{ PCI_DEVICE(PEVP_PCI_VENDOR_ID, PEVP_PCI_DEVICE_ID) },
	{ }
};
MODULE_DEVICE_TABLE(pci, pevp_ids);

static const struct pci_device_id pevp_doorbell_ids[] = {
	{ PCI_DEVICE(PCI_VENDOR_ID_REDHAT_QUMRANET, 0x1110) },	/* QEMU ivshmem */
	{ }
};

static struct pci_driver pevp_driver = {
	.name = DRV_NAME,
	.id_table = pevp_ids,
	.probe = pevp_probe,
	.remove = pevp_remove,
};

static struct pci_driver pevp_doorbell_driver = {
	.name = DRV_NAME "-doorbell",
	.id_table = pevp_doorbell_ids,
	.probe = pevp_doorbell_probe,
	.remove = pevp_doorbell_remove,
};

static int __init pevp_init(void)
{
	int ret;

	/* The companion first, so the device finds its interrupts at probe. */
	ret = pci_register_driver(&pevp_doorbell_driver);
	if (ret)
		return ret;
	ret = pci_register_driver(&pevp_driver);
	if (ret)
		pci_unregister_driver(&pevp_doorbell_driver);
	return ret;
}

static void __exit pevp_exit(void)
{
	pci_unregister_driver(&pevp_driver);
	pci_unregister_driver(&pevp_doorbell_driver);
	if (atomic64_read(&pevp_stray_irqs))
		pr_info(DRV_NAME ": %lld interrupts arrived with no device bound\n",
			(long long)atomic64_read(&pevp_stray_irqs));
}

module_init(pevp_init);
module_exit(pevp_exit);

MODULE_DESCRIPTION("pe-vp, the PE matrix engine's virtual platform, as a PCI device");
MODULE_LICENSE("GPL");
