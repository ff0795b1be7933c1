/*
 * x87_soft.h - the x87 unit for hosts without one (AArch64, LoongArch64), included by x87.c.
 *
 * Not written yet: every operation stops the program with a message naming what is missing,
 * rather than compute a result that could differ from the real FPU.
 */

_Noreturn static void x87_soft_missing(const char *what)
{
	rpt_write_stderr("rpt: x86 guest: the x87 unit is not implemented on this host yet (");
	rpt_write_stderr(what);
	rpt_write_stderr(")\n");
	rpt_process_exit(70);
}

static uint16_t unit_load(uint16_t cw, unsigned kind, uint64_t bits, struct rpt_f80 *out)
{
	(void)cw, (void)kind, (void)bits, (void)out;
	x87_soft_missing("load");
}

static uint16_t unit_store(uint16_t cw, unsigned kind, int truncate, struct rpt_f80 v, uint64_t *out)
{
	(void)cw, (void)kind, (void)truncate, (void)v, (void)out;
	x87_soft_missing("store");
}

static uint16_t unit_arith(uint16_t cw, unsigned op, struct rpt_f80 a, struct rpt_f80 b, struct rpt_f80 *out)
{
	(void)cw, (void)op, (void)a, (void)b, (void)out;
	x87_soft_missing("arithmetic");
}

static uint16_t unit_compare(uint16_t cw, int unordered, struct rpt_f80 a, struct rpt_f80 b)
{
	(void)cw, (void)unordered, (void)a, (void)b;
	x87_soft_missing("compare");
}

static uint16_t unit_unary(uint16_t cw, unsigned op, struct rpt_f80 a, struct rpt_f80 *r, struct rpt_f80 *pushed)
{
	(void)cw, (void)op, (void)a, (void)r, (void)pushed;
	x87_soft_missing("one-operand instruction");
}

static uint16_t unit_binary(uint16_t cw, unsigned op, struct rpt_f80 a, struct rpt_f80 b, struct rpt_f80 *r)
{
	(void)cw, (void)op, (void)a, (void)b, (void)r;
	x87_soft_missing("two-operand instruction");
}

static struct rpt_f80 unit_constant(uint16_t cw, unsigned op)
{
	(void)cw, (void)op;
	x87_soft_missing("constant");
}
