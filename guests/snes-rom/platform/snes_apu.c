/*
 * snes_apu.c - a stub for the audio unit behind the ports $2140-$2143 (mirrored through $217F).
 * No SPC700, DSP or sound: only what the CPU sees of the APU's boot ROM while it uploads a sound
 * driver, and an echo afterwards.
 *
 * What is emulated, stage by stage:
 * - READY (after power-on): the boot ROM has put $AA in port 0 and $BB in port 1; ports 2 and
 *   3 read $00. It waits for the CPU to write $CC to port 0.
 * - A command (port 0 written with $CC in READY, or with a value that is not the next byte's
 *   index during an upload, i.e. ahead of it by 1-128): port 0 echoes the value. When port 1
 *   holds a nonzero value the boot ROM receives a block (at the address the CPU put in ports 2
 *   and 3, which the stub ignores): stage BLOCK_START. When port 1 holds 0 it jumps to the
 *   uploaded driver: stage DRIVER.
 * - BLOCK_START: the boot ROM waits for index 0 in port 0, ignoring every other value.
 * - BLOCK: when port 0 receives the next byte's index (0, 1, ... wrapping at 256) the byte in
 *   port 1 is taken and port 0 echoes the index.
 * - DRIVER: the uploaded program would run now; the stub makes every port read back the last
 *   value the CPU wrote to it (the command echo of many drivers), and ports never written since
 *   the boot ROM keep what it left there.
 * Ports 1-3 keep reading $BB, $00, $00 until DRIVER: the boot ROM never writes them.
 * A game that waits for its driver's own replies (other than an echo) waits forever.
 */
#include "snes_internal.h"

enum { APU_READY, APU_BLOCK_START, APU_BLOCK, APU_DRIVER };

void snes_apu_reset(void)
{
	for (unsigned i = 0; i < 4; i++)
		snes_st.apu_to_cpu[i] = snes_st.cpu_to_apu[i] = 0;
	snes_st.apu_to_cpu[0] = 0xaa;
	snes_st.apu_to_cpu[1] = 0xbb;
	snes_st.apu_stage = APU_READY;
	snes_st.apu_index = 0;
}

uint8_t snes_apu_read(unsigned port)
{
	return snes_st.apu_to_cpu[port & 3];
}

/* The boot ROM takes a command from port 0: echo it, then receive a block or run the driver. */
static void command(uint8_t value)
{
	snes_st.apu_to_cpu[0] = value;
	snes_st.apu_stage = snes_st.cpu_to_apu[1] ? APU_BLOCK_START : APU_DRIVER;
	snes_st.apu_index = 0;
}

void snes_apu_write(unsigned port, uint8_t value)
{
	port &= 3;
	snes_st.cpu_to_apu[port] = value;
	if (snes_st.apu_stage == APU_DRIVER) {
		snes_st.apu_to_cpu[port] = value;
		return;
	}
	if (port != 0)
		return;
	switch (snes_st.apu_stage) {
	case APU_READY:
		if (value == 0xcc)
			command(value);
		break;
	case APU_BLOCK_START:
		if (value == 0) {
			snes_st.apu_to_cpu[0] = 0;
			snes_st.apu_index = 1;
			snes_st.apu_stage = APU_BLOCK;
		}
		break;
	default: /* APU_BLOCK */
		if (value == snes_st.apu_index) {
			snes_st.apu_to_cpu[0] = value;
			snes_st.apu_index++;
		} else if ((uint8_t)(snes_st.apu_index - value) & 0x80) {
			/* The boot ROM's test: a value ahead of the index is a new command. */
			command(value);
		}
		break;
	}
}
