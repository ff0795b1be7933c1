/*
 * driver.c - plays the CPU against the SNES platform for tests/platform.rs: each subcommand
 * (argv[1]) drives the bus the way compiled 65816 code would and checks what comes back. A failed
 * check prints its line and the values and makes the exit status 1; "ok" on stdout means every
 * check passed. The frame subcommands run until RPT_SNES_MAX_FRAMES ends the process.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "snes.h"

static int failures;

#define CHECK_EQ(actual, expected)                                                              \
	do {                                                                                    \
		unsigned long long a_ = (unsigned long long)(actual);                           \
		unsigned long long e_ = (unsigned long long)(expected);                         \
		if (a_ != e_) {                                                                 \
			printf("driver.c:%d: %s is 0x%llx, expected 0x%llx\n", __LINE__, #actual, a_, e_); \
			failures++;                                                             \
		}                                                                               \
	} while (0)

static uint8_t rom_byte(uint32_t i)
{
	return (uint8_t)((i * 7u) ^ (i >> 8) ^ (i >> 16) * 31u);
}

static uint8_t *make_rom(uint32_t size)
{
	uint8_t *rom = malloc(size);
	for (uint32_t i = 0; i < size; i++)
		rom[i] = rom_byte(i);
	return rom;
}

/* Zeroes the memories that power-on fills with the oracle's pattern: most checks here expect it. */
static void clear_memories(void)
{
	static const enum snes_region regions[4] = { SNES_REGION_WRAM, SNES_REGION_VRAM, SNES_REGION_CGRAM,
		SNES_REGION_OAM };
	for (unsigned i = 0; i < 4; i++) {
		uint32_t size;
		uint8_t *memory = snes_memory(regions[i], &size);
		memset(memory, 0, size);
	}
}

/* A 512 KiB LoROM with 8 KiB of SRAM, powered on, its memories zeroed. */
static void power_lorom(void)
{
	uint8_t *rom = make_rom(0x80000);
	snes_power(rom, 0x80000, SNES_LOROM, 0x2000);
	free(rom);
	clear_memories();
}

static uint16_t vram_word(uint16_t w)
{
	uint8_t *v = snes_memory(SNES_REGION_VRAM, NULL);
	return (uint16_t)(v[2u * (w & 0x7fff)] | (v[2u * (w & 0x7fff) + 1] << 8));
}

static void set_vram_address(uint16_t w)
{
	snes_write(0x002116, (uint8_t)w);
	snes_write(0x002117, (uint8_t)(w >> 8));
}

/* Runs time forward to the next start of `line` (of this or the next frame). */
static void run_to_line(unsigned line)
{
	unsigned before, now_line;
	snes_position(&before, NULL);
	for (;;) {
		snes_advance(4);
		snes_position(&now_line, NULL);
		if (now_line == line && before != line)
			return;
		before = now_line;
	}
}

/* ---- memory map */

static void test_memory_map(void)
{
	uint8_t *rom;
	uint8_t *wram;

	/* LoROM, 1.5 MiB: 1 MiB and 512 KiB chips; offsets 1.5-2 MiB show the last 512 KiB again. */
	rom = make_rom(0x180000);
	snes_power(rom, 0x180000, SNES_LOROM, 0x2000);
	free(rom);
	CHECK_EQ(snes_read(0x008000), rom_byte(0));
	CHECK_EQ(snes_read(0x01ffff), rom_byte(0xffff));
	CHECK_EQ(snes_read(0x808000), rom_byte(0));
	CHECK_EQ(snes_read(0x2fffff), rom_byte(0x17ffff));
	CHECK_EQ(snes_read(0x308000), rom_byte(0x100000));
	CHECK_EQ(snes_read(0x3f8123), rom_byte(0x178123));
	CHECK_EQ(snes_read(0xbf8123), rom_byte(0x178123));
	CHECK_EQ(snes_read(0x408000), rom_byte(0));
	CHECK_EQ(snes_read(0xc28000), rom_byte(0x10000));
	/* The lower half of bank $40 is unmapped: open bus, the last value on the bus. */
	CHECK_EQ(snes_read(0x008001), rom_byte(1));
	CHECK_EQ(snes_read(0x401234), rom_byte(1));
	/* Unmapped I/O and write-only registers are open bus too. */
	CHECK_EQ(snes_read(0x008002), rom_byte(2));
	CHECK_EQ(snes_read(0x002000), rom_byte(2));
	CHECK_EQ(snes_read(0x004200), rom_byte(2));
	snes_write(0x7e0000, 0x5c);
	CHECK_EQ(snes_read(0x005000), 0x5c);

	/* WRAM and its first 8 KiB mirrored in the system banks. */
	wram = snes_memory(SNES_REGION_WRAM, NULL);
	snes_write(0x7e0123, 0x5a);
	CHECK_EQ(snes_read(0x000123), 0x5a);
	CHECK_EQ(snes_read(0x3f0123), 0x5a);
	CHECK_EQ(snes_read(0x800123), 0x5a);
	CHECK_EQ(snes_read(0xbf0123), 0x5a);
	snes_write(0x9f1fff, 0xa5);
	CHECK_EQ(snes_read(0x7e1fff), 0xa5);
	CHECK_EQ(wram[0x1fff], 0xa5);
	snes_write(0x7f0123, 0x77);
	CHECK_EQ(wram[0x10123], 0x77);
	CHECK_EQ(snes_read(0x7e0123), 0x5a);
	snes_write(0x7e2000, 0x99);
	CHECK_EQ(snes_read(0x008000), rom_byte(0));
	CHECK_EQ(snes_read(0x002000), rom_byte(0));

	/* LoROM SRAM: $70-$7D and $F0-$FF, $0000-$7FFF, 8 KiB mirrored. */
	snes_write(0x700005, 0x11);
	CHECK_EQ(snes_read(0x702005), 0x11);
	CHECK_EQ(snes_read(0xf00005), 0x11);
	CHECK_EQ(snes_read(0x7d6005), 0x11);
	CHECK_EQ(snes_memory(SNES_REGION_SRAM, NULL)[5], 0x11);
	/* Writes to ROM change nothing. */
	snes_write(0x008000, 0xee);
	CHECK_EQ(snes_read(0x008000), rom_byte(0));

	/* HiROM, 1 MiB, 8 KiB of SRAM. */
	rom = make_rom(0x100000);
	snes_power(rom, 0x100000, SNES_HIROM, 0x2000);
	free(rom);
	CHECK_EQ(snes_read(0xc00000), rom_byte(0));
	CHECK_EQ(snes_read(0xc12345), rom_byte(0x12345));
	CHECK_EQ(snes_read(0x408000), rom_byte(0x8000));
	CHECK_EQ(snes_read(0x018000), rom_byte(0x18000));
	CHECK_EQ(snes_read(0x818000), rom_byte(0x18000));
	CHECK_EQ(snes_read(0xd01234), rom_byte(0x1234));
	CHECK_EQ(snes_read(0x7d0000), rom_byte(0x3d0000 & 0xfffff));
	snes_write(0x206000, 0x42);
	CHECK_EQ(snes_read(0xa06000), 0x42);
	CHECK_EQ(snes_read(0x306000), 0x42);
	snes_write(0x217fff, 0x43);
	CHECK_EQ(snes_memory(SNES_REGION_SRAM, NULL)[0x1fff], 0x43);
	CHECK_EQ(snes_read(0x006000), 0x43); /* no SRAM below bank $20: open bus */

	/* ExHiROM, 6 MiB: $C0-$FF the first 4 MiB, $40-$7D the rest (mirrored past 6 MiB). */
	rom = make_rom(0x600000);
	snes_power(rom, 0x600000, SNES_EXHIROM, 0);
	free(rom);
	CHECK_EQ(snes_read(0xc00000), rom_byte(0));
	CHECK_EQ(snes_read(0xff1234), rom_byte(0x3f1234));
	CHECK_EQ(snes_read(0x400000), rom_byte(0x400000));
	CHECK_EQ(snes_read(0x5f0001), rom_byte(0x5f0001));
	CHECK_EQ(snes_read(0x600002), rom_byte(0x400002));
	CHECK_EQ(snes_read(0x008003), rom_byte(0x408003));
	CHECK_EQ(snes_read(0x808004), rom_byte(0x008004));

	/* A ROM whose size is not a multiple of 4 KiB goes through the slow path, mirrored alike. */
	rom = make_rom(0x10800);
	snes_power(rom, 0x10800, SNES_LOROM, 0);
	free(rom);
	CHECK_EQ(snes_read(0x028000), rom_byte(0x10000));
	CHECK_EQ(snes_read(0x028800), rom_byte(0x10000));
	CHECK_EQ(snes_read(0x038000), rom_byte(0x10000));
	CHECK_EQ(snes_read(0x018001), rom_byte(0x8001));

	/* Access times. */
	CHECK_EQ(snes_access_clocks(0x008000), 8);
	CHECK_EQ(snes_access_clocks(0x808000), 8);
	snes_write(0x00420d, 1);
	CHECK_EQ(snes_access_clocks(0x808000), 6);
	CHECK_EQ(snes_access_clocks(0xc00000), 6);
	CHECK_EQ(snes_access_clocks(0x408000), 8);
	CHECK_EQ(snes_access_clocks(0x000000), 8);
	CHECK_EQ(snes_access_clocks(0x002100), 6);
	CHECK_EQ(snes_access_clocks(0x004016), 12);
	CHECK_EQ(snes_access_clocks(0x004200), 6);
}

static void test_wram_port(void)
{
	uint8_t *wram;
	power_lorom();
	wram = snes_memory(SNES_REGION_WRAM, NULL);
	snes_write(0x002181, 0xff);
	snes_write(0x002182, 0xff);
	snes_write(0x002183, 0x01);
	snes_write(0x002180, 0x12);
	snes_write(0x002180, 0x34); /* the 17-bit address wraps to 0 */
	CHECK_EQ(wram[0x1ffff], 0x12);
	CHECK_EQ(wram[0], 0x34);
	snes_write(0x002181, 0xff);
	snes_write(0x002182, 0xff);
	snes_write(0x002183, 0x03); /* only bit 0 of the bank counts */
	CHECK_EQ(snes_read(0x002180), 0x12);
	CHECK_EQ(snes_read(0x002180), 0x34);
	/* $2181-$2183 cannot be read: open bus. */
	CHECK_EQ(snes_read(0x002181), 0x34);
}

/* ---- PPU ports */

static void test_vram(void)
{
	static const struct {
		uint8_t vmain;
		uint16_t addr, second;
	} steps[] = { { 0x80, 0x1000, 0x1001 }, { 0x81, 0x1100, 0x1120 }, { 0x82, 0x1200, 0x1280 }, { 0x83, 0x1300, 0x1380 } };
	power_lorom();
	/* Increment after the high byte by 1, 32, 128 and 128 words. */
	for (unsigned i = 0; i < 4; i++) {
		snes_write(0x002115, steps[i].vmain);
		set_vram_address(steps[i].addr);
		snes_write(0x002118, 0x11);
		snes_write(0x002119, 0x22);
		snes_write(0x002118, 0x33);
		snes_write(0x002119, 0x44);
		CHECK_EQ(vram_word(steps[i].addr), 0x2211);
		CHECK_EQ(vram_word(steps[i].second), 0x4433);
	}
	/* Increment after the low byte: each $2118 write moves on. */
	snes_write(0x002115, 0x00);
	set_vram_address(0x2000);
	snes_write(0x002118, 0xa1);
	snes_write(0x002118, 0xa2);
	snes_write(0x002119, 0xb2); /* high byte of 0x2002, no increment */
	snes_write(0x002119, 0xb3);
	snes_write(0x002118, 0xa3);
	CHECK_EQ(vram_word(0x2000), 0x00a1);
	CHECK_EQ(vram_word(0x2001), 0x00a2);
	CHECK_EQ(vram_word(0x2002), 0xb3a3);
	/* Address remapping: 0x1234 becomes 0x12a1, 0x13a0 and 0x11a4 under modes 1, 2 and 3. */
	{
		static const uint16_t remapped[4] = { 0x1234, 0x12a1, 0x13a0, 0x11a4 };
		for (unsigned m = 0; m < 4; m++) {
			snes_write(0x002115, (uint8_t)(0x80 | (m << 2)));
			set_vram_address(0x1234);
			snes_write(0x002118, (uint8_t)(0x50 + m));
			snes_write(0x002119, (uint8_t)(0x60 + m));
			CHECK_EQ(vram_word(remapped[m]), 0x6050 + 0x101 * m);
		}
	}
	/* Bit 15 of the address is ignored (32 K words). */
	snes_write(0x002115, 0x80);
	set_vram_address(0x9000);
	snes_write(0x002118, 0xcd);
	snes_write(0x002119, 0xab);
	CHECK_EQ(vram_word(0x1000), 0xabcd);

	/*
	 * Reads: setting the address loads the buffer; a read returns the buffer, and the read that
	 * increments reloads the buffer from the address before incrementing, so the first word
	 * comes twice (games do one dummy read).
	 */
	set_vram_address(0x1000);
	snes_write(0x002118, 0x11);
	snes_write(0x002119, 0x22);
	snes_write(0x002118, 0x33);
	snes_write(0x002119, 0x44);
	set_vram_address(0x1000);
	CHECK_EQ(snes_read(0x002139), 0x11);
	CHECK_EQ(snes_read(0x00213a), 0x22);
	CHECK_EQ(snes_read(0x002139), 0x11);
	CHECK_EQ(snes_read(0x00213a), 0x22);
	CHECK_EQ(snes_read(0x002139), 0x33);
	CHECK_EQ(snes_read(0x00213a), 0x44);
	/* With increment after the low byte, $2139 moves on and $213A does not. */
	snes_write(0x002115, 0x00);
	set_vram_address(0x1000);
	CHECK_EQ(snes_read(0x00213a), 0x22);
	CHECK_EQ(snes_read(0x002139), 0x11);
	CHECK_EQ(snes_read(0x002139), 0x11);
	CHECK_EQ(snes_read(0x00213a), 0x44);
	CHECK_EQ(snes_read(0x002139), 0x33);
	/* Writes do not touch the buffer. */
	set_vram_address(0x1000);
	snes_write(0x002118, 0x99);
	CHECK_EQ(snes_read(0x00213a), 0x22);
	/* Write-only PPU registers at $21x4-6/$21x8-A give the PPU1 open bus, others the CPU's. */
	snes_write(0x7e0000, 0x5c);
	CHECK_EQ(snes_read(0x002118), 0x22);
	CHECK_EQ(snes_read(0x002107), 0x22);
	snes_write(0x7e0000, 0x5d);
	CHECK_EQ(snes_read(0x002107), 0x5d);
}

static void test_cgram(void)
{
	uint8_t *cgram;
	power_lorom();
	cgram = snes_memory(SNES_REGION_CGRAM, NULL);
	snes_write(0x002121, 5);
	snes_write(0x002122, 0x34);
	CHECK_EQ(cgram[10], 0x00); /* the low byte waits for the high byte */
	snes_write(0x002122, 0xff);
	CHECK_EQ(cgram[10], 0x34);
	CHECK_EQ(cgram[11], 0x7f);
	snes_write(0x002122, 0x56);
	snes_write(0x002122, 0x12);
	CHECK_EQ(cgram[12], 0x56);
	CHECK_EQ(cgram[13], 0x12);
	/* Setting the address resets the latch. */
	snes_write(0x002121, 7);
	snes_write(0x002122, 0xaa);
	snes_write(0x002121, 8);
	snes_write(0x002122, 0xbb);
	snes_write(0x002122, 0x0c);
	CHECK_EQ(cgram[14], 0x00);
	CHECK_EQ(cgram[16], 0xbb);
	CHECK_EQ(cgram[17], 0x0c);
	/* Colour 255 wraps to colour 0. */
	snes_write(0x002121, 255);
	snes_write(0x002122, 0x01);
	snes_write(0x002122, 0x02);
	snes_write(0x002122, 0x03);
	snes_write(0x002122, 0x04);
	CHECK_EQ(cgram[510], 0x01);
	CHECK_EQ(cgram[511], 0x02);
	CHECK_EQ(cgram[0], 0x03);
	CHECK_EQ(cgram[1], 0x04);
	/* Reads: low byte, then high byte with bit 7 from the PPU2 open bus. */
	snes_write(0x002121, 5);
	CHECK_EQ(snes_read(0x00213b), 0x34);
	CHECK_EQ(snes_read(0x00213b), 0x7f);
	CHECK_EQ(snes_read(0x00213b), 0x56);
	CHECK_EQ(snes_read(0x00213b), 0x12);
	snes_write(0x002121, 8);
	CHECK_EQ(snes_read(0x00213b), 0xbb);
	CHECK_EQ(snes_read(0x00213b), 0x8c);
}

static void test_oam(void)
{
	uint8_t *oam;
	power_lorom();
	oam = snes_memory(SNES_REGION_OAM, NULL);
	snes_write(0x002102, 0);
	snes_write(0x002103, 0);
	snes_write(0x002104, 0x10);
	CHECK_EQ(oam[0], 0x00); /* low-table bytes go in pairs */
	snes_write(0x002104, 0x20);
	snes_write(0x002104, 0x30);
	snes_write(0x002104, 0x40);
	CHECK_EQ(oam[0], 0x10);
	CHECK_EQ(oam[1], 0x20);
	CHECK_EQ(oam[2], 0x30);
	CHECK_EQ(oam[3], 0x40);
	/* An unpaired even byte is never written. */
	snes_write(0x002102, 2);
	snes_write(0x002104, 0xaa);
	snes_write(0x002102, 0x7f);
	snes_write(0x002104, 0x01);
	snes_write(0x002104, 0x02);
	CHECK_EQ(oam[4], 0x00);
	CHECK_EQ(oam[0xfe], 0x01);
	CHECK_EQ(oam[0xff], 0x02);
	/* The high table: address bit 8 ($2103 bit 0), bytes written at once, 32 bytes mirrored. */
	snes_write(0x002102, 0);
	snes_write(0x002103, 1);
	snes_write(0x002104, 0x55);
	CHECK_EQ(oam[0x200], 0x55);
	snes_write(0x002104, 0x66);
	CHECK_EQ(oam[0x201], 0x66);
	snes_write(0x002102, 0x10);
	snes_write(0x002103, 0x81); /* priority rotation bit, byte address 0x220 */
	snes_write(0x002104, 0x77);
	CHECK_EQ(oam[0x200], 0x77);
	/* The low table ends at 0x1ff: writing on runs into the high table. */
	snes_write(0x002102, 0xff);
	snes_write(0x002103, 0x00);
	snes_write(0x002104, 0x03);
	snes_write(0x002104, 0x04);
	snes_write(0x002104, 0x88);
	CHECK_EQ(oam[0x1fe], 0x03);
	CHECK_EQ(oam[0x1ff], 0x04);
	CHECK_EQ(oam[0x200], 0x88);
	/* Reads. */
	snes_write(0x002102, 0);
	snes_write(0x002103, 0);
	CHECK_EQ(snes_read(0x002138), 0x10);
	CHECK_EQ(snes_read(0x002138), 0x20);
	CHECK_EQ(snes_read(0x002138), 0x30);
	CHECK_EQ(snes_read(0x002138), 0x40);
	snes_write(0x002103, 1);
	CHECK_EQ(snes_read(0x002138), 0x88);
	CHECK_EQ(snes_read(0x002138), 0x66);
}

/* ---- CPU I/O */

static void test_math(void)
{
	power_lorom();
	snes_write(0x004202, 12);
	snes_write(0x004203, 34);
	CHECK_EQ(snes_read(0x004216), 408 & 0xff);
	CHECK_EQ(snes_read(0x004217), 408 >> 8);
	snes_write(0x004202, 255);
	snes_write(0x004203, 255);
	CHECK_EQ(snes_read(0x004216) | (snes_read(0x004217) << 8), 65025);
	snes_write(0x004204, 1000 & 0xff);
	snes_write(0x004205, 1000 >> 8);
	snes_write(0x004206, 7);
	CHECK_EQ(snes_read(0x004214) | (snes_read(0x004215) << 8), 142);
	CHECK_EQ(snes_read(0x004216) | (snes_read(0x004217) << 8), 6);
	snes_write(0x004204, 0x34);
	snes_write(0x004205, 0x12);
	snes_write(0x004206, 0);
	CHECK_EQ(snes_read(0x004214) | (snes_read(0x004215) << 8), 0xffff);
	CHECK_EQ(snes_read(0x004216) | (snes_read(0x004217) << 8), 0x1234);
	snes_write(0x004204, 0xff);
	snes_write(0x004205, 0xff);
	snes_write(0x004206, 0xff);
	CHECK_EQ(snes_read(0x004214) | (snes_read(0x004215) << 8), 0x0101);
	CHECK_EQ(snes_read(0x004216) | (snes_read(0x004217) << 8), 0);
	/* The PPU's signed multiply: M7A (16 bits) times the last byte written to $211C. */
	snes_write(0x00211b, 0x00);
	snes_write(0x00211b, 0x80); /* M7A = -32768 */
	snes_write(0x00211c, 0x02); /* -32768 * 2 = -65536 = 0xff0000 */
	CHECK_EQ(snes_read(0x002134), 0x00);
	CHECK_EQ(snes_read(0x002135), 0x00);
	CHECK_EQ(snes_read(0x002136), 0xff);
	snes_write(0x00211b, 0x10);
	snes_write(0x00211b, 0x00); /* M7A = 0x0010 */
	snes_write(0x00211c, 0xfd); /* -3 */
	CHECK_EQ(snes_read(0x002134), 0xd0);
	CHECK_EQ(snes_read(0x002135), 0xff);
	CHECK_EQ(snes_read(0x002136), 0xff);
	/* RDIO reads what WRIO holds. */
	snes_write(0x004201, 0x5a);
	CHECK_EQ(snes_read(0x004213), 0x5a);
	/* DMA registers read back; $43xB and $43xF are one byte. */
	snes_write(0x004352, 0x12);
	snes_write(0x00435b, 0x34);
	CHECK_EQ(snes_read(0x004352), 0x12);
	CHECK_EQ(snes_read(0x00435f), 0x34);
	CHECK_EQ(snes_read(0x00437c), 0x34); /* open bus */
}

/* ---- DMA */

static void set_dma(unsigned ch, uint8_t params, uint8_t bbad, uint32_t a, uint16_t count)
{
	uint32_t base = 0x004300 + 0x10 * ch;
	snes_write(base + 0, params);
	snes_write(base + 1, bbad);
	snes_write(base + 2, (uint8_t)a);
	snes_write(base + 3, (uint8_t)(a >> 8));
	snes_write(base + 4, (uint8_t)(a >> 16));
	snes_write(base + 5, (uint8_t)count);
	snes_write(base + 6, (uint8_t)(count >> 8));
}

static void test_dma(void)
{
	uint8_t *wram, *vram, *cgram, *oam;
	uint64_t before;
	power_lorom();
	wram = snes_memory(SNES_REGION_WRAM, NULL);
	vram = snes_memory(SNES_REGION_VRAM, NULL);
	cgram = snes_memory(SNES_REGION_CGRAM, NULL);
	oam = snes_memory(SNES_REGION_OAM, NULL);
	for (unsigned i = 0; i < 0x400; i++)
		wram[0x2000 + i] = (uint8_t)(i * 3 + 1);

	/* WRAM to VRAM, mode 1 ($2118/$2119), 64 bytes. */
	snes_write(0x002115, 0x80);
	set_vram_address(0x4000);
	set_dma(0, 0x01, 0x18, 0x7e2000, 64);
	before = snes_clock.now;
	snes_write(0x00420b, 0x01);
	CHECK_EQ(snes_clock.now - before, 18 + 8 + 64 * 8);
	for (unsigned i = 0; i < 64; i++)
		CHECK_EQ(vram[0x8000 + i], wram[0x2000 + i]);
	CHECK_EQ(vram[0x8000 + 64], 0);
	CHECK_EQ(snes_read(0x004305), 0);
	CHECK_EQ(snes_read(0x004306), 0);
	CHECK_EQ(snes_read(0x004302), 0x40);
	CHECK_EQ(snes_read(0x004303), 0x20);

	/* To CGRAM (mode 0, $2122) on channel 3, from the WRAM mirror in bank $00. */
	snes_write(0x002121, 0);
	set_dma(3, 0x00, 0x22, 0x002000 - 0x1000, 32);
	snes_write(0x7e1000, 0);
	for (unsigned i = 0; i < 32; i++)
		wram[0x1000 + i] = (uint8_t)(0x40 + i);
	snes_write(0x00420b, 0x08);
	for (unsigned i = 0; i < 32; i++)
		CHECK_EQ(cgram[i], (uint8_t)(0x40 + i));

	/* To OAM (mode 0, $2104): all 544 bytes. */
	snes_write(0x002102, 0);
	snes_write(0x002103, 0);
	set_dma(7, 0x00, 0x04, 0x7e2000, 544);
	snes_write(0x00420b, 0x80);
	for (unsigned i = 0; i < 544; i++)
		CHECK_EQ(oam[i], wram[0x2000 + i]);

	/* Fixed A-bus address (bit 3) fills; decrement (bit 4) walks down. */
	set_vram_address(0x5000);
	wram[0x3000] = 0xee;
	set_dma(1, 0x09, 0x18, 0x7e3000, 8);
	snes_write(0x00420b, 0x02);
	for (unsigned i = 0; i < 8; i++)
		CHECK_EQ(vram[0xa000 + i], 0xee);
	set_dma(2, 0x10, 0x80, 0x7e2003, 4); /* to the WRAM port, which writes at $7E:4000 */
	snes_write(0x002181, 0x00);
	snes_write(0x002182, 0x40);
	snes_write(0x002183, 0x00);
	/* WRAM to the WRAM port does not work: nothing is written. */
	snes_write(0x00420b, 0x04);
	CHECK_EQ(wram[0x4000], 0);
	set_dma(2, 0x10, 0x80, 0xc08003, 4); /* from ROM instead: bytes 3, 2, 1, 0 */
	snes_write(0x00420b, 0x04);
	CHECK_EQ(wram[0x4000], rom_byte(3));
	CHECK_EQ(wram[0x4003], rom_byte(0));

	/* B-bus to A-bus: VRAM through $2139/$213A into WRAM, after the dummy read. */
	snes_write(0x002115, 0x80);
	set_vram_address(0x4000);
	(void)snes_read(0x00213a);
	set_dma(4, 0x81, 0x39, 0x7e5000, 64);
	snes_write(0x00420b, 0x10);
	for (unsigned i = 0; i < 64; i++)
		CHECK_EQ(wram[0x5000 + i], wram[0x2000 + i]);
	/* CGRAM back through $213B, into bank $7F. */
	snes_write(0x002121, 0);
	set_dma(5, 0x80, 0x3b, 0x7f0000, 32);
	snes_write(0x00420b, 0x20);
	for (unsigned i = 0; i < 32; i++)
		CHECK_EQ(wram[0x10000 + i], (uint8_t)(0x40 + i));
	/* Mode 3 writes two registers twice each: $2121 twice (the second address counts), $2122 twice. */
	wram[0x6000] = 5;
	wram[0x6001] = 6;
	wram[0x6002] = 0x34;
	wram[0x6003] = 0x12;
	set_dma(6, 0x03, 0x21, 0x7e6000, 4);
	snes_write(0x00420b, 0x40);
	CHECK_EQ(cgram[12], 0x34);
	CHECK_EQ(cgram[13], 0x12);
	/* A count of 0 moves 65536 bytes. */
	for (unsigned i = 0; i < 0x10000; i++)
		wram[0x10000 + i] = (uint8_t)(i ^ (i >> 8));
	snes_write(0x002115, 0x80);
	set_vram_address(0);
	set_dma(0, 0x01, 0x18, 0x7f0000, 0);
	before = snes_clock.now;
	snes_write(0x00420b, 0x01);
	CHECK_EQ(memcmp(vram, wram + 0x10000, 0x10000), 0);
	CHECK_EQ(snes_clock.now - before >= 18 + 8 + 65536 * 8, 1);
}

/* ---- HDMA */

/*
 * HDMA into a register whose effect can be read back: $2121, the CGRAM address, read through
 * $213B. CGRAM colour n holds n, so each line's HDMA value shows in the byte read first.
 */
static void test_hdma(void)
{
	uint8_t *wram, *cgram;
	power_lorom();
	wram = snes_memory(SNES_REGION_WRAM, NULL);
	cgram = snes_memory(SNES_REGION_CGRAM, NULL);
	for (unsigned i = 0; i < 256; i++) {
		cgram[2 * i] = (uint8_t)i;
		cgram[2 * i + 1] = 0;
	}
	/* Direct: 3 lines of colour $10; repeat for 2 lines ($20, $21); 2 lines of $30; end. */
	{
		static const uint8_t table[] = { 0x03, 0x10, 0x82, 0x20, 0x21, 0x02, 0x30, 0x00 };
		memcpy(wram + 0x0400, table, sizeof table);
	}
	set_dma(0, 0x00, 0x21, 0x7e0400, 0);
	/* Indirect on channel 2 into $2102 (OAM address, mode 0): data at $7F:0100. */
	{
		static const uint8_t table[] = { 0x81, 0x00, 0x01, 0x81, 0x01, 0x01, 0x00 };
		memcpy(wram + 0x0480, table, sizeof table);
		wram[0x10100] = 0x40;
		wram[0x10101] = 0x41;
	}
	set_dma(2, 0x40, 0x02, 0x7e0480, 0);
	snes_write(0x004327, 0x7f);
	snes_write(0x00420c, 0x05);
	run_to_line(0);
	/* Set up at the start of line 0: counter 3, table address past it. */
	CHECK_EQ(snes_read(0x00430a), 0x03);
	CHECK_EQ(snes_read(0x004308), 0x01);
	CHECK_EQ(snes_read(0x004309), 0x04);
	CHECK_EQ(snes_read(0x00432a), 0x81);
	CHECK_EQ(snes_read(0x004325), 0x00);
	CHECK_EQ(snes_read(0x004326), 0x01);
	{
		/*
		 * The HDMA of line l-1 is what line l sees. After each look the test points the
		 * addresses at a sentinel ($EE, $7F), which stays on lines where HDMA does not write.
		 */
		static const uint8_t expect_colour[8] = { 0x10, 0xee, 0xee, 0x20, 0x21, 0x30, 0xee, 0xee };
		static const uint8_t expect_oam[8] = { 0x40, 0x41, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f };
		uint8_t *oam = snes_memory(SNES_REGION_OAM, NULL);
		for (unsigned i = 0; i < 0x200; i++)
			oam[i] = (uint8_t)(i >> 1);
		for (unsigned l = 1; l <= 8; l++) {
			run_to_line(l);
			CHECK_EQ(snes_read(0x00213b), expect_colour[l - 1]);
			CHECK_EQ(snes_read(0x002138), expect_oam[l - 1]);
			snes_write(0x002121, 0xee);
			snes_write(0x002102, 0x7f);
		}
	}
	/* Channel 0's table ended: it reads no further. */
	CHECK_EQ(snes_read(0x004308), 0x08);
	CHECK_EQ(snes_read(0x00430a), 0x00);
	/* Next frame starts over from $43x2/3. */
	run_to_line(1);
	CHECK_EQ(snes_read(0x00213b), 0x10);
}

/* ---- NMI, IRQ, vblank */

static void test_nmi(void)
{
	unsigned line, clock;
	power_lorom();
	snes_position(&line, &clock);
	CHECK_EQ(line, 0);
	CHECK_EQ(snes_read(0x004210) & 0x8f, 0x02);
	CHECK_EQ(snes_read(0x004212) & 0x81, 0x00);
	snes_write(0x004200, 0x81);
	run_to_line(224);
	CHECK_EQ(snes_interrupt_pending(0), 0);
	CHECK_EQ(snes_read(0x004210) & 0x80, 0);
	run_to_line(225);
	CHECK_EQ(snes_interrupt_pending(1), SNES_NMI);
	CHECK_EQ(snes_interrupt_pending(0), SNES_NMI);
	CHECK_EQ(snes_read(0x004212) & 0x81, 0x81); /* vblank, auto-joypad busy */
	CHECK_EQ(snes_read(0x004210) & 0x8f, 0x82);
	CHECK_EQ(snes_read(0x004210) & 0x80, 0); /* cleared by the read */
	CHECK_EQ(snes_interrupt_pending(0), SNES_NMI); /* the edge was latched */
	snes_interrupt_taken(SNES_NMI);
	CHECK_EQ(snes_interrupt_pending(0), 0);
	snes_advance(4224);
	CHECK_EQ(snes_read(0x004212) & 0x81, 0x80); /* the auto-joypad read is over */
	run_to_line(0);
	CHECK_EQ(snes_read(0x004212) & 0x80, 0);
	CHECK_EQ(snes_interrupt_pending(0), 0);

	/* Without NMI enabled, RDNMI still rises; enabling NMI while it is set fires at once. */
	snes_write(0x004200, 0x00);
	run_to_line(226);
	CHECK_EQ(snes_interrupt_pending(0), 0);
	snes_write(0x004200, 0x80);
	CHECK_EQ(snes_interrupt_pending(0), SNES_NMI);
	snes_interrupt_taken(SNES_NMI);
	/* RDNMI is cleared at the end of vblank even if never read. */
	snes_write(0x004200, 0x00);
	run_to_line(0);
	CHECK_EQ(snes_read(0x004210) & 0x80, 0);

	/* hblank flag */
	snes_position(&line, &clock);
	CHECK_EQ(snes_read(0x004212) & 0x40, 0x40); /* clock 0-3: still hblank */
	snes_advance(100);
	CHECK_EQ(snes_read(0x004212) & 0x40, 0);
	snes_advance(1100);
	CHECK_EQ(snes_read(0x004212) & 0x40, 0x40);

	/* V IRQ at line 100. */
	snes_write(0x004209, 100);
	snes_write(0x00420a, 0);
	snes_write(0x004200, 0x20);
	run_to_line(99);
	CHECK_EQ(snes_interrupt_pending(0), 0);
	run_to_line(100);
	snes_advance(16);
	CHECK_EQ(snes_interrupt_pending(1), 0);
	CHECK_EQ(snes_interrupt_pending(0), SNES_IRQ);
	snes_interrupt_taken(SNES_IRQ);
	CHECK_EQ(snes_interrupt_pending(0), SNES_IRQ); /* level: held until $4211 is read */
	CHECK_EQ(snes_read(0x004211) & 0x80, 0x80);
	CHECK_EQ(snes_read(0x004211) & 0x80, 0);
	CHECK_EQ(snes_interrupt_pending(0), 0);
	/* H IRQ at dot 200 of every line. */
	snes_write(0x004207, 200);
	snes_write(0x004208, 0);
	snes_write(0x004200, 0x10);
	run_to_line(50);
	(void)snes_read(0x004211); /* the IRQs of the lines on the way */
	snes_advance(4 * 200 - 8);
	CHECK_EQ(snes_interrupt_pending(0), 0);
	snes_advance(32);
	CHECK_EQ(snes_interrupt_pending(0), SNES_IRQ);
	(void)snes_read(0x004211);
	run_to_line(51);
	snes_advance(4 * 200 + 24);
	CHECK_EQ(snes_interrupt_pending(0), SNES_IRQ);
	/* Disabling H and V IRQ releases the line. */
	snes_write(0x004200, 0x00);
	CHECK_EQ(snes_interrupt_pending(0), 0);
	/* H+V: only at line VTIME. */
	snes_write(0x004209, 60);
	snes_write(0x004200, 0x30);
	run_to_line(59);
	snes_advance(1300);
	CHECK_EQ(snes_interrupt_pending(0), 0);
	run_to_line(60);
	snes_advance(4 * 200 + 24);
	CHECK_EQ(snes_interrupt_pending(0), SNES_IRQ);
	(void)snes_read(0x004211);

	/* WAI with NMI enabled wakes at line 225. */
	snes_write(0x004200, 0x80);
	run_to_line(10);
	snes_interrupt_taken(SNES_NMI); /* the one of the vblank on the way */
	snes_wait_for_interrupt();
	snes_position(&line, &clock);
	CHECK_EQ(line, 225);
	CHECK_EQ(snes_interrupt_pending(1), SNES_NMI);
	snes_interrupt_taken(SNES_NMI);
	/* Counters latched by reading $2137. */
	run_to_line(30);
	snes_advance(400);
	(void)snes_read(0x002137);
	{
		unsigned h = snes_read(0x00213c), h_high = snes_read(0x00213c) & 1;
		unsigned v = snes_read(0x00213d), v_high = snes_read(0x00213d) & 1;
		h |= h_high << 8;
		v |= v_high << 8;
		CHECK_EQ(v, 30);
		CHECK_EQ(h >= 100 && h <= 103, 1);
		CHECK_EQ(snes_read(0x00213f) & 0x4f, 0x43);
		CHECK_EQ(snes_read(0x00213f) & 0x40, 0x00);
	}
}

/* WAI with no interrupt enabled: the process ends with a message (status 1). */
static void test_wai_forever(void)
{
	power_lorom();
	snes_write(0x004200, 0x00);
	snes_wait_for_interrupt();
	printf("WAI returned\n");
}

/* ---- joypads */

/* Needs RPT_SNES_INPUT naming a script that holds 0x8000 from frame 1 and 0x0c40 from frame 3. */
static void test_joypad(void)
{
	static const uint16_t expect[5] = { 0x0000, 0x8000, 0x8000, 0x0c40, 0x0c40 };
	power_lorom();
	snes_write(0x004200, 0x01);
	for (unsigned f = 0; f < 5; f++) {
		run_to_line(225);
		CHECK_EQ(snes_frame_count(), f);
		CHECK_EQ(snes_read(0x004212) & 1, 1);
		snes_advance(4300);
		CHECK_EQ(snes_read(0x004212) & 1, 0);
		CHECK_EQ(snes_read(0x004218) | (snes_read(0x004219) << 8), expect[f]);
		CHECK_EQ(snes_read(0x00421a) | (snes_read(0x00421b) << 8), 0);
		/* After the auto-read the serial port gives 1s... */
		CHECK_EQ(snes_read(0x004016) & 1, 1);
		/* ...until the latch: then B, Y, Select, Start, Up, Down, Left, Right, A, X, L, R, 0000, 1s. */
		snes_write(0x004016, 1);
		snes_write(0x004016, 0);
		for (unsigned bit = 0; bit < 16; bit++)
			CHECK_EQ(snes_read(0x004016) & 1, (expect[f] >> (15 - bit)) & 1);
		CHECK_EQ(snes_read(0x004016) & 1, 1);
		CHECK_EQ(snes_read(0x004017) & 0x1d, 0x1c); /* pad 2: B not pressed */
		run_to_line(SNES_FRAME_END_LINE_NMI_OFF);
		snes_advance(8);
	}
	/* Without auto-read enabled, $4218 keeps its value. */
	snes_write(0x004200, 0x00);
	run_to_line(226);
	CHECK_EQ(snes_read(0x004218) | (snes_read(0x004219) << 8), 0x0c40);
	CHECK_EQ(snes_read(0x004212) & 1, 0);
}

/*
 * With NMI enabled the frame ends at line 225, and the auto-joypad read right after delivers the
 * next frame's value. Needs RPT_SNES_INPUT naming a script that holds 0x0080 from frame 0, 0x8000
 * from frame 1 and 0x0c40 from frame 3.
 */
static void test_joypad_nmi(void)
{
	static const uint16_t expect[5] = { 0x8000, 0x8000, 0x0c40, 0x0c40, 0x0c40 };
	power_lorom();
	/* Frame 0's value reaches no auto-read; a manual read in frame 0 sees it. */
	snes_write(0x004016, 1);
	snes_write(0x004016, 0);
	for (unsigned bit = 0; bit < 16; bit++)
		CHECK_EQ(snes_read(0x004016) & 1, (0x0080 >> (15 - bit)) & 1);
	snes_write(0x004200, 0x81);
	for (unsigned v = 0; v < 5; v++) {
		run_to_line(225);
		CHECK_EQ(snes_frame_count(), v + 1);
		CHECK_EQ(snes_interrupt_pending(0), SNES_NMI);
		snes_interrupt_taken(SNES_NMI);
		snes_advance(4300);
		CHECK_EQ(snes_read(0x004218) | (snes_read(0x004219) << 8), expect[v]);
	}
}

/* ---- the frame boundary */

static void test_frame_boundary(void)
{
	power_lorom();
	CHECK_EQ(snes_frame_count(), 0);
	/* NMI enabled: the frame ends at the start of line 225, as the NMI becomes pending. */
	snes_write(0x004200, 0x80);
	run_to_line(224);
	CHECK_EQ(snes_frame_count(), 0);
	run_to_line(225);
	CHECK_EQ(snes_frame_count(), 1);
	CHECK_EQ(snes_interrupt_pending(0), SNES_NMI);
	snes_interrupt_taken(SNES_NMI);
	/* One frame ends per vertical blank: line 241 ends none. */
	run_to_line(241);
	CHECK_EQ(snes_frame_count(), 1);

	/* NMI disabled: the next frame ends at line 241 of the next video frame (278 lines). */
	snes_write(0x004200, 0x00);
	run_to_line(225);
	CHECK_EQ(snes_frame_count(), 1);
	CHECK_EQ(snes_interrupt_pending(0), 0);
	run_to_line(241);
	CHECK_EQ(snes_frame_count(), 2);
	/* Enabling NMI after that, with $4210 bit 7 unread, fires the NMI but ends no frame. */
	snes_write(0x004200, 0x80);
	CHECK_EQ(snes_interrupt_pending(0), SNES_NMI);
	CHECK_EQ(snes_frame_count(), 2);
	snes_interrupt_taken(SNES_NMI);
	run_to_line(225);
	CHECK_EQ(snes_frame_count(), 3);
	snes_interrupt_taken(SNES_NMI);

	/* Enabling NMI in vertical blank before line 241, $4210 bit 7 unread: NMI and frame end at once. */
	snes_write(0x004200, 0x00);
	run_to_line(225);
	CHECK_EQ(snes_frame_count(), 3);
	run_to_line(230);
	snes_write(0x004200, 0x80);
	CHECK_EQ(snes_interrupt_pending(0), SNES_NMI);
	CHECK_EQ(snes_frame_count(), 4);
	snes_interrupt_taken(SNES_NMI);
	run_to_line(241);
	CHECK_EQ(snes_frame_count(), 4);

	/* After $4210 was read, enabling NMI fires nothing, and line 241 ends the frame. */
	snes_write(0x004200, 0x00);
	run_to_line(225);
	(void)snes_read(0x004210);
	snes_write(0x004200, 0x80);
	CHECK_EQ(snes_interrupt_pending(0), 0);
	CHECK_EQ(snes_frame_count(), 4);
	run_to_line(241);
	CHECK_EQ(snes_frame_count(), 5);
	run_to_line(225);
	CHECK_EQ(snes_frame_count(), 6);
}

/* ---- power-on memory: WRAM, VRAM, CGRAM and OAM as they are, into the file $SNES_DRIVER_DUMP */

static void test_power_on_memory(void)
{
	static const enum snes_region regions[4] = { SNES_REGION_WRAM, SNES_REGION_VRAM, SNES_REGION_CGRAM,
		SNES_REGION_OAM };
	const char *path = getenv("SNES_DRIVER_DUMP");
	uint8_t *rom = make_rom(0x80000);
	FILE *f;
	snes_power(rom, 0x80000, SNES_LOROM, 0x2000);
	free(rom);
	if (!path || !(f = fopen(path, "wb"))) {
		printf("driver.c: SNES_DRIVER_DUMP names no file to write\n");
		failures++;
		return;
	}
	for (unsigned i = 0; i < 4; i++) {
		uint32_t size;
		const uint8_t *memory = snes_memory(regions[i], &size);
		CHECK_EQ(fwrite(memory, 1, size, f), size);
	}
	CHECK_EQ(fclose(f), 0);
	CHECK_EQ(snes_memory(SNES_REGION_SRAM, NULL)[0x1fff], 0);
}

/* ---- APU stub */

static void test_apu(void)
{
	uint8_t *wram;
	power_lorom();
	wram = snes_memory(SNES_REGION_WRAM, NULL);
	CHECK_EQ(snes_read(0x002140), 0xaa);
	CHECK_EQ(snes_read(0x002141), 0xbb);
	CHECK_EQ(snes_read(0x002142), 0x00);
	CHECK_EQ(snes_read(0x002143), 0x00);
	CHECK_EQ(snes_read(0x002177), 0x00); /* $2140-$217F mirror the four ports */
	CHECK_EQ(snes_read(0x002175), 0xbb);
	/* The boot ROM ignores anything but $CC in port 0 at first. */
	snes_write(0x002140, 0x12);
	CHECK_EQ(snes_read(0x002140), 0xaa);
	/* An upload: address $0200 in ports 2/3, nonzero port 1, $CC in port 0 comes back. */
	snes_write(0x002142, 0x00);
	snes_write(0x002143, 0x02);
	snes_write(0x002141, 0x01);
	snes_write(0x002140, 0xcc);
	CHECK_EQ(snes_read(0x002140), 0xcc);
	CHECK_EQ(snes_read(0x002141), 0xbb); /* the boot ROM never writes port 1 */
	snes_write(0x002140, 0x05); /* not index 0: ignored */
	CHECK_EQ(snes_read(0x002140), 0xcc);
	for (unsigned i = 0; i < 300; i++) {
		snes_write(0x002141, (uint8_t)(0x30 + i));
		snes_write(0x002140, (uint8_t)i);
		CHECK_EQ(snes_read(0x002140), i & 0xff);
	}
	/* A stale index is ignored; a new command (the last index + 2) starts another block. */
	snes_write(0x002140, 0x2a);
	CHECK_EQ(snes_read(0x002140), 299 & 0xff);
	snes_write(0x002141, 0x01);
	snes_write(0x002140, (299 + 2) & 0xff);
	CHECK_EQ(snes_read(0x002140), (299 + 2) & 0xff);
	snes_write(0x002141, 0x99);
	snes_write(0x002140, 0x00);
	CHECK_EQ(snes_read(0x002140), 0x00);
	/* The jump: port 1 = 0 with a command; from then on every port echoes. */
	snes_write(0x002141, 0x00);
	snes_write(0x002140, 0x02);
	CHECK_EQ(snes_read(0x002140), 0x02);
	CHECK_EQ(snes_read(0x002141), 0xbb);
	/* DMA mode 4 writes four registers in turn: the four ports. */
	for (unsigned i = 0; i < 4; i++)
		wram[0x6000 + i] = (uint8_t)(0xa0 + i);
	set_dma(6, 0x04, 0x40, 0x7e6000, 4);
	snes_write(0x00420b, 0x40);
	for (unsigned i = 0; i < 4; i++)
		CHECK_EQ(snes_read(0x002140 + i), 0xa0 + i);
}

/* ---- the renderer */

static void write_colour(unsigned index, uint16_t bgr)
{
	snes_write(0x002121, (uint8_t)index);
	snes_write(0x002122, (uint8_t)bgr);
	snes_write(0x002122, (uint8_t)(bgr >> 8));
}

/* A 2bpp or 4bpp tile whose every pixel has colour `colour`, at VRAM word address `w`. */
static void solid_tile(uint16_t w, unsigned bpp, unsigned colour)
{
	snes_write(0x002115, 0x80);
	set_vram_address(w);
	for (unsigned pair = 0; pair < bpp / 2; pair++) {
		for (unsigned row = 0; row < 8; row++) {
			snes_write(0x002118, (colour >> (2 * pair)) & 1 ? 0xff : 0x00);
			snes_write(0x002119, (colour >> (2 * pair + 1)) & 1 ? 0xff : 0x00);
		}
	}
}

/* Tile with colour 1 only in its top-left pixel (2bpp), at VRAM word address w. */
static void corner_tile(uint16_t w)
{
	snes_write(0x002115, 0x80);
	set_vram_address(w);
	snes_write(0x002118, 0x80);
	snes_write(0x002119, 0x00);
	for (unsigned row = 1; row < 8; row++) {
		snes_write(0x002118, 0);
		snes_write(0x002119, 0);
	}
}

static void set_map(uint16_t map_base, unsigned tx, unsigned ty, uint16_t entry)
{
	snes_write(0x002115, 0x80);
	set_vram_address((uint16_t)(map_base + ty * 32 + tx));
	snes_write(0x002118, (uint8_t)entry);
	snes_write(0x002119, (uint8_t)(entry >> 8));
}

static unsigned pixel(const uint8_t *rgb, unsigned x, unsigned y)
{
	const uint8_t *p = rgb + 3 * (y * SNES_PICTURE_WIDTH + x);
	return (unsigned)(p[0] << 16 | p[1] << 8 | p[2]);
}

static void test_render(void)
{
	static uint8_t rgb[SNES_PICTURE_WIDTH * SNES_PICTURE_HEIGHT * 3];
	power_lorom();
	/* Forced blank at power-on: black. */
	write_colour(0, 0x7fff);
	snes_render_picture(rgb);
	CHECK_EQ(pixel(rgb, 10, 10), 0x000000);
	/* Backdrop only, full brightness: white; brightness 0 is black. */
	snes_write(0x002100, 0x0f);
	snes_render_picture(rgb);
	CHECK_EQ(pixel(rgb, 10, 10), 0xffffff);
	snes_write(0x002100, 0x00);
	snes_render_picture(rgb);
	CHECK_EQ(pixel(rgb, 10, 10), 0x000000);
	snes_write(0x002100, 0x0f);

	/* Mode 0: BG1 map at word $0400, chars at $1000; BG2 map $0800, chars $2000. */
	write_colour(0, 0x0000);
	write_colour(1, 0x001f);       /* BG1 palette 0 colour 1: red */
	write_colour(2 * 4 + 1, 0x03e0); /* BG1 palette 2 colour 1: green */
	write_colour(32 + 3, 0x7c00);  /* BG2 palette 0 colour 3: blue */
	snes_write(0x002105, 0x00);
	snes_write(0x002107, 0x04);
	snes_write(0x002108, 0x08);
	snes_write(0x00210b, 0x21);
	solid_tile(0x1000 + 8 * 1, 2, 1); /* BG1 tile 1 */
	corner_tile(0x1000 + 8 * 2);      /* BG1 tile 2 */
	solid_tile(0x2000 + 8 * 1, 2, 3); /* BG2 tile 1 */
	/* Vertical offset 0 shows BG row 1 on the first line: scroll to -1 so tile rows line up. */
	for (unsigned bg = 0; bg < 2; bg++) {
		snes_write(0x00210e + 2 * bg, 0xff);
		snes_write(0x00210e + 2 * bg, 0x03);
	}
	set_map(0x0400, 0, 0, 0x0001);
	set_map(0x0400, 1, 0, 0x0801);      /* palette 2 */
	set_map(0x0400, 2, 0, 0x2001);      /* priority 1 */
	set_map(0x0400, 3, 0, 0x4002);      /* horizontal flip of the corner tile */
	set_map(0x0400, 4, 0, 0xc002);      /* both flips */
	set_map(0x0800, 0, 0, 0x2001);      /* BG2 priority 1 beneath BG1 tile 0 (priority 0) */
	set_map(0x0800, 2, 0, 0x2001);
	set_map(0x0800, 5, 0, 0x0001);
	snes_write(0x00212c, 0x03);
	snes_render_picture(rgb);
	CHECK_EQ(pixel(rgb, 0, 0), 0x0000ff);   /* mode 0: 2H in front of 1L */
	CHECK_EQ(pixel(rgb, 8, 0), 0x00ff00);   /* palette 2 */
	CHECK_EQ(pixel(rgb, 16, 0), 0xff0000);  /* 1H in front of 2H */
	CHECK_EQ(pixel(rgb, 24, 0), 0x000000);
	CHECK_EQ(pixel(rgb, 31, 0), 0xff0000);  /* the flipped corner */
	CHECK_EQ(pixel(rgb, 39, 7), 0xff0000);
	CHECK_EQ(pixel(rgb, 32, 0), 0x000000);
	CHECK_EQ(pixel(rgb, 40, 0), 0x0000ff);  /* BG2 alone */
	CHECK_EQ(pixel(rgb, 0, 8), 0x000000);
	/* $212C: BG2 off. */
	snes_write(0x00212c, 0x01);
	snes_render_picture(rgb);
	CHECK_EQ(pixel(rgb, 0, 0), 0xff0000);
	CHECK_EQ(pixel(rgb, 40, 0), 0x000000);
	/* Horizontal scroll by 8 (write twice: low then high), and the 64-wide map. */
	snes_write(0x00210d, 0x08);
	snes_write(0x00210d, 0x00);
	snes_render_picture(rgb);
	CHECK_EQ(pixel(rgb, 0, 0), 0x00ff00);
	snes_write(0x00210d, 0xf8);
	snes_write(0x00210d, 0x00); /* 248: tile 31, then tile 0 of the next (same) 32-wide screen */
	snes_render_picture(rgb);
	CHECK_EQ(pixel(rgb, 0, 0), 0x000000);
	CHECK_EQ(pixel(rgb, 8, 0), 0xff0000);
	snes_write(0x002107, 0x05); /* 64x32: the right screen at $0800 (BG2's map, tile 5) */
	snes_write(0x00210d, 0x00);
	snes_write(0x00210d, 0x01); /* 256 */
	snes_render_picture(rgb);
	CHECK_EQ(pixel(rgb, 0, 0), 0xff0000);   /* BG1 reads $0800's (0,0): tile 1 */
	CHECK_EQ(pixel(rgb, 40, 0), 0xff0000);  /* (5,0) of that screen: tile 1 */
	CHECK_EQ(pixel(rgb, 8, 0), 0x000000);
	snes_write(0x00210d, 0x00);
	snes_write(0x00210d, 0x00);
	snes_write(0x002107, 0x04);
	/* 16x16 tiles on BG1: map entry 1 draws tiles 1, 2, 17, 18. */
	snes_write(0x002105, 0x10);
	snes_render_picture(rgb);
	CHECK_EQ(pixel(rgb, 0, 0), 0xff0000);
	CHECK_EQ(pixel(rgb, 8, 0), 0xff0000);  /* tile 2's corner */
	CHECK_EQ(pixel(rgb, 9, 0), 0x000000);
	CHECK_EQ(pixel(rgb, 16, 0), 0x00ff00); /* map entry (1,0) with palette 2 */
	snes_write(0x002105, 0x00);

	/* Mode 1: BG1 4bpp (chars $1000), BG3 2bpp (map $0c00, chars $3000) with the priority bit. */
	write_colour(15, 0x7fff);          /* BG1 palette 0 colour 15: white */
	write_colour(4 * 1 + 2, 0x03ff);   /* BG3 palette 1 colour 2: yellow */
	solid_tile(0x1000 + 16 * 3, 4, 15); /* BG1 4bpp tile 3 */
	solid_tile(0x3000 + 8 * 1, 2, 2);  /* BG3 tile 1 */
	snes_write(0x002109, 0x0c);
	snes_write(0x00210c, 0x03);
	snes_write(0x002112, 0xff);
	snes_write(0x002112, 0x03);
	for (unsigned tx = 0; tx < 8; tx++)
		set_map(0x0400, tx, 1, 0x0003);
	set_map(0x0c00, 0, 1, 0x2401);     /* BG3 palette 1, priority 1 */
	set_map(0x0c00, 1, 1, 0x0401);     /* priority 0 */
	set_map(0x0c00, 2, 1, 0x2401);
	set_map(0x0400, 2, 1, 0x0010);     /* BG1 transparent at (2,1): tile 16 is empty */
	snes_write(0x002105, 0x01);
	snes_write(0x00212c, 0x05);
	snes_render_picture(rgb);
	CHECK_EQ(pixel(rgb, 0, 8), 0xffffff);  /* BG3 high is behind BG1 low without bit 3 */
	CHECK_EQ(pixel(rgb, 8, 8), 0xffffff);
	CHECK_EQ(pixel(rgb, 16, 8), 0xffff00);
	snes_write(0x002105, 0x09);
	snes_render_picture(rgb);
	CHECK_EQ(pixel(rgb, 0, 8), 0xffff00);  /* with bit 3 it comes in front of everything */
	CHECK_EQ(pixel(rgb, 8, 8), 0xffffff);
	/* Half brightness. */
	snes_write(0x002100, 0x07);
	snes_render_picture(rgb);
	CHECK_EQ(pixel(rgb, 8, 8), 0x737373);

	/* Sprites: 8x8, chars at $4000, a 4bpp tile of colour 5 in palette 1 (CGRAM 128+16+5). */
	snes_write(0x002100, 0x0f);
	write_colour(128 + 16 + 5, 0x7c1f); /* magenta */
	solid_tile(0x4000 + 16 * 2, 4, 5);
	snes_write(0x002101, 0x02); /* base $4000, sizes 8/16 */
	snes_write(0x002102, 0);
	snes_write(0x002103, 0);
	/* Sprite 0 at (100, 50), tile 2, palette 1, priority 3; sprite 1 at (-4, 60) priority 2. */
	{
		static const uint8_t sprites[8] = { 100, 50, 2, 0x32, 0xfc, 60, 2, 0x22 };
		for (unsigned i = 0; i < 8; i++)
			snes_write(0x002104, sprites[i]);
		for (unsigned i = 8; i < 512; i += 4) {
			snes_write(0x002104, 0);
			snes_write(0x002104, 240); /* off screen */
			snes_write(0x002104, 0);
			snes_write(0x002104, 0);
		}
		snes_write(0x002104, 0x04); /* sprite 1: X bit 8 set, small */
	}
	snes_write(0x00212c, 0x15);
	snes_render_picture(rgb);
	CHECK_EQ(pixel(rgb, 100, 50), 0xff00ff);
	CHECK_EQ(pixel(rgb, 107, 57), 0xff00ff);
	CHECK_EQ(pixel(rgb, 108, 50), 0x000000);
	CHECK_EQ(pixel(rgb, 100, 49), 0x000000);
	CHECK_EQ(pixel(rgb, 0, 60), 0xff00ff);   /* X = -4: columns 4-7 show */
	CHECK_EQ(pixel(rgb, 3, 60), 0xff00ff);
	CHECK_EQ(pixel(rgb, 4, 60), 0x000000);
}

/* ---- frames: a picture worth writing, then time runs until RPT_SNES_MAX_FRAMES */

static void test_frames(void)
{
	power_lorom();
	write_colour(0, 0x2108);
	write_colour(1, 0x001f);
	write_colour(2, 0x03e0);
	write_colour(3, 0x7c00);
	snes_write(0x002107, 0x04);
	snes_write(0x00210b, 0x01);
	solid_tile(0x1000 + 8, 2, 1);
	solid_tile(0x1000 + 16, 2, 2);
	solid_tile(0x1000 + 24, 2, 3);
	for (unsigned i = 0; i < 28; i++)
		set_map(0x0400, i, i, (uint16_t)(1 + i % 3));
	snes_write(0x00212c, 0x01);
	snes_write(0x002100, 0x0f);
	snes_write(0x004200, 0x81);
	for (uint32_t i = 0;; i++) {
		/* A main loop: wait for the NMI, then change WRAM and scroll a little. */
		snes_wait_for_interrupt();
		if (snes_interrupt_pending(0) == SNES_NMI) {
			snes_interrupt_taken(SNES_NMI);
			(void)snes_read(0x004210);
			snes_write(0x7e0000 + (i & 0xff), (uint8_t)i);
			snes_write(0x00210d, (uint8_t)i);
			snes_write(0x00210d, 0);
		}
		snes_advance(1000);
	}
}

/* Powers on and stops (for the input-script and environment errors). */
static void test_power(void)
{
	power_lorom();
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		void (*run)(void);
	} tests[] = {
		{ "memory_map", test_memory_map }, { "wram_port", test_wram_port }, { "vram", test_vram },
		{ "cgram", test_cgram }, { "oam", test_oam }, { "math", test_math }, { "dma", test_dma }, { "hdma", test_hdma },
		{ "nmi", test_nmi }, { "wai_forever", test_wai_forever }, { "joypad", test_joypad },
		{ "joypad_nmi", test_joypad_nmi }, { "frame_boundary", test_frame_boundary },
		{ "power_on_memory", test_power_on_memory },
		{ "apu", test_apu }, { "render", test_render }, { "frames", test_frames }, { "power", test_power },
	};
	if (argc != 2) {
		fprintf(stderr, "usage: driver <test>\n");
		return 2;
	}
	for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++) {
		if (strcmp(argv[1], tests[i].name) == 0) {
			tests[i].run();
			if (failures)
				return 1;
			printf("ok\n");
			return 0;
		}
	}
	fprintf(stderr, "driver: no test %s\n", argv[1]);
	return 2;
}
