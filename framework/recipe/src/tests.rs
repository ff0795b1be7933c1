//! Tests of parsing, validation, loading and the digest.

use std::collections::BTreeMap;
use std::fs;

use super::*;

const HASH_A: &str = "05722e60c5a2dac419da145fdf7a463631a753cd3474b7bb08e6f7a1cc7799d4";
const HASH_B: &str = "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff";

/// A recipe using every field; the line numbers matter to the tests below.
const GOOD: &str = r#"// A recipe using every field.
(
    guest: "x86-pe",
    image: "../tests/guests/x86/demo.exe",
    image_sha256: "05722e60c5a2dac419da145fdf7a463631a753cd3474b7bb08e6f7a1cc7799d4",
    platform: "win32-console",
    host: "x86-64",
    entry_points: [0x401000, 4198400],
    function_hints: [0x4014b0],
    overrides: [
        (function: 0x401000, c_symbol: "my_copy", original_sha256: "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"),
    ],
    passes: [
        (name: "const-fold"),
        (name: "inline", enabled: false, params: {"depth": 3}),
        (name: "flag-abi", params: {"strict": true, "limit": -0x10, "mode": "fast"}),
    ],
    shards: 4,
    compiler: (cflags: ["-O3"], launcher: "ccache"),
    plugins: [(crate: "../passes/extra"), (library: "../lib/libpass.so")],
)
"#;

fn path() -> &'static Path {
    Path::new("recipes/demo-x86.ron")
}

fn good() -> Recipe {
    parse(path(), GOOD).expect("GOOD parses")
}

/// The smallest recipe: only the required fields.
fn minimal(extra: &str) -> String {
    format!(
        "(guest: \"x86-pe\", image: \"demo.exe\", image_sha256: \"{HASH_A}\", platform: \"win32-console\", {extra})"
    )
}

fn line_column(e: &RecipeError) -> Option<(usize, usize)> {
    e.location().map(|l| (l.line, l.column))
}

/// The error of GOOD with `from` replaced by `to`, which must point at line and column `at`.
fn error_at(from: &str, to: &str, at: (usize, usize)) -> RecipeError {
    let e = parse(path(), &GOOD.replace(from, to)).expect_err("the changed recipe is refused");
    assert_eq!(line_column(&e), Some(at), "{e}");
    e
}

#[test]
fn a_good_recipe_parses() {
    let r = good();
    assert_eq!(r.guest, "x86-pe");
    assert_eq!(r.image, PathBuf::from("../tests/guests/x86/demo.exe"));
    assert_eq!(r.image_sha256, HASH_A);
    assert_eq!(r.platform, "win32-console");
    assert_eq!(r.host, "x86-64");
    assert_eq!(r.entry_points, vec![0x401000, 0x401000]);
    assert_eq!(r.function_hints, vec![0x4014b0]);
    assert_eq!(
        r.overrides,
        vec![Override {
            function: 0x401000,
            c_symbol: "my_copy".into(),
            original_sha256: HASH_B.into()
        }]
    );
    let passes = r.passes.as_deref().expect("the recipe lists passes");
    assert_eq!(passes.len(), 3);
    assert_eq!(
        passes[0],
        PassConfig {
            name: "const-fold".into(),
            enabled: true,
            params: BTreeMap::new()
        }
    );
    assert!(!passes[1].enabled);
    let params = &passes[2].params;
    assert_eq!(params.get("strict"), Some(&ParamValue::Bool(true)));
    assert_eq!(params.get("limit"), Some(&ParamValue::Int(-16)));
    assert_eq!(params.get("mode"), Some(&ParamValue::Str("fast".into())));
    assert_eq!(r.shards, 4);
    assert_eq!(r.compiler.cflags, vec!["-O3".to_owned()]);
    assert_eq!(r.compiler.launcher.as_deref(), Some("ccache"));
    assert_eq!(
        r.plugins,
        vec![
            PluginSource {
                crate_dir: Some("../passes/extra".into()),
                library: None,
            },
            PluginSource {
                crate_dir: None,
                library: Some("../lib/libpass.so".into()),
            },
        ]
    );
}

#[test]
fn optional_fields_take_their_defaults() {
    let r = parse(path(), &minimal("")).expect("minimal recipe parses");
    assert_eq!(r.host, DEFAULT_HOST);
    assert_eq!(r.shards, DEFAULT_SHARDS);
    assert!(r.entry_points.is_empty() && r.function_hints.is_empty() && r.overrides.is_empty());
    assert!(
        r.passes.is_none() && r.plugins.is_empty(),
        "no passes listed: the host's recommendation"
    );
    assert!(r.compiler.is_default());
    for launcher in ["\"ccache\"", "Some(\"ccache\")"] {
        let r = parse(path(), &minimal(&format!("compiler: (launcher: {launcher})"))).expect("launcher parses");
        assert_eq!(r.compiler.launcher.as_deref(), Some("ccache"), "{launcher}");
    }
}

#[test]
fn a_named_struct_is_accepted() {
    let text = minimal("").replacen('(', "Recipe(", 1);
    assert_eq!(
        parse(path(), &text).expect("Recipe(...) parses"),
        parse(path(), &minimal("")).expect("parses")
    );
}

#[test]
fn a_misspelt_field_names_its_line_and_column() {
    let e = error_at("    passes: [", "    pases: [", (13, 5));
    let shown = e.to_string();
    assert!(
        shown.starts_with("recipes/demo-x86.ron:13:5: unknown field `pases` in `Recipe`, expected one of `guest`,"),
        "{shown}"
    );
    assert!(shown.contains("`passes`"), "{shown}");
}

#[test]
fn a_misspelt_nested_field_names_its_line_and_column() {
    let e = error_at(
        "(name: \"const-fold\")",
        "(name: \"const-fold\", enabld: true)",
        (14, 30),
    );
    assert!(e.to_string().contains("unknown field `enabld` in `PassConfig`"), "{e}");
}

#[test]
fn a_syntax_error_names_its_line_and_column() {
    // The comma after the platform is missing; ron notices at the next field.
    let e = error_at("\"win32-console\",", "\"win32-console\"", (7, 5));
    assert!(matches!(e, RecipeError::Parse { .. }), "{e:?}");
    assert_eq!(e.to_string(), "recipes/demo-x86.ron:7:5: Expected comma");
}

#[test]
fn a_missing_field_is_an_error() {
    let e = parse(path(), "(\n  guest: \"x86-pe\",\n)").expect_err("image is missing");
    assert!(e.to_string().contains("missing field `image` in `Recipe`"), "{e}");
    assert_eq!(line_column(&e), Some((3, 1)));
}

#[test]
fn a_bad_parameter_value_is_explained() {
    let e = parse(path(), &minimal("passes: [(name: \"p\", params: {\"x\": 1.5})]")).expect_err("float param");
    assert!(
        e.to_string()
            .contains("a pass parameter must be `true` or `false`, an integer or a string"),
        "{e}"
    );
}

#[test]
fn shard_count_out_of_range_points_at_the_field() {
    let e = error_at("shards: 4", "shards: 0", (18, 5));
    assert_eq!(
        e.to_string(),
        "recipes/demo-x86.ron:18:5: `shards` must be 1..=4096, found 0"
    );
    let e = parse(path(), &minimal("shards: 4097")).expect_err("too many shards");
    assert!(
        matches!(&e, RecipeError::Invalid { field, .. } if field == "shards"),
        "{e:?}"
    );
    assert!(parse(path(), &minimal("shards: 4096")).is_ok());
}

#[test]
fn a_malformed_image_hash_points_at_the_field() {
    let e = error_at(HASH_A, "05722e60", (5, 5));
    assert!(
        e.to_string()
            .contains("`image_sha256` must be 64 hex digits, found \"05722e60\""),
        "{e}"
    );
}

#[test]
fn duplicate_pass_names_point_at_the_second() {
    let e = error_at("(name: \"inline\"", "(name: \"const-fold\"", (15, 10));
    assert!(
        e.to_string()
            .contains("pass `const-fold` is already listed as passes[0]"),
        "{e}"
    );
}

#[test]
fn an_empty_guest_points_at_the_field() {
    let e = error_at("guest: \"x86-pe\"", "guest: \"\"", (3, 5));
    assert!(e.to_string().ends_with("`guest` must not be empty"), "{e}");
}

#[test]
fn an_override_symbol_must_be_a_c_identifier() {
    let e = error_at("\"my_copy\"", "\"my-copy\"", (11, 30));
    assert!(
        matches!(&e, RecipeError::Invalid { field, .. } if field == "overrides[0].c_symbol"),
        "{e:?}"
    );
    let text = GOOD.replace("\"my_copy\"", "\"int\"");
    assert!(parse(path(), &text).is_err(), "a keyword cannot name a function");
}

#[test]
fn an_override_needs_a_well_formed_hash_and_a_function_once() {
    error_at(HASH_B, "xyz", (11, 51));
    let twice = "overrides: [\n (function: 0x10, c_symbol: \"a\", original_sha256: \"HASH\"),\n \
                 (function: 16, c_symbol: \"b\", original_sha256: \"HASH\"),\n]"
        .replace("HASH", HASH_B);
    let e = parse(path(), &minimal(&twice)).expect_err("0x10 overridden twice");
    assert_eq!(line_column(&e), Some((3, 3)));
    assert!(
        e.to_string()
            .contains("function 0x10 is already overridden by overrides[0]"),
        "{e}"
    );
}

#[test]
fn a_location_is_left_out_when_the_field_is_not_written() {
    // A field that is not in the text (here `shards`, left to its default) has no location; the
    // error then names the file alone. Text cannot produce this for `shards`, so validate a recipe
    // changed in code.
    let mut recipe = parse(path(), &minimal("")).expect("parses");
    recipe.shards = 0;
    let e = validate::validate(path(), &minimal(""), &recipe).expect_err("zero shards");
    assert_eq!(e.location(), None);
    assert_eq!(
        e.to_string(),
        "recipes/demo-x86.ron: `shards` must be 1..=4096, found 0"
    );
}

/// Writes `recipe_text` to `dir/recipes/r.ron` and `image` to `dir/images/demo.exe`.
fn write_fixture(dir: &Path, recipe_text: &str, image: &[u8]) -> PathBuf {
    fs::create_dir_all(dir.join("recipes")).expect("mkdir recipes");
    fs::create_dir_all(dir.join("images")).expect("mkdir images");
    fs::write(dir.join("images/demo.exe"), image).expect("write image");
    let recipe_path = dir.join("recipes/r.ron");
    fs::write(&recipe_path, recipe_text).expect("write recipe");
    recipe_path
}

fn fixture_text(hash: &str) -> String {
    format!("(guest: \"x86-pe\", image: \"../images/demo.exe\", image_sha256: \"{hash}\", platform: \"win32-console\")")
}

#[test]
fn load_reads_the_image_beside_the_recipe() {
    let dir = tempfile::tempdir().expect("tempdir");
    let image = b"MZ not really a program".to_vec();
    let recipe_path = write_fixture(
        dir.path(),
        &fixture_text(&sha256_hex(&image).to_ascii_uppercase()),
        &image,
    );
    let loaded = load(&recipe_path).expect("loads");
    assert_eq!(loaded.path, recipe_path);
    assert_eq!(loaded.image_path, dir.path().join("recipes/../images/demo.exe"));
    assert_eq!(loaded.image, image);
    assert_eq!(loaded.recipe.guest, "x86-pe");
}

#[test]
fn load_refuses_an_image_with_another_hash() {
    let dir = tempfile::tempdir().expect("tempdir");
    let recipe_path = write_fixture(dir.path(), &fixture_text(HASH_B), b"some other bytes");
    let e = load(&recipe_path).expect_err("hash mismatch");
    let actual = sha256_hex(b"some other bytes");
    match &e {
        RecipeError::ImageHashMismatch {
            recipe,
            image,
            expected,
            actual: found,
        } => {
            assert_eq!(recipe, &recipe_path);
            assert_eq!(image, &dir.path().join("recipes/../images/demo.exe"));
            assert_eq!(expected, HASH_B);
            assert_eq!(found, &actual);
        }
        other => panic!("expected a hash mismatch, got {other:?}"),
    }
    let shown = e.to_string();
    assert!(
        shown.contains("demo.exe: sha256 is ") && shown.contains(&actual) && shown.contains(HASH_B),
        "{shown}"
    );
    assert!(shown.contains("never silently applies to different code"), "{shown}");
}

#[test]
fn io_errors_name_the_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let missing = dir.path().join("nope.ron");
    let e = load(&missing).expect_err("no recipe file");
    assert_eq!(e.path(), missing);
    assert!(
        e.to_string()
            .starts_with(&format!("{}: cannot read: ", missing.display())),
        "{e}"
    );

    let recipe_path = dir.path().join("r.ron");
    fs::write(&recipe_path, fixture_text(HASH_A)).expect("write recipe");
    let e = load(&recipe_path).expect_err("no image file");
    assert_eq!(e.path(), dir.path().join("../images/demo.exe"));
    assert!(matches!(e, RecipeError::Io { .. }), "{e:?}");
}

#[test]
fn the_committed_demo_recipe_loads() {
    let recipe_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../recipes/demo-x86.ron");
    let loaded = load(&recipe_path).expect("recipes/demo-x86.ron loads and its image hash matches");
    assert_eq!(loaded.recipe.guest, "x86-pe");
    assert_eq!(loaded.recipe.platform, "win32-console");
    assert_eq!(loaded.recipe.host, "x86-64");
    assert_eq!(loaded.recipe.shards, 4);
    assert_eq!(&loaded.image[..2], b"MZ");
}

#[test]
fn digest_ignores_formatting_comments_and_field_order() {
    let reformatted = r#"(plugins:[(crate:"../passes/extra"),(library:"../lib/libpass.so")],compiler:(launcher:"ccache",cflags:["-O3"]),
      shards:4, passes:[(name:"const-fold",enabled:true),(params:{"depth":3},enabled:false,name:"inline"),
      (params:{"mode":"fast","limit":-16,"strict":true},name:"flag-abi")], /* comment */
      overrides:[(original_sha256:"ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
      c_symbol:"my_copy",function:4198400)],function_hints:[4199600],entry_points:[4198400,0x401000],
      platform:"win32-console",image_sha256:"05722E60C5A2DAC419DA145FDF7A463631A753CD3474B7BB08E6F7A1CC7799D4",
      image:"../tests/guests/x86/demo.exe",guest:"x86-pe")"#;
    let other = parse(path(), reformatted).expect("reformatted recipe parses");
    assert_eq!(other.image_sha256, HASH_A, "hashes are lower-cased");
    assert_eq!(digest(&good(), HASH_A), digest(&other, &other.image_sha256));
}

#[test]
fn digest_changes_when_a_pass_is_enabled() {
    let off = good();
    let on = parse(path(), &GOOD.replace("enabled: false", "enabled: true")).expect("parses");
    assert_ne!(digest(&off, HASH_A), digest(&on, HASH_A));
}

#[test]
fn a_disabled_pass_does_not_change_the_digest() {
    let without = parse(path(), &minimal("passes: []")).expect("parses");
    let with = parse(
        path(),
        &minimal("passes: [(name: \"new-pass\", enabled: false, params: {\"x\": 1})]"),
    )
    .expect("parses");
    assert_eq!(digest(&without, HASH_A), digest(&with, HASH_A));
    // Removing a disabled pass from a longer list changes nothing either.
    let mut fewer = good();
    if let Some(passes) = &mut fewer.passes {
        passes.retain(|p| p.enabled);
    }
    assert_eq!(digest(&good(), HASH_A), digest(&fewer, HASH_A));
}

#[test]
fn default_values_written_out_do_not_change_the_digest() {
    let bare = parse(path(), &minimal("")).expect("parses");
    let explicit = parse(
        path(),
        &minimal(
            "host: \"x86-64\", shards: 8, entry_points: [], function_hints: [], overrides: [], \
             compiler: (cflags: []), plugins: [], strict_lifting: false",
        ),
    )
    .expect("parses");
    assert_eq!(digest(&bare, HASH_A), digest(&explicit, HASH_A));
    // No `passes` means the host's recommended pipeline; `passes: []` means none: two builds.
    let none = parse(path(), &minimal("passes: []")).expect("parses");
    assert_ne!(digest(&bare, HASH_A), digest(&none, HASH_A));
}

#[test]
fn the_run_time_tier_is_on_unless_the_recipe_says_no_and_only_off_is_in_the_digest() {
    let bare = parse(path(), &minimal("")).expect("parses");
    let off = parse(path(), &minimal("run_time_tier: false")).expect("parses");
    assert!(bare.run_time_tier && !off.run_time_tier);
    assert!(!canonical_form(&bare, HASH_A).contains("run_time_tier"));
    assert!(canonical_form(&off, HASH_A).lines().any(|l| l == "no_run_time_tier"));
}

#[test]
fn coverage_entries_are_in_the_digest_but_not_their_counts_or_the_file_name() {
    let bare = parse(path(), &minimal("")).expect("parses");
    let named = parse(path(), &minimal("tier_coverage: \"elsewhere.txt\"")).expect("parses");
    assert_eq!(
        named.tier_coverage.as_deref(),
        Some(std::path::Path::new("elsewhere.txt"))
    );
    assert_eq!(canonical_form(&bare, HASH_A), canonical_form(&named, HASH_A));
    let mut covered = bare.clone();
    covered.coverage_entries.insert(0x0040_1230, 3);
    let mut counted = covered.clone();
    counted.coverage_entries.insert(0x0040_1230, 9);
    assert!(
        canonical_form(&covered, HASH_A)
            .lines()
            .any(|l| l == "coverage_entry 0x401230")
    );
    assert_eq!(canonical_form(&covered, HASH_A), canonical_form(&counted, HASH_A));
    // Never read from a recipe file.
    assert!(parse(path(), &minimal("coverage_entries: {}")).is_err());
}

#[test]
fn strict_lifting_is_in_the_digest_only_when_on() {
    let bare = parse(path(), &minimal("")).expect("parses");
    let strict = parse(path(), &minimal("strict_lifting: true")).expect("parses");
    assert!(strict.strict_lifting && !bare.strict_lifting);
    assert_ne!(digest(&bare, HASH_A), digest(&strict, HASH_A));
    assert!(canonical_form(&strict, HASH_A).lines().any(|l| l == "strict_lifting"));
}

#[test]
fn the_image_path_and_launcher_do_not_change_the_digest() {
    let moved = parse(
        path(),
        &GOOD.replace("../tests/guests/x86/demo.exe", "/elsewhere/demo.exe"),
    )
    .expect("parses");
    assert_eq!(digest(&good(), HASH_A), digest(&moved, HASH_A));
    let no_launcher = parse(path(), &GOOD.replace(", launcher: \"ccache\"", "")).expect("parses");
    assert_eq!(digest(&good(), HASH_A), digest(&no_launcher, HASH_A));
}

#[test]
fn digest_covers_what_changes_output() {
    let base = digest(&good(), HASH_A);
    let edits = [
        ("\"x86-pe\"", "\"x86-pe2\""),
        ("\"win32-console\"", "\"win32-gui\""),
        ("host: \"x86-64\"", "host: \"aarch64\""),
        ("0x401000, 4198400", "0x401000"),
        ("[0x4014b0]", "[0x4014b1]"),
        ("\"my_copy\"", "\"my_copy2\""),
        ("(name: \"const-fold\"),", ""),
        ("\"depth\": 3", "\"depth\": 4"),
        ("\"limit\": -0x10", "\"limit\": 16"),
        ("\"fast\"", "\"slow\""),
        ("shards: 4", "shards: 8"),
        ("[\"-O3\"]", "[\"-O2\"]"),
        ("../passes/extra", "../passes/other"),
    ];
    for (from, to) in edits {
        let text = GOOD.replacen(from, to, 1);
        assert_ne!(text, GOOD, "edit {from} -> {to} did not apply");
        let changed = parse(path(), &text).unwrap_or_else(|e| panic!("{from} -> {to}: {e}"));
        let changed = digest(&changed, HASH_A);
        if from == "\"depth\": 3" {
            // A disabled pass's parameters are not part of the digest.
            assert_eq!(base, changed, "{from} -> {to}");
        } else {
            assert_ne!(base, changed, "{from} -> {to}");
        }
    }
    assert_ne!(base, digest(&good(), HASH_B), "the image hash is covered");
}

#[test]
fn guest_options_are_in_the_digest_only_when_given() {
    let base = digest(&good(), HASH_A);
    let with = |options: &str| {
        let text = GOOD.replacen(
            "platform: \"win32-console\",",
            &format!("platform: \"win32-console\", {options}"),
            1,
        );
        assert_ne!(text, GOOD, "the platform line is where options go");
        digest(&parse(path(), &text).expect("parses"), HASH_A)
    };
    assert_eq!(base, with("guest_options: {},"), "an empty option map is the default");
    let f64_model = with("guest_options: {\"x87\": \"f64\"},");
    assert_ne!(base, f64_model);
    assert_ne!(f64_model, with("guest_options: {\"x87\": \"f80\"},"));
}

#[test]
fn the_canonical_form_is_fixed() {
    // A change to this text changes every digest: bump DIGEST_FORMAT when it is deliberate.
    let expected = format!(
        "rpt-recipe-digest 1\n\
         guest \"x86-pe\"\n\
         image_sha256 \"{HASH_A}\"\n\
         platform \"win32-console\"\n\
         entry_point 0x401000\n\
         entry_point 0x401000\n\
         function_hint 0x4014b0\n\
         override 0x401000 \"my_copy\" \"{HASH_B}\"\n\
         pass \"const-fold\"\n\
         pass \"flag-abi\"\n\
         \x20 param \"limit\" int -16\n\
         \x20 param \"mode\" str \"fast\"\n\
         \x20 param \"strict\" bool true\n\
         shards 4\n\
         cflag \"-O3\"\n\
         plugin crate \"../passes/extra\"\nplugin library \"../lib/libpass.so\"\n"
    );
    assert_eq!(canonical_form(&good(), HASH_A), expected);
    assert_eq!(digest(&good(), HASH_A), sha256_hex(expected.as_bytes()));
}

#[test]
fn strings_in_the_canonical_form_cannot_run_together() {
    let a = parse(path(), &minimal("compiler: (cflags: [\"-a\\\" cflag \\\"-b\"])")).expect("parses");
    let b = parse(path(), &minimal("compiler: (cflags: [\"-a\", \"-b\"])")).expect("parses");
    assert_ne!(digest(&a, HASH_A), digest(&b, HASH_A));
    let c = parse(
        path(),
        &minimal("platform: \"x\\ny\"").replace("platform: \"win32-console\", ", ""),
    )
    .expect("parses");
    assert!(canonical_form(&c, HASH_A).contains("platform \"x\\u{a}y\"\n"));
}

#[test]
fn sha256_hex_matches_a_known_value() {
    assert_eq!(
        sha256_hex(b"abc"),
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
}

#[test]
fn host_cpu_and_l1i_parse_and_default_to_absent() {
    let r = parse(path(), &minimal("")).expect("parses");
    assert_eq!((r.host_cpu.as_deref(), r.l1i), (None, None));
    let r = parse(
        path(),
        &minimal("host: \"aarch64\", host_cpu: \"cortex-a72\", l1i: (size: 49152, ways: 3, line: 64)"),
    )
    .expect("parses");
    assert_eq!(r.host_cpu.as_deref(), Some("cortex-a72"));
    assert_eq!(
        r.l1i,
        Some(CacheGeometry {
            size: 49152,
            ways: 3,
            line: 64
        })
    );
}

#[test]
fn host_cpu_and_l1i_are_in_the_digest_only_when_given() {
    let base = digest(&parse(path(), &minimal("")).expect("parses"), HASH_A);
    let with = |extra: &str| digest(&parse(path(), &minimal(extra)).expect("parses"), HASH_A);
    let a72 = with("host_cpu: \"cortex-a72\"");
    let m1 = with("host_cpu: \"apple-m1\"");
    let geometry = with("l1i: (size: 65536, ways: 4, line: 64)");
    let other_geometry = with("l1i: (size: 65536, ways: 2, line: 64)");
    let all = [&base, &a72, &m1, &geometry, &other_geometry];
    for (i, a) in all.iter().enumerate() {
        for b in &all[i + 1..] {
            assert_ne!(a, b);
        }
    }
    let form = canonical_form(
        &parse(
            path(),
            &minimal("host_cpu: \"apple-m1\", l1i: (size: 65536, ways: 4, line: 64)"),
        )
        .expect("parses"),
        HASH_A,
    );
    assert!(form.contains("host_cpu \"apple-m1\"\nl1i 65536 4 64\n"), "{form}");
}

#[test]
fn a_bad_l1i_points_at_the_field() {
    for (geometry, why) in [
        ("(size: 0, ways: 4, line: 64)", "positive"),
        ("(size: 49152, ways: 3, line: 48)", "power of two"),
        ("(size: 50000, ways: 3, line: 64)", "multiple of ways * line"),
        ("(size: 36864, ways: 3, line: 64)", "192 sets"),
    ] {
        let text = format!("{}\n    l1i: {geometry},\n)", minimal("").trim_end_matches(')'));
        let e = parse(path(), &text).expect_err(geometry);
        assert_eq!(line_column(&e), Some((2, 5)), "{e}");
        assert!(e.to_string().contains(why), "{geometry}: {e}");
    }
    let e = parse(path(), &minimal("l1i: (size: 49152, ways: 3)")).expect_err("line is required");
    assert!(e.to_string().contains("missing field `line`"), "{e}");
}

#[test]
fn an_empty_host_cpu_is_refused_and_locate_finds_fields() {
    let text = format!("{}\n  host_cpu: \" \",\n)", minimal("").trim_end_matches(')'));
    let e = parse(path(), &text).expect_err("empty cpu");
    assert_eq!(line_column(&e), Some((2, 3)), "{e}");
    let text = format!("{}\n  host_cpu: \"zen9\",\n)", minimal("").trim_end_matches(')'));
    let location = locate(&text, "host_cpu").expect("host_cpu is written");
    assert_eq!((location.line, location.column), (2, 3));
    assert_eq!(locate(&text, "l1i"), None);
}

#[test]
fn c_sources_load_beside_the_recipe_and_are_hash_checked() {
    let dir = tempfile::tempdir().expect("tempdir");
    let image = b"MZ image".to_vec();
    let source = b"#include \"cpu.h\"\nvoid fix(struct cpu *restrict c) { (void)c; }\n".to_vec();
    let text = format!(
        "(guest: \"x86-pe\", image: \"../images/demo.exe\", image_sha256: \"{}\", platform: \"win32-console\", \
         c_sources: [(path: \"fixes/fix.c\", sha256: \"{}\")])",
        sha256_hex(&image),
        sha256_hex(&source).to_ascii_uppercase()
    );
    let recipe_path = write_fixture(dir.path(), &text, &image);
    fs::create_dir_all(dir.path().join("recipes/fixes")).expect("mkdir");
    fs::write(dir.path().join("recipes/fixes/fix.c"), &source).expect("write source");
    let loaded = load(&recipe_path).expect("loads");
    assert_eq!(loaded.recipe.c_sources[0].sha256, sha256_hex(&source));
    assert_eq!(loaded.c_sources.len(), 1);
    assert_eq!(loaded.c_sources[0].name, "fix.c");
    assert_eq!(loaded.c_sources[0].contents, source);

    fs::write(dir.path().join("recipes/fixes/fix.c"), b"changed").expect("rewrite source");
    let e = load(&recipe_path).expect_err("hash mismatch");
    assert!(matches!(e, RecipeError::SourceHashMismatch { index: 0, .. }), "{e:?}");
    let shown = e.to_string();
    assert!(
        shown.contains("fix.c: sha256 is ")
            && shown.contains(&sha256_hex(b"changed"))
            && shown.contains("c_sources[0].sha256"),
        "{shown}"
    );
}

#[test]
fn c_sources_are_validated() {
    let with = |sources: &str| parse(path(), &minimal(&format!("c_sources: [{sources}]")));
    let e = with(&format!("(path: \"a.txt\", sha256: \"{HASH_A}\")")).expect_err("not C");
    assert!(
        matches!(&e, RecipeError::Invalid { field, .. } if field == "c_sources[0].path"),
        "{e:?}"
    );
    let e = with("(path: \"a.c\", sha256: \"abc\")").expect_err("bad hash");
    assert!(
        matches!(&e, RecipeError::Invalid { field, .. } if field == "c_sources[0].sha256"),
        "{e:?}"
    );
    let e = with(&format!(
        "(path: \"x/a.c\", sha256: \"{HASH_A}\"), (path: \"y/a.c\", sha256: \"{HASH_B}\")"
    ))
    .expect_err("same name twice");
    assert!(
        e.to_string().contains("c_sources[0] already has the file name `a.c`"),
        "{e}"
    );
    assert!(
        with(&format!(
            "(path: \"x/a.c\", sha256: \"{HASH_A}\"), (path: \"a.h\", sha256: \"{HASH_B}\")"
        ))
        .is_ok()
    );
}

#[test]
fn c_sources_enter_the_digest_by_name_and_hash_only() {
    let base = parse(path(), &minimal("")).expect("parses");
    let empty = parse(path(), &minimal("c_sources: []")).expect("parses");
    assert_eq!(
        digest(&base, HASH_A),
        digest(&empty, HASH_A),
        "an empty list is the default"
    );
    let one = parse(
        path(),
        &minimal(&format!("c_sources: [(path: \"fixes/a.c\", sha256: \"{HASH_A}\")]")),
    )
    .expect("parses");
    let moved = parse(
        path(),
        &minimal(&format!("c_sources: [(path: \"other/a.c\", sha256: \"{HASH_A}\")]")),
    )
    .expect("parses");
    let edited = parse(
        path(),
        &minimal(&format!("c_sources: [(path: \"fixes/a.c\", sha256: \"{HASH_B}\")]")),
    )
    .expect("parses");
    assert_ne!(digest(&base, HASH_A), digest(&one, HASH_A));
    assert_eq!(
        digest(&one, HASH_A),
        digest(&moved, HASH_A),
        "the folder does not reach the output"
    );
    assert_ne!(digest(&one, HASH_A), digest(&edited, HASH_A));
    assert!(canonical_form(&one, HASH_A).contains(&format!("c_source \"a.c\" \"{HASH_A}\"\n")));
}

#[test]
fn a_plugin_is_a_crate_or_a_library_and_says_so_at_its_line() {
    let old = r#"plugins: [(crate: "../passes/extra"), (library: "../lib/libpass.so")],"#;
    let text = GOOD.replace(old, r#"plugins: [(path: "../passes/extra")],"#);
    let e = parse(path(), &text).expect_err("path is not a field of a plugin");
    assert_eq!(line_column(&e).map(|(line, _)| line), Some(20));
    assert!(e.to_string().contains("unknown field `path` in `PluginSource`"), "{e}");

    let text = GOOD.replace(old, r#"plugins: [(crate: "a", library: "b.so")],"#);
    let e = parse(path(), &text).expect_err("both");
    assert_eq!(line_column(&e).map(|(line, _)| line), Some(20));
    assert!(e.to_string().contains("either a `crate` or a `library`"), "{e}");

    let text = GOOD.replace(old, r#"plugins: [(crate: "a"), (crate: "a")],"#);
    let e = parse(path(), &text).expect_err("twice");
    assert!(e.to_string().contains("plugin a is listed twice"), "{e}");

    let text = GOOD.replace(old, r#"plugins: [()],"#);
    let e = parse(path(), &text).expect_err("neither");
    assert!(e.to_string().contains("needs a `crate`"), "{e}");
}

#[test]
fn plugins_are_in_the_digest_by_kind_and_path() {
    let form = canonical_form(&good(), &good().image_sha256);
    assert!(form.contains("plugin crate \"../passes/extra\"\n"), "{form}");
    assert!(form.contains("plugin library \"../lib/libpass.so\"\n"), "{form}");
}
