//! `rpt bench`: parses its arguments, lets `rpt_bench` measure, prints progress and the results.
//!
//! Two forms: a suite (`rpt bench --suite bench/suite.ron --out docs/benchmarks`), or one recipe
//! against another of its generations (`rpt bench RECIPE --vs gen:ID`).

use std::path::PathBuf;

use anyhow::{Context, Result, bail};

use crate::options::{CacheDirOption, GenDirOption};
use crate::{ProgressMode, RecompileArgs, recompile};

/// Arguments of `rpt bench`.
#[derive(clap::Args, Debug)]
pub struct BenchArgs {
    /// Compare this recipe's generation as it is now with `--vs` (instead of running a suite).
    #[arg(requires = "vs")]
    pub recipe: Option<PathBuf>,
    /// The other generation: `gen:ID` (a directory name in gen/<recipe>/ or a unique prefix) or a
    /// generation directory's path.
    #[arg(long, value_name = "gen:ID", requires = "recipe")]
    pub vs: Option<String>,
    /// What both programs read on standard input (with RECIPE --vs).
    #[arg(long, value_name = "TEXT", default_value = "", requires = "recipe")]
    pub input: String,
    #[command(flatten)]
    pub gen_dir: GenDirOption,
    /// The suite file (samples, configurations, pair rule).
    #[arg(long, default_value = "bench/suite.ron", conflicts_with = "recipe")]
    pub suite: PathBuf,
    /// Where results.md, results.json and ratios.svg go.
    #[arg(long, default_value = "docs/benchmarks", conflicts_with = "recipe")]
    pub out: PathBuf,
    /// Measure only this sample of the suite (repeatable).
    #[arg(long = "sample", value_name = "NAME", conflicts_with = "recipe")]
    pub samples: Vec<String>,
    /// Time exactly this many interleaved pairs instead of the suite's rule (default 6 with --vs).
    #[arg(long)]
    pub pairs: Option<usize>,
    /// Instead of the suite: count each pass configuration's instructions on the samples of this
    /// file and write `passes.md` into `--out` (`rpt bench --pass-table bench/passes.ron`).
    #[arg(long, value_name = "FILE", conflicts_with = "recipe")]
    pub pass_table: Option<PathBuf>,
}

fn exact_pairs(n: usize) -> rpt_bench::PairRule {
    rpt_bench::PairRule {
        min: n,
        max: n,
        spread: f64::INFINITY,
    }
}

/// Runs `rpt bench` in the form its arguments ask for.
pub fn bench(args: &BenchArgs) -> Result<()> {
    match (&args.recipe, &args.vs) {
        (Some(recipe), Some(vs)) => versus(args, recipe, vs),
        (None, None) => match &args.pass_table {
            Some(table) => pass_table(args, table),
            None => suite(args),
        },
        _ => bail!("RECIPE and --vs go together"),
    }
}

/// The command line as typed (after the program name), so the outputs say how to rerun them.
fn command_line() -> String {
    std::iter::once("rpt".to_string())
        .chain(std::env::args().skip(1))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Measures the pass table and writes `passes.md`.
fn pass_table(args: &BenchArgs, table: &std::path::Path) -> Result<()> {
    let rpt = std::env::current_exe().context("finding the rpt executable")?;
    let report = rpt_bench::run_pass_table(table, &rpt, &command_line(), &|line| eprintln!("rpt bench: {line}"))?;
    std::fs::create_dir_all(&args.out).with_context(|| format!("creating {}", args.out.display()))?;
    let path = args.out.join("passes.md");
    std::fs::write(&path, rpt_bench::pass_table_markdown(&report))
        .with_context(|| format!("writing {}", path.display()))?;
    eprintln!("  wrote {}", path.display());
    Ok(())
}

/// Runs the suite and writes its outputs.
fn suite(args: &BenchArgs) -> Result<()> {
    let rpt = std::env::current_exe().context("finding the rpt executable")?;
    let command_line = command_line();
    let options = rpt_bench::Options {
        suite: args.suite.clone(),
        rpt,
        command_line,
        pairs: args.pairs.map(exact_pairs),
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

/// Recompiles the recipe as it is now (A) and sets it against another generation (B).
fn versus(args: &BenchArgs, recipe: &std::path::Path, vs: &str) -> Result<()> {
    let name = rpt_generation::recipe_name(recipe)?;
    let id = vs.strip_prefix("gen:").unwrap_or(vs);
    let other = rpt_generation::named_generation(&args.gen_dir.root(recipe), &name, id)
        .with_context(|| format!("--vs {vs}"))?;
    let binary = rpt_generation::layout::binary_path(&name);
    let b = other.join(&binary);
    if !b.is_file() {
        bail!("--vs {vs}: {} has no binary {binary}", other.display());
    }
    // A is the recipe as written: the recipe's own host, CPU model and passes.
    let built = recompile::recompile(&RecompileArgs {
        recipe: recipe.to_path_buf(),
        selection: Default::default(),
        gen_dir: args.gen_dir.clone(),
        cache: CacheDirOption::default(),
        progress: ProgressMode::Auto,
        report: false,
        stats: None,
    })?;
    if built.host.info().name != "x86-64" {
        bail!("rpt bench measures x86-64 generations (callgrind runs here); this recipe's host is another");
    }
    eprintln!("rpt bench: {} vs {}", built.binary.display(), b.display());
    let c = rpt_bench::compare(
        &built.binary,
        &b,
        args.input.as_bytes(),
        exact_pairs(args.pairs.unwrap_or(6)),
    )?;
    let s = &c.summary;
    println!("A: {} (the recipe as it is now)", c.a.display());
    println!("B: {}", c.b.display());
    println!(
        "instructions (callgrind): A {} B {}  A ÷ B = {:.4}",
        c.a_instructions,
        c.b_instructions,
        c.instruction_ratio()
    );
    println!(
        "wall clock: A ÷ B median {:.3} [IQR {:.3}–{:.3}], A faster in {} and B in {} of {} interleaved pairs",
        s.median_ratio, s.q1_ratio, s.q3_ratio, s.a_faster, s.b_faster, s.pairs
    );
    Ok(())
}
