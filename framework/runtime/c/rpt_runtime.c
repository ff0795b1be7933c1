/*
 * rpt_runtime.c - start-up, guest memory, dispatch, exits, the services guest C parts use,
 * resume points and rounding helpers (see docs/c-abi.md).
 *
 * Nothing here uses libc: the operating system is reached only through the host primitives of
 * rpt_host.h, which runtime/rpt_host_libc.c implements on a C library and a freestanding host's
 * shim implements with raw system calls. Everything else is plain C and compiler builtins.
 */
#include "cpu.h"

uint8_t *rpt_mem;

/* Room past the top of the guest's space, so a multi-byte access at the last address does not fault. */
#define RPT_GUARD_BYTES 4096u

/* What the mirror above the space maps past the window: a page of the largest size (64 KiB), so
 * the views stay page-aligned on every host. */
#define RPT_MIRROR_SLACK_BYTES 65536u

static size_t rpt_strlen(const char *s)
{
	size_t n = 0;
	while (s[n])
		n++;
	return n;
}

/* ---------------------------------------------------------------- services for guest C parts */

/* Why the last failing service failed (an RPT_HOST_ERROR_*). */
static int rpt_error;

/* Records a primitive's negative result and returns -1, the services' failure value. */
static int rpt_fail(int64_t negative_error)
{
	rpt_error = negative_error < 0 && negative_error >= -RPT_HOST_ERROR_INVALID ? (int)-negative_error
										  : RPT_HOST_ERROR_OTHER;
	return -1;
}

int rpt_last_error(void)
{
	return rpt_error;
}

size_t rpt_write(int fd, const void *buf, size_t len)
{
	const uint8_t *bytes = buf;
	size_t done = 0;
	while (done < len) {
		int64_t n = rpt_host_write(fd, bytes + done, len - done);
		if (n <= 0) {
			if (n < 0)
				rpt_fail(n);
			break;
		}
		done += (size_t)n;
	}
	return done;
}

int64_t rpt_read(int fd, void *buf, size_t len)
{
	int64_t n = rpt_host_read(fd, buf, len);
	return n < 0 ? rpt_fail(n) : n;
}

int rpt_is_terminal(int fd)
{
	return rpt_host_is_terminal(fd);
}

uint64_t rpt_monotonic_ns(void)
{
	return rpt_host_monotonic_ns();
}

int64_t rpt_realtime_ns(void)
{
	return rpt_host_realtime_ns();
}

void rpt_sleep_ns(uint64_t ns)
{
	rpt_host_sleep_ns(ns);
}

const char *rpt_env(size_t i)
{
	return rpt_host_env(i);
}

/* The value of environment variable `name`, or NULL. */
static const char *rpt_env_value(const char *name)
{
	for (size_t i = 0;; i++) {
		const char *entry = rpt_host_env(i);
		if (!entry)
			return NULL;
		size_t n = 0;
		while (name[n] && entry[n] == name[n])
			n++;
		if (!name[n] && entry[n] == '=')
			return entry + n + 1;
	}
}

/* ---------------------------------------------------------------- the sandbox
 *
 * Every guest file lives beneath one host directory, opened once on first use. A path is walked
 * one component at a time with RPT_OPEN_NOFOLLOW, so neither `..` nor a symbolic link can lead
 * outside, whatever the host's C library or kernel would resolve.
 */
static int rpt_sandbox_fd = -1;

static int rpt_sandbox(void)
{
	if (rpt_sandbox_fd < 0) {
		const char *dir = rpt_env_value("RPT_SANDBOX");
		int fd = rpt_host_openat(RPT_HOST_CWD, dir && *dir ? dir : ".", RPT_OPEN_READ | RPT_OPEN_DIRECTORY);
		if (fd < 0)
			return rpt_fail(fd);
		rpt_sandbox_fd = fd;
	}
	return rpt_sandbox_fd;
}

/* Closes a directory rpt_sandbox_parent returned (the sandbox itself stays open). */
static void rpt_sandbox_release(int dir)
{
	if (dir != rpt_sandbox_fd)
		rpt_host_close(dir);
}

/* Longest path component accepted, in bytes (Linux's NAME_MAX is 255). */
#define RPT_NAME_MAX 256

/* Opens the directory holding `path`'s last component beneath the sandbox and copies that
 * component to `last`. Returns a directory for rpt_sandbox_release, or -1. */
static int rpt_sandbox_parent(const char *path, char last[RPT_NAME_MAX])
{
	int dir = rpt_sandbox();
	if (dir < 0)
		return -1;
	const char *p = path;
	for (;;) {
		size_t n = 0;
		while (p[n] && p[n] != '/')
			n++;
		if (n == 0 || n >= RPT_NAME_MAX || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.')) {
			rpt_sandbox_release(dir);
			return rpt_fail(-RPT_HOST_ERROR_INVALID);
		}
		__builtin_memcpy(last, p, n);
		last[n] = 0;
		if (!p[n])
			return dir;
		int next = rpt_host_openat(dir, last, RPT_OPEN_READ | RPT_OPEN_DIRECTORY | RPT_OPEN_NOFOLLOW);
		rpt_sandbox_release(dir);
		if (next < 0)
			return rpt_fail(next);
		dir = next;
		p += n + 1;
	}
}

int rpt_open(const char *path, unsigned flags)
{
	char last[RPT_NAME_MAX];
	int dir = rpt_sandbox_parent(path, last);
	if (dir < 0)
		return -1;
	unsigned allowed = RPT_OPEN_READ | RPT_OPEN_WRITE | RPT_OPEN_CREATE | RPT_OPEN_TRUNCATE | RPT_OPEN_APPEND |
			   RPT_OPEN_EXCLUSIVE;
	int fd = rpt_host_openat(dir, last, (flags & allowed) | RPT_OPEN_NOFOLLOW);
	rpt_sandbox_release(dir);
	if (fd < 0)
		return rpt_fail(fd);
	/* A directory opens read-only without error on Linux; the guest wants a file. */
	int kind = rpt_host_file_kind(fd);
	if (kind != RPT_HOST_FILE_REGULAR) {
		rpt_host_close(fd);
		return rpt_fail(kind < 0                          ? kind
				: kind == RPT_HOST_FILE_DIRECTORY ? -RPT_HOST_ERROR_IS_DIRECTORY
								  : -RPT_HOST_ERROR_ACCESS);
	}
	return fd;
}

int rpt_close(int fd)
{
	int r = rpt_host_close(fd);
	return r < 0 ? rpt_fail(r) : 0;
}

int64_t rpt_seek(int fd, int64_t offset, int whence)
{
	int64_t at = rpt_host_seek(fd, offset, whence);
	return at < 0 ? rpt_fail(at) : at;
}

int rpt_remove(const char *path)
{
	char last[RPT_NAME_MAX];
	int dir = rpt_sandbox_parent(path, last);
	if (dir < 0)
		return -1;
	int r = rpt_host_unlinkat(dir, last);
	rpt_sandbox_release(dir);
	return r < 0 ? rpt_fail(r) : 0;
}

int rpt_rename(const char *from, const char *to)
{
	char from_last[RPT_NAME_MAX], to_last[RPT_NAME_MAX];
	int from_dir = rpt_sandbox_parent(from, from_last);
	if (from_dir < 0)
		return -1;
	int to_dir = rpt_sandbox_parent(to, to_last);
	if (to_dir < 0) {
		rpt_sandbox_release(from_dir);
		return -1;
	}
	int r = rpt_host_renameat(from_dir, from_last, to_dir, to_last);
	rpt_sandbox_release(from_dir);
	rpt_sandbox_release(to_dir);
	return r < 0 ? rpt_fail(r) : 0;
}

void rpt_write_stderr(const char *text)
{
	rpt_write(2, text, rpt_strlen(text));
}

/* Appends `0x` and at least eight hex digits of `v` to `out` at `*pos` (no libc printf). */
static void rpt_append_hex(char *out, size_t cap, size_t *pos, uint64_t v)
{
	char digits[16];
	int n = 0;
	do {
		digits[n++] = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v != 0 || n < 8);
	if (*pos + 2 + (size_t)n >= cap)
		return;
	out[(*pos)++] = '0';
	out[(*pos)++] = 'x';
	while (n > 0)
		out[(*pos)++] = digits[--n];
}

static void rpt_append(char *out, size_t cap, size_t *pos, const char *text)
{
	while (*text && *pos + 1 < cap)
		out[(*pos)++] = *text++;
}

/* Appends `v` in decimal. */
static void rpt_append_dec(char *out, size_t cap, size_t *pos, uint64_t v)
{
	char digits[20];
	int n = 0;
	do {
		digits[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v != 0);
	while (n > 0 && *pos + 1 < cap)
		out[(*pos)++] = digits[--n];
}

static void rpt_tier_finish(void);

static const char *rpt_exit_reason_name(int reason)
{
	switch (reason) {
	case RPT_EXIT_UNLIFTED:
		return "unlifted code (no lifted function at this address)";
	case RPT_EXIT_SYSCALL:
		return "system call not handled by the platform";
	case RPT_EXIT_HALT:
		return "the guest halted";
	case RPT_EXIT_YIELD:
		return "the guest yielded with no scheduler to resume it";
	case RPT_EXIT_DIVIDE_ERROR:
		return "divide error";
	case RPT_EXIT_INVALID_OPCODE:
		return "invalid opcode";
	case RPT_EXIT_UNLIFTABLE:
		return "code rpt could not lift";
	default:
		return "unknown exit reason";
	}
}

_Noreturn void rpt_process_exit(int status)
{
	rpt_tier_finish();
	rpt_host_exit(status);
}

/* The fault site at `pc` (faults.c), if there is one. */
static const struct rpt_fault_site *rpt_fault_site_at(uint64_t pc)
{
	size_t lo = 0, hi = rpt_fault_site_count;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (rpt_fault_sites[mid].pc == pc)
			return &rpt_fault_sites[mid];
		if (rpt_fault_sites[mid].pc < pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* The entry of the function that holds `pc`: the nearest entry at or below it, or 0. */
static uint64_t rpt_enclosing_function(uint64_t pc)
{
	size_t lo = 0, hi = rpt_function_count;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (rpt_function_table[mid].pc <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo > 0 ? rpt_function_table[lo - 1].pc : 0;
}

static int rpt_is_return_site(uint64_t pc)
{
	size_t lo = 0, hi = rpt_return_site_count;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (rpt_return_sites[mid] == pc)
			return 1;
		if (rpt_return_sites[mid] < pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

__attribute__((weak)) size_t rpt_guest_return_candidates(struct cpu *c, uint64_t *out, size_t max)
{
	(void)c;
	(void)out;
	(void)max;
	return 0;
}

/* The most callers a fault's report names, and the most stack words it looks at for them. */
#define RPT_REPORT_CALLERS 8
#define RPT_REPORT_STACK_WORDS 512

/* The callers of the code at a fault, innermost first: the words the guest part offers that are
 * addresses some lifted call returns to. On a stack without frame records (x86 code built without
 * frame pointers) a stale return address may show up among them, so they are the likely callers. */
static void rpt_report_callers(struct cpu *c, char *msg, size_t size, size_t *pos)
{
	static uint64_t words[RPT_REPORT_STACK_WORDS];
	size_t n = rpt_guest_return_candidates(c, words, RPT_REPORT_STACK_WORDS);
	size_t shown = 0;
	for (size_t i = 0; i < n && shown < RPT_REPORT_CALLERS; i++) {
		if (!rpt_is_return_site(words[i]))
			continue;
		rpt_append(msg, size, pos, shown == 0 ? "  called from " : "          from ");
		rpt_append_hex(msg, size, pos, words[i]);
		uint64_t f = rpt_enclosing_function(words[i]);
		if (f) {
			rpt_append(msg, size, pos, " in the function at ");
			rpt_append_hex(msg, size, pos, f);
		}
		rpt_append(msg, size, pos, "\n");
		shown++;
	}
}

/* What the report of a fault at `pc` adds: what rpt found there when it lifted the program, the
 * image's bytes there (up to eight, within their segment), the function that holds the place
 * (the nearest entry at or below it) and its callers, where the guest's stack shows them. */
static void rpt_report_fault_site(struct cpu *c, uint64_t pc)
{
	char msg[1024];
	size_t pos = 0;
	const struct rpt_fault_site *site = rpt_fault_site_at(pc);
	if (site) {
		rpt_append(msg, sizeof msg, &pos, "  ");
		rpt_append(msg, sizeof msg, &pos, site->what);
		rpt_append(msg, sizeof msg, &pos, "\n");
	}
	for (size_t i = 0; i < rpt_segment_count; i++) {
		const struct rpt_segment *s = &rpt_segments[i];
		if (pc < s->addr || pc - s->addr >= s->size)
			continue;
		rpt_append(msg, sizeof msg, &pos, "  bytes:");
		for (uint64_t at = pc - s->addr, end = at + 8; at < end && at < s->size; at++) {
			char hex[4] = { ' ', "0123456789abcdef"[s->bytes[at] >> 4], "0123456789abcdef"[s->bytes[at] & 15], 0 };
			rpt_append(msg, sizeof msg, &pos, hex);
		}
		rpt_append(msg, sizeof msg, &pos, "\n");
		break;
	}
	uint64_t f = rpt_enclosing_function(pc);
	if (f) {
		rpt_append(msg, sizeof msg, &pos, "  in the function at ");
		rpt_append_hex(msg, sizeof msg, &pos, f);
		rpt_append(msg, sizeof msg, &pos, "\n");
	}
	rpt_report_callers(c, msg, sizeof msg, &pos);
	rpt_write(2, msg, pos);
}

_Noreturn void rpt_exit(struct cpu *c, uint64_t pc, int reason)
{
	if (rpt_guest_on_exit(c, pc, reason))
		rpt_process_exit(rpt_guest_finish(c));
	char msg[160];
	size_t pos = 0;
	/* Code rpt could not lift is a fault of the guest program, as on the real CPU; every other
	 * reason is an exit to the runtime that nothing here handles. */
	rpt_append(msg, sizeof msg, &pos, reason == RPT_EXIT_UNLIFTABLE ? "rpt: guest fault at " : "rpt: guest exit at ");
	rpt_append_hex(msg, sizeof msg, &pos, pc);
	rpt_append(msg, sizeof msg, &pos, ": ");
	rpt_append(msg, sizeof msg, &pos, rpt_exit_reason_name(reason));
	rpt_append(msg, sizeof msg, &pos, "\n");
	rpt_write(2, msg, pos);
	if (reason == RPT_EXIT_UNLIFTABLE) {
		rpt_report_fault_site(c, pc);
		rpt_process_exit(RPT_STATUS_GUEST_FAULT);
	}
	if (reason == RPT_EXIT_UNLIFTED) {
		/* Code that no function holds and the run-time tier has no instruction for (or the recipe
		 * turned the tier off): who called it is what a user needs to find the pointer. */
		char callers[512];
		size_t n = 0;
		rpt_report_callers(c, callers, sizeof callers, &n);
		rpt_write(2, callers, n);
	}
	rpt_process_exit(125);
}

_Noreturn void rpt_missing_import(struct cpu *c, const char *name)
{
	uint64_t caller = rpt_guest_caller(c);
	/* A call the platform cannot serve, as a system call it does not handle is: the guest part
	 * may handle it, and writes out what the guest buffered either way. */
	if (rpt_guest_on_exit(c, caller, RPT_EXIT_SYSCALL))
		rpt_process_exit(rpt_guest_finish(c));
	char msg[256];
	size_t pos = 0;
	rpt_append(msg, sizeof msg, &pos, "rpt: the guest called ");
	rpt_append(msg, sizeof msg, &pos, name);
	rpt_append(msg, sizeof msg, &pos, ", which the platform does not implement, from ");
	rpt_append_hex(msg, sizeof msg, &pos, caller);
	rpt_append(msg, sizeof msg, &pos, "\n");
	rpt_write(2, msg, pos);
	rpt_process_exit(RPT_STATUS_MISSING_IMPORT);
}

void rpt_stubbed_import(struct cpu *c, const char *name, int *reported)
{
	if (*reported)
		return;
	*reported = 1;
	char msg[256];
	size_t pos = 0;
	rpt_append(msg, sizeof msg, &pos, "rpt: the guest called ");
	rpt_append(msg, sizeof msg, &pos, name);
	rpt_append(msg, sizeof msg, &pos, " from ");
	rpt_append_hex(msg, sizeof msg, &pos, rpt_guest_caller(c));
	rpt_append(msg, sizeof msg, &pos, ": a stub that returns what the recipe says (reported once)\n");
	rpt_write(2, msg, pos);
}

_Noreturn void rpt_unreachable(struct cpu *c, uint64_t function)
{
	(void)c;
	char msg[160];
	size_t pos = 0;
	rpt_append(msg, sizeof msg, &pos, "rpt: reached code marked unreachable in the function at ");
	rpt_append_hex(msg, sizeof msg, &pos, function);
	rpt_append(msg, sizeof msg, &pos, "\n");
	rpt_write(2, msg, pos);
	rpt_process_exit(125);
}

/* ---------------------------------------------------------------- the function index
 *
 * Indirect calls and jumps look their target up here, so the lookup is O(1): an open-addressing
 * hash table built at start-up from the function table, with a power of two of slots at least
 * twice the functions, each holding an entry's position + 1 (0 is empty), probed linearly from a
 * multiplicative hash of the address. A miss ends at the first empty slot. If the table cannot be
 * allocated, lookups fall back to binary search of the (sorted) function table.
 */
static uint32_t *rpt_index;
static size_t rpt_index_mask;
static unsigned rpt_index_shift;

static size_t rpt_index_slot(uint64_t pc)
{
	return (size_t)((pc * 0x9e3779b97f4a7c15ull) >> rpt_index_shift);
}

static void rpt_index_functions(void)
{
	if (rpt_function_count >= 0xffffffffu)
		return; /* the slots hold 32-bit positions */
	unsigned bits = 1;
	while (((size_t)1 << bits) < 2 * rpt_function_count)
		bits++;
	size_t slots = (size_t)1 << bits;
	uint32_t *index = (uint32_t *)rpt_host_reserve((uint64_t)slots * sizeof *index);
	if (!index)
		return;
	rpt_index_shift = 64 - bits;
	rpt_index_mask = slots - 1;
	for (size_t i = 0; i < rpt_function_count; i++) {
		size_t s = rpt_index_slot(rpt_function_table[i].pc);
		while (index[s])
			s = (s + 1) & rpt_index_mask;
		index[s] = (uint32_t)(i + 1);
	}
	rpt_index = index;
}

struct rpt_direct_table rpt_direct;

/* The direct tables (rpt_runtime.h). For a guest of at most 32 address bits they cover the whole
 * space. Otherwise they cover the functions from the first up to 2^24 bytes above it (the table of
 * every function is then 128 MiB of address space); functions further up are found through the
 * hash index. Either way they are reserved lazily: only the pages holding functions are touched. */
#define RPT_DIRECT_MAX_SLOTS (UINT64_C(1) << 24)
static _Noreturn void rpt_fail_start(const char *what, uint64_t addr);
static void rpt_direct_functions(void)
{
	/* Without MEMARG the table has no `_m` entries, and generated code never asks for one. */
	if (rpt_function_count == 0 || !rpt_function_table[0].fn_m)
		return;
	uint64_t base = RPT_DIRECT_WHOLE_SPACE ? 0 : rpt_function_table[0].pc;
	uint64_t slots = RPT_DIRECT_WHOLE_SPACE ? RPT_DIRECT_COUNT : RPT_DIRECT_MAX_SLOTS;
	size_t covered = 0;
	while (covered < rpt_function_count && rpt_function_table[covered].pc - base < slots)
		covered++;
	if (!RPT_DIRECT_WHOLE_SPACE)
		slots = rpt_function_table[covered - 1].pc - base + 1;
	/* Generated code indexes the whole-space tables without a bounds check, so they must exist;
	 * the windowed ones may be missing (count 0 sends every call to rpt_resolve_m). */
	rpt_fn_m *all = (rpt_fn_m *)rpt_host_reserve(slots * sizeof *all);
	if (!all && RPT_DIRECT_WHOLE_SPACE)
		rpt_fail_start("cannot reserve the table of functions; bytes wanted: ", slots * sizeof *all);
	if (!all)
		return;
	rpt_fn_m *direct = all;
	for (size_t i = 0; i < covered; i++)
		if (!rpt_function_table[i].direct)
			direct = NULL;
	if (!direct) {
		/* Without a table of the direct functions, indirect calls go through rpt_resolve_m. */
		direct = (rpt_fn_m *)rpt_host_reserve(slots * sizeof *direct);
		if (!direct && RPT_DIRECT_WHOLE_SPACE)
			rpt_fail_start("cannot reserve the table of direct functions; bytes wanted: ",
				       slots * sizeof *direct);
		if (!direct)
			return;
	}
	for (size_t i = 0; i < covered; i++) {
		uint64_t at = rpt_function_table[i].pc - base;
		all[at] = rpt_function_table[i].fn_m;
		if (rpt_function_table[i].direct)
			direct[at] = rpt_function_table[i].fn_m;
	}
	rpt_direct.base = base;
	rpt_direct.slots = direct;
	rpt_direct.all = all;
	rpt_direct.count = slots;
}

static const struct rpt_function *rpt_find(uint64_t pc)
{
	if (rpt_index) {
		for (size_t s = rpt_index_slot(pc);; s = (s + 1) & rpt_index_mask) {
			uint32_t at = rpt_index[s];
			if (!at)
				return NULL;
			if (rpt_function_table[at - 1].pc == pc)
				return &rpt_function_table[at - 1];
		}
	}
	size_t lo = 0, hi = rpt_function_count;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t at = rpt_function_table[mid].pc;
		if (at == pc)
			return &rpt_function_table[mid];
		if (at < pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

rpt_fn rpt_lookup(uint64_t pc)
{
	const struct rpt_function *f = rpt_find(pc);
	return f ? f->fn : NULL;
}

/* ---------------------------------------------------------------- the run-time tier */

/* A program built without tier.c (a test that links lifted functions alone) has no tier: these
 * weak, empty tables stand in for it. */
__attribute__((weak)) const rpt_tier_form rpt_tier_forms[1] = { 0 };
__attribute__((weak)) const struct rpt_tier_insn rpt_tier_insns[1] = { { 0, 0, 0 } };
__attribute__((weak)) const size_t rpt_tier_insn_count = 0;
__attribute__((weak)) const uint64_t rpt_tier_params[1] = { 0 };

static const struct rpt_tier_insn *rpt_tier_find(uint64_t pc)
{
	size_t lo = 0, hi = rpt_tier_insn_count;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t at = rpt_tier_insns[mid].pc;
		if (at == pc)
			return &rpt_tier_insns[mid];
		if (at < pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* Guest instructions the tier ran, for the report at exit. */
static uint64_t rpt_tier_executed;
uint64_t rpt_compiled_insns;

/* Where the tier was entered (the first instruction of each run that found no compiled function
 * there), with how often: what the coverage file tells the next build. Open addressing on pc + 1
 * (0 marks a free slot), reserved on first use; past RPT_TIER_ENTRY_SLOTS / 2 distinct entries
 * the rest are counted only as lost. */
#define RPT_TIER_ENTRY_SLOTS 8192u
struct rpt_tier_entry {
	uint64_t pc_plus_one;
	uint64_t count;
};
static struct rpt_tier_entry *rpt_tier_entries;
static size_t rpt_tier_entry_count;
static uint64_t rpt_tier_entries_lost;

static void rpt_tier_add_entry(uint64_t pc, uint64_t count)
{
	if (!rpt_tier_entries) {
		rpt_tier_entries = (struct rpt_tier_entry *)rpt_host_reserve(RPT_TIER_ENTRY_SLOTS * sizeof *rpt_tier_entries);
		if (!rpt_tier_entries) {
			rpt_tier_entries_lost++;
			return;
		}
	}
	size_t slot = (size_t)((pc * 0x9e3779b97f4a7c15ull) >> 51) & (RPT_TIER_ENTRY_SLOTS - 1);
	for (;; slot = (slot + 1) & (RPT_TIER_ENTRY_SLOTS - 1)) {
		struct rpt_tier_entry *e = &rpt_tier_entries[slot];
		if (e->pc_plus_one == pc + 1) {
			e->count += count;
			return;
		}
		if (e->pc_plus_one == 0) {
			if (rpt_tier_entry_count >= RPT_TIER_ENTRY_SLOTS / 2) {
				rpt_tier_entries_lost++;
				return;
			}
			e->pc_plus_one = pc + 1;
			e->count = count;
			rpt_tier_entry_count++;
			return;
		}
	}
}

void rpt_tier_run(struct cpu *c, uint8_t *mb, uint64_t pc)
{
	int entered = 1;
	for (;;) {
		const struct rpt_function *f = rpt_find(pc);
		if (f) {
			if (f->fn_m)
				f->fn_m(c, mb);
			else
				f->fn(c);
			return;
		}
		const struct rpt_tier_insn *insn = rpt_tier_find(pc);
		if (!insn)
			rpt_exit(c, pc, RPT_EXIT_UNLIFTED);
		if (entered) {
			rpt_tier_add_entry(pc, 1);
			entered = 0;
		}
		rpt_tier_executed++;
		pc = rpt_tier_forms[insn->form](c, mb, &rpt_tier_params[insn->params]);
		if (pc == RPT_TIER_RETURN)
			return;
	}
}

/* What an indirect call of an address with no lifted function calls instead: the tier, from the
 * address rpt_resolve(_m) found nothing at. Generated code calls what resolve returns at once,
 * with nothing in between, so one pending address is enough. */
static uint64_t rpt_tier_pending;

static void rpt_tier_entry_m(struct cpu *restrict c, uint8_t *mb)
{
	rpt_tier_run(c, mb, rpt_tier_pending);
}

static void rpt_tier_entry(struct cpu *restrict c)
{
	rpt_tier_run(c, rpt_mem, rpt_tier_pending);
}

/* Whether the tier has an instruction at `pc`: then a miss runs there instead of stopping. */
static int rpt_tier_has(uint64_t pc)
{
	return rpt_tier_find(pc) != NULL;
}

rpt_fn rpt_resolve(struct cpu *c, uint64_t pc)
{
	rpt_fn fn = rpt_lookup(pc);
	if (fn)
		return fn;
	if (!rpt_tier_has(pc))
		rpt_exit(c, pc, RPT_EXIT_UNLIFTED);
	rpt_tier_pending = pc;
	return rpt_tier_entry;
}

rpt_fn_m rpt_resolve_m(struct cpu *c, uint64_t pc)
{
	const struct rpt_function *f = rpt_find(pc);
	if (f && f->fn_m)
		return f->fn_m;
	if (f || !rpt_tier_has(pc))
		rpt_exit(c, pc, RPT_EXIT_UNLIFTED);
	rpt_tier_pending = pc;
	return rpt_tier_entry_m;
}

/* The coverage file named by RPT_TIER_COVERAGE (`rpt run` sets it; see docs/c-abi.md, "The run-time
 * tier"): one line per entry, `0x<address> <count>`, in address order, after a comment line. A file
 * there already is merged in first (its counts added), so runs add up. It is rpt's file, not the
 * guest's: it is named by the host environment and opened outside the sandbox. */
#define RPT_TIER_COVERAGE_MAX_BYTES (UINT64_C(1) << 22)

static int rpt_hex_digit(char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

static void rpt_tier_merge_coverage(const char *path)
{
	int fd = rpt_host_openat(RPT_HOST_CWD, path, RPT_OPEN_READ);
	if (fd < 0)
		return;
	char *buf = (char *)rpt_host_reserve(RPT_TIER_COVERAGE_MAX_BYTES);
	size_t len = 0;
	while (buf && len < RPT_TIER_COVERAGE_MAX_BYTES) {
		int64_t n = rpt_host_read(fd, buf + len, RPT_TIER_COVERAGE_MAX_BYTES - len);
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	rpt_host_close(fd);
	const char *p = buf, *end = buf ? buf + len : buf;
	while (p < end) {
		const char *line = p;
		while (p < end && *p != '\n')
			p++;
		const char *line_end = p;
		if (p < end)
			p++;
		if (line_end - line < 3 || line[0] != '0' || line[1] != 'x')
			continue;
		uint64_t pc = 0, count = 0;
		const char *q = line + 2;
		int digits = 0;
		for (; q < line_end && rpt_hex_digit(*q) >= 0; q++, digits++)
			pc = pc << 4 | (uint64_t)rpt_hex_digit(*q);
		if (!digits || q >= line_end || *q != ' ')
			continue;
		for (q++; q < line_end && *q >= '0' && *q <= '9'; q++)
			count = count * 10 + (uint64_t)(*q - '0');
		rpt_tier_add_entry(pc, count);
	}
}

static void rpt_tier_write_coverage(const char *path)
{
	rpt_tier_merge_coverage(path);
	struct rpt_tier_entry *sorted =
		(struct rpt_tier_entry *)rpt_host_reserve((rpt_tier_entry_count + 1) * sizeof *sorted);
	if (!sorted)
		return;
	size_t n = 0;
	for (size_t i = 0; rpt_tier_entries && i < RPT_TIER_ENTRY_SLOTS; i++)
		if (rpt_tier_entries[i].pc_plus_one)
			sorted[n++] = rpt_tier_entries[i];
	/* Insertion sort: at most a few thousand entries, once, at exit. */
	for (size_t i = 1; i < n; i++) {
		struct rpt_tier_entry e = sorted[i];
		size_t k = i;
		for (; k > 0 && sorted[k - 1].pc_plus_one > e.pc_plus_one; k--)
			sorted[k] = sorted[k - 1];
		sorted[k] = e;
	}
	int fd = rpt_host_openat(RPT_HOST_CWD, path, RPT_OPEN_WRITE | RPT_OPEN_CREATE | RPT_OPEN_TRUNCATE);
	if (fd < 0) {
		rpt_write_stderr("rpt: cannot write the run-time tier's coverage file (RPT_TIER_COVERAGE)\n");
		return;
	}
	static const char head[] =
		"# rpt run-time tier coverage: guest addresses the tier was entered at, and how often\n";
	rpt_write(fd, head, sizeof head - 1);
	for (size_t i = 0; i < n; i++) {
		char line[64];
		size_t pos = 0;
		rpt_append_hex(line, sizeof line, &pos, sorted[i].pc_plus_one - 1);
		rpt_append(line, sizeof line, &pos, " ");
		rpt_append_dec(line, sizeof line, &pos, sorted[i].count);
		rpt_append(line, sizeof line, &pos, "\n");
		rpt_write(fd, line, pos);
	}
	rpt_host_close(fd);
}

/* At exit: the coverage file, and one line on standard error when the tier ran anything. */
static void rpt_tier_finish(void)
{
	char msg[256];
	size_t pos = 0;
	uint64_t total = rpt_compiled_insns + rpt_tier_executed;
	if (rpt_compiled_insns != 0) {
		/* Counted (count_instructions): the share that ran compiled, in hundredths of a percent,
		 * rounded down so that anything run in the tier shows below 100%. */
		uint64_t part = rpt_compiled_insns, whole = total;
		while (whole > UINT64_MAX / 10000) {
			part >>= 1;
			whole >>= 1;
		}
		uint64_t hundredths = part * 10000 / whole;
		rpt_append(msg, sizeof msg, &pos, "rpt: guest instructions run compiled: ");
		rpt_append_dec(msg, sizeof msg, &pos, rpt_compiled_insns);
		rpt_append(msg, sizeof msg, &pos, " of ");
		rpt_append_dec(msg, sizeof msg, &pos, total);
		rpt_append(msg, sizeof msg, &pos, " (");
		rpt_append_dec(msg, sizeof msg, &pos, hundredths / 100);
		rpt_append(msg, sizeof msg, &pos, hundredths % 100 < 10 ? ".0" : ".");
		rpt_append_dec(msg, sizeof msg, &pos, hundredths % 100);
		rpt_append(msg, sizeof msg, &pos, "%)\n");
		rpt_write(2, msg, pos);
		pos = 0;
	}
	if (rpt_tier_executed == 0)
		return;
	const char *path = rpt_env_value("RPT_TIER_COVERAGE");
	if (path && *path)
		rpt_tier_write_coverage(path);
	rpt_append(msg, sizeof msg, &pos, "rpt: the run-time tier ran ");
	rpt_append_dec(msg, sizeof msg, &pos, rpt_tier_executed);
	rpt_append(msg, sizeof msg, &pos, " guest instructions, entered at ");
	rpt_append_dec(msg, sizeof msg, &pos, rpt_tier_entry_count);
	rpt_append(msg, sizeof msg, &pos, rpt_tier_entry_count == 1 ? " address" : " addresses");
	if (rpt_tier_entries_lost) {
		rpt_append(msg, sizeof msg, &pos, " (and ");
		rpt_append_dec(msg, sizeof msg, &pos, rpt_tier_entries_lost);
		rpt_append(msg, sizeof msg, &pos, " entries not recorded)");
	}
	rpt_append(msg, sizeof msg, &pos, "\n");
	rpt_write(2, msg, pos);
}

void rpt_dispatch(struct cpu *c, uint64_t pc)
{
	rpt_resolve(c, pc)(c);
}

static _Noreturn void rpt_fail_start(const char *what, uint64_t addr)
{
	char msg[200];
	size_t pos = 0;
	rpt_append(msg, sizeof msg, &pos, "rpt: ");
	rpt_append(msg, sizeof msg, &pos, what);
	rpt_append_hex(msg, sizeof msg, &pos, addr);
	rpt_append(msg, sizeof msg, &pos, "\n");
	rpt_write(2, msg, pos);
	rpt_process_exit(125);
}

/* ---------------------------------------------------------------- resume points
 *
 * The live points form a stack through their host frames: `rpt_resume_top` is the innermost.
 * A point leaves the stack when its dispatch returns, or when a resume unwinds past it.
 */
struct rpt_resume_point {
	struct rpt_host_jump_target target;
	struct cpu *c;
	uint64_t pc;
	uint64_t serial;
	/* The guest frame of rpt_dispatch_framed's points; 0 for rpt_dispatch_resumable's. */
	uint64_t frame;
	struct rpt_resume_point *outer;
};

static struct rpt_resume_point *rpt_resume_top;
static uint64_t rpt_resume_serials;

static void rpt_resume_body(void *point)
{
	struct rpt_resume_point *p = point;
	rpt_dispatch(p->c, p->pc);
}

/* Dispatches the point's pc under it, and again each time a resume jumps back. */
static void rpt_run_point(struct rpt_resume_point *point)
{
	rpt_resume_top = point;
	while (rpt_host_call_jumpable(&point->target, rpt_resume_body, point))
		rpt_resume_top = point;
	rpt_resume_top = point->outer;
}

void rpt_dispatch_resumable(struct cpu *c, uint64_t pc, rpt_resume_established established, void *ctx)
{
	struct rpt_resume_point point = { .c = c, .pc = pc, .serial = ++rpt_resume_serials, .outer = rpt_resume_top };
	established(c, point.serial, ctx);
	rpt_run_point(&point);
}

int rpt_resume(struct cpu *c, uint64_t serial)
{
	(void)c;
	for (struct rpt_resume_point *p = rpt_resume_top; p; p = p->outer) {
		if (p->serial == serial) {
			rpt_resume_top = p;
			rpt_host_jump(&p->target);
		}
	}
	return 0;
}

void rpt_dispatch_framed(struct cpu *c, uint64_t pc, uint64_t frame)
{
	struct rpt_resume_point point = {
		.c = c, .pc = pc, .serial = ++rpt_resume_serials, .frame = frame, .outer = rpt_resume_top
	};
	rpt_run_point(&point);
}

int rpt_resume_frame(struct cpu *c, uint64_t frame, uint64_t pc)
{
	(void)c;
	for (struct rpt_resume_point *p = rpt_resume_top; p; p = p->outer) {
		if (p->frame != 0 && p->frame >= frame) {
			p->pc = pc;
			rpt_resume_top = p;
			rpt_host_jump(&p->target);
		}
	}
	return 0;
}

/* The whole guest address space is reserved up front, which a 64-bit host can do for up to 47 bits. */
#if RPT_GUEST_ADDRESS_BITS > 47
#error "rpt reserves the whole guest address space and cannot reserve more than 2^47 bytes"
#endif

/* Zero-initialised storage: the contract's "zeroed struct cpu", without putting it on the stack. */
static struct cpu rpt_cpu;

int main(int argc, char **argv)
{
	uint64_t space = (uint64_t)RPT_GUEST_ADDR_MASK + 1;
#ifdef RPT_GUEST_WINDOW_BYTES
	/* The mirrors near accesses land in when they wrap; the one above also takes the bytes of a
	 * multi-byte access at the top of the space (and at the top of the window). */
	uint64_t below = RPT_GUEST_WINDOW_BYTES, above = RPT_GUEST_WINDOW_BYTES + RPT_MIRROR_SLACK_BYTES;
	rpt_mem = rpt_host_reserve_mirrored(space, below, above);
	if (!rpt_mem)
		rpt_fail_start("cannot map guest memory with its mirrors (memfd_create and mmap); bytes wanted: ",
			       below + space + above);
#else
	rpt_mem = rpt_host_reserve(space + RPT_GUARD_BYTES);
	if (!rpt_mem)
		rpt_fail_start("cannot reserve guest memory; bytes wanted: ", space + RPT_GUARD_BYTES);
#endif
	for (size_t i = 0; i < rpt_segment_count; i++) {
		const struct rpt_segment *s = &rpt_segments[i];
		if (s->addr > RPT_GUEST_ADDR_MASK || s->mem_size > space - s->addr || s->size > s->mem_size)
			rpt_fail_start("an image segment lies outside the guest address space; it starts at ", s->addr);
		if (s->size > 0)
			__builtin_memcpy(rpt_mem + s->addr, s->bytes, (size_t)s->size);
	}
	rpt_index_functions();
	rpt_direct_functions();
	rpt_guest_init(&rpt_cpu, argc, argv);
	rpt_dispatch(&rpt_cpu, rpt_entry_pc);
	rpt_process_exit(rpt_guest_finish(&rpt_cpu));
}

/* ---------------------------------------------------------------- rounding helpers
 *
 * `.rdyn` operations of a guest that nearly always runs in round-to-nearest (PowerPC games) come
 * here with RPT_ROUND_NEAREST; that mode is the host's own, so it is computed directly. Any other
 * operation runs between two rounding-mode switches. The compiler must neither fold
 * it nor move it across the switches: FENV_ACCESS says so where clang supports it, and on
 * every host the operands are read from and the result written to volatile objects, which
 * no compiler moves across a call. Round-to-nearest operations never get here: the emitter
 * writes them as plain C.
 */
#if defined(__x86_64__) || defined(__i386__) || defined(__aarch64__)
#pragma STDC FENV_ACCESS ON
#endif

#define RPT_ROUNDED2(type, mode, a, b, op)                         \
	do {                                                       \
		if ((mode) == RPT_ROUND_NEAREST)                   \
			return (type)((a) op (b));                 \
		int saved_ = rpt_host_get_rounding();              \
		rpt_host_set_rounding(mode);                       \
		volatile type a_ = (a), b_ = (b);                  \
		volatile type result_ = a_ op b_;                  \
		rpt_host_set_rounding(saved_);                     \
		return result_;                                    \
	} while (0)

#define RPT_ROUNDED1(type, from, mode, a, expr)                    \
	do {                                                       \
		if ((mode) == RPT_ROUND_NEAREST) {                 \
			from x_ = (a);                             \
			return (type)(expr);                       \
		}                                                  \
		int saved_ = rpt_host_get_rounding();              \
		rpt_host_set_rounding(mode);                       \
		volatile from x_ = (a);                            \
		volatile type result_ = expr;                      \
		rpt_host_set_rounding(saved_);                     \
		return result_;                                    \
	} while (0)

float rpt_fadd_f32(float a, float b, int mode) { RPT_ROUNDED2(float, mode, a, b, +); }
float rpt_fsub_f32(float a, float b, int mode) { RPT_ROUNDED2(float, mode, a, b, -); }
float rpt_fmul_f32(float a, float b, int mode) { RPT_ROUNDED2(float, mode, a, b, *); }
float rpt_fdiv_f32(float a, float b, int mode) { RPT_ROUNDED2(float, mode, a, b, /); }
double rpt_fadd_f64(double a, double b, int mode) { RPT_ROUNDED2(double, mode, a, b, +); }
double rpt_fsub_f64(double a, double b, int mode) { RPT_ROUNDED2(double, mode, a, b, -); }
double rpt_fmul_f64(double a, double b, int mode) { RPT_ROUNDED2(double, mode, a, b, *); }
double rpt_fdiv_f64(double a, double b, int mode) { RPT_ROUNDED2(double, mode, a, b, /); }

/* Fused multiply-add rounds once, in the mode set around it. __builtin_fma is the host's own
 * instruction on AArch64 and LoongArch64 (both have one in their base ISA, and -fno-math-errno,
 * which every host compiles with, lets clang use it; the freestanding LoongArch64 host has no libm
 * to call), and on x86-64 without -mfma glibc's fma, which is correctly rounded in every mode. */
#define RPT_ROUNDED3(type, mode, a, b, c, fn)                      \
	do {                                                       \
		if ((mode) == RPT_ROUND_NEAREST)                   \
			return fn((a), (b), (c));                  \
		int saved_ = rpt_host_get_rounding();              \
		rpt_host_set_rounding(mode);                       \
		volatile type a_ = (a), b_ = (b), c_ = (c);        \
		volatile type result_ = fn(a_, b_, c_);            \
		rpt_host_set_rounding(saved_);                     \
		return result_;                                    \
	} while (0)

float rpt_fma_f32(float a, float b, float c, int mode) { RPT_ROUNDED3(float, mode, a, b, c, __builtin_fmaf); }
double rpt_fma_f64(double a, double b, double c, int mode) { RPT_ROUNDED3(double, mode, a, b, c, __builtin_fma); }
float rpt_fsqrt_f32(float a, int mode) { RPT_ROUNDED1(float, float, mode, a, __builtin_sqrtf(x_)); }
double rpt_fsqrt_f64(double a, int mode) { RPT_ROUNDED1(double, double, mode, a, __builtin_sqrt(x_)); }
float rpt_fconvert_f64_f32(double a, int mode) { RPT_ROUNDED1(float, double, mode, a, (float)x_); }
float rpt_i64_to_f32(int64_t a, int mode) { RPT_ROUNDED1(float, int64_t, mode, a, (float)x_); }
double rpt_i64_to_f64(int64_t a, int mode) { RPT_ROUNDED1(double, int64_t, mode, a, (double)x_); }
float rpt_u64_to_f32(uint64_t a, int mode) { RPT_ROUNDED1(float, uint64_t, mode, a, (float)x_); }
double rpt_u64_to_f64(uint64_t a, int mode) { RPT_ROUNDED1(double, uint64_t, mode, a, (double)x_); }

/* Float to integer with a chosen rounding, exactly and without touching the FP environment:
 * truncate, then step by one where the discarded fraction says so. The fraction a - t is
 * exact because t is a nearby integer of no larger magnitude. Out-of-range inputs are
 * undefined in the IR; the lifter checks ranges first. */
int64_t rpt_ftosi_f64(double a, int mode)
{
	int64_t t = (int64_t)a;
	double frac = a - (double)t;
	switch (mode) {
	case RPT_ROUND_UP:
		return frac > 0 ? t + 1 : t;
	case RPT_ROUND_DOWN:
		return frac < 0 ? t - 1 : t;
	case RPT_ROUND_NEAREST:
		if (frac > 0.5 || (frac == 0.5 && (t & 1)))
			return t + 1;
		if (frac < -0.5 || (frac == -0.5 && (t & 1)))
			return t - 1;
		return t;
	default:
		return t;
	}
}
