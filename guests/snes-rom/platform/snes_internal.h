/*
 * snes_internal.h - what the files of the SNES platform share and embedders do not see: the
 * console's state in one struct, and the functions one file calls in another.
 */
#ifndef RPT_SNES_INTERNAL_H
#define RPT_SNES_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "snes.h"
#include "snes_host.h"

#define SNES_WRAM_SIZE 0x20000u
#define SNES_VRAM_SIZE 0x10000u
#define SNES_CGRAM_SIZE 0x200u
#define SNES_OAM_SIZE 0x220u
/* The largest ROM and save RAM the platform keeps a copy of (snes_power refuses larger ones): the
 * ROM that ExHiROM's banks reach, and the largest SRAM a cartridge header names. */
#define SNES_ROM_MAX 0x7e0000u
#define SNES_SRAM_MAX 0x80000u

/* No event scheduled. */
#define SNES_NEVER UINT64_MAX

/* One DMA channel's registers ($43x0-$43xF) and its HDMA state. */
struct snes_dma_channel {
	uint8_t params;       /* $43x0 DMAPx: direction, indirect, A-bus step, transfer mode */
	uint8_t bbad;         /* $43x1 BBADx: B-bus address $21xx */
	uint16_t a1t;         /* $43x2/3 A1TxL/H: A-bus address (HDMA: table start) */
	uint8_t a1b;          /* $43x4 A1Bx: A-bus bank (HDMA: table bank) */
	uint16_t das;         /* $43x5/6 DASxL/H: byte count (HDMA indirect: data address) */
	uint8_t dasb;         /* $43x7 DASBx: HDMA indirect data bank */
	uint16_t a2a;         /* $43x8/9 A2AxL/H: HDMA current table address */
	uint8_t ntrl;         /* $43xA NTRLx: HDMA line counter and repeat bit */
	uint8_t unused;       /* $43xB and $43xF: a byte with no function, readable */
	uint8_t hdma_done;    /* the channel's table ended this frame */
	uint8_t hdma_do_transfer; /* the channel writes on the next HDMA line */
};

/* The PPU: registers as written, the latches behind the write-twice and read-twice ports. */
struct snes_ppu {
	uint8_t reg[0x40];    /* the last value written to $2100+i, for the renderer */
	uint16_t hofs[4], vofs[4]; /* BG1-BG4 scroll, 10 bits each */
	uint8_t bgofs_latch;  /* the previous byte written to any of $210D-$2114 */
	uint16_t m7[6];       /* $211B-$2120 mode 7 matrix and centre */
	uint16_t m7hofs, m7vofs; /* $210D/$210E as mode 7 sees them */
	uint8_t m7_latch;     /* the previous byte written to $211B-$2120, $210D/$210E */
	uint16_t vaddr;       /* $2116/7 VRAM word address */
	uint16_t vlatch;      /* the VRAM read prefetch word */
	uint16_t cgaddr;      /* CGRAM byte address, 9 bits ($2121 * 2 + the latch position) */
	uint8_t cglatch;      /* the low byte written to $2122 waiting for its high byte */
	uint16_t oambase;     /* $2102/3 word address, 9 bits */
	uint8_t oamprio;      /* $2103 bit 7: the OBJ priority rotation */
	uint16_t oamaddr;     /* OAM byte address, 10 bits */
	uint8_t oamlatch;     /* the even low-table byte written to $2104 waiting for its odd byte */
	uint8_t ppu1_mdr, ppu2_mdr; /* the PPU chips' own open bus: the last byte each delivered */
	uint16_t hcounter, vcounter; /* the H/V counters latched by $2137 or $4201 */
	uint8_t hcounter_high, vcounter_high; /* $213C/$213D read flip-flops: next read gives bit 8 */
	uint8_t counters_latched; /* $213F bit 6 */
};

/* The whole console. */
struct snes_state {
	/* memories */
	uint8_t wram[SNES_WRAM_SIZE];
	uint8_t vram[SNES_VRAM_SIZE];
	uint8_t cgram[SNES_CGRAM_SIZE];
	uint8_t oam[SNES_OAM_SIZE];
	uint8_t *rom;
	uint32_t rom_size;
	uint8_t *sram;
	uint32_t sram_size;
	int mapping;

	/* the bus: 4 KiB pages that are plain memory, NULL where the slow path decides */
	const uint8_t *read_page[0x1000];
	uint8_t *write_page[0x1000];
	uint8_t mdr;          /* the CPU's data bus: what open bus reads give */

	/* WRAM port $2180-$2183 */
	uint32_t wram_port_addr; /* 17 bits */

	/* APU ports $2140-$2143 and the stub's idea of what the boot ROM is doing (snes_apu.c) */
	uint8_t apu_to_cpu[4];
	uint8_t cpu_to_apu[4];
	uint8_t apu_stage;    /* enum in snes_apu.c */
	uint8_t apu_index;    /* the index of the next byte of the block being uploaded */

	/* CPU I/O */
	uint8_t nmitimen;     /* $4200 */
	uint8_t wrio;         /* $4201 */
	uint8_t wrmpya, wrmpyb; /* $4202, $4203 */
	uint16_t wrdiv;       /* $4204/5 */
	uint8_t wrdivb;       /* $4206 */
	uint16_t htime, vtime; /* $4207/8, $4209/A */
	uint8_t memsel;       /* $420D */
	uint8_t hdmaen;       /* $420C */
	uint16_t rddiv, rdmpy; /* $4214/5, $4216/7 */
	uint8_t rdnmi;        /* $4210 bit 7 */
	uint8_t timeup;       /* $4211 bit 7: the IRQ line */
	uint8_t nmi_pending;
	uint8_t in_vblank;    /* $4212 bit 7 */
	uint64_t autojoy_end; /* $4212 bit 0 is set from the read's start until this time */
	uint16_t joy_auto[4]; /* $4218-$421F */
	uint16_t joy_buttons[2]; /* what joypads 1 and 2 hold now */
	uint8_t joy_strobe;   /* $4016 bit 0 as written */
	uint8_t joy_shift_pos[2]; /* serial bits read since the last latch */

	struct snes_dma_channel dma[8];
	struct snes_ppu ppu;

	/* scheduler */
	unsigned line;        /* 0-261 */
	uint64_t line_start;  /* snes_clock.now at the start of this line */
	uint64_t irq_at;      /* when the H/V IRQ fires in this line, or SNES_NEVER */
	uint64_t hdma_at;     /* when HDMA runs in this line, or SNES_NEVER */
	unsigned vblank_line; /* 225, or 240 with overscan, latched at the start of the frame */
	uint8_t frame_ended;  /* a frame ended since this vertical blank began (one per vblank) */
	uint64_t frame;       /* frame hooks run so far */

	/* pictures */
	int render_lines;     /* render each line as it starts */
	uint8_t picture[SNES_PICTURE_WIDTH * SNES_PICTURE_HEIGHT * 3];
};

extern struct snes_state snes_st;

/* snes_bus.c */
uint8_t snes_bbus_read(uint8_t reg);
void snes_bbus_write(uint8_t reg, uint8_t value);
int snes_abus_dma_valid(uint32_t addr24);
int snes_is_wram(uint32_t addr24);

/* snes_apu.c */
void snes_apu_reset(void);
uint8_t snes_apu_read(unsigned port);
void snes_apu_write(unsigned port, uint8_t value);

/* snes_ppu.c */
void snes_ppu_reset(void);
uint8_t snes_ppu_read(uint8_t reg);
void snes_ppu_write(uint8_t reg, uint8_t value);
void snes_ppu_latch_counters(void);
void snes_ppu_vblank_start(void);

/* snes_dma.c */
void snes_dma_run(uint8_t channels);
void snes_hdma_init(void);
void snes_hdma_line(void);
uint8_t snes_dma_reg_read(uint16_t offset);
void snes_dma_reg_write(uint16_t offset, uint8_t value);

/* snes_timing.c */
void snes_timing_reset(void);
void snes_timing_irq_changed(void);
void snes_timing_nmi_enable_changed(uint8_t old_nmitimen);
int snes_in_hblank(void);

/* snes_render.c */
void snes_render_line(unsigned line, uint8_t *rgb_row);

/* snes_frame.c */
void snes_frame_configure(void);
void snes_frame_hook(void);
void snes_frame_input_update(void);
int snes_frame_limit_set(void);

/*
 * Text without the C library, in printf's notation for the part of it the platform uses: %s, %c,
 * %d, %u and %x with the length modifiers l and ll, an optional 0 flag and a width (%05llu,
 * %016llx), and %%. The format attribute has the compiler check every call's arguments as it
 * would printf's.
 * snes_format writes at most cap - 1 characters and a NUL into out and returns the length the
 * whole text has (cap or more when it did not fit). snes_message writes one line to standard
 * error; snes_fatal does too and then ends the process with `status`.
 */
#define SNES_PRINTF(fmt_index, first_arg) __attribute__((format(printf, fmt_index, first_arg)))
unsigned snes_format(char *out, unsigned cap, const char *fmt, ...) SNES_PRINTF(3, 4);
void snes_message(const char *fmt, ...) SNES_PRINTF(1, 2);
_Noreturn void snes_fatal(int status, const char *fmt, ...) SNES_PRINTF(2, 3);

#endif
