//! `rpt recompile` and `rpt run`: the pipeline from recipe to a running binary.
//!
//! This file orchestrates and prints: the recipe and its plugins are loaded, the command line's
//! choices applied (`rpt_generation::effective_recipe`), the core generates the C, and
//! `rpt_generation::build` writes, compiles and links the generation and records its manifest.

use std::fs;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use rpt_api::{HostPlugin, Purpose};
use rpt_build::ObjectCache;
use rpt_core::{RptDb, Session};
use rpt_generation::{BuildEvent, GenerationDir, NewGeneration};

use crate::progress::Bars;
use crate::{RecompileArgs, builtin, plugins};

/// What a recompile produced.
pub struct Recompiled {
    /// The linked binary.
    pub binary: std::path::PathBuf,
    /// The host it runs on.
    pub host: Arc<dyn HostPlugin>,
    /// Where the program records its entries into the run-time tier (`RPT_TIER_COVERAGE`).
    pub tier_coverage: std::path::PathBuf,
}

fn format_duration(d: Duration) -> String {
    if d.as_secs_f64() >= 1.0 {
        format!("{:.2}s", d.as_secs_f64())
    } else {
        format!("{}ms", d.as_millis())
    }
}

/// Runs the whole pipeline for a recipe and leaves a linked binary in its generation directory.
pub fn recompile(args: &RecompileArgs) -> Result<Recompiled> {
    let recipe_path = &args.recipe;
    let loaded = rpt_recipe::load(recipe_path)?;
    let name = rpt_generation::recipe_name(recipe_path)?;
    let cache_dir = args.cache.dir();
    let mut registry = builtin::registry();
    plugins::load_into(
        recipe_path,
        &loaded.recipe.plugins,
        &plugins::target_dir(&cache_dir),
        &mut registry,
    )?;
    let gen_root = args.gen_dir.root(recipe_path);
    let (effective, coverage) =
        rpt_generation::effective_recipe_with_coverage(loaded.recipe.clone(), &args.selection, &gen_root, recipe_path)?;
    let recipe = &effective.recipe;
    if let Some(own_host) = &effective.dropped_settings_of {
        eprintln!(
            "rpt: note: --host {} replaces the recipe's host `{own_host}`, so its host_cpu and l1i do not apply",
            recipe.host
        );
    }
    let host = effective.resolve_host(&registry, recipe_path)?;
    rpt_build::check_requirements(&recipe.host, &host.plugin.requirements(), Purpose::Build)?;

    let db = RptDb::new(registry.clone());
    let listing_name = format!("{name}.lst");
    let session = Session::new(&db, recipe.clone(), Arc::from(loaded.image.clone()), listing_name);
    let bars = Bars::new(args.progress);
    let generated = rpt_core::generate(&db, session, &|stage, done, total| {
        bars.update(stage.name(), done, total)
    })
    .with_context(|| recipe_path.display().to_string())?;

    let dir = GenerationDir::new(&gen_root, &name, recipe);
    let cache = ObjectCache::open(cache_dir)?;
    let new = NewGeneration {
        dir: &dir,
        recipe,
        host: &host,
        registry: &registry,
        generated: &generated,
        recipe_sources: &loaded.c_sources,
        tier_coverage: coverage.as_ref(),
    };
    let built = rpt_generation::build(&new, &cache, &|event| match event {
        // Two rpt runs of one recipe into one gen/ would rewrite the same files; the second waits.
        BuildEvent::WaitingForLock(dir) => eprintln!("rpt: waiting for another rpt writing {}", dir.display()),
        BuildEvent::Compiling { done, total } => bars.update("compile", done, total),
    })?;
    let linked = &built.linked;
    bars.clear();
    // Generated code, the runtime and the shims are meant to compile warning-free with -Wall on
    // every host; a warning is rpt's bug, so it is shown rather than hidden.
    for warning in &linked.report.warnings {
        eprintln!("rpt: warning: the C compiler warned about generated code (a bug in rpt, please report it):");
        eprintln!("{warning}");
    }

    let stats = &generated.stats;
    if let Some(path) = &args.stats {
        let written = rpt_bench::RecompileStats {
            gen_dir: dir.path().to_path_buf(),
            binary: linked.binary.clone(),
            functions: stats.functions,
            generate_seconds: stats.timings.iter().map(|(_, d)| d.as_secs_f64()).sum(),
            compile_seconds: linked.compile_time.as_secs_f64(),
            link_seconds: linked.link_time.as_secs_f64(),
        };
        write_file(path, written.to_ron().as_bytes())?;
    }
    eprintln!(
        "rpt: recompiled {} for {} ({}, L1I {})",
        recipe_path.display(),
        recipe.host,
        host.desc.cpu,
        host.desc.l1i
    );
    eprintln!("  passes: {}", describe_pipeline(recipe, &host));
    eprintln!("  functions lifted: {}, shards: {}", stats.functions, stats.shards);
    eprintln!(
        "  objects: {} compiled, {} reused",
        linked.report.compiled, linked.report.reused
    );
    let mut times: Vec<String> = stats
        .timings
        .iter()
        .map(|(stage, d)| format!("{} {}", stage.name(), format_duration(*d)))
        .collect();
    times.push(format!("compile {}", format_duration(linked.compile_time)));
    times.push(format!("link {}", format_duration(linked.link_time)));
    eprintln!("  time: {}", times.join(", "));
    eprintln!("  generation: {}", dir.path().display());
    if let Some(coverage) = &coverage {
        eprintln!(
            "  run-time tier coverage: {} entries from {}, {} of them new to discovery",
            coverage.entries.len(),
            coverage.path.display(),
            generated.stats.coverage_new
        );
    }
    for note in &generated.notes {
        eprintln!("  note at {:#010x}: {}", note.addr.0, note.message);
    }
    if !generated.fault_sites.is_empty() {
        let count = generated.fault_sites.len();
        let places = if count == 1 { "place" } else { "places" };
        eprintln!(
            "rpt: warning: {count} {places} of guest code rpt could not lift; each compiles to a guest fault \
             raised only if execution gets there (the recipe's `strict_lifting: true` makes them errors):"
        );
        for site in &generated.fault_sites {
            eprintln!("  at {:#010x}: {}", site.addr.0, site.message);
        }
    }
    if !generated.missing_imports.is_empty() {
        let count = generated.missing_imports.len();
        let imports = if count == 1 { "import" } else { "imports" };
        eprintln!(
            "rpt: warning: the {} platform does not implement {count} {imports} of this image; each is a stub \
             that stops the program if it is called (the recipe's `strict_imports: true` makes them errors):",
            recipe.platform
        );
        for (thunk, name) in &generated.missing_imports {
            if generated.stubbed_by_recipe.contains(thunk) {
                eprintln!("  {name} (returns what the recipe's import_stubs says)");
            } else {
                eprintln!("  {name}");
            }
        }
    }
    if args.report {
        for (pass, report) in &generated.pass_reports {
            eprintln!("  report of pass {pass}:");
            for line in report.lines() {
                eprintln!("    {line}");
            }
        }
    }
    Ok(Recompiled {
        binary: linked.binary.clone(),
        host: host.plugin,
        tier_coverage: rpt_generation::tier_coverage_path(&gen_root, recipe_path, recipe)?,
    })
}

/// Writes `--stats`, creating its folder.
fn write_file(path: &Path, contents: &[u8]) -> Result<()> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;
    }
    fs::write(path, contents).with_context(|| format!("writing {}", path.display()))
}

/// Recompiles, then runs the binary with the guest's arguments; its exit status becomes rpt's.
pub fn run(args: &RecompileArgs, guest_args: &[String]) -> Result<ExitCode> {
    let built = recompile(args)?;
    rpt_build::check_requirements(&built.host.info().name, &built.host.requirements(), Purpose::Run)?;
    // The program records where it entered the run-time tier, for the next recompile.
    if let Some(parent) = built.tier_coverage.parent().filter(|p| !p.as_os_str().is_empty()) {
        fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;
    }
    let coverage = std::path::absolute(&built.tier_coverage)
        .with_context(|| format!("resolving {}", built.tier_coverage.display()))?;
    let env = [("RPT_TIER_COVERAGE", coverage.as_os_str())];
    let status = rpt_build::run(&built.host.runner(), &built.binary, guest_args, &env)?;
    let code = match status.code() {
        Some(code) => code,
        None => {
            // Killed by a signal: report it the way shells do.
            use std::os::unix::process::ExitStatusExt;
            128 + status.signal().unwrap_or(0)
        }
    };
    Ok(ExitCode::from(u8::try_from(code & 0xff).unwrap_or(u8::MAX)))
}

/// The passes the build ran, and whether they are the recipe's own or its host's recommendation.
fn describe_pipeline(recipe: &rpt_recipe::Recipe, host: &rpt_core::ResolvedHost) -> String {
    let names: Vec<String> = rpt_core::pipeline(recipe, Some(host.plugin.as_ref()))
        .into_iter()
        .filter(|p| p.enabled)
        .map(|p| p.name)
        .collect();
    let list = if names.is_empty() {
        "none".to_string()
    } else {
        names.join(", ")
    };
    match recipe.passes {
        Some(_) => list,
        None => format!("{list} (the host's recommended pipeline; the recipe lists none)"),
    }
}
