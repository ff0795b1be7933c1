# shellcheck shell=sh
# The compiler flags the real programs' build scripts share (tests/real/*/build.sh source this, and
# tests/guests/x86/cxx/build.sh its PE link flags), so that each program's PE, native oracle and
# DOL are built alike, and alike across programs.

# The PE and the native i386 oracle: the same code generation, so the two programs are as alike
# as possible.
X86_FLAGS="-O2 -m32 -march=i686 -fno-asynchronous-unwind-tables"
# The PE: msvcrt's own printf (-D__USE_MINGW_ANSI_STDIO=0) keeps its stdio in the platform.
PE_FLAGS="$X86_FLAGS -D__USE_MINGW_ANSI_STDIO=0"
# No relocations or ASLR flag (a fixed image base), no timestamp, no DWARF (-Wl,-S keeps the COFF
# symbols for readers of listings): the same compiler gives the same bytes every time.
PE_LINK="-Wl,--disable-dynamicbase -Wl,--disable-reloc-section -Wl,--no-insert-timestamp -Wl,-S"
# Debian's gcc -m32 (gcc-12-multilib) finds no <asm/errno.h>, which glibc's <errno.h> includes:
# linux-libc-dev installs it for amd64 only. The x86 kernel headers serve both widths, so the amd64
# directory is searched after all others, for what the i386 ones lack.
ORACLE_FLAGS="$X86_FLAGS -static -idirafter /usr/include/x86_64-linux-gnu"
# Static glibc at GameCube addresses, as tests/guests/ppc-glibc/build.sh links; no build id, so
# the file depends on the sources and the toolchain alone.
PPC_FLAGS="-mcpu=750 -O2 -static -fno-pie -no-pie -Wl,-Ttext-segment=0x80003000 -Wl,--build-id=none"
