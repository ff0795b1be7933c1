//! `rpt bench`: parses its arguments, lets `rpt_bench` measure, prints progress and where the
//! results went.

use std::path::PathBuf;

use anyhow::{Context, Result};

/// Arguments of `rpt bench`.
#[derive(clap::Args, Debug)]
pub struct BenchArgs {
    /// The suite file (samples, configurations, pair rule).
    #[arg(long, default_value = "bench/suite.ron")]
    pub suite: PathBuf,
    /// Where results.md, results.json and ratios.svg go.
    #[arg(long, default_value = "docs/benchmarks")]
    pub out: PathBuf,
    /// Measure only this sample (repeatable).
    #[arg(long = "sample", value_name = "NAME")]
    pub samples: Vec<String>,
    /// Time exactly this many interleaved pairs per sample instead of the suite's rule.
    #[arg(long)]
    pub pairs: Option<usize>,
}

/// Runs the suite and writes its outputs.
pub fn bench(args: &BenchArgs) -> Result<()> {
    let rpt = std::env::current_exe().context("finding the rpt executable")?;
    // The command line as typed (after the program name), so the outputs say how to rerun them.
    let command_line = std::iter::once("rpt".to_string())
        .chain(std::env::args().skip(1))
        .collect::<Vec<_>>()
        .join(" ");
    let options = rpt_bench::Options {
        suite: args.suite.clone(),
        rpt,
        command_line,
        pairs: args.pairs.map(|n| rpt_bench::PairRule {
            min: n,
            max: n,
            spread: f64::INFINITY,
        }),
        only: args.samples.clone(),
    };
    let report = rpt_bench::run(&options, &|line| eprintln!("rpt bench: {line}"))?;
    let written = rpt_bench::write_outputs(&report, &args.out)?;
    let s = &report.summary;
    eprintln!(
        "rpt bench: medians over {} samples: rpt ÷ native i386 {:.2}, ÷ native x86-64 {:.2} (instructions); \
         rpt ÷ qemu-user {:.3} (wall clock)",
        report.samples.len(),
        s.median_ratio_native_i386,
        s.median_ratio_native_x86_64,
        s.median_ratio_qemu
    );
    for path in written {
        eprintln!("  wrote {}", path.display());
    }
    Ok(())
}
