//! The oracle kit: what differential tests need around the oracle itself.

use std::io::{Read, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// 32-bit values where the carries, overflows, signs and zero results of 8-, 16- and 32-bit
/// arithmetic change: the usual edges for [`Rng::edgy_u32`].
pub const INT_EDGES: [u32; 15] = [
    0,
    1,
    2,
    3,
    0x7f,
    0x80,
    0xff,
    0x100,
    0x7fff,
    0x8000,
    0xffff,
    0x7fff_ffff,
    0x8000_0000,
    0xffff_fffe,
    0xffff_ffff,
];

/// xorshift64*: a fixed-seed generator, so every run tests the same cases.
#[derive(Clone, Debug)]
pub struct Rng(pub u64);

impl Rng {
    /// A generator for case `n` of the test named `name`: each name and number draws its own
    /// values, the same in every run.
    pub fn for_case(name: &str, n: u64) -> Rng {
        // FNV-1a over the name, mixed with the number; never zero, which xorshift cannot leave.
        let mut seed = 0xcbf2_9ce4_8422_2325u64 ^ n.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        for b in name.bytes() {
            seed = (seed ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        Rng(seed | 1)
    }

    /// The next 64 random bits.
    // Tests read `rng.next()` as the generator's step; an endless iterator would only add noise.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A number below `n` (which must not be 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// The next 32 random bits.
    pub fn u32(&mut self) -> u32 {
        self.next() as u32
    }

    /// One of `items`.
    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len() as u64) as usize]
    }

    /// True once in `one_in` times.
    pub fn chance(&mut self, one_in: u64) -> bool {
        self.below(one_in) == 0
    }

    /// A 32-bit value biased towards `edges` (where carries, overflows and flags change): an edge
    /// a quarter of the time, a small value a quarter, else any value.
    pub fn edgy_u32(&mut self, edges: &[u32]) -> u32 {
        match self.below(4) {
            0 => self.pick(edges),
            1 => self.u32() & 0xff,
            _ => self.u32(),
        }
    }
}

/// Fails the test when any of `checks` checks (cases, or cases times the ways they run) failed,
/// with how many did, `what` (`"differ from the CPU"`), and the first `shown` failure messages.
pub fn assert_no_failures(failures: &[String], checks: usize, what: &str, shown: usize) {
    assert!(
        failures.is_empty(),
        "{} of {checks} {what}; the first {}:\n\n{}",
        failures.len(),
        shown.min(failures.len()),
        failures[..shown.min(failures.len())].join("\n\n")
    );
}

/// Where two copies of a memory window at `base` first differ, as a failure message shows it: the
/// address and up to eight bytes of each from there; `None` when they are the same.
pub fn memory_difference(base: u64, want: &[u8], got: &[u8]) -> Option<String> {
    let at = want.iter().zip(got).position(|(w, g)| w != g).or_else(|| {
        // Windows of different lengths differ where the shorter one ends.
        (want.len() != got.len()).then(|| want.len().min(got.len()))
    })?;
    let shown = |bytes: &[u8]| bytes[at.min(bytes.len())..(at + 8).min(bytes.len())].to_vec();
    Some(format!(
        "memory at {:#010x}: want {:02x?} got {:02x?}",
        base + at as u64,
        shown(want),
        shown(got)
    ))
}

/// A directory for one test binary's files under `base` (pass `env!("CARGO_TARGET_TMPDIR")`),
/// created if needed.
pub fn scratch_dir(base: &str, name: &str) -> PathBuf {
    let dir = Path::new(base).join(name);
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("creating {}: {e}", dir.display()));
    dir
}

/// A directory of this test process's own that is removed when the process exits.
///
/// Tests that share expensive state between their cases (an object cache, a Wine prefix,
/// generations) keep it here. A `TempDir` in a static would never be removed, since Rust does
/// not drop statics: every run of such a test binary left its gigabytes in the temp directory
/// until the disk filled. The removal runs from `atexit`, which the test harness reaches on
/// success and on failure alike; only a killed process leaves its directory behind.
pub fn process_scratch() -> &'static Path {
    PROCESS_SCRATCH.get_or_init(|| {
        let dir = tempfile::Builder::new()
            .prefix("rpt-test-")
            .tempdir()
            .unwrap_or_else(|e| panic!("creating a scratch directory: {e}"))
            .keep();
        // SAFETY: `remove_process_scratch` is a plain function that lives for the whole process;
        // registering it has no other precondition.
        #[allow(unsafe_code)]
        let registered = unsafe { libc::atexit(remove_process_scratch) };
        if registered != 0 {
            eprintln!("warning: {} will not be removed at exit", dir.display());
        }
        dir
    })
}

static PROCESS_SCRATCH: OnceLock<PathBuf> = OnceLock::new();

extern "C" fn remove_process_scratch() {
    if let Some(dir) = PROCESS_SCRATCH.get() {
        // Nothing can be reported usefully at exit; a directory that cannot be removed stays.
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// What a tool printed.
#[derive(Clone, Debug)]
pub struct ToolOutput {
    /// Its standard output.
    pub stdout: Vec<u8>,
    /// Its standard error.
    pub stderr: Vec<u8>,
}

/// Runs a tool with `input` on its standard input; panics with its output and `hint` (which
/// names what to install, say) when it cannot start or fails.
pub fn run_tool(cmd: &mut Command, input: &[u8], hint: &str) -> ToolOutput {
    run_tool_within(cmd, input, hint, None)
}

/// [`run_tool`] for a tool that may never finish (an emulator running a case that loops, say):
/// past `limit`, the tool is killed and the test fails saying so.
pub fn run_tool_within(cmd: &mut Command, input: &[u8], hint: &str, limit: Option<Duration>) -> ToolOutput {
    let shown = format!("{cmd:?}");
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {shown}: {e}\n{hint}"));
    // A writer thread and reader threads: a tool that fills one pipe before reading all its
    // input would otherwise wait for us while we wait for it.
    let mut stdin = child.stdin.take().expect("stdin is piped");
    let input = input.to_vec();
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let stdout = read_to_end_in_thread(child.stdout.take().expect("stdout is piped"));
    let stderr = read_to_end_in_thread(child.stderr.take().expect("stderr is piped"));
    let status = match limit {
        None => child.wait(),
        Some(limit) => wait_at_most(&mut child, limit, &shown, hint),
    }
    .unwrap_or_else(|e| panic!("waiting for {shown}: {e}\n{hint}"));
    let written = writer.join().expect("the input writer does not panic");
    let out = ToolOutput {
        stdout: stdout.join().expect("the output reader does not panic"),
        stderr: stderr.join().expect("the output reader does not panic"),
    };
    if !status.success() {
        panic!(
            "{shown} failed ({status}):\n{}{}\n{hint}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // A tool may exit without reading all its input; only a failure to start writing matters.
    if let Err(e) = written
        && e.kind() != std::io::ErrorKind::BrokenPipe
    {
        panic!("writing the input of {shown}: {e}");
    }
    out
}

/// Waits for `child` to exit; kills it and panics once `limit` has passed.
fn wait_at_most(child: &mut Child, limit: Duration, shown: &str, hint: &str) -> std::io::Result<ExitStatus> {
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(status);
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{shown} ran longer than {limit:?} and was stopped\n{hint}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn read_to_end_in_thread(mut pipe: impl Read + Send + 'static) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        // A read error ends the output early; the tool's exit status tells what went wrong.
        let _ = pipe.read_to_end(&mut bytes);
        bytes
    })
}

/// The number in the environment variable `name` (decimal, or hexadecimal after `0x`), or
/// `default` when it is not set: the knobs of longer oracle runs (`RPT_..._CASES`, `..._SEED`).
///
/// # Panics
/// When the variable is set to something else, so a mistyped knob is not silently ignored.
pub fn env_number(name: &str, default: u64) -> u64 {
    let Ok(text) = std::env::var(name) else {
        return default;
    };
    let text = text.trim();
    let parsed = match text.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => text.parse(),
    };
    parsed.unwrap_or_else(|_| panic!("{name}={text} is not a number"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Run as a child by `the_process_scratch_is_removed_at_exit`: makes the directory, fills it
    /// and names it.
    #[test]
    fn process_scratch_child() {
        if std::env::var_os("RPT_PROCESS_SCRATCH_CHILD").is_none() {
            return;
        }
        let dir = process_scratch();
        std::fs::create_dir_all(dir.join("nested")).unwrap();
        std::fs::write(dir.join("nested/file"), b"kept until exit").unwrap();
        println!("scratch={}", dir.display());
    }

    #[test]
    fn the_process_scratch_is_removed_at_exit() {
        let out = Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "oracle::tests::process_scratch_child",
                "--nocapture",
                "--test-threads=1",
            ])
            .env("RPT_PROCESS_SCRATCH_CHILD", "1")
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let stdout = String::from_utf8_lossy(&out.stdout);
        let dir = stdout
            .lines()
            // The harness prints the test's name on the same line first.
            .find_map(|line| line.split_once("scratch=").map(|(_, dir)| dir))
            .unwrap_or_else(|| panic!("the child named no directory:\n{stdout}"));
        assert!(!Path::new(dir).exists(), "{dir} outlived its process");
    }

    #[test]
    fn the_generator_is_the_same_every_run() {
        let mut a = Rng(0x9e37_79b9_7f4a_7c15);
        let mut b = a.clone();
        let xs: Vec<u64> = (0..4).map(|_| a.next()).collect();
        assert_eq!(xs, (0..4).map(|_| b.next()).collect::<Vec<_>>());
        assert!(xs.windows(2).all(|w| w[0] != w[1]));
        assert!((0..100).all(|_| a.below(7) < 7));
    }

    #[test]
    fn a_tool_gets_its_input_and_a_failure_names_the_hint() {
        let out = run_tool(Command::new("cat").arg("-"), b"echo", "coreutils");
        assert_eq!(out.stdout, b"echo");
        let failed = std::panic::catch_unwind(|| run_tool(&mut Command::new("false"), b"", "install false"));
        let message = failed.expect_err("false fails");
        let text = message.downcast_ref::<String>().cloned().unwrap_or_default();
        assert!(text.contains("install false"), "{text}");
    }

    #[test]
    fn a_tool_past_its_limit_is_stopped() {
        let stopped = std::panic::catch_unwind(|| {
            run_tool_within(
                Command::new("sleep").arg("10"),
                b"",
                "coreutils",
                Some(Duration::from_millis(100)),
            )
        });
        let text = stopped
            .expect_err("sleep is stopped")
            .downcast_ref::<String>()
            .cloned()
            .unwrap_or_default();
        assert!(text.contains("ran longer than"), "{text}");
    }

    #[test]
    fn a_memory_difference_names_its_address_and_bytes() {
        assert_eq!(memory_difference(0x100, &[1, 2, 3], &[1, 2, 3]), None);
        assert_eq!(
            memory_difference(0x100, &[1, 2, 3], &[1, 9, 3]).as_deref(),
            Some("memory at 0x00000101: want [02, 03] got [09, 03]")
        );
    }

    #[test]
    fn failures_fail_the_test_and_show_the_first_ones() {
        assert_no_failures(&[], 10, "differ", 2);
        let failures = ["a".to_string(), "b".to_string(), "c".to_string()];
        let failed = std::panic::catch_unwind(|| assert_no_failures(&failures, 10, "differ", 2));
        let text = failed
            .expect_err("three failures fail")
            .downcast_ref::<String>()
            .cloned()
            .unwrap_or_default();
        assert!(
            text.starts_with("3 of 10 differ; the first 2:") && text.ends_with("a\n\nb"),
            "{text}"
        );
    }

    #[test]
    fn numbers_come_from_the_environment_or_the_default() {
        assert_eq!(env_number("RPT_TESTKIT_NO_SUCH_KNOB", 12), 12);
    }
}
