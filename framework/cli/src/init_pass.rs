//! `rpt init-pass NAME`: a new pass plugin crate from the template in `templates/pass/`.

use std::path::{Component, Path, PathBuf};

use anyhow::{Context, Result, bail};

/// Where the template's pieces come from; they are compiled into rpt.
const TEMPLATE: [(&str, &str); 2] = [
    ("Cargo.toml", include_str!("../templates/pass/Cargo.toml.in")),
    ("src/lib.rs", include_str!("../templates/pass/lib.rs.in")),
];

/// Arguments of `rpt init-pass`.
#[derive(clap::Args, Clone, Debug)]
pub struct InitPassArgs {
    /// The pass's name, as recipes will write it: lower-case letters, digits and `-`.
    pub name: String,
    /// The directory to create (default: ./NAME).
    #[arg(long)]
    pub dir: Option<PathBuf>,
    /// The rpt-api crate to build against (default: the one this rpt was built from).
    #[arg(long)]
    pub rpt_api: Option<PathBuf>,
}

/// Writes the crate; refuses to touch an existing directory.
pub fn init_pass(args: &InitPassArgs) -> Result<()> {
    let name = &args.name;
    let valid = name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    if !valid {
        bail!("`{name}` is not a pass name: use lower-case letters, digits and `-`, starting with a letter");
    }
    let dir = args.dir.clone().unwrap_or_else(|| PathBuf::from(name));
    if dir.exists() {
        bail!(
            "{} already exists; rpt init-pass only creates new crates",
            dir.display()
        );
    }
    let api = match &args.rpt_api {
        Some(api) => api.clone(),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../api"),
    };
    let api = api
        .canonicalize()
        .with_context(|| format!("no rpt-api crate at {}", api.display()))?;
    let ir = api.join("../ir");
    let ir = ir
        .canonicalize()
        .with_context(|| format!("no rpt-ir crate beside rpt-api at {}", ir.display()))?;
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let dir_abs = dir
        .canonicalize()
        .with_context(|| format!("resolving {}", dir.display()))?;
    let crate_name = format!("rpt-pass-{name}");
    for (file, template) in TEMPLATE {
        let text = template
            .replace("{{name}}", name)
            .replace("{{crate}}", &crate_name)
            .replace("{{api}}", &relative(&dir_abs, &api).display().to_string())
            .replace("{{ir}}", &relative(&dir_abs, &ir).display().to_string());
        let path = dir.join(file);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;
        }
        std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
    }
    eprintln!("rpt: created the pass crate `{crate_name}` in {}", dir.display());
    eprintln!("  test it:  cargo test --manifest-path {}/Cargo.toml", dir.display());
    eprintln!("  use it:   plugins: [(crate: \"<path to it>\")] and passes: [(name: \"{name}\")] in a recipe");
    Ok(())
}

/// `to` relative to `from` when both are absolute (so the crate can move with its checkout).
fn relative(from: &Path, to: &Path) -> PathBuf {
    let from: Vec<Component> = from.components().collect();
    let to_parts: Vec<Component> = to.components().collect();
    let common = from.iter().zip(&to_parts).take_while(|(a, b)| a == b).count();
    if common == 0 {
        return to.to_path_buf();
    }
    let mut out = PathBuf::new();
    for _ in common..from.len() {
        out.push("..");
    }
    for part in &to_parts[common..] {
        out.push(part);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::relative;
    use std::path::Path;

    #[test]
    fn relative_paths_climb_to_the_common_ancestor() {
        assert_eq!(
            relative(Path::new("/a/b/c"), Path::new("/a/x/api")),
            Path::new("../../x/api")
        );
        assert_eq!(relative(Path::new("/a"), Path::new("/a/api")), Path::new("api"));
    }
}
