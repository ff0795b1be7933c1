//! `rpt bench RECIPE --vs gen:ID`: two generations of one recipe, side by side (DESIGN.md §1).

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::measure::{self, Invocation};
use crate::stats::{Pair, PairSummary};
use crate::{BenchError, PairRule, io_error, time_pairs};

/// Two builds of one program compared: A (the recipe as it is now) and B (another generation).
#[derive(Clone, Debug, Serialize)]
pub struct Comparison {
    /// A's binary.
    pub a: PathBuf,
    /// B's binary.
    pub b: PathBuf,
    /// Host instructions A executed (callgrind).
    pub a_instructions: u64,
    /// Host instructions B executed (callgrind).
    pub b_instructions: u64,
    /// A ÷ B by wall clock.
    pub summary: PairSummary,
    /// Every pair, in the order timed.
    pub pairs: Vec<Pair>,
}

impl Comparison {
    /// A's instructions ÷ B's.
    pub fn instruction_ratio(&self) -> f64 {
        self.a_instructions as f64 / self.b_instructions.max(1) as f64
    }
}

/// Runs both binaries with `input` on standard input, refuses them unless their outputs agree,
/// counts their instructions and times interleaved pairs.
pub fn compare(a: &Path, b: &Path, input: &[u8], rule: PairRule) -> Result<Comparison, BenchError> {
    let scratch = tempfile::Builder::new()
        .prefix("rpt-bench-")
        .tempdir()
        .map_err(io_error(&std::env::temp_dir()))?;
    let scratch = scratch.path();
    let input_file = scratch.join("input");
    std::fs::write(&input_file, input).map_err(io_error(&input_file))?;
    let (run_a, run_b) = (Invocation::new([a]), Invocation::new([b]));
    let (out_a, out_b) = (
        measure::run_capture(&run_a, &input_file)?,
        measure::run_capture(&run_b, &input_file)?,
    );
    if out_a != out_b {
        return Err(BenchError::WrongOutput {
            sample: a.display().to_string(),
            configuration: "the recipe as it is now".into(),
            oracle: b.display().to_string(),
            expected: String::from_utf8_lossy(&out_b).into_owned(),
            actual: String::from_utf8_lossy(&out_a).into_owned(),
        });
    }
    let mut counts = [0; 2];
    for (count, (binary, name)) in counts.iter_mut().zip([(a, "a"), (b, "b")]) {
        let stripped = scratch.join(name);
        measure::strip_debug(binary, &stripped)?;
        *count = measure::callgrind(&Invocation::new([&stripped]), &input_file, scratch)?;
    }
    let pairs = time_pairs(&run_a, &run_b, &input_file, rule)?;
    let summary = PairSummary::of(&pairs).ok_or_else(|| BenchError::Tool {
        command: run_b.describe(),
        message: "no usable timing pairs".into(),
    })?;
    Ok(Comparison {
        a: a.to_path_buf(),
        b: b.to_path_buf(),
        a_instructions: counts[0],
        b_instructions: counts[1],
        summary,
        pairs,
    })
}
