//! The `rpt` command: recompile a recipe, run the result, archive and rebuild generations.
//!
//! rpt's own messages go to standard error; a guest's standard output and exit
//! status pass through `rpt run` untouched.

mod archive;
mod bench;
mod builtin;
mod hosts;
mod init_pass;
mod plugins;
mod progress;
mod rebuild;
mod recompile;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

/// Plugins with rpt's layout key grow and free rpt's vectors (rpt-api's `abi/shared.rs`), and
/// their export macros declare `System` as their allocator; rpt must allocate from the same heap,
/// so it says so here rather than leaving it to the default (a second declaration is an error).
#[global_allocator]
static ALLOCATOR: std::alloc::System = std::alloc::System;

/// rpt — static recompilation of x86, PowerPC and 65816 programs into C.
#[derive(Parser)]
#[command(name = "rpt", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// When to draw progress bars.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ProgressMode {
    /// Only when standard error is a terminal and CI is not set.
    Auto,
    /// Always.
    Always,
    /// Never.
    Never,
}

/// Options shared by the commands that recompile.
#[derive(clap::Args, Clone, Debug)]
pub struct RecompileArgs {
    /// The recipe (a .ron file).
    pub recipe: PathBuf,
    /// Build for this host instead of the recipe's (`rpt hosts` lists them).
    #[arg(long)]
    pub host: Option<String>,
    /// Build for this CPU model of the host instead of the recipe's or the host's default.
    #[arg(long)]
    pub host_cpu: Option<String>,
    /// Where generations go (default: `gen/` beside the recipe's `recipes/` folder).
    #[arg(long)]
    pub gen_dir: Option<PathBuf>,
    /// Where compiled objects are cached (default: $RPT_CACHE_DIR, else ~/.cache/rpt).
    #[arg(long)]
    pub cache_dir: Option<PathBuf>,
    /// Progress bars.
    #[arg(long, value_enum, default_value_t = ProgressMode::Auto)]
    pub progress: ProgressMode,
    /// Run these passes instead of the recipe's (comma-separated, in order; an empty list runs
    /// none), as if the recipe listed them without parameters. The generation's digest follows.
    #[arg(long, value_delimiter = ',')]
    pub passes: Option<Vec<String>>,
    /// Print the passes' reports (such as the flag-ABI audit), which the manifest also records.
    #[arg(long)]
    pub report: bool,
    /// Write what the recompile cost and produced (times, functions, binary) to this RON file
    /// (`rpt bench` reads it).
    #[arg(long, value_name = "FILE")]
    pub stats: Option<PathBuf>,
}

#[derive(Subcommand)]
enum Command {
    /// Lift, optimise, emit C, compile and link a recipe's guest program.
    Recompile {
        #[command(flatten)]
        args: RecompileArgs,
    },
    /// Convert a file into the image format a guest loads, as the guest knows how (the PowerPC
    /// guest turns an ELF linked at GameCube addresses into a DOL).
    ConvertImage {
        /// The guest whose image format to write (`rpt convert-image ppc-dol prog.elf prog.dol`).
        guest: String,
        /// The file to convert.
        input: PathBuf,
        /// The image to write.
        output: PathBuf,
    },
    /// Recompile if needed, then run the result with the given arguments.
    Run {
        #[command(flatten)]
        args: RecompileArgs,
        /// Arguments for the guest program (after `--`).
        #[arg(last = true)]
        guest_args: Vec<String>,
    },
    /// List the hosts, their CPU models with L1I geometry, and whether this machine can build for
    /// and run each (scripts/host-matrix.sh runs every sample on every host).
    Hosts,
    /// Copy a generation into archive/<recipe>/vN and make it the current version.
    Promote(archive::PromoteArgs),
    /// Move archive/<recipe>/CURRENT back (or to --to vK) without deleting anything.
    Rollback(archive::RollbackArgs),
    /// The archive: list, show, verify, diff and gc.
    Archive(archive::ArchiveArgs),
    /// Rebuild a generation (archive/<recipe>/vN) from its own sources and check the binary.
    Build(rebuild::BuildArgs),
    /// Measure recompiled samples against native builds and qemu-user, and write the table, JSON
    /// and chart (`rpt bench --suite bench/suite.ron --out docs/benchmarks`).
    Bench(bench::BenchArgs),
    /// Create a new pass plugin crate from the template (passes/example-plugin/README.md explains
    /// how to build, test and load it).
    InitPass(init_pass::InitPassArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // A plugin method that cannot return an error (a guest's `lift`) unwinds when the plugin
    // fails; the unwind stops here and the fault it recorded names the plugin.
    let result = match std::panic::catch_unwind(|| execute(cli.command)) {
        Ok(result) => result,
        Err(payload) => match rpt_api::abi::take_fault() {
            Some(fault) => Err(anyhow::Error::new(fault)),
            None => std::panic::resume_unwind(payload),
        },
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("rpt: error: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn execute(command: Command) -> anyhow::Result<ExitCode> {
    match command {
        Command::Recompile { args } => recompile::recompile(&args).map(|_| ExitCode::SUCCESS),
        Command::Run { args, guest_args } => recompile::run(&args, &guest_args),
        Command::ConvertImage { guest, input, output } => {
            convert_image(&guest, &input, &output).map(|_| ExitCode::SUCCESS)
        }
        Command::Hosts => {
            print!("{}", hosts::listing());
            Ok(ExitCode::SUCCESS)
        }
        Command::Promote(args) => archive::promote(&args),
        Command::Rollback(args) => archive::rollback(&args),
        Command::Archive(args) => archive::archive(&args),
        Command::Build(args) => rebuild::build(&args),
        Command::Bench(args) => bench::bench(&args).map(|_| ExitCode::SUCCESS),
        Command::InitPass(args) => init_pass::init_pass(&args).map(|_| ExitCode::SUCCESS),
    }
}

/// `rpt convert-image`: reads a file, lets the guest convert it, writes the image.
fn convert_image(guest: &str, input: &std::path::Path, output: &std::path::Path) -> anyhow::Result<()> {
    use anyhow::Context;
    let registry = builtin::registry();
    let plugin = registry
        .guest(guest)
        .ok_or_else(|| anyhow::anyhow!("unknown guest `{guest}` (known: {})", registry.guest_names().join(", ")))?;
    let bytes = std::fs::read(input).with_context(|| format!("reading {}", input.display()))?;
    let image = plugin
        .convert_image(&bytes)
        .with_context(|| format!("converting {} for the {guest} guest", input.display()))?;
    std::fs::write(output, image).with_context(|| format!("writing {}", output.display()))?;
    Ok(())
}
