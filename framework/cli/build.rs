//! Registers the built-in plugins: every dependency of this crate named `rpt-guest-*`,
//! `rpt-host-*` or `rpt-pass-*` is a plugin crate offering `pub fn plugin() -> rpt_api::Plugin`,
//! and `src/builtin.rs` includes the list written here. Making a plugin built in is therefore one
//! line in this crate's Cargo.toml, and a plugin crate listed there without `plugin()` does not
//! compile.

use std::path::PathBuf;

/// The name prefixes of plugin crates (tests/tidy.rs holds crates in guests/, hosts/ and passes/ to them).
const PLUGIN_PREFIXES: &[&str] = &["rpt-guest-", "rpt-host-", "rpt-pass-"];

fn main() {
    println!("cargo::rerun-if-changed=Cargo.toml");
    let dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let manifest = dir.join("Cargo.toml");
    let text = std::fs::read_to_string(&manifest).unwrap_or_else(|e| panic!("reading {}: {e}", manifest.display()));
    let table: toml::Table = text
        .parse()
        .unwrap_or_else(|e| panic!("parsing {}: {e}", manifest.display()));
    let dependencies = table
        .get("dependencies")
        .and_then(toml::Value::as_table)
        .unwrap_or_else(|| panic!("{} has no [dependencies]", manifest.display()));
    // A toml table iterates in key order, so the list (and the binary) does not depend on how the
    // manifest orders its lines.
    let plugins: Vec<String> = dependencies
        .keys()
        .filter(|name| PLUGIN_PREFIXES.iter().any(|p| name.starts_with(p)))
        .map(|name| format!("    {}::plugin,\n", name.replace('-', "_")))
        .collect();
    let code = format!(
        "/// Every built-in plugin's constructor, from the plugin crates in framework/cli/Cargo.toml.\n\
         pub const BUILTIN_PLUGINS: &[fn() -> rpt_api::Plugin] = &[\n{}];\n",
        plugins.concat()
    );
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR")).join("builtin_plugins.rs");
    std::fs::write(&out, code).unwrap_or_else(|e| panic!("writing {}: {e}", out.display()));
}
