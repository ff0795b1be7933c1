//! Exposes the hash of this crate's sources as `RPT_SOURCE_HASH` (the plugin's identity in caches and manifests),
//! and compiles the x87 helpers' C into the crate for the IR interpreter (`src/interp.rs`), once per value model.

/// The helpers, as generations compile them.
const X87: &str = "runtime/x87.c";

/// The headers x87.c includes.
const X87_HEADERS: [&str; 9] = [
    "runtime/x87_defs.h",
    "runtime/x87_host.h",
    "runtime/x87_values.h",
    "runtime/x87_soft.h",
    "runtime/x87_soft_libm.h",
    "runtime/x87_soft_math.h",
    "runtime/x87_soft_transcendental.h",
    "runtime/x87_soft_tables.h",
    "runtime/x87_f64.h",
];

fn main() {
    rpt_source_hash::emit(&["src", "runtime", "platform", "interp", "Cargo.toml", "build.rs"]);
    rpt_interp_build::helpers("interp", &[X87, "interp/layout.c"]).compile("rpt_x86_x87_f80");
    // The f64 model is x87.c under RPT_X87_F64 (what the recipe option writes into a generation).
    // Its copy's external names get the prefix `rpt_f64_`, so both models live in one crate.
    let text = std::fs::read_to_string(X87).unwrap_or_else(|e| panic!("cannot read {X87}: {e}"));
    let mut f64_model = rpt_interp_build::helpers("interp", &[X87]);
    f64_model.define("RPT_X87_F64", "1");
    // Its own folder: both builds compile runtime/x87.c, whose object file has one name.
    f64_model.out_dir(std::path::Path::new(&std::env::var("OUT_DIR").unwrap_or_default()).join("f64"));
    for name in external_names(&text) {
        f64_model.define(name, Some(format!("rpt_f64_{}", &name["rpt_".len()..]).as_str()));
    }
    f64_model.compile("rpt_x86_x87_f64");
    // x87.c's own headers (the rest of runtime/ is covered by the source hash, not this build).
    for header in X87_HEADERS {
        println!("cargo:rerun-if-changed={header}");
    }
    rpt_interp_build::announce(&[X87]);
}

/// The names x87.c gives other files: its helpers and the hooks platforms call.
fn external_names(text: &str) -> std::collections::BTreeSet<&str> {
    text.split(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '_'))
        .filter(|word| word.starts_with("rpt_helper_") || word.starts_with("rpt_x86_"))
        .collect()
}
