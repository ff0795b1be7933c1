//! The pass table (`rpt bench --pass-table bench/passes.ron`): every sample of a list recompiled
//! in each pass configuration, its executed host instructions counted with callgrind, written as
//! one Markdown table (docs/benchmarks/passes.md) with each configuration's ratio to the first.
//!
//! Unlike the suite, it needs no native peer: it compares rpt with itself, so any sample with a
//! recipe can be in it (the msvcrt programs, the x87 samples). Each configuration's output must
//! equal the first configuration's, or the table is not written: a pass that changes what a
//! program prints is a bug, not a number.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::measure::{self, Invocation};
use crate::report::Machine;
use crate::suite::{Configuration, resolve};
use crate::{BenchError, io_error, normalise};

/// The pass-table file.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PassTable {
    /// The configurations, the first being the one the others are divided by.
    pub configurations: Vec<Configuration>,
    /// The samples, one row each.
    pub samples: Vec<TableSample>,
}

/// One sample of the pass table.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TableSample {
    /// The row's name.
    pub name: String,
    /// The recipe, relative to the table file.
    pub recipe: String,
    /// Command-line arguments of the recompiled program.
    #[serde(default)]
    pub args: Vec<String>,
    /// What it reads on standard input.
    #[serde(default)]
    pub input: String,
    /// Its exit status (int_work exits with 7 on purpose).
    #[serde(default)]
    pub exit_status: i32,
}

/// One cell: a sample in one configuration.
#[derive(Clone, Debug, Serialize)]
pub struct Cell {
    /// Host instructions the whole program executed.
    pub instructions: u64,
    /// Bytes of host code of the lifted objects.
    pub text_bytes: u64,
}

/// One row: a sample in every configuration, in the table's order.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// The sample's name.
    pub name: String,
    /// One cell per configuration.
    pub cells: Vec<Cell>,
}

/// The measured table.
#[derive(Clone, Debug, Serialize)]
pub struct PassTableReport {
    /// The command that made it.
    pub command: String,
    /// The configurations' names.
    pub configurations: Vec<String>,
    /// The rows.
    pub rows: Vec<Row>,
    /// Where it ran.
    pub machine: Machine,
}

impl PassTable {
    /// Reads and checks a pass-table file.
    pub fn load(path: &Path) -> Result<PassTable, BenchError> {
        let text = std::fs::read_to_string(path).map_err(io_error(path))?;
        let table: PassTable = ron::from_str(&text).map_err(|e| BenchError::Suite {
            path: path.to_owned(),
            message: format!("{}:{}: {}", e.span.start.line, e.span.start.col, e.code),
        })?;
        let problem = |message: &str| BenchError::Suite {
            path: path.to_owned(),
            message: message.to_string(),
        };
        if table.configurations.len() < 2 {
            return Err(problem("`configurations` needs a baseline and at least one more"));
        }
        if table.samples.is_empty() {
            return Err(problem("`samples` is empty"));
        }
        Ok(table)
    }
}

/// Measures every sample of the table at `path` in every configuration.
pub fn run_pass_table(
    path: &Path,
    rpt: &Path,
    command: &str,
    progress: &dyn Fn(&str),
) -> Result<PassTableReport, BenchError> {
    let table = PassTable::load(path)?;
    let scratch = tempfile::Builder::new()
        .prefix("rpt-pass-table-")
        .tempdir()
        .map_err(io_error(&std::env::temp_dir()))?;
    let mut rows = Vec::new();
    for sample in &table.samples {
        let dir = scratch.path().join(&sample.name);
        std::fs::create_dir_all(&dir).map_err(io_error(&dir))?;
        rows.push(measure_row(path, &table, sample, rpt, &dir, progress)?);
    }
    Ok(PassTableReport {
        command: command.to_string(),
        configurations: table.configurations.iter().map(|c| c.name.clone()).collect(),
        rows,
        machine: Machine::describe(rpt),
    })
}

fn measure_row(
    table_path: &Path,
    table: &PassTable,
    sample: &TableSample,
    rpt: &Path,
    dir: &Path,
    progress: &dyn Fn(&str),
) -> Result<Row, BenchError> {
    let recipe = resolve(table_path, &sample.recipe);
    let input = dir.join("input");
    std::fs::write(&input, &sample.input).map_err(io_error(&input))?;
    let gen_dir = dir.join("gen");
    // One cache for the row: the instruction counts do not depend on compile time.
    let cache_dir = dir.join("cache");
    let mut reference: Option<(String, Vec<u8>)> = None;
    let mut cells = Vec::new();
    for config in &table.configurations {
        progress(&format!("{}: {}", sample.name, config.name));
        let built = measure::recompile(rpt, &recipe, config, &gen_dir, &cache_dir, dir)?;
        let stripped = dir.join(format!(
            "{}-stripped",
            config.name.replace(|c: char| !c.is_alphanumeric(), "_")
        ));
        measure::strip_debug(&built.stats.binary, &stripped)?;
        let run = Invocation::new(std::iter::once(stripped.clone()).chain(sample.args.iter().map(PathBuf::from)));
        let output = normalise(&measure::run_expecting(&run, &input, sample.exit_status)?);
        match &reference {
            None => reference = Some((config.name.clone(), output)),
            Some((name, expected)) if *expected != output => {
                return Err(BenchError::WrongOutput {
                    sample: sample.name.clone(),
                    configuration: config.name.clone(),
                    oracle: format!("the {name} configuration"),
                    expected: String::from_utf8_lossy(expected).into_owned(),
                    actual: String::from_utf8_lossy(&output).into_owned(),
                });
            }
            Some(_) => {}
        }
        cells.push(Cell {
            instructions: measure::callgrind_expecting(&run, &input, dir, sample.exit_status)?,
            text_bytes: measure::lifted_text_size(&built.stats.gen_dir)?,
        });
    }
    Ok(Row {
        name: sample.name.clone(),
        cells,
    })
}

/// `1234567` as `1,234,567`.
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The table as Markdown: counts, ratios to the first configuration, host code size, and the
/// median ratio of each configuration.
pub fn pass_table_markdown(report: &PassTableReport) -> String {
    let mut out = String::new();
    out.push_str("# Passes: executed instructions per configuration\n\n");
    out.push_str(&format!("Made by `{}`.\n\n", report.command));
    out.push_str(
        "Each cell: host instructions executed by the whole recompiled program on the x86-64 host (runtime and \
         platform included), counted with callgrind (the same inputs give the same counts); its ratio to the first \
         configuration; and the bytes of host code of the lifted functions. Every configuration's output was \
         checked equal to the first one's before counting.\n\n",
    );
    let tools: Vec<String> = report.machine.tools.iter().map(|t| t.version.clone()).collect();
    out.push_str(&format!(
        "Machine: {} ({} logical CPUs); {}.\n\n",
        report.machine.cpu,
        report.machine.cores,
        tools.join("; ")
    ));
    out.push_str("| sample |");
    for c in &report.configurations {
        out.push_str(&format!(" {c} |"));
    }
    out.push_str("\n|---|");
    for _ in &report.configurations {
        out.push_str("---:|");
    }
    out.push('\n');
    let mut ratios: Vec<Vec<f64>> = vec![Vec::new(); report.configurations.len()];
    for row in &report.rows {
        out.push_str(&format!("| {} |", row.name));
        let base = row.cells.first().map_or(0, |c| c.instructions);
        for (i, cell) in row.cells.iter().enumerate() {
            if i == 0 {
                out.push_str(&format!(
                    " {} (code {}) |",
                    grouped(cell.instructions),
                    grouped(cell.text_bytes)
                ));
            } else {
                let ratio = cell.instructions as f64 / base.max(1) as f64;
                ratios[i].push(ratio);
                out.push_str(&format!(
                    " {} ({ratio:.3}; code {}) |",
                    grouped(cell.instructions),
                    grouped(cell.text_bytes)
                ));
            }
        }
        out.push('\n');
    }
    out.push_str("| median ratio |");
    for (i, r) in ratios.iter().enumerate() {
        if i == 0 {
            out.push_str(" 1 |");
        } else {
            let median = crate::quantile(r, 0.5).unwrap_or(f64::NAN);
            out.push_str(&format!(" {median:.3} |"));
        }
    }
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report() -> PassTableReport {
        let cell = |instructions, text_bytes| Cell {
            instructions,
            text_bytes,
        };
        PassTableReport {
            command: "rpt bench --pass-table bench/passes.ron".into(),
            configurations: vec!["baseline".into(), "+x87-regions".into()],
            rows: vec![
                Row {
                    name: "a".into(),
                    cells: vec![cell(1_000_000, 4096), cell(500_000, 5000)],
                },
                Row {
                    name: "b".into(),
                    cells: vec![cell(2_000, 10), cell(2_000, 10)],
                },
                Row {
                    name: "c".into(),
                    cells: vec![cell(1_000, 10), cell(800, 10)],
                },
            ],
            machine: Machine {
                cpu: "test cpu".into(),
                cores: 2,
                tools: Vec::new(),
            },
        }
    }

    #[test]
    fn the_table_gives_ratios_to_the_first_configuration_and_their_median() {
        let md = pass_table_markdown(&report());
        assert!(
            md.contains("Made by `rpt bench --pass-table bench/passes.ron`."),
            "{md}"
        );
        assert!(
            md.contains("| a | 1,000,000 (code 4,096) | 500,000 (0.500; code 5,000) |"),
            "{md}"
        );
        assert!(md.contains("| median ratio | 1 | 0.800 |"), "{md}");
    }

    #[test]
    fn a_table_without_a_second_configuration_is_refused_with_its_path() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("passes.ron");
        std::fs::write(
            &path,
            r#"(configurations: [(name: "baseline", passes: [])], samples: [(name: "x", recipe: "x.ron")])"#,
        )
        .expect("write");
        let err = PassTable::load(&path).expect_err("one configuration is not a table");
        assert!(err.to_string().contains("passes.ron"), "{err}");
        std::fs::write(&path, "(configurations: [], samplez: [])").expect("write");
        let err = PassTable::load(&path).expect_err("a typo");
        assert!(err.to_string().contains("passes.ron: 1:"), "{err}");
    }
}
