/*
 * snes_frame.c - the frame hook and its configuration: RPT_SNES_* environment variables read once
 * at power-on, the joypad input script, what each frame writes (hashes, a dump, pictures), and
 * the platform's text: its own printf-like formatting and its messages on standard error.
 *
 * Everything outside the console goes through the host's services (snes_host.h); no C library.
 *
 * snes_timing.c decides where a frame ends (snes.h, "the frame boundary") and calls the hook
 * there. Frame numbers start at 0 for the first hook. The input script's frame f is the frame
 * whose hook is number f: its value is held from the end of hook f - 1 (from power-on for frame
 * 0), so an auto-joypad read after hook f - 1 delivers it. The script is checked whole at
 * power-on, then read again as the frames go by, so a script of any length takes no memory.
 */
#include <stdarg.h>

#include "snes_internal.h"

/* ---- text */

/* Where formatted text goes: out[0..cap-1], with len counting every character, fitting or not. */
struct text {
	char *out;
	unsigned cap, len;
};

static void put_char(struct text *t, char c)
{
	if (t->len + 1 < t->cap)
		t->out[t->len] = c;
	t->len++;
}

/* A number in base 10 or 16, at least `width` characters, padded with `pad`. */
static void put_number(struct text *t, unsigned long long v, int negative, unsigned base, unsigned width,
	char pad)
{
	char digits[24];
	unsigned n = 0;
	do {
		digits[n++] = "0123456789abcdef"[v % base];
		v /= base;
	} while (v);
	if (negative)
		width = width ? width - 1 : 0;
	if (negative && pad == '0')
		put_char(t, '-');
	for (unsigned i = n; i < width; i++)
		put_char(t, pad);
	if (negative && pad != '0')
		put_char(t, '-');
	while (n)
		put_char(t, digits[--n]);
}

static void format_text(struct text *t, const char *fmt, va_list ap)
{
	for (; *fmt; fmt++) {
		unsigned width = 0, longs = 0;
		char pad = ' ';
		if (*fmt != '%') {
			put_char(t, *fmt);
			continue;
		}
		fmt++;
		if (*fmt == '0') {
			pad = '0';
			fmt++;
		}
		while (*fmt >= '0' && *fmt <= '9')
			width = width * 10 + (unsigned)(*fmt++ - '0');
		while (*fmt == 'l') {
			longs++;
			fmt++;
		}
		switch (*fmt) {
		case 's': {
			const char *s = va_arg(ap, const char *);
			unsigned n = 0;
			if (!s)
				s = "(null)";
			/* Not __builtin_strlen: it becomes a call of strlen, which the freestanding hosts lack. */
			while (s[n])
				n++;
			for (unsigned i = n; i < width; i++)
				put_char(t, ' ');
			while (*s)
				put_char(t, *s++);
			break;
		}
		case 'c':
			put_char(t, (char)va_arg(ap, int));
			break;
		case 'd': {
			long long v = longs >= 2 ? va_arg(ap, long long) : longs ? va_arg(ap, long) : va_arg(ap, int);
			unsigned long long magnitude = v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;
			put_number(t, magnitude, v < 0, 10, width, pad);
			break;
		}
		case 'u':
		case 'x': {
			unsigned long long v = longs >= 2 ? va_arg(ap, unsigned long long)
				: longs ? va_arg(ap, unsigned long) : va_arg(ap, unsigned);
			put_number(t, v, 0, *fmt == 'u' ? 10 : 16, width, pad);
			break;
		}
		case '%':
			put_char(t, '%');
			break;
		default:
			/* Not in the subset: shown as it stands, so the mistake is visible. */
			put_char(t, '%');
			if (!*fmt)
				return;
			put_char(t, *fmt);
			break;
		}
	}
}

unsigned snes_format(char *out, unsigned cap, const char *fmt, ...)
{
	struct text t = { out, cap, 0 };
	va_list ap;
	va_start(ap, fmt);
	format_text(&t, fmt, ap);
	va_end(ap);
	if (cap)
		out[t.len < cap ? t.len : cap - 1] = '\0';
	return t.len;
}

/* One line on standard error; a message too long for the buffer ends in "...". */
static void message_line(const char *fmt, va_list ap)
{
	static char line[1024];
	struct text t = { line, sizeof line - 1, 0 };
	format_text(&t, fmt, ap);
	if (t.len >= t.cap) {
		t.len = t.cap - 4;
		line[t.len++] = '.';
		line[t.len++] = '.';
		line[t.len++] = '.';
	}
	line[t.len++] = '\n';
	line[t.len] = '\0';
	snes_host_error(line);
}

void snes_message(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	message_line(fmt, ap);
	va_end(ap);
}

_Noreturn void snes_fatal(int status, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	message_line(fmt, ap);
	va_end(ap);
	snes_host_exit(status);
}

/* ---- numbers */

/* A decimal number made of digits only, or -1. */
static int parse_decimal(const char *s, uint64_t *out)
{
	uint64_t v = 0;
	if (!*s)
		return -1;
	for (; *s; s++) {
		uint64_t d = (uint64_t)(*s - '0');
		if (*s < '0' || *s > '9' || v > (UINT64_MAX - d) / 10)
			return -1;
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

/* The value of a hex digit, or -1. */
static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* One to four hex digits, with or without 0x, or -1. */
static int parse_hex16(const char *s, uint16_t *out)
{
	unsigned v = 0, digits = 0;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	for (; *s; s++, digits++) {
		int d = hex_digit(*s);
		if (d < 0 || digits >= 4)
			return -1;
		v = v * 16 + (unsigned)d;
	}
	if (!digits)
		return -1;
	*out = (uint16_t)v;
	return 0;
}

static int is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

/* ---- the input script */

/* The longest line the script may have, without its newline. */
#define SCRIPT_LINE_MAX 511u

struct input_entry {
	uint64_t frame;
	uint16_t buttons;
};

/* The script as it is being read: the file, a chunk of it, the line number, the last frame. */
struct script {
	const char *path;
	int fd;               /* -1 when closed */
	unsigned long line;   /* lines read so far */
	unsigned pos, len;    /* the chunk's unread bytes: buf[pos..len-1] */
	int have_last;
	uint64_t last_frame;  /* the frame of the last entry read, for the order check */
	char buf[4096];
	char text[SCRIPT_LINE_MAX + 2]; /* the current line, NUL-terminated */
};

static void script_open(struct script *s, const char *path)
{
	s->path = path;
	s->fd = snes_host_open(path, 0);
	if (s->fd < 0)
		snes_fatal(2, "snes: cannot open the input script %s (RPT_SNES_INPUT)", path);
	s->line = 0;
	s->pos = s->len = 0;
	s->have_last = 0;
}

static void script_close(struct script *s)
{
	if (s->fd >= 0)
		snes_host_close(s->fd);
	s->fd = -1;
}

/* The next line into s->text without its newline; 0 at the end of the file. */
static int script_read_line(struct script *s)
{
	unsigned n = 0;
	int any = 0;
	for (;;) {
		char c;
		if (s->pos == s->len) {
			long got = snes_host_read(s->fd, s->buf, sizeof s->buf);
			if (got < 0)
				snes_fatal(2, "snes: cannot read the input script %s", s->path);
			if (got == 0)
				break;
			s->pos = 0;
			s->len = (unsigned)got;
		}
		c = s->buf[s->pos++];
		any = 1;
		if (c == '\n')
			break;
		if (n == SCRIPT_LINE_MAX)
			snes_fatal(2, "snes: %s:%lu: line too long (more than %u characters)", s->path, s->line + 1,
				SCRIPT_LINE_MAX);
		s->text[n++] = c;
	}
	s->text[n] = '\0';
	if (any)
		s->line++;
	return any;
}

/*
 * The next entry: `#` starts a comment, blank lines are skipped, every other line is
 * `<frame> <hex16>` with frames in increasing order. 0 at the end of the file. A bad line ends
 * the process with status 2, naming the file and the line.
 */
static int script_next(struct script *s, struct input_entry *e)
{
	while (script_read_line(s)) {
		char *p, *frame_text, *value_text, *rest;
		for (p = s->text; *p; p++) {
			if (*p == '#') {
				*p = '\0';
				break;
			}
		}
		p = s->text;
		while (is_space(*p))
			p++;
		if (!*p)
			continue;
		frame_text = p;
		while (*p && !is_space(*p))
			p++;
		while (is_space(*p))
			*p++ = '\0';
		value_text = p;
		while (*p && !is_space(*p))
			p++;
		rest = p;
		while (is_space(*rest))
			*rest++ = '\0';
		if (!*value_text || *rest)
			snes_fatal(2, "snes: %s:%lu: expected `<frame> <hex16>`", s->path, s->line);
		if (parse_decimal(frame_text, &e->frame))
			snes_fatal(2, "snes: %s:%lu: bad frame number `%s` (decimal expected)", s->path, s->line,
				frame_text);
		if (parse_hex16(value_text, &e->buttons))
			snes_fatal(2, "snes: %s:%lu: bad joypad value `%s` (1 to 4 hex digits expected)", s->path,
				s->line, value_text);
		if (s->have_last && e->frame <= s->last_frame)
			snes_fatal(2, "snes: %s:%lu: frame %llu is not after frame %llu", s->path, s->line,
				(unsigned long long)e->frame, (unsigned long long)s->last_frame);
		s->have_last = 1;
		s->last_frame = e->frame;
		return 1;
	}
	return 0;
}

/* ---- configuration */

static struct {
	int hashes_fd;        /* -1 without RPT_SNES_FRAME_HASHES */
	const char *hashes_path;
	int dump_set;
	uint64_t dump_frame;
	const char *dump_path;
	const char *pictures_dir;
	int max_set;
	uint64_t max_frames;
	/* RPT_SNES_ZERO_WRAM: WRAM ranges (offsets from $7E:0000, inclusive) hashed and dumped as
	 * zeros, where a test program records what the oracle is known to get wrong. */
	unsigned zeroed_count;
	uint32_t zeroed[8][2];
	struct script input;  /* input.fd is -1 once the script is used up, or without one */
	int have_next;
	struct input_entry next; /* the script's next entry, when have_next */
} cfg = { .hashes_fd = -1, .input = { .fd = -1 } };

static const char *env(const char *name)
{
	const char *v = snes_host_env(name);
	return v && *v ? v : NULL;
}

/* Hex digits up to `end` (exclusive) as a number below 0x20000 (a WRAM offset), or -1. */
static int parse_wram_offset(const char *s, const char *end, uint32_t *out)
{
	uint32_t v = 0;
	if (s == end || end - s > 5)
		return -1;
	for (; s < end; s++) {
		int d = hex_digit(*s);
		if (d < 0)
			return -1;
		v = v * 16 + (uint32_t)d;
	}
	if (v >= SNES_WRAM_SIZE)
		return -1;
	*out = v;
	return 0;
}

/* RPT_SNES_ZERO_WRAM: `lo-hi[,lo-hi]...` in hex. */
static void load_zeroed(const char *v)
{
	const char *p = v;
	cfg.zeroed_count = 0;
	while (*p) {
		const char *dash = p, *end;
		while (*dash && *dash != '-' && *dash != ',')
			dash++;
		end = dash;
		if (*end == '-')
			while (*end && *end != ',')
				end++;
		uint32_t lo, hi;
		if (*dash != '-' || cfg.zeroed_count == 8 || parse_wram_offset(p, dash, &lo) ||
		    parse_wram_offset(dash + 1, end, &hi) || lo > hi)
			snes_fatal(2, "snes: RPT_SNES_ZERO_WRAM=%s is not up to 8 WRAM ranges lo-hi (hex offsets "
				      "below 20000, comma-separated)", v);
		cfg.zeroed[cfg.zeroed_count][0] = lo;
		cfg.zeroed[cfg.zeroed_count][1] = hi;
		cfg.zeroed_count++;
		p = *end == ',' ? end + 1 : end;
	}
}

/* Checks the whole script, then opens it again to read its entries as the frames come. */
static void load_input(const char *path)
{
	struct input_entry e;
	script_open(&cfg.input, path);
	while (script_next(&cfg.input, &e))
		;
	script_close(&cfg.input);
	script_open(&cfg.input, path);
	cfg.have_next = script_next(&cfg.input, &cfg.next);
}

void snes_frame_configure(void)
{
	const char *v;
	if (cfg.hashes_fd >= 0)
		snes_host_close(cfg.hashes_fd);
	script_close(&cfg.input);
	cfg.hashes_fd = -1;
	cfg.hashes_path = NULL;
	cfg.dump_set = 0;
	cfg.dump_path = NULL;
	cfg.pictures_dir = NULL;
	cfg.max_set = 0;
	cfg.have_next = 0;

	if ((v = env("RPT_SNES_FRAME_HASHES")) != NULL) {
		cfg.hashes_path = v;
		cfg.hashes_fd = snes_host_open(v, 1);
		if (cfg.hashes_fd < 0)
			snes_fatal(2, "snes: cannot create the frame hash file %s (RPT_SNES_FRAME_HASHES)", v);
	}
	if ((v = env("RPT_SNES_DUMP_FRAME")) != NULL) {
		if (parse_decimal(v, &cfg.dump_frame))
			snes_fatal(2, "snes: RPT_SNES_DUMP_FRAME=%s is not a frame number", v);
		cfg.dump_path = env("RPT_SNES_DUMP_FILE");
		if (!cfg.dump_path)
			snes_fatal(2, "snes: RPT_SNES_DUMP_FRAME needs RPT_SNES_DUMP_FILE, the file to write");
		cfg.dump_set = 1;
	}
	if ((v = env("RPT_SNES_PICTURES")) != NULL) {
		cfg.pictures_dir = v;
		snes_st.render_lines = 1;
	}
	if ((v = env("RPT_SNES_MAX_FRAMES")) != NULL) {
		if (parse_decimal(v, &cfg.max_frames) || cfg.max_frames == 0)
			snes_fatal(2, "snes: RPT_SNES_MAX_FRAMES=%s is not a frame count of at least 1", v);
		cfg.max_set = 1;
	}
	cfg.zeroed_count = 0;
	if ((v = env("RPT_SNES_ZERO_WRAM")) != NULL)
		load_zeroed(v);
	if ((v = env("RPT_SNES_INPUT")) != NULL)
		load_input(v);
	snes_frame_input_update();
}

int snes_frame_limit_set(void)
{
	return cfg.max_set;
}

void snes_frame_input_update(void)
{
	while (cfg.have_next && cfg.next.frame <= snes_st.frame) {
		snes_set_joypad(0, cfg.next.buttons);
		cfg.have_next = script_next(&cfg.input, &cfg.next);
		if (!cfg.have_next)
			script_close(&cfg.input);
	}
}

/* ---- the frame hook */

uint64_t snes_fnv1a64(const uint8_t *data, uint32_t len)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (uint32_t i = 0; i < len; i++) {
		h ^= data[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

static void write_file(const char *path, const uint8_t *const parts[], const uint32_t sizes[], size_t n)
{
	int fd = snes_host_open(path, 1);
	int ok = fd >= 0;
	for (size_t i = 0; ok && i < n; i++)
		ok = snes_host_write(fd, parts[i], sizes[i]) == 0;
	if (fd >= 0)
		ok = (snes_host_close(fd) == 0) && ok;
	if (!ok)
		snes_fatal(2, "snes: cannot write %s", path);
}

static void write_pictures(uint64_t frame)
{
	static const char *const suffix[4] = { "png", "vram", "cgram", "oam" };
	static char path[4096];
	const uint8_t *const parts[4] = { NULL, snes_st.vram, snes_st.cgram, snes_st.oam };
	const uint32_t sizes[4] = { 0, SNES_VRAM_SIZE, SNES_CGRAM_SIZE, SNES_OAM_SIZE };
	for (int i = 0; i < 4; i++) {
		unsigned len = snes_format(path, sizeof path, "%s/frame-%05llu.%s", cfg.pictures_dir,
			(unsigned long long)frame, suffix[i]);
		if (len >= sizeof path)
			snes_fatal(2, "snes: the picture directory %s (RPT_SNES_PICTURES) is too long a path",
				cfg.pictures_dir);
		if (i == 0) {
			if (snes_write_png(path, snes_st.picture, SNES_PICTURE_WIDTH, SNES_PICTURE_HEIGHT))
				snes_fatal(2, "snes: cannot write %s (RPT_SNES_PICTURES)", path);
		} else {
			write_file(path, &parts[i], &sizes[i], 1);
		}
	}
}

/* WRAM as hashes and dumps show it: with the RPT_SNES_ZERO_WRAM ranges zeroed in a copy. */
static const uint8_t *reported_wram(void)
{
	static uint8_t copy[SNES_WRAM_SIZE];
	if (cfg.zeroed_count == 0)
		return snes_st.wram;
	__builtin_memcpy(copy, snes_st.wram, SNES_WRAM_SIZE);
	for (unsigned i = 0; i < cfg.zeroed_count; i++)
		__builtin_memset(copy + cfg.zeroed[i][0], 0, cfg.zeroed[i][1] - cfg.zeroed[i][0] + 1);
	return copy;
}

/* One line of the hash file, written at once: a process that ends later loses nothing. */
static void write_hashes(uint64_t frame, const uint8_t *wram)
{
	char line[128];
	unsigned len = snes_format(line, sizeof line,
		"%llu wram:%016llx vram:%016llx cgram:%016llx oam:%016llx\n", (unsigned long long)frame,
		(unsigned long long)snes_fnv1a64(wram, SNES_WRAM_SIZE),
		(unsigned long long)snes_fnv1a64(snes_st.vram, SNES_VRAM_SIZE),
		(unsigned long long)snes_fnv1a64(snes_st.cgram, SNES_CGRAM_SIZE),
		(unsigned long long)snes_fnv1a64(snes_st.oam, SNES_OAM_SIZE));
	if (snes_host_write(cfg.hashes_fd, line, len))
		snes_fatal(2, "snes: cannot write the frame hash file %s", cfg.hashes_path);
}

void snes_frame_hook(void)
{
	uint64_t frame = snes_st.frame;
	int dumping = cfg.dump_set && frame == cfg.dump_frame;
	const uint8_t *wram = cfg.hashes_fd >= 0 || dumping ? reported_wram() : snes_st.wram;
	if (cfg.hashes_fd >= 0)
		write_hashes(frame, wram);
	if (dumping) {
		const uint8_t *const parts[4] = { wram, snes_st.vram, snes_st.cgram, snes_st.oam };
		const uint32_t sizes[4] = { SNES_WRAM_SIZE, SNES_VRAM_SIZE, SNES_CGRAM_SIZE, SNES_OAM_SIZE };
		write_file(cfg.dump_path, parts, sizes, 4);
	}
	if (cfg.pictures_dir)
		write_pictures(frame);
	snes_st.frame = frame + 1;
	snes_frame_input_update();
	if (cfg.max_set && snes_st.frame >= cfg.max_frames)
		snes_host_exit(0);
}
