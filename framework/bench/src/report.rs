//! The report of one bench run and its Markdown table.

use std::fmt::Write;
use std::path::Path;

use serde::Serialize;

use crate::measure::{Recompile, tool_version};
use crate::stats::{Pair, PairSummary, quantile};
use crate::{NativeCounts, PairRule};

/// Everything one run measured, as written to `results.json`.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// The command line that produced it.
    pub command: String,
    /// The suite file's name.
    pub suite: String,
    /// The machine and the tools.
    pub machine: Machine,
    /// The configurations, the first being the reference.
    pub configurations: Vec<String>,
    /// The rule that decided how many pairs were timed.
    pub pair_rule: PairRule,
    /// One entry per sample.
    pub samples: Vec<SampleResult>,
    /// Medians over the samples.
    pub summary: Summary,
}

/// The machine the numbers come from; numbers from different machines or runs are never compared.
#[derive(Clone, Debug, Serialize)]
pub struct Machine {
    /// `model name` from /proc/cpuinfo.
    pub cpu: String,
    /// Logical CPUs.
    pub cores: usize,
    /// Each tool's `--version` line.
    pub tools: Vec<Tool>,
}

/// A tool and the first line of its `--version`.
#[derive(Clone, Debug, Serialize)]
pub struct Tool {
    /// The command.
    pub name: String,
    /// What it says it is.
    pub version: String,
}

impl Machine {
    /// Describes this machine, and the rpt at `rpt`.
    pub fn describe(rpt: &Path) -> Machine {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let cpu = cpuinfo
            .lines()
            .find_map(|l| l.strip_prefix("model name"))
            .and_then(|l| l.split_once(':'))
            .map(|(_, v)| v.trim().to_string())
            .unwrap_or_else(|| "unknown".into());
        let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
        let mut tools = vec![Tool {
            name: "rpt".into(),
            version: tool_version(&rpt.to_string_lossy()),
        }];
        for tool in [
            "clang-19",
            "gcc",
            "i686-w64-mingw32-gcc",
            "powerpc-linux-gnu-gcc",
            "qemu-i386",
            "qemu-ppc",
            "valgrind",
        ] {
            tools.push(Tool {
                name: tool.into(),
                version: tool_version(tool),
            });
        }
        Machine { cpu, cores, tools }
    }
}

/// One sample's numbers.
#[derive(Clone, Debug, Serialize)]
pub struct SampleResult {
    /// Its name.
    pub name: String,
    /// The program (source) it was built from.
    pub program: String,
    /// Its standard input.
    pub input: String,
    /// Its recipe, as the suite names it.
    pub recipe: String,
    /// Host instructions of the native i386 build (gcc -m32 -O2).
    pub native_i386_instructions: u64,
    /// Host instructions of the native x86-64 build (clang -O2).
    pub native_x86_64_instructions: u64,
    /// Whether the x86-64 build printed what the i386 build printed (if not, its count is suspect).
    pub native_x86_64_output_matches: bool,
    /// One entry per configuration, in the suite's order.
    pub configurations: Vec<ConfigResult>,
    /// Wall clock against the native i386 build, which runs on this x86-64 machine (the first
    /// configuration's binary).
    pub native_wall: WallClock,
    /// Wall clock against qemu-user (the first configuration's binary).
    pub qemu: QemuResult,
}

/// One configuration of one sample.
#[derive(Clone, Debug, Serialize)]
pub struct ConfigResult {
    /// The configuration's name.
    pub name: String,
    /// Host instructions executed (callgrind).
    pub instructions: u64,
    /// ÷ the native i386 build's.
    pub ratio_native_i386: f64,
    /// ÷ the native x86-64 build's.
    pub ratio_native_x86_64: f64,
    /// ÷ the first configuration's (1 for the first itself): this configuration's effect.
    pub ratio_reference: f64,
    /// Guest instructions lifted.
    pub guest_instructions: u64,
    /// Bytes of host code in the shard objects.
    pub text_bytes: u64,
    /// `text_bytes / guest_instructions`.
    pub bytes_per_guest_instruction: f64,
    /// Functions lifted.
    pub functions: usize,
    /// Seconds from recipe to C.
    pub generate_seconds: f64,
    /// Seconds compiling (empty cache).
    pub compile_seconds: f64,
    /// Seconds linking.
    pub link_seconds: f64,
    /// Peak resident memory of the recompile, KiB.
    pub peak_kib: u64,
}

impl ConfigResult {
    pub(crate) fn new(
        name: &str,
        instructions: u64,
        reference: Option<u64>,
        native: &NativeCounts,
        guest_instructions: u64,
        text_bytes: u64,
        built: &Recompile,
    ) -> ConfigResult {
        let ratio = |a: u64, b: u64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
        ConfigResult {
            name: name.to_string(),
            instructions,
            ratio_native_i386: ratio(instructions, native.i386),
            ratio_native_x86_64: ratio(instructions, native.x86_64),
            ratio_reference: ratio(instructions, reference.unwrap_or(instructions)),
            guest_instructions,
            text_bytes,
            bytes_per_guest_instruction: ratio(text_bytes, guest_instructions),
            functions: built.stats.functions,
            generate_seconds: built.stats.generate_seconds,
            compile_seconds: built.stats.compile_seconds,
            link_seconds: built.stats.link_seconds,
            peak_kib: built.peak_kib,
        }
    }
}

/// rpt against the native build, by wall clock.
#[derive(Clone, Debug, Serialize)]
pub struct WallClock {
    /// rpt ÷ native over the pairs.
    pub summary: PairSummary,
    /// Every pair, in the order timed.
    pub pairs: Vec<Pair>,
}

/// rpt against qemu-user, by wall clock.
#[derive(Clone, Debug, Serialize)]
pub struct QemuResult {
    /// The peer (`qemu-i386`, `qemu-ppc -cpu 750cl`).
    pub peer: String,
    /// rpt ÷ qemu over the pairs.
    pub summary: PairSummary,
    /// Every pair, in the order timed.
    pub pairs: Vec<Pair>,
}

/// Medians over all samples (first configuration).
#[derive(Clone, Debug, Serialize, Default)]
pub struct Summary {
    /// Median of rpt ÷ native i386 instructions.
    pub median_ratio_native_i386: f64,
    /// Median of rpt ÷ native x86-64 instructions.
    pub median_ratio_native_x86_64: f64,
    /// Median of the per-sample median wall-clock ratios rpt ÷ native i386.
    pub median_ratio_native_wall: f64,
    /// Median of the per-sample median wall-clock ratios rpt ÷ qemu-user.
    pub median_ratio_qemu: f64,
}

impl Summary {
    /// The medians of the samples' reference-configuration ratios.
    pub fn of(samples: &[SampleResult]) -> Summary {
        let median = |f: &dyn Fn(&SampleResult) -> Option<f64>| {
            let values: Vec<f64> = samples.iter().filter_map(f).collect();
            quantile(&values, 0.5).unwrap_or(0.0)
        };
        Summary {
            median_ratio_native_i386: median(&|s| s.configurations.first().map(|c| c.ratio_native_i386)),
            median_ratio_native_x86_64: median(&|s| s.configurations.first().map(|c| c.ratio_native_x86_64)),
            median_ratio_native_wall: median(&|s| Some(s.native_wall.summary.median_ratio)),
            median_ratio_qemu: median(&|s| Some(s.qemu.summary.median_ratio)),
        }
    }
}

/// The Markdown page: how it was made, the machine, the main table, and the costs table.
pub fn markdown(report: &Report) -> String {
    let mut md = String::new();
    let reference = report.configurations.first().cloned().unwrap_or_default();
    let _ = writeln!(md, "# rpt benchmarks\n");
    let _ = writeln!(
        md,
        "Generated by `{}` — rerun it to regenerate this page, `results.json` and `ratios.svg`; do not edit by hand.\n",
        report.command
    );
    let _ = writeln!(
        md,
        "Every number here comes from this one run on this one machine; numbers from different runs are never compared."
    );
    let _ = writeln!(
        md,
        "Instruction counts are host instructions executed, counted by `valgrind --tool=callgrind` (exactly repeatable)."
    );
    let _ = writeln!(
        md,
        "Wall-clock ratios come from interleaved pairs (rpt then the peer, then the peer then rpt, ...), against the \
         native i386 build (which runs on this x86-64 machine) and against qemu-user: the median of rpt ÷ peer, its \
         interquartile range, and how many pairs each side won.\n"
    );
    let _ = writeln!(md, "## Machine\n");
    let _ = writeln!(
        md,
        "- CPU: {} ({} logical CPUs)",
        report.machine.cpu, report.machine.cores
    );
    for tool in &report.machine.tools {
        let _ = writeln!(md, "- {}: {}", tool.name, tool.version);
    }
    let _ = writeln!(md);
    let _ = writeln!(md, "## Ratios\n");
    let _ = writeln!(
        md,
        "Lower is better for rpt. The instruction and wall-clock ratios are for the `{reference}` configuration; \
         each configuration column is its instruction count ÷ `{reference}`'s.\n"
    );
    let mut header = String::from(
        "| sample | rpt ÷ native i386 (instructions) | rpt ÷ native x86-64 (instructions) | rpt ÷ native i386 (wall clock, median [IQR]) | qemu-user peer | rpt ÷ qemu-user (wall clock, median [IQR]) | pairs rpt faster / qemu faster |",
    );
    let mut rule = String::from("|---|---:|---:|---:|---|---:|---:|");
    for c in &report.configurations {
        let _ = write!(header, " {c} |");
        rule.push_str("---:|");
    }
    let _ = writeln!(md, "{header}\n{rule}");
    for s in &report.samples {
        let Some(first) = s.configurations.first() else {
            continue;
        };
        let q = &s.qemu.summary;
        let w = &s.native_wall.summary;
        let _ = write!(
            md,
            "| `{}` | {:.2} | {:.2} | {:.2} [{:.2}–{:.2}] | `{}` | {:.3} [{:.3}–{:.3}] | {} / {} of {} |",
            s.name,
            first.ratio_native_i386,
            first.ratio_native_x86_64,
            w.median_ratio,
            w.q1_ratio,
            w.q3_ratio,
            s.qemu.peer,
            q.median_ratio,
            q.q1_ratio,
            q.q3_ratio,
            q.a_faster,
            q.b_faster,
            q.pairs
        );
        for c in &s.configurations {
            let _ = write!(md, " {:.3} |", c.ratio_reference);
        }
        let _ = writeln!(md);
    }
    let _ = writeln!(
        md,
        "| **median** | **{:.2}** | **{:.2}** | **{:.2}** | | **{:.3}** | |{}",
        report.summary.median_ratio_native_i386,
        report.summary.median_ratio_native_x86_64,
        report.summary.median_ratio_native_wall,
        report.summary.median_ratio_qemu,
        " |".repeat(report.configurations.len())
    );
    let _ = writeln!(md, "\n![rpt ÷ native and ÷ qemu per sample](ratios.svg)\n");
    let _ = writeln!(md, "## Counts and costs\n");
    let _ = writeln!(
        md,
        "Host code per guest instruction is the text size of the shard objects ÷ the guest instructions lifted. \
         Times are for recompiling with an empty object cache; peak memory is the largest resident set of rpt or a \
         compiler it ran.\n"
    );
    let _ = writeln!(
        md,
        "| sample | input | configuration | rpt instructions | native i386 | native x86-64 | guest instructions lifted | host bytes / guest instruction | generate (s) | compile (s) | link (s) | peak memory (MiB) |"
    );
    let _ = writeln!(md, "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for s in &report.samples {
        for c in &s.configurations {
            let _ = writeln!(
                md,
                "| `{}` | {} | {} | {} | {} | {}{} | {} | {:.1} | {:.3} | {:.2} | {:.3} | {:.1} |",
                s.name,
                s.input,
                c.name,
                c.instructions,
                s.native_i386_instructions,
                s.native_x86_64_instructions,
                if s.native_x86_64_output_matches {
                    ""
                } else {
                    " (output differs)"
                },
                c.guest_instructions,
                c.bytes_per_guest_instruction,
                c.generate_seconds,
                c.compile_seconds,
                c.link_seconds,
                c.peak_kib as f64 / 1024.0
            );
        }
    }
    md
}
