//! `rpt build DIR`: rebuilds a generation (an archived `archive/<recipe>/vN` or one in `gen/`)
//! from its own sources, with its recorded flags, and checks the binary against the recorded hash.
//!
//! No recipe and no guest image are needed: a generation's `src/` holds everything the binary is
//! made of (the guest image is `src/image.c`). The host plugin named in the manifest supplies only
//! the compiler command; the flags are the manifest's. When the compiler's identity is the one
//! recorded, the rebuilt binary must be byte-identical to the recorded one, else it is an error;
//! with another compiler the binary is built and the difference reported, not judged.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result, anyhow, bail};
use rpt_api::CompilerSettings;
use rpt_archive::{MANIFEST_HASH_FILE, Manifest, hash_bytes, verify_archived, verify_generation};
use rpt_build::{ObjectCache, Toolchain};

use crate::builtin;
use crate::options::CacheDirOption;

/// Options of `rpt build`.
#[derive(clap::Args, Clone, Debug)]
pub struct BuildArgs {
    /// The generation to rebuild: `archive/<recipe>/vN`, or a directory in `gen/`.
    pub generation: PathBuf,
    /// Where objects and the binary go (default: `gen/<recipe>/rebuild-<vN or id>` in the project).
    #[arg(long)]
    pub out: Option<PathBuf>,
    #[command(flatten)]
    pub cache: CacheDirOption,
    /// Compile every object afresh instead of taking it from the cache.
    #[arg(long)]
    pub no_cache: bool,
}

/// Rebuilds the generation and compares the binary with the recorded one.
pub fn build(args: &BuildArgs) -> Result<ExitCode> {
    let dir = &args.generation;
    let manifest = Manifest::read(dir).with_context(|| {
        format!(
            "{} is not a generation (expected archive/<recipe>/vN or gen/<recipe>/<id>)",
            dir.display()
        )
    })?;
    let problems = if dir.join(MANIFEST_HASH_FILE).is_file() {
        verify_archived(dir)?
    } else {
        verify_generation(dir, &|_| false)?
    };
    if !problems.is_empty() {
        let list: Vec<String> = problems.iter().map(|p| format!("\n  {p}")).collect();
        bail!(
            "{}: the generation does not match its manifest, so it cannot be rebuilt:{}",
            dir.display(),
            list.concat()
        );
    }
    if manifest.compile_units.is_empty() || manifest.binary.is_empty() {
        bail!(
            "{}: the manifest names no compile units or binary (it was written by an older rpt); recompile and promote again",
            dir.display()
        );
    }
    let registry = builtin::registry();
    let host = registry.host(&manifest.host).ok_or_else(|| {
        anyhow!(
            "{}: the generation is for host `{}`, which this rpt does not have (known: {})",
            dir.display(),
            manifest.host,
            registry.host_names().join(", ")
        )
    })?;
    let settings = CompilerSettings {
        cc: host.compiler().cc,
        cflags: manifest.cflags.clone(),
        ldflags: manifest.ldflags.clone(),
    };
    let toolchain = Toolchain::probe(settings)?;
    let out = match &args.out {
        Some(out) => out.clone(),
        None => rpt_generation::default_rebuild_dir(dir, &manifest.recipe)
            .ok_or_else(|| anyhow!("{}: say where the rebuild goes with --out", dir.display()))?,
    };
    let fresh_cache;
    let cache_dir = if args.no_cache {
        fresh_cache = tempfile::tempdir().context("creating a temporary object cache")?;
        fresh_cache.path().to_path_buf()
    } else {
        args.cache.dir()
    };
    let cache = ObjectCache::open(cache_dir)?;
    let linked = rpt_generation::compile_and_link(&manifest, dir, &out, &toolchain, &cache, &|_| {})?;
    let binary = &linked.binary;
    let bytes = std::fs::read(binary).with_context(|| format!("reading {}", binary.display()))?;
    let actual = hash_bytes(&bytes);
    let recorded = manifest.file_hash(&manifest.binary).unwrap_or_default().to_string();

    eprintln!("rpt: rebuilt {} into {}", dir.display(), binary.display());
    eprintln!(
        "  objects: {} compiled, {} reused",
        linked.report.compiled, linked.report.reused
    );
    if toolchain.identity() != manifest.compiler {
        eprintln!(
            "  compiler differs: recorded `{}`, here `{}`; the binary was not compared (sha256 {actual})",
            manifest.compiler,
            toolchain.identity()
        );
        return Ok(ExitCode::SUCCESS);
    }
    if actual == recorded {
        eprintln!("  binary sha256 {actual}: identical to the recorded binary");
        Ok(ExitCode::SUCCESS)
    } else {
        bail!(
            "{}: sha256 {actual} differs from the recorded {recorded} ({}) although the compiler is the same; \
             the build is not reproducible",
            binary.display(),
            dir.join(&manifest.binary).display()
        )
    }
}
