//! Hashes the runtime's sources so object caches and manifests change when the runtime does.

fn main() {
    rpt_source_hash::emit(&["c", "src", "Cargo.toml"]);
}
