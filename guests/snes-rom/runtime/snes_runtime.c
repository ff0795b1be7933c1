/*
 * snes_runtime.c - the 65816 guest's C part: the CPU's side of the SNES platform (platform/).
 *
 * Lifted code plays the CPU; this file connects it to the console:
 * - Start-up: the cartridge's ROM is rebuilt from the image's segments (the windows the loader
 *   mapped it at, src/loader_rom.rs), the console powered on, and the CPU reset: emulation mode,
 *   8-bit registers, S = $01FF, D = 0, the banks 0, interrupts disabled.
 * - The bus helpers hand the clock over: `c->clock` is the platform's master clock as lifted code
 *   advanced it; before an access the platform catches up to it (running the events that fell
 *   due), after it lifted code takes the platform's clock back (DMA takes time) and its next event.
 * - Interrupts: snes_poll (at guest block starts, when the next event is due) and snes_wait (WAI)
 *   take the pending NMI or IRQ as the CPU does (push PB in native mode, the address of the
 *   instruction to return to, P; set I, clear D, PB = 0; jump through the vector) by running the
 *   handler's compiled variant for the current widths through the function table, with the run-
 *   time tier behind it. The handler's RTI pulls where it returns to; when that is not where the
 *   interrupt came (a handler that rewrote its return address) the program stops with a message
 *   naming both, since lifted code cannot go on elsewhere from inside an instruction.
 *
 * Like every guest C part this file uses the runtime's services, not the C library.
 */
#include "cpu.h"
#include "snes.h"

/* The CPU's vectors in bank 0. */
#define VECTOR_NMI_NATIVE 0xffeau
#define VECTOR_IRQ_NATIVE 0xffeeu
#define VECTOR_NMI_EMULATION 0xfffau
#define VECTOR_IRQ_EMULATION 0xfffeu

/* The bits a function key keeps the widths in (src/decode.rs, Widths::key): what differs from
 * emulation mode's 8-bit registers. */
static uint64_t snes_key(struct cpu *c, uint32_t addr)
{
	uint64_t key = addr & 0xffffffu;
	if (!c->emu)
		key |= UINT64_C(1) << 26;
	if (!c->m8)
		key |= UINT64_C(1) << 25;
	if (!c->x8)
		key |= UINT64_C(1) << 24;
	return key;
}

/* The platform catches up with the time lifted code has counted. */
static void catch_up(struct cpu *c)
{
	if (c->clock > snes_clock.now)
		snes_advance((uint32_t)(c->clock - snes_clock.now));
	else if (snes_clock.now >= snes_clock.next_event)
		snes_run_events();
}

/* Lifted code takes the platform's time back (DMA and HDMA take time) and its next event. */
static void take_time(struct cpu *c)
{
	c->clock = snes_clock.now;
	c->next_event = snes_clock.next_event;
}

uint8_t rpt_helper_bus_read(struct cpu *restrict c, uint32_t addr)
{
	catch_up(c);
	uint8_t v = snes_read(addr & 0xffffffu);
	take_time(c);
	return v;
}

void rpt_helper_bus_write(struct cpu *restrict c, uint32_t addr, uint8_t value)
{
	catch_up(c);
	snes_write(addr & 0xffffffu, value);
	take_time(c);
}

/* Pushes a byte as an interrupt does: within page 1 in emulation mode. */
static void push8(struct cpu *c, uint8_t v)
{
	snes_write(c->s, v);
	c->s = c->emu ? (uint16_t)(0x100u | ((c->s - 1u) & 0xffu)) : (uint16_t)(c->s - 1u);
}

/* P as a hardware interrupt pushes it: in emulation mode bit 5 is 1 and bit 4 (B) is 0. */
static uint8_t status_byte(struct cpu *c)
{
	unsigned x = c->emu ? 0u : c->x8;
	unsigned m = c->emu ? 1u : c->m8;
	return (uint8_t)(c->c | c->z << 1 | c->irq_off << 2 | c->dec << 3 | x << 4 | m << 5 | c->v << 6 | c->n << 7);
}

/* Appends `text` to the message being built in `out`. */
static void put(char *out, size_t cap, size_t *pos, const char *text)
{
	while (*text && *pos + 1 < cap)
		out[(*pos)++] = *text++;
}

/* Appends `$` and `v` in hexadecimal. */
static void put_hex(char *out, size_t cap, size_t *pos, uint64_t v)
{
	char digits[17];
	int n = 0;
	do {
		digits[n++] = "0123456789ABCDEF"[v & 15u];
		v >>= 4;
	} while (v && n < 16);
	put(out, cap, pos, "$");
	while (n > 0 && *pos + 1 < cap)
		out[(*pos)++] = digits[--n];
}

static _Noreturn void fail(const char *what, uint64_t a, uint64_t b)
{
	char msg[200];
	size_t pos = 0;
	put(msg, sizeof msg, &pos, "rpt: snes: ");
	put(msg, sizeof msg, &pos, what);
	put_hex(msg, sizeof msg, &pos, a);
	put(msg, sizeof msg, &pos, " (function key), where the interrupt came from is ");
	put_hex(msg, sizeof msg, &pos, b);
	put(msg, sizeof msg, &pos, "\n");
	rpt_write(2, msg, pos);
	rpt_process_exit(125);
}

/* Takes interrupt `which` before the instruction at the function key `key`. */
static void take_interrupt(struct cpu *c, uint64_t key, int which)
{
	snes_interrupt_taken(which);
	uint32_t addr = (uint32_t)(key & 0xffffffu);
	if (!c->emu)
		push8(c, c->pbr);
	push8(c, (uint8_t)(addr >> 8));
	push8(c, (uint8_t)addr);
	push8(c, status_byte(c));
	c->irq_off = 1;
	c->dec = 0;
	c->pbr = 0;
	uint32_t vector = which == SNES_NMI ? (c->emu ? VECTOR_NMI_EMULATION : VECTOR_NMI_NATIVE)
					    : (c->emu ? VECTOR_IRQ_EMULATION : VECTOR_IRQ_NATIVE);
	uint32_t handler = snes_read(vector) | (uint32_t)snes_read(vector + 1) << 8;
	/* Seven cycles in emulation mode, eight in native (PB pushed), of 8 master clocks each. */
	c->clock = snes_clock.now + (c->emu ? 56u : 64u);
	catch_up(c);
	take_time(c);
	rpt_dispatch(c, snes_key(c, handler));
	/* RTI pulled P and the return address into pc. */
	uint64_t back = snes_key(c, c->pc);
	if (back != key)
		fail("an interrupt handler returned to ", back, key);
}

void rpt_helper_snes_poll(struct cpu *restrict c, uint32_t key)
{
	catch_up(c);
	take_time(c);
	int which = snes_interrupt_pending(c->irq_off);
	if (which)
		take_interrupt(c, key, which);
}

/* WAI: time runs to the next interrupt; an IRQ while I is set wakes the CPU without being taken. */
void rpt_helper_snes_wait(struct cpu *restrict c, uint32_t key)
{
	catch_up(c);
	snes_wait_for_interrupt();
	take_time(c);
	int which = snes_interrupt_pending(c->irq_off);
	if (which)
		take_interrupt(c, key, which);
}

/* The ROM as the cartridge holds it, rebuilt from the segments the loader mapped it into: LoROM's
 * 32 KiB banks are all in $80-$FF:8000, HiROM's 64 KiB ones in $C0-$FF, ExHiROM's upper part in
 * $40-$7D. */
static const uint8_t *rebuild_rom(uint32_t *size, int *mapping)
{
	int hirom = 0, exhirom = 0;
	for (size_t i = 0; i < rpt_segment_count; i++) {
		uint64_t a = rpt_segments[i].addr;
		if (a == 0xc00000u)
			hirom = 1;
		if (a == 0x400000u && rpt_segments[i].flags & RPT_SEGMENT_EXECUTE)
			exhirom = 1;
	}
	*mapping = exhirom ? SNES_EXHIROM : hirom ? SNES_HIROM : SNES_LOROM;
	uint32_t total = 0;
	for (size_t i = 0; i < rpt_segment_count; i++) {
		const struct rpt_segment *s = &rpt_segments[i];
		uint32_t bank = (uint32_t)(s->addr >> 16), low = (uint32_t)(s->addr & 0xffffu);
		int counts = *mapping == SNES_LOROM ? bank >= 0x80 && low == 0x8000
						    : (bank >= 0xc0 || (exhirom && bank >= 0x40 && bank < 0x7e)) && low == 0;
		if (counts)
			total += (uint32_t)s->size;
	}
	static uint8_t rom[0x800000]; /* the largest ROM a mapping holds (ExHiROM, under 8 MiB) */
	uint32_t offset = 0;
	for (size_t i = 0; i < rpt_segment_count; i++) {
		const struct rpt_segment *s = &rpt_segments[i];
		uint32_t bank = (uint32_t)(s->addr >> 16), low = (uint32_t)(s->addr & 0xffffu);
		if (*mapping == SNES_LOROM && bank >= 0x80 && low == 0x8000)
			offset = (bank - 0x80u) * 0x8000u;
		else if (*mapping != SNES_LOROM && bank >= 0xc0 && low == 0)
			offset = (bank - 0xc0u) * 0x10000u;
		else if (*mapping == SNES_EXHIROM && bank >= 0x40 && bank < 0x7e && low == 0)
			offset = 0x400000u + (bank - 0x40u) * 0x10000u;
		else
			continue;
		__builtin_memcpy(rom + offset, s->bytes, (size_t)s->size);
	}
	*size = total;
	return rom;
}

void rpt_guest_init(struct cpu *c, int argc, char **argv)
{
	(void)argc;
	(void)argv;
	uint32_t size;
	int mapping;
	const uint8_t *rom = rebuild_rom(&size, &mapping);
	/* The SRAM size byte of the internal header, at $00:FFD8 in every mapping. */
	uint8_t sram_code = rpt_mem[0xffd8];
	uint32_t sram = sram_code >= 1 && sram_code <= 9 ? 1024u << sram_code : 0u;
	snes_power(rom, size, mapping, sram);
	c->emu = 1;
	c->m8 = 1;
	c->x8 = 1;
	c->s = 0x1ff;
	c->d = 0;
	c->dbr = 0;
	c->pbr = 0;
	c->irq_off = 1;
	c->dec = 0;
	/* RESET takes as long as an interrupt. */
	c->clock = 56;
	catch_up(c);
	take_time(c);
}

/* A reset handler that returns (it has nowhere to return to) ends the program. */
int rpt_guest_finish(struct cpu *c)
{
	(void)c;
	return 0;
}

uint64_t rpt_guest_caller(struct cpu *c)
{
	return c->pc;
}

/* STP stops the clock for good: the program ends there. Other exits the runtime reports. */
int rpt_guest_on_exit(struct cpu *c, uint64_t pc, int reason)
{
	(void)c;
	(void)pc;
	if (reason == RPT_EXIT_HALT)
		rpt_process_exit(0);
	return 0;
}
