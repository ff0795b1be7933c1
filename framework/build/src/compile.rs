//! Compiling C files in parallel through the object cache, and linking.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Component, Path, PathBuf};
use std::process::Command;

use rayon::prelude::*;
use sha2::{Digest, Sha256};

use crate::{BuildError, ObjectCache, Toolchain};

/// Flags rpt adds to every compile for reproducibility; the compiler runs in the common
/// root of all sources and include directories and sees only relative paths. Part of the
/// cache key, so changing them invalidates old objects.
const REPRODUCIBLE_FLAGS: &[&str] = &["-fdebug-compilation-dir=."];

/// One C file to compile.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompileJob {
    /// The object's name in the output directory (`shard_03` gives `shard_03.o`).
    pub name: String,
    /// The C source file.
    pub source: PathBuf,
    /// Everything else the object depends on, for the cache key: hashes of the headers the
    /// source includes, and the emitter, runtime and plugin hashes.
    pub key_extra: String,
}

/// What [`compile_all`] did.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct CompileReport {
    /// Jobs that ran the compiler.
    pub compiled: usize,
    /// Jobs whose object came from the cache.
    pub reused: usize,
    /// The objects in the output directory, in job order.
    pub objects: Vec<PathBuf>,
    /// Compiler warnings of the jobs that ran the compiler, in job order (`name: text`).
    pub warnings: Vec<String>,
}

fn absolute(path: &Path) -> Result<PathBuf, BuildError> {
    let abs = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()
            .map_err(BuildError::io("read the current directory"))?
            .join(path)
    };
    // Canonical paths make the common root and the relative paths below well-defined.
    abs.canonicalize()
        .map_err(BuildError::io(format!("find {}", abs.display())))
}

fn common_root(paths: &[&Path]) -> PathBuf {
    let mut root: Option<Vec<Component<'_>>> = None;
    for p in paths {
        let comps: Vec<Component<'_>> = p.components().collect();
        root = Some(match root {
            None => comps,
            Some(r) => r
                .iter()
                .zip(&comps)
                .take_while(|(a, b)| a == b)
                .map(|(a, _)| *a)
                .collect(),
        });
    }
    root.map_or_else(|| PathBuf::from("/"), |c| c.iter().collect())
}

fn relative(path: &Path, root: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    let s = rel.to_string_lossy().replace('\\', "/");
    if s.is_empty() { ".".to_string() } else { s }
}

/// Object names become file names, so keep them to a safe alphabet.
fn object_file_name(name: &str) -> String {
    let safe: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("{safe}.o")
}

/// Hex sha256 of some bytes: the form of every hash in a cache key (for example the hashes
/// of the headers a source includes, which callers put in [`CompileJob::key_extra`]).
pub fn content_hash(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// The cache key of one compile: sha256 over the source text, `key_extra`, the compiler
/// identity, every flag, the target and the paths the compiler sees (relative to the root,
/// as they are recorded in debug information).
pub fn cache_key(
    toolchain: &Toolchain,
    source_text: &[u8],
    key_extra: &str,
    relative_source: &str,
    includes: &[String],
) -> String {
    let settings = toolchain.settings();
    let target = settings
        .cflags
        .iter()
        .find_map(|f| f.strip_prefix("--target="))
        .unwrap_or("host default");
    let mut h = Sha256::new();
    let mut field = |bytes: &[u8]| {
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(bytes);
    };
    field(b"rpt-object-v1");
    field(source_text);
    field(key_extra.as_bytes());
    field(toolchain.identity().as_bytes());
    field(target.as_bytes());
    field(relative_source.as_bytes());
    for flag in settings
        .cflags
        .iter()
        .map(String::as_str)
        .chain(REPRODUCIBLE_FLAGS.iter().copied())
    {
        field(b"flag");
        field(flag.as_bytes());
    }
    for inc in includes {
        field(b"include");
        field(inc.as_bytes());
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

struct Prepared {
    name: String,
    source: PathBuf,
    relative_source: String,
    key: String,
}

enum Outcome {
    Compiled { warnings: String },
    Reused,
}

/// Compiles every job (in parallel) unless the cache already holds its object, then puts
/// the objects into `out_dir` as `<name>.o`. `progress` hears one line per finished job.
///
/// Errors are reported for the first failing job in job order, so the message does not
/// depend on thread timing.
pub fn compile_all(
    toolchain: &Toolchain,
    cache: &ObjectCache,
    jobs: &[CompileJob],
    include_dirs: &[PathBuf],
    out_dir: &Path,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<CompileReport, BuildError> {
    let mut names = BTreeSet::new();
    for job in jobs {
        if !names.insert(object_file_name(&job.name)) {
            return Err(BuildError::DuplicateJob(job.name.clone()));
        }
    }
    fs::create_dir_all(out_dir).map_err(BuildError::io(format!("create {}", out_dir.display())))?;
    let sources: Vec<PathBuf> = jobs.iter().map(|j| absolute(&j.source)).collect::<Result<_, _>>()?;
    let includes: Vec<PathBuf> = include_dirs.iter().map(|d| absolute(d)).collect::<Result<_, _>>()?;
    let mut anchors: Vec<&Path> = sources.iter().filter_map(|s| s.parent()).collect();
    anchors.extend(includes.iter().map(PathBuf::as_path));
    let root = common_root(&anchors);
    let rel_includes: Vec<String> = includes.iter().map(|d| relative(d, &root)).collect();

    let mut prepared = Vec::with_capacity(jobs.len());
    for (job, source) in jobs.iter().zip(sources) {
        let text = fs::read(&source).map_err(BuildError::io(format!("read {}", source.display())))?;
        let relative_source = relative(&source, &root);
        let key = cache_key(toolchain, &text, &job.key_extra, &relative_source, &rel_includes);
        prepared.push(Prepared {
            name: job.name.clone(),
            source,
            relative_source,
            key,
        });
    }

    let results: Vec<Result<Outcome, BuildError>> = prepared
        .par_iter()
        .map(|p| {
            let outcome = compile_one(toolchain, cache, p, &root, &rel_includes)?;
            let cached = cache.object_path(&p.key);
            let dest = out_dir.join(object_file_name(&p.name));
            place(&cached, &dest)?;
            progress(&match outcome {
                Outcome::Compiled { .. } => format!("compiled {}", p.name),
                Outcome::Reused => format!("reused {}", p.name),
            });
            Ok(outcome)
        })
        .collect();

    let mut report = CompileReport::default();
    for (p, result) in prepared.iter().zip(results) {
        match result? {
            Outcome::Compiled { warnings } => {
                report.compiled += 1;
                if !warnings.trim().is_empty() {
                    report.warnings.push(format!("{}: {}", p.name, warnings.trim_end()));
                }
            }
            Outcome::Reused => report.reused += 1,
        }
        report.objects.push(out_dir.join(object_file_name(&p.name)));
    }
    Ok(report)
}

fn compile_one(
    toolchain: &Toolchain,
    cache: &ObjectCache,
    p: &Prepared,
    root: &Path,
    includes: &[String],
) -> Result<Outcome, BuildError> {
    let cached = cache.object_path(&p.key);
    if cached.is_file() {
        return Ok(Outcome::Reused);
    }
    if let Some(dir) = cached.parent() {
        fs::create_dir_all(dir).map_err(BuildError::io(format!("create {}", dir.display())))?;
    }
    let tmp = tempfile::Builder::new()
        .prefix(&p.key)
        .suffix(".o")
        .tempfile_in(cache.tmp_dir())
        .map_err(BuildError::io(format!(
            "create a temporary object in {}",
            cache.tmp_dir().display()
        )))?;
    let settings = toolchain.settings();
    let mut cmd = Command::new(&settings.cc);
    cmd.current_dir(root).args(&settings.cflags).args(REPRODUCIBLE_FLAGS);
    // Paths the compiler makes absolute by itself (there should be none) are mapped back.
    cmd.arg(format!("-ffile-prefix-map={}=.", root.display()));
    for inc in includes {
        cmd.arg(format!("-I{inc}"));
    }
    cmd.arg("-c").arg(&p.relative_source).arg("-o").arg(tmp.path());
    let output = cmd.output().map_err(compiler_failed(settings))?;
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    if !output.status.success() {
        return Err(BuildError::Compile {
            file: p.source.clone(),
            stderr,
        });
    }
    // Another process may have stored the same object meanwhile; the rename replaces it
    // with identical bytes, so either way the cache ends up right.
    tmp.persist(&cached).map_err(|e| BuildError::Io {
        what: format!("store {}", cached.display()),
        source: e.error,
    })?;
    Ok(Outcome::Compiled { warnings: stderr })
}

/// Puts a cached object at `dest`: a hard link where possible (cached objects are never
/// modified), a copy otherwise.
fn place(cached: &Path, dest: &Path) -> Result<(), BuildError> {
    match fs::remove_file(dest) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => {
            return Err(BuildError::Io {
                what: format!("replace {}", dest.display()),
                source: e,
            });
        }
    }
    if fs::hard_link(cached, dest).is_ok() {
        return Ok(());
    }
    fs::copy(cached, dest).map(|_| ()).map_err(BuildError::io(format!(
        "copy {} to {}",
        cached.display(),
        dest.display()
    )))
}

/// Links `objects` into the executable `output` with the host's link flags
/// (written to a temporary file and renamed, so a failed link leaves no partial binary).
pub fn link(toolchain: &Toolchain, objects: &[PathBuf], output: &Path) -> Result<(), BuildError> {
    let dir = match output.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    fs::create_dir_all(&dir).map_err(BuildError::io(format!("create {}", dir.display())))?;
    let tmp = tempfile::Builder::new()
        .prefix(".rpt-link")
        .tempfile_in(&dir)
        .map_err(BuildError::io(format!("create a temporary file in {}", dir.display())))?;
    let settings = toolchain.settings();
    let result = Command::new(&settings.cc)
        .args(objects)
        .arg("-o")
        .arg(tmp.path())
        // After the objects, so libraries named here resolve their references.
        .args(&settings.ldflags)
        .output()
        .map_err(compiler_failed(settings))?;
    if !result.status.success() {
        return Err(BuildError::Link {
            output: output.to_path_buf(),
            stderr: String::from_utf8_lossy(&result.stderr).into_owned(),
        });
    }
    // tempfile creates files 0600; an executable needs its execute bits.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(tmp.path(), fs::Permissions::from_mode(0o755))
            .map_err(BuildError::io(format!("make {} executable", output.display())))?;
    }
    tmp.persist(output).map_err(|e| BuildError::Io {
        what: format!("write {}", output.display()),
        source: e.error,
    })?;
    Ok(())
}

/// What a compiler that could not be started means: missing, or another failure to run it.
fn compiler_failed(settings: &rpt_api::CompilerSettings) -> impl Fn(std::io::Error) -> BuildError + '_ {
    move |e| match e.kind() {
        std::io::ErrorKind::NotFound => BuildError::CompilerMissing {
            cc: settings.cc.clone(),
        },
        _ => BuildError::Run {
            program: settings.cc.clone(),
            source: e,
        },
    }
}
