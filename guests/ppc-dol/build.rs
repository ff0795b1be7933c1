//! Exposes the hash of this crate's sources as `RPT_SOURCE_HASH` (the plugin's identity in caches and manifests),
//! and compiles the helpers' C into the crate for the IR interpreter (`src/interp.rs`).

fn main() {
    rpt_source_hash::emit(&["src", "runtime", "platform", "interp", "Cargo.toml", "build.rs"]);
    let helpers = ["runtime/ppc_helpers.c"];
    rpt_interp_build::helpers("interp", &helpers).compile("rpt_ppc_helpers");
    rpt_interp_build::announce(&helpers);
}
