/*
 * rpt_runtime.h - the C runtime shared by every guest (see docs/c-abi.md).
 *
 * Included by the generated cpu.h after it defines RPT_GUEST_ADDRESS_BITS and
 * RPT_GUEST_BIG_ENDIAN, so everything here can depend on the guest's memory model.
 * Plain C11 plus clang/GCC builtins; no libc header is needed by anything in this file,
 * so a freestanding host only has to supply the host primitives of rpt_host.h. Guest C parts
 * call the services declared here (rpt_write, rpt_open, ...), never the primitives.
 */
#ifndef RPT_RUNTIME_H
#define RPT_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#include "rpt_host.h"

#ifndef RPT_GUEST_ADDRESS_BITS
#error "include cpu.h, which defines RPT_GUEST_ADDRESS_BITS before including rpt_runtime.h"
#endif

/* Guest addresses are masked to the guest's width, so every access lands in the reservation. */
#if RPT_GUEST_ADDRESS_BITS >= 64
#define RPT_GUEST_ADDR_MASK UINT64_MAX
#else
#define RPT_GUEST_ADDR_MASK ((UINT64_C(1) << RPT_GUEST_ADDRESS_BITS) - 1)
#endif

/* Near accesses (docs/c-abi.md, "Guest memory"): for a guest of 18 to 32 address bits the runtime
 * maps the last quarter of the space again just below it and the first quarter again just above
 * it, so an address written as base + displacement, the base a zero-extended guest word and the
 * displacement a constant within a quarter of the space either way, needs no mask: where the sum
 * wraps in the guest, it lands in a mirror of the byte the guest means. */
#if RPT_GUEST_ADDRESS_BITS >= 18 && RPT_GUEST_ADDRESS_BITS <= 32
#define RPT_GUEST_WINDOW_BYTES (UINT64_C(1) << (RPT_GUEST_ADDRESS_BITS - 2))
#endif

struct cpu;

/* Two singles side by side (PowerPC paired singles); ps0 is the high half of its bit pattern. */
struct rpt_v2f32 {
	float ps0, ps1;
};

/* Every lifted function and every extern has this type. */
typedef void (*rpt_fn)(struct cpu *restrict c);

/* With the memarg pass, lifted code calls each other with the memory base as a second argument. */
typedef void (*rpt_fn_m)(struct cpu *restrict c, uint8_t *mb);

/* One row of the function table (functab.c), sorted by pc. `fn_m` is the memarg entry (the
 * function itself, or a bridge to an extern or override), NULL in generations without memarg. */
struct rpt_function {
	uint64_t pc;
	rpt_fn fn;
	rpt_fn_m fn_m;
	/* Whether the direct table holds fn_m: indirect calls that find it there hand over only
	 * what the program's light functions use (framework/emit-c/src/state_use.rs). */
	int direct;
};

/* Segment access rights, as in rpt_api::SegmentFlags. */
#define RPT_SEGMENT_READ 1u
#define RPT_SEGMENT_WRITE 2u
#define RPT_SEGMENT_EXECUTE 4u

/* One segment of the guest image (image.c); bytes past `size` up to `mem_size` are zero. */
struct rpt_segment {
	const char *name;
	uint64_t addr;
	uint64_t mem_size;
	uint64_t size;
	const uint8_t *bytes;
	uint32_t flags;
};

/* Written by emit-c. */
extern const struct rpt_function rpt_function_table[];
extern const size_t rpt_function_count;
extern const uint64_t rpt_entry_pc;
extern const struct rpt_segment rpt_segments[];
extern const size_t rpt_segment_count;

/* A place of code rpt could not lift (generated faults.c, in address order): what is wrong there. */
struct rpt_fault_site {
	uint64_t pc;
	const char *what;
};

extern const struct rpt_fault_site rpt_fault_sites[];
extern const size_t rpt_fault_site_count;

/* The guest addresses calls return to (generated faults.c, in order): a fault's report takes the
 * words of the guest's stack that are among them for its callers. */
extern const uint64_t rpt_return_sites[];
extern const size_t rpt_return_site_count;

/* May be defined by the guest's C part: up to `max` words that may hold return addresses, the
 * innermost first (x86: the stack from esp up; PowerPC: lr, then the saved lr of each frame on the
 * back chain), so a fault's report can name the callers. Without it (a weak default) there are none. */
size_t rpt_guest_return_candidates(struct cpu *c, uint64_t *out, size_t max);

/* The process's exit status when the guest reaches code rpt could not lift (a guest fault), apart
 * from every other exit to the runtime (125). */
#define RPT_STATUS_GUEST_FAULT 123

/* The process's exit status when the guest calls an import the platform does not implement. */
#define RPT_STATUS_MISSING_IMPORT 122

/* The stub of an import the platform lacks (generated imports.c): reports `name` (`module!name`)
 * and the guest address it was called from, and ends the process. */
_Noreturn void rpt_missing_import(struct cpu *c, const char *name);
/* A call of an import the recipe stubs (`import_stubs`): reported on stderr the first time only. */
void rpt_stubbed_import(struct cpu *c, const char *name, int *reported);
/* Defined by the guest's C part when a recipe stubs an import: the stub returns `value` to the
 * caller and pops `pops` bytes of arguments besides the return address, as the guest's calling
 * convention does (x86: eax and edx), and leaves `code` for the platform's last-error state. */
void rpt_guest_stub_return(struct cpu *c, uint64_t value, uint32_t pops);
void rpt_guest_stub_error(struct cpu *c, uint32_t code);

/* Defined by the guest's C part: the guest address a platform function was called from, as the
 * guest's calling convention leaves it on entry (x86: the return address at [esp]). */
uint64_t rpt_guest_caller(struct cpu *c);

/* The host address of guest address 0; set once by main before any guest code runs. */
extern uint8_t *rpt_mem;

/* Exit reasons, numbered in the order of rpt_ir::ExitReason. */
enum {
	RPT_EXIT_UNLIFTED = 0,
	RPT_EXIT_SYSCALL = 1,
	RPT_EXIT_HALT = 2,
	RPT_EXIT_YIELD = 3,
	RPT_EXIT_DIVIDE_ERROR = 4,
	RPT_EXIT_INVALID_OPCODE = 5,
	RPT_EXIT_UNLIFTABLE = 6
};

/* The run-time tier (generated tier.c; rpt_api::tier; docs/c-abi.md, "The run-time tier"): guest
 * code no lifted function holds, one instruction at a time. Each instruction is a row naming its
 * form (a C function written by the same emitter as lifted code) and where its constants start
 * in rpt_tier_params. A form runs one instruction on `struct cpu` and answers where to go on:
 * a guest address, or RPT_TIER_RETURN when the instruction returned to the caller. */
#define RPT_TIER_RETURN UINT64_MAX
typedef uint64_t (*rpt_tier_form)(struct cpu *restrict c, uint8_t *mb, const uint64_t *p);
struct rpt_tier_insn {
	uint64_t pc;
	uint32_t form;
	uint32_t params;
};
extern const rpt_tier_form rpt_tier_forms[];
extern const struct rpt_tier_insn rpt_tier_insns[];
extern const size_t rpt_tier_insn_count;
extern const uint64_t rpt_tier_params[];

/* Guest instructions run compiled, counted only when the recipe's count_instructions is on. */
extern uint64_t rpt_compiled_insns;

/* Runs the guest from `pc` until it returns to the caller of the code there: the compiled
 * function at `pc` if there is one, else the tier's instructions, calling compiled functions
 * wherever control reaches one (a tail jump into one ends the run when it returns). An address
 * with neither stops the program (exit unlifted). */
void rpt_tier_run(struct cpu *c, uint8_t *mb, uint64_t pc);

/* Dispatch and exits (rpt_runtime.c). */
rpt_fn rpt_lookup(uint64_t pc);
rpt_fn rpt_resolve(struct cpu *c, uint64_t pc);
rpt_fn_m rpt_resolve_m(struct cpu *c, uint64_t pc);

/* The direct tables behind indirect calls with MEMARG: the `_m` entry of the function at guest
 * address `base + i` in `all[i]` (NULL where none starts), for `count` slots (the whole guest
 * space, or a window from the first function up: see below), and in `slots[i]` only for the functions whose
 * `direct` is set (the same table when every function's is); no slots without MEMARG. Any
 * address outside them, or on a NULL slot, goes to rpt_resolve_m. A slot per byte, for every
 * guest: a PowerPC table four times the size of one slot per word costs less than the shift
 * (a variable rotate, which refuses addresses between two slots) on every indirect call. One
 * hidden object, so that generated code reaches each field with one PC-relative load (an extern
 * symbol of default visibility costs a second load, through the GOT, in a position-independent
 * executable). */
struct rpt_direct_table {
	rpt_fn_m *slots;
	rpt_fn_m *all;
	uint64_t base;
	uint64_t count;
};
extern struct rpt_direct_table rpt_direct __attribute__((visibility("hidden")));

/* A guest of at most 32 address bits gets a slot for every address (2^32 slots, 32 GiB of address
 * space per table, reserved lazily like the rest): base and count are then constants, and an
 * indirect call of a 32-bit value needs no bounds check at all, since the compiler folds it.
 * Wider guests keep the window from the first function up. */
#if RPT_GUEST_ADDRESS_BITS <= 32
#define RPT_DIRECT_WHOLE_SPACE 1
#define RPT_DIRECT_BASE UINT64_C(0)
#define RPT_DIRECT_COUNT (UINT64_C(1) << 32)
#else
#define RPT_DIRECT_WHOLE_SPACE 0
#define RPT_DIRECT_BASE (rpt_direct.base)
#define RPT_DIRECT_COUNT (rpt_direct.count)
#endif

/* The slot of `pc` in the direct tables, RPT_DIRECT_COUNT or more when it has none. */
static inline uint64_t rpt_direct_slot(uint64_t pc)
{
	return pc - RPT_DIRECT_BASE;
}

/* The `direct` function at `pc`, or NULL: one load (and a compare for guests wider than 32 bits). */
static inline rpt_fn_m rpt_direct_m(uint64_t pc)
{
	uint64_t slot = rpt_direct_slot(pc);
	if (__builtin_expect(slot < RPT_DIRECT_COUNT, 1))
		return rpt_direct.slots[slot];
	return 0;
}

/* rpt_resolve_m with the table of every function inline. */
static inline rpt_fn_m rpt_resolve_m_fast(struct cpu *c, uint64_t pc)
{
	uint64_t slot = rpt_direct_slot(pc);
	if (__builtin_expect(slot < RPT_DIRECT_COUNT, 1)) {
		rpt_fn_m fn = rpt_direct.all[slot];
		if (__builtin_expect(fn != 0, 1))
			return fn;
	}
	return rpt_resolve_m(c, pc);
}
void rpt_dispatch(struct cpu *c, uint64_t pc);
_Noreturn void rpt_exit(struct cpu *c, uint64_t pc, int reason);
_Noreturn void rpt_unreachable(struct cpu *c, uint64_t function);

/* ---- Services: what guest C parts use instead of libc, so they build on every host
 * (rpt_runtime.c, on the host primitives of rpt_host.h; docs/c-abi.md, "Host primitives and services"). */

/* Ends the process with `status`. */
_Noreturn void rpt_process_exit(int status);
/* Writes all `len` bytes to host file descriptor `fd` (1 stdout, 2 stderr, or one rpt_open gave),
 * retrying short writes; returns how many were written, fewer only if the host refused the rest. */
size_t rpt_write(int fd, const void *buf, size_t len);
/* Reads up to `len` bytes from host file descriptor `fd`: the count (0 at end of file), or -1 on error. */
int64_t rpt_read(int fd, void *buf, size_t len);
/* Writes a NUL-terminated message to standard error. */
void rpt_write_stderr(const char *text);
/* Whether `fd` is a terminal (platforms buffer output to files and pipes, not to terminals). */
int rpt_is_terminal(int fd);

/* The sandbox: every guest file lives beneath one host directory, `$RPT_SANDBOX` at run time
 * (the current directory when unset). Paths given here are relative to it, `/`-separated, with
 * no empty, `.` or `..` component; no symbolic link is followed, so nothing outside is reachable.
 * rpt_open takes RPT_OPEN_READ, _WRITE, _CREATE, _TRUNCATE, _APPEND and _EXCLUSIVE (rpt_host.h)
 * and opens regular files only; rpt_seek takes RPT_SEEK_SET, _CUR or _END and returns the new
 * position. Each returns -1 on failure and rpt_last_error() then says why. */
int rpt_open(const char *path, unsigned flags);
int rpt_close(int fd);
int64_t rpt_seek(int fd, int64_t offset, int whence);
int rpt_remove(const char *path);
int rpt_rename(const char *from, const char *to);
/* Why the last failing service failed: an RPT_HOST_ERROR_* (rpt_host.h). */
int rpt_last_error(void);

/* Clocks: nanoseconds since an arbitrary start (never going back), and since 1970-01-01 UTC. */
uint64_t rpt_monotonic_ns(void);
int64_t rpt_realtime_ns(void);
void rpt_sleep_ns(uint64_t ns);
/* The host environment's i-th `NAME=value` string, NULL past the end. */
const char *rpt_env(size_t i);

/* ---- Resume points: non-local jumps across lifted code (rpt_runtime.c; docs/c-abi.md).
 * rpt_dispatch_resumable calls rpt_dispatch(c, pc) with a resume point established in its own
 * host frame; `established(c, serial, ctx)` runs first and learns the point's serial number.
 * While the dispatched code runs, rpt_resume(c, serial) unwinds every host frame above the point
 * and dispatches `pc` again (the caller has set the guest state it wants first). When the
 * dispatched function returns, the point is gone: rpt_resume then returns 0 and the caller
 * reports the dangling jump. Serials are never reused. */
typedef void (*rpt_resume_established)(struct cpu *c, uint64_t serial, void *ctx);
void rpt_dispatch_resumable(struct cpu *c, uint64_t pc, rpt_resume_established established, void *ctx);
int rpt_resume(struct cpu *c, uint64_t serial);
/* Points found by the guest's stack instead of a serial (C++ exception landing pads; the guest stack
 * grows down). rpt_dispatch_framed is rpt_dispatch_resumable for a function whose frame lies below
 * the guest address `frame`; rpt_resume_frame(c, frame, pc) unwinds to the innermost such point whose
 * frame is at or above `frame` and dispatches `pc` there instead (that point then dispatches `pc`
 * again on a later resume until another rpt_resume_frame changes it). It returns 0 when there is none. */
void rpt_dispatch_framed(struct cpu *c, uint64_t pc, uint64_t frame);
int rpt_resume_frame(struct cpu *c, uint64_t frame, uint64_t pc);

/* Supplied by the guest's C part. */
void rpt_guest_init(struct cpu *c, int argc, char **argv);
int rpt_guest_finish(struct cpu *c);
int rpt_guest_on_exit(struct cpu *c, uint64_t pc, int reason);
/* Only needed when lifted code uses `.rdyn` rounding: the guest's current mode as RPT_ROUND_*. */
int rpt_guest_rounding(struct cpu *c);
/* Only needed when lifted code uses address spaces other than `ram`; values are little-endian. */
uint64_t rpt_load_space(struct cpu *c, unsigned space, uint64_t addr, unsigned size);
void rpt_store_space(struct cpu *c, unsigned space, uint64_t addr, unsigned size, uint64_t value);

/* Float operations with a rounding other than the host's default nearest-even (rpt_runtime.c). */
float rpt_fadd_f32(float a, float b, int mode);
float rpt_fsub_f32(float a, float b, int mode);
float rpt_fmul_f32(float a, float b, int mode);
float rpt_fdiv_f32(float a, float b, int mode);
float rpt_fsqrt_f32(float a, int mode);
double rpt_fadd_f64(double a, double b, int mode);
double rpt_fsub_f64(double a, double b, int mode);
double rpt_fmul_f64(double a, double b, int mode);
double rpt_fdiv_f64(double a, double b, int mode);
double rpt_fsqrt_f64(double a, int mode);
float rpt_fma_f32(float a, float b, float c, int mode);
double rpt_fma_f64(double a, double b, double c, int mode);
float rpt_fconvert_f64_f32(double a, int mode);
float rpt_i64_to_f32(int64_t a, int mode);
double rpt_i64_to_f64(int64_t a, int mode);
float rpt_u64_to_f32(uint64_t a, int mode);
double rpt_u64_to_f64(uint64_t a, int mode);
int64_t rpt_ftosi_f64(double a, int mode);

/* Bit patterns of floats; memcpy is the one aliasing-safe spelling, and compilers fold it. */
#define RPT_BIT_CAST(name, from, to)                  \
	static inline to name(from x)                 \
	{                                             \
		to y;                                 \
		__builtin_memcpy(&y, &x, sizeof y);   \
		return y;                             \
	}
RPT_BIT_CAST(rpt_f32_bits, float, uint32_t)
RPT_BIT_CAST(rpt_f32_from_bits, uint32_t, float)
RPT_BIT_CAST(rpt_f64_bits, double, uint64_t)
RPT_BIT_CAST(rpt_f64_from_bits, uint64_t, double)
#undef RPT_BIT_CAST

static inline uint64_t rpt_v2f32_bits(struct rpt_v2f32 v)
{
	return ((uint64_t)rpt_f32_bits(v.ps0) << 32) | rpt_f32_bits(v.ps1);
}

static inline struct rpt_v2f32 rpt_v2f32_from_bits(uint64_t u)
{
	struct rpt_v2f32 v = { rpt_f32_from_bits((uint32_t)(u >> 32)), rpt_f32_from_bits((uint32_t)u) };
	return v;
}

/* f80 is the host's long double, which is the x87 format only on x86 hosts. */
#if defined(__x86_64__) || defined(__i386__)
static inline long double rpt_f80_from_bits(uint64_t mantissa, uint16_t sign_exponent)
{
	long double f = 0;
	__builtin_memcpy(&f, &mantissa, 8);
	__builtin_memcpy((uint8_t *)&f + 8, &sign_exponent, 2);
	return f;
}
#endif

/* Guest memory. The `_at` forms take the memory base explicitly: lifted functions keep
 * rpt_mem in a local because a store through a uint8_t pointer may alias the global and
 * would otherwise force a reload after every store. */
static inline uint8_t *rpt_guest_ptr(uint8_t *mb, uint64_t addr)
{
	return mb + (addr & RPT_GUEST_ADDR_MASK);
}

#ifdef RPT_INTERPRETER
/* A guest crate compiles its helper C into itself for rpt's IR interpreter (its build script and
 * interpreter cpu.h, docs/c-abi.md "Helpers in the interpreter"): there, guest memory is the
 * interpreter's, and every access below goes to these two functions of the crate's Rust side,
 * which read and write it byte by byte, each byte's address masked to the guest's width as the
 * interpreter's own loads do. `mb` is not used. Each guest's cpu.h renames the pair
 * (`#define rpt_interpreter_read rpt_ppc_interpreter_read`), so guests linked into one rpt
 * binary export different symbols. */
void rpt_interpreter_read(uint64_t addr, void *to, size_t size);
void rpt_interpreter_write(uint64_t addr, const void *from, size_t size);
#define RPT_GUEST_READ(mb, addr, to, size) ((void)(mb), rpt_interpreter_read((addr), (to), (size)))
#define RPT_GUEST_WRITE(mb, addr, from, size) ((void)(mb), rpt_interpreter_write((addr), (from), (size)))
#define RPT_GLOBAL_BASE ((uint8_t *)0)
#else
#define RPT_GUEST_READ(mb, addr, to, size) __builtin_memcpy((to), rpt_guest_ptr((mb), (addr)), (size))
#define RPT_GUEST_WRITE(mb, addr, from, size) __builtin_memcpy(rpt_guest_ptr((mb), (addr)), (from), (size))
#define RPT_GLOBAL_BASE rpt_mem
#endif

/* A near access (RPT_GUEST_WINDOW_BYTES above) is an `_at` access at offset 0 from the host address
 * of its first byte; without mirrors (in the interpreter, or a guest of another width) it is an
 * ordinary access at the masked sum. */
#if defined(RPT_GUEST_WINDOW_BYTES) && !defined(RPT_INTERPRETER)
#define RPT_NEAR_BASE(mb, base, disp) ((mb) + (base) + (disp))
#define RPT_NEAR_OFFSET(base, disp) 0
#else
#define RPT_NEAR_BASE(mb, base, disp) (mb)
#define RPT_NEAR_OFFSET(base, disp) ((base) + (uint64_t)(disp))
#endif

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define RPT_FROM_LE(bits, v) (v)
#define RPT_FROM_BE(bits, v) __builtin_bswap##bits(v)
#else
#define RPT_FROM_LE(bits, v) __builtin_bswap##bits(v)
#define RPT_FROM_BE(bits, v) (v)
#endif

/* One byte has no byte order; both spellings exist so the emitter need not special-case it. */
static inline uint8_t rpt_load_u8_le_at(uint8_t *mb, uint64_t addr) { uint8_t v; RPT_GUEST_READ(mb, addr, &v, 1); return v; }
static inline uint8_t rpt_load_u8_be_at(uint8_t *mb, uint64_t addr) { uint8_t v; RPT_GUEST_READ(mb, addr, &v, 1); return v; }
static inline void rpt_store_u8_le_at(uint8_t *mb, uint64_t addr, uint8_t v) { RPT_GUEST_WRITE(mb, addr, &v, 1); }
static inline void rpt_store_u8_be_at(uint8_t *mb, uint64_t addr, uint8_t v) { RPT_GUEST_WRITE(mb, addr, &v, 1); }

#define RPT_INT_ACCESS(bits, order, FIX)                                                                   \
	static inline uint##bits##_t rpt_load_u##bits##_##order##_at(uint8_t *mb, uint64_t addr)          \
	{                                                                                                  \
		uint##bits##_t v;                                                                          \
		RPT_GUEST_READ(mb, addr, &v, sizeof v);                                                    \
		return FIX(bits, v);                                                                       \
	}                                                                                                  \
	static inline void rpt_store_u##bits##_##order##_at(uint8_t *mb, uint64_t addr, uint##bits##_t v) \
	{                                                                                                  \
		v = FIX(bits, v);                                                                          \
		RPT_GUEST_WRITE(mb, addr, &v, sizeof v);                                                   \
	}

RPT_INT_ACCESS(16, le, RPT_FROM_LE)
RPT_INT_ACCESS(16, be, RPT_FROM_BE)
RPT_INT_ACCESS(32, le, RPT_FROM_LE)
RPT_INT_ACCESS(32, be, RPT_FROM_BE)
RPT_INT_ACCESS(64, le, RPT_FROM_LE)
RPT_INT_ACCESS(64, be, RPT_FROM_BE)

#define RPT_FLOAT_ACCESS(ty, name, bits, order)                                                      \
	static inline ty rpt_load_##name##_##order##_at(uint8_t *mb, uint64_t addr)                  \
	{                                                                                            \
		return rpt_##name##_from_bits(rpt_load_u##bits##_##order##_at(mb, addr));            \
	}                                                                                            \
	static inline void rpt_store_##name##_##order##_at(uint8_t *mb, uint64_t addr, ty v)         \
	{                                                                                            \
		rpt_store_u##bits##_##order##_at(mb, addr, rpt_##name##_bits(v));                    \
	}

RPT_FLOAT_ACCESS(float, f32, 32, le)
RPT_FLOAT_ACCESS(float, f32, 32, be)
RPT_FLOAT_ACCESS(double, f64, 64, le)
RPT_FLOAT_ACCESS(double, f64, 64, be)
RPT_FLOAT_ACCESS(struct rpt_v2f32, v2f32, 64, le)
RPT_FLOAT_ACCESS(struct rpt_v2f32, v2f32, 64, be)

#if defined(__x86_64__) || defined(__i386__)
/* Ten bytes: the 64-bit mantissa first, then sign and exponent (little-endian order). */
static inline long double rpt_load_f80_le_at(uint8_t *mb, uint64_t addr)
{
	return rpt_f80_from_bits(rpt_load_u64_le_at(mb, addr), rpt_load_u16_le_at(mb, addr + 8));
}

static inline long double rpt_load_f80_be_at(uint8_t *mb, uint64_t addr)
{
	return rpt_f80_from_bits(rpt_load_u64_be_at(mb, addr + 2), rpt_load_u16_be_at(mb, addr));
}

static inline void rpt_store_f80_le_at(uint8_t *mb, uint64_t addr, long double v)
{
	uint64_t mantissa;
	uint16_t sign_exponent;
	__builtin_memcpy(&mantissa, &v, 8);
	__builtin_memcpy(&sign_exponent, (uint8_t *)&v + 8, 2);
	rpt_store_u64_le_at(mb, addr, mantissa);
	rpt_store_u16_le_at(mb, addr + 8, sign_exponent);
}

static inline void rpt_store_f80_be_at(uint8_t *mb, uint64_t addr, long double v)
{
	uint64_t mantissa;
	uint16_t sign_exponent;
	__builtin_memcpy(&mantissa, &v, 8);
	__builtin_memcpy(&sign_exponent, (uint8_t *)&v + 8, 2);
	rpt_store_u16_be_at(mb, addr, sign_exponent);
	rpt_store_u64_be_at(mb, addr + 2, mantissa);
}
#endif

/* Derived forms of each access: on the global base, for guest C parts (docs/c-abi.md), and near
 * (`_near(mb, base, disp)`), which lifted code uses for a base register plus a constant. */
#define RPT_GLOBAL_ACCESS(ty, name, order)                                                                     \
	static inline ty rpt_load_##name##_##order(uint64_t addr) { return rpt_load_##name##_##order##_at(RPT_GLOBAL_BASE, addr); } \
	static inline void rpt_store_##name##_##order(uint64_t addr, ty v) { rpt_store_##name##_##order##_at(RPT_GLOBAL_BASE, addr, v); } \
	static inline ty rpt_load_##name##_##order##_near(uint8_t *mb, uint64_t base, int64_t disp)            \
	{                                                                                                      \
		return rpt_load_##name##_##order##_at(RPT_NEAR_BASE(mb, base, disp), RPT_NEAR_OFFSET(base, disp)); \
	}                                                                                                      \
	static inline void rpt_store_##name##_##order##_near(uint8_t *mb, uint64_t base, int64_t disp, ty v)   \
	{                                                                                                      \
		rpt_store_##name##_##order##_at(RPT_NEAR_BASE(mb, base, disp), RPT_NEAR_OFFSET(base, disp), v); \
	}

RPT_GLOBAL_ACCESS(uint8_t, u8, le)
RPT_GLOBAL_ACCESS(uint8_t, u8, be)
RPT_GLOBAL_ACCESS(uint16_t, u16, le)
RPT_GLOBAL_ACCESS(uint16_t, u16, be)
RPT_GLOBAL_ACCESS(uint32_t, u32, le)
RPT_GLOBAL_ACCESS(uint32_t, u32, be)
RPT_GLOBAL_ACCESS(uint64_t, u64, le)
RPT_GLOBAL_ACCESS(uint64_t, u64, be)
RPT_GLOBAL_ACCESS(float, f32, le)
RPT_GLOBAL_ACCESS(float, f32, be)
RPT_GLOBAL_ACCESS(double, f64, le)
RPT_GLOBAL_ACCESS(double, f64, be)
RPT_GLOBAL_ACCESS(struct rpt_v2f32, v2f32, le)
RPT_GLOBAL_ACCESS(struct rpt_v2f32, v2f32, be)
#if defined(__x86_64__) || defined(__i386__)
RPT_GLOBAL_ACCESS(long double, f80, le)
RPT_GLOBAL_ACCESS(long double, f80, be)
#endif

#endif /* RPT_RUNTIME_H */
