//! What the tests of the real-program suite (tests/real/, `tests/real_*.rs`) share: a generated
//! input, running a program with standard input and output through pipes, recompiling a recipe,
//! and the runners for the recompiled program, Wine and the native oracle a program's `build.sh`
//! builds.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::{rpt_binary, stderr_of, workspace_root};

/// A directory that lives as long as the test process: generations, the object cache, the Wine
/// prefix and the native oracle.
pub fn scratch() -> &'static Path {
    rpt_testkit::process_scratch()
}

/// A xorshift generator: inputs must be the same on every machine and every run.
pub struct XorShift(pub u64);

impl XorShift {
    /// The next 64 bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A number below `n`.
    pub fn below(&mut self, n: usize) -> usize {
        // n is small, so the modulo's bias does not matter; only determinism does.
        (self.next_u64() % n as u64) as usize
    }
}

/// About `text_words` words drawn from `words`, with a line break after every eleventh, then
/// `binary_len` bytes that mix runs, slowly changing ramps and noise: the kinds of data a
/// compressor treats differently.
pub fn make_input(seed: u64, words: &str, text_words: usize, binary_len: usize) -> Vec<u8> {
    let words: Vec<&str> = words.split_whitespace().collect();
    let mut rng = XorShift(seed);
    let mut out = Vec::with_capacity(text_words * 8 + binary_len);
    for i in 0..text_words {
        out.extend_from_slice(words[rng.below(words.len())].as_bytes());
        out.push(if i % 11 == 10 { b'\n' } else { b' ' });
    }
    while out.len() < text_words * 8 + binary_len {
        match rng.below(3) {
            0 => {
                let byte = rng.next_u64() as u8;
                let run = 1 + rng.below(300);
                out.extend(std::iter::repeat_n(byte, run));
            }
            1 => {
                let start = rng.next_u64() as u8;
                out.extend((0..256u32).map(|k| start.wrapping_add((k / 3) as u8)));
            }
            _ => out.extend((0..128).map(|_| rng.next_u64() as u8)),
        }
    }
    out
}

/// Runs `cmd` with `stdin` on standard input, collecting standard output and error.
pub fn run_with_stdin(mut cmd: Command, stdin: &[u8]) -> Output {
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

/// One way of running a program: builds a command that runs it with the given arguments.
pub type Runner<'a> = &'a dyn Fn(&[&str]) -> Command;

/// Runs `program args < stdin` as the oracle and as rpt's build, and fails unless both exit alike;
/// returns rpt's run and the oracle's. `what` names the comparison in the failure.
pub fn run_both(
    what: &str,
    program: &str,
    ours: Runner,
    oracle: Runner,
    args: &[&str],
    stdin: &[u8],
) -> (Output, Output) {
    let o = run_with_stdin(oracle(args), stdin);
    let r = run_with_stdin(ours(args), stdin);
    assert_eq!(
        r.status.code(),
        o.status.code(),
        "{what}: {program} {args:?} exits differently; rpt said:\n{}\nthe oracle said:\n{}",
        crate::stderr_of(&r),
        crate::stderr_of(&o)
    );
    (r, o)
}

/// Recompiles `recipe` (relative to the workspace) for `host` with `rpt recompile` and returns the
/// binary, which runs with the sandbox given in `RPT_SANDBOX`.
pub fn recompile(recipe: &str, host: &str) -> PathBuf {
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
pub fn sandbox() -> PathBuf {
    tempfile::tempdir_in(scratch()).expect("tempdir").keep()
}

/// The recompiled binary as a runner (on AArch64 and LoongArch64 hosts, through qemu-user).
pub fn rpt_runner(binary: &Path, host: &str) -> impl Fn(&[&str]) -> Command {
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

/// Builds the native i386 oracle of the program in `dir` (`dir/build.sh oracle OUT`) into the
/// scratch directory as `name`; `needs` says what the build needs when it fails.
pub fn build_native_oracle(dir: &Path, name: &str, needs: &str) -> PathBuf {
    let exe = scratch().join(name);
    rpt_testkit::run_tool(Command::new(dir.join("build.sh")).arg("oracle").arg(&exe), b"", needs);
    exe
}

/// A native executable (the i386 oracle) as a runner, in a sandbox directory of its own.
pub fn native_runner(program: &Path) -> impl Fn(&[&str]) -> Command + '_ {
    move |args: &[&str]| {
        let mut c = Command::new(program);
        c.args(args).current_dir(sandbox());
        c
    }
}

/// A static PowerPC ELF under `qemu-ppc -cpu 750cl` (the GameCube's CPU) as a runner.
pub fn qemu_ppc_runner(elf: &Path) -> impl Fn(&[&str]) -> Command + '_ {
    move |args: &[&str]| {
        let mut c = Command::new("qemu-ppc");
        c.args(["-cpu", "750cl"]).arg(elf).args(args).current_dir(sandbox());
        c
    }
}

/// The PE `exe` under Wine, in a prefix of this test process (made by the first run, about 8 s).
/// One test per process runs Wine, one run after another, so no two first runs race to make it.
pub fn wine_runner(exe: &Path) -> impl Fn(&[&str]) -> Command + '_ {
    move |args: &[&str]| {
        let mut cmd = Command::new("wine");
        cmd.arg(exe)
            .args(args)
            .current_dir(sandbox())
            .env("WINEPREFIX", scratch().join("wine-prefix"))
            .env("WINEDEBUG", "-all")
            .env_remove("DISPLAY");
        cmd
    }
}

/// Runs `program_dir/build.sh check` with this workspace's rpt: the committed builds must be
/// what the script builds from the source.
pub fn assert_build_check(program_dir: &Path) {
    let check = Command::new(program_dir.join("build.sh"))
        .arg("check")
        .env("RPT", rpt_binary())
        .output()
        .expect("build.sh runs");
    assert!(
        check.status.success(),
        "the committed builds in {} are not what build.sh builds:\n{}{}",
        program_dir.display(),
        String::from_utf8_lossy(&check.stdout),
        String::from_utf8_lossy(&check.stderr)
    );
}
