//! bzip2 1.0.8 from Debian's source package (tests/real/bzip2), the first real program of the
//! suite: recompiled from its mingw PE on the win32-console platform and from its static-glibc
//! DOL on linux-syscalls, it compresses, decompresses and tests a generated input exactly as its
//! oracles do. The PE's oracles are Wine running the PE and the same sources built natively for
//! i386; the DOL's is its ELF under `qemu-ppc -cpu 750cl`. Compressed bytes, decompressed bytes
//! and exit statuses must be identical.
//!
//! The programs work through standard input and output (`bzip2 -9 -c < in > out`, `bzip2 -d -c`,
//! `bzip2 -t`), which both platforms pass through; see tests/real/bzip2/README.md for why not files.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

use rpt_tests::{rpt_binary, stderr_of, workspace_root};

fn bzip2_dir() -> PathBuf {
    workspace_root().join("tests/real/bzip2")
}

/// A directory that lives as long as the test process: generations, the object cache, the Wine
/// prefix and the native oracle.
fn scratch() -> &'static Path {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| tempfile::tempdir().expect("tempdir")).path()
}

/// A xorshift generator: the input must be the same on every machine and every run.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        // n is small, so the modulo's bias does not matter; only determinism does.
        (self.next() % n as u64) as usize
    }
}

/// About `text_words` words of English-like text with line breaks, then `binary_len` bytes that
/// mix runs (which exercise bzip2's run-length stage), a slowly changing ramp and noise (which
/// exercises the sorting fallback on repetitive blocks and the Huffman tables on random ones).
fn make_input(seed: u64, text_words: usize, binary_len: usize) -> Vec<u8> {
    const WORDS: &str = "the block sorting compressor bzip2 burrows wheeler huffman move to front recompiled guest \
                         PowerPC x86 oracle";
    let words: Vec<&str> = WORDS.split_whitespace().collect();
    let mut rng = XorShift(seed);
    let mut out = Vec::with_capacity(text_words * 8 + binary_len);
    for i in 0..text_words {
        out.extend_from_slice(words[rng.below(words.len())].as_bytes());
        out.push(if i % 11 == 10 { b'\n' } else { b' ' });
    }
    while out.len() < text_words * 8 + binary_len {
        match rng.below(3) {
            0 => {
                let byte = rng.next() as u8;
                let run = 1 + rng.below(300);
                out.extend(std::iter::repeat_n(byte, run));
            }
            1 => {
                let start = rng.next() as u8;
                out.extend((0..256u32).map(|k| start.wrapping_add((k / 3) as u8)));
            }
            _ => out.extend((0..128).map(|_| rng.next() as u8)),
        }
    }
    out
}

/// The full input: about 320 KB, so bzip2 -9 compresses it as one 900 KB block, and -1 as three.
fn input() -> &'static [u8] {
    static INPUT: OnceLock<Vec<u8>> = OnceLock::new();
    INPUT.get_or_init(|| make_input(0x0b21_9000_dead_beef, 24_000, 130_000))
}

/// Runs `cmd` with `stdin` on standard input, collecting standard output and error.
fn run_with_stdin(mut cmd: Command, stdin: &[u8]) -> Output {
    cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap_or_else(|e| panic!("starting {cmd:?}: {e}"));
    let feeder = child.stdin.take().map(|mut pipe| {
        let bytes = stdin.to_vec();
        // A thread feeds the input while the program writes: a large input and a large output
        // through pipes would otherwise deadlock.
        std::thread::spawn(move || {
            // The program may stop reading early (a corrupt stream); that is its answer, not ours.
            let _ = pipe.write_all(&bytes);
        })
    });
    let out = child.wait_with_output().expect("wait for the program");
    if let Some(feeder) = feeder {
        feeder.join().expect("the stdin feeder");
    }
    out
}

/// One way of running bzip2: builds a command that runs it with the given arguments.
type Runner<'a> = &'a dyn Fn(&[&str]) -> Command;

/// The three runs every build makes, each compared between `ours` and `oracle`: compress with
/// `-9`, decompress that, test it, and test a damaged copy (exit status 2). Returns the compressed size.
fn compare_runs(what: &str, data: &[u8], ours: Runner, oracle: Runner) -> usize {
    let both = |args: &[&str], stdin: &[u8]| {
        let o = run_with_stdin(oracle(args), stdin);
        let r = run_with_stdin(ours(args), stdin);
        assert_eq!(
            r.status.code(),
            o.status.code(),
            "{what}: bzip2 {args:?} exits differently; rpt said:\n{}\nthe oracle said:\n{}",
            stderr_of(&r),
            stderr_of(&o)
        );
        (r, o)
    };

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

/// Recompiles `recipe` (relative to the workspace) for `host` with `rpt recompile` and returns the
/// binary, which runs with the sandbox given in `RPT_SANDBOX`.
fn recompile(recipe: &str, host: &str) -> PathBuf {
    let name = Path::new(recipe)
        .file_stem()
        .and_then(|s| s.to_str())
        .expect("a recipe name");
    let gen_dir = scratch().join(format!("gen-{name}-{host}"));
    let out = Command::new(rpt_binary())
        .arg("recompile")
        .arg(workspace_root().join(recipe))
        .arg("--gen-dir")
        .arg(&gen_dir)
        .arg("--cache-dir")
        .arg(scratch().join("cache"))
        .args(["--host", host])
        .env("CI", "1")
        .output()
        .expect("rpt starts");
    assert!(out.status.success(), "rpt recompile {recipe}:\n{}", stderr_of(&out));
    // The generation directory is `<recipe>/<digest>-<host>`; its binary is `bin/<recipe>`.
    let generations: Vec<PathBuf> = std::fs::read_dir(gen_dir.join(name))
        .expect("the generation directory")
        .flatten()
        .map(|e| e.path().join("bin").join(name))
        .filter(|p| p.is_file())
        .collect();
    assert_eq!(generations.len(), 1, "one generation in {}", gen_dir.display());
    generations[0].clone()
}

/// A sandbox directory of its own for each run, so a stray file can never pass from one to another.
fn sandbox() -> PathBuf {
    tempfile::tempdir_in(scratch()).expect("tempdir").keep()
}

/// The recompiled binary as a runner (on AArch64 and LoongArch64 hosts, through qemu-user).
fn rpt_runner(binary: &Path, host: &str) -> impl Fn(&[&str]) -> Command {
    let binary = binary.to_path_buf();
    let host = host.to_string();
    move |args: &[&str]| {
        let mut cmd = if host == "x86-64" {
            Command::new(&binary)
        } else {
            // The binary is static: qemu needs no sysroot (hosts/aarch64/src/runner.rs,
            // hosts/loongarch64/src/runner.rs).
            let mut c = Command::new(format!("qemu-{host}"));
            c.arg(&binary);
            c
        };
        cmd.args(args).env("RPT_SANDBOX", sandbox());
        cmd
    }
}

/// The native i386 oracle, built once per test process by build.sh from $BZIP2_SRC or a fresh
/// `apt-get source bzip2`.
fn native_oracle() -> &'static Path {
    static EXE: OnceLock<PathBuf> = OnceLock::new();
    EXE.get_or_init(|| {
        let exe = scratch().join("bzip2-i386");
        rpt_testkit::run_tool(
            Command::new(bzip2_dir().join("build.sh")).arg("oracle").arg(&exe),
            b"",
            "building the native oracle needs gcc-12-multilib and the bzip2 source (deb-src or BZIP2_SRC)",
        );
        exe
    })
}

/// The PE under Wine, in a prefix of this test process (made by the first run, about 8 s). One
/// test runs Wine, one run after another, so no two first runs race to make the prefix.
fn wine_runner(args: &[&str]) -> Command {
    let mut cmd = Command::new("wine");
    cmd.arg(bzip2_dir().join("bzip2.exe"))
        .args(args)
        .current_dir(sandbox())
        .env("WINEPREFIX", scratch().join("wine-prefix"))
        .env("WINEDEBUG", "-all")
        .env_remove("DISPLAY");
    cmd
}

/// Needs bzip2's source (deb-src enabled for `apt-get source`, or BZIP2_SRC), which CI's machine
/// does not have: `cargo test -p rpt-tests --test real_bzip2 -- --ignored` runs it, as
/// `tests/real/lua/build.sh check` is run by hand for Lua.
#[test]
#[ignore = "needs bzip2's Debian source package"]
fn the_committed_bzip2_builds_are_reproducible() {
    let check = Command::new(bzip2_dir().join("build.sh"))
        .arg("check")
        .env("RPT", rpt_binary())
        .output()
        .expect("build.sh runs");
    assert!(
        check.status.success(),
        "the committed bzip2 builds are not what build.sh builds:\n{}{}",
        String::from_utf8_lossy(&check.stdout),
        String::from_utf8_lossy(&check.stderr)
    );
}

#[test]
fn the_pe_compresses_as_wine_and_the_native_i386_build() {
    let native = native_oracle();
    let native_runner = |args: &[&str]| {
        let mut c = Command::new(native);
        c.args(args).current_dir(sandbox());
        c
    };
    // The oracles agree with each other first: Wine's msvcrt and glibc give the same bytes.
    compare_runs("Wine against native i386", input(), &wine_runner, &native_runner);
    let binary = recompile("recipes/real-bzip2-pe.ron", "x86-64");
    let ours = rpt_runner(&binary, "x86-64");
    compare_runs("rpt's PE against native i386", input(), &ours, &native_runner);
}

/// The DOL's oracle: its ELF under `qemu-ppc -cpu 750cl`.
fn qemu_ppc_runner(args: &[&str]) -> Command {
    let mut c = Command::new("qemu-ppc");
    c.args(["-cpu", "750cl"])
        .arg(bzip2_dir().join("bzip2.elf"))
        .args(args)
        .current_dir(sandbox());
    c
}

#[test]
fn the_dol_compresses_as_qemu_ppc() {
    compresses_as_qemu_ppc("recipes/real-bzip2-dol.ron", "x86-64", input());
}

/// Recompiles `recipe` for `host` and compares its runs on `data` with bzip2.elf's under qemu-ppc.
fn compresses_as_qemu_ppc(recipe: &str, host: &str, data: &[u8]) {
    let binary = recompile(recipe, host);
    let ours = rpt_runner(&binary, host);
    compare_runs(
        &format!("{recipe} on {host} against qemu-ppc"),
        data,
        &ours,
        &qemu_ppc_runner,
    );
}

/// The input of the runs on LoongArch64, whose programs run under qemu-loongarch64 (about 80
/// times slower than native code): about 12 KB.
fn loongarch_input() -> Vec<u8> {
    make_input(11, 800, 6_000)
}

/// The PE on LoongArch64, the freestanding host: compressing as bzip2.elf under qemu-ppc does
/// (bzip2's output is the same on every platform; the native i386 build needs the source).
#[test]
fn the_pe_recompiled_for_loongarch64_compresses_as_qemu_ppc() {
    compresses_as_qemu_ppc("recipes/real-bzip2-pe.ron", "loongarch64", &loongarch_input());
}

/// The DOL on LoongArch64: static glibc's 2,000 functions make a compile that CI cannot afford
/// beside the others, so scripts/host-matrix.sh runs it (`cargo test -p rpt-tests --test
/// real_bzip2 -- --ignored`).
#[test]
#[ignore = "a long compile: scripts/host-matrix.sh runs it"]
fn the_dol_recompiled_for_loongarch64_compresses_as_qemu_ppc() {
    compresses_as_qemu_ppc("recipes/real-bzip2-dol.ron", "loongarch64", &loongarch_input());
}

#[test]
fn the_pe_recompiled_for_aarch64_compresses_as_the_native_i386_build() {
    // A small input: the recompiled program runs under qemu-aarch64.
    let data = make_input(7, 3_000, 20_000);
    let native = native_oracle();
    let native_runner = |args: &[&str]| {
        let mut c = Command::new(native);
        c.args(args).current_dir(sandbox());
        c
    };
    let binary = recompile("recipes/real-bzip2-pe.ron", "aarch64");
    let ours = rpt_runner(&binary, "aarch64");
    compare_runs("rpt's PE on aarch64 against native i386", &data, &ours, &native_runner);
}
