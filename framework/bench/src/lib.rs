//! `rpt bench`: measures recompiled programs against their peers — the same source compiled
//! natively (the limit) and qemu-user running the same code (the dynamic translator users would
//! otherwise pick) — and rpt's own configurations against each other (DESIGN.md §11).
//!
//! Instruction counts come from callgrind (exactly repeatable here); wall time only from
//! interleaved A/B pairs within one run, reported as a median ratio with its interquartile range
//! and the number of pairs each side won. A sample whose recompiled output differs from its oracle's
//! is an error, never a number. [`run`] measures a suite, [`write_outputs`] writes the Markdown
//! table, the JSON file and the SVG chart; [`compare`] sets two generations of one recipe side by side;
//! [`run_pass_table`] counts each pass configuration's instructions on a list of samples.

mod compare;
mod measure;
mod pass_table;
mod report;
mod stats;
mod suite;
mod svg;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub use compare::{Comparison, compare};
pub use measure::{elf64_text_size, parse_callgrind_total};
pub use pass_table::{Cell, PassTable, PassTableReport, Row, TableSample, pass_table_markdown, run_pass_table};
pub use report::{ConfigResult, Machine, QemuResult, Report, SampleResult, Summary, Tool, WallClock, markdown};
pub use stats::{Pair, PairSummary, quantile};
pub use suite::{Configuration, PairRule, QemuPeer, Sample, Suite};
pub use svg::ratios_svg;

use measure::Invocation;

/// What can go wrong while benchmarking; each names the file or the command at fault.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The suite file is malformed.
    #[error("{path}: {message}")]
    Suite {
        /// The suite file.
        path: PathBuf,
        /// What is wrong, with line and column when the parser knows them.
        message: String,
    },
    /// A generation lacks something the bench reads (objects, the listing).
    #[error("{dir}: {message}")]
    Generation {
        /// The generation directory.
        dir: PathBuf,
        /// What is missing or wrong.
        message: String,
    },
    /// A tool failed or printed something unexpected.
    #[error("`{command}`: {message}")]
    Tool {
        /// The command line.
        command: String,
        /// What happened.
        message: String,
    },
    /// A recompiled program printed something other than its oracle: it is not benchmarked.
    #[error(
        "sample `{sample}` ({configuration}): the recompiled program's output differs from {oracle}'s, so it is not \
         benchmarked\n--- {oracle}\n{expected}\n--- rpt\n{actual}"
    )]
    WrongOutput {
        /// The sample.
        sample: String,
        /// The configuration.
        configuration: String,
        /// The oracle (`native i386`, `qemu-ppc -cpu 750cl`).
        oracle: String,
        /// The oracle's output.
        expected: String,
        /// rpt's output.
        actual: String,
    },
}

/// Turns an I/O error about `path` into a [`BenchError::Io`] naming it.
pub(crate) fn io_error(path: &Path) -> impl FnOnce(std::io::Error) -> BenchError + '_ {
    move |source| BenchError::Io {
        path: path.to_owned(),
        source,
    }
}

/// What `rpt recompile --stats FILE` writes (RON): the handshake between the recompile child and
/// the bench.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RecompileStats {
    /// The generation directory.
    pub gen_dir: PathBuf,
    /// The linked binary.
    pub binary: PathBuf,
    /// Functions lifted.
    pub functions: usize,
    /// Seconds from the recipe to the generated C (discover, lift, passes, emit).
    pub generate_seconds: f64,
    /// Seconds compiling objects.
    pub compile_seconds: f64,
    /// Seconds linking.
    pub link_seconds: f64,
}

impl RecompileStats {
    /// The RON text of the stats.
    pub fn to_ron(&self) -> String {
        ron::ser::to_string_pretty(self, ron::ser::PrettyConfig::default()).unwrap_or_default()
    }

    /// Parses the RON text of the stats.
    pub fn parse(text: &str) -> Result<RecompileStats, String> {
        ron::from_str(text).map_err(|e| e.to_string())
    }
}

/// How a run is set up.
#[derive(Clone, Debug)]
pub struct Options {
    /// The suite file.
    pub suite: PathBuf,
    /// The `rpt` executable that recompiles (the running one, normally).
    pub rpt: PathBuf,
    /// The command line to record in the outputs.
    pub command_line: String,
    /// Replaces the suite's pair rule (tests use few pairs).
    pub pairs: Option<PairRule>,
    /// Measure only these samples (all when empty).
    pub only: Vec<String>,
}

/// Output normalisation before comparing a recompiled program with its oracle: lines compare
/// without their line ends, because a guest's platform may write "\r\n" where the oracle's writes
/// "\n" (a Windows program's standard output is in text mode). Bytes, not text: a compressor's
/// output is not UTF-8, and a lossy conversion would make different bytes compare equal.
fn normalise(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if !(bytes[i] == b'\r' && bytes.get(i + 1) == Some(&b'\n')) {
            out.push(bytes[i]);
        }
        i += 1;
    }
    out
}

/// Instruction counts of a program's native builds, measured once per program and input.
#[derive(Clone)]
struct NativeCounts {
    i386: u64,
    x86_64: u64,
    i386_output: Vec<u8>,
    i386_binary: PathBuf,
    x86_64_matches: bool,
}

/// Runs the suite and returns its report. `progress` receives one line per step.
pub fn run(options: &Options, progress: &dyn Fn(&str)) -> Result<Report, BenchError> {
    let suite = Suite::load(&options.suite)?;
    let rule = options.pairs.unwrap_or(suite.pairs);
    let scratch = tempfile::Builder::new()
        .prefix("rpt-bench-")
        .tempdir()
        .map_err(io_error(&std::env::temp_dir()))?;
    let scratch = scratch.path();
    let mut natives: BTreeMap<NativeKey, NativeCounts> = BTreeMap::new();
    let mut samples = Vec::new();
    for sample in &suite.samples {
        if !options.only.is_empty() && !options.only.contains(&sample.name) {
            continue;
        }
        let dir = scratch.join(&sample.name);
        std::fs::create_dir_all(&dir).map_err(io_error(&dir))?;
        let input = match &sample.input_file {
            Some(file) => suite::resolve(&options.suite, file),
            None => {
                let input = dir.join("input");
                std::fs::write(&input, &sample.input).map_err(io_error(&input))?;
                input
            }
        };
        let build_script = suite::resolve(
            &options.suite,
            sample.build_script.as_deref().unwrap_or(&suite.build_script),
        );
        let key = (build_script.clone(), sample.program.clone(), sample.describe_input());
        let native = match natives.get(&key) {
            Some(n) => n.clone(),
            None => {
                progress(&format!("{}: native builds of {}", sample.name, sample.program));
                let n = measure_natives(&build_script, sample, &input, scratch)?;
                natives.insert(key, n.clone());
                n
            }
        };
        samples.push(measure_sample(
            options, &suite, rule, sample, &native, &input, &dir, progress,
        )?);
    }
    let summary = Summary::of(&samples);
    Ok(Report {
        command: options.command_line.clone(),
        suite: suite_name(&options.suite),
        machine: Machine::describe(&options.rpt),
        configurations: suite.configurations.iter().map(|c| c.name.clone()).collect(),
        pair_rule: rule,
        samples,
        summary,
    })
}

fn suite_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Native builds are measured once per build script, program and run (arguments and input).
type NativeKey = (PathBuf, String, String);

fn measure_natives(script: &Path, sample: &Sample, input: &Path, scratch: &Path) -> Result<NativeCounts, BenchError> {
    let program = &sample.program;
    let dir = scratch.join("native");
    std::fs::create_dir_all(&dir).map_err(io_error(&dir))?;
    let i386 = dir.join(format!("{program}-i386"));
    let x86_64 = dir.join(format!("{program}-x86-64"));
    measure::build_native(script, "i386", program, &i386)?;
    measure::build_native(script, "x86-64", program, &x86_64)?;
    let i386_run = Invocation::new([&i386]).with_args(&sample.args);
    let x86_64_run = Invocation::new([&x86_64]).with_args(&sample.args);
    let i386_output = measure::run_capture(&i386_run, input)?;
    let x86_64_output = measure::run_capture(&x86_64_run, input)?;
    Ok(NativeCounts {
        i386: measure::callgrind(&i386_run, input, &dir)?,
        x86_64: measure::callgrind(&x86_64_run, input, &dir)?,
        x86_64_matches: x86_64_output == i386_output,
        i386_output,
        i386_binary: i386,
    })
}

#[allow(clippy::too_many_arguments)]
fn measure_sample(
    options: &Options,
    suite: &Suite,
    rule: PairRule,
    sample: &Sample,
    native: &NativeCounts,
    input: &Path,
    dir: &Path,
    progress: &dyn Fn(&str),
) -> Result<SampleResult, BenchError> {
    let recipe = suite::resolve(&options.suite, &sample.recipe);
    // The peer qemu runs and the oracle the recompiled output must equal.
    let (qemu, oracle_name, oracle_output, peer_name) = match &sample.qemu {
        QemuPeer::I386 => (
            Invocation::new([PathBuf::from("qemu-i386"), native.i386_binary.clone()]).with_args(&sample.args),
            "the native i386 build",
            native.i386_output.clone(),
            "qemu-i386",
        ),
        QemuPeer::Ppc750cl { elf } => {
            let elf = suite::resolve(&options.suite, elf);
            check_same_code(&options.rpt, &elf, &recipe, dir)?;
            let qemu = Invocation::new([PathBuf::from("qemu-ppc"), "-cpu".into(), "750cl".into(), elf.clone()])
                .with_args(&sample.args);
            let output = measure::run_capture(&qemu, input)?;
            (qemu, "qemu-ppc -cpu 750cl", output, "qemu-ppc -cpu 750cl")
        }
    };
    let gen_dir = dir.join("gen");
    let cache_dir = dir.join("cache");
    let mut configurations: Vec<ConfigResult> = Vec::new();
    let mut reference_binary = None;
    for config in &suite.configurations {
        progress(&format!("{}: recompiling ({})", sample.name, config.name));
        // Each configuration starts from an empty cache, so its compile time is a real one.
        let _ = std::fs::remove_dir_all(&cache_dir);
        let built = measure::recompile(&options.rpt, &recipe, config, &gen_dir, &cache_dir, dir)?;
        let binary = built.stats.binary.clone();
        let output = measure::run_capture(&Invocation::new([&binary]).with_args(&sample.args), input)?;
        if normalise(&oracle_output) != normalise(&output) {
            return Err(BenchError::WrongOutput {
                sample: sample.name.clone(),
                configuration: config.name.clone(),
                oracle: oracle_name.into(),
                expected: String::from_utf8_lossy(&oracle_output).into_owned(),
                actual: String::from_utf8_lossy(&output).into_owned(),
            });
        }
        progress(&format!("{}: callgrind ({})", sample.name, config.name));
        let stripped = dir.join(format!("{}-stripped", config.name));
        measure::strip_debug(&binary, &stripped)?;
        let instructions = measure::callgrind(&Invocation::new([&stripped]).with_args(&sample.args), input, dir)?;
        let guest_instructions = measure::lifted_guest_instructions(&built.stats.gen_dir)?;
        let text_bytes = measure::lifted_text_size(&built.stats.gen_dir)?;
        let reference = configurations.first().map(|c| c.instructions);
        configurations.push(ConfigResult::new(
            &config.name,
            instructions,
            reference,
            native,
            guest_instructions,
            text_bytes,
            &built,
        ));
        if reference_binary.is_none() {
            reference_binary = Some(binary);
        }
    }
    let binary = reference_binary.ok_or_else(|| BenchError::Suite {
        path: options.suite.clone(),
        message: "no configuration".into(),
    })?;
    let rpt_run = Invocation::new([&binary]).with_args(&sample.args);
    let native_run = Invocation::new([&native.i386_binary]).with_args(&sample.args);
    progress(&format!("{}: timing pairs against the native i386 build", sample.name));
    let native_pairs = time_pairs(&rpt_run, &native_run, input, rule)?;
    let native_summary = summarise(&native_pairs, &native_run)?;
    progress(&format!("{}: timing pairs against {peer_name}", sample.name));
    let pairs = time_pairs(&rpt_run, &qemu, input, rule)?;
    let summary = summarise(&pairs, &qemu)?;
    Ok(SampleResult {
        name: sample.name.clone(),
        program: sample.program.clone(),
        input: sample.describe_input(),
        recipe: sample.recipe.clone(),
        native_i386_instructions: native.i386,
        native_x86_64_instructions: native.x86_64,
        native_x86_64_output_matches: native.x86_64_matches,
        configurations,
        native_wall: WallClock {
            summary: native_summary,
            pairs: native_pairs,
        },
        qemu: QemuResult {
            peer: peer_name.into(),
            summary,
            pairs,
        },
    })
}

/// The pairs' summary, or an error naming the peer when none could be taken.
fn summarise(pairs: &[Pair], peer: &Invocation) -> Result<PairSummary, BenchError> {
    PairSummary::of(pairs).ok_or_else(|| BenchError::Tool {
        command: peer.describe(),
        message: "no usable timing pairs".into(),
    })
}

/// Fails unless converting `elf` to a DOL gives the recipe's image byte for byte: qemu must run the
/// very code rpt recompiles.
fn check_same_code(rpt: &Path, elf: &Path, recipe: &Path, dir: &Path) -> Result<(), BenchError> {
    let loaded = rpt_recipe::load(recipe).map_err(|e| BenchError::Tool {
        command: format!("loading {}", recipe.display()),
        message: e.to_string(),
    })?;
    let dol = dir.join("from-elf.dol");
    let convert = Invocation::new([
        rpt.to_path_buf(),
        "convert-image".into(),
        loaded.recipe.guest.clone().into(),
        elf.to_path_buf(),
        dol.clone(),
    ]);
    measure::run_capture(&convert, Path::new("/dev/null"))?;
    let made = std::fs::read(&dol).map_err(io_error(&dol))?;
    if made != loaded.image {
        return Err(BenchError::Tool {
            command: convert.describe(),
            message: format!(
                "{} is not the ELF {} was made from (its DOL differs), so qemu would not run the same code",
                elf.display(),
                loaded.image_path.display()
            ),
        });
    }
    Ok(())
}

/// Interleaved pairs, A then B and B then A alternately, until the rule is met.
pub(crate) fn time_pairs(
    a: &Invocation,
    b: &Invocation,
    input: &Path,
    rule: PairRule,
) -> Result<Vec<Pair>, BenchError> {
    let mut pairs = Vec::new();
    while pairs.len() < rule.max {
        let a_first = pairs.len() % 2 == 0;
        let (a_seconds, b_seconds) = if a_first {
            let ta = measure::time_run(a, input)?;
            (ta, measure::time_run(b, input)?)
        } else {
            let tb = measure::time_run(b, input)?;
            (measure::time_run(a, input)?, tb)
        };
        pairs.push(Pair {
            a_first,
            a_seconds,
            b_seconds,
        });
        // Stop on an even count so both orders weigh the same.
        if pairs.len() >= rule.min
            && pairs.len() % 2 == 0
            && PairSummary::of(&pairs).is_some_and(|s| s.relative_spread() <= rule.spread)
        {
            break;
        }
    }
    Ok(pairs)
}

/// Writes `results.md`, `results.json` and `ratios.svg` into `out`.
pub fn write_outputs(report: &Report, out: &Path) -> Result<Vec<PathBuf>, BenchError> {
    std::fs::create_dir_all(out).map_err(io_error(out))?;
    let json = serde_json::to_string_pretty(report).map_err(|e| BenchError::Tool {
        command: "writing results.json".into(),
        message: e.to_string(),
    })? + "\n";
    let files = [
        ("results.md", markdown(report)),
        ("results.json", json),
        ("ratios.svg", ratios_svg(report)),
    ];
    let mut written = Vec::new();
    for (name, text) in files {
        let path = out.join(name);
        std::fs::write(&path, text).map_err(io_error(&path))?;
        written.push(path);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A report as a run would produce it, with made-up numbers.
    fn sample_report() -> Report {
        let pairs = vec![
            Pair {
                a_first: true,
                a_seconds: 0.5,
                b_seconds: 4.0,
            },
            Pair {
                a_first: false,
                a_seconds: 0.6,
                b_seconds: 4.1,
            },
        ];
        let native_pairs = vec![
            Pair {
                a_first: true,
                a_seconds: 0.5,
                b_seconds: 0.25,
            },
            Pair {
                a_first: false,
                a_seconds: 0.6,
                b_seconds: 0.2,
            },
        ];
        let config = |name: &str, instructions: u64| ConfigResult {
            name: name.into(),
            instructions,
            ratio_native_i386: instructions as f64 / 1000.0,
            ratio_native_x86_64: instructions as f64 / 900.0,
            ratio_reference: instructions as f64 / 6000.0,
            guest_instructions: 900,
            text_bytes: 14400,
            bytes_per_guest_instruction: 16.0,
            functions: 12,
            generate_seconds: 0.1,
            compile_seconds: 2.0,
            link_seconds: 0.1,
            peak_kib: 100_000,
        };
        let samples = vec![SampleResult {
            name: "lz-<ppc>".into(),
            program: "lz".into(),
            input: "1".into(),
            recipe: "../recipes/bench-lz-ppc.ron".into(),
            native_i386_instructions: 1000,
            native_x86_64_instructions: 900,
            native_x86_64_output_matches: true,
            configurations: vec![config("baseline", 6000), config("all", 3000)],
            native_wall: WallClock {
                summary: PairSummary::of(&native_pairs).expect("pairs"),
                pairs: native_pairs,
            },
            qemu: QemuResult {
                peer: "qemu-ppc -cpu 750cl".into(),
                summary: PairSummary::of(&pairs).expect("pairs"),
                pairs,
            },
        }];
        Report {
            command: "rpt bench".into(),
            suite: "suite.ron".into(),
            machine: Machine {
                cpu: "a CPU".into(),
                cores: 2,
                tools: vec![Tool {
                    name: "valgrind".into(),
                    version: "valgrind-3.19.0".into(),
                }],
            },
            configurations: vec!["baseline".into(), "all".into()],
            pair_rule: PairRule::default(),
            summary: Summary::of(&samples),
            samples,
        }
    }

    #[test]
    fn writers_are_deterministic_and_escape_names() {
        let report = sample_report();
        assert_eq!(ratios_svg(&report), ratios_svg(&report));
        assert_eq!(markdown(&report), markdown(&report));
        let svg = ratios_svg(&report);
        assert!(svg.contains("lz-&lt;ppc&gt;"), "{svg}");
        // One bar per ratio: 6.00, 6.67 and 0.135 (the median of 0.125 and 0.146).
        assert!(
            svg.contains(">6.00<") && svg.contains(">6.67<") && svg.contains(">0.14<"),
            "{svg}"
        );
        let md = markdown(&report);
        assert!(md.contains("| baseline | all |"), "a column per configuration:\n{md}");
        assert!(md.contains("| 1.000 | 0.500 |"), "each configuration's effect:\n{md}");
        assert!(md.contains("2 / 0 of 2"), "pair counts:\n{md}");
        // rpt ÷ native by wall clock beside the instruction ratios: the median of 2 and 3.
        assert!(
            md.contains("| 6.00 | 6.67 | 2.50 [2.25–2.75] |"),
            "native wall clock:\n{md}"
        );
    }

    #[test]
    fn summary_takes_medians_of_the_reference_configuration() {
        let report = sample_report();
        assert_eq!(report.summary.median_ratio_native_i386, 6.0);
        assert_eq!(report.summary.median_ratio_native_wall, 2.5);
        assert!((report.summary.median_ratio_qemu - (0.5 / 4.0 + 0.6 / 4.1) / 2.0).abs() < 1e-12);
    }

    #[test]
    fn suite_errors_name_the_file_and_line() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("suite.ron");
        std::fs::write(
            &path,
            "(\n build_script: \"b.sh\",\n configurations: [(name: \"baseline\", passes: [])],\n samples: [],\n colour: 1,\n)",
        )
        .expect("write");
        let err = Suite::load(&path).expect_err("unknown field").to_string();
        assert!(err.contains("suite.ron: 5:") && err.contains("colour"), "{err}");
        std::fs::write(
            &path,
            "(build_script: \"b.sh\", configurations: [(name: \"baseline\", passes: [])], samples: [])",
        )
        .expect("write");
        let err = Suite::load(&path).expect_err("no samples").to_string();
        assert!(err.contains("`samples` is empty"), "{err}");
        std::fs::write(
            &path,
            "(build_script: \"b.sh\", configurations: [(name: \"baseline\", passes: [])], samples: [\n\
             (name: \"lua\", program: \"lua\", input: \"6\", input_file: \"bench.lua\", recipe: \"r.ron\", qemu: I386)])",
        )
        .expect("write");
        let err = Suite::load(&path).expect_err("two inputs").to_string();
        assert!(err.contains("both `input` and `input_file`"), "{err}");
    }

    #[test]
    fn a_real_program_sample_reads_a_file_with_arguments() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("suite.ron");
        std::fs::write(
            &path,
            "(build_script: \"b.sh\", configurations: [(name: \"baseline\", passes: [])], samples: [\n\
             (name: \"lua\", program: \"lua\", args: [\"-\"], input_file: \"../lua/bench.lua\",\n\
              build_script: \"../lua/build.sh\", recipe: \"r.ron\", qemu: I386)])",
        )
        .expect("write");
        let suite = Suite::load(&path).expect("loads");
        let sample = &suite.samples[0];
        assert_eq!(sample.describe_input(), "- < bench.lua");
        assert_eq!(sample.build_script.as_deref(), Some("../lua/build.sh"));
    }

    #[test]
    fn a_configuration_may_name_a_host_cpu_model() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("suite.ron");
        std::fs::write(
            &path,
            "(build_script: \"b.sh\", configurations: [(name: \"baseline\", passes: []),\n\
             (name: \"v3\", passes: [\"flag-abi\"], host_cpu: \"x86-64-v3\")], samples: [\n\
             (name: \"vm\", program: \"vm\", input: \"6\", recipe: \"r.ron\", qemu: I386)])",
        )
        .expect("write");
        let suite = Suite::load(&path).expect("loads");
        assert_eq!(suite.configurations[0].host_cpu, None);
        assert_eq!(suite.configurations[1].host_cpu.as_deref(), Some("x86-64-v3"));
    }

    #[test]
    fn outputs_compare_as_bytes_without_carriage_returns_before_line_feeds() {
        assert_eq!(normalise(b"a\r\nb\r\n"), normalise(b"a\nb\n"));
        // Bytes that are not UTF-8 still differ: a lossy conversion would make both U+FFFD.
        assert_ne!(normalise(&[0xff, 0x0d]), normalise(&[0xfe, 0x0d]));
        assert_eq!(normalise(b"\r\r\n\r"), b"\r\n\r".to_vec());
    }
}
