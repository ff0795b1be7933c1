/*
 * snes_dma.c - the eight DMA channels: general DMA ($420B) and HDMA ($420C).
 *
 * Timing (master clocks; the CPU is stalled meanwhile, so time simply moves on):
 * - general DMA: SNES_DMA_START_CLOCKS once, 8 per enabled channel, 8 per byte. The console's
 *   start-up cost depends on the CPU clock phase (12-24 clocks); a fixed middle value is used.
 *   Events that fall due during a long transfer (HDMA, scanline starts, the frame hook) run
 *   between its bytes, as on the console.
 * - HDMA: SNES_DMA_START_CLOCKS on a line with an active channel, 8 per active channel, 8 per
 *   byte written and 8 per table byte read; the same at the start of the frame for the set-up.
 */
#include "snes_internal.h"

#define SNES_DMA_START_CLOCKS 18u

/* The B-bus address offsets of each transfer mode's 1, 2 or 4 byte unit. */
static const uint8_t mode_offsets[8][4] = {
	{ 0, 0, 0, 0 }, /* 0: one register */
	{ 0, 1, 0, 1 }, /* 1: two registers (VRAM low/high) */
	{ 0, 0, 0, 0 }, /* 2: one register written twice */
	{ 0, 0, 1, 1 }, /* 3: two registers written twice each */
	{ 0, 1, 2, 3 }, /* 4: four registers */
	{ 0, 1, 0, 1 }, /* 5: two registers, alternating twice */
	{ 0, 0, 0, 0 }, /* 6: as 2 */
	{ 0, 0, 1, 1 }, /* 7: as 3 */
};
static const uint8_t mode_unit_length[8] = { 1, 2, 2, 4, 4, 4, 2, 4 };

/*
 * Moves one byte between the A-bus address and B-bus register $21xx in the channel's direction.
 * The data bus holds the byte afterwards. A-bus addresses DMA cannot reach read as open bus and
 * take no writes; between WRAM and the WRAM port ($2180) nothing is written to WRAM and the
 * port's address does not move.
 */
static void transfer_byte(int b_to_a, uint8_t bbus, uint32_t abus)
{
	int valid = snes_abus_dma_valid(abus);
	int wram_to_wram = bbus == 0x80 && snes_is_wram(abus);
	uint8_t v;
	if (!b_to_a) {
		v = valid ? snes_read(abus) : snes_st.mdr;
		snes_st.mdr = v;
		if (!wram_to_wram)
			snes_bbus_write(bbus, v);
	} else {
		v = wram_to_wram ? snes_st.mdr : snes_bbus_read(bbus);
		snes_st.mdr = v;
		if (valid && !wram_to_wram)
			snes_write(abus, v);
	}
}

/* Time passes during general DMA; events due meanwhile run at once. */
static void dma_clocks(uint32_t clocks)
{
	snes_clock.now += clocks;
	if (snes_clock.now >= snes_clock.next_event)
		snes_run_events();
}

void snes_dma_run(uint8_t channels)
{
	if (!channels)
		return;
	dma_clocks(SNES_DMA_START_CLOCKS);
	for (unsigned ch = 0; ch < 8; ch++) {
		struct snes_dma_channel *c = &snes_st.dma[ch];
		unsigned mode = c->params & 7, i = 0;
		int b_to_a = c->params >> 7;
		int step = (c->params & 0x08) ? 0 : (c->params & 0x10) ? -1 : 1;
		if (!(channels & (1u << ch)))
			continue;
		dma_clocks(8);
		/* A count of 0 means 65536 bytes. Only the low 16 bits of the A-bus address move. */
		do {
			uint8_t bbus = (uint8_t)(c->bbad + mode_offsets[mode][i & 3]);
			transfer_byte(b_to_a, bbus, ((uint32_t)c->a1b << 16) | c->a1t);
			c->a1t = (uint16_t)(c->a1t + step);
			c->das--;
			i++;
			dma_clocks(8);
		} while (c->das != 0);
	}
}

/* ---- HDMA */

/* HDMA runs inside snes_run_events, which picks up the time it took afterwards. */
static void hdma_clocks(uint32_t clocks)
{
	snes_clock.now += clocks;
}

static uint8_t table_read(struct snes_dma_channel *c)
{
	uint32_t a = ((uint32_t)c->a1b << 16) | c->a2a;
	uint8_t v = snes_abus_dma_valid(a) ? snes_read(a) : snes_st.mdr;
	c->a2a++;
	hdma_clocks(8);
	return v;
}

static int hdma_active(unsigned ch)
{
	return (snes_st.hdmaen & (1u << ch)) && !snes_st.dma[ch].hdma_done;
}

/*
 * Reads the next table entry when the line counter has run out: a line count (0 ends the
 * table for this frame) and, for indirect channels, the data address. A channel that ends while no
 * later channel is active reads only one byte of that address (into its high byte), as the
 * console does.
 */
static void hdma_reload(unsigned ch)
{
	struct snes_dma_channel *c = &snes_st.dma[ch];
	if (c->ntrl & 0x7f)
		return;
	c->ntrl = table_read(c);
	c->hdma_done = c->ntrl == 0;
	c->hdma_do_transfer = !c->hdma_done;
	if (c->params & 0x40) {
		int later_active = 0;
		for (unsigned j = ch + 1; j < 8; j++)
			later_active |= hdma_active(j);
		c->das = (uint16_t)(table_read(c) << 8);
		if (!c->hdma_done || later_active)
			c->das = (uint16_t)((c->das >> 8) | (table_read(c) << 8));
	}
}

void snes_hdma_init(void)
{
	for (unsigned ch = 0; ch < 8; ch++) {
		snes_st.dma[ch].hdma_done = 0;
		snes_st.dma[ch].hdma_do_transfer = 0;
	}
	if (!snes_st.hdmaen)
		return;
	hdma_clocks(SNES_DMA_START_CLOCKS);
	for (unsigned ch = 0; ch < 8; ch++) {
		struct snes_dma_channel *c = &snes_st.dma[ch];
		if (!(snes_st.hdmaen & (1u << ch)))
			continue;
		hdma_clocks(8);
		c->a2a = c->a1t;
		c->ntrl = 0;
		hdma_reload(ch);
	}
}

void snes_hdma_line(void)
{
	int any = 0;
	for (unsigned ch = 0; ch < 8; ch++)
		any |= hdma_active(ch);
	if (!any)
		return;
	hdma_clocks(SNES_DMA_START_CLOCKS);
	for (unsigned ch = 0; ch < 8; ch++) {
		struct snes_dma_channel *c = &snes_st.dma[ch];
		unsigned mode = c->params & 7;
		if (!hdma_active(ch))
			continue;
		hdma_clocks(8);
		if (!c->hdma_do_transfer)
			continue;
		for (unsigned k = 0; k < mode_unit_length[mode]; k++) {
			uint8_t bbus = (uint8_t)(c->bbad + mode_offsets[mode][k]);
			uint32_t a;
			if (c->params & 0x40) {
				a = ((uint32_t)c->dasb << 16) | c->das;
				c->das++;
			} else {
				a = ((uint32_t)c->a1b << 16) | c->a2a;
				c->a2a++;
			}
			transfer_byte(c->params >> 7, bbus, a);
			hdma_clocks(8);
		}
	}
	/* After every channel's transfer: count the line; bit 7 (repeat) says whether the next line writes too. */
	for (unsigned ch = 0; ch < 8; ch++) {
		struct snes_dma_channel *c = &snes_st.dma[ch];
		if (!hdma_active(ch))
			continue;
		c->ntrl--;
		c->hdma_do_transfer = (c->ntrl & 0x80) != 0;
		hdma_reload(ch);
	}
}

/* ---- registers $4300-$437F */

uint8_t snes_dma_reg_read(uint16_t offset)
{
	struct snes_dma_channel *c = &snes_st.dma[(offset >> 4) & 7];
	switch (offset & 0x0f) {
	case 0x0: return c->params;
	case 0x1: return c->bbad;
	case 0x2: return (uint8_t)c->a1t;
	case 0x3: return (uint8_t)(c->a1t >> 8);
	case 0x4: return c->a1b;
	case 0x5: return (uint8_t)c->das;
	case 0x6: return (uint8_t)(c->das >> 8);
	case 0x7: return c->dasb;
	case 0x8: return (uint8_t)c->a2a;
	case 0x9: return (uint8_t)(c->a2a >> 8);
	case 0xa: return c->ntrl;
	case 0xb: case 0xf: return c->unused;
	default: return snes_st.mdr;
	}
}

void snes_dma_reg_write(uint16_t offset, uint8_t value)
{
	struct snes_dma_channel *c = &snes_st.dma[(offset >> 4) & 7];
	switch (offset & 0x0f) {
	case 0x0: c->params = value; break;
	case 0x1: c->bbad = value; break;
	case 0x2: c->a1t = (uint16_t)((c->a1t & 0xff00) | value); break;
	case 0x3: c->a1t = (uint16_t)((c->a1t & 0x00ff) | (value << 8)); break;
	case 0x4: c->a1b = value; break;
	case 0x5: c->das = (uint16_t)((c->das & 0xff00) | value); break;
	case 0x6: c->das = (uint16_t)((c->das & 0x00ff) | (value << 8)); break;
	case 0x7: c->dasb = value; break;
	case 0x8: c->a2a = (uint16_t)((c->a2a & 0xff00) | value); break;
	case 0x9: c->a2a = (uint16_t)((c->a2a & 0x00ff) | (value << 8)); break;
	case 0xa: c->ntrl = value; break;
	case 0xb: case 0xf: c->unused = value; break;
	default: break;
	}
}
