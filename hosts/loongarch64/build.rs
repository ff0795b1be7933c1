//! Hashes the host plugin's sources, its shim's C files included: they shape every object and binary.

fn main() {
    rpt_source_hash::emit(&["src", "shim", "Cargo.toml"]);
}
