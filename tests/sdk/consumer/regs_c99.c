/* A C99 driver's view of the installed register headers: the offsets, fields and resets the spec (003) gives for
 * the registers a driver arms with, through the generated macros and accessors. Exit status 0 when all agree. */
#include <stdio.h>

#include "tpb_arr_seq_cluster_host_visible_regs_c.h"
#include "tpb_arr_seq_top_host_visible_regs_c.h"
#include "tpb_arr_seq_top_protected_regs_c.h"
#include "vp_seq_regs_c.h"

static int failures;

static void expect(const char* what, unsigned long got, unsigned long want) {
  if (got != want) {
    printf("%s = 0x%lx, expected 0x%lx\n", what, got, want);
    ++failures;
  }
}

int main(void) {
  uint32_t queue_cfg = PEVP_TPB_ARR_SEQ_TOP_HOST_VISIBLE_ARR_SEQ_CFG_QUEUE_CFG_RESET;
  /* queue_cfg: fifo_size_sel [0], bypass_peregwrite_instr [4], disable_dependency_check [8], reset 0. */
  expect("queue_cfg reset", queue_cfg, 0x0);
  queue_cfg = pevp_tpb_arr_seq_top_host_visible_arr_seq_cfg_queue_cfg_disable_dependency_check_set(queue_cfg, 1);
  expect("queue_cfg with disable_dependency_check", queue_cfg, 0x100);
  expect("fifo_size_sel shift", PEVP_TPB_ARR_SEQ_TOP_HOST_VISIBLE_ARR_SEQ_CFG_QUEUE_CFG_FIFO_SIZE_SEL_SHIFT, 0);
  expect("bypass_peregwrite_instr shift",
         PEVP_TPB_ARR_SEQ_TOP_HOST_VISIBLE_ARR_SEQ_CFG_QUEUE_CFG_BYPASS_PEREGWRITE_INSTR_SHIFT, 4);
  /* throttle_cfg (protected): disable_throttle [8:0], reset 0x1ff. */
  expect("throttle_cfg reset", PEVP_TPB_ARR_SEQ_TOP_PROTECTED_ARR_SEQ_PROTECTED_CFG_THROTTLE_CFG_RESET, 0x1ff);
  /* arr_cluster_cfg: reset 0xfe08000c; inter_instr_dly_cnt [21:16], reset 8. */
  expect("arr_cluster_cfg reset", PEVP_TPB_ARR_SEQ_CLUSTER_HOST_VISIBLE_ARR_SEQ_CLUSTER_CFG_ARR_CLUSTER_CFG_RESET,
         0xfe08000c);
  expect("inter_instr_dly_cnt",
         pevp_tpb_arr_seq_cluster_host_visible_arr_seq_cluster_cfg_arr_cluster_cfg_inter_instr_dly_cnt_get(
             PEVP_TPB_ARR_SEQ_CLUSTER_HOST_VISIBLE_ARR_SEQ_CLUSTER_CFG_ARR_CLUSTER_CFG_RESET),
         8);
  printf("regs_c99: %s\n", failures == 0 ? "the C headers agree" : "MISMATCH");
  return failures != 0;
}
