//! Hashes the emitter's sources so an object compiled from an older emitter's C is never reused.

fn main() {
    rpt_source_hash::emit(&["src", "Cargo.toml"]);
}
