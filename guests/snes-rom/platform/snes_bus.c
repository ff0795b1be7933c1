/*
 * snes_bus.c - power-on, the memory map of each cartridge mapping, open bus, the CPU's I/O
 * registers ($4016/$4017, $4200-$421F), and the WRAM port $2180-$2183.
 *
 * The bus keeps a table of 4 KiB pages: a page that is plain memory throughout (WRAM, ROM, SRAM
 * of at least 4 KiB) points straight at it, and every other page takes the slow path, which
 * decodes the address byte by byte. Both paths decode with map_address, the one description of
 * the memory map.
 */
#include "snes_internal.h"

struct snes_state snes_st;

/* The platform's copies of the ROM and the save RAM (no allocator: the largest sizes, in BSS). */
static uint8_t rom_copy[SNES_ROM_MAX];
static uint8_t sram_copy[SNES_SRAM_MAX];

/*
 * The power-on contents of WRAM, VRAM, OAM and CGRAM: what the oracle (bsnes v094) starts with,
 * measured (see framework/testkit/src/bsnes.rs, "Power-on memory"). bsnes fills them from its
 * random generator, seeded with time(0), which the oracle's front-end answers with 0: from x = 0,
 * each value is x = (x >> 1) ^ (x odd ? 0 : 0xEDB88320), and a memory takes its low 8 bits. WRAM
 * takes the first 131072 values, one goes to another chip, then VRAM takes 65536, OAM 544 and
 * CGRAM 512, in that order. CGRAM keeps all 8 bits of these, bit 7 of the high bytes included
 * ($2122 writes store it as 0). SRAM starts as zero (the oracle's is not compared).
 * This function is the one place that decides power-on memory.
 */
static void snes_power_fill(void)
{
	uint32_t x = 0;
	uint8_t *const memories[4] = { snes_st.wram, snes_st.vram, snes_st.oam, snes_st.cgram };
	const uint32_t sizes[4] = { SNES_WRAM_SIZE, SNES_VRAM_SIZE, SNES_OAM_SIZE, SNES_CGRAM_SIZE };
	for (int m = 0; m < 4; m++) {
		for (uint32_t i = 0; i < sizes[m]; i++) {
			x = (x >> 1) ^ ((x & 1) ? 0u : 0xedb88320u);
			memories[m][i] = (uint8_t)x;
		}
		/* The value between WRAM and VRAM that bsnes gives another chip. */
		if (m == 0)
			x = (x >> 1) ^ ((x & 1) ? 0u : 0xedb88320u);
	}
	__builtin_memset(snes_st.sram, 0, snes_st.sram_size);
}

/* ---- the memory map */

enum mem_kind { MEM_NONE, MEM_IO, MEM_ROM, MEM_SRAM, MEM_WRAM };

/*
 * Folds an offset into a memory of `size` bytes the way boards wire chips whose total is not a
 * power of two: the offset is taken modulo the next power of two; the part beyond the memory (in
 * the upper half of that power of two) repeats the memory's upper part, which is itself folded
 * the same way. A 3 MiB ROM thus shows its last 1 MiB at both 2-3 MiB and 3-4 MiB.
 */
static uint32_t mirror(uint32_t offset, uint32_t size)
{
	uint32_t base = 0;
	if (size == 0)
		return 0;
	for (;;) {
		uint32_t pow2 = 1;
		while (pow2 < size)
			pow2 <<= 1;
		offset &= pow2 - 1;
		if (offset < size)
			return base + offset;
		base += pow2 >> 1;
		offset -= pow2 >> 1;
		size -= pow2 >> 1;
	}
}

/* The ROM offset that (bank, addr) reaches under the cartridge's mapping, before mirroring. */
static uint32_t rom_offset(unsigned bank, unsigned addr)
{
	switch (snes_st.mapping) {
	case SNES_HIROM:
		return ((uint32_t)(bank & 0x3f) << 16) | addr;
	case SNES_EXHIROM:
		/* Banks $C0-$FF (and $80-$BF) reach the first 4 MiB, $40-$7D (and $00-$3F) the rest. */
		return ((bank & 0x80) ? 0u : 0x400000u) | ((uint32_t)(bank & 0x3f) << 16) | addr;
	default:
		return ((uint32_t)(bank & 0x7f) << 15) | (addr & 0x7fff);
	}
}

/*
 * What a 24-bit address reaches, with the offset into that memory:
 * - banks $7E-$7F: WRAM; banks $00-$3F/$80-$BF (the system banks): $0000-$1FFF the first 8 KiB
 *   of WRAM, $2000-$5FFF I/O (the B-bus at $2100-$21FF, joypads, CPU and DMA registers), $8000-$FFFF ROM;
 * - LoROM: ROM in the upper half of every bank ($8000 bytes each), SRAM in $70-$7D and $F0-$FF
 *   $0000-$7FFF, nothing in the other lower halves of banks $40-$7D/$C0-$FF;
 * - HiROM: ROM in all of banks $40-$7D/$C0-$FF and the upper halves of the system banks, SRAM in
 *   $20-$3F/$A0-$BF $6000-$7FFF ($2000 bytes a bank);
 * - ExHiROM: as HiROM, with banks $C0-$FF and $80-$BF reaching the first 4 MiB of the ROM and
 *   banks $40-$7D and $00-$3F the rest.
 */
static enum mem_kind map_address(uint32_t a, uint32_t *offset)
{
	unsigned bank = (a >> 16) & 0xff, addr = a & 0xffff;
	if (bank == 0x7e || bank == 0x7f) {
		*offset = ((uint32_t)(bank & 1) << 16) | addr;
		return MEM_WRAM;
	}
	if (!(bank & 0x40)) {
		if (addr < 0x2000) {
			*offset = addr;
			return MEM_WRAM;
		}
		if (addr < 0x6000)
			return MEM_IO;
		if (addr < 0x8000) {
			if (snes_st.mapping != SNES_LOROM && (bank & 0x3f) >= 0x20 && snes_st.sram_size) {
				*offset = mirror(((uint32_t)(bank & 0x1f) << 13) | (addr - 0x6000), snes_st.sram_size);
				return MEM_SRAM;
			}
			return MEM_NONE;
		}
	} else if (snes_st.mapping == SNES_LOROM && addr < 0x8000) {
		if ((bank & 0x7f) >= 0x70 && snes_st.sram_size) {
			*offset = mirror(((uint32_t)(bank & 0x0f) << 15) | addr, snes_st.sram_size);
			return MEM_SRAM;
		}
		return MEM_NONE;
	}
	if (!snes_st.rom_size)
		return MEM_NONE;
	*offset = mirror(rom_offset(bank, addr), snes_st.rom_size);
	return MEM_ROM;
}

/* The byte an address reaches in a memory and whether it may be written, or NULL for I/O and unmapped addresses. */
static uint8_t *memory_byte(uint32_t a, enum mem_kind *kind)
{
	uint32_t offset = 0;
	*kind = map_address(a, &offset);
	switch (*kind) {
	case MEM_WRAM: return &snes_st.wram[offset];
	case MEM_SRAM: return &snes_st.sram[offset];
	case MEM_ROM: return &snes_st.rom[offset];
	default: return NULL;
	}
}

/*
 * Makes the page table: a page is direct when it is one memory throughout, in order. ROM and SRAM
 * whose sizes are not multiples of 4 KiB may fold inside a page, so their pages stay slow.
 */
static void build_pages(void)
{
	for (uint32_t page = 0; page < 0x1000; page++) {
		uint32_t first = page << 12, last = first | 0xfff;
		enum mem_kind k_first, k_last;
		uint8_t *p_first = memory_byte(first, &k_first);
		uint8_t *p_last = memory_byte(last, &k_last);
		snes_st.read_page[page] = NULL;
		snes_st.write_page[page] = NULL;
		if (!p_first || k_first != k_last || p_last != p_first + 0xfff)
			continue;
		if (k_first == MEM_ROM && snes_st.rom_size % 0x1000)
			continue;
		if (k_first == MEM_SRAM && snes_st.sram_size % 0x1000)
			continue;
		snes_st.read_page[page] = p_first;
		snes_st.write_page[page] = k_first == MEM_ROM ? NULL : p_first;
	}
}

/* ---- power */

void snes_power(const uint8_t *rom, uint32_t rom_size, int mapping, uint32_t sram_size)
{
	if (rom_size > SNES_ROM_MAX)
		snes_fatal(2, "snes: a %u-byte ROM is larger than the %u bytes the mappings reach", rom_size,
			SNES_ROM_MAX);
	if (sram_size > SNES_SRAM_MAX)
		snes_fatal(2, "snes: %u bytes of SRAM are more than the %u the platform holds", sram_size,
			SNES_SRAM_MAX);
	__builtin_memset(&snes_st, 0, sizeof snes_st);
	snes_st.mapping = mapping;
	snes_st.rom_size = rom_size;
	snes_st.sram_size = sram_size;
	snes_st.rom = rom_copy;
	snes_st.sram = sram_copy;
	if (rom_size && rom != rom_copy)
		__builtin_memcpy(rom_copy, rom, rom_size);
	snes_power_fill();
	build_pages();

	snes_apu_reset();

	/* CPU I/O registers at power-on. */
	snes_st.wrio = 0xff;
	snes_st.wrmpya = 0xff;
	snes_st.wrmpyb = 0xff;
	snes_st.wrdiv = 0xffff;
	snes_st.wrdivb = 0xff;
	snes_st.htime = 0x1ff;
	snes_st.vtime = 0x1ff;
	for (int i = 0; i < 8; i++) {
		struct snes_dma_channel *c = &snes_st.dma[i];
		c->params = c->bbad = c->a1b = c->dasb = c->ntrl = c->unused = 0xff;
		c->a1t = c->das = c->a2a = 0xffff;
	}

	snes_ppu_reset();
	snes_timing_reset();
	snes_frame_configure();
}

/* ---- regions */

uint8_t *snes_memory(enum snes_region region, uint32_t *size)
{
	uint8_t *p;
	uint32_t n;
	switch (region) {
	case SNES_REGION_WRAM: p = snes_st.wram; n = SNES_WRAM_SIZE; break;
	case SNES_REGION_VRAM: p = snes_st.vram; n = SNES_VRAM_SIZE; break;
	case SNES_REGION_CGRAM: p = snes_st.cgram; n = SNES_CGRAM_SIZE; break;
	case SNES_REGION_OAM: p = snes_st.oam; n = SNES_OAM_SIZE; break;
	case SNES_REGION_SRAM: p = snes_st.sram; n = snes_st.sram_size; break;
	case SNES_REGION_ROM: p = snes_st.rom; n = snes_st.rom_size; break;
	default: p = NULL; n = 0; break;
	}
	if (size)
		*size = n;
	return p;
}

/* ---- joypads */

void snes_set_joypad(unsigned pad, uint16_t buttons)
{
	if (pad < 2)
		snes_st.joy_buttons[pad] = buttons;
}

/*
 * One serial bit from a joypad ($4016/$4017 bit 0): while the latch ($4016 bit 0) is held the
 * pad gives B again and again; after it, B, Y, Select, Start, Up, Down, Left, Right, A, X, L, R,
 * four 0 bits (a standard pad's signature), then 1s. Joypad 2 is a pad with nothing pressed.
 */
static uint8_t joypad_serial_bit(unsigned pad)
{
	unsigned pos = snes_st.joy_shift_pos[pad];
	if (snes_st.joy_strobe)
		return (snes_st.joy_buttons[pad] >> 15) & 1;
	if (pos >= 16)
		return 1;
	snes_st.joy_shift_pos[pad] = (uint8_t)(pos + 1);
	return (snes_st.joy_buttons[pad] >> (15 - pos)) & 1;
}

/* ---- CPU I/O registers */

static uint8_t cpu_io_read(unsigned addr)
{
	uint8_t mdr = snes_st.mdr, v;
	switch (addr) {
	case 0x4016:
		return (uint8_t)((mdr & 0xfc) | joypad_serial_bit(0));
	case 0x4017:
		return (uint8_t)((mdr & 0xe0) | 0x1c | joypad_serial_bit(1));
	case 0x4210: /* RDNMI: the vblank NMI flag, cleared by reading; CPU version 2 */
		v = (uint8_t)((snes_st.rdnmi << 7) | (mdr & 0x70) | 0x02);
		snes_st.rdnmi = 0;
		return v;
	case 0x4211: /* TIMEUP: the H/V IRQ flag, cleared by reading (which releases the IRQ line) */
		v = (uint8_t)((snes_st.timeup << 7) | (mdr & 0x7f));
		snes_st.timeup = 0;
		return v;
	case 0x4212: /* HVBJOY */
		v = (uint8_t)((snes_st.in_vblank << 7) | (snes_in_hblank() << 6) | (mdr & 0x3e));
		if (snes_clock.now < snes_st.autojoy_end)
			v |= 1;
		return v;
	case 0x4213: /* RDIO: nothing drives the I/O port, so it reads back what $4201 holds */
		return snes_st.wrio;
	case 0x4214: return (uint8_t)snes_st.rddiv;
	case 0x4215: return (uint8_t)(snes_st.rddiv >> 8);
	case 0x4216: return (uint8_t)snes_st.rdmpy;
	case 0x4217: return (uint8_t)(snes_st.rdmpy >> 8);
	case 0x4218: case 0x4219: case 0x421a: case 0x421b:
	case 0x421c: case 0x421d: case 0x421e: case 0x421f: {
		uint16_t pad = snes_st.joy_auto[(addr - 0x4218) >> 1];
		return (uint8_t)((addr & 1) ? pad >> 8 : pad);
	}
	default:
		break;
	}
	if (addr >= 0x4300 && addr < 0x4380)
		return snes_dma_reg_read((uint16_t)(addr - 0x4300));
	return mdr;
}

static void cpu_io_write(unsigned addr, uint8_t value)
{
	switch (addr) {
	case 0x4016:
		/* Holding the latch reloads the pads' shift registers. */
		snes_st.joy_strobe = value & 1;
		if (value & 1)
			snes_st.joy_shift_pos[0] = snes_st.joy_shift_pos[1] = 0;
		return;
	case 0x4200: {
		uint8_t old = snes_st.nmitimen;
		snes_st.nmitimen = value;
		/* With both H and V IRQ off, the IRQ line is released. */
		if (!(value & 0x30))
			snes_st.timeup = 0;
		snes_timing_nmi_enable_changed(old);
		snes_timing_irq_changed();
		return;
	}
	case 0x4201:
		/* A 1 -> 0 edge of bit 7 latches the H/V counters, as reading $2137 does. */
		if ((snes_st.wrio & 0x80) && !(value & 0x80))
			snes_ppu_latch_counters();
		snes_st.wrio = value;
		return;
	case 0x4202: snes_st.wrmpya = value; return;
	case 0x4203:
		/* The product is ready at once (the console needs 8 CPU cycles). */
		snes_st.wrmpyb = value;
		snes_st.rdmpy = (uint16_t)(snes_st.wrmpya * value);
		return;
	case 0x4204: snes_st.wrdiv = (uint16_t)((snes_st.wrdiv & 0xff00) | value); return;
	case 0x4205: snes_st.wrdiv = (uint16_t)((snes_st.wrdiv & 0x00ff) | (value << 8)); return;
	case 0x4206:
		/* The quotient and remainder are ready at once (the console needs 16 CPU cycles). */
		snes_st.wrdivb = value;
		if (value == 0) {
			snes_st.rddiv = 0xffff;
			snes_st.rdmpy = snes_st.wrdiv;
		} else {
			snes_st.rddiv = (uint16_t)(snes_st.wrdiv / value);
			snes_st.rdmpy = (uint16_t)(snes_st.wrdiv % value);
		}
		return;
	case 0x4207: snes_st.htime = (uint16_t)((snes_st.htime & 0x100) | value); snes_timing_irq_changed(); return;
	case 0x4208: snes_st.htime = (uint16_t)((snes_st.htime & 0xff) | ((value & 1) << 8)); snes_timing_irq_changed(); return;
	case 0x4209: snes_st.vtime = (uint16_t)((snes_st.vtime & 0x100) | value); snes_timing_irq_changed(); return;
	case 0x420a: snes_st.vtime = (uint16_t)((snes_st.vtime & 0xff) | ((value & 1) << 8)); snes_timing_irq_changed(); return;
	case 0x420b: snes_dma_run(value); return;
	case 0x420c: snes_st.hdmaen = value; return;
	case 0x420d: snes_st.memsel = value & 1; return;
	default:
		break;
	}
	if (addr >= 0x4300 && addr < 0x4380)
		snes_dma_reg_write((uint16_t)(addr - 0x4300), value);
}

/* ---- the B-bus ($2100-$21FF), reached by the CPU at $2100-$21FF and by DMA */

uint8_t snes_bbus_read(uint8_t reg)
{
	if (reg < 0x40)
		return snes_ppu_read(reg);
	if (reg < 0x80)
		return snes_apu_read(reg & 3);
	if (reg == 0x80) {
		uint8_t v = snes_st.wram[snes_st.wram_port_addr];
		snes_st.wram_port_addr = (snes_st.wram_port_addr + 1) & 0x1ffff;
		return v;
	}
	return snes_st.mdr;
}

void snes_bbus_write(uint8_t reg, uint8_t value)
{
	if (reg < 0x40) {
		snes_ppu_write(reg, value);
	} else if (reg < 0x80) {
		snes_apu_write(reg & 3, value);
	} else if (reg == 0x80) {
		snes_st.wram[snes_st.wram_port_addr] = value;
		snes_st.wram_port_addr = (snes_st.wram_port_addr + 1) & 0x1ffff;
	} else if (reg == 0x81) {
		snes_st.wram_port_addr = (snes_st.wram_port_addr & 0x1ff00) | value;
	} else if (reg == 0x82) {
		snes_st.wram_port_addr = (snes_st.wram_port_addr & 0x100ff) | ((uint32_t)value << 8);
	} else if (reg == 0x83) {
		snes_st.wram_port_addr = (snes_st.wram_port_addr & 0x0ffff) | ((uint32_t)(value & 1) << 16);
	}
}

/* ---- the A-bus */

/*
 * Whether DMA may use an A-bus address: not the B-bus ($2100-$21FF) nor the CPU's own registers
 * ($4000-$41FF, $4200-$421F, $4300-$437F) in the system banks. DMA reads of those give open bus
 * and DMA writes to them are lost.
 */
int snes_abus_dma_valid(uint32_t a)
{
	unsigned addr = a & 0xffff;
	if ((a >> 16) & 0x40)
		return 1;
	if (addr >= 0x2100 && addr < 0x2200)
		return 0;
	if (addr >= 0x4000 && addr < 0x4220)
		return 0;
	if (addr >= 0x4300 && addr < 0x4380)
		return 0;
	return 1;
}

/* Whether an A-bus address reaches WRAM (DMA between it and the WRAM port cannot work). */
int snes_is_wram(uint32_t a)
{
	uint32_t offset;
	return map_address(a & 0xffffff, &offset) == MEM_WRAM;
}

static uint8_t slow_read(uint32_t a)
{
	uint32_t offset = 0;
	unsigned addr = a & 0xffff;
	switch (map_address(a, &offset)) {
	case MEM_WRAM: return snes_st.wram[offset];
	case MEM_SRAM: return snes_st.sram[offset];
	case MEM_ROM: return snes_st.rom[offset];
	case MEM_IO:
		if (addr >= 0x2100 && addr < 0x2200)
			return snes_bbus_read((uint8_t)addr);
		if (addr >= 0x4000)
			return cpu_io_read(addr);
		return snes_st.mdr;
	default:
		return snes_st.mdr;
	}
}

static void slow_write(uint32_t a, uint8_t value)
{
	uint32_t offset = 0;
	unsigned addr = a & 0xffff;
	switch (map_address(a, &offset)) {
	case MEM_WRAM: snes_st.wram[offset] = value; break;
	case MEM_SRAM: snes_st.sram[offset] = value; break;
	case MEM_IO:
		if (addr >= 0x2100 && addr < 0x2200)
			snes_bbus_write((uint8_t)addr, value);
		else if (addr >= 0x4000)
			cpu_io_write(addr, value);
		break;
	default:
		break;
	}
}

uint8_t snes_read(uint32_t addr24)
{
	const uint8_t *page;
	uint8_t v;
	addr24 &= 0xffffff;
	page = snes_st.read_page[addr24 >> 12];
	v = page ? page[addr24 & 0xfff] : slow_read(addr24);
	snes_st.mdr = v;
	return v;
}

void snes_write(uint32_t addr24, uint8_t value)
{
	uint8_t *page;
	addr24 &= 0xffffff;
	snes_st.mdr = value;
	page = snes_st.write_page[addr24 >> 12];
	if (page)
		page[addr24 & 0xfff] = value;
	else
		slow_write(addr24, value);
}

unsigned snes_access_clocks(uint32_t addr24)
{
	unsigned bank = (addr24 >> 16) & 0xff, addr = addr24 & 0xffff;
	int fast = (bank & 0x80) && (snes_st.memsel & 1);
	if (bank & 0x40)
		return (fast && bank >= 0xc0) ? 6 : 8;
	if (addr & 0x8000)
		return fast ? 6 : 8;
	if (addr < 0x2000)
		return 8;
	if (addr < 0x4000)
		return 6;
	if (addr < 0x4200)
		return 12;
	if (addr < 0x6000)
		return 6;
	return 8;
}
