/*
 * msvcrt_stdio.c - msvcrt's streams: stdin/stdout/stderr and files in the sandbox, and the
 * front ends of the printf and scanf families. All functions are cdecl externs.
 *
 * Decisions:
 * - FILE structures live in guest memory (the `_iob` array of 64: stdin, stdout, stderr, then
 *   fopen's), so `stdout` in the guest is `&_iob[1]`; their buffers and state live here. The
 *   guest-visible `_flag` and `_file` fields are kept up to date; `_ptr`/`_cnt` stay empty, so
 *   code that reads them falls back to the functions.
 * - Text mode is msvcrt's: "\n" is written as "\r\n", "\r\n" reads as "\n", and Ctrl-Z ends a
 *   text-mode read. Streams are text unless opened with "b" (or _fmode says binary, or _setmode
 *   changes them). stdout and stderr start in text mode, as on Windows.
 * - Buffering: files and a redirected stdout are fully buffered (4 KiB); stderr is unbuffered;
 *   stdout on a terminal is flushed after every call. Everything is flushed at exit, and before
 *   WriteFile writes to the same handle. setvbuf/setbuf change the mode; a guest buffer passed
 *   to them is not used.
 * - Files: a guest path names a file beneath the sandbox directory ($RPT_SANDBOX at run time, the
 *   current directory by default; see the runtime's host services). `\` and `/` both separate;
 *   a drive letter or a leading separator means the sandbox root; `.` and empty components are
 *   dropped and `..` steps back, but never above the root (such a path fails with EACCES).
 *   Symbolic links are never followed. Names are case-sensitive (the host's rule).
 */
#include "win32_console.h"

#define RPT_MSVCRT(name) void rpt_win32_msvcrt_##name(struct cpu *restrict c)

RPT_MSVCRT(__iob_func);
RPT_MSVCRT(fopen);
RPT_MSVCRT(freopen);
RPT_MSVCRT(tmpfile);
RPT_MSVCRT(tmpnam);
RPT_MSVCRT(system);
RPT_MSVCRT(fclose);
RPT_MSVCRT(fflush);
RPT_MSVCRT(fread);
RPT_MSVCRT(fwrite);
RPT_MSVCRT(fgetc);
RPT_MSVCRT(getc);
RPT_MSVCRT(_fgetchar);
RPT_MSVCRT(getchar);
RPT_MSVCRT(fgets);
RPT_MSVCRT(fputc);
RPT_MSVCRT(putc);
RPT_MSVCRT(_fputchar);
RPT_MSVCRT(putchar);
RPT_MSVCRT(fputs);
RPT_MSVCRT(puts);
RPT_MSVCRT(ungetc);
RPT_MSVCRT(fseek);
RPT_MSVCRT(ftell);
RPT_MSVCRT(rewind);
RPT_MSVCRT(fgetpos);
RPT_MSVCRT(fsetpos);
RPT_MSVCRT(feof);
RPT_MSVCRT(ferror);
RPT_MSVCRT(clearerr);
RPT_MSVCRT(setvbuf);
RPT_MSVCRT(setbuf);
RPT_MSVCRT(_fileno);
RPT_MSVCRT(_setmode);
RPT_MSVCRT(_isatty);
RPT_MSVCRT(_read);
RPT_MSVCRT(_write);
RPT_MSVCRT(_close);
RPT_MSVCRT(_lseeki64);
RPT_MSVCRT(_fstati64);
RPT_MSVCRT(remove);
RPT_MSVCRT(_unlink);
RPT_MSVCRT(rename);
RPT_MSVCRT(perror);
RPT_MSVCRT(strerror);
RPT_MSVCRT(printf);
RPT_MSVCRT(vprintf);
RPT_MSVCRT(fprintf);
RPT_MSVCRT(vfprintf);
RPT_MSVCRT(sprintf);
RPT_MSVCRT(vsprintf);
RPT_MSVCRT(_snprintf);
RPT_MSVCRT(_vsnprintf);
RPT_MSVCRT(_scprintf);
RPT_MSVCRT(_vscprintf);
RPT_MSVCRT(scanf);
RPT_MSVCRT(fscanf);
RPT_MSVCRT(sscanf);

/* ---------------------------------------------------------------- streams */

#define RPT_STREAM_BUF 4096u

/* msvcrt's FILE._flag bits. */
#define RPT_IOREAD 0x1u
#define RPT_IOWRT 0x2u
#define RPT_IONBF 0x4u
#define RPT_IOEOF 0x10u
#define RPT_IOERR 0x20u
#define RPT_IORW 0x80u

/* setvbuf's modes. */
#define RPT_IOFBF 0x0u
#define RPT_IOLBF 0x40u

#define RPT_O_TEXT 0x4000u
#define RPT_O_BINARY 0x8000u

enum { RPT_LAST_NONE, RPT_LAST_READ, RPT_LAST_WRITE };

struct rpt_stream {
	int open;
	int fd;
	int text;
	int readable, writable;
	int eof, error;
	int unbuffered;  /* flush after every call */
	int last;        /* RPT_LAST_* */
	uint8_t wbuf[RPT_STREAM_BUF];
	uint32_t wlen;
	uint8_t rbuf[RPT_STREAM_BUF];
	uint32_t rpos, rlen;
	int pushed[4]; /* ungetc's characters, last pushed last */
	uint32_t npushed;
};

static struct rpt_stream rpt_streams[RPT_MSVCRT_STREAMS];

uint32_t rpt_msvcrt_stream_addr(uint32_t index)
{
	return RPT_DATA_IOB + RPT_MSVCRT_FILE_SIZE * index;
}

int rpt_msvcrt_stream_index(uint32_t file)
{
	if (file < RPT_DATA_IOB || file >= RPT_DATA_IOB + RPT_MSVCRT_FILE_SIZE * RPT_MSVCRT_STREAMS ||
	    (file - RPT_DATA_IOB) % RPT_MSVCRT_FILE_SIZE)
		return -1;
	uint32_t i = (file - RPT_DATA_IOB) / RPT_MSVCRT_FILE_SIZE;
	return rpt_streams[i].open ? (int)i : -1;
}

/* A stream by FILE address; a bad one is a fatal error, as it would crash msvcrt. */
static struct rpt_stream *rpt_stream_of(uint32_t file)
{
	int i = rpt_msvcrt_stream_index(file);
	if (i < 0)
		rpt_win32_fatal("a stdio function got a FILE pointer that is not an open stream: ", file);
	return &rpt_streams[i];
}

/* Mirrors a stream's state into its guest FILE structure. */
static void rpt_stream_sync(uint32_t index)
{
	struct rpt_stream *s = &rpt_streams[index];
	uint32_t file = rpt_msvcrt_stream_addr(index);
	uint32_t flag = 0;
	if (s->open) {
		if (s->readable && s->writable)
			flag |= RPT_IORW;
		else if (s->readable)
			flag |= RPT_IOREAD;
		else
			flag |= RPT_IOWRT;
		if (s->unbuffered)
			flag |= RPT_IONBF;
		if (s->eof)
			flag |= RPT_IOEOF;
		if (s->error)
			flag |= RPT_IOERR;
	}
	rpt_guest_memset(file, 0, RPT_MSVCRT_FILE_SIZE);
	rpt_store_u32_le(file + 12, flag);
	rpt_store_u32_le(file + 16, s->open ? index : 0xffffffffu);
}

static void rpt_stream_open(uint32_t index, int fd, int readable, int writable, int text)
{
	struct rpt_stream *s = &rpt_streams[index];
	s->open = 1;
	s->fd = fd;
	s->text = text;
	s->readable = readable;
	s->writable = writable;
	s->eof = s->error = 0;
	s->unbuffered = 0;
	s->last = RPT_LAST_NONE;
	s->wlen = s->rpos = s->rlen = s->npushed = 0;
	rpt_stream_sync(index);
}

void rpt_msvcrt_stdio_init(void)
{
	for (uint32_t i = 0; i < RPT_MSVCRT_STREAMS; i++) {
		rpt_streams[i].open = 0;
		rpt_stream_sync(i);
	}
	rpt_stream_open(0, 0, 1, 0, 1);
	rpt_stream_open(1, 1, 0, 1, 1);
	rpt_stream_open(2, 2, 0, 1, 1);
	rpt_streams[1].unbuffered = rpt_is_terminal(1);
	rpt_streams[2].unbuffered = 1;
	rpt_stream_sync(1);
	rpt_stream_sync(2);
}

static int rpt_stream_flush_writes(struct rpt_stream *s)
{
	if (!s->wlen)
		return 0;
	uint64_t done = rpt_write(s->fd, s->wbuf, s->wlen);
	int ok = done == s->wlen;
	s->wlen = 0;
	if (!ok)
		s->error = 1;
	return ok ? 0 : -1;
}

void rpt_msvcrt_stream_flush(uint32_t file)
{
	int i = rpt_msvcrt_stream_index(file);
	if (i >= 0) {
		rpt_stream_flush_writes(&rpt_streams[i]);
		rpt_stream_sync((uint32_t)i);
	}
}

void rpt_msvcrt_flush_all(void)
{
	for (uint32_t i = 0; i < RPT_MSVCRT_STREAMS; i++)
		if (rpt_streams[i].open)
			rpt_stream_flush_writes(&rpt_streams[i]);
}

/* Before a read after writes, or a write after reads: the file position must be where the
 * guest thinks it is, as msvcrt's "+" modes require a seek or flush in between. */
static void rpt_stream_switch(struct rpt_stream *s, int to)
{
	if (s->last == to)
		return;
	if (to == RPT_LAST_READ) {
		rpt_stream_flush_writes(s);
	} else if (s->last == RPT_LAST_READ && (s->rlen > s->rpos || s->npushed)) {
		int64_t back = (int64_t)(s->rlen - s->rpos);
		if (back)
			rpt_seek(s->fd, -back, RPT_SEEK_CUR);
		s->rpos = s->rlen = s->npushed = 0;
	}
	s->last = to;
}

static void rpt_stream_put_byte(struct rpt_stream *s, uint8_t b)
{
	if (s->wlen == RPT_STREAM_BUF)
		rpt_stream_flush_writes(s);
	s->wbuf[s->wlen++] = b;
}

uint32_t rpt_msvcrt_stream_write(uint32_t file, const char *bytes, uint32_t n)
{
	struct rpt_stream *s = rpt_stream_of(file);
	if (!s->writable) {
		s->error = 1;
		rpt_msvcrt_set_errno(RPT_EBADF);
		return 0;
	}
	rpt_stream_switch(s, RPT_LAST_WRITE);
	for (uint32_t i = 0; i < n; i++) {
		if (s->text && bytes[i] == '\n')
			rpt_stream_put_byte(s, '\r');
		rpt_stream_put_byte(s, (uint8_t)bytes[i]);
	}
	return s->error ? 0 : n;
}

/* The end of one stdio call: unbuffered streams write out now. */
static void rpt_stream_end_call(uint32_t file)
{
	int i = rpt_msvcrt_stream_index(file);
	if (i < 0)
		return;
	if (rpt_streams[i].unbuffered)
		rpt_stream_flush_writes(&rpt_streams[i]);
	rpt_stream_sync((uint32_t)i);
}

/* The next raw byte of the file, or -1 at its end. */
static int rpt_stream_raw(struct rpt_stream *s)
{
	if (s->rpos == s->rlen) {
		/* Reading stdin while stdout goes to a terminal: show the prompt first. */
		if (s == &rpt_streams[0])
			rpt_stream_flush_writes(&rpt_streams[1]);
		int64_t n = rpt_read(s->fd, s->rbuf, RPT_STREAM_BUF);
		if (n <= 0) {
			if (n < 0)
				s->error = 1;
			else
				s->eof = 1;
			return -1;
		}
		s->rpos = 0;
		s->rlen = (uint32_t)n;
	}
	return s->rbuf[s->rpos++];
}

static int rpt_stream_getc(struct rpt_stream *s)
{
	if (!s->readable) {
		s->error = 1;
		rpt_msvcrt_set_errno(RPT_EBADF);
		return -1;
	}
	if (s->npushed)
		return s->pushed[--s->npushed];
	if (s->eof)
		return -1;
	rpt_stream_switch(s, RPT_LAST_READ);
	int ch = rpt_stream_raw(s);
	if (!s->text || ch < 0)
		return ch;
	if (ch == 0x1a) {
		/* Ctrl-Z ends a text-mode file; it stays unread. */
		s->rpos--;
		s->eof = 1;
		return -1;
	}
	if (ch == '\r') {
		int next = rpt_stream_raw(s);
		if (next == '\n')
			return '\n';
		if (next >= 0)
			s->rpos--;
		else
			s->eof = 0; /* the '\r' itself is still data; the end shows up on the next read */
	}
	return ch;
}

int rpt_msvcrt_stream_getc(uint32_t file)
{
	return rpt_stream_getc(rpt_stream_of(file));
}

int rpt_msvcrt_stream_ungetc(uint32_t file, int ch)
{
	struct rpt_stream *s = rpt_stream_of(file);
	if (ch < 0 || s->npushed == sizeof s->pushed / sizeof s->pushed[0])
		return -1;
	s->pushed[s->npushed++] = ch & 0xff;
	s->eof = 0;
	return ch & 0xff;
}

/* ---------------------------------------------------------------- sandbox paths */

#define RPT_SANDBOX_PATH_MAX 1024u

/* Turns the guest path at `guest` into a sandbox path (see the decisions above); 0 on success,
 * else -1 with errno set. */
static int rpt_sandbox_path(uint32_t guest, char *out)
{
	char raw[RPT_SANDBOX_PATH_MAX];
	if (!guest || rpt_guest_string(guest, raw, sizeof raw) >= sizeof raw) {
		rpt_msvcrt_set_errno(!guest ? RPT_EINVAL : RPT_ENOENT);
		return -1;
	}
	for (char *p = raw; *p; p++)
		if (*p == '\\')
			*p = '/';
	const char *p = raw;
	if (((p[0] | 32) >= 'a' && (p[0] | 32) <= 'z') && p[1] == ':')
		p += 2;
	if (p[0] == '/' && p[1] == '/') {
		/* A UNC path names another machine. */
		rpt_msvcrt_set_errno(RPT_ENOENT);
		return -1;
	}
	uint32_t len = 0;
	uint32_t starts[RPT_SANDBOX_PATH_MAX / 2];
	uint32_t depth = 0;
	while (*p) {
		while (*p == '/')
			p++;
		const char *comp = p;
		while (*p && *p != '/')
			p++;
		uint32_t n = (uint32_t)(p - comp);
		if (n == 0 || (n == 1 && comp[0] == '.'))
			continue;
		if (n == 2 && comp[0] == '.' && comp[1] == '.') {
			if (depth == 0) {
				rpt_msvcrt_set_errno(RPT_EACCES);
				return -1;
			}
			len = starts[--depth];
			continue;
		}
		for (uint32_t i = 0; i < n; i++) {
			if (comp[i] == ':' || (uint8_t)comp[i] < 32) {
				rpt_msvcrt_set_errno(RPT_EINVAL);
				return -1;
			}
		}
		starts[depth++] = len;
		if (len)
			out[len++] = '/';
		for (uint32_t i = 0; i < n; i++)
			out[len++] = comp[i];
	}
	out[len] = 0;
	if (!len) {
		/* The sandbox root is a directory, not a file. */
		rpt_msvcrt_set_errno(RPT_EACCES);
		return -1;
	}
	return 0;
}

/* ---------------------------------------------------------------- opening and closing */

void rpt_win32_msvcrt___iob_func(struct cpu *restrict c)
{
	rpt_win32_return_cdecl(c, RPT_DATA_IOB);
}

/* Parses an fopen mode ("r", "wb", "a+t", ...); 0 on success, -1 (errno EINVAL) for a bad one. */
static int rpt_parse_mode(uint32_t mode, unsigned *flags, int *readable, int *writable, int *text)
{
	*readable = *writable = 0;
	*text = (rpt_load_u32_le(RPT_DATA_FMODE) & RPT_O_BINARY) == 0;
	uint8_t m = rpt_load_u8_le(mode);
	if (m == 'r') {
		*flags = RPT_OPEN_READ;
		*readable = 1;
	} else if (m == 'w') {
		*flags = RPT_OPEN_WRITE | RPT_OPEN_CREATE | RPT_OPEN_TRUNCATE;
		*writable = 1;
	} else if (m == 'a') {
		*flags = RPT_OPEN_WRITE | RPT_OPEN_CREATE | RPT_OPEN_APPEND;
		*writable = 1;
	} else {
		rpt_msvcrt_set_errno(RPT_EINVAL);
		return -1;
	}
	for (uint32_t i = 1; (m = rpt_load_u8_le(mode + i)) != 0; i++) {
		if (m == '+') {
			*flags |= RPT_OPEN_READ | RPT_OPEN_WRITE;
			*readable = *writable = 1;
		} else if (m == 'b') {
			*text = 0;
		} else if (m == 't') {
			*text = 1;
		}
		/* msvcrt's other letters (c, n, S, R, T, D) are hints without effect here. */
	}
	return 0;
}

/* Opens the guest path into stream `index`; 0 on success, -1 with errno set. */
static int rpt_open_into(uint32_t index, uint32_t path, uint32_t mode)
{
	char host_path[RPT_SANDBOX_PATH_MAX];
	unsigned flags;
	int readable, writable, text;
	if (rpt_parse_mode(mode, &flags, &readable, &writable, &text) != 0 || rpt_sandbox_path(path, host_path) != 0)
		return -1;
	int fd = rpt_open(host_path, flags);
	if (fd < 0) {
		rpt_msvcrt_errno_from_host();
		return -1;
	}
	rpt_stream_open(index, fd, readable, writable, text);
	return 0;
}

/* The first free stream after stdin, stdout and stderr, or -1 (errno EMFILE). */
static int rpt_free_stream(void)
{
	for (uint32_t i = 3; i < RPT_MSVCRT_STREAMS; i++)
		if (!rpt_streams[i].open)
			return (int)i;
	rpt_msvcrt_set_errno(RPT_EMFILE);
	return -1;
}

/* FILE *fopen(const char *path, const char *mode) */
void rpt_win32_msvcrt_fopen(struct cpu *restrict c)
{
	int index = rpt_free_stream();
	if (index < 0 || rpt_open_into((uint32_t)index, rpt_win32_arg(c, 0), rpt_win32_arg(c, 1)) != 0) {
		rpt_win32_return_cdecl(c, 0);
		return;
	}
	rpt_win32_return_cdecl(c, rpt_msvcrt_stream_addr((uint32_t)index));
}

static int rpt_stream_close(uint32_t index)
{
	struct rpt_stream *s = &rpt_streams[index];
	int r = rpt_stream_flush_writes(s);
	if (s->fd > 2 && rpt_close(s->fd) != 0)
		r = -1;
	s->open = 0;
	rpt_stream_sync(index);
	return r;
}

/* FILE *freopen(const char *path, const char *mode, FILE *f): the same FILE, now on another file. */
void rpt_win32_msvcrt_freopen(struct cpu *restrict c)
{
	uint32_t path = rpt_win32_arg(c, 0), mode = rpt_win32_arg(c, 1), file = rpt_win32_arg(c, 2);
	rpt_stream_of(file);
	uint32_t index = (uint32_t)rpt_msvcrt_stream_index(file);
	rpt_stream_close(index);
	rpt_win32_return_cdecl(c, rpt_open_into(index, path, mode) == 0 ? file : 0);
}

/* FILE *tmpfile(void): a new file in the sandbox, removed at once so that it vanishes when closed. */
static uint32_t rpt_temp_counter;

static void rpt_temp_name(char *out)
{
	static const char prefix[] = "rpt-tmp-";
	uint32_t n = ++rpt_temp_counter, k = 0;
	for (; prefix[k]; k++)
		out[k] = prefix[k];
	char digits[12];
	uint32_t d = 0;
	do {
		digits[d++] = (char)('0' + n % 10);
		n /= 10;
	} while (n);
	while (d)
		out[k++] = digits[--d];
	out[k++] = '.';
	out[k++] = 't';
	out[k++] = 'm';
	out[k++] = 'p';
	out[k] = 0;
}

void rpt_win32_msvcrt_tmpfile(struct cpu *restrict c)
{
	int index = rpt_free_stream();
	if (index < 0) {
		rpt_win32_return_cdecl(c, 0);
		return;
	}
	for (int attempt = 0; attempt < 1000; attempt++) {
		char name[32];
		rpt_temp_name(name);
		int fd = rpt_open(name, RPT_OPEN_READ | RPT_OPEN_WRITE | RPT_OPEN_CREATE | RPT_OPEN_EXCLUSIVE);
		if (fd < 0 && rpt_last_error() == RPT_HOST_ERROR_EXISTS)
			continue;
		if (fd < 0)
			break;
		rpt_remove(name);
		rpt_stream_open((uint32_t)index, fd, 1, 1, 0);
		rpt_win32_return_cdecl(c, rpt_msvcrt_stream_addr((uint32_t)index));
		return;
	}
	rpt_msvcrt_errno_from_host();
	rpt_win32_return_cdecl(c, 0);
}

/* char *tmpnam(char *buf): a name in the sandbox's root that no file has yet. */
void rpt_win32_msvcrt_tmpnam(struct cpu *restrict c)
{
	uint32_t buf = rpt_win32_arg(c, 0);
	char name[32];
	for (int attempt = 0; attempt < 1000; attempt++) {
		rpt_temp_name(name);
		int fd = rpt_open(name, RPT_OPEN_READ);
		if (fd < 0)
			break;
		rpt_close(fd);
	}
	uint32_t out = buf ? buf : RPT_DATA_TMPNAM;
	rpt_store_u8_le(out, '\\');
	rpt_guest_store_string(out + 1, name);
	rpt_win32_return_cdecl(c, out);
}

/* int system(const char *command): there is no command interpreter, and system(NULL) says so. */
void rpt_win32_msvcrt_system(struct cpu *restrict c)
{
	if (!rpt_win32_arg(c, 0)) {
		rpt_win32_return_cdecl(c, 0);
		return;
	}
	rpt_msvcrt_set_errno(RPT_ENOENT);
	rpt_win32_return_cdecl(c, 0xffffffffu);
}

void rpt_win32_msvcrt_fclose(struct cpu *restrict c)
{
	uint32_t file = rpt_win32_arg(c, 0);
	rpt_stream_of(file);
	int r = rpt_stream_close((uint32_t)rpt_msvcrt_stream_index(file));
	rpt_win32_return_cdecl(c, r ? 0xffffffffu : 0);
}

void rpt_win32_msvcrt_fflush(struct cpu *restrict c)
{
	uint32_t file = rpt_win32_arg(c, 0);
	int r = 0;
	if (!file) {
		rpt_msvcrt_flush_all();
	} else {
		struct rpt_stream *s = rpt_stream_of(file);
		r = rpt_stream_flush_writes(s);
		rpt_stream_sync((uint32_t)rpt_msvcrt_stream_index(file));
	}
	rpt_win32_return_cdecl(c, r ? 0xffffffffu : 0);
}

/* ---------------------------------------------------------------- reading and writing */

/* size_t fread(void *buf, size_t size, size_t count, FILE *f) */
void rpt_win32_msvcrt_fread(struct cpu *restrict c)
{
	uint32_t buf = rpt_win32_arg(c, 0), size = rpt_win32_arg(c, 1), count = rpt_win32_arg(c, 2);
	uint32_t file = rpt_win32_arg(c, 3);
	struct rpt_stream *s = rpt_stream_of(file);
	uint64_t total = (uint64_t)size * count, got = 0;
	while (got < total) {
		int ch = rpt_stream_getc(s);
		if (ch < 0)
			break;
		rpt_store_u8_le((uint32_t)(buf + got), (uint8_t)ch);
		got++;
	}
	rpt_stream_end_call(file);
	rpt_win32_return_cdecl(c, size ? (uint32_t)(got / size) : 0);
}

/* size_t fwrite(const void *buf, size_t size, size_t count, FILE *f) */
void rpt_win32_msvcrt_fwrite(struct cpu *restrict c)
{
	uint32_t buf = rpt_win32_arg(c, 0), size = rpt_win32_arg(c, 1), count = rpt_win32_arg(c, 2);
	uint32_t file = rpt_win32_arg(c, 3);
	uint64_t total = (uint64_t)size * count, done = 0;
	char chunk[256];
	while (done < total) {
		uint32_t n = total - done > sizeof chunk ? (uint32_t)sizeof chunk : (uint32_t)(total - done);
		rpt_guest_copy_in(chunk, (uint32_t)(buf + done), n);
		if (rpt_msvcrt_stream_write(file, chunk, n) != n)
			break;
		done += n;
	}
	rpt_stream_end_call(file);
	rpt_win32_return_cdecl(c, size ? (uint32_t)(done / size) : 0);
}

static void rpt_getc_common(struct cpu *c, uint32_t file)
{
	int ch = rpt_msvcrt_stream_getc(file);
	rpt_stream_end_call(file);
	rpt_win32_return_cdecl(c, (uint32_t)ch);
}

void rpt_win32_msvcrt_fgetc(struct cpu *restrict c)
{
	rpt_getc_common(c, rpt_win32_arg(c, 0));
}

void rpt_win32_msvcrt_getc(struct cpu *restrict c)
{
	rpt_getc_common(c, rpt_win32_arg(c, 0));
}

void rpt_win32_msvcrt__fgetchar(struct cpu *restrict c)
{
	rpt_getc_common(c, rpt_msvcrt_stream_addr(0));
}

void rpt_win32_msvcrt_getchar(struct cpu *restrict c)
{
	rpt_getc_common(c, rpt_msvcrt_stream_addr(0));
}

/* char *fgets(char *buf, int n, FILE *f) */
void rpt_win32_msvcrt_fgets(struct cpu *restrict c)
{
	uint32_t buf = rpt_win32_arg(c, 0), file = rpt_win32_arg(c, 2);
	int32_t n = (int32_t)rpt_win32_arg(c, 1);
	struct rpt_stream *s = rpt_stream_of(file);
	if (n <= 0) {
		rpt_win32_return_cdecl(c, 0);
		return;
	}
	int32_t got = 0;
	while (got < n - 1) {
		int ch = rpt_stream_getc(s);
		if (ch < 0)
			break;
		rpt_store_u8_le((uint32_t)(buf + (uint32_t)got), (uint8_t)ch);
		got++;
		if (ch == '\n')
			break;
	}
	rpt_store_u8_le((uint32_t)(buf + (uint32_t)got), 0);
	rpt_stream_end_call(file);
	rpt_win32_return_cdecl(c, got == 0 && n > 1 ? 0 : buf);
}

static void rpt_putc_common(struct cpu *c, int ch, uint32_t file)
{
	char b = (char)ch;
	uint32_t ok = rpt_msvcrt_stream_write(file, &b, 1);
	rpt_stream_end_call(file);
	rpt_win32_return_cdecl(c, ok ? (uint32_t)(ch & 0xff) : 0xffffffffu);
}

void rpt_win32_msvcrt_fputc(struct cpu *restrict c)
{
	rpt_putc_common(c, (int)rpt_win32_arg(c, 0), rpt_win32_arg(c, 1));
}

void rpt_win32_msvcrt_putc(struct cpu *restrict c)
{
	rpt_putc_common(c, (int)rpt_win32_arg(c, 0), rpt_win32_arg(c, 1));
}

void rpt_win32_msvcrt__fputchar(struct cpu *restrict c)
{
	rpt_putc_common(c, (int)rpt_win32_arg(c, 0), rpt_msvcrt_stream_addr(1));
}

void rpt_win32_msvcrt_putchar(struct cpu *restrict c)
{
	rpt_putc_common(c, (int)rpt_win32_arg(c, 0), rpt_msvcrt_stream_addr(1));
}

/* Writes the guest string at `str` to a stream; returns 0 or -1. */
static int rpt_put_guest_string(uint32_t file, uint32_t str)
{
	char chunk[256];
	uint32_t k = 0;
	for (uint32_t i = 0;; i++) {
		uint8_t ch = rpt_load_u8_le(str + i);
		if (ch)
			chunk[k++] = (char)ch;
		if (k == sizeof chunk || (!ch && k)) {
			if (rpt_msvcrt_stream_write(file, chunk, k) != k)
				return -1;
			k = 0;
		}
		if (!ch)
			return 0;
	}
}

void rpt_win32_msvcrt_fputs(struct cpu *restrict c)
{
	uint32_t file = rpt_win32_arg(c, 1);
	int r = rpt_put_guest_string(file, rpt_win32_arg(c, 0));
	rpt_stream_end_call(file);
	rpt_win32_return_cdecl(c, r ? 0xffffffffu : 0);
}

void rpt_win32_msvcrt_puts(struct cpu *restrict c)
{
	uint32_t file = rpt_msvcrt_stream_addr(1);
	int r = rpt_put_guest_string(file, rpt_win32_arg(c, 0));
	if (!r && rpt_msvcrt_stream_write(file, "\n", 1) != 1)
		r = -1;
	rpt_stream_end_call(file);
	rpt_win32_return_cdecl(c, r ? 0xffffffffu : 0);
}

void rpt_win32_msvcrt_ungetc(struct cpu *restrict c)
{
	uint32_t file = rpt_win32_arg(c, 1);
	int r = rpt_msvcrt_stream_ungetc(file, (int)rpt_win32_arg(c, 0));
	rpt_stream_end_call(file);
	rpt_win32_return_cdecl(c, (uint32_t)r);
}

/* ---------------------------------------------------------------- positioning and state */

static int64_t rpt_stream_tell(struct rpt_stream *s)
{
	int64_t at = rpt_seek(s->fd, 0, RPT_SEEK_CUR);
	if (at < 0)
		return -1;
	if (s->last == RPT_LAST_WRITE)
		return at + s->wlen;
	return at - (int64_t)(s->rlen - s->rpos) - (int64_t)s->npushed;
}

static int rpt_stream_seek(struct rpt_stream *s, int64_t offset, int whence)
{
	rpt_stream_flush_writes(s);
	if (whence == RPT_SEEK_CUR) {
		int64_t at = rpt_stream_tell(s);
		if (at < 0)
			return -1;
		offset += at;
		whence = RPT_SEEK_SET;
	}
	s->rpos = s->rlen = s->npushed = 0;
	s->last = RPT_LAST_NONE;
	s->eof = 0;
	if (rpt_seek(s->fd, offset, whence) < 0) {
		rpt_msvcrt_set_errno(RPT_EINVAL);
		return -1;
	}
	return 0;
}

void rpt_win32_msvcrt_fseek(struct cpu *restrict c)
{
	uint32_t file = rpt_win32_arg(c, 0);
	int32_t offset = (int32_t)rpt_win32_arg(c, 1);
	uint32_t whence = rpt_win32_arg(c, 2);
	struct rpt_stream *s = rpt_stream_of(file);
	int r = -1;
	if (whence <= 2)
		r = rpt_stream_seek(s, offset, (int)whence);
	else
		rpt_msvcrt_set_errno(RPT_EINVAL);
	rpt_stream_end_call(file);
	rpt_win32_return_cdecl(c, (uint32_t)r);
}

void rpt_win32_msvcrt_ftell(struct cpu *restrict c)
{
	uint32_t file = rpt_win32_arg(c, 0);
	int64_t at = rpt_stream_tell(rpt_stream_of(file));
	rpt_win32_return_cdecl(c, at < 0 || at > 0x7fffffff ? 0xffffffffu : (uint32_t)at);
}

void rpt_win32_msvcrt_rewind(struct cpu *restrict c)
{
	uint32_t file = rpt_win32_arg(c, 0);
	struct rpt_stream *s = rpt_stream_of(file);
	rpt_stream_seek(s, 0, RPT_SEEK_SET);
	s->error = 0;
	rpt_stream_end_call(file);
	rpt_win32_return_cdecl(c, 0);
}

/* fpos_t is a 64-bit offset in msvcrt. */
void rpt_win32_msvcrt_fgetpos(struct cpu *restrict c)
{
	int64_t at = rpt_stream_tell(rpt_stream_of(rpt_win32_arg(c, 0)));
	if (at >= 0)
		rpt_store_u64_le(rpt_win32_arg(c, 1), (uint64_t)at);
	rpt_win32_return_cdecl(c, at < 0 ? 0xffffffffu : 0);
}

void rpt_win32_msvcrt_fsetpos(struct cpu *restrict c)
{
	uint32_t file = rpt_win32_arg(c, 0);
	int r = rpt_stream_seek(rpt_stream_of(file), (int64_t)rpt_load_u64_le(rpt_win32_arg(c, 1)), RPT_SEEK_SET);
	rpt_stream_end_call(file);
	rpt_win32_return_cdecl(c, (uint32_t)r);
}

void rpt_win32_msvcrt_feof(struct cpu *restrict c)
{
	struct rpt_stream *s = rpt_stream_of(rpt_win32_arg(c, 0));
	rpt_win32_return_cdecl(c, s->eof && !s->npushed ? RPT_IOEOF : 0);
}

void rpt_win32_msvcrt_ferror(struct cpu *restrict c)
{
	struct rpt_stream *s = rpt_stream_of(rpt_win32_arg(c, 0));
	rpt_win32_return_cdecl(c, s->error ? RPT_IOERR : 0);
}

void rpt_win32_msvcrt_clearerr(struct cpu *restrict c)
{
	uint32_t file = rpt_win32_arg(c, 0);
	struct rpt_stream *s = rpt_stream_of(file);
	s->eof = s->error = 0;
	rpt_stream_end_call(file);
	rpt_win32_return_cdecl(c, 0);
}

/* int setvbuf(FILE *f, char *buf, int mode, size_t size) */
void rpt_win32_msvcrt_setvbuf(struct cpu *restrict c)
{
	uint32_t file = rpt_win32_arg(c, 0), mode = rpt_win32_arg(c, 2);
	struct rpt_stream *s = rpt_stream_of(file);
	if (mode != RPT_IOFBF && mode != RPT_IOLBF && mode != RPT_IONBF) {
		rpt_msvcrt_set_errno(RPT_EINVAL);
		rpt_win32_return_cdecl(c, 0xffffffffu);
		return;
	}
	rpt_stream_flush_writes(s);
	/* msvcrt treats line buffering as full buffering. */
	s->unbuffered = mode == RPT_IONBF;
	rpt_stream_end_call(file);
	rpt_win32_return_cdecl(c, 0);
}

void rpt_win32_msvcrt_setbuf(struct cpu *restrict c)
{
	uint32_t file = rpt_win32_arg(c, 0);
	struct rpt_stream *s = rpt_stream_of(file);
	rpt_stream_flush_writes(s);
	s->unbuffered = rpt_win32_arg(c, 1) == 0;
	rpt_stream_end_call(file);
	rpt_win32_return_cdecl(c, 0);
}

void rpt_win32_msvcrt__fileno(struct cpu *restrict c)
{
	rpt_win32_return_cdecl(c, (uint32_t)rpt_msvcrt_stream_index(rpt_win32_arg(c, 0)));
}

/* int _setmode(int fd, int mode): the stream with that number switches text/binary. */
void rpt_win32_msvcrt__setmode(struct cpu *restrict c)
{
	uint32_t fd = rpt_win32_arg(c, 0), mode = rpt_win32_arg(c, 1);
	if (fd >= RPT_MSVCRT_STREAMS || !rpt_streams[fd].open || (mode != RPT_O_TEXT && mode != RPT_O_BINARY)) {
		rpt_msvcrt_set_errno(fd >= RPT_MSVCRT_STREAMS || !rpt_streams[fd].open ? RPT_EBADF : RPT_EINVAL);
		rpt_win32_return_cdecl(c, 0xffffffffu);
		return;
	}
	struct rpt_stream *s = &rpt_streams[fd];
	uint32_t previous = s->text ? RPT_O_TEXT : RPT_O_BINARY;
	rpt_stream_flush_writes(s);
	s->text = mode == RPT_O_TEXT;
	rpt_win32_return_cdecl(c, previous);
}

void rpt_win32_msvcrt__isatty(struct cpu *restrict c)
{
	uint32_t fd = rpt_win32_arg(c, 0);
	int tty = fd < RPT_MSVCRT_STREAMS && rpt_streams[fd].open && rpt_streams[fd].fd <= 2 &&
		  rpt_is_terminal(rpt_streams[fd].fd);
	rpt_win32_return_cdecl(c, tty ? 0x40u : 0u);
}

/* ---------------------------------------------------------------- low-level I/O
 *
 * msvcrt's descriptors ("lowio") are the stream numbers here: descriptor n is `_iob[n]`'s file, as
 * _fileno says. A descriptor call works on the stream's file beneath its buffer, as msvcrt's do
 * beneath FILE: writes flush what the stream holds first, reads hand out what it already read
 * first (so a program that mixes the two layers sees its bytes in order). Text mode, which
 * _setmode and _fmode choose for the descriptor, translates as msvcrt's _read and _write do. */

/* The open stream of descriptor `fd`, or NULL with errno EBADF. */
static struct rpt_stream *rpt_lowio(uint32_t fd)
{
	if (fd >= RPT_MSVCRT_STREAMS || !rpt_streams[fd].open) {
		rpt_msvcrt_set_errno(RPT_EBADF);
		return NULL;
	}
	return &rpt_streams[fd];
}

/* The stream of descriptor `fd` if it is open for writing (`writing`) or reading, else NULL with
 * errno EBADF. */
static struct rpt_stream *rpt_lowio_for(uint32_t fd, int writing)
{
	struct rpt_stream *s = rpt_lowio(fd);
	if (s && !(writing ? s->writable : s->readable)) {
		rpt_msvcrt_set_errno(RPT_EBADF);
		return NULL;
	}
	return s;
}

/* int _read(int fd, void *buf, unsigned n): the bytes of one read of the file (fewer than n from
 * a pipe or terminal that has no more yet), 0 at its end, -1 (EBADF) if fd is not open for reading. */
void rpt_win32_msvcrt__read(struct cpu *restrict c)
{
	uint32_t fd = rpt_win32_arg(c, 0), buf = rpt_win32_arg(c, 1), n = rpt_win32_arg(c, 2);
	struct rpt_stream *s = rpt_lowio_for(fd, 0);
	if (!s) {
		rpt_win32_return_cdecl(c, 0xffffffffu);
		return;
	}
	uint32_t got = 0;
	if (s->text) {
		/* Byte by byte through the stream's text translation, without waiting for a second
		 * read of the file once one has delivered something. */
		while (got < n) {
			if (got && !s->npushed && s->rpos == s->rlen)
				break;
			int ch = rpt_stream_getc(s);
			if (ch < 0)
				break;
			rpt_store_u8_le(buf + got++, (uint8_t)ch);
		}
	} else {
		rpt_stream_switch(s, RPT_LAST_READ);
		while (got < n && s->npushed)
			rpt_store_u8_le(buf + got++, (uint8_t)s->pushed[--s->npushed]);
		uint32_t held = s->rlen - s->rpos;
		if (got < n && held) {
			uint32_t k = n - got < held ? n - got : held;
			rpt_guest_copy_out(buf + got, s->rbuf + s->rpos, k);
			s->rpos += k;
			got += k;
		}
		if (!got && n) {
			if (s == &rpt_streams[0])
				rpt_stream_flush_writes(&rpt_streams[1]);
			uint8_t chunk[RPT_STREAM_BUF];
			int64_t r = rpt_read(s->fd, chunk, n < sizeof chunk ? n : sizeof chunk);
			if (r < 0) {
				rpt_msvcrt_errno_from_host();
				rpt_win32_return_cdecl(c, 0xffffffffu);
				return;
			}
			rpt_guest_copy_out(buf, chunk, (uint32_t)r);
			got = (uint32_t)r;
		}
	}
	rpt_stream_sync(fd);
	rpt_win32_return_cdecl(c, got);
}

/* int _write(int fd, const void *buf, unsigned n): n (all written, "\n" as "\r\n" in text mode),
 * or -1 with errno EBADF (not open for writing) or ENOSPC (the host refused the rest). */
void rpt_win32_msvcrt__write(struct cpu *restrict c)
{
	uint32_t fd = rpt_win32_arg(c, 0), buf = rpt_win32_arg(c, 1), n = rpt_win32_arg(c, 2);
	struct rpt_stream *s = rpt_lowio_for(fd, 1);
	if (!s) {
		rpt_win32_return_cdecl(c, 0xffffffffu);
		return;
	}
	rpt_stream_switch(s, RPT_LAST_WRITE);
	int ok = rpt_stream_flush_writes(s) == 0;
	uint8_t chunk[RPT_STREAM_BUF];
	for (uint32_t done = 0; ok && done < n;) {
		uint32_t k = n - done < RPT_STREAM_BUF / 2 ? n - done : RPT_STREAM_BUF / 2;
		uint32_t len = 0;
		for (uint32_t i = 0; i < k; i++) {
			uint8_t b = rpt_load_u8_le(buf + done + i);
			if (s->text && b == '\n')
				chunk[len++] = '\r';
			chunk[len++] = b;
		}
		ok = rpt_write(s->fd, chunk, len) == len;
		done += k;
	}
	rpt_stream_sync(fd);
	if (!ok) {
		rpt_msvcrt_set_errno(RPT_ENOSPC);
		rpt_win32_return_cdecl(c, 0xffffffffu);
		return;
	}
	rpt_win32_return_cdecl(c, n);
}

/* int _close(int fd): closes the descriptor (and so its stream); 0, or -1 with errno EBADF. */
void rpt_win32_msvcrt__close(struct cpu *restrict c)
{
	uint32_t fd = rpt_win32_arg(c, 0);
	if (!rpt_lowio(fd)) {
		rpt_win32_return_cdecl(c, 0xffffffffu);
		return;
	}
	rpt_win32_return_cdecl(c, rpt_stream_close(fd) ? 0xffffffffu : 0);
}

/* __int64 _lseeki64(int fd, __int64 offset, int whence): the new position; -1 with errno ESPIPE
 * on a pipe or terminal (the standard descriptors; a redirected file is a pipe here, as
 * _fstati64 says), EINVAL for a bad whence or a position before the start. */
void rpt_win32_msvcrt__lseeki64(struct cpu *restrict c)
{
	uint32_t fd = rpt_win32_arg(c, 0);
	int64_t offset = (int64_t)rpt_win32_arg64(c, 1);
	uint32_t whence = rpt_win32_arg(c, 3);
	struct rpt_stream *s = rpt_lowio(fd);
	int64_t at = -1;
	if (s && s->fd <= 2) {
		rpt_msvcrt_set_errno(RPT_ESPIPE);
	} else if (s && whence > 2) {
		rpt_msvcrt_set_errno(RPT_EINVAL);
	} else if (s) {
		rpt_stream_flush_writes(s);
		/* What the stream read ahead is given back: the descriptor's position is the guest's. */
		if (whence == RPT_SEEK_CUR)
			offset -= (int64_t)(s->rlen - s->rpos) + (int64_t)s->npushed;
		s->rpos = s->rlen = s->npushed = 0;
		s->eof = 0;
		s->last = RPT_LAST_NONE;
		at = rpt_seek(s->fd, offset, (int)whence);
		if (at < 0)
			rpt_msvcrt_set_errno(RPT_EINVAL);
		rpt_stream_sync(fd);
	}
	rpt_win32_return_cdecl64(c, (uint64_t)at);
}

/* int _fstati64(int fd, struct _stati64 *st): msvcrt's 48-byte structure (st_mode at 6, st_nlink
 * at 8, st_rdev at 16, st_size at 24, three 32-bit times from 32). A terminal is a character
 * device and any other standard descriptor a pipe (_S_IFIFO), both with st_rdev = st_dev = fd as
 * msvcrt sets them; a sandbox file is a regular file, readable and writable (msvcrt's 0x1b6 less
 * nothing: Windows has no per-user bits), with its size. The times are 0: the platform keeps none. */
void rpt_win32_msvcrt__fstati64(struct cpu *restrict c)
{
	uint32_t fd = rpt_win32_arg(c, 0), st = rpt_win32_arg(c, 1);
	struct rpt_stream *s = rpt_lowio(fd);
	if (!s) {
		rpt_win32_return_cdecl(c, 0xffffffffu);
		return;
	}
	uint32_t mode, dev = 0;
	uint64_t size = 0;
	if (s->fd <= 2) {
		mode = rpt_is_terminal(s->fd) ? 0x2000u : 0x1000u;
		dev = fd;
	} else {
		mode = 0x8000u | 0x1b6u;
		rpt_stream_flush_writes(s);
		int64_t here = rpt_seek(s->fd, 0, RPT_SEEK_CUR);
		int64_t end = rpt_seek(s->fd, 0, RPT_SEEK_END);
		if (here >= 0 && end >= 0) {
			size = (uint64_t)end;
			rpt_seek(s->fd, here, RPT_SEEK_SET);
		}
	}
	rpt_guest_memset(st, 0, 48);
	rpt_store_u32_le(st + 0, dev);
	rpt_store_u16_le(st + 6, (uint16_t)mode);
	rpt_store_u16_le(st + 8, 1);
	rpt_store_u32_le(st + 16, dev);
	rpt_store_u32_le(st + 24, (uint32_t)size);
	rpt_store_u32_le(st + 28, (uint32_t)(size >> 32));
	rpt_win32_return_cdecl(c, 0);
}

/* ---------------------------------------------------------------- files by name */

static void rpt_remove_common(struct cpu *c)
{
	char host_path[RPT_SANDBOX_PATH_MAX];
	int r = rpt_sandbox_path(rpt_win32_arg(c, 0), host_path);
	if (r == 0 && rpt_remove(host_path) != 0) {
		rpt_msvcrt_errno_from_host();
		r = -1;
	}
	rpt_win32_return_cdecl(c, (uint32_t)r);
}

void rpt_win32_msvcrt_remove(struct cpu *restrict c)
{
	rpt_remove_common(c);
}

void rpt_win32_msvcrt__unlink(struct cpu *restrict c)
{
	rpt_remove_common(c);
}

void rpt_win32_msvcrt_rename(struct cpu *restrict c)
{
	char from[RPT_SANDBOX_PATH_MAX], to[RPT_SANDBOX_PATH_MAX];
	int r = rpt_sandbox_path(rpt_win32_arg(c, 0), from);
	if (r == 0)
		r = rpt_sandbox_path(rpt_win32_arg(c, 1), to);
	if (r == 0 && rpt_rename(from, to) != 0) {
		rpt_msvcrt_errno_from_host();
		r = -1;
	}
	rpt_win32_return_cdecl(c, (uint32_t)r);
}

/* msvcrt's _sys_errlist. */
static const char *rpt_msvcrt_error_text(uint32_t e)
{
	static const char *const texts[] = {
		"No error", "Operation not permitted", "No such file or directory", "No such process",
		"Interrupted function call", "Input/output error", "No such device or address", "Arg list too long",
		"Exec format error", "Bad file descriptor", "No child processes", "Resource temporarily unavailable",
		"Not enough space", "Permission denied", "Bad address", "Unknown error", "Resource device",
		"File exists", "Improper link", "No such device", "Not a directory", "Is a directory",
		"Invalid argument", "Too many open files in system", "Too many open files",
		"Inappropriate I/O control operation", "Unknown error", "File too large", "No space left on device",
		"Invalid seek", "Read-only file system", "Too many links", "Broken pipe", "Domain error",
		"Result too large", "Unknown error", "Resource deadlock avoided", "Unknown error", "Filename too long",
		"No locks available", "Function not implemented", "Directory not empty", "Illegal byte sequence",
	};
	return e < sizeof texts / sizeof texts[0] ? texts[e] : "Unknown error";
}

void rpt_win32_msvcrt_strerror(struct cpu *restrict c)
{
	rpt_guest_store_string(RPT_DATA_STRERROR, rpt_msvcrt_error_text(rpt_win32_arg(c, 0)));
	rpt_win32_return_cdecl(c, RPT_DATA_STRERROR);
}

/* void perror(const char *s): "s: message\n" on stderr. */
void rpt_win32_msvcrt_perror(struct cpu *restrict c)
{
	uint32_t s = rpt_win32_arg(c, 0);
	uint32_t err = rpt_msvcrt_stream_addr(2);
	if (s && rpt_load_u8_le(s)) {
		rpt_put_guest_string(err, s);
		rpt_msvcrt_stream_write(err, ": ", 2);
	}
	const char *text = rpt_msvcrt_error_text(rpt_load_u32_le(RPT_DATA_ERRNO));
	rpt_msvcrt_stream_write(err, text, rpt_win32_strlen(text));
	rpt_msvcrt_stream_write(err, "\n", 1);
	rpt_stream_end_call(err);
	rpt_win32_return_cdecl(c, 0);
}

/* ---------------------------------------------------------------- the printf family */

static void rpt_sink_stream(struct rpt_fmt_sink *sink, const char *bytes, uint32_t n)
{
	if (rpt_msvcrt_stream_write(sink->stream, bytes, n) != n)
		sink->failed = 1;
}

/* Memory sinks keep writing while there is room; `limit` counts the bytes that fit. */
static void rpt_sink_memory(struct rpt_fmt_sink *sink, const char *bytes, uint32_t n)
{
	uint32_t room = sink->count < sink->limit ? sink->limit - sink->count : 0;
	rpt_guest_copy_out(sink->dst + sink->count, bytes, n < room ? n : room);
}

static void rpt_sink_count(struct rpt_fmt_sink *sink, const char *bytes, uint32_t n)
{
	(void)sink;
	(void)bytes;
	(void)n;
}

static int rpt_print_stream(uint32_t file, uint32_t fmt, uint32_t args)
{
	rpt_stream_of(file);
	struct rpt_fmt_sink sink = { .put = rpt_sink_stream, .stream = file };
	int r = rpt_msvcrt_format(&sink, fmt, args);
	rpt_stream_end_call(file);
	return r;
}

void rpt_win32_msvcrt_printf(struct cpu *restrict c)
{
	rpt_win32_return_cdecl(c, (uint32_t)rpt_print_stream(rpt_msvcrt_stream_addr(1), rpt_win32_arg(c, 0), c->esp + 8));
}

void rpt_win32_msvcrt_vprintf(struct cpu *restrict c)
{
	rpt_win32_return_cdecl(c, (uint32_t)rpt_print_stream(rpt_msvcrt_stream_addr(1), rpt_win32_arg(c, 0), rpt_win32_arg(c, 1)));
}

void rpt_win32_msvcrt_fprintf(struct cpu *restrict c)
{
	rpt_win32_return_cdecl(c, (uint32_t)rpt_print_stream(rpt_win32_arg(c, 0), rpt_win32_arg(c, 1), c->esp + 12));
}

void rpt_win32_msvcrt_vfprintf(struct cpu *restrict c)
{
	rpt_win32_return_cdecl(c, (uint32_t)rpt_print_stream(rpt_win32_arg(c, 0), rpt_win32_arg(c, 1), rpt_win32_arg(c, 2)));
}

/* sprintf: unlimited, NUL-terminated. */
static uint32_t rpt_print_memory(uint32_t dst, uint32_t fmt, uint32_t args)
{
	struct rpt_fmt_sink sink = { .put = rpt_sink_memory, .dst = dst, .limit = 0xffffffffu };
	int r = rpt_msvcrt_format(&sink, fmt, args);
	rpt_store_u8_le(dst + sink.count, 0);
	return (uint32_t)r;
}

void rpt_win32_msvcrt_sprintf(struct cpu *restrict c)
{
	rpt_win32_return_cdecl(c, rpt_print_memory(rpt_win32_arg(c, 0), rpt_win32_arg(c, 1), c->esp + 12));
}

void rpt_win32_msvcrt_vsprintf(struct cpu *restrict c)
{
	rpt_win32_return_cdecl(c, rpt_print_memory(rpt_win32_arg(c, 0), rpt_win32_arg(c, 1), rpt_win32_arg(c, 2)));
}

/* _snprintf: at most `limit` bytes; the NUL only if there is room; -1 when the text was cut. */
static uint32_t rpt_print_limited(uint32_t dst, uint32_t limit, uint32_t fmt, uint32_t args)
{
	struct rpt_fmt_sink sink = { .put = rpt_sink_memory, .dst = dst, .limit = limit };
	rpt_msvcrt_format(&sink, fmt, args);
	if (sink.count < limit)
		rpt_store_u8_le(dst + sink.count, 0);
	return sink.count > limit ? 0xffffffffu : sink.count;
}

void rpt_win32_msvcrt__snprintf(struct cpu *restrict c)
{
	rpt_win32_return_cdecl(c, rpt_print_limited(rpt_win32_arg(c, 0), rpt_win32_arg(c, 1), rpt_win32_arg(c, 2), c->esp + 16));
}

void rpt_win32_msvcrt__vsnprintf(struct cpu *restrict c)
{
	rpt_win32_return_cdecl(c, rpt_print_limited(rpt_win32_arg(c, 0), rpt_win32_arg(c, 1), rpt_win32_arg(c, 2),
						    rpt_win32_arg(c, 3)));
}

static uint32_t rpt_print_count(uint32_t fmt, uint32_t args)
{
	struct rpt_fmt_sink sink = { .put = rpt_sink_count };
	return (uint32_t)rpt_msvcrt_format(&sink, fmt, args);
}

void rpt_win32_msvcrt__scprintf(struct cpu *restrict c)
{
	rpt_win32_return_cdecl(c, rpt_print_count(rpt_win32_arg(c, 0), c->esp + 8));
}

void rpt_win32_msvcrt__vscprintf(struct cpu *restrict c)
{
	rpt_win32_return_cdecl(c, rpt_print_count(rpt_win32_arg(c, 0), rpt_win32_arg(c, 1)));
}

/* ---------------------------------------------------------------- the scanf family */

static int rpt_src_stream_get(struct rpt_scan_source *src)
{
	int ch = rpt_msvcrt_stream_getc(src->stream);
	if (ch >= 0)
		src->consumed++;
	return ch;
}

static void rpt_src_stream_unget(struct rpt_scan_source *src, int ch)
{
	rpt_msvcrt_stream_ungetc(src->stream, ch);
	src->consumed--;
}

static int rpt_src_string_get(struct rpt_scan_source *src)
{
	uint8_t ch = rpt_load_u8_le(src->at);
	if (!ch)
		return -1;
	src->at++;
	src->consumed++;
	return ch;
}

static void rpt_src_string_unget(struct rpt_scan_source *src, int ch)
{
	(void)ch;
	src->at--;
	src->consumed--;
}

static uint32_t rpt_scan_stream(uint32_t file, uint32_t fmt, uint32_t args)
{
	rpt_stream_of(file);
	struct rpt_scan_source src = { .get = rpt_src_stream_get, .unget = rpt_src_stream_unget, .stream = file };
	int r = rpt_msvcrt_scan(&src, fmt, args);
	rpt_stream_end_call(file);
	return (uint32_t)r;
}

void rpt_win32_msvcrt_scanf(struct cpu *restrict c)
{
	rpt_win32_return_cdecl(c, rpt_scan_stream(rpt_msvcrt_stream_addr(0), rpt_win32_arg(c, 0), c->esp + 8));
}

void rpt_win32_msvcrt_fscanf(struct cpu *restrict c)
{
	rpt_win32_return_cdecl(c, rpt_scan_stream(rpt_win32_arg(c, 0), rpt_win32_arg(c, 1), c->esp + 12));
}

void rpt_win32_msvcrt_sscanf(struct cpu *restrict c)
{
	struct rpt_scan_source src = { .get = rpt_src_string_get, .unget = rpt_src_string_unget, .at = rpt_win32_arg(c, 0) };
	rpt_win32_return_cdecl(c, (uint32_t)rpt_msvcrt_scan(&src, rpt_win32_arg(c, 1), c->esp + 12));
}
