//! Hashes the host plugin's sources: its flags shape every object, so they key the cache.

fn main() {
    rpt_source_hash::emit(&["src", "Cargo.toml"]);
}
