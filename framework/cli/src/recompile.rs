//! `rpt recompile` and `rpt run`: the pipeline from recipe to a running binary.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use rpt_api::{CEnvironment, HostPlugin, Purpose, SourceFile};
use rpt_archive::{Manifest, PassEntry, PluginEntry, hash_bytes, hash_files};
use rpt_build::{CompileJob, ObjectCache, Toolchain};
use rpt_core::{ResolvedHost, RptDb, Session};

use crate::progress::Bars;
use crate::rebuild::{INCLUDE_DIRS, OVERRIDES_DIR, object_key_extra};
use crate::{RecompileArgs, builtin, plugins};

/// What a recompile produced.
pub struct Recompiled {
    /// The linked binary.
    pub binary: PathBuf,
    /// The host it runs on.
    pub host: Arc<dyn HostPlugin>,
}

/// The project folder of a recipe: recipes normally live in a project's `recipes/` folder, and
/// `gen/` and `archive/` go beside it; a recipe elsewhere counts its own folder as the project.
pub fn project_dir(recipe: &Path) -> PathBuf {
    let dir = recipe.parent().unwrap_or(Path::new(""));
    let project = if dir.file_name().is_some_and(|n| n == "recipes") {
        dir.parent().unwrap_or(Path::new(""))
    } else {
        dir
    };
    project.to_path_buf()
}

/// Where a recipe's generations go unless `--gen-dir` says otherwise.
pub fn default_gen_root(recipe: &Path) -> PathBuf {
    project_dir(recipe).join("gen")
}

fn write_file(path: &Path, contents: &[u8]) -> Result<()> {
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;
    }
    fs::write(path, contents).with_context(|| format!("writing {}", path.display()))
}

fn format_duration(d: Duration) -> String {
    if d.as_secs_f64() >= 1.0 {
        format!("{:.2}s", d.as_secs_f64())
    } else {
        format!("{}ms", d.as_millis())
    }
}

/// Holds an exclusive lock on the generation directory itself (flock on its descriptor, so no
/// lock file appears among the generations or in the generation's hashed files), waiting (and
/// saying so) while another rpt holds it. The lock goes with the process.
fn lock_generation(gen_dir: &Path) -> Result<fs::File> {
    fs::create_dir_all(gen_dir).with_context(|| format!("creating {}", gen_dir.display()))?;
    let dir = fs::File::open(gen_dir).with_context(|| format!("opening {}", gen_dir.display()))?;
    match dir.try_lock() {
        Ok(()) => {}
        Err(fs::TryLockError::WouldBlock) => {
            eprintln!("rpt: waiting for another rpt writing {}", gen_dir.display());
            dir.lock().with_context(|| format!("locking {}", gen_dir.display()))?;
        }
        Err(fs::TryLockError::Error(e)) => {
            return Err(e).with_context(|| format!("locking {}", gen_dir.display()));
        }
    }
    Ok(dir)
}

/// Runs the whole pipeline for a recipe and leaves a linked binary in its generation directory.
pub fn recompile(args: &RecompileArgs) -> Result<Recompiled> {
    let recipe_path = &args.recipe;
    let loaded = rpt_recipe::load(recipe_path)?;
    let recipe = loaded.recipe.clone();
    let name = recipe_path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .ok_or_else(|| anyhow!("{}: a recipe file needs a name", recipe_path.display()))?;
    let cache_dir = args.cache_dir.clone().unwrap_or_else(ObjectCache::default_dir);
    let mut registry = builtin::registry();
    plugins::load_into(
        recipe_path,
        &recipe.plugins,
        &plugins::target_dir(&cache_dir),
        &mut registry,
    )?;
    let recipe = select_passes(recipe, args)?;
    let (recipe, host) = select_host(recipe_path, recipe, args, &registry)?;
    let host_name = recipe.host.clone();
    rpt_build::check_requirements(&host_name, &host.plugin.requirements(), Purpose::Build)?;
    let guest_info = registry.guest(&recipe.guest).map(|g| g.info());

    let db = RptDb::new(registry.clone());
    let listing_name = format!("{name}.lst");
    let session = Session::new(&db, recipe.clone(), Arc::from(loaded.image.clone()), listing_name);
    let bars = Bars::new(args.progress);
    let generation = rpt_core::generate(&db, session, &|stage, done, total| {
        bars.update(stage.name(), done, total)
    })
    .with_context(|| recipe_path.display().to_string())?;

    let digest = rpt_recipe::digest(&recipe, &recipe.image_sha256);
    let gen_root = args.gen_dir.clone().unwrap_or_else(|| default_gen_root(recipe_path));
    let gen_dir = gen_root.join(&name).join(format!("{}-{host_name}", &digest[..16]));
    let src_dir = gen_dir.join("src");
    // Two rpt runs of one recipe into one gen/ would rewrite the same src/, obj/ and bin/ at once;
    // the second waits for the first.
    let _generation_lock = lock_generation(&gen_dir)?;
    // Start from an empty src/ so files of an earlier run (a removed shard) never linger.
    if src_dir.exists() {
        fs::remove_dir_all(&src_dir).with_context(|| format!("clearing {}", src_dir.display()))?;
    }
    // The runtime, and for a host without a C library the shim that stands in for it.
    let runtime_files: Vec<SourceFile> = match &host.environment {
        CEnvironment::Libc => rpt_runtime::sources(),
        CEnvironment::Freestanding { shim } => {
            let mut files = rpt_runtime::freestanding_sources();
            files.extend(shim.iter().cloned());
            files
        }
    };
    for file in &generation.files {
        write_file(&src_dir.join(&file.path), file.contents.as_bytes())?;
    }
    for file in &runtime_files {
        write_file(&src_dir.join(&file.path), file.contents.as_bytes())?;
    }

    // The recipe's own C files (override bodies and their headers) go to src/overrides/.
    let mut override_units = Vec::new();
    for source in &loaded.c_sources {
        let rel = format!("{OVERRIDES_DIR}/{}", source.name);
        write_file(&src_dir.join(&rel), &source.contents)?;
        if rel.ends_with(".c") {
            override_units.push(rel);
        }
    }

    let mut plugins = Vec::new();
    if let Some(info) = &guest_info {
        plugins.push(PluginEntry {
            kind: "guest".into(),
            name: info.name.clone(),
            version: info.version.clone(),
            hash: info.hash.clone(),
        });
    }
    let host_info = host.plugin.info();
    plugins.push(PluginEntry {
        kind: "host".into(),
        name: host_info.name.clone(),
        version: host_info.version.clone(),
        hash: host_info.hash.clone(),
    });
    let mut passes = Vec::new();
    for config in recipe.passes.iter().filter(|p| p.enabled) {
        if let Some(pass) = registry.pass(&config.name) {
            let info = pass.info();
            plugins.push(PluginEntry {
                kind: "pass".into(),
                name: info.name,
                version: info.version,
                hash: info.hash,
            });
        }
        let params = config.params.iter().map(|(k, v)| format!("{k}={v:?}")).collect();
        passes.push(PassEntry {
            name: config.name.clone(),
            params,
        });
    }
    plugins.sort_by(|a, b| (&a.kind, &a.name).cmp(&(&b.kind, &b.name)));

    // Objects depend on every header they may include and on the code that wrote them.
    let mut headers: Vec<(String, String)> = generation
        .files
        .iter()
        .map(|f| (f.path.clone(), hash_bytes(f.contents.as_bytes())))
        .chain(
            runtime_files
                .iter()
                .map(|f| (f.path.clone(), hash_bytes(f.contents.as_bytes()))),
        )
        .chain(
            loaded
                .c_sources
                .iter()
                .map(|s| (format!("{OVERRIDES_DIR}/{}", s.name), hash_bytes(&s.contents))),
        )
        .filter(|(p, _)| p.ends_with(".h"))
        .collect();
    headers.sort();
    let key_extra = object_key_extra(&headers, rpt_emit_c::EMITTER_HASH, rpt_runtime::RUNTIME_HASH, &plugins);

    let settings = host.compiler.clone();
    let toolchain = Toolchain::probe(settings.clone())?;
    let cache = ObjectCache::open(cache_dir)?;
    let mut units: Vec<String> = generation.compile_units.clone();
    units.extend(
        runtime_files
            .iter()
            .filter(|f| f.path.ends_with(".c"))
            .map(|f| f.path.clone()),
    );
    units.extend(override_units);
    let jobs: Vec<CompileJob> = units
        .iter()
        .map(|unit| CompileJob {
            name: unit.clone(),
            source: src_dir.join(unit),
            key_extra: key_extra.clone(),
        })
        .collect();
    let include_dirs: Vec<PathBuf> = INCLUDE_DIRS.iter().map(|d| gen_dir.join(d)).collect();
    let obj_dir = gen_dir.join("obj");
    let compile_started = Instant::now();
    let total = jobs.len();
    let done = std::sync::atomic::AtomicUsize::new(0);
    bars.update("compile", 0, total);
    let report = rpt_build::compile_all(&toolchain, &cache, &jobs, &include_dirs, &obj_dir, &|_| {
        let n = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        bars.update("compile", n, total);
    })?;
    let compile_time = compile_started.elapsed();
    let link_started = Instant::now();
    let binary = gen_dir.join("bin").join(&name);
    if let Some(parent) = binary.parent() {
        fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;
    }
    if let Err(e) = rpt_build::link(&toolchain, &report.objects, &binary) {
        let text = e.to_string();
        let mut err = anyhow::Error::new(e);
        // On a host without a C library, an undefined symbol is nearly always a platform function
        // that needs one (msvcrt's `sin` on LoongArch64): say so before the linker's list.
        if matches!(host.environment, CEnvironment::Freestanding { .. }) && text.contains("undefined symbol") {
            err = err.context(format!(
                "the {host_name} host has no C library, and the program needs functions the {} platform \
                 leaves out there (its documentation lists them)",
                recipe.platform
            ));
        }
        return Err(err);
    }
    let link_time = link_started.elapsed();
    bars.clear();
    // Generated code, the runtime and the shims are meant to compile warning-free with -Wall on
    // every host; a warning is rpt's bug, so it is shown rather than hidden.
    for warning in &report.warnings {
        eprintln!("rpt: warning: the C compiler warned about generated code (a bug in rpt, please report it):");
        eprintln!("{warning}");
    }

    // The manifest hashes sources and binary; objects are a cache, not part of the generation
    // (and neither is anything else an interrupted run may have left in bin/).
    let binary_rel = format!("bin/{name}");
    let files = hash_files(&gen_dir)?
        .into_iter()
        .filter(|f| f.path.starts_with("src/") || f.path == binary_rel)
        .collect();
    let manifest = Manifest {
        recipe: name.clone(),
        recipe_digest: digest,
        image_sha256: recipe.image_sha256.clone(),
        host: host_name.clone(),
        rpt_version: env!("CARGO_PKG_VERSION").to_string(),
        emitter_hash: rpt_emit_c::EMITTER_HASH.to_string(),
        runtime_hash: rpt_runtime::RUNTIME_HASH.to_string(),
        compiler: toolchain.identity().to_string(),
        cflags: settings.cflags.clone(),
        ldflags: settings.ldflags.clone(),
        plugins,
        passes,
        pass_reports: generation.pass_reports.clone(),
        recipe_form: rpt_recipe::canonical_form(&recipe, &recipe.image_sha256)
            .lines()
            .map(str::to_string)
            .collect(),
        compile_units: units.iter().map(|u| format!("src/{u}")).collect(),
        include_dirs: INCLUDE_DIRS.iter().map(|d| d.to_string()).collect(),
        binary: binary_rel,
        files,
    };
    manifest.write(&gen_dir)?;

    let stats = &generation.stats;
    if let Some(path) = &args.stats {
        let written = rpt_bench::RecompileStats {
            gen_dir: gen_dir.clone(),
            binary: binary.clone(),
            guest: recipe.guest.clone(),
            functions: stats.functions,
            generate_seconds: stats.timings.iter().map(|(_, d)| d.as_secs_f64()).sum(),
            compile_seconds: compile_time.as_secs_f64(),
            link_seconds: link_time.as_secs_f64(),
        };
        write_file(path, written.to_ron().as_bytes())?;
    }
    eprintln!(
        "rpt: recompiled {} for {host_name} ({}, L1I {})",
        recipe_path.display(),
        host.desc.cpu,
        host.desc.l1i
    );
    eprintln!("  functions lifted: {}, shards: {}", stats.functions, stats.shards);
    eprintln!("  objects: {} compiled, {} reused", report.compiled, report.reused);
    let mut times: Vec<String> = stats
        .timings
        .iter()
        .map(|(stage, d)| format!("{} {}", stage.name(), format_duration(*d)))
        .collect();
    times.push(format!("compile {}", format_duration(compile_time)));
    times.push(format!("link {}", format_duration(link_time)));
    eprintln!("  time: {}", times.join(", "));
    eprintln!("  generation: {}", gen_dir.display());
    for note in &generation.notes {
        eprintln!("  note at {:#010x}: {}", note.addr.0, note.message);
    }
    if args.report {
        for (pass, report) in &generation.pass_reports {
            eprintln!("  report of pass {pass}:");
            for line in report.lines() {
                eprintln!("    {line}");
            }
        }
    }
    Ok(Recompiled {
        binary,
        host: host.plugin,
    })
}

/// The recipe with `--passes` in place of its own passes, if given.
fn select_passes(mut recipe: rpt_recipe::Recipe, args: &RecompileArgs) -> Result<rpt_recipe::Recipe> {
    let Some(names) = &args.passes else {
        return Ok(recipe);
    };
    let mut seen = std::collections::BTreeSet::new();
    recipe.passes = Vec::new();
    for name in names.iter().map(|n| n.trim()).filter(|n| !n.is_empty()) {
        if !seen.insert(name) {
            bail!("--passes names `{name}` twice");
        }
        recipe.passes.push(rpt_recipe::PassConfig {
            name: name.to_string(),
            enabled: true,
            params: Default::default(),
        });
    }
    Ok(recipe)
}

/// The recipe as this run builds it, and its resolved host.
///
/// `--host` replaces the recipe's host; the recipe's `host_cpu` and `l1i` describe the recipe's own
/// host, so they are dropped (with a note) when `--host` names another. `--host-cpu` sets the model.
/// The digest and the generation directory follow the recipe returned here, so generations for
/// different hosts of one recipe live side by side.
fn select_host(
    recipe_path: &Path,
    mut recipe: rpt_recipe::Recipe,
    args: &RecompileArgs,
    registry: &rpt_core::Registry,
) -> Result<(rpt_recipe::Recipe, ResolvedHost)> {
    // Whether the host and CPU model names come from the recipe, so errors can point at its lines.
    let host_from_recipe = args.host.as_ref().is_none_or(|h| *h == recipe.host);
    let cpu_from_recipe = host_from_recipe && args.host_cpu.is_none();
    if !host_from_recipe && let Some(host) = &args.host {
        if recipe.host_cpu.is_some() || recipe.l1i.is_some() {
            eprintln!(
                "rpt: note: --host {host} replaces the recipe's host `{}`, so its host_cpu and l1i do not apply",
                recipe.host
            );
        }
        recipe.host = host.clone();
        recipe.host_cpu = None;
        recipe.l1i = None;
    }
    if let Some(cpu) = &args.host_cpu {
        recipe.host_cpu = Some(cpu.clone());
    }
    let host = rpt_core::resolve_host(registry, &recipe).map_err(|e| {
        // An unknown name that came from the recipe is reported at its line.
        let field = match &e {
            rpt_core::CoreError::UnknownHost { .. } if host_from_recipe => Some("host"),
            rpt_core::CoreError::UnknownCpuModel { .. } if cpu_from_recipe => Some("host_cpu"),
            _ => None,
        };
        let location = field
            .and_then(|f| {
                fs::read_to_string(recipe_path)
                    .ok()
                    .and_then(|t| rpt_recipe::locate(&t, f))
            })
            .map(|l| format!(":{l}"))
            .unwrap_or_default();
        anyhow!("{}{location}: {e}", recipe_path.display())
    })?;
    Ok((recipe, host))
}

/// Recompiles, then runs the binary with the guest's arguments; its exit status becomes rpt's.
pub fn run(args: &RecompileArgs, guest_args: &[String]) -> Result<ExitCode> {
    let built = recompile(args)?;
    rpt_build::check_requirements(&built.host.info().name, &built.host.requirements(), Purpose::Run)?;
    let status = rpt_build::run(&built.host.runner(), &built.binary, guest_args)?;
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
