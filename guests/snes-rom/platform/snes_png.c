/*
 * snes_png.c - a PNG writer that needs no library: 8-bit truecolour, no filtering, one IDAT
 * holding a zlib stream of stored (uncompressed) deflate blocks, with its own CRC-32 and
 * Adler-32. The same pixels always give the same bytes.
 *
 * Stored blocks make every length known before the first byte is written, so the file is
 * written front to back through one small buffer, without the picture being copied first; any
 * width and height work.
 */
#include "snes_internal.h"

/* The largest stored deflate block. */
#define STORED_BLOCK_MAX 65535u

static uint32_t crc_table[256];

/* CRC-32 as PNG defines it: reflected, polynomial 0xEDB88320, initial and final XOR 0xFFFFFFFF. */
static uint32_t crc32_update(uint32_t crc, const uint8_t *p, size_t n)
{
	if (!crc_table[1]) {
		for (uint32_t i = 0; i < 256; i++) {
			uint32_t c = i;
			for (int k = 0; k < 8; k++)
				c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
			crc_table[i] = c;
		}
	}
	for (size_t i = 0; i < n; i++)
		crc = crc_table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
	return crc;
}

/* The file being written: its descriptor, the chunk's running CRC, and the bytes not yet written. */
struct png_out {
	int fd;
	int ok;           /* every write so far succeeded */
	uint32_t crc;     /* of the current chunk's type and data so far */
	uint32_t a, b;    /* Adler-32 of the image data so far */
	uint64_t raw_left; /* image data bytes still to come */
	uint32_t block_left; /* bytes still to come in the current stored block */
	size_t used;
	uint8_t buf[8192];
};

static void flush(struct png_out *o)
{
	if (o->used && o->ok)
		o->ok = snes_host_write(o->fd, o->buf, o->used) == 0;
	o->used = 0;
}

/* Bytes of the file; counted in the current chunk's CRC when `in_crc`. */
static void put(struct png_out *o, const uint8_t *p, size_t n, int in_crc)
{
	if (in_crc)
		o->crc = crc32_update(o->crc, p, n);
	while (n) {
		size_t k = sizeof o->buf - o->used;
		if (k > n)
			k = n;
		__builtin_memcpy(o->buf + o->used, p, k);
		o->used += k;
		p += k;
		n -= k;
		if (o->used == sizeof o->buf)
			flush(o);
	}
}

static void be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* A chunk's length and type; its data follow through put(..., 1), then chunk_end. */
static void chunk_begin(struct png_out *o, const char type[4], uint32_t len)
{
	uint8_t head[4];
	be32(head, len);
	put(o, head, 4, 0);
	o->crc = 0xffffffffu;
	put(o, (const uint8_t *)type, 4, 1);
}

static void chunk_end(struct png_out *o)
{
	uint8_t tail[4];
	be32(tail, o->crc ^ 0xffffffffu);
	put(o, tail, 4, 0);
}

/* The header of the next stored block: BFINAL, BTYPE 00, LEN and its complement NLEN. */
static void block_header(struct png_out *o)
{
	uint32_t n = o->raw_left < STORED_BLOCK_MAX ? (uint32_t)o->raw_left : STORED_BLOCK_MAX;
	uint8_t head[5] = { (uint8_t)(n == o->raw_left), (uint8_t)n, (uint8_t)(n >> 8), (uint8_t)~n,
		(uint8_t)(~n >> 8) };
	put(o, head, 5, 1);
	o->block_left = n;
}

/* Image data: into stored blocks of at most STORED_BLOCK_MAX bytes, and into the Adler-32. */
static void put_image_data(struct png_out *o, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		o->a = (o->a + p[i]) % 65521u;
		o->b = (o->b + o->a) % 65521u;
	}
	while (n) {
		size_t k;
		if (!o->block_left)
			block_header(o);
		k = o->block_left < n ? o->block_left : n;
		put(o, p, k, 1);
		o->block_left -= (uint32_t)k;
		o->raw_left -= k;
		p += k;
		n -= k;
	}
}

int snes_write_png(const char *path, const uint8_t *rgb, unsigned width, unsigned height)
{
	static const uint8_t signature[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };
	/* zlib: CMF 0x78 (deflate, 32 KiB window), FLG 0x01 (no dictionary, check bits). */
	static const uint8_t zlib_header[2] = { 0x78, 0x01 };
	static struct png_out o;
	uint64_t row = 1 + 3 * (uint64_t)width, raw_len = row * height;
	uint64_t blocks = raw_len ? (raw_len + STORED_BLOCK_MAX - 1) / STORED_BLOCK_MAX : 1;
	uint64_t idat_len = 2 + raw_len + 5 * blocks + 4;
	uint8_t ihdr[13], adler[4];
	const uint8_t filter_none = 0;

	if (idat_len > 0x7fffffffu)
		return -1;
	o.fd = snes_host_open(path, 1);
	if (o.fd < 0)
		return -1;
	o.ok = 1;
	o.used = 0;
	o.a = 1;
	o.b = 0;
	o.raw_left = raw_len;
	o.block_left = 0;

	be32(ihdr, width);
	be32(ihdr + 4, height);
	ihdr[8] = 8;  /* bit depth */
	ihdr[9] = 2;  /* colour type: truecolour */
	ihdr[10] = 0; /* compression: deflate */
	ihdr[11] = 0; /* filter method 0 */
	ihdr[12] = 0; /* no interlace */
	put(&o, signature, 8, 0);
	chunk_begin(&o, "IHDR", 13);
	put(&o, ihdr, 13, 1);
	chunk_end(&o);

	chunk_begin(&o, "IDAT", (uint32_t)idat_len);
	put(&o, zlib_header, 2, 1);
	if (!raw_len)
		block_header(&o);
	/* Scanlines, each after filter type 0 (none). */
	for (unsigned y = 0; y < height; y++) {
		put_image_data(&o, &filter_none, 1);
		put_image_data(&o, rgb + (size_t)y * 3 * width, 3 * (size_t)width);
	}
	/* Adler-32 of the image data, most significant byte first. */
	be32(adler, (o.b << 16) | o.a);
	put(&o, adler, 4, 1);
	chunk_end(&o);

	chunk_begin(&o, "IEND", 0);
	chunk_end(&o);
	flush(&o);
	o.ok = (snes_host_close(o.fd) == 0) && o.ok;
	return o.ok ? 0 : -1;
}
