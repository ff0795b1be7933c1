/* lz.c - a compressor round trip: text-like data from a word generator, LZ77 with hash chains
 * (a 32 KiB window, matches of 3 to 258 bytes, eight tokens per flag byte), decompression checked
 * against the input, and the Huffman code lengths of the compressed bytes (the size an entropy
 * stage would reach). Input: the number of 64 KiB blocks. */
#include "bench.h"

#define BLOCK (64u * 1024u)
#define WINDOW (32u * 1024u)
#define HASH_BITS 13
#define MAX_CHAIN 24
#define MIN_MATCH 3
#define MAX_MATCH 258

static unsigned char input[BLOCK];
static unsigned char packed[BLOCK + BLOCK / 8 + 16];
static unsigned char unpacked[BLOCK];
static s32 head[1u << HASH_BITS];
static s32 prev[BLOCK];

static const char *const words[] = {
	"the", "of", "and", "recompile", "guest", "host", "function", "block", "register", "memory",
	"a", "to", "in", "is", "that", "lift", "pass", "emit", "shard", "cache", "entry", "address",
	"jump", "table", "call", "return", "flag", "carry", "overflow", "stack",
};

/* Fills input with words chosen with a skewed distribution, punctuation and some numbers. */
static void generate(void)
{
	u32 n = 0;
	while (n < BLOCK) {
		u32 r = bench_rand();
		u32 pick = (r & 0xff) * (r >> 8 & 0xff) >> 11; /* 0..31, small values likelier */
		const char *w = pick < sizeof words / sizeof words[0] ? words[pick] : 0;
		if (w) {
			while (*w && n < BLOCK)
				input[n++] = (unsigned char)*w++;
		} else {
			u32 digits = r >> 16;
			for (int i = 0; i < 4 && n < BLOCK; i++, digits /= 10)
				input[n++] = (unsigned char)('0' + digits % 10);
		}
		if (n < BLOCK)
			input[n++] = (r >> 24) < 20 ? '.' : (r >> 24) < 30 ? '\n' : ' ';
	}
}

static u32 hash3(const unsigned char *p)
{
	u32 v = (u32)p[0] << 16 | (u32)p[1] << 8 | p[2];
	return (v * 2654435761u) >> (32 - HASH_BITS);
}

/* LZ77 into packed; returns the packed length. Matches are offset-1 (15 bits, big-endian) and length-3. */
static u32 compress(void)
{
	for (u32 i = 0; i < (1u << HASH_BITS); i++)
		head[i] = -1;
	u32 out = 0, pos = 0;
	while (pos < BLOCK) {
		u32 flag_at = out++;
		unsigned char flags = 0;
		for (int t = 0; t < 8 && pos < BLOCK; t++) {
			u32 best_len = 0, best_off = 0;
			if (pos + MIN_MATCH <= BLOCK) {
				u32 h = hash3(input + pos);
				s32 cand = head[h];
				u32 limit = BLOCK - pos < MAX_MATCH ? BLOCK - pos : MAX_MATCH;
				for (int chain = 0; cand >= 0 && pos - (u32)cand <= WINDOW && chain < MAX_CHAIN; chain++) {
					const unsigned char *a = input + cand, *b = input + pos;
					u32 len = 0;
					while (len < limit && a[len] == b[len])
						len++;
					if (len > best_len) {
						best_len = len;
						best_off = pos - (u32)cand;
						if (len == limit)
							break;
					}
					cand = prev[cand];
				}
			}
			u32 advance = best_len >= MIN_MATCH ? best_len : 1;
			for (u32 k = 0; k < advance; k++) {
				if (pos + k + MIN_MATCH <= BLOCK) {
					u32 h = hash3(input + pos + k);
					prev[pos + k] = head[h];
					head[h] = (s32)(pos + k);
				}
			}
			if (best_len >= MIN_MATCH) {
				flags |= (unsigned char)(1u << t);
				packed[out++] = (unsigned char)((best_off - 1) >> 8);
				packed[out++] = (unsigned char)(best_off - 1);
				packed[out++] = (unsigned char)(best_len - MIN_MATCH);
			} else {
				packed[out++] = input[pos];
			}
			pos += advance;
		}
		packed[flag_at] = flags;
	}
	return out;
}

/* The inverse of compress; returns the unpacked length. */
static u32 decompress(u32 packed_len)
{
	u32 in = 0, out = 0;
	while (in < packed_len && out < BLOCK) {
		unsigned char flags = packed[in++];
		for (int t = 0; t < 8 && in < packed_len && out < BLOCK; t++) {
			if (flags & (1u << t)) {
				u32 off = ((u32)packed[in] << 8 | packed[in + 1]) + 1;
				u32 len = (u32)packed[in + 2] + MIN_MATCH;
				in += 3;
				for (u32 k = 0; k < len && out < BLOCK; k++, out++)
					unpacked[out] = unpacked[out - off];
			} else {
				unpacked[out++] = packed[in++];
			}
		}
	}
	return out;
}

/* The total bits of an order-0 Huffman code for packed's bytes (a tree built by repeated
 * selection of the two lightest nodes). */
static u32 huffman_bits(u32 len)
{
	u32 weight[512], parent[512];
	u32 nodes = 256;
	for (u32 i = 0; i < 512; i++)
		weight[i] = 0, parent[i] = 0;
	for (u32 i = 0; i < len; i++)
		weight[packed[i]]++;
	unsigned char alive[512] = { 0 };
	u32 live = 0;
	for (u32 i = 0; i < 256; i++)
		if (weight[i])
			alive[i] = 1, live++;
	while (live > 1) {
		u32 a = 0, b = 0, wa = 0xffffffffu, wb = 0xffffffffu;
		for (u32 i = 0; i < nodes; i++) {
			if (!alive[i])
				continue;
			if (weight[i] < wa) {
				b = a, wb = wa;
				a = i, wa = weight[i];
			} else if (weight[i] < wb) {
				b = i, wb = weight[i];
			}
		}
		alive[a] = alive[b] = 0;
		weight[nodes] = wa + wb;
		parent[a] = parent[b] = nodes;
		alive[nodes++] = 1;
		live--;
	}
	u32 bits = 0;
	for (u32 i = 0; i < 256; i++) {
		u32 depth = 0;
		for (u32 n = i; weight[i] && n != nodes - 1; n = parent[n])
			depth++;
		bits += depth * weight[i];
	}
	return bits;
}

int main(void)
{
	u32 blocks = bench_scale(1);
	u32 sum = 0x811c9dc5u, total_packed = 0, total_bits = 0, mismatches = 0;
	for (u32 b = 0; b < blocks; b++) {
		generate();
		u32 packed_len = compress();
		u32 unpacked_len = decompress(packed_len);
		for (u32 i = 0; i < BLOCK; i++)
			mismatches += unpacked[i] != input[i];
		mismatches += unpacked_len != BLOCK;
		u32 bits = huffman_bits(packed_len);
		total_packed += packed_len;
		total_bits += bits;
		sum = bench_mix(bench_mix(sum, packed_len), bits);
		for (u32 i = 0; i < packed_len; i += 61)
			sum = bench_mix(sum, packed[i]);
	}
	bench_line("packed", total_packed);
	bench_line("huffman-bits", total_bits);
	bench_line("mismatches", mismatches);
	bench_line("checksum", sum);
	return 0;
}
