//! The suite file (`bench/suite.ron`): which samples to measure, in which configurations, how often.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::BenchError;

/// A benchmark suite as written in its RON file. Paths are relative to the suite file's directory.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Suite {
    /// The script that builds each program's native peers, called as `SCRIPT KIND PROGRAM OUT` with
    /// KIND `i386` (gcc -m32 -O2: the oracle, a limit and what qemu-i386 runs) or `x86-64` (clang -O2).
    pub build_script: String,
    /// How many interleaved wall-clock pairs to time per sample.
    #[serde(default)]
    pub pairs: PairRule,
    /// The configurations every sample is recompiled in; the first is the reference the others'
    /// effects are stated against.
    pub configurations: Vec<Configuration>,
    /// The samples, one line each.
    pub samples: Vec<Sample>,
}

/// When to stop timing pairs: after `min` pairs once the interquartile range of the ratios is
/// within `spread` of the median, and after `max` pairs in any case.
#[derive(Clone, Copy, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PairRule {
    /// Pairs always timed.
    pub min: usize,
    /// Pairs never exceeded.
    pub max: usize,
    /// The largest acceptable interquartile range, as a fraction of the median.
    pub spread: f64,
}

impl Default for PairRule {
    fn default() -> Self {
        PairRule {
            min: 5,
            max: 15,
            spread: 0.1,
        }
    }
}

/// A named variation of every sample's recipe.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Configuration {
    /// Its name in tables (`baseline`, `flag-abi`, ...).
    pub name: String,
    /// The passes, by name and in order, that replace the recipe's (empty: no passes); they run
    /// with their default parameters (`rpt recompile --passes`).
    pub passes: Vec<String>,
    /// A CPU model of the host in place of the recipe's (`rpt recompile --host-cpu`), such as
    /// x86-64's opt-in `x86-64-v3`; none keeps the recipe's.
    #[serde(default)]
    pub host_cpu: Option<String>,
    /// The run-time tier on or off in place of the recipe's (`rpt recompile --run-time-tier`);
    /// none keeps the recipe's.
    #[serde(default)]
    pub run_time_tier: Option<bool>,
}

/// One guest program to measure.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Sample {
    /// Its name in tables (`vm-x86`).
    pub name: String,
    /// The program's name for the build script (`vm`): the source both guests' images come from.
    pub program: String,
    /// What the program reads on standard input (the benchmark programs read their workload size).
    #[serde(default)]
    pub input: String,
    /// A file read on standard input instead of `input` (a real program's script or data).
    #[serde(default)]
    pub input_file: Option<String>,
    /// Command-line arguments every run of the program gets: its native builds, qemu's run and the
    /// recompiled program.
    #[serde(default)]
    pub args: Vec<String>,
    /// The script that builds this program's native peers, when it is not the suite's: a real
    /// program brings its own (`tests/real/NAME/build.sh`), called the same way.
    #[serde(default)]
    pub build_script: Option<String>,
    /// The recipe rpt recompiles.
    pub recipe: String,
    /// The dynamic translator the recompiled program is timed against.
    pub qemu: QemuPeer,
}

/// The qemu-user run of the same code.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, Eq)]
pub enum QemuPeer {
    /// `qemu-i386` running the program's i386 Linux build (qemu-user cannot run a PE).
    I386,
    /// `qemu-ppc -cpu 750cl` running the ELF the sample's DOL was converted from; the bench checks
    /// that converting it again gives the recipe's image byte for byte.
    Ppc750cl {
        /// The ELF.
        elf: String,
    },
}

impl Suite {
    /// Reads and checks a suite file.
    pub fn load(path: &Path) -> Result<Suite, BenchError> {
        let text = std::fs::read_to_string(path).map_err(crate::io_error(path))?;
        let suite: Suite = ron::Options::default()
            .with_default_extension(ron::extensions::Extensions::IMPLICIT_SOME)
            .from_str(&text)
            .map_err(|e| BenchError::Suite {
                path: path.to_owned(),
                message: format!("{}:{}: {}", e.span.start.line, e.span.start.col, e.code),
            })?;
        suite.check(path)?;
        Ok(suite)
    }

    fn check(&self, path: &Path) -> Result<(), BenchError> {
        let problem = |message: String| BenchError::Suite {
            path: path.to_owned(),
            message,
        };
        if self.configurations.is_empty() {
            return Err(problem(
                "`configurations` is empty: name at least one (baseline)".into(),
            ));
        }
        if self.samples.is_empty() {
            return Err(problem("`samples` is empty".into()));
        }
        if self.pairs.min == 0
            || self.pairs.max < self.pairs.min
            || self.pairs.spread.is_nan()
            || self.pairs.spread <= 0.0
        {
            return Err(problem(format!(
                "pairs: need 1 <= min <= max and spread > 0 (got min {}, max {}, spread {})",
                self.pairs.min, self.pairs.max, self.pairs.spread
            )));
        }
        let mut names = std::collections::BTreeSet::new();
        for c in &self.configurations {
            if !names.insert(format!("configuration {}", c.name)) {
                return Err(problem(format!("configuration `{}` appears twice", c.name)));
            }
        }
        for s in &self.samples {
            if !names.insert(format!("sample {}", s.name)) {
                return Err(problem(format!("sample `{}` appears twice", s.name)));
            }
            if s.input_file.is_some() && !s.input.is_empty() {
                return Err(problem(format!(
                    "sample `{}` has both `input` and `input_file`: name one",
                    s.name
                )));
            }
        }
        Ok(())
    }
}

impl Sample {
    /// How the sample's run is described in tables: its arguments and what it reads.
    pub fn describe_input(&self) -> String {
        let mut words: Vec<String> = self.args.clone();
        match &self.input_file {
            Some(file) => {
                let name = Path::new(file)
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_else(|| file.clone());
                words.push(format!("< {name}"));
            }
            None => words.push(self.input.trim().to_string()),
        }
        words.join(" ")
    }
}

/// A path from the suite file resolved against the suite file's directory.
pub fn resolve(suite_path: &Path, relative: &str) -> PathBuf {
    suite_path.parent().unwrap_or(Path::new("")).join(relative)
}
