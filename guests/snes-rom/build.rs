//! Exposes the hash of this crate's sources as `RPT_SOURCE_HASH` (the plugin's identity in caches and manifests).

fn main() {
    rpt_source_hash::emit(&["src", "runtime", "platform", "Cargo.toml", "build.rs"]);
}
