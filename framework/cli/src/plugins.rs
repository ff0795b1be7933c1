//! The plugins a recipe names: building plugin crates with cargo and loading plugin libraries.

use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, Result, anyhow, bail};
use cargo_metadata::{Message, MetadataCommand, TargetKind};
use rpt_api::abi::{LoadedPlugin, Transport};
use rpt_core::Registry;
use rpt_recipe::PluginSource;

/// The cargo feature rpt turns on when a plugin crate has it: crates that rpt also links in as
/// built-ins export their plugin only under it.
pub const EXPORT_FEATURE: &str = "export-plugin";

/// The compiler flags of every plugin build. They are the same for every crate, so plugins from
/// different workspaces share their dependencies' builds in the one target directory instead of
/// rebuilding them in turn. No debug info: it is what most often differs between two builds.
pub const PLUGIN_RUSTFLAGS: [&str; 2] = ["-Cdebuginfo=0", "-Cstrip=debuginfo"];

/// Where plugin crates are built unless `RPT_PLUGIN_TARGET_DIR` says otherwise: one target
/// directory for every plugin, so crates that share dependencies build them once.
pub fn target_dir(cache_dir: &Path) -> PathBuf {
    std::env::var_os("RPT_PLUGIN_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| cache_dir.join("plugin-target"))
}

/// Builds or finds each of the recipe's plugins, loads it and adds it to `registry`, where it
/// replaces a built-in of the same name. Errors name the recipe and the plugin's entry.
pub fn load_into(
    recipe_path: &Path,
    plugins: &[PluginSource],
    target_dir: &Path,
    registry: &mut Registry,
) -> Result<()> {
    let base = recipe_path.parent().unwrap_or(Path::new(""));
    for (index, source) in plugins.iter().enumerate() {
        let entry = format!("{}: plugins[{index}]", recipe_path.display());
        let library = match (&source.crate_dir, &source.library) {
            (Some(dir), _) => build_crate(&base.join(dir), target_dir).with_context(|| entry.clone())?,
            (None, Some(library)) => base.join(library),
            // Validation makes sure one of the two is given.
            (None, None) => bail!("{entry}: neither a crate nor a library"),
        };
        let wanted = rpt_api::abi::wanted_transport()?;
        let (plugin, transport) = rpt_api::abi::load_with(&library, wanted).with_context(|| entry.clone())?;
        let info = plugin.info();
        let how = match (&plugin, transport) {
            (LoadedPlugin::Host(_), _) => "",
            (LoadedPlugin::Pass(_), Transport::Shared) => {
                "; it works on the IR in place (same compiler, flags and IR source as rpt)"
            }
            (LoadedPlugin::Guest(_), Transport::Shared) => {
                "; it lifts straight into rpt's memory (same compiler, flags and IR source as rpt)"
            }
            (_, Transport::Flat) => {
                "; IR crosses to and from it in the flat form (another compiler, flags or IR source than \
                 rpt's, or RPT_PLUGIN_TRANSPORT=flat)"
            }
        };
        eprintln!(
            "rpt: loaded {} plugin `{}` {} from {}{how}",
            plugin.kind().name(),
            info.name,
            info.version,
            library.display()
        );
        match plugin {
            LoadedPlugin::Guest(g) => registry.add_guest(g),
            LoadedPlugin::Host(h) => registry.add_host(h),
            LoadedPlugin::Pass(p) => registry.add_pass(p),
        }
    }
    Ok(())
}

/// Builds the `cdylib` of the plugin crate in `crate_dir` and returns the library's path.
///
/// The build is made to give the same bytes every time: no debug info and no incremental
/// compilation ([`PLUGIN_RUSTFLAGS`]), and `--locked` when the crate's workspace has a lock file. The library is found from cargo's own artifact
/// messages, never by guessing file names.
pub fn build_crate(crate_dir: &Path, target_dir: &Path) -> Result<PathBuf> {
    let manifest = crate_dir.join("Cargo.toml");
    let manifest = manifest
        .canonicalize()
        .with_context(|| format!("no plugin crate at {} (looked for its Cargo.toml)", crate_dir.display()))?;
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let metadata = MetadataCommand::new()
        .cargo_path(&cargo)
        .manifest_path(&manifest)
        .no_deps()
        .exec()
        .with_context(|| format!("reading the plugin crate {}", manifest.display()))?;
    // root_package() is the workspace's root; the plugin is the package of this manifest.
    let package = metadata
        .packages
        .iter()
        .find(|p| p.manifest_path.as_std_path() == manifest)
        .ok_or_else(|| anyhow!("{}: cargo does not list this crate as a package", manifest.display()))?;
    if !package.targets.iter().any(|t| t.kind.contains(&TargetKind::CDyLib)) {
        bail!(
            "{}: crate `{}` builds no cdylib; a plugin crate needs `[lib] crate-type = [\"cdylib\"]`",
            manifest.display(),
            package.name
        );
    }
    let mut command = Command::new(&cargo);
    command
        .args([
            "build",
            "--lib",
            "--message-format=json-render-diagnostics",
            "--manifest-path",
        ])
        .arg(&manifest)
        .arg("--target-dir")
        .arg(target_dir)
        .args(["-p", package.name.as_str()]);
    if package.features.contains_key(EXPORT_FEATURE) {
        command.args(["--features", EXPORT_FEATURE]);
    }
    if metadata.workspace_root.join("Cargo.lock").exists() {
        command.arg("--locked");
    }
    command
        .env("CARGO_ENCODED_RUSTFLAGS", PLUGIN_RUSTFLAGS.join("\u{1f}"))
        .env_remove("RUSTFLAGS")
        // Incremental builds may lay out code differently from clean ones.
        .env("CARGO_INCREMENTAL", "0")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    let mut child = command
        .spawn()
        .with_context(|| format!("starting `{cargo} build` for {}", manifest.display()))?;
    let mut library = None;
    if let Some(stdout) = child.stdout.take() {
        for message in Message::parse_stream(BufReader::new(stdout)) {
            let message = message.context("reading cargo's build messages")?;
            if let Message::CompilerArtifact(artifact) = message
                && artifact.package_id == package.id
                && artifact.target.kind.contains(&TargetKind::CDyLib)
            {
                library = artifact
                    .filenames
                    .iter()
                    .find(|f| f.extension().is_some_and(|e| e == std::env::consts::DLL_EXTENSION))
                    .map(|f| f.clone().into_std_path_buf());
            }
        }
    }
    let status = child.wait().context("waiting for cargo")?;
    if !status.success() {
        bail!(
            "building the plugin crate {} failed ({status}); cargo's messages are above",
            manifest.display()
        );
    }
    library.ok_or_else(|| anyhow!("cargo built {} but reported no cdylib", manifest.display()))
}
