/*
 * inline.h - what generated code of the x86 guest compiles inline (rpt_api::GUEST_INLINE_HEADER):
 * cpu.h includes it after the helper prototypes.
 *
 * On x86-64 hosts with the f80 model, the value forms of the x87 helpers (x87_values.h, on the
 * host unit of x87_host.h) replace the calls of rpt_helper_x87_v*: each becomes a few x87
 * instructions in the caller, with the control word loaded only when the guest's differs from the
 * host's, instead of a call through two functions (docs/x87.md, "Inline value forms"). The
 * out-of-line helpers of x87.c, which the IR interpreter calls, run the same code.
 *
 * Elsewhere (the software unit, the f64 model, whose define the generation writes above this
 * comment) generated code calls the helpers out of line.
 */
#ifndef RPT_X86_INLINE_H
#define RPT_X86_INLINE_H

#if defined(__x86_64__) && !defined(RPT_X87_SOFT) && !defined(RPT_X87_F64) && !defined(RPT_X87_C)
#include "x87_defs.h"
#include "x87_host.h"
#include "x87_values.h"

#define rpt_helper_x87_vload(...) x87_vload_inline(__VA_ARGS__)
#define rpt_helper_x87_vstore(...) x87_vstore_inline(__VA_ARGS__)
#define rpt_helper_x87_varith(...) x87_varith_inline(__VA_ARGS__)
#define rpt_helper_x87_varith_mem(...) x87_varith_mem_inline(__VA_ARGS__)
#define rpt_helper_x87_vcom(...) x87_vcom_inline(__VA_ARGS__)
#define rpt_helper_x87_vcom_mem(...) x87_vcom_mem_inline(__VA_ARGS__)
#define rpt_helper_x87_vunary(...) x87_vunary_inline(__VA_ARGS__)
#define rpt_helper_x87_vconst(...) x87_vconst_inline(__VA_ARGS__)
#endif

#endif /* RPT_X86_INLINE_H */
