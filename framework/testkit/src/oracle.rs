//! The oracle kit: what differential tests need around the oracle itself.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

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

/// A directory for one test binary's files under `base` (pass `env!("CARGO_TARGET_TMPDIR")`),
/// created if needed.
pub fn scratch_dir(base: &str, name: &str) -> PathBuf {
    let dir = Path::new(base).join(name);
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("creating {}: {e}", dir.display()));
    dir
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
    let shown = format!("{cmd:?}");
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {shown}: {e}\n{hint}"));
    // A writer thread: a tool that fills its output pipe before reading all its input would
    // otherwise wait for us while we wait for it.
    let mut stdin = child.stdin.take().expect("stdin is piped");
    let input = input.to_vec();
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let out = child
        .wait_with_output()
        .unwrap_or_else(|e| panic!("waiting for {shown}: {e}\n{hint}"));
    let written = writer.join().expect("the input writer does not panic");
    if !out.status.success() {
        panic!(
            "{shown} failed ({}):\n{}{}\n{hint}",
            out.status,
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
    ToolOutput {
        stdout: out.stdout,
        stderr: out.stderr,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
