//! bzip2 1.0.8 from Debian's source package (tests/real/bzip2), the first real program of the
//! suite: recompiled from its mingw PE on the win32-console platform and from its static-glibc
//! DOL on linux-syscalls, it compresses, decompresses and tests a generated input exactly as its
//! oracles do. The PE's oracles are Wine running the PE and the same sources built natively for
//! i386; the DOL's is its ELF under `qemu-ppc -cpu 750cl`. Compressed bytes, decompressed bytes
//! and exit statuses must be identical.
//!
//! The programs work through standard input and output (`bzip2 -9 -c < in > out`, `bzip2 -d -c`,
//! `bzip2 -t`), which both platforms pass through; see tests/real/bzip2/README.md for why not files.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use rpt_tests::real::{
    Runner, assert_build_check, build_native_oracle, make_input, native_runner, qemu_ppc_runner, recompile, rpt_runner,
    run_both, wine_runner,
};
use rpt_tests::{stderr_of, workspace_root};

fn bzip2_dir() -> PathBuf {
    workspace_root().join("tests/real/bzip2")
}

/// English-like words, whose text exercises bzip2's sorting on repetitive blocks.
const WORDS: &str = "the block sorting compressor bzip2 burrows wheeler huffman move to front recompiled guest \
                     PowerPC x86 oracle";

/// The full input: about 320 KB, so bzip2 -9 compresses it as one 900 KB block, and -1 as three.
fn input() -> &'static [u8] {
    static INPUT: OnceLock<Vec<u8>> = OnceLock::new();
    INPUT.get_or_init(|| make_input(0x0b21_9000_dead_beef, WORDS, 24_000, 130_000))
}

/// The three runs every build makes, each compared between `ours` and `oracle`: compress with
/// `-9`, decompress that, test it, and test a damaged copy (exit status 2). Returns the compressed size.
fn compare_runs(what: &str, data: &[u8], ours: Runner, oracle: Runner) -> usize {
    let both = |args: &[&str], stdin: &[u8]| run_both(what, "bzip2", ours, oracle, args, stdin);

    let (r, o) = both(&["-9", "-c"], data);
    assert_eq!(o.status.code(), Some(0), "{what}: the oracle failed: {}", stderr_of(&o));
    assert!(
        r.stdout == o.stdout,
        "{what}: compressed bytes differ: rpt wrote {} bytes, the oracle {}",
        r.stdout.len(),
        o.stdout.len()
    );
    let compressed = o.stdout;

    let (r, o) = both(&["-d", "-c"], &compressed);
    assert!(o.stdout == data, "{what}: the oracle does not round-trip");
    assert!(
        r.stdout == o.stdout,
        "{what}: decompressed bytes differ: rpt wrote {} bytes, the oracle {}",
        r.stdout.len(),
        o.stdout.len()
    );

    let (r, o) = both(&["-t"], &compressed);
    assert_eq!(o.status.code(), Some(0), "{what}: bzip2 -t: {}", stderr_of(&o));
    assert_eq!(r.stdout, o.stdout);

    // A flipped byte in the middle of the first block: the block's CRC fails, exit status 2.
    let mut damaged = compressed.clone();
    let middle = damaged.len() / 2;
    damaged[middle] ^= 0x55;
    let (_, o) = both(&["-t"], &damaged);
    assert_eq!(o.status.code(), Some(2), "{what}: damaged data: {}", stderr_of(&o));
    // The sizes, for the README and anyone comparing runs (shown with --nocapture).
    eprintln!("{what}: {} bytes in, {} bytes compressed", data.len(), compressed.len());
    compressed.len()
}

/// The native i386 oracle, built once per test process by build.sh from $BZIP2_SRC or a fresh
/// `apt-get source bzip2`.
fn native_oracle() -> &'static Path {
    static EXE: OnceLock<PathBuf> = OnceLock::new();
    EXE.get_or_init(|| {
        build_native_oracle(
            &bzip2_dir(),
            "bzip2-i386",
            "building the native oracle needs gcc-12-multilib and the bzip2 source (deb-src or BZIP2_SRC)",
        )
    })
}

/// Needs bzip2's source (deb-src enabled for `apt-get source`, or BZIP2_SRC), which CI's machine
/// does not have: `cargo test -p rpt-tests --test real_bzip2 -- --ignored` runs it, as
/// `tests/real/lua/build.sh check` is run by hand for Lua.
#[test]
#[ignore = "needs bzip2's Debian source package"]
fn the_committed_bzip2_builds_are_reproducible() {
    assert_build_check(&bzip2_dir());
}

#[test]
fn the_pe_compresses_as_wine_and_the_native_i386_build() {
    let native = native_runner(native_oracle());
    // The oracles agree with each other first: Wine's msvcrt and glibc give the same bytes.
    compare_runs(
        "Wine against native i386",
        input(),
        &wine_runner(&bzip2_dir().join("bzip2.exe")),
        &native,
    );
    let binary = recompile("recipes/real-bzip2-pe.ron", "x86-64");
    let ours = rpt_runner(&binary, "x86-64");
    compare_runs("rpt's PE against native i386", input(), &ours, &native);
}

#[test]
fn the_dol_compresses_as_qemu_ppc() {
    compresses_as_qemu_ppc("recipes/real-bzip2-dol.ron", "x86-64", input());
}

/// Recompiles `recipe` for `host` and compares its runs on `data` with bzip2.elf's under qemu-ppc.
fn compresses_as_qemu_ppc(recipe: &str, host: &str, data: &[u8]) {
    let elf = bzip2_dir().join("bzip2.elf");
    let binary = recompile(recipe, host);
    compare_runs(
        &format!("{recipe} on {host} against qemu-ppc"),
        data,
        &rpt_runner(&binary, host),
        &qemu_ppc_runner(&elf),
    );
}

/// The input of the runs on LoongArch64, whose programs run under qemu-loongarch64 (about 80
/// times slower than native code): about 12 KB.
fn loongarch_input() -> Vec<u8> {
    make_input(11, WORDS, 800, 6_000)
}

/// The PE on LoongArch64, the freestanding host: compressing as bzip2.elf under qemu-ppc does
/// (bzip2's output is the same on every platform; the native i386 build needs the source).
#[test]
#[ignore = "CI runs the PE on AArch64 and the DOL on LoongArch64: scripts/host-matrix.sh runs it"]
fn the_pe_recompiled_for_loongarch64_compresses_as_qemu_ppc() {
    compresses_as_qemu_ppc("recipes/real-bzip2-pe.ron", "loongarch64", &loongarch_input());
}

/// The DOL on LoongArch64: static glibc's 2,000 functions compiled for one more host (about a
/// minute).
#[test]
fn the_dol_recompiled_for_loongarch64_compresses_as_qemu_ppc() {
    compresses_as_qemu_ppc("recipes/real-bzip2-dol.ron", "loongarch64", &loongarch_input());
}

/// The DOL on AArch64.
#[test]
#[ignore = "CI runs the PE on AArch64 and the DOL on LoongArch64: scripts/host-matrix.sh runs it"]
fn the_dol_recompiled_for_aarch64_compresses_as_qemu_ppc() {
    compresses_as_qemu_ppc(
        "recipes/real-bzip2-dol.ron",
        "aarch64",
        &make_input(7, WORDS, 3_000, 20_000),
    );
}

#[test]
fn the_pe_recompiled_for_aarch64_compresses_as_the_native_i386_build() {
    // A small input: the recompiled program runs under qemu-aarch64.
    let data = make_input(7, WORDS, 3_000, 20_000);
    let native = native_runner(native_oracle());
    let binary = recompile("recipes/real-bzip2-pe.ron", "aarch64");
    let ours = rpt_runner(&binary, "aarch64");
    compare_runs("rpt's PE on aarch64 against native i386", &data, &ours, &native);
}
