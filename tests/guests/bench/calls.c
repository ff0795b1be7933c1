/* calls.c - call-heavy work, the shapes games are full of: a quicksort whose comparisons go through
 * a callback, deep recursion (a binary tree built, walked and summed recursively), a table of small
 * functions called by index, and a C++-style virtual dispatch loop over objects of several classes
 * (a vtable pointer in each object). Every indirect call in the recompiled program goes through
 * rpt's function lookup. Input: the number of rounds. */
#include "bench.h"

/* ---------------------------------------------------------------- qsort with a comparator */

typedef int (*compare_fn)(const void *, const void *);

static int compare_u32(const void *a, const void *b)
{
	u32 x = *(const u32 *)a, y = *(const u32 *)b;
	return x < y ? -1 : x > y;
}

/* Descending by the low 16 bits, then ascending by the rest: a comparator with some work in it. */
static int compare_mixed(const void *a, const void *b)
{
	u32 x = *(const u32 *)a, y = *(const u32 *)b;
	if ((x & 0xffff) != (y & 0xffff))
		return (x & 0xffff) > (y & 0xffff) ? -1 : 1;
	return x < y ? -1 : x > y;
}

static void swap_u32(u32 *a, u32 *b)
{
	u32 t = *a;
	*a = *b;
	*b = t;
}

/* A quicksort on u32 through `cmp` (median of three, insertion sort below 8 elements), written
 * here rather than taken from a C library so that every build runs the same code. */
static void sort_u32(u32 *v, s32 n, compare_fn cmp)
{
	while (n > 8) {
		s32 mid = n / 2;
		if (cmp(&v[mid], &v[0]) < 0)
			swap_u32(&v[mid], &v[0]);
		if (cmp(&v[n - 1], &v[0]) < 0)
			swap_u32(&v[n - 1], &v[0]);
		if (cmp(&v[n - 1], &v[mid]) < 0)
			swap_u32(&v[n - 1], &v[mid]);
		u32 pivot = v[mid];
		s32 i = 0, j = n - 1;
		for (;;) {
			while (cmp(&v[i], &pivot) < 0)
				i++;
			while (cmp(&pivot, &v[j]) < 0)
				j--;
			if (i >= j)
				break;
			swap_u32(&v[i], &v[j]);
			i++;
			j--;
		}
		/* Recurse into the smaller side, loop on the larger. */
		if (j + 1 < n - j - 1) {
			sort_u32(v, j + 1, cmp);
			v += j + 1;
			n -= j + 1;
		} else {
			sort_u32(v + j + 1, n - j - 1, cmp);
			n = j + 1;
		}
	}
	for (s32 i = 1; i < n; i++)
		for (s32 k = i; k > 0 && cmp(&v[k], &v[k - 1]) < 0; k--)
			swap_u32(&v[k], &v[k - 1]);
}

#define SORT_N 4096
static u32 sort_data[SORT_N];

static u32 sort_round(u32 round)
{
	for (u32 i = 0; i < SORT_N; i++)
		sort_data[i] = bench_rand();
	sort_u32(sort_data, SORT_N, (round & 1) ? compare_mixed : compare_u32);
	u32 h = 2166136261u;
	for (u32 i = 0; i < SORT_N; i += 97)
		h = bench_mix(h, sort_data[i]);
	return h;
}

/* ---------------------------------------------------------------- deep recursion */

#define NODES 8191
struct node {
	u32 value;
	s32 left, right;
};
static struct node nodes[NODES];
static s32 node_count;

/* Builds a balanced tree over values lo..hi-1 (each scrambled), recursively; returns its root. */
static s32 build_tree(u32 lo, u32 hi, u32 salt)
{
	if (lo >= hi)
		return -1;
	u32 mid = lo + (hi - lo) / 2;
	s32 at = node_count++;
	nodes[at].value = mid * 2654435761u ^ salt;
	nodes[at].left = build_tree(lo, mid, salt);
	nodes[at].right = build_tree(mid + 1, hi, salt);
	return at;
}

/* The sum of the values at odd depths minus those at even depths, recursively. */
static u32 walk_tree(s32 at, u32 depth)
{
	if (at < 0)
		return 0;
	u32 here = (depth & 1) ? nodes[at].value : 0u - nodes[at].value;
	return here + walk_tree(nodes[at].left, depth + 1) + walk_tree(nodes[at].right, depth + 1);
}

/* Ackermann's function for m = 2: recursion 2n + 3 calls deep. */
static u32 ackermann(u32 m, u32 n)
{
	if (m == 0)
		return n + 1;
	if (n == 0)
		return ackermann(m - 1, 1);
	return ackermann(m - 1, ackermann(m, n - 1));
}

static u32 recursion_round(u32 round)
{
	node_count = 0;
	s32 root = build_tree(0, NODES, round * 0x9e3779b9u);
	return walk_tree(root, 0) ^ ackermann(2, 200 + (round & 63));
}

/* ---------------------------------------------------------------- a table of small functions */

typedef u32 (*op_fn)(u32, u32);

static u32 op_add(u32 a, u32 b) { return a + b; }
static u32 op_sub(u32 a, u32 b) { return a - b; }
static u32 op_xor(u32 a, u32 b) { return a ^ b; }
static u32 op_mul(u32 a, u32 b) { return a * (b | 1); }
static u32 op_rotl(u32 a, u32 b) { return (a << (b & 31)) | (a >> ((32 - (b & 31)) & 31)); }
static u32 op_min(u32 a, u32 b) { return a < b ? a : b; }
static u32 op_max(u32 a, u32 b) { return a > b ? a : b; }
static u32 op_avg(u32 a, u32 b) { return (a >> 1) + (b >> 1) + (a & b & 1); }

static const op_fn op_table[8] = { op_add, op_sub, op_xor, op_mul, op_rotl, op_min, op_max, op_avg };

static u32 table_round(u32 round)
{
	u32 acc = round, x = 0x12345678u;
	for (u32 i = 0; i < 200000; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		acc = op_table[x & 7](acc, x);
	}
	return acc;
}

/* ---------------------------------------------------------------- virtual dispatch */

struct shape;
struct shape_vtable {
	u32 (*area)(const struct shape *);
	u32 (*perimeter)(const struct shape *);
	void (*grow)(struct shape *, u32);
};

struct shape {
	const struct shape_vtable *vt;
	u32 a, b;
};

static u32 rect_area(const struct shape *s) { return s->a * s->b; }
static u32 rect_perimeter(const struct shape *s) { return 2 * (s->a + s->b); }
static void rect_grow(struct shape *s, u32 k) { s->a += k & 3; s->b += (k >> 2) & 3; }
static u32 square_area(const struct shape *s) { return s->a * s->a; }
static u32 square_perimeter(const struct shape *s) { return 4 * s->a; }
static void square_grow(struct shape *s, u32 k) { s->a += k & 1; }
static u32 tri_area(const struct shape *s) { return s->a * s->b / 2; }
static u32 tri_perimeter(const struct shape *s) { return s->a + s->b + (s->a > s->b ? s->a : s->b); }
static void tri_grow(struct shape *s, u32 k) { s->b += k & 7; }

static const struct shape_vtable rect_vt = { rect_area, rect_perimeter, rect_grow };
static const struct shape_vtable square_vt = { square_area, square_perimeter, square_grow };
static const struct shape_vtable tri_vt = { tri_area, tri_perimeter, tri_grow };

#define SHAPES 512
static struct shape shapes[SHAPES];

static u32 virtual_round(u32 round)
{
	static const struct shape_vtable *const kinds[3] = { &rect_vt, &square_vt, &tri_vt };
	for (u32 i = 0; i < SHAPES; i++) {
		u32 r = bench_rand();
		shapes[i].vt = kinds[r % 3];
		shapes[i].a = 1 + (r >> 8) % 50;
		shapes[i].b = 1 + (r >> 16) % 50;
	}
	u32 total = round;
	for (u32 pass = 0; pass < 100; pass++)
		for (u32 i = 0; i < SHAPES; i++) {
			struct shape *s = &shapes[i];
			total += s->vt->area(s) ^ s->vt->perimeter(s);
			s->vt->grow(s, total);
			if (s->a > 1000 || s->b > 1000)
				s->a = s->b = 1;
		}
	return total;
}

int main(void)
{
	u32 rounds = bench_scale(1);
	u32 sorted = 2166136261u, recursive = 0, table = 0, virt = 0;
	for (u32 r = 0; r < rounds; r++) {
		sorted = bench_mix(sorted, sort_round(r));
		recursive = bench_mix(recursive, recursion_round(r));
		table = bench_mix(table, table_round(r));
		virt = bench_mix(virt, virtual_round(r));
	}
	bench_line("sort", sorted);
	bench_line("recursion", recursive);
	bench_line("table", table);
	bench_line("virtual", virt);
	bench_line("checksum", bench_mix(bench_mix(bench_mix(sorted, recursive), table), virt));
	return 0;
}
