//! The rules a recipe must keep beyond its RON shape.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::error::RecipeError;
use crate::locate::FieldLocations;
use crate::schema::{CacheGeometry, MAX_SHARDS, Recipe};

/// Checks `recipe`, parsed from `text` in the file `path`; the first broken rule is the error.
pub(crate) fn validate(path: &Path, text: &str, recipe: &Recipe) -> Result<(), RecipeError> {
    let mut locations = None;
    let mut fail = |field: String, message: String| {
        let location = locations.get_or_insert_with(|| FieldLocations::scan(text)).get(&field);
        RecipeError::Invalid {
            path: path.to_owned(),
            location,
            field,
            message,
        }
    };

    for (field, value) in [
        ("guest", &recipe.guest),
        ("platform", &recipe.platform),
        ("host", &recipe.host),
    ] {
        if value.trim().is_empty() {
            return Err(fail(field.into(), format!("`{field}` must not be empty")));
        }
    }
    if recipe.host_cpu.as_ref().is_some_and(|cpu| cpu.trim().is_empty()) {
        return Err(fail(
            "host_cpu".into(),
            "`host_cpu` must name a CPU model (`rpt hosts` lists them) or be left out".into(),
        ));
    }
    if let Some(l1i) = &recipe.l1i
        && let Err(why) = check_cache(l1i)
    {
        return Err(fail("l1i".into(), format!("`l1i`: {why}")));
    }
    if recipe.image.as_os_str().is_empty() {
        return Err(fail("image".into(), "`image` must name the guest image file".into()));
    }
    if !is_sha256_hex(&recipe.image_sha256) {
        return Err(fail(
            "image_sha256".into(),
            format!("`image_sha256` must be 64 hex digits, found {:?}", recipe.image_sha256),
        ));
    }
    if !(1..=MAX_SHARDS).contains(&recipe.shards) {
        return Err(fail(
            "shards".into(),
            format!("`shards` must be 1..={MAX_SHARDS}, found {}", recipe.shards),
        ));
    }

    let mut overridden = BTreeMap::new();
    for (i, o) in recipe.overrides.iter().enumerate() {
        if !is_c_identifier(&o.c_symbol) {
            return Err(fail(
                format!("overrides[{i}].c_symbol"),
                format!(
                    "`c_symbol` must be a C identifier that is not a keyword, found {:?}",
                    o.c_symbol
                ),
            ));
        }
        if !is_sha256_hex(&o.original_sha256) {
            return Err(fail(
                format!("overrides[{i}].original_sha256"),
                format!("`original_sha256` must be 64 hex digits, found {:?}", o.original_sha256),
            ));
        }
        if let Some(first) = overridden.insert(o.function, i) {
            return Err(fail(
                format!("overrides[{i}].function"),
                format!("function {:#x} is already overridden by overrides[{first}]", o.function),
            ));
        }
    }

    let mut source_names = BTreeMap::new();
    for (i, source) in recipe.c_sources.iter().enumerate() {
        let name = source.path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        if !(name.ends_with(".c") || name.ends_with(".h")) || name.len() < 3 {
            return Err(fail(
                format!("c_sources[{i}].path"),
                format!(
                    "a C source must be a `.c` or `.h` file, found {:?}",
                    source.path.display().to_string()
                ),
            ));
        }
        if !is_sha256_hex(&source.sha256) {
            return Err(fail(
                format!("c_sources[{i}].sha256"),
                format!("`sha256` must be 64 hex digits, found {:?}", source.sha256),
            ));
        }
        if let Some(first) = source_names.insert(name.to_owned(), i) {
            return Err(fail(
                format!("c_sources[{i}].path"),
                format!(
                    "c_sources[{first}] already has the file name `{name}`; every source lands in \
                     src/overrides/ by its name, so names must differ"
                ),
            ));
        }
    }

    let mut pass_names = BTreeMap::new();
    for (i, pass) in recipe.passes.iter().flatten().enumerate() {
        if pass.name.trim().is_empty() {
            return Err(fail(
                format!("passes[{i}].name"),
                "a pass `name` must not be empty".into(),
            ));
        }
        if let Some(first) = pass_names.insert(pass.name.as_str(), i) {
            return Err(fail(
                format!("passes[{i}].name"),
                format!(
                    "pass `{}` is already listed as passes[{first}]; list each pass once",
                    pass.name
                ),
            ));
        }
    }

    let mut plugin_paths = BTreeSet::new();
    for (i, plugin) in recipe.plugins.iter().enumerate() {
        let (field, path) = match (&plugin.crate_dir, &plugin.library) {
            (Some(dir), None) => ("crate", dir),
            (None, Some(library)) => ("library", library),
            (Some(_), Some(_)) => {
                return Err(fail(
                    format!("plugins[{i}].library"),
                    "a plugin is either a `crate` or a `library`, not both".into(),
                ));
            }
            (None, None) => {
                return Err(fail(
                    format!("plugins[{i}]"),
                    "a plugin needs a `crate` (a directory rpt builds) or a `library` (a built .so)".into(),
                ));
            }
        };
        if path.as_os_str().is_empty() {
            return Err(fail(
                format!("plugins[{i}].{field}"),
                format!("a plugin `{field}` must not be empty"),
            ));
        }
        if !plugin_paths.insert(path) {
            return Err(fail(
                format!("plugins[{i}].{field}"),
                format!("plugin {} is listed twice", path.display()),
            ));
        }
    }
    Ok(())
}

/// The rules of a real set-associative cache, as cachegrind's `--I1=size,assoc,line` needs them: all
/// positive, a power-of-two line size, and a size of exactly `sets * ways * line` with a power-of-two
/// number of sets.
fn check_cache(c: &CacheGeometry) -> Result<(), String> {
    let found = format!("size: {}, ways: {}, line: {}", c.size, c.ways, c.line);
    if c.size == 0 || c.ways == 0 || c.line == 0 {
        return Err(format!("size, ways and line must all be positive, found ({found})"));
    }
    if !c.line.is_power_of_two() {
        return Err(format!("the line size must be a power of two, found ({found})"));
    }
    let way_bytes = u64::from(c.ways) * u64::from(c.line);
    let size = u64::from(c.size);
    if !size.is_multiple_of(way_bytes) {
        return Err(format!("the size must be a multiple of ways * line, found ({found})"));
    }
    let sets = size / way_bytes;
    if !sets.is_power_of_two() {
        return Err(format!(
            "({found}) has {sets} sets; the number of sets, size / (ways * line), must be a power of two"
        ));
    }
    Ok(())
}

/// True for exactly 64 hex digits (either case).
pub(crate) fn is_sha256_hex(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// C11 keywords (and the C23 ones a compiler may already reserve), which cannot name a function.
const C_KEYWORDS: &[&str] = &[
    "alignas",
    "alignof",
    "asm",
    "auto",
    "bool",
    "break",
    "case",
    "char",
    "const",
    "constexpr",
    "continue",
    "default",
    "do",
    "double",
    "else",
    "enum",
    "extern",
    "false",
    "float",
    "for",
    "goto",
    "if",
    "inline",
    "int",
    "long",
    "nullptr",
    "register",
    "restrict",
    "return",
    "short",
    "signed",
    "sizeof",
    "static",
    "static_assert",
    "struct",
    "switch",
    "thread_local",
    "true",
    "typedef",
    "typeof",
    "typeof_unqual",
    "union",
    "unsigned",
    "void",
    "volatile",
    "while",
    "_Alignas",
    "_Alignof",
    "_Atomic",
    "_BitInt",
    "_Bool",
    "_Complex",
    "_Decimal128",
    "_Decimal32",
    "_Decimal64",
    "_Generic",
    "_Imaginary",
    "_Noreturn",
    "_Static_assert",
    "_Thread_local",
];

/// True when `s` can name a C function: `[A-Za-z_][A-Za-z0-9_]*` and not a keyword.
pub(crate) fn is_c_identifier(s: &str) -> bool {
    let mut bytes = s.bytes();
    let starts_well = bytes.next().is_some_and(|b| b == b'_' || b.is_ascii_alphabetic());
    starts_well && bytes.all(|b| b == b'_' || b.is_ascii_alphanumeric()) && !C_KEYWORDS.contains(&s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c_identifiers() {
        for good in ["f", "_x", "my_fix_00401000", "A9"] {
            assert!(is_c_identifier(good), "{good}");
        }
        for bad in ["", "9a", "a-b", "a b", "int", "_Bool", "é"] {
            assert!(!is_c_identifier(bad), "{bad}");
        }
    }

    #[test]
    fn sha256_hex() {
        assert!(is_sha256_hex(&"aB".repeat(32)));
        assert!(!is_sha256_hex(&"a".repeat(63)));
        assert!(!is_sha256_hex(&"g".repeat(64)));
    }
}
