/*
 * snes_render.c - draws one scanline of the main screen from VRAM, CGRAM, OAM and the PPU
 * registers into RGB.
 *
 * Modelled: BG modes 0 (four 2bpp layers), 1 (two 4bpp layers and a 2bpp one, with the BG3
 * priority bit of $2105), 2 (two 4bpp layers, without offset-per-tile) and 3 and 4 (an 8bpp BG1
 * with a 4bpp or 2bpp BG2, without direct colour); 8x8 and 16x16 tiles; tilemaps of 32x32, 64x32,
 * 32x64 and 64x64 tiles; scrolling; tile flips and palettes; the priorities of each mode between
 * layers and sprites; sprites (all eight size pairs of $2101, name base and name select, flips,
 * palettes, priorities, the priority rotation of $2103, X from -256 to 255 and Y wrapping at 256);
 * the main-screen layer enables of $212C; brightness and forced blank of $2100.
 * Not modelled: modes 5, 6 and 7 (their lines show sprites over the backdrop), mosaic, windows,
 * colour math and the sub screen, interlace and pseudo-hires, and the console's limits of 32
 * sprites and 34 sprite tiles per line.
 *
 * Line 1 is the first line shown (row 0 of the picture). As on the console, that line shows BG
 * row VOFS + 1, and a sprite at Y shows from line Y + 1.
 */
#include "snes_internal.h"

#define P (&snes_st.ppu)

/* One layer's pixels on the line: the CGRAM colour (or -1 where transparent) and the priority. */
struct layer_line {
	int16_t colour[SNES_PICTURE_WIDTH];
	uint8_t priority[SNES_PICTURE_WIDTH];
};

enum { L_BG1, L_BG2, L_BG3, L_BG4, L_OBJ };

/* One place in a mode's front-to-back order: a layer and the priority it has there. */
struct slot {
	uint8_t layer, priority;
};

static const struct slot order_mode0[] = {
	{ L_OBJ, 3 }, { L_BG1, 1 }, { L_BG2, 1 }, { L_OBJ, 2 }, { L_BG1, 0 }, { L_BG2, 0 },
	{ L_OBJ, 1 }, { L_BG3, 1 }, { L_BG4, 1 }, { L_OBJ, 0 }, { L_BG3, 0 }, { L_BG4, 0 },
};
/* Mode 1 with $2105 bit 3 set: BG3's priority-1 tiles come in front of everything. */
static const struct slot order_mode1_bg3_front[] = {
	{ L_BG3, 1 }, { L_OBJ, 3 }, { L_BG1, 1 }, { L_BG2, 1 }, { L_OBJ, 2 }, { L_BG1, 0 },
	{ L_BG2, 0 }, { L_OBJ, 1 }, { L_OBJ, 0 }, { L_BG3, 0 },
};
static const struct slot order_mode1[] = {
	{ L_OBJ, 3 }, { L_BG1, 1 }, { L_BG2, 1 }, { L_OBJ, 2 }, { L_BG1, 0 }, { L_BG2, 0 },
	{ L_OBJ, 1 }, { L_BG3, 1 }, { L_OBJ, 0 }, { L_BG3, 0 },
};
static const struct slot order_two_layers[] = {
	{ L_OBJ, 3 }, { L_BG1, 1 }, { L_OBJ, 2 }, { L_BG2, 1 }, { L_OBJ, 1 }, { L_BG1, 0 },
	{ L_OBJ, 0 }, { L_BG2, 0 },
};

static uint16_t vram_word(uint32_t word_address)
{
	uint32_t w = word_address & 0x7fff;
	return (uint16_t)(snes_st.vram[2 * w] | (snes_st.vram[2 * w + 1] << 8));
}

/* The colour (0-255 for 8bpp) of pixel (x, y) of the bpp-deep 8x8 tile at a word address. */
static unsigned tile_pixel(uint32_t tile_address, unsigned bpp, unsigned x, unsigned y)
{
	unsigned colour = 0, shift = 7 - x;
	for (unsigned pair = 0; pair < bpp / 2; pair++) {
		uint16_t planes = vram_word(tile_address + 8 * pair + y);
		colour |= ((planes >> shift) & 1u) << (2 * pair);
		colour |= ((planes >> (8 + shift)) & 1u) << (2 * pair + 1);
	}
	return colour;
}

/* One BG layer's pixels on display line `line`, bpp bits deep, its palettes from palette_base. */
static void bg_line(unsigned bg, unsigned bpp, unsigned palette_base, unsigned line, struct layer_line *out)
{
	uint8_t sc = P->reg[0x07 + bg];
	uint32_t map_base = (uint32_t)(sc & 0xfc) << 8;
	uint32_t char_base = (uint32_t)((P->reg[0x0b + bg / 2] >> (4 * (bg & 1))) & 0x0f) << 12;
	unsigned big = (P->reg[0x05] >> (4 + bg)) & 1;
	unsigned tile_size = big ? 16 : 8, tile_shift = big ? 4 : 3;
	unsigned y = (line + P->vofs[bg]) & 0x3ff;
	unsigned ty = (y >> tile_shift) & 63;
	for (unsigned x = 0; x < SNES_PICTURE_WIDTH; x++) {
		unsigned xx = (x + P->hofs[bg]) & 0x3ff;
		unsigned tx = (xx >> tile_shift) & 63;
		uint32_t offset = (ty & 31) * 32 + (tx & 31);
		uint16_t entry;
		unsigned tile, px = xx & (tile_size - 1), py = y & (tile_size - 1), colour;
		if ((sc & 1) && (tx & 32))
			offset += 0x400;
		if ((sc & 2) && (ty & 32))
			offset += (sc & 1) ? 0x800 : 0x400;
		entry = vram_word(map_base + offset);
		if (entry & 0x4000)
			px = tile_size - 1 - px;
		if (entry & 0x8000)
			py = tile_size - 1 - py;
		/* A 16x16 tile is four 8x8 tiles: n, n+1 beside it, n+16 and n+17 below. */
		tile = ((entry & 0x3ff) + (px >> 3) + 16 * (py >> 3)) & 0x3ff;
		colour = tile_pixel(char_base + tile * 4 * bpp, bpp, px & 7, py & 7);
		if (!colour) {
			out->colour[x] = -1;
			continue;
		}
		out->colour[x] = (int16_t)(bpp == 8 ? colour : palette_base + ((entry >> 10) & 7) * (1u << bpp) + colour);
		out->priority[x] = (entry >> 13) & 1;
	}
}

/* Sprite sizes by $2101 bits 5-7: small width, small height, large width, large height. */
static const uint8_t obj_sizes[8][4] = {
	{ 8, 8, 16, 16 }, { 8, 8, 32, 32 }, { 8, 8, 64, 64 }, { 16, 16, 32, 32 },
	{ 16, 16, 64, 64 }, { 32, 32, 64, 64 }, { 16, 32, 32, 64 }, { 16, 32, 32, 32 },
};

/*
 * The sprites' pixels on display line `line`: the first sprite in OAM order (from the rotation's
 * first sprite) that is opaque at a pixel owns it, whatever the priorities.
 */
static void obj_line(unsigned line, struct layer_line *out)
{
	uint8_t obsel = P->reg[0x01];
	uint32_t base = (uint32_t)(obsel & 7) << 13;
	uint32_t name_offset = (uint32_t)(((obsel >> 3) & 3) + 1) << 12;
	unsigned first = P->oamprio ? (P->oambase >> 1) & 0x7f : 0;
	for (unsigned i = 0; i < 128; i++) {
		unsigned s = (first + i) & 0x7f;
		const uint8_t *e = &snes_st.oam[4 * s];
		unsigned high = (snes_st.oam[0x200 + s / 4] >> (2 * (s % 4))) & 3;
		const uint8_t *size = obj_sizes[obsel >> 5] + ((high & 2) ? 2 : 0);
		unsigned w = size[0], h = size[1];
		int x = (int)(e[0] | ((high & 1) << 8));
		unsigned row = (line - 1 - e[1]) & 0xff;
		unsigned tile = e[2] | ((e[3] & 1u) << 8), attr = e[3];
		if (x >= 256)
			x -= 512;
		if (row >= h)
			continue;
		if (attr & 0x80)
			row = h - 1 - row;
		for (unsigned px = 0; px < w; px++) {
			int sx = x + (int)px;
			unsigned col, t, colour;
			uint32_t address;
			if (sx < 0 || sx >= SNES_PICTURE_WIDTH || out->colour[sx] >= 0)
				continue;
			col = (attr & 0x40) ? w - 1 - px : px;
			/* Tiles of a big sprite come from a 16x16 grid of tiles, wrapping within its row and column. */
			t = (tile & 0x100) | ((((tile >> 4) + row / 8) & 0x0f) << 4) | ((tile + col / 8) & 0x0f);
			address = base + ((t & 0x100) ? name_offset : 0) + (t & 0xff) * 16;
			colour = tile_pixel(address, 4, col & 7, row & 7);
			if (!colour)
				continue;
			out->colour[sx] = (int16_t)(128 + ((attr >> 1) & 7) * 16 + colour);
			out->priority[sx] = (attr >> 4) & 3;
		}
	}
}

static void clear_layer(struct layer_line *l)
{
	for (unsigned x = 0; x < SNES_PICTURE_WIDTH; x++)
		l->colour[x] = -1;
	__builtin_memset(l->priority, 0, sizeof l->priority);
}

void snes_render_line(unsigned line, uint8_t *rgb)
{
	static struct layer_line layers[5];
	uint8_t inidisp = P->reg[0x00], tm = P->reg[0x2c];
	unsigned mode = P->reg[0x05] & 7, brightness = inidisp & 0x0f;
	/* Each layer's depth in this mode (0: not there) and where its palettes start in CGRAM. */
	unsigned bpp[4] = { 0, 0, 0, 0 }, palette_base[4] = { 0, 0, 0, 0 };
	const struct slot *order;
	size_t order_len;

	if (inidisp & 0x80) {
		__builtin_memset(rgb, 0, SNES_PICTURE_WIDTH * 3);
		return;
	}
	switch (mode) {
	case 0:
		for (unsigned bg = 0; bg < 4; bg++) {
			bpp[bg] = 2;
			palette_base[bg] = 32 * bg;
		}
		order = order_mode0;
		order_len = sizeof order_mode0 / sizeof order_mode0[0];
		break;
	case 1:
		bpp[0] = bpp[1] = 4;
		bpp[2] = 2;
		if (P->reg[0x05] & 0x08) {
			order = order_mode1_bg3_front;
			order_len = sizeof order_mode1_bg3_front / sizeof order_mode1_bg3_front[0];
		} else {
			order = order_mode1;
			order_len = sizeof order_mode1 / sizeof order_mode1[0];
		}
		break;
	default:
		if (mode == 2) {
			bpp[0] = bpp[1] = 4;
		} else if (mode == 3) {
			bpp[0] = 8;
			bpp[1] = 4;
		} else if (mode == 4) {
			bpp[0] = 8;
			bpp[1] = 2;
		}
		order = order_two_layers;
		order_len = sizeof order_two_layers / sizeof order_two_layers[0];
		break;
	}
	for (unsigned bg = 0; bg < 4; bg++) {
		clear_layer(&layers[bg]);
		if (bpp[bg] && (tm & (1u << bg)))
			bg_line(bg, bpp[bg], palette_base[bg], line, &layers[bg]);
	}
	clear_layer(&layers[L_OBJ]);
	if (tm & 0x10)
		obj_line(line, &layers[L_OBJ]);

	for (unsigned x = 0; x < SNES_PICTURE_WIDTH; x++) {
		unsigned index = 0, colour, r, g, b;
		for (size_t i = 0; i < order_len; i++) {
			const struct layer_line *l = &layers[order[i].layer];
			if (l->colour[x] >= 0 && l->priority[x] == order[i].priority) {
				index = (unsigned)l->colour[x];
				break;
			}
		}
		colour = snes_st.cgram[2 * index] | ((unsigned)snes_st.cgram[2 * index + 1] << 8);
		r = (colour & 0x1f) * brightness / 15;
		g = ((colour >> 5) & 0x1f) * brightness / 15;
		b = ((colour >> 10) & 0x1f) * brightness / 15;
		rgb[3 * x + 0] = (uint8_t)((r << 3) | (r >> 2));
		rgb[3 * x + 1] = (uint8_t)((g << 3) | (g >> 2));
		rgb[3 * x + 2] = (uint8_t)((b << 3) | (b >> 2));
	}
}

void snes_render_picture(uint8_t *rgb)
{
	for (unsigned line = 1; line <= SNES_PICTURE_HEIGHT; line++)
		snes_render_line(line, rgb + (size_t)(line - 1) * SNES_PICTURE_WIDTH * 3);
}

const uint8_t *snes_frame_picture(void)
{
	return snes_st.picture;
}

void snes_set_line_rendering(int on)
{
	snes_st.render_lines = on != 0;
}
