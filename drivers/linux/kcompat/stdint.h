/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The generated C99 register headers (models/regfile, *_regs_c.h) include
 * <stdint.h>; in the kernel the fixed-width types come from linux/types.h.
 * This stand-in is on the module's include path only.
 */
#ifndef PEVP_KCOMPAT_STDINT_H
#define PEVP_KCOMPAT_STDINT_H

#include <linux/types.h>

#define UINT32_C(c) c##U
#define UINT64_C(c) c##ULL

#endif
