/*
 * snes_ppu.c - the PPU's B-bus ports $2100-$213F: the registers the renderer uses, and the ports
 * to VRAM, CGRAM and OAM with their latches.
 *
 * Decisions:
 * - VRAM, CGRAM and OAM accept writes at any time. The console drops VRAM writes during the
 *   active display (and redirects CGRAM and OAM ones); games do not rely on that, and with this
 *   platform's coarser timing honouring it would drop writes that a slightly slow NMI handler
 *   makes at the top of the display, so SNES_VRAM_WRITES_BLOCKED_DURING_DISPLAY is 0.
 * - Reading a write-only register gives the PPU1 chip's open bus for $21x4-$21x6 and $21x8-$21xA
 *   (the addresses that chip half-decodes) and the CPU's open bus for the others.
 * - The range-over and time-over flags of $213E are never set.
 */
#include "snes_internal.h"

#ifndef SNES_VRAM_WRITES_BLOCKED_DURING_DISPLAY
#define SNES_VRAM_WRITES_BLOCKED_DURING_DISPLAY 0
#endif

#define P (&snes_st.ppu)

void snes_ppu_reset(void)
{
	/* Forced blank at power-on, every other register 0 (snes_power zeroed the state). */
	P->reg[0x00] = 0x80;
}

/* ---- VRAM */

/*
 * The word address VRAM sees: $2115 bits 2-3 rotate the low 8, 9 or 10 bits of the $2116/7
 * address left by 3, which turns a run of 2bpp, 4bpp or 8bpp bitplane rows into rows of tiles.
 */
static uint16_t vram_word_address(void)
{
	uint16_t a = P->vaddr;
	switch ((P->reg[0x15] >> 2) & 3) {
	case 1: a = (uint16_t)((a & 0xff00) | ((a & 0x001f) << 3) | ((a >> 5) & 7)); break;
	case 2: a = (uint16_t)((a & 0xfe00) | ((a & 0x003f) << 3) | ((a >> 6) & 7)); break;
	case 3: a = (uint16_t)((a & 0xfc00) | ((a & 0x007f) << 3) | ((a >> 7) & 7)); break;
	default: break;
	}
	return a & 0x7fff;
}

static void vram_increment(void)
{
	static const uint16_t step[4] = { 1, 32, 128, 128 };
	P->vaddr = (uint16_t)(P->vaddr + step[P->reg[0x15] & 3]);
}

/* The VRAM read buffer is loaded from the current address whenever the address is set. */
static void vram_prefetch(void)
{
	uint16_t w = vram_word_address();
	P->vlatch = (uint16_t)(snes_st.vram[2u * w] | (snes_st.vram[2u * w + 1] << 8));
}

static void vram_write(unsigned high, uint8_t value)
{
	int blocked = SNES_VRAM_WRITES_BLOCKED_DURING_DISPLAY && !(P->reg[0x00] & 0x80) &&
		snes_st.line < snes_st.vblank_line;
	if (!blocked)
		snes_st.vram[2u * vram_word_address() + high] = value;
	/* $2115 bit 7: increment after the high byte (1) or the low byte (0). */
	if (((P->reg[0x15] >> 7) & 1) == high)
		vram_increment();
}

/* $2139/$213A: a byte of the buffer; the read that increments reloads the buffer first. */
static uint8_t vram_read(unsigned high)
{
	uint8_t v = (uint8_t)(P->vlatch >> (8 * high));
	if (((P->reg[0x15] >> 7) & 1) == high) {
		vram_prefetch();
		vram_increment();
	}
	return v;
}

/* ---- OAM */

/* $2104: low-table bytes go in pairs (the even one waits in a latch), high-table bytes at once. */
static void oam_write(uint8_t value)
{
	uint16_t a = P->oamaddr;
	if (!(a & 1))
		P->oamlatch = value;
	if (a & 0x200) {
		snes_st.oam[0x200 | (a & 0x1f)] = value;
	} else if (a & 1) {
		snes_st.oam[a - 1] = P->oamlatch;
		snes_st.oam[a] = value;
	}
	P->oamaddr = (a + 1) & 0x3ff;
}

static uint8_t oam_read(void)
{
	uint16_t a = P->oamaddr;
	uint8_t v = (a & 0x200) ? snes_st.oam[0x200 | (a & 0x1f)] : snes_st.oam[a];
	P->oamaddr = (a + 1) & 0x3ff;
	return v;
}

/* At the start of vertical blank, outside forced blank, the OAM address returns to $2102/3. */
void snes_ppu_vblank_start(void)
{
	if (!(P->reg[0x00] & 0x80))
		P->oamaddr = (uint16_t)(P->oambase << 1);
}

/* ---- CGRAM */

/* $2122: the low byte waits in a latch; the high byte writes both (bit 7 does not exist). */
static void cgram_write(uint8_t value)
{
	uint16_t a = P->cgaddr;
	if (!(a & 1)) {
		P->cglatch = value;
	} else {
		snes_st.cgram[a - 1] = P->cglatch;
		snes_st.cgram[a] = value & 0x7f;
	}
	P->cgaddr = (a + 1) & 0x1ff;
}

/* $213B: low byte, then high byte with bit 7 from the PPU2 open bus. */
static uint8_t cgram_read(void)
{
	uint16_t a = P->cgaddr;
	uint8_t v = snes_st.cgram[a];
	if (a & 1)
		v = (uint8_t)((v & 0x7f) | (P->ppu2_mdr & 0x80));
	P->cgaddr = (a + 1) & 0x1ff;
	return v;
}

/* ---- counters */

void snes_ppu_latch_counters(void)
{
	unsigned line, clock;
	snes_position(&line, &clock);
	P->hcounter = (uint16_t)(clock / 4);
	P->vcounter = (uint16_t)line;
	P->counters_latched = 1;
}

/* $213C/$213D: low 8 bits, then bit 8 with bits 1-7 from the PPU2 open bus. */
static uint8_t counter_read(uint16_t counter, uint8_t *high)
{
	uint8_t v = *high ? (uint8_t)((P->ppu2_mdr & 0xfe) | ((counter >> 8) & 1)) : (uint8_t)counter;
	*high ^= 1;
	return v;
}

/* ---- the ports */

uint8_t snes_ppu_read(uint8_t reg)
{
	uint8_t v;
	int32_t product;
	switch (reg) {
	case 0x34: case 0x35: case 0x36:
		/* MPYL/M/H: M7A (signed 16 bits) times the last byte written to $211C (signed). */
		product = (int16_t)P->m7[0] * (int8_t)(P->m7[1] >> 8);
		v = (uint8_t)((uint32_t)product >> (8 * (reg - 0x34)));
		P->ppu1_mdr = v;
		return v;
	case 0x37: /* SLHV: latches the counters while $4201 bit 7 is set; the data is open bus */
		if (snes_st.wrio & 0x80)
			snes_ppu_latch_counters();
		return snes_st.mdr;
	case 0x38: v = oam_read(); P->ppu1_mdr = v; return v;
	case 0x39: v = vram_read(0); P->ppu1_mdr = v; return v;
	case 0x3a: v = vram_read(1); P->ppu1_mdr = v; return v;
	case 0x3b: v = cgram_read(); P->ppu2_mdr = v; return v;
	case 0x3c: v = counter_read(P->hcounter, &P->hcounter_high); P->ppu2_mdr = v; return v;
	case 0x3d: v = counter_read(P->vcounter, &P->vcounter_high); P->ppu2_mdr = v; return v;
	case 0x3e: /* STAT77: PPU1 version 1 */
		v = (uint8_t)((P->ppu1_mdr & 0x10) | 0x01);
		P->ppu1_mdr = v;
		return v;
	case 0x3f: /* STAT78: counters latched, NTSC, PPU2 version 3; resets the $213C/D flip-flops */
		v = (uint8_t)((P->counters_latched << 6) | (P->ppu2_mdr & 0x20) | 0x03);
		if (snes_st.wrio & 0x80)
			P->counters_latched = 0;
		P->hcounter_high = P->vcounter_high = 0;
		P->ppu2_mdr = v;
		return v;
	default:
		break;
	}
	switch (reg & 0x0f) {
	case 0x4: case 0x5: case 0x6: case 0x8: case 0x9: case 0xa:
		if (reg < 0x30)
			return P->ppu1_mdr;
		break;
	default:
		break;
	}
	return snes_st.mdr;
}

/* BGnHOFS: the new byte, the previous byte's bits 3-7, and bits 0-2 of this register's old high byte. */
static void write_hofs(unsigned bg, uint8_t value)
{
	P->hofs[bg] = (uint16_t)(((unsigned)value << 8 | (P->bgofs_latch & ~7u) | ((P->hofs[bg] >> 8) & 7u)) & 0x3ffu);
	P->bgofs_latch = value;
}

/* BGnVOFS: the new byte above the previous one. */
static void write_vofs(unsigned bg, uint8_t value)
{
	P->vofs[bg] = (uint16_t)(((value << 8) | P->bgofs_latch) & 0x3ff);
	P->bgofs_latch = value;
}

/* Mode 7 registers are written twice through a latch of their own: low byte, then high byte. */
static uint16_t m7_word(uint8_t value)
{
	uint16_t w = (uint16_t)((value << 8) | P->m7_latch);
	P->m7_latch = value;
	return w;
}

void snes_ppu_write(uint8_t reg, uint8_t value)
{
	if (reg >= 0x40)
		return;
	P->reg[reg] = value;
	switch (reg) {
	case 0x02:
		P->oambase = (uint16_t)((P->oambase & 0x100) | value);
		P->oamaddr = (uint16_t)(P->oambase << 1);
		break;
	case 0x03:
		P->oambase = (uint16_t)((P->oambase & 0xff) | ((value & 1) << 8));
		P->oamprio = value >> 7;
		P->oamaddr = (uint16_t)(P->oambase << 1);
		break;
	case 0x04: oam_write(value); break;
	case 0x0d:
		P->m7hofs = m7_word(value) & 0x1fff;
		write_hofs(0, value);
		break;
	case 0x0e:
		P->m7vofs = m7_word(value) & 0x1fff;
		write_vofs(0, value);
		break;
	case 0x0f: write_hofs(1, value); break;
	case 0x10: write_vofs(1, value); break;
	case 0x11: write_hofs(2, value); break;
	case 0x12: write_vofs(2, value); break;
	case 0x13: write_hofs(3, value); break;
	case 0x14: write_vofs(3, value); break;
	case 0x16:
		P->vaddr = (uint16_t)((P->vaddr & 0xff00) | value);
		vram_prefetch();
		break;
	case 0x17:
		P->vaddr = (uint16_t)((P->vaddr & 0x00ff) | (value << 8));
		vram_prefetch();
		break;
	case 0x18: vram_write(0, value); break;
	case 0x19: vram_write(1, value); break;
	case 0x1b: case 0x1c: case 0x1d: case 0x1e: case 0x1f: case 0x20:
		P->m7[reg - 0x1b] = m7_word(value);
		break;
	case 0x21: P->cgaddr = (uint16_t)(value << 1); break;
	case 0x22: cgram_write(value); break;
	default: break;
	}
}
