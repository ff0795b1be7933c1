//! Writing a generation and building its binary: the sources, the runtime a host needs, the
//! object cache keys, compiling and linking, and the manifest.
//!
//! A generation's binary is made from its manifest and its `src/` alone ([`compile_and_link`]):
//! `rpt recompile` writes the sources, drafts the manifest and builds from it, and `rpt build`
//! rebuilds an archived generation from its recorded manifest through the same function, so both
//! compile the same units with the same flags and cache keys.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use rpt_api::{CEnvironment, PluginInfo, SourceFile};
use rpt_archive::{FileHash, Manifest, PassEntry, PluginEntry, hash_bytes, hash_files_in};
use rpt_build::{BuildError, CompileJob, CompileReport, ObjectCache, Toolchain};
use rpt_core::{Registry, ResolvedHost};
use rpt_recipe::{LoadedSource, Recipe};

use crate::GenerationError;
use crate::layout::{GenerationDir, INCLUDE_DIRS, OBJECTS_DIR, OVERRIDES_DIR, SOURCES_DIR, binary_path};

/// The C runtime files a host needs, at paths relative to `src/`: the runtime with its C-library
/// part, or for a host without a C library the runtime without it and the host's shim instead.
pub fn runtime_files(environment: &CEnvironment) -> Vec<SourceFile> {
    match environment {
        CEnvironment::Libc => rpt_runtime::sources(),
        CEnvironment::Freestanding { shim } => {
            let mut files = rpt_runtime::freestanding_sources();
            files.extend(shim.iter().cloned());
            files
        }
    }
}

/// The part of every object's cache key beyond its own text: the headers it may include (path
/// relative to `src/` and sha256, in path order), the emitter and runtime hashes and the plugins,
/// all as the manifest records them. A recompile and a rebuild of one generation give the same
/// keys, so a rebuild reuses cached objects.
pub fn object_key_extra(manifest: &Manifest) -> String {
    let mut key = String::new();
    let source_prefix = format!("{SOURCES_DIR}/");
    for file in manifest.files.iter().filter(|f| f.path.ends_with(".h")) {
        if let Some(path) = file.path.strip_prefix(&source_prefix) {
            key.push_str(&format!("{path}={}\n", file.sha256));
        }
    }
    key.push_str(&format!(
        "emitter={}\nruntime={}\n",
        manifest.emitter_hash, manifest.runtime_hash
    ));
    for p in &manifest.plugins {
        key.push_str(&format!("{}:{}={}\n", p.kind, p.name, p.hash));
    }
    key
}

/// What a build reports while it runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BuildEvent<'a> {
    /// Another process is writing this generation; the build waits for it.
    WaitingForLock(&'a Path),
    /// `done` of `total` objects are compiled or taken from the cache.
    Compiling {
        /// Objects finished.
        done: usize,
        /// Objects in all.
        total: usize,
    },
}

/// A binary built from a generation's sources.
#[derive(Clone, Debug)]
pub struct Linked {
    /// The binary.
    pub binary: PathBuf,
    /// What compiling did (objects compiled and reused, warnings).
    pub report: CompileReport,
    /// Wall time compiling.
    pub compile_time: Duration,
    /// Wall time linking.
    pub link_time: Duration,
}

/// Compiles the compile units `manifest` names, from the generation `sources` (its directory), with
/// its include directories and cache keys, into `out/obj/`, and links them in order into
/// `out/<binary>`. `out` is the generation itself when recompiling, another directory when
/// rebuilding. The toolchain carries the flags (the host's when recompiling, the manifest's when
/// rebuilding).
pub fn compile_and_link(
    manifest: &Manifest,
    sources: &Path,
    out: &Path,
    toolchain: &Toolchain,
    cache: &ObjectCache,
    events: &(dyn Fn(BuildEvent<'_>) + Sync),
) -> Result<Linked, GenerationError> {
    let key_extra = object_key_extra(manifest);
    let source_prefix = format!("{SOURCES_DIR}/");
    let jobs: Vec<CompileJob> = manifest
        .compile_units
        .iter()
        .map(|unit| CompileJob {
            name: unit.strip_prefix(&source_prefix).unwrap_or(unit).to_string(),
            source: sources.join(unit),
            key_extra: key_extra.clone(),
        })
        .collect();
    let include_dirs: Vec<PathBuf> = manifest.include_dirs.iter().map(|d| sources.join(d)).collect();
    let total = jobs.len();
    let done = AtomicUsize::new(0);
    events(BuildEvent::Compiling { done: 0, total });
    let compile_started = Instant::now();
    let report = rpt_build::compile_all(toolchain, cache, &jobs, &include_dirs, &out.join(OBJECTS_DIR), &|_| {
        let done = done.fetch_add(1, Ordering::Relaxed) + 1;
        events(BuildEvent::Compiling { done, total });
    })?;
    let compile_time = compile_started.elapsed();
    let link_started = Instant::now();
    let binary = out.join(&manifest.binary);
    rpt_build::link(toolchain, &report.objects, &binary)?;
    Ok(Linked {
        binary,
        report,
        compile_time,
        link_time: link_started.elapsed(),
    })
}

/// Everything a new generation is made of.
pub struct NewGeneration<'a> {
    /// Where it goes.
    pub dir: &'a GenerationDir,
    /// The effective recipe it is built from.
    pub recipe: &'a Recipe,
    /// The recipe's host, resolved.
    pub host: &'a ResolvedHost,
    /// The plugins, for the manifest's plugin list.
    pub registry: &'a Registry,
    /// What the core generated.
    pub generated: &'a rpt_core::Generation,
    /// The recipe's own C files, read and checked.
    pub recipe_sources: &'a [LoadedSource],
    /// The run-time tier's coverage file the effective recipe's coverage entries came from.
    pub tier_coverage: Option<&'a crate::TierCoverage>,
}

/// A generation written and built.
#[derive(Clone, Debug)]
pub struct Built {
    /// Its manifest, as written.
    pub manifest: Manifest,
    /// The binary and what building it did.
    pub linked: Linked,
}

/// Writes a generation's `src/` afresh (so no file of an earlier run lingers), compiles and links
/// it through `cache`, and writes its manifest. Two processes building one generation take turns:
/// the second waits for the first (and hears [`BuildEvent::WaitingForLock`]).
pub fn build(
    new: &NewGeneration<'_>,
    cache: &ObjectCache,
    events: &(dyn Fn(BuildEvent<'_>) + Sync),
) -> Result<Built, GenerationError> {
    let dir = new.dir.path();
    let _lock = lock(dir, events)?;
    let compile_units = write_sources(new)?;
    let toolchain = Toolchain::probe(new.host.compiler.clone())?;
    let mut manifest = draft_manifest(new, &toolchain, compile_units)?;
    let linked = compile_and_link(&manifest, dir, dir, &toolchain, cache, events).map_err(|e| match e {
        // On a host without a C library, an undefined symbol is nearly always a platform function
        // that needs one (msvcrt's `sin` on LoongArch64): say so before the linker's list.
        GenerationError::Build(source @ BuildError::Link { .. })
            if matches!(new.host.environment, CEnvironment::Freestanding { .. })
                && source.to_string().contains("undefined symbol") =>
        {
            GenerationError::NeedsCLibrary {
                host: new.recipe.host.clone(),
                platform: new.recipe.platform.clone(),
                source,
            }
        }
        e => e,
    })?;
    let binary =
        fs::read(&linked.binary).map_err(GenerationError::io(format!("reading {}", linked.binary.display())))?;
    manifest.files.push(FileHash {
        path: manifest.binary.clone(),
        sha256: hash_bytes(&binary),
    });
    manifest.files.sort_by(|a, b| a.path.cmp(&b.path));
    manifest.write(dir)?;
    Ok(Built { manifest, linked })
}

/// Holds an exclusive lock on the generation directory itself (flock on its descriptor, so no lock
/// file appears among the generations or in the generation's hashed files), waiting while another
/// rpt holds it. Dropping the file (or ending the process) releases it.
fn lock(dir: &Path, events: &(dyn Fn(BuildEvent<'_>) + Sync)) -> Result<fs::File, GenerationError> {
    fs::create_dir_all(dir).map_err(GenerationError::io(format!("creating {}", dir.display())))?;
    let file = fs::File::open(dir).map_err(GenerationError::io(format!("opening {}", dir.display())))?;
    match file.try_lock() {
        Ok(()) => {}
        Err(fs::TryLockError::WouldBlock) => {
            events(BuildEvent::WaitingForLock(dir));
            file.lock()
                .map_err(GenerationError::io(format!("locking {}", dir.display())))?;
        }
        Err(fs::TryLockError::Error(source)) => {
            return Err(GenerationError::Io {
                what: format!("locking {}", dir.display()),
                source,
            });
        }
    }
    Ok(file)
}

fn write_file(path: &Path, contents: &[u8]) -> Result<(), GenerationError> {
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).map_err(GenerationError::io(format!("creating {}", parent.display())))?;
    }
    fs::write(path, contents).map_err(GenerationError::io(format!("writing {}", path.display())))
}

/// Writes `src/` from scratch: what the core generated, the runtime the host needs, the recipe's
/// own C files in `src/overrides/`. Returns the compile units relative to `src/`, in link order.
fn write_sources(new: &NewGeneration<'_>) -> Result<Vec<String>, GenerationError> {
    let src = new.dir.sources();
    if src.exists() {
        fs::remove_dir_all(&src).map_err(GenerationError::io(format!("clearing {}", src.display())))?;
    }
    let runtime = runtime_files(&new.host.environment);
    let generated = new.generated.files.iter().map(|f| (&f.path, &f.contents));
    for (path, contents) in generated.chain(runtime.iter().map(|f| (&f.path, &f.contents))) {
        write_file(&src.join(path), contents.as_bytes())?;
    }
    let mut units = new.generated.compile_units.clone();
    units.extend(
        runtime
            .iter()
            .filter(|f| f.path.ends_with(".c"))
            .map(|f| f.path.clone()),
    );
    for source in new.recipe_sources {
        let path = format!("{OVERRIDES_DIR}/{}", source.name);
        write_file(&src.join(&path), &source.contents)?;
        if path.ends_with(".c") {
            units.push(path);
        }
    }
    Ok(units)
}

/// The manifest of a generation whose sources are written and whose binary is not built yet: every
/// field but the binary's hash.
fn draft_manifest(
    new: &NewGeneration<'_>,
    toolchain: &Toolchain,
    compile_units: Vec<String>,
) -> Result<Manifest, GenerationError> {
    let recipe = new.recipe;
    let mut plugins = Vec::new();
    let plugin = |kind: &str, info: PluginInfo| PluginEntry {
        kind: kind.into(),
        name: info.name,
        version: info.version,
        hash: info.hash,
    };
    if let Some(guest) = new.registry.guest(&recipe.guest) {
        plugins.push(plugin("guest", guest.info()));
    }
    plugins.push(plugin("host", new.host.plugin.info()));
    let mut passes = Vec::new();
    for config in rpt_core::pipeline(recipe, Some(new.host.plugin.as_ref()))
        .iter()
        .filter(|p| p.enabled)
    {
        if let Some(pass) = new.registry.pass(&config.name) {
            plugins.push(plugin("pass", pass.info()));
        }
        passes.push(PassEntry {
            name: config.name.clone(),
            params: config.params.iter().map(|(k, v)| format!("{k}={v:?}")).collect(),
        });
    }
    plugins.sort_by(|a, b| (&a.kind, &a.name).cmp(&(&b.kind, &b.name)));
    let settings = toolchain.settings();
    Ok(Manifest {
        recipe: new.dir.recipe_name().to_string(),
        recipe_digest: rpt_recipe::digest(recipe, &recipe.image_sha256),
        image_sha256: recipe.image_sha256.clone(),
        host: recipe.host.clone(),
        // Every rpt crate has the workspace's version, so this crate's is rpt's.
        rpt_version: env!("CARGO_PKG_VERSION").to_string(),
        emitter_hash: rpt_emit_c::EMITTER_HASH.to_string(),
        runtime_hash: rpt_runtime::RUNTIME_HASH.to_string(),
        compiler: toolchain.identity().to_string(),
        cflags: settings.cflags.clone(),
        ldflags: settings.ldflags.clone(),
        plugins,
        passes,
        pass_reports: new.generated.pass_reports.clone(),
        fault_sites: new
            .generated
            .fault_sites
            .iter()
            .map(|d| format!("{}: {}", d.addr, d.message))
            .collect(),
        stubbed_imports: new
            .generated
            .missing_imports
            .iter()
            .map(|(_, name)| name.clone())
            .collect(),
        tier_coverage_sha256: new.tier_coverage.map(|c| c.sha256.clone()),
        recipe_form: rpt_recipe::canonical_form(recipe, &recipe.image_sha256)
            .lines()
            .map(str::to_string)
            .collect(),
        compile_units: compile_units.iter().map(|u| format!("{SOURCES_DIR}/{u}")).collect(),
        include_dirs: INCLUDE_DIRS.iter().map(|d| d.to_string()).collect(),
        binary: binary_path(new.dir.recipe_name()),
        // The sources as written; the binary's hash joins them once it is linked.
        files: hash_files_in(new.dir.path(), SOURCES_DIR)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_host_without_a_c_library_gets_the_runtime_without_its_c_library_part_and_its_shim() {
        let libc: Vec<String> = runtime_files(&CEnvironment::Libc).into_iter().map(|f| f.path).collect();
        assert!(libc.contains(&rpt_runtime::LIBC_HOST_PART_PATH.to_string()), "{libc:?}");
        let shim = SourceFile {
            path: "host/start.c".into(),
            contents: "void _start(void) {}\n".into(),
        };
        let freestanding: Vec<String> = runtime_files(&CEnvironment::Freestanding { shim: vec![shim] })
            .into_iter()
            .map(|f| f.path)
            .collect();
        assert!(!freestanding.contains(&rpt_runtime::LIBC_HOST_PART_PATH.to_string()));
        assert_eq!(freestanding.last().map(String::as_str), Some("host/start.c"));
    }

    #[test]
    fn object_keys_cover_the_headers_under_src_the_emitter_runtime_and_plugins() {
        let file = |path: &str, sha256: &str| FileHash {
            path: path.into(),
            sha256: sha256.into(),
        };
        let manifest = Manifest {
            recipe: "demo".into(),
            recipe_digest: "d".into(),
            image_sha256: "i".into(),
            host: "x86-64".into(),
            rpt_version: "0".into(),
            emitter_hash: "e".into(),
            runtime_hash: "r".into(),
            compiler: "cc".into(),
            cflags: vec![],
            ldflags: vec![],
            plugins: vec![PluginEntry {
                kind: "guest".into(),
                name: "x86-pe".into(),
                version: "1".into(),
                hash: "g".into(),
            }],
            passes: vec![],
            pass_reports: Default::default(),
            fault_sites: vec![],
            stubbed_imports: vec![],
            tier_coverage_sha256: None,
            recipe_form: vec![],
            compile_units: vec!["src/a.c".into()],
            include_dirs: vec!["src".into()],
            binary: "bin/demo".into(),
            files: vec![
                file("bin/demo", "b"),
                file("src/a.c", "a"),
                file("src/cpu.h", "c"),
                file("src/runtime/rpt_runtime.h", "h"),
            ],
        };
        // The exact text matters: it is part of every cached object's key.
        assert_eq!(
            object_key_extra(&manifest),
            "cpu.h=c\nruntime/rpt_runtime.h=h\nemitter=e\nruntime=r\nguest:x86-pe=g\n"
        );
    }
}
