//! The `rpt` command: recompile a recipe, run the result, archive and rebuild generations.
//!
//! rpt's own messages go to standard error; a guest's standard output and exit
//! status pass through `rpt run` untouched.

mod archive;
mod bench;
mod builtin;
mod hosts;
mod init_pass;
mod options;
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
    /// The recipe's host, CPU model and passes as this build changes them (`promote` takes the same).
    #[command(flatten)]
    pub selection: rpt_generation::Selection,
    #[command(flatten)]
    pub gen_dir: options::GenDirOption,
    #[command(flatten)]
    pub cache: options::CacheDirOption,
    /// Progress bars.
    #[arg(long, value_enum, default_value_t = ProgressMode::Auto)]
    pub progress: ProgressMode,
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

#[cfg(test)]
mod tests {
    use super::*;

    /// What `rpt <command> demo-x86.ron <flags>` chooses for the recipe's host, CPU model and passes.
    fn selection_of(command: &str, flags: &[&str]) -> rpt_generation::Selection {
        let argv = ["rpt", command, "recipes/demo-x86.ron"]
            .into_iter()
            .chain(flags.iter().copied());
        let cli = Cli::try_parse_from(argv).unwrap_or_else(|e| panic!("rpt {command} {flags:?}: {e}"));
        match cli.command {
            Command::Recompile { args } | Command::Run { args, .. } => args.selection,
            Command::Promote(args) => args.selection,
            _ => panic!("{command} is not a command that names a generation"),
        }
    }

    /// `rpt promote` must look for the very generation `rpt recompile` (and `rpt run`) wrote with the
    /// same flags; with `--host` another host's (issue 15: it once looked for the recipe's digest).
    #[test]
    fn promote_names_the_generation_recompile_and_run_write_under_the_same_flags() {
        let recipe_path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../recipes/demo-x86.ron");
        let text = std::fs::read_to_string(&recipe_path).expect("the demo recipe");
        let recipe = rpt_recipe::parse(&recipe_path, &text).expect("the demo recipe parses");
        let name = |selection: &rpt_generation::Selection| {
            rpt_generation::effective_recipe(recipe.clone(), selection)
                .expect("a valid selection")
                .generation_name()
        };
        let own = name(&rpt_generation::Selection::default());
        let flag_sets: &[&[&str]] = &[
            &[],
            &["--host", "aarch64"],
            &["--host", "loongarch64"],
            &[
                "--host",
                "aarch64",
                "--host-cpu",
                "cortex-a53",
                "--passes",
                "flag-abi,memarg",
            ],
            &["--host-cpu", "znver3"],
            &["--passes", "flag-abi"],
        ];
        for flags in flag_sets {
            let recompiled = name(&selection_of("recompile", flags));
            assert_eq!(name(&selection_of("run", flags)), recompiled, "{flags:?}");
            assert_eq!(name(&selection_of("promote", flags)), recompiled, "{flags:?}");
            let host = flags
                .iter()
                .position(|f| *f == "--host")
                .map_or("x86-64", |i| flags[i + 1]);
            assert!(recompiled.ends_with(&format!("-{host}")), "{recompiled}");
            assert_eq!(recompiled == own, flags.is_empty(), "{flags:?}: {recompiled}");
        }
    }
}
