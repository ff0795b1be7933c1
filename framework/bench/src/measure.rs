//! The processes a measurement runs: builds, recompiles, callgrind, timed runs.
//!
//! This crate starts processes, like `build` and `cli` (ARCHITECTURE.md says why): measuring is
//! running things, and keeping it here lets the CLI only parse arguments and print.

use std::ffi::OsString;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use crate::suite::Configuration;
use crate::{BenchError, RecompileStats, io_error};

/// A command to run: the program and its arguments.
#[derive(Clone, Debug)]
pub struct Invocation {
    /// argv[0] and the rest.
    pub argv: Vec<OsString>,
}

impl Invocation {
    /// A program with arguments.
    pub fn new<I, S>(argv: I) -> Invocation
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        Invocation {
            argv: argv.into_iter().map(Into::into).collect(),
        }
    }

    /// This command with more arguments after its own.
    pub fn with_args(mut self, args: &[String]) -> Invocation {
        self.argv.extend(args.iter().map(OsString::from));
        self
    }

    /// How the command is named in errors.
    pub fn describe(&self) -> String {
        self.argv
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn command(&self) -> Result<Command, BenchError> {
        let (program, args) = self.argv.split_first().ok_or_else(|| BenchError::Tool {
            command: String::new(),
            message: "an empty command".into(),
        })?;
        let mut command = Command::new(program);
        command.args(args);
        Ok(command)
    }

    /// This command run under another: `prefix... argv...`.
    pub fn under(&self, prefix: &[&str]) -> Invocation {
        Invocation {
            argv: prefix
                .iter()
                .map(OsString::from)
                .chain(self.argv.iter().cloned())
                .collect(),
        }
    }
}

fn open_input(input: &Path) -> Result<File, BenchError> {
    File::open(input).map_err(io_error(input))
}

/// Runs a command to completion with `input` as standard input and returns its standard output;
/// a failure to start, or an exit status other than 0, is an error carrying its standard error.
pub fn run_capture(invocation: &Invocation, input: &Path) -> Result<Vec<u8>, BenchError> {
    run_expecting(invocation, input, 0)
}

/// As [`run_capture`], for a program whose exit status is `code` (a sample may exit with 7 on
/// purpose); any other status, or a signal, is an error.
pub fn run_expecting(invocation: &Invocation, input: &Path, code: i32) -> Result<Vec<u8>, BenchError> {
    let output = invocation
        .command()?
        .stdin(open_input(input)?)
        .stderr(Stdio::piped())
        .stdout(Stdio::piped())
        .output()
        .map_err(|e| BenchError::Tool {
            command: invocation.describe(),
            message: e.to_string(),
        })?;
    if output.status.code() != Some(code) {
        return Err(BenchError::Tool {
            command: invocation.describe(),
            message: format!(
                "exited with {} (expected exit status {code}): {}",
                output.status,
                String::from_utf8_lossy(&output.stderr).trim()
            ),
        });
    }
    Ok(output.stdout)
}

/// The wall time of one run, in seconds (output discarded; it was checked beforehand).
pub fn time_run(invocation: &Invocation, input: &Path) -> Result<f64, BenchError> {
    let mut command = invocation.command()?;
    command
        .stdin(open_input(input)?)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let started = Instant::now();
    let status = command.status().map_err(|e| BenchError::Tool {
        command: invocation.describe(),
        message: e.to_string(),
    })?;
    let seconds = started.elapsed().as_secs_f64();
    if !status.success() {
        return Err(BenchError::Tool {
            command: invocation.describe(),
            message: format!("exited with {status} while being timed"),
        });
    }
    Ok(seconds)
}

/// Executed host instructions of one run, counted by `valgrind --tool=callgrind`.
pub fn callgrind(invocation: &Invocation, input: &Path, scratch: &Path) -> Result<u64, BenchError> {
    callgrind_expecting(invocation, input, scratch, 0)
}

/// As [`callgrind`], for a program whose exit status is `code`.
pub fn callgrind_expecting(
    invocation: &Invocation,
    input: &Path,
    scratch: &Path,
    code: i32,
) -> Result<u64, BenchError> {
    let out = scratch.join("callgrind.out");
    let out_arg = format!("--callgrind-out-file={}", out.display());
    let under = invocation.under(&["valgrind", "--tool=callgrind", &out_arg, "--"]);
    run_expecting(&under, input, code)?;
    let text = std::fs::read_to_string(&out).map_err(io_error(&out))?;
    let count = parse_callgrind_total(&text).ok_or_else(|| BenchError::Tool {
        command: under.describe(),
        message: format!("no `totals:` or `summary:` line in {}", out.display()),
    });
    let _ = std::fs::remove_file(&out);
    count
}

/// The instruction total of a callgrind output file.
pub fn parse_callgrind_total(text: &str) -> Option<u64> {
    text.lines()
        .find_map(|l| l.strip_prefix("totals:").or_else(|| l.strip_prefix("summary:")))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
}

/// A copy of `binary` without debugging information: valgrind 3.19 cannot read clang-19's DWARF 5,
/// and debugging information never changes the instructions executed.
pub fn strip_debug(binary: &Path, out: &Path) -> Result<(), BenchError> {
    let strip = Invocation::new([
        OsString::from("strip"),
        "--strip-debug".into(),
        "-o".into(),
        out.into(),
        binary.into(),
    ]);
    run_capture(&strip, Path::new("/dev/null")).map(drop)
}

/// Builds a program's native peer with the suite's build script (`SCRIPT KIND PROGRAM OUT`).
pub fn build_native(script: &Path, kind: &str, program: &str, out: &Path) -> Result<(), BenchError> {
    let build = Invocation::new([
        OsString::from("sh"),
        script.into(),
        kind.into(),
        program.into(),
        out.into(),
    ]);
    run_capture(&build, Path::new("/dev/null")).map(drop)
}

/// What recompiling one sample in one configuration cost and produced.
#[derive(Clone, Debug)]
pub struct Recompile {
    /// The stats `rpt recompile --stats` wrote.
    pub stats: RecompileStats,
    /// The peak resident memory of the recompile (rpt, or the largest compiler it waited for), in KiB.
    pub peak_kib: u64,
}

/// Recompiles a recipe with `rpt recompile` (in a child, so its peak memory is its own), into
/// `gen_dir` with an empty object cache in `cache_dir` (compile time is real compile time).
pub fn recompile(
    rpt: &Path,
    recipe: &Path,
    config: &Configuration,
    gen_dir: &Path,
    cache_dir: &Path,
    scratch: &Path,
) -> Result<Recompile, BenchError> {
    let stats_file = scratch.join("recompile-stats.ron");
    let memory_file = scratch.join("recompile-peak.txt");
    let passes = config.passes.join(",");
    let host_cpu: Vec<String> = config
        .host_cpu
        .iter()
        .flat_map(|cpu| ["--host-cpu".to_string(), cpu.clone()])
        .chain(config.run_time_tier.map(|on| format!("--run-time-tier={on}")))
        .collect();
    let invocation = Invocation::new([
        OsString::from("/usr/bin/time"),
        "-f".into(),
        "%M".into(),
        "-o".into(),
        memory_file.clone().into(),
        rpt.into(),
        "recompile".into(),
        recipe.into(),
        "--progress".into(),
        "never".into(),
        format!("--passes={passes}").into(),
        "--gen-dir".into(),
        gen_dir.into(),
        "--cache-dir".into(),
        cache_dir.into(),
        "--stats".into(),
        stats_file.clone().into(),
    ])
    .with_args(&host_cpu);
    run_capture(&invocation, Path::new("/dev/null"))?;
    let read = |path: &Path| std::fs::read_to_string(path).map_err(io_error(path));
    let stats = RecompileStats::parse(&read(&stats_file)?).map_err(|message| BenchError::Tool {
        command: invocation.describe(),
        message: format!("{}: {message}", stats_file.display()),
    })?;
    let memory = read(&memory_file)?;
    let peak_kib = memory
        .lines()
        .rev()
        .find_map(|l| l.trim().parse().ok())
        .ok_or_else(|| BenchError::Tool {
            command: invocation.describe(),
            message: format!("no peak memory in {}: {memory:?}", memory_file.display()),
        })?;
    Ok(Recompile { stats, peak_kib })
}

/// The size of the executable sections of a 64-bit little-endian ELF object (every host rpt has
/// is one), in bytes.
pub fn elf64_text_size(bytes: &[u8]) -> Option<u64> {
    let u16_at = |at: usize| Some(u16::from_le_bytes(bytes.get(at..at + 2)?.try_into().ok()?));
    let u32_at = |at: usize| Some(u32::from_le_bytes(bytes.get(at..at + 4)?.try_into().ok()?));
    let u64_at = |at: usize| Some(u64::from_le_bytes(bytes.get(at..at + 8)?.try_into().ok()?));
    // ELF magic, 64-bit class, little-endian.
    if bytes.get(..6)? != b"\x7fELF\x02\x01" {
        return None;
    }
    let shoff = usize::try_from(u64_at(0x28)?).ok()?;
    let shentsize = usize::from(u16_at(0x3a)?);
    let shnum = usize::from(u16_at(0x3c)?);
    const SHT_NOBITS: u32 = 8;
    const SHF_EXECINSTR: u64 = 4;
    let mut total = 0;
    for i in 0..shnum {
        let header = shoff.checked_add(i.checked_mul(shentsize)?)?;
        let kind = u32_at(header + 4)?;
        let flags = u64_at(header + 8)?;
        if kind != SHT_NOBITS && flags & SHF_EXECINSTR != 0 {
            total += u64_at(header + 0x20)?;
        }
    }
    Some(total)
}

/// The files in `dir` whose names pass `keep`, in name order.
fn files_in(dir: &Path, keep: &dyn Fn(&str) -> bool) -> Result<Vec<PathBuf>, BenchError> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(io_error(dir))?
        .flatten()
        .filter(|e| keep(&e.file_name().to_string_lossy()))
        .map(|e| e.path())
        .collect();
    files.sort();
    Ok(files)
}

fn generation_error(dir: &Path, message: String) -> BenchError {
    BenchError::Generation {
        dir: dir.to_owned(),
        message,
    }
}

/// The text size of the lifted code of a generation: the executable sections of its shard objects.
pub fn lifted_text_size(gen_dir: &Path) -> Result<u64, BenchError> {
    let shards = files_in(&gen_dir.join("obj"), &|n| n.starts_with("shard_") && n.ends_with(".o"))?;
    if shards.is_empty() {
        return Err(generation_error(gen_dir, "no shard objects in obj/".into()));
    }
    let mut total = 0;
    for path in shards {
        let bytes = std::fs::read(&path).map_err(io_error(&path))?;
        total += elf64_text_size(&bytes).ok_or_else(|| {
            generation_error(
                gen_dir,
                format!("{} is not a 64-bit little-endian ELF object", path.display()),
            )
        })?;
    }
    Ok(total)
}

/// The number of distinct guest instructions in a generation's listing (`src/<recipe>.lst`: one
/// line per lifted instruction, starting with its address).
pub fn lifted_guest_instructions(gen_dir: &Path) -> Result<u64, BenchError> {
    let listing = files_in(&gen_dir.join("src"), &|n| n.ends_with(".lst"))?
        .into_iter()
        .next()
        .ok_or_else(|| generation_error(gen_dir, "no listing (src/*.lst)".into()))?;
    let text = std::fs::read_to_string(&listing).map_err(io_error(&listing))?;
    let addresses: std::collections::BTreeSet<&str> = text
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|a| a.starts_with("0x"))
        .collect();
    Ok(addresses.len() as u64)
}

/// The first line a tool prints for `--version` (or `unavailable`).
pub fn tool_version(program: &str) -> String {
    Command::new(program)
        .arg("--version")
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()
        .and_then(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .next()
                .map(|l| l.trim().to_string())
        })
        .filter(|l| !l.is_empty())
        .unwrap_or_else(|| "unavailable".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn callgrind_totals_are_read() {
        let text = "version: 1\nevents: Ir\nsummary: 405862019\n\ntotals: 405862019\n";
        assert_eq!(parse_callgrind_total(text), Some(405_862_019));
        assert_eq!(parse_callgrind_total("events: Ir\n"), None);
    }

    #[test]
    fn text_size_rejects_what_is_not_elf64() {
        assert_eq!(elf64_text_size(b"MZ\x90\x00"), None);
        assert_eq!(elf64_text_size(b""), None);
    }
}
