//! XZ Utils 5.4.1 from Debian's source package (tests/real/xz), the third real program of the
//! suite: the xz program and liblzma, whose coders are chains of function pointers (each filter's
//! init, code and end functions, found through filter tables). Recompiled from its mingw PE on
//! the win32-console platform and from its static-glibc DOL on linux-syscalls, it compresses,
//! decompresses and tests a generated input exactly as its oracles do: Wine running the PE and
//! the same sources built natively for i386 for the PE, the ELF under `qemu-ppc -cpu 750cl` for
//! the DOL. Compressed bytes, decompressed bytes and exit statuses must be identical.
//!
//! The programs work through standard input and output (`xz -2 -c < in > out`, `xz -d -c`,
//! `xz -t`); see tests/real/xz/README.md.

use std::path::PathBuf;
use std::sync::OnceLock;

use rpt_tests::real::{
    Runner, assert_build_check, build_native_oracle, make_input, native_runner, qemu_ppc_runner, recompile, rpt_runner,
    run_both, wine_runner,
};
use rpt_tests::{stderr_of, workspace_root};

fn xz_dir() -> PathBuf {
    workspace_root().join("tests/real/xz")
}

/// The full input: about 200 KB of words, runs, ramps and noise.
fn input() -> &'static [u8] {
    static INPUT: OnceLock<Vec<u8>> = OnceLock::new();
    INPUT.get_or_init(|| {
        make_input(
            0x0c5e_1b0b_5a17_f00d,
            "the xz compressor liblzma lzma2 range coder match finder filter chain delta branch \
             converter recompiled guest PowerPC x86 oracle",
            15_000,
            80_000,
        )
    })
}

/// The ways of compressing each build runs, chosen to go through different parts of liblzma: the
/// three integrity checks, the fast (hash chain) and normal (binary tree, `e`) encoders, the
/// legacy .lzma format, and a chain of three filters (x86 branch converter, delta, LZMA2).
const COMPRESSIONS: &[&[&str]] = &[
    &["-1", "--check=crc32"],
    &["-2", "--check=crc64"],
    &["-1e", "--check=sha256"],
    &["--format=lzma", "-1"],
    &["--x86", "--delta=dist=4", "--lzma2=preset=1", "--check=crc64"],
];

/// Every run compared between `ours` and `oracle`: each compression of `data` with `-c`, its
/// decompression and `-t`; then a damaged and a truncated stream, tested and decompressed (exit
/// status 1, xz's for an error). Exit statuses and standard output must be equal; standard error
/// names the program, which differs (`xz.exe`), so it is not compared.
fn compare_runs(what: &str, data: &[u8], ours: Runner, oracle: Runner) {
    let both = |args: &[&str], stdin: &[u8]| {
        let (r, o) = run_both(what, "xz", ours, oracle, args, stdin);
        assert!(
            r.stdout == o.stdout,
            "{what}: xz {args:?} writes different bytes: rpt {} bytes, the oracle {}; rpt said:\n{}",
            r.stdout.len(),
            o.stdout.len(),
            stderr_of(&r)
        );
        o
    };
    let mut sizes = Vec::new();
    let mut with_crc64 = Vec::new();
    for compression in COMPRESSIONS {
        let args: Vec<&str> = compression.iter().copied().chain(["-c"]).collect();
        let o = both(&args, data);
        assert_eq!(o.status.code(), Some(0), "{what}: xz {args:?}: {}", stderr_of(&o));
        let compressed = o.stdout;
        let o = both(&["-d", "-c"], &compressed);
        assert!(
            o.stdout == data,
            "{what}: the oracle does not round-trip {compression:?}"
        );
        let o = both(&["-t"], &compressed);
        assert_eq!(o.status.code(), Some(0), "{what}: xz -t: {}", stderr_of(&o));
        sizes.push(compressed.len());
        if compression.contains(&"-2") {
            with_crc64 = compressed;
        }
    }

    // A flipped byte in the middle of the LZMA2 data: the decoder or the CRC64 fails.
    let mut damaged = with_crc64.clone();
    let middle = damaged.len() / 2;
    damaged[middle] ^= 0x55;
    let o = both(&["-t"], &damaged);
    assert_eq!(o.status.code(), Some(1), "{what}: damaged data: {}", stderr_of(&o));
    both(&["-d", "-c"], &damaged);
    // The first half only: "unexpected end of input".
    let o = both(&["-t"], &with_crc64[..with_crc64.len() / 2]);
    assert_eq!(o.status.code(), Some(1), "{what}: truncated data: {}", stderr_of(&o));
    // The sizes, for the README and anyone comparing runs (shown with --nocapture).
    eprintln!("{what}: {} bytes in, compressed to {sizes:?}", data.len());
}

/// The native i386 oracle, built once per test process by build.sh from $XZ_SRC or a fresh
/// `apt-get source xz-utils`.
fn native_oracle() -> &'static PathBuf {
    static EXE: OnceLock<PathBuf> = OnceLock::new();
    EXE.get_or_init(|| {
        build_native_oracle(
            &xz_dir(),
            "xz-i386",
            "building the native oracle needs gcc-12-multilib and the xz source (deb-src or XZ_SRC)",
        )
    })
}

/// Needs xz's source (deb-src enabled for `apt-get source`, or XZ_SRC), and rebuilds all three
/// (about two minutes): `cargo test -p rpt-tests --test real_xz -- --ignored` runs it.
#[test]
#[ignore = "needs xz-utils' Debian source package"]
fn the_committed_xz_builds_are_reproducible() {
    assert_build_check(&xz_dir());
}

#[test]
fn the_pe_compresses_as_wine_and_the_native_i386_build() {
    let native = native_runner(native_oracle());
    let exe = xz_dir().join("xz.exe");
    // The oracles agree with each other first: Wine's msvcrt and glibc give the same bytes.
    compare_runs("Wine against native i386", input(), &wine_runner(&exe), &native);
    pe_compresses_as_the_native_i386_build("x86-64", input());
}

#[test]
fn the_dol_compresses_as_qemu_ppc() {
    dol_compresses_as_qemu_ppc("x86-64", input());
}

/// Recompiles the DOL for `host` and compares its runs on `data` with xz.elf's under qemu-ppc.
fn dol_compresses_as_qemu_ppc(host: &str, data: &[u8]) {
    let elf = xz_dir().join("xz.elf");
    let qemu = qemu_ppc_runner(&elf);
    let binary = recompile("recipes/real-xz-dol.ron", host);
    let ours = rpt_runner(&binary, host);
    compare_runs(&format!("rpt's DOL on {host} against qemu-ppc"), data, &ours, &qemu);
}

/// Recompiles the PE for `host` and compares its runs on `data` with the native i386 build's.
fn pe_compresses_as_the_native_i386_build(host: &str, data: &[u8]) {
    let native = native_runner(native_oracle());
    let binary = recompile("recipes/real-xz-pe.ron", host);
    let ours = rpt_runner(&binary, host);
    compare_runs(&format!("rpt's PE on {host} against native i386"), data, &ours, &native);
}

/// The input of the runs on the foreign hosts, whose programs run under qemu-user (LoongArch64
/// about 80 times slower than native code): about 30 KB, still several LZMA2 chunks' worth of
/// matches, and every compression, decompression and damaged stream of the full run.
fn foreign_input() -> Vec<u8> {
    make_input(
        0x005e_ed0f_a4c4,
        "liblzma range coder match finder delta filter",
        2_500,
        12_000,
    )
}

// The foreign hosts: each compile of liblzma and xz's 900 functions (and, for the DOL, static
// glibc's 2,000) for one more host costs CI minutes it does not have, so scripts/host-matrix.sh
// runs these (`cargo test -p rpt-tests --test real_xz -- --ignored 64`).

#[test]
#[ignore = "a long compile: scripts/host-matrix.sh runs it"]
fn the_pe_recompiled_for_aarch64_compresses_as_the_native_i386_build() {
    pe_compresses_as_the_native_i386_build("aarch64", &foreign_input());
}

#[test]
#[ignore = "a long compile: scripts/host-matrix.sh runs it"]
fn the_dol_recompiled_for_aarch64_compresses_as_qemu_ppc() {
    dol_compresses_as_qemu_ppc("aarch64", &foreign_input());
}

#[test]
#[ignore = "a long compile: scripts/host-matrix.sh runs it"]
fn the_pe_recompiled_for_loongarch64_compresses_as_the_native_i386_build() {
    pe_compresses_as_the_native_i386_build("loongarch64", &foreign_input());
}

#[test]
#[ignore = "a long compile: scripts/host-matrix.sh runs it"]
fn the_dol_recompiled_for_loongarch64_compresses_as_qemu_ppc() {
    dol_compresses_as_qemu_ppc("loongarch64", &foreign_input());
}
