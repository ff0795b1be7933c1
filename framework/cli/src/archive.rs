//! `rpt promote`, `rpt rollback` and `rpt archive list|show|verify|diff|gc`.
//!
//! Where things are: a recipe `recipes/<name>.ron` has its generations in `gen/<name>/` and its
//! archive in `archive/<name>/`, both beside `recipes/` (`--gen-dir` and `--archive-dir` say
//! otherwise). A generation is named by its directory, `<first 16 hex digits of the recipe
//! digest>-<host>`, which `rpt_generation` alone computes: `promote` takes the same `--host`,
//! `--host-cpu` and `--passes` as `recompile` and finds the generation they made, and
//! `--generation` takes a name, any unique prefix of it, or a path instead.
//!
//! `RPT_TEST_PROMOTE_DELAY_MS` (for tests only) makes promote sleep that long after copying each
//! file, so a test can kill it in the middle of a copy.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::Subcommand;
use rpt_archive::{
    ArchiveLock, LockAttempt, Manifest, RecipeArchive, Version, diff_generations, recipes_in, verify_archived,
};
use rpt_generation::{Selection, manifest_generation_name, recipe_generations, recipe_name};

use crate::options::GenDirOption;

/// Options of `rpt promote`.
#[derive(clap::Args, Clone, Debug)]
pub struct PromoteArgs {
    /// The recipe (a .ron file).
    pub recipe: PathBuf,
    /// The generation to promote: its directory name in gen/<recipe>/ (`<digest16>-<host>`), a unique
    /// prefix of it, or a path. Default: the generation of the recipe as it is now, built with the
    /// same --host, --host-cpu and --passes as `rpt recompile` was given.
    #[arg(long, conflicts_with_all = ["host", "host_cpu", "passes"])]
    pub generation: Option<String>,
    /// The recipe's host, CPU model and passes as the generation was built with them.
    #[command(flatten)]
    pub selection: Selection,
    #[command(flatten)]
    pub gen_dir: GenDirOption,
    /// Where the archive is (default: `archive/` beside the recipe's `recipes/` folder).
    #[arg(long)]
    pub archive_dir: Option<PathBuf>,
}

/// Options of `rpt rollback`.
#[derive(clap::Args, Clone, Debug)]
pub struct RollbackArgs {
    /// The recipe (a .ron file, or just its name).
    pub recipe: PathBuf,
    /// The version to make current (default: the highest one below the current one); a later
    /// version rolls forward.
    #[arg(long)]
    pub to: Option<String>,
    /// Where the archive is (default: `archive/` beside the recipe's `recipes/` folder).
    #[arg(long)]
    pub archive_dir: Option<PathBuf>,
}

/// Options of `rpt archive`.
#[derive(clap::Args, Clone, Debug)]
pub struct ArchiveArgs {
    /// The archive folder (default: `archive` in the current directory).
    #[arg(long, global = true)]
    pub archive_dir: Option<PathBuf>,
    /// The recipe, by name or recipe file; needed when the archive holds several.
    #[arg(long, global = true)]
    pub recipe: Option<String>,
    #[command(subcommand)]
    command: ArchiveCommand,
}

#[derive(Subcommand, Clone, Debug)]
enum ArchiveCommand {
    /// Every version of each recipe, marking the current one.
    List,
    /// What a version was made from: `v3`, `CURRENT`, `<recipe>/v3` or a generation directory.
    Show {
        /// The version.
        version: String,
        /// Also list every file with its hash.
        #[arg(long)]
        files: bool,
    },
    /// Recheck every hash; names each file that is missing, differs or is not in the manifest.
    Verify {
        /// The versions to check (default: all).
        versions: Vec<String>,
    },
    /// What differs between two versions or generations, function by function.
    Diff {
        /// The first: `v1`, `CURRENT`, `<recipe>/v1` or a generation directory.
        a: String,
        /// The second.
        b: String,
        /// Only the summary, without each function's C and IR diff.
        #[arg(long)]
        stat: bool,
    },
    /// Removes what interrupted promotes left behind, and with --gen-dir the generations the
    /// archive already holds; never a promoted version.
    Gc {
        /// Also remove generations in this `gen/` folder whose manifest an archived version has.
        #[arg(long)]
        gen_dir: Option<PathBuf>,
        /// Only say what would be removed.
        #[arg(long)]
        dry_run: bool,
    },
}

/// The archive folder `--archive-dir` names, else the one of the recipe's project.
fn archive_root(chosen: &Option<PathBuf>, recipe_path: &Path) -> PathBuf {
    chosen
        .clone()
        .unwrap_or_else(|| rpt_generation::default_archive_root(recipe_path))
}

/// Takes the archive lock, saying who holds it while waiting.
fn lock(archive: &RecipeArchive) -> Result<ArchiveLock> {
    let mut attempt = ArchiveLock::try_acquire(archive.dir())?;
    // A holder writes its id just after taking the lock; give it a moment so the message can name it.
    for _ in 0..10 {
        match attempt {
            LockAttempt::Held { pid: None, .. } => {
                std::thread::sleep(Duration::from_millis(20));
                attempt = ArchiveLock::try_acquire(archive.dir())?;
            }
            _ => break,
        }
    }
    match attempt {
        LockAttempt::Acquired(lock) => Ok(lock),
        LockAttempt::Held { path, pid } => {
            let holder = pid.map_or_else(|| "another rpt process".to_string(), |pid| format!("rpt process {pid}"));
            eprintln!(
                "rpt: {} is locked by {holder} (lock file {}); waiting for it to finish",
                archive.dir().display(),
                path.display()
            );
            Ok(ArchiveLock::acquire(archive.dir())?)
        }
    }
}

/// The generation `--generation` names, or the one of the recipe as it is now built with the
/// same selection as `rpt recompile` (one function names both, so they cannot disagree).
fn find_generation(args: &PromoteArgs, name: &str) -> Result<PathBuf> {
    let gen_root = args.gen_dir.root(&args.recipe);
    Ok(match &args.generation {
        Some(id) => rpt_generation::named_generation(&gen_root, name, id)?,
        None => rpt_generation::current_generation(&gen_root, &args.recipe, &args.selection)?
            .path()
            .to_path_buf(),
    })
}

/// `rpt promote`.
pub fn promote(args: &PromoteArgs) -> Result<ExitCode> {
    let name = recipe_name(&args.recipe)?;
    let generation = find_generation(args, &name)?;
    let root = archive_root(&args.archive_dir, &args.recipe);
    let archive = RecipeArchive::new(&root, &name);
    let delay = std::env::var("RPT_TEST_PROMOTE_DELAY_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .map(Duration::from_millis);
    let lock = lock(&archive)?;
    let promoted = archive.promote(&lock, &generation, &mut |_| {
        if let Some(delay) = delay {
            std::thread::sleep(delay);
        }
    })?;
    let dir = archive.version_dir(promoted.version);
    eprintln!(
        "rpt: promoted {} to {} ({} files)",
        generation.display(),
        dir.display(),
        promoted.files
    );
    match promoted.previous {
        Some(previous) => eprintln!("  CURRENT: {previous} -> {}", promoted.version),
        None => eprintln!("  CURRENT: {}", promoted.version),
    }
    if let Some(same) = promoted.identical_to {
        eprintln!("  note: {} holds the same generation as {same}", promoted.version);
    }
    Ok(ExitCode::SUCCESS)
}

/// `rpt rollback`.
pub fn rollback(args: &RollbackArgs) -> Result<ExitCode> {
    let name = recipe_name(&args.recipe)?;
    let root = archive_root(&args.archive_dir, &args.recipe);
    let archive = RecipeArchive::new(&root, &name);
    if !archive.dir().is_dir() {
        bail!(
            "{}: no archive of {name} yet (`rpt promote` makes one)",
            archive.dir().display()
        );
    }
    let to = args.to.as_deref().map(str::parse::<Version>).transpose()?;
    let lock = lock(&archive)?;
    let (from, to) = archive.rollback(&lock, to)?;
    let from = from.map_or_else(|| "none".to_string(), |v| v.to_string());
    eprintln!(
        "rpt: {}: CURRENT {from} -> {to} (nothing deleted)",
        archive.dir().display()
    );
    Ok(ExitCode::SUCCESS)
}

/// The recipes an `rpt archive` command is about: the one named, or all there are.
fn recipes(root: &Path, named: &Option<String>) -> Result<Vec<String>> {
    if let Some(named) = named {
        let path = Path::new(named);
        let name = if named.ends_with(".ron") {
            recipe_name(path)?
        } else {
            named.clone()
        };
        return Ok(vec![name]);
    }
    let all = recipes_in(root)?;
    if all.is_empty() {
        bail!(
            "{}: no archive here yet (`rpt promote RECIPE` makes one)",
            root.display()
        );
    }
    Ok(all)
}

/// The one recipe a version reference is about.
fn single_recipe(root: &Path, named: &Option<String>) -> Result<String> {
    let all = recipes(root, named)?;
    match all.as_slice() {
        [one] => Ok(one.clone()),
        many => bail!(
            "{} holds several recipes ({}); name one with --recipe or write <recipe>/vN",
            root.display(),
            many.join(", ")
        ),
    }
}

/// A version reference (`v3`, `CURRENT`, `<recipe>/v3`) or a generation directory, as a directory
/// and a label for output.
fn resolve(root: &Path, named: &Option<String>, text: &str) -> Result<(PathBuf, String)> {
    let as_path = Path::new(text);
    if as_path.join(rpt_archive::MANIFEST_FILE).is_file() {
        return Ok((as_path.to_path_buf(), text.to_string()));
    }
    let (recipe, version) = match text.rsplit_once('/') {
        Some((recipe, version)) => (recipe.to_string(), version),
        None => (single_recipe(root, named)?, text),
    };
    let archive = RecipeArchive::new(root, &recipe);
    let version = archive.resolve(version)?;
    let label = if text.contains('/') {
        format!("{recipe}/{version}")
    } else {
        version.to_string()
    };
    Ok((archive.version_dir(version), label))
}

/// `rpt archive ...`.
pub fn archive(args: &ArchiveArgs) -> Result<ExitCode> {
    let root = args.archive_dir.clone().unwrap_or_else(|| PathBuf::from("archive"));
    match &args.command {
        ArchiveCommand::List => list(&root, &args.recipe),
        ArchiveCommand::Show { version, files } => show(&root, &args.recipe, version, *files),
        ArchiveCommand::Verify { versions } => verify(&root, &args.recipe, versions),
        ArchiveCommand::Diff { a, b, stat } => {
            let (dir_a, label_a) = resolve(&root, &args.recipe, a)?;
            let (dir_b, label_b) = resolve(&root, &args.recipe, b)?;
            let diff = diff_generations(&dir_a, &dir_b, (&label_a, &label_b))?;
            print!("{}", diff.render(!stat));
            Ok(ExitCode::SUCCESS)
        }
        ArchiveCommand::Gc { gen_dir, dry_run } => gc(&root, &args.recipe, gen_dir.as_deref(), *dry_run),
    }
}

fn short(hash: &str) -> &str {
    hash.get(..12).unwrap_or(hash)
}

fn list(root: &Path, named: &Option<String>) -> Result<ExitCode> {
    for name in recipes(root, named)? {
        let archive = RecipeArchive::new(root, &name);
        let current = archive.current()?;
        println!("{name}");
        let versions = archive.versions()?;
        if versions.is_empty() {
            println!("  (no versions)");
        }
        for version in versions {
            let mark = if Some(version) == current { "*" } else { " " };
            let dir = archive.version_dir(version);
            match Manifest::read(&dir) {
                Ok(m) => {
                    let binary = m.file_hash(&m.binary).map(short).unwrap_or("?");
                    let tail = if Some(version) == current { "  CURRENT" } else { "" };
                    println!(
                        "{mark} {:<5} {}  binary {binary}  {} files{tail}",
                        version.to_string(),
                        manifest_generation_name(&m),
                        m.files.len()
                    );
                }
                Err(e) => println!("{mark} {:<5} unreadable manifest: {e}", version.to_string()),
            }
        }
        for leftover in archive.leftovers()? {
            println!(
                "  (left by an interrupted promote: {}; `rpt archive gc` removes it)",
                leftover.display()
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn show(root: &Path, named: &Option<String>, version: &str, files: bool) -> Result<ExitCode> {
    let (dir, label) = resolve(root, named, version)?;
    let m = Manifest::read(&dir)?;
    println!("{label}: {}", dir.display());
    println!("  recipe        {} (digest {})", m.recipe, m.recipe_digest);
    println!("  image sha256  {}", m.image_sha256);
    println!("  host          {}", m.host);
    println!(
        "  rpt           {} (emitter {}, runtime {})",
        m.rpt_version,
        short(&m.emitter_hash),
        short(&m.runtime_hash)
    );
    println!("  compiler      {}", m.compiler);
    println!("  cflags        {}", m.cflags.join(" "));
    println!("  ldflags       {}", m.ldflags.join(" "));
    for p in &m.plugins {
        println!(
            "  plugin        {} {} {} ({})",
            p.kind,
            p.name,
            p.version,
            short(&p.hash)
        );
    }
    if m.passes.is_empty() {
        println!("  passes        none");
    }
    for p in &m.passes {
        println!("  pass          {} {}", p.name, p.params.join(" "));
    }
    for (pass, report) in &m.pass_reports {
        println!("  report of {pass}:");
        for line in report.lines() {
            println!("    {line}");
        }
    }
    println!("  recipe form:");
    for line in &m.recipe_form {
        println!("    {line}");
    }
    println!(
        "  binary        {} (sha256 {})",
        m.binary,
        m.file_hash(&m.binary).unwrap_or("not recorded")
    );
    println!("  files         {}", m.files.len());
    if files {
        for f in &m.files {
            println!("    {}  {}", f.sha256, f.path);
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn verify(root: &Path, named: &Option<String>, versions: &[String]) -> Result<ExitCode> {
    let mut targets: Vec<(PathBuf, String)> = Vec::new();
    let mut bad = 0usize;
    if versions.is_empty() {
        for name in recipes(root, named)? {
            let archive = RecipeArchive::new(root, &name);
            let all = archive.versions()?;
            match archive.current() {
                Ok(Some(current)) if !all.contains(&current) => {
                    println!("{name}: CURRENT names {current}, which does not exist");
                    bad += 1;
                }
                Err(e) => {
                    println!("{name}: {e}");
                    bad += 1;
                }
                _ => {}
            }
            for version in all {
                targets.push((archive.version_dir(version), format!("{name}/{version}")));
            }
        }
    } else {
        for v in versions {
            targets.push(resolve(root, named, v)?);
        }
    }
    for (dir, label) in &targets {
        match verify_archived(dir) {
            Ok(problems) if problems.is_empty() => {
                let files = Manifest::read(dir).map(|m| m.files.len()).unwrap_or(0);
                println!("{label}: ok ({files} files)");
            }
            Ok(problems) => {
                bad += 1;
                println!("{label}: {} problem(s)", problems.len());
                for p in problems {
                    println!("  {p}");
                }
            }
            Err(e) => {
                bad += 1;
                println!("{label}: {e}");
            }
        }
    }
    if bad == 0 {
        Ok(ExitCode::SUCCESS)
    } else {
        eprintln!("rpt: archive verify found problems in {bad} place(s)");
        Ok(ExitCode::from(1))
    }
}

fn gc(root: &Path, named: &Option<String>, gen_dir: Option<&Path>, dry_run: bool) -> Result<ExitCode> {
    let verb = if dry_run { "would remove" } else { "removed" };
    let mut removed = 0;
    for name in recipes(root, named)? {
        let archive = RecipeArchive::new(root, &name);
        let lock = match ArchiveLock::try_acquire(archive.dir())? {
            LockAttempt::Acquired(lock) => lock,
            LockAttempt::Held { pid, .. } => {
                let holder = pid.map_or_else(|| "another rpt process".to_string(), |p| format!("rpt process {p}"));
                println!("{name}: skipped, locked by {holder}");
                continue;
            }
        };
        let leftovers = if dry_run {
            archive.leftovers()?
        } else {
            archive.remove_leftovers(&lock)?
        };
        for path in leftovers {
            println!("{name}: {verb} {} (left by an interrupted promote)", path.display());
            removed += 1;
        }
        if let Some(gen_dir) = gen_dir {
            for (path, version) in archive.archived_generations(&recipe_generations(gen_dir, &name))? {
                if !dry_run {
                    std::fs::remove_dir_all(&path).with_context(|| format!("removing {}", path.display()))?;
                }
                println!("{name}: {verb} {} (archived as {version})", path.display());
                removed += 1;
            }
        }
        let versions = archive.versions()?;
        println!(
            "{name}: kept every promoted version ({})",
            if versions.is_empty() {
                "none".to_string()
            } else {
                versions.iter().map(Version::to_string).collect::<Vec<_>>().join(", ")
            }
        );
    }
    if removed == 0 {
        println!("nothing to remove");
    }
    Ok(ExitCode::SUCCESS)
}
