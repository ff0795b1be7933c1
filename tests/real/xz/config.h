/* config.h for XZ Utils 5.4.1, written by hand for rpt's real-program suite (tests/real/xz).
 *
 * It is what `configure --disable-threads --disable-nls --disable-shared --enable-static` finds
 * for --host=i686-w64-mingw32, powerpc-linux-gnu and i686-linux-gnu with Debian 12's toolchains
 * (README.md says which), one file for the three builds: the differences are the platform blocks
 * at the end. Left out on purpose: HAVE_USABLE_CLMUL (the x86 CRC64 with pclmulqdq, chosen at run
 * time by `cpuid`, which rpt's x86 lifter does not handle; the table version is what an i686
 * without PCLMULQDQ runs) and the threads (MYTHREAD_*).
 */

#define PACKAGE "xz"
#define PACKAGE_BUGREPORT "xz@tukaani.org"
#define PACKAGE_NAME "XZ Utils"
#define PACKAGE_STRING "XZ Utils 5.4.1"
#define PACKAGE_TARNAME "xz"
#define PACKAGE_URL "https://tukaani.org/xz/"
#define PACKAGE_VERSION "5.4.1"
#define VERSION "5.4.1"

/* configure's AC_USE_SYSTEM_EXTENSIONS: the extensions of glibc (program_invocation_name, wcwidth,
 * ...) and of mingw-w64. */
#define _GNU_SOURCE 1
#define __EXTENSIONS__ 1
#define _POSIX_PTHREAD_SEMANTICS 1
#define __STDC_WANT_LIB_EXT2__ 1
#define __STDC_WANT_IEC_60559_ATTRIBS_EXT__ 1
#define __STDC_WANT_IEC_60559_BFP_EXT__ 1
#define __STDC_WANT_IEC_60559_DFP_EXT__ 1
#define __STDC_WANT_IEC_60559_FUNCS_EXT__ 1
#define __STDC_WANT_IEC_60559_TYPES_EXT__ 1
#define __STDC_WANT_MATH_SPEC_FUNCS__ 1

/* Assertions off, as configure's default (--disable-debug). */
#define NDEBUG 1
/* Used only when the amount of RAM cannot be found. */
#define ASSUME_RAM 128

/* Every check, coder, filter and match finder configure enables by default. */
#define HAVE_CHECK_CRC32 1
#define HAVE_CHECK_CRC64 1
#define HAVE_CHECK_SHA256 1
#define HAVE_DECODERS 1
#define HAVE_DECODER_ARM 1
#define HAVE_DECODER_ARM64 1
#define HAVE_DECODER_ARMTHUMB 1
#define HAVE_DECODER_DELTA 1
#define HAVE_DECODER_IA64 1
#define HAVE_DECODER_LZMA1 1
#define HAVE_DECODER_LZMA2 1
#define HAVE_DECODER_POWERPC 1
#define HAVE_DECODER_SPARC 1
#define HAVE_DECODER_X86 1
#define HAVE_ENCODERS 1
#define HAVE_ENCODER_ARM 1
#define HAVE_ENCODER_ARM64 1
#define HAVE_ENCODER_ARMTHUMB 1
#define HAVE_ENCODER_DELTA 1
#define HAVE_ENCODER_IA64 1
#define HAVE_ENCODER_LZMA1 1
#define HAVE_ENCODER_LZMA2 1
#define HAVE_ENCODER_POWERPC 1
#define HAVE_ENCODER_SPARC 1
#define HAVE_ENCODER_X86 1
#define HAVE_LZIP_DECODER 1
#define HAVE_MF_BT2 1
#define HAVE_MF_BT3 1
#define HAVE_MF_BT4 1
#define HAVE_MF_HC3 1
#define HAVE_MF_HC4 1

/* The C library and the compiler: the same on the three. */
#define STDC_HEADERS 1
#define HAVE_FCNTL_H 1
#define HAVE_GETOPT_H 1
#define HAVE_GETOPT_LONG 1
#define HAVE_INTTYPES_H 1
#define HAVE_LIMITS_H 1
#define HAVE_MBRTOWC 1
#define HAVE_STDBOOL_H 1
#define HAVE_STDINT_H 1
#define HAVE_STDIO_H 1
#define HAVE_STDLIB_H 1
#define HAVE_STRINGS_H 1
#define HAVE_STRING_H 1
#define HAVE_SYS_PARAM_H 1
#define HAVE_SYS_STAT_H 1
#define HAVE_SYS_TIME_H 1
#define HAVE_SYS_TYPES_H 1
#define HAVE_UINTPTR_T 1
#define HAVE_UNISTD_H 1
#define HAVE_WCHAR_H 1
#define HAVE__BOOL 1
#define HAVE_VISIBILITY 1
#define HAVE_FUNC_ATTRIBUTE_CONSTRUCTOR 1
#define HAVE___BUILTIN_ASSUME_ALIGNED 1
#define HAVE___BUILTIN_BSWAPXX 1
#define SIZEOF_SIZE_T 4
/* i686 and the 750 both load unaligned words in hardware. */
#define TUKLIB_FAST_UNALIGNED_ACCESS 1
#define _FILE_OFFSET_BITS 64

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#  define WORDS_BIGENDIAN 1
#endif

#ifdef _WIN32
/* mingw-w64 against msvcrt: _futime for the output's times; the amount of RAM comes from
 * GlobalMemoryStatus(Ex), the number of cores from GetSystemInfo (tuklib's _WIN32 branches). */
#  define HAVE__FUTIME 1
#else
/* glibc 2.36, PowerPC and i386 alike. */
#  define HAVE_FUTIMENS 1
#  define HAVE_POSIX_FADVISE 1
#  define HAVE_PROGRAM_INVOCATION_NAME 1
#  define HAVE_STRUCT_STAT_ST_ATIM_TV_NSEC 1
#  define HAVE_WCWIDTH 1
#  define TUKLIB_CPUCORES_SCHED_GETAFFINITY 1
#  define TUKLIB_PHYSMEM_SYSCONF 1
#endif
