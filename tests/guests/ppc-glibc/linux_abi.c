/*
 * linux_abi.c - a freestanding probe of what the linux-syscalls platform gives a program at start
 * and in its system calls (tests/ppc_glibc.rs builds it with ../ppc/gc.ld at test time and checks
 * its output): the initial stack (argc, argv, envp, the auxiliary vector), mfpvr, and the calls a
 * static glibc makes, answered as Linux answers them. Small, so it recompiles in seconds, where
 * hello.c brings all of glibc along.
 */
typedef unsigned int u32;

/* _start: r1 points at argc, as the kernel leaves it; give C a frame below it. */
__asm__(".section .init,\"ax\"\n"
	".globl _start\n"
	"_start:\n"
	"\tmr 3,1\n"
	"\tstwu 1,-64(1)\n"
	"\tb probe\n"
	".previous\n");

/* A system call: the result, or minus the errno when CR0's SO says it failed. */
static long sys(long n, long a, long b, long c, long d, long e)
{
	register long r0 __asm__("r0") = n;
	register long r3 __asm__("r3") = a;
	register long r4 __asm__("r4") = b;
	register long r5 __asm__("r5") = c;
	register long r6 __asm__("r6") = d;
	register long r7 __asm__("r7") = e;
	__asm__ volatile("sc\n\tbns+ 1f\n\tneg %1,%1\n1:"
			 : "+r"(r0), "+r"(r3), "+r"(r4), "+r"(r5), "+r"(r6), "+r"(r7)
			 :
			 : "r8", "r9", "r10", "r11", "r12", "cr0", "ctr", "memory");
	return r3;
}

static u32 len(const char *s)
{
	u32 n = 0;
	while (s[n])
		n++;
	return n;
}

static void put(const char *s)
{
	sys(4, 1, (long)s, len(s), 0, 0);
}

static void num(long v)
{
	char b[16];
	int i = 15;
	int neg = v < 0;
	unsigned long u = neg ? -(unsigned long)v : (unsigned long)v;
	b[i] = 0;
	do {
		b[--i] = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (neg)
		b[--i] = '-';
	put(b + i);
}

static void hex(u32 v)
{
	char b[11] = "0x00000000";
	for (int i = 0; i < 8; i++)
		b[9 - i] = "0123456789abcdef"[(v >> (4 * i)) & 15];
	put(b);
}

static void line(const char *what, long v)
{
	put(what);
	put(" ");
	num(v);
	put("\n");
}

static int starts(const char *s, const char *prefix)
{
	while (*prefix)
		if (*s++ != *prefix++)
			return 0;
	return 1;
}

extern char _start[];

/* Never defined: a call of it is a call of nothing, as glibc's calls of undefined weak functions are. */
extern void rpt_undefined_weak(void) __attribute__((weak));

void probe(u32 *sp) __attribute__((noreturn, used));
void probe(u32 *sp)
{
	/* The initial stack. */
	u32 argc = sp[0];
	char **argv = (char **)(sp + 1);
	line("argc", argc);
	line("sp aligned", ((u32)sp & 15) == 0);
	line("argv[0] set", argv[0] && argv[0][0]);
	for (u32 i = 1; i < argc; i++) {
		put("arg ");
		put(argv[i]);
		put("\n");
	}
	char **envp = argv + argc + 1;
	u32 n = 0;
	for (; envp[n]; n++)
		if (starts(envp[n], "RPT_ABI_PROBE=")) {
			put("env ");
			put(envp[n]);
			put("\n");
		}
	u32 *aux = (u32 *)(envp + n + 1);
	for (; aux[0] != 0; aux += 2) {
		u32 type = aux[0], v = aux[1];
		switch (type) {
		case 3: put("AT_PHDR present\n"); break;
		case 6: line("AT_PAGESZ", v); break;
		case 9: line("AT_ENTRY is _start", v == (u32)_start); break;
		case 16: put("AT_HWCAP "); hex(v); put("\n"); break;
		case 17: line("AT_CLKTCK", v); break;
		case 19: line("AT_DCACHEBSIZE", v); break;
		case 20: line("AT_ICACHEBSIZE", v); break;
		case 23: line("AT_SECURE", v); break;
		case 25: line("AT_RANDOM aligned", v != 0 && (v & 15) == 0); break;
		case 26: line("AT_HWCAP2", v); break;
		case 31: line("AT_EXECFN present", v != 0); break;
		default: break;
		}
	}

	u32 pvr;
	__asm__ volatile("mfpvr %0" : "=r"(pvr));
	put("pvr ");
	hex(pvr);
	put("\n");

	/* uname: sysname and machine. */
	char uts[6 * 65];
	line("uname", sys(122, (long)uts, 0, 0, 0, 0));
	put(uts);
	put(" ");
	put(uts + 4 * 65);
	put("\n");

	/* statx of standard output (a pipe in the test) and isatty's ioctl. */
	u32 stx[64];
	line("statx", sys(383, 1, (long)"", 0x1000, 0x7ff, (long)stx));
	line("statx is a fifo", (stx[7] >> 16 & 0170000) == 0010000);
	line("ioctl TCGETS", sys(54, 1, 0x402c7413, (long)stx, 0, 0));
	line("ioctl TIOCGWINSZ", sys(54, 1, 0x40087468, (long)stx, 0, 0));

	unsigned char rnd[8] = {0};
	line("getrandom", sys(359, (long)rnd, 8, 0, 0, 0));
	u32 t0[4], t1[4];
	line("clock_gettime64", sys(403, 1, (long)t0, 0, 0, 0));
	sys(403, 1, (long)t1, 0, 0, 0);
	line("monotonic", t1[0] > t0[0] || (t1[0] == t0[0] && (t1[1] > t0[1] || (t1[1] == t0[1] && t1[3] >= t0[3]))));

	/* Files in the sandbox. */
	long fd = sys(5, (long)"abi.txt", 0, 0, 0, 0);
	line("open", fd);
	char buf[32];
	long got = sys(3, fd, (long)buf, sizeof buf - 1, 0, 0);
	line("read", got);
	buf[got > 0 ? got : 0] = 0;
	put(buf);
	u32 pos[2];
	line("_llseek", sys(140, fd, 0, 0, (long)pos, 2));
	line("position", pos[1]);
	line("close", sys(6, fd, 0, 0, 0, 0));
	line("read after close", sys(3, fd, (long)buf, 1, 0, 0));
	line("openat absolute", sys(286, -100, (long)"/etc/passwd", 0, 0, 0));

	u32 iov[4] = {(u32) "writev: a", 9, (u32) "+b\n", 3};
	line("writev", sys(146, 1, (long)iov, 2, 0, 0));

	long brk0 = sys(45, 0, 0, 0, 0, 0);
	line("brk grows", sys(45, brk0 + 8192, 0, 0, 0, 0) == brk0 + 8192);
	long map = sys(192, 0, 8192, 3, 0x22, -1);
	line("mmap2 page aligned", (unsigned long)map < (unsigned long)-4096 && (map & 4095) == 0);

	/* 500 is no system call: ENOSYS both times, reported once. */
	line("call 500", sys(500, 0, 0, 0, 0, 0));
	line("call 500 again", sys(500, 0, 0, 0, 0, 0));
	line("rseq", sys(387, 0, 0, 0, 0, 0));
	/* Unguarded on purpose: with five arguments or more the program calls the undefined function,
	 * which faults (through rpt: a guest fault at this call). */
	if (argc > 5)
		rpt_undefined_weak();
	sys(234, 7, 0, 0, 0, 0);
	for (;;)
		;
}
