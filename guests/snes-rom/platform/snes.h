/*
 * snes.h - the SNES platform that recompiled 65816 code runs on: the bus with its memory map, the
 * PPU's ports and a scanline renderer, the CPU's I/O registers, DMA and HDMA, the scheduler of
 * scanline events and interrupts, joypad input from a script, and the frame hook that writes
 * hashes, dumps and pictures.
 *
 * The 65816 itself is not here: compiled C code plays the CPU, calls snes_read and snes_write for
 * every bus access, adds the time each instruction took with snes_advance (or inline through
 * snes_clock), and asks snes_interrupt_pending between instructions.
 *
 * Freestanding C11: no C library, only <stdint.h>, <stddef.h>, <stdarg.h> and the compiler's
 * builtins; what it needs from outside (its settings, files, standard error, ending the process)
 * it asks of its host through snes_host.h. The files of the platform are split by subject:
 * snes_bus.c (power-on, the memory map, open bus, CPU I/O registers, the WRAM port),
 * snes_apu.c (the APU port stub), snes_dma.c (general DMA and HDMA), snes_ppu.c (PPU ports and
 * memories), snes_render.c (the scanline renderer), snes_timing.c (the clock, scanline events,
 * interrupts, WAI), snes_frame.c (environment configuration, the frame hook, the joypad script)
 * and snes_png.c (the PNG writer); snes_internal.h holds the state they share.
 * README.md beside this file says what is modelled and what is simplified.
 */
#ifndef RPT_SNES_H
#define RPT_SNES_H

#include <stdint.h>

/* ---- cartridge mappings (snes_power's mapping argument) */

#define SNES_LOROM 0
#define SNES_HIROM 1
#define SNES_EXHIROM 2

/* ---- the NTSC frame */

/* Master clocks per scanline (341 dots of 4 clocks; the few long dots are not modelled). */
#define SNES_CLOCKS_PER_LINE 1364u
/* Scanlines per NTSC frame (non-interlaced; the short line of odd frames is not modelled). */
#define SNES_LINES_PER_FRAME 262u
/* The first scanline of vertical blank without overscan ($2133 bit 2 clear); 240 with it. */
#define SNES_VBLANK_LINE 225u
/*
 * The frame boundary: where the frame hook runs, which is where the oracle (bsnes v094 with
 * bsnes-mercury's scheduler, framework/testkit/src/bsnes.rs) ends a frame. At most one frame ends
 * in each vertical blank:
 * - when the vblank NMI is raised: at the start of line SNES_VBLANK_LINE (240 with overscan) if
 *   $4200 bit 7 enables NMI at that moment. The hook runs as the NMI becomes pending, before the
 *   CPU can take it (the CPU takes it when it next asks snes_interrupt_pending, after the hook)
 *   and before that vblank's auto-joypad read;
 * - when a $4200 write enables NMI later in vertical blank while $4210 bit 7 is still set, so
 *   that the NMI fires at once (bsnes-mercury's source does this; the oracle's calibration did not
 *   measure it);
 * - otherwise, with NMI disabled, at the start of line SNES_FRAME_END_LINE_NMI_OFF.
 * Frame 0 starts at power-on. The input script's value for frame f is held from the end of frame
 * f - 1, so the auto-joypad read right after the boundary of frame f - 1 (NMI enabled) or in
 * frame f's own vertical blank (NMI disabled) delivers it, as the oracle's does.
 */
#define SNES_FRAME_END_LINE_NMI_OFF 241u

/* The picture the renderer makes: 256 x 224 pixels, 3 bytes (R, G, B) each, row by row. */
#define SNES_PICTURE_WIDTH 256
#define SNES_PICTURE_HEIGHT 224

/* ---- interrupts (snes_interrupt_pending's answer) */

#define SNES_NMI 1
#define SNES_IRQ 2

/* ---- memories that snes_memory hands out */

enum snes_region {
	SNES_REGION_WRAM,  /* 131072 bytes, $7E0000-$7FFFFF */
	SNES_REGION_VRAM,  /* 65536 bytes, word address w at bytes 2w (low) and 2w+1 (high) */
	SNES_REGION_CGRAM, /* 512 bytes, colour i at bytes 2i (low) and 2i+1 (high; $2122 writes bit 7 as 0) */
	SNES_REGION_OAM,   /* 544 bytes: the 512-byte low table, then the 32-byte high table */
	SNES_REGION_SRAM,  /* the cartridge's save RAM, sram_size bytes (may be 0) */
	SNES_REGION_ROM    /* the platform's copy of the ROM, rom_size bytes */
};

/* ---- the clock */

/*
 * Time in master clocks (21.477 MHz NTSC) since power-on, and the time of the next scheduled
 * event. Compiled code may add instruction times to `now` itself and then check
 * `if (snes_clock.now >= snes_clock.next_event) snes_run_events();`, which is what snes_advance
 * does.
 */
struct snes_clock {
	uint64_t now;
	uint64_t next_event;
};
extern struct snes_clock snes_clock;

/* ---- power */

/*
 * Powers the console on: copies the ROM (rom_size bytes, at most 0x7E0000, the most the mappings
 * reach; sizes that are not a power of two are mirrored the way cartridge boards wire them), maps
 * it per `mapping` (SNES_LOROM, SNES_HIROM or SNES_EXHIROM) with sram_size bytes of save RAM (0
 * for none, at most 512 KiB), fills WRAM, VRAM, CGRAM and OAM with the oracle's power-on contents
 * and SRAM with zeros (snes_power_fill in snes_bus.c), resets every register, sets the clock to 0
 * at the start of scanline 0, and reads the RPT_SNES_* environment variables (README.md lists
 * them). A ROM or SRAM too large, a bad variable or an input script with a bad line is reported
 * on stderr and ends the process with status 2. May be called again to start over.
 */
void snes_power(const uint8_t *rom, uint32_t rom_size, int mapping, uint32_t sram_size);

/* ---- the bus */

/*
 * Reads one byte at a 24-bit address (bank << 16 | offset) as the CPU does, with every side effect
 * (latches, flags cleared on read, address increments). Unmapped addresses and write-only
 * registers give open bus: the last value that was on the data bus. The value read becomes the
 * data bus's value.
 */
uint8_t snes_read(uint32_t addr24);

/*
 * Writes one byte at a 24-bit address as the CPU does: WRAM, SRAM, PPU and APU ports, CPU I/O and
 * DMA registers. Writes to ROM and to unmapped addresses change only the data bus's value.
 * Writing $420B runs the general DMA at once and advances snes_clock.now by its time.
 */
void snes_write(uint32_t addr24, uint8_t value);

/*
 * The master clocks one CPU bus access to addr24 takes: 6 (fast), 8 (slow) or 12 (joypad serial
 * ports $4000-$41FF), with banks $80-$FF above $8000 fast only while $420D bit 0 (FastROM) is set.
 * For the compiled CPU's timing; the platform itself never calls it.
 */
unsigned snes_access_clocks(uint32_t addr24);

/*
 * A memory of the console and its size in bytes (through *size when size is not NULL), for
 * tests, debuggers and compiled code that reaches WRAM directly. Layouts are in enum snes_region.
 */
uint8_t *snes_memory(enum snes_region region, uint32_t *size);

/* ---- time and interrupts */

/* Adds master_clocks to snes_clock.now, then runs the events that are due (snes_run_events). */
void snes_advance(uint32_t master_clocks);

/*
 * Runs every event whose time has come: scanline starts (rendering a line when pictures are
 * wanted), HDMA (at the horizontal blank of lines 0-224, initialised at the start of line 0),
 * the start of vertical blank (RDNMI, NMI, OAM address reload, auto-joypad read), H/V IRQs, the
 * end of vertical blank, and the frame hook at the frame boundary (above). Updates
 * snes_clock.next_event. HDMA advances snes_clock.now by the time it takes.
 */
void snes_run_events(void);

/*
 * The interrupt the CPU should take before its next instruction: SNES_NMI when an NMI is pending
 * (it is edge-triggered: pending from the moment it fires until snes_interrupt_taken), otherwise
 * SNES_IRQ when the IRQ line is held (TIMEUP, $4211 bit 7, set) and irq_disabled (the P.I flag)
 * is 0, otherwise 0.
 */
int snes_interrupt_pending(int irq_disabled);

/*
 * Tells the platform that the CPU has started the interrupt `which` (SNES_NMI or SNES_IRQ): an
 * NMI stops being pending. The IRQ line stays held until the handler reads $4211 or disables the
 * H/V IRQ in $4200, as on the console; taking it changes nothing.
 */
void snes_interrupt_taken(int which);

/*
 * WAI: advances time, running events, until an NMI is pending or the IRQ line is held (an IRQ
 * wakes WAI even while P.I is set; the CPU then decides with snes_interrupt_pending). When
 * neither NMI nor any H/V IRQ is enabled, no interrupt can ever arrive: the platform says so on
 * stderr and, if RPT_SNES_MAX_FRAMES is set, keeps running frames until that limit ends the
 * process with status 0 (so the frame files stay comparable with the oracle's); otherwise it ends
 * the process with status 1.
 */
void snes_wait_for_interrupt(void);

/* The current position: scanline 0-261 and master clock within it 0-1363. */
void snes_position(unsigned *line, unsigned *line_clock);

/* The number of frame hooks run so far (the next frame hook's frame number). */
uint64_t snes_frame_count(void);

/* ---- joypads */

/*
 * Sets what a joypad holds from now on (pad 0 is joypad 1, pad 1 joypad 2; others are ignored),
 * bits as $4219:$4218 deliver them (bit 15 B, 14 Y, 13 Select, 12 Start, 11 Up, 10 Down, 9 Left,
 * 8 Right, 7 A, 6 X, 5 L, 4 R). The input script (RPT_SNES_INPUT) calls this for joypad 1 at each
 * frame it names; an embedder without a script may call it.
 */
void snes_set_joypad(unsigned pad, uint16_t buttons);

/* ---- pictures */

/*
 * Renders the whole picture from the PPU state as it is now, every line with the same registers
 * (no HDMA effects), into rgb (SNES_PICTURE_WIDTH * SNES_PICTURE_HEIGHT * 3 bytes). The frame
 * hook instead uses the picture rendered line by line during the frame (snes_frame_picture).
 */
void snes_render_picture(uint8_t *rgb);

/*
 * The picture of the current frame as rendered so far line by line (lines 1-224 of the display
 * are rows 0-223). Lines are rendered only while pictures are wanted: RPT_SNES_PICTURES is set or
 * snes_set_line_rendering(1) was called.
 */
const uint8_t *snes_frame_picture(void);

/* Turns line-by-line rendering on (1) or off (0) regardless of RPT_SNES_PICTURES. */
void snes_set_line_rendering(int on);

/*
 * Writes an RGB picture (width * height * 3 bytes, row by row) as a PNG file: 8-bit truecolour,
 * one IDAT of stored (uncompressed) deflate blocks, so the bytes depend only on the pixels.
 * The file is opened, written and closed through the host's services (snes_host.h). Returns 0,
 * or -1 when the file cannot be written.
 */
int snes_write_png(const char *path, const uint8_t *rgb, unsigned width, unsigned height);

/* ---- hashes */

/* FNV-1a, 64 bits (offset basis 0xcbf29ce484222325, prime 0x100000001b3), over len bytes. */
uint64_t snes_fnv1a64(const uint8_t *data, uint32_t len);

#endif
