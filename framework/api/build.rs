//! Exposes the hash of this crate's source as `RPT_SOURCE_HASH`, half of the layout key the
//! shared-layout plugin transport compares between host and plugin (rpt-ir's build script gives
//! the other half, with the compiler).

fn main() {
    rpt_source_hash::emit(&["src", "Cargo.toml", "build.rs"]);
}
