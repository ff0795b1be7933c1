/*
 * snes_timing.c - the clock and the scanline scheduler: line starts, HDMA, vertical blank with
 * NMI and the auto-joypad read, H/V IRQs, the frame hook; and interrupts as the CPU sees them.
 *
 * A frame is SNES_LINES_PER_FRAME lines of SNES_CLOCKS_PER_LINE master clocks. Simplified: every
 * line has the same length (the console's line 240 of odd non-interlaced frames is 4 clocks
 * shorter, and two dots of every other line are 6 clocks instead of 4), and interlace is not
 * modelled. Events happen when the CPU next looks (snes_advance or the inline check), so an
 * event is late by at most the instruction that crossed its time.
 *
 * Within a line (master clocks from its start):
 * - 0: the line starts. Line 0 ends vertical blank and sets up HDMA; line 225 (240 with
 *   overscan) starts vertical blank, after ending the frame when NMI is enabled; line
 *   SNES_FRAME_END_LINE_NMI_OFF ends the frame when no NMI did (see end_frame).
 * - 4 * HTIME + 14: the H IRQ (about 3.5 dots after dot HTIME, as the console does).
 *   SNES_VIRQ_CLOCK: the V-only IRQ of line VTIME.
 * - 1096: horizontal blank starts ($4212 bit 6, until clock 4 of the next line).
 * - SNES_HDMA_CLOCK: HDMA, on lines 0-224 (0-239 with overscan), writing what the next line shows.
 */
#include "snes_internal.h"

#define SNES_HDMA_CLOCK 1104u
#define SNES_HBLANK_START_CLOCK 1096u
#define SNES_HBLANK_END_CLOCK 4u
#define SNES_VIRQ_CLOCK 10u
#define SNES_HIRQ_CLOCK(htime) (4u * (htime) + 14u)
/* The auto-joypad read keeps $4212 bit 0 set this long from the start of vertical blank. */
#define SNES_AUTOJOY_CLOCKS 4224u

struct snes_clock snes_clock;

static void schedule(void)
{
	uint64_t t = snes_st.line_start + SNES_CLOCKS_PER_LINE;
	if (snes_st.irq_at < t)
		t = snes_st.irq_at;
	if (snes_st.hdma_at < t)
		t = snes_st.hdma_at;
	snes_clock.next_event = t;
}

/*
 * When the H/V IRQ fires in the current line, if it does at a time not before `from`: V-only
 * mode at the start of line VTIME, H-only mode at dot HTIME of every line, H+V mode at dot HTIME
 * of line VTIME. An HTIME beyond the line's last dot (339) or a VTIME beyond its last line never fires.
 */
static void arm_irq(uint64_t from)
{
	unsigned mode = (snes_st.nmitimen >> 4) & 3;
	uint64_t t;
	snes_st.irq_at = SNES_NEVER;
	if (!mode || ((mode & 2) && snes_st.vtime != snes_st.line))
		return;
	if (mode & 1) {
		if (snes_st.htime > 339)
			return;
		t = snes_st.line_start + SNES_HIRQ_CLOCK(snes_st.htime);
		/* HTIME 338 and 339 fire at the very end of the line rather than early in the next. */
		if (t >= snes_st.line_start + SNES_CLOCKS_PER_LINE)
			t = snes_st.line_start + SNES_CLOCKS_PER_LINE - 1;
	} else {
		t = snes_st.line_start + SNES_VIRQ_CLOCK;
	}
	if (t >= from)
		snes_st.irq_at = t;
}

static int irq_can_fire(void)
{
	unsigned mode = (snes_st.nmitimen >> 4) & 3;
	if (!mode)
		return 0;
	if ((mode & 2) && snes_st.vtime >= SNES_LINES_PER_FRAME)
		return 0;
	if ((mode & 1) && snes_st.htime > 339)
		return 0;
	return 1;
}

void snes_timing_irq_changed(void)
{
	arm_irq(snes_clock.now);
	schedule();
}

/*
 * Ends the frame where the oracle (bsnes v094 with bsnes-mercury's scheduler) ends one, at most
 * once per vertical blank: at the vblank NMI when NMI is enabled at the start of vertical blank,
 * when a $4200 write makes the NMI fire later in vertical blank, and otherwise at the start of line
 * SNES_FRAME_END_LINE_NMI_OFF. The hook runs right as the NMI becomes pending: the CPU takes the
 * NMI only when it next asks snes_interrupt_pending, after the hook has seen the frame's memories.
 */
static void end_frame(void)
{
	if (snes_st.frame_ended)
		return;
	snes_st.frame_ended = 1;
	snes_frame_hook();
}

/*
 * NMI is the RDNMI flag ANDed with the enable, edge-triggered: enabling it inside vblank before
 * RDNMI was read fires it, and ends the frame there unless one ended in this vblank already
 * (bsnes-mercury's source does so; the oracle's calibration did not measure it).
 */
void snes_timing_nmi_enable_changed(uint8_t old_nmitimen)
{
	if (!(old_nmitimen & 0x80) && (snes_st.nmitimen & 0x80) && snes_st.rdnmi) {
		snes_st.nmi_pending = 1;
		end_frame();
	}
}

static void vblank_start(void)
{
	snes_st.in_vblank = 1;
	snes_st.rdnmi = 1;
	if (snes_st.nmitimen & 0x80)
		snes_st.nmi_pending = 1;
	snes_ppu_vblank_start();
	if (snes_st.nmitimen & 1) {
		/*
		 * The auto-joypad read: the results are there from the start (the console shifts them in
		 * bit by bit while $4212 bit 0 is set), and the pads' serial data is used up, so manual
		 * reads of $4016/$4017 give 1s until the next latch.
		 */
		snes_st.joy_auto[0] = snes_st.joy_buttons[0];
		snes_st.joy_auto[1] = snes_st.joy_buttons[1];
		snes_st.joy_auto[2] = 0;
		snes_st.joy_auto[3] = 0;
		snes_st.joy_shift_pos[0] = snes_st.joy_shift_pos[1] = 16;
		snes_st.autojoy_end = snes_st.line_start + SNES_AUTOJOY_CLOCKS;
	}
}

static void start_line(unsigned line)
{
	snes_st.line = line;
	if (line == 0) {
		snes_st.in_vblank = 0;
		snes_st.rdnmi = 0;
		snes_st.frame_ended = 0;
		snes_st.vblank_line = (snes_st.ppu.reg[0x33] & 0x04) ? 240u : SNES_VBLANK_LINE;
		snes_hdma_init();
	}
	if (snes_st.render_lines && line >= 1 && line <= SNES_PICTURE_HEIGHT)
		snes_render_line(line, snes_st.picture + (size_t)(line - 1) * SNES_PICTURE_WIDTH * 3);
	if (line == snes_st.vblank_line) {
		/*
		 * The frame ends before the NMI is raised, and before the auto-joypad read, so that read
		 * delivers what the input script holds for the frame that starts here.
		 */
		if (snes_st.nmitimen & 0x80)
			end_frame();
		vblank_start();
	}
	snes_st.hdma_at = line < snes_st.vblank_line ? snes_st.line_start + SNES_HDMA_CLOCK : SNES_NEVER;
	arm_irq(snes_st.line_start);
	schedule();
	if (line == SNES_FRAME_END_LINE_NMI_OFF)
		end_frame();
}

void snes_timing_reset(void)
{
	snes_clock.now = 0;
	snes_st.line_start = 0;
	snes_st.irq_at = SNES_NEVER;
	snes_st.hdma_at = SNES_NEVER;
	snes_st.vblank_line = SNES_VBLANK_LINE;
	start_line(0);
}

void snes_run_events(void)
{
	while (snes_clock.now >= snes_clock.next_event) {
		uint64_t t = snes_clock.next_event;
		if (snes_st.irq_at == t) {
			snes_st.irq_at = SNES_NEVER;
			snes_st.timeup = 1;
		} else if (snes_st.hdma_at == t) {
			snes_st.hdma_at = SNES_NEVER;
			snes_hdma_line();
		} else {
			snes_st.line_start += SNES_CLOCKS_PER_LINE;
			start_line(snes_st.line + 1 == SNES_LINES_PER_FRAME ? 0 : snes_st.line + 1);
		}
		schedule();
	}
}

void snes_advance(uint32_t master_clocks)
{
	snes_clock.now += master_clocks;
	if (snes_clock.now >= snes_clock.next_event)
		snes_run_events();
}

/* The position of snes_clock.now, counting line ends that are due but not yet run. */
void snes_position(unsigned *line, unsigned *line_clock)
{
	uint64_t since = snes_clock.now - snes_st.line_start;
	unsigned l = snes_st.line;
	while (since >= SNES_CLOCKS_PER_LINE) {
		since -= SNES_CLOCKS_PER_LINE;
		l = l + 1 == SNES_LINES_PER_FRAME ? 0 : l + 1;
	}
	if (line)
		*line = l;
	if (line_clock)
		*line_clock = (unsigned)since;
}

int snes_in_hblank(void)
{
	unsigned clock;
	snes_position(NULL, &clock);
	return clock >= SNES_HBLANK_START_CLOCK || clock < SNES_HBLANK_END_CLOCK;
}

uint64_t snes_frame_count(void)
{
	return snes_st.frame;
}

int snes_interrupt_pending(int irq_disabled)
{
	if (snes_st.nmi_pending)
		return SNES_NMI;
	if (snes_st.timeup && !irq_disabled)
		return SNES_IRQ;
	return 0;
}

void snes_interrupt_taken(int which)
{
	if (which == SNES_NMI)
		snes_st.nmi_pending = 0;
}

void snes_wait_for_interrupt(void)
{
	int reported = 0;
	while (!snes_st.nmi_pending && !snes_st.timeup) {
		if (!(snes_st.nmitimen & 0x80) && !irq_can_fire() && !reported) {
			unsigned line, clock;
			snes_position(&line, &clock);
			snes_message("snes: WAI with NMI and H/V IRQ disabled ($4200 = $%02x): no interrupt can arrive "
				     "(frame %llu, line %u)",
				snes_st.nmitimen, (unsigned long long)snes_st.frame, line);
			if (!snes_frame_limit_set())
				snes_host_exit(1);
			reported = 1;
		}
		if (snes_clock.next_event > snes_clock.now)
			snes_clock.now = snes_clock.next_event;
		snes_run_events();
	}
}
