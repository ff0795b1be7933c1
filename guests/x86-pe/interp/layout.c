/*
 * layout.c - where the interpreter build's struct cpu (cpu.h) keeps each field, for src/interp.rs,
 * which compares it with its #[repr(C)] mirror before the first helper call: the two cannot
 * disagree silently.
 */
#include "cpu.h"

/* One field: its name, offset and size. */
struct rpt_x86_interpreter_field {
	const char *name;
	size_t offset;
	size_t size;
};

#define RPT_FIELD(f) { #f, offsetof(struct cpu, f), sizeof(((struct cpu *)0)->f) }

const struct rpt_x86_interpreter_field rpt_x86_interpreter_fields[] = {
	RPT_FIELD(cf),
	RPT_FIELD(pf),
	RPT_FIELD(af),
	RPT_FIELD(zf),
	RPT_FIELD(sf),
	RPT_FIELD(of),
	RPT_FIELD(fpu_cw),
	RPT_FIELD(fpu_sw),
	RPT_FIELD(fpu_top),
	RPT_FIELD(fpu_tags),
	RPT_FIELD(st_m),
	RPT_FIELD(st_e),
	RPT_FIELD(fpu_result_e),
};

const size_t rpt_x86_interpreter_field_count = sizeof rpt_x86_interpreter_fields / sizeof rpt_x86_interpreter_fields[0];
const size_t rpt_x86_interpreter_cpu_size = sizeof(struct cpu);
