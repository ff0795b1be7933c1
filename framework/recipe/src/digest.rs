//! The recipe digest: a hash of everything in a recipe that changes rpt's output.

use std::fmt::Write as _;

use sha2::{Digest as _, Sha256};

use crate::schema::{DEFAULT_HOST, DEFAULT_SHARDS, ParamValue, Recipe};

/// The first line of the canonical form. Bump it when the form changes, or when the default of an
/// optional field changes (a default is left out of the form, so changing it would otherwise change
/// output without changing digests).
pub const DIGEST_FORMAT: &str = "rpt-recipe-digest 1";

/// The hex sha256 of the canonical form of `recipe` for an image whose sha256 is `image_sha256`
/// (see [`canonical_form`]).
///
/// The digest covers everything that changes output: the guest, the image hash, the platform, the
/// host and its CPU model and L1I geometry when the recipe names them, entry points, function hints, overrides,
/// the override C sources (by file name and sha256: what lands in the generation), the enabled passes and their parameters, the
/// shard count, the compiler flags and the plugin crates. It does not cover the image's path (moving
/// the image changes nothing) nor the compiler launcher (it changes how objects are built, not what
/// they are).
///
/// **Defaults are left out.** An optional field that holds its default value contributes nothing:
/// a pass with `enabled: false` is omitted entirely, empty lists and maps are omitted, `host_cpu`
/// and `l1i` appear only when written, and `host` and `shards` appear only when they differ from
/// `"x86-64"` and 8. So writing a default out
/// explicitly never changes the digest, and a new optional field (a new switch that is off by
/// default) never changes the digest of an existing recipe unless the recipe turns it on.
///
/// Formatting, comments and the order of fields in the RON text do not matter. The order of
/// entries within a list is kept (the pass list is a pipeline; for the other lists, a reordering
/// may cost a rebuild but can never hide a change). Parameters are in name order.
pub fn digest(recipe: &Recipe, image_sha256: &str) -> String {
    sha256_hex(canonical_form(recipe, image_sha256).as_bytes())
}

/// The text the digest hashes: one line per item, each starting with a keyword, every string
/// quoted and escaped, every address in hex. It is meant for `rpt` to show why two digests differ.
pub fn canonical_form(recipe: &Recipe, image_sha256: &str) -> String {
    let mut out = String::new();
    line(&mut out, DIGEST_FORMAT);
    line(&mut out, &format!("guest {}", quote(&recipe.guest)));
    line(
        &mut out,
        &format!("image_sha256 {}", quote(&image_sha256.to_ascii_lowercase())),
    );
    line(&mut out, &format!("platform {}", quote(&recipe.platform)));
    for (name, value) in &recipe.guest_options {
        line(&mut out, &format!("guest_option {} {}", quote(name), param_text(value)));
    }
    if recipe.host != DEFAULT_HOST {
        line(&mut out, &format!("host {}", quote(&recipe.host)));
    }
    if let Some(cpu) = &recipe.host_cpu {
        line(&mut out, &format!("host_cpu {}", quote(cpu)));
    }
    if let Some(l1i) = &recipe.l1i {
        line(&mut out, &format!("l1i {} {} {}", l1i.size, l1i.ways, l1i.line));
    }
    for addr in &recipe.entry_points {
        line(&mut out, &format!("entry_point {addr:#x}"));
    }
    for addr in &recipe.function_hints {
        line(&mut out, &format!("function_hint {addr:#x}"));
    }
    // Where the coverage file is does not change the output; what it says does (not how often).
    for addr in recipe.coverage_entries.keys() {
        line(&mut out, &format!("coverage_entry {addr:#x}"));
    }
    for o in &recipe.overrides {
        line(
            &mut out,
            &format!(
                "override {:#x} {} {}",
                o.function,
                quote(&o.c_symbol),
                quote(&o.original_sha256.to_ascii_lowercase())
            ),
        );
    }
    for source in &recipe.c_sources {
        let name = source.path.file_name().map(|n| n.to_string_lossy()).unwrap_or_default();
        line(
            &mut out,
            &format!(
                "c_source {} {}",
                quote(&name),
                quote(&source.sha256.to_ascii_lowercase())
            ),
        );
    }
    // A recipe without a pipeline gets its host's recommended one, which only the effective
    // recipe (rpt-generation) knows; as written it is a recipe of its own.
    if recipe.passes.is_none() {
        line(&mut out, "passes recommended");
    }
    for pass in recipe.passes.iter().flatten().filter(|p| p.enabled) {
        line(&mut out, &format!("pass {}", quote(&pass.name)));
        for (name, value) in &pass.params {
            line(&mut out, &format!("  param {} {}", quote(name), param_text(value)));
        }
    }
    if recipe.strict_lifting {
        line(&mut out, "strict_lifting");
    }
    if recipe.strict_imports {
        line(&mut out, "strict_imports");
    }
    if !recipe.run_time_tier {
        line(&mut out, "no_run_time_tier");
    }
    if recipe.count_instructions {
        line(&mut out, "count_instructions");
    }
    for (name, stub) in &recipe.import_stubs {
        let error = stub.last_error.map(|e| format!(" last_error {e}")).unwrap_or_default();
        line(
            &mut out,
            &format!(
                "import_stub {} returns {:#x} pops {}{error}",
                quote(name),
                stub.returns,
                stub.pops
            ),
        );
    }
    if recipe.shards != DEFAULT_SHARDS {
        line(&mut out, &format!("shards {}", recipe.shards));
    }
    for flag in &recipe.compiler.cflags {
        line(&mut out, &format!("cflag {}", quote(flag)));
    }
    for plugin in &recipe.plugins {
        if let Some(dir) = &plugin.crate_dir {
            line(&mut out, &format!("plugin crate {}", quote(&dir.to_string_lossy())));
        }
        if let Some(library) = &plugin.library {
            line(
                &mut out,
                &format!("plugin library {}", quote(&library.to_string_lossy())),
            );
        }
    }
    out
}

fn param_text(value: &ParamValue) -> String {
    match value {
        ParamValue::Bool(b) => format!("bool {b}"),
        ParamValue::Int(i) => format!("int {i}"),
        ParamValue::Str(s) => format!("str {}", quote(s)),
    }
}

/// The lower-case hex sha256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    let hash = Sha256::digest(bytes);
    let mut hex = String::with_capacity(64);
    for byte in hash.iter() {
        // Writing to a String cannot fail.
        let _ = write!(hex, "{byte:02x}");
    }
    hex
}

fn line(out: &mut String, text: &str) {
    out.push_str(text);
    out.push('\n');
}

/// `s` in double quotes with `"`, `\` and control characters escaped, so a string can never be
/// mistaken for the end of a line or of itself. Spelled out here rather than taken from `{:?}`,
/// whose escaping has changed between Rust releases.
fn quote(s: &str) -> String {
    let mut q = String::with_capacity(s.len() + 2);
    q.push('"');
    for c in s.chars() {
        match c {
            '"' => q.push_str("\\\""),
            '\\' => q.push_str("\\\\"),
            c if c.is_control() => {
                let _ = write!(q, "\\u{{{:x}}}", c as u32);
            }
            c => q.push(c),
        }
    }
    q.push('"');
    q
}
