/* A guest for the flag-ABI audit test (tests/passes.rs): `below` returns its result in CF, the way
 * hand-written assembly often does. Built with -DREAD_CF, the caller reads CF right after the call
 * (setc), so `below` becomes flag-returning; without it, nothing reads a flag across the call.
 * Either way the exit status is 12 (0b1100: a < 2 for a = 0, 1, then not for 2, 3). */
__declspec(dllimport) void __stdcall ExitProcess(unsigned);

__asm__(".text\n.globl _below\n_below:\n\tmovl 4(%esp), %eax\n\tcmpl 8(%esp), %eax\n\tret\n");

void __stdcall start(void)
{
	unsigned r = 0;
	for (unsigned a = 0; a < 4; a++) {
		unsigned char c;
#ifdef READ_CF
		__asm__ volatile("pushl $2\n\tpushl %1\n\tcall _below\n\tsetc %0\n\tleal 8(%%esp), %%esp"
				 : "=q"(c)
				 : "r"(a)
				 : "eax", "cc", "memory");
#else
		__asm__ volatile("pushl $2\n\tpushl %0\n\tcall _below\n\tleal 8(%%esp), %%esp"
				 :
				 : "r"(a)
				 : "eax", "cc", "memory");
		c = a < 2;
#endif
		r = r * 2 + c;
	}
	ExitProcess(r);
}
