//! Plugins loaded from libraries, end to end through the `rpt` command: the example pass built
//! from its crate by a recipe (working on the IR in place, and in the flat form when its layout
//! key differs or the flat form is asked for), the PowerPC guest as a plugin, and every way a plugin can fail at
//! the boundary (another API version, no plugin symbol, a panic, IR the verifier rejects), each
//! reported with the plugin's name while rpt exits normally.
//!
//! Every plugin crate is built into one target directory (`target/plugin-tests`), so their shared
//! dependencies build once per machine; the tests take turns, because cargo would serialise their
//! builds anyway and one test rebuilds a plugin to compare hashes.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Mutex;

use rpt_tests::{rpt_binary, sha256_file, stderr_of, workspace_root};

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn plugin_target_dir() -> PathBuf {
    workspace_root().join("target/plugin-tests")
}

/// Runs rpt with plugin builds going to the shared target directory.
fn rpt_with_plugins(args: &[&str], dir: &Path) -> Output {
    rpt_with_plugins_env(args, dir, &[])
}

/// Like [`rpt_with_plugins`], with extra environment variables.
fn rpt_with_plugins_env(args: &[&str], dir: &Path, env: &[(&str, &str)]) -> Output {
    Command::new(rpt_binary())
        .envs(env.iter().copied())
        .args(args)
        .args(["--gen-dir"])
        .arg(dir.join("gen"))
        .arg("--cache-dir")
        .arg(dir.join("cache"))
        .current_dir(workspace_root())
        .env("CI", "1")
        .env("RPT_PLUGIN_TARGET_DIR", plugin_target_dir())
        .output()
        .expect("rpt starts")
}

/// A copy of a committed recipe in `dir`, with its image made absolute and `edits` applied.
fn recipe(dir: &Path, base: &str, name: &str, edits: &[(&str, &str)]) -> PathBuf {
    let root = workspace_root();
    let mut text = std::fs::read_to_string(root.join("recipes").join(base)).expect("recipe reads");
    text = text.replace("\"../tests/", &format!("\"{}/tests/", root.display()));
    for (from, to) in edits {
        assert!(text.contains(from), "{base} has no `{from}`");
        text = text.replace(from, &to.replace("{root}", &root.display().to_string()));
    }
    let path = dir.join(format!("{name}.ron"));
    std::fs::write(&path, text).expect("recipe writes");
    path
}

/// The x86 demo recipe with one pass plugin crate and its pass.
fn pass_recipe(dir: &Path, crate_dir: &str, pass: &str) -> PathBuf {
    let passes = format!("    passes: [(name: \"{pass}\")],");
    let plugins = format!("    plugins: [(crate: \"{crate_dir}\")],");
    recipe(
        dir,
        "demo-x86.ron",
        pass,
        &[("    passes: [],", &passes), ("    plugins: [],", &plugins)],
    )
}

fn generation(dir: &Path, recipe: &str) -> PathBuf {
    let parent = dir.join("gen").join(recipe);
    let mut entries: Vec<PathBuf> = std::fs::read_dir(&parent)
        .unwrap_or_else(|e| panic!("{}: {e}", parent.display()))
        .flatten()
        .map(|e| e.path())
        .collect();
    entries.sort();
    entries.pop().expect("one generation")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every `src/` file of a generation (by relative path) with its contents.
fn sources(generation: &Path) -> Vec<(String, Vec<u8>)> {
    fn walk(dir: &Path, base: &Path, out: &mut Vec<(String, Vec<u8>)>) {
        for entry in std::fs::read_dir(dir).expect("src reads").flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, base, out);
            } else {
                let rel = path.strip_prefix(base).unwrap_or(&path).display().to_string();
                out.push((rel, std::fs::read(&path).expect("file reads")));
            }
        }
    }
    let mut out = Vec::new();
    walk(&generation.join("src"), &generation.join("src"), &mut out);
    out.sort();
    out
}

fn count(text: &str, needle: &str) -> usize {
    text.matches(needle).count()
}

fn ir_text(generation: &Path) -> String {
    sources(generation)
        .into_iter()
        .filter(|(p, _)| p.ends_with(".rir"))
        .map(|(_, b)| String::from_utf8_lossy(&b).into_owned())
        .collect()
}

fn library(name: &str) -> PathBuf {
    plugin_target_dir().join("debug").join(format!("lib{name}.so"))
}

fn assert_clean_failure(out: &Output, needles: &[&str]) {
    let stderr = stderr_of(out);
    assert_eq!(out.status.code(), Some(2), "rpt should fail cleanly:\n{stderr}");
    for needle in needles {
        assert!(stderr.contains(needle), "no `{needle}` in:\n{stderr}");
    }
    assert!(
        !stderr.contains("thread 'main' panicked") && !stderr.contains("panicked at framework/"),
        "rpt itself panicked:\n{stderr}"
    );
}

/// The generation's manifest names the library `crate_name` built by its sha256.
fn assert_manifest_pins(generation: &Path, crate_name: &str) {
    let manifest = read(&generation.join("manifest.ron"));
    let hash = sha256_file(&library(crate_name));
    assert!(
        manifest.contains(&hash),
        "the manifest does not name {hash}:\n{manifest}"
    );
}

#[test]
fn the_example_pass_builds_from_its_crate_loads_and_folds_constants() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let dir = tempfile::tempdir().expect("tempdir");
    let plain = recipe(dir.path(), "demo-x86.ron", "plain", &[]);
    let folded = pass_recipe(dir.path(), "{root}/passes/example-plugin", "fold-constants");

    let before = rpt_with_plugins(&["run", plain.to_str().expect("utf-8")], dir.path());
    assert!(before.status.success(), "{}", stderr_of(&before));
    let after = rpt_with_plugins(&["run", folded.to_str().expect("utf-8")], dir.path());
    let stderr = stderr_of(&after);
    assert!(after.status.success(), "{stderr}");
    assert!(stderr.contains("loaded pass plugin `fold-constants`"), "{stderr}");
    // Built by rpt with rpt's own compiler from the same rpt-ir, it gets the IR in place.
    assert!(stderr.contains("it works on the IR in place"), "{stderr}");
    assert_eq!(
        String::from_utf8_lossy(&after.stdout),
        String::from_utf8_lossy(&before.stdout),
        "the folded program prints something else"
    );

    // The pass turned slot reads and arithmetic into constants: fewer reads, more constants.
    let plain_ir = ir_text(&generation(dir.path(), "plain"));
    let folded_ir = ir_text(&generation(dir.path(), "fold-constants"));
    assert!(
        count(&folded_ir, "= get %") < count(&plain_ir, "= get %"),
        "no slot read was folded"
    );
    assert!(count(&folded_ir, "= iconst") > count(&plain_ir, "= iconst"));

    // The manifest pins the library that ran, by its sha256.
    assert_manifest_pins(&generation(dir.path(), "fold-constants"), "rpt_pass_example");
}

#[test]
fn a_plugin_of_another_layout_gets_the_flat_form_and_gives_the_same_code() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let dir = tempfile::tempdir().expect("tempdir");
    let run = |crate_dir: &str, name: &str, env: &[(&str, &str)]| {
        let sub = dir.path().join(name);
        std::fs::create_dir_all(&sub).expect("mkdir");
        let path = pass_recipe(&sub, crate_dir, "fold-constants");
        let out = rpt_with_plugins_env(&["recompile", path.to_str().expect("utf-8")], &sub, env);
        let stderr = stderr_of(&out);
        assert!(out.status.success(), "{stderr}");
        (stderr, sources(&generation(&sub, "fold-constants")))
    };
    let (in_place_log, in_place) = run("{root}/passes/example-plugin", "in-place", &[]);
    assert!(in_place_log.contains("it works on the IR in place"), "{in_place_log}");

    // The same pass reporting another layout key, as a build by another compiler would.
    let (foreign_log, foreign) = run("{root}/tests/plugin-fixtures/foreign-layout", "foreign", &[]);
    assert!(
        foreign_log.contains("IR crosses to and from it in the flat form"),
        "{foreign_log}"
    );
    // The flat form asked for by name.
    let (asked_log, asked) = run(
        "{root}/passes/example-plugin",
        "asked",
        &[("RPT_PLUGIN_TRANSPORT", "flat")],
    );
    assert!(
        asked_log.contains("IR crosses to and from it in the flat form"),
        "{asked_log}"
    );

    // The generated IR and C are the same (the manifests differ, by the library's hash).
    assert!(
        in_place.iter().any(|(p, _)| p.ends_with(".c")),
        "no C sources in the generation"
    );
    assert!(
        foreign == in_place,
        "the flat form gave other code than the in-place run"
    );
    assert!(asked == in_place, "RPT_PLUGIN_TRANSPORT=flat gave other code");

    // A value that names no transport is refused before anything is built.
    let sub = dir.path().join("typo");
    std::fs::create_dir_all(&sub).expect("mkdir");
    let path = pass_recipe(&sub, "{root}/passes/example-plugin", "fold-constants");
    let out = rpt_with_plugins_env(
        &["recompile", path.to_str().expect("utf-8")],
        &sub,
        &[("RPT_PLUGIN_TRANSPORT", "fast")],
    );
    assert_clean_failure(&out, &["RPT_PLUGIN_TRANSPORT is `fast`"]);
}

#[test]
fn building_a_plugin_twice_gives_the_same_library() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let dir = tempfile::tempdir().expect("tempdir");
    let folded = pass_recipe(dir.path(), "{root}/passes/example-plugin", "fold-constants");
    let args = ["recompile", folded.to_str().expect("utf-8")];
    let first = rpt_with_plugins(&args, dir.path());
    assert!(first.status.success(), "{}", stderr_of(&first));
    let lib = library("rpt_pass_example");
    let first_hash = sha256_file(&lib);
    // Forget the plugin crate's own build (not its dependencies'), so cargo compiles and links it
    // again from scratch.
    let fingerprints = plugin_target_dir().join("debug/.fingerprint");
    for entry in std::fs::read_dir(&fingerprints).expect("fingerprints").flatten() {
        if entry.file_name().to_string_lossy().starts_with("rpt-pass-example-") {
            std::fs::remove_dir_all(entry.path()).expect("fingerprint removed");
        }
    }
    std::fs::remove_file(&lib).expect("library removed");
    let second = rpt_with_plugins(&args, dir.path());
    let stderr = stderr_of(&second);
    assert!(second.status.success(), "{stderr}");
    assert!(
        stderr.contains("Compiling rpt-pass-example"),
        "cargo did not rebuild:\n{stderr}"
    );
    assert_eq!(sha256_file(&lib), first_hash, "a rebuild gave another library");
}

#[test]
fn the_ppc_guest_as_a_plugin_generates_exactly_what_the_built_in_does() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let dir = tempfile::tempdir().expect("tempdir");
    // The same recipe name in each folder: `#line` directives name the listing after the recipe.
    let builtin_dir = dir.path().join("builtin");
    std::fs::create_dir_all(&builtin_dir).expect("mkdir");
    let builtin = recipe(&builtin_dir, "demo-ppc.ron", "demo", &[]);
    // The demo's exit status is its own (the demo_ppc test compares it with qemu's).
    let a = rpt_with_plugins(&["run", builtin.to_str().expect("utf-8")], &builtin_dir);
    assert!(stderr_of(&a).contains("rpt: recompiled"), "{}", stderr_of(&a));
    assert!(!a.stdout.is_empty());
    let builtin_src = sources(&generation(&builtin_dir, "demo"));
    assert!(builtin_src.len() > 10, "too few generated files");

    // The plugin lifting into rpt's memory (same layout key), then through the flat form.
    let transports = [
        ("in-place", &[][..], "it lifts straight into rpt's memory"),
        (
            "flat",
            &[("RPT_PLUGIN_TRANSPORT", "flat")][..],
            "IR crosses to and from it in the flat form",
        ),
    ];
    for (name, env, how) in transports {
        let dynamic_dir = dir.path().join(name);
        std::fs::create_dir_all(&dynamic_dir).expect("mkdir");
        let dynamic = recipe(
            &dynamic_dir,
            "demo-ppc.ron",
            "demo",
            &[(
                "    shards: 4,",
                "    shards: 4,\n    plugins: [(crate: \"{root}/guests/ppc-dol\")],",
            )],
        );
        let b = rpt_with_plugins_env(&["run", dynamic.to_str().expect("utf-8")], &dynamic_dir, env);
        let stderr = stderr_of(&b);
        assert!(stderr.contains("rpt: recompiled"), "{stderr}");
        assert!(stderr.contains("loaded guest plugin `ppc-dol`"), "{stderr}");
        assert!(stderr.contains(how), "{name}: {stderr}");
        assert_eq!(a.stdout, b.stdout, "{name}");
        assert_eq!(a.status.code(), b.status.code(), "{name}");
        let dynamic_gen = generation(&dynamic_dir, "demo");
        let dynamic_src = sources(&dynamic_gen);
        for ((path_a, text_a), (path_b, text_b)) in builtin_src.iter().zip(&dynamic_src) {
            assert_eq!(path_a, path_b);
            assert!(
                text_a == text_b,
                "{name}: {path_a} differs between the built-in and the plugin guest"
            );
        }
        assert_eq!(builtin_src.len(), dynamic_src.len(), "{name}");
        assert_manifest_pins(&dynamic_gen, "rpt_guest_ppc_dol");
    }
}

#[test]
fn a_plugin_built_against_another_api_version_is_refused_by_name() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let dir = tempfile::tempdir().expect("tempdir");
    let path = pass_recipe(dir.path(), "{root}/tests/plugin-fixtures/future-api", "future-api");
    let out = rpt_with_plugins(&["recompile", path.to_str().expect("utf-8")], dir.path());
    assert_clean_failure(
        &out,
        &[
            "plugins[0]",
            "plugin `future-api`",
            &format!("rpt plugin API {}", rpt_api::abi::API_VERSION + 1),
            &format!("this rpt speaks API {}", rpt_api::abi::API_VERSION),
        ],
    );
}

#[test]
fn a_panicking_pass_is_caught_and_named() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let dir = tempfile::tempdir().expect("tempdir");
    let path = pass_recipe(dir.path(), "{root}/tests/plugin-fixtures/panic", "panicker");
    let out = rpt_with_plugins(&["recompile", path.to_str().expect("utf-8")], dir.path());
    assert_clean_failure(
        &out,
        &[
            "pass `panicker` on f_",
            "plugin `panicker`",
            "panicked: the panicker pass gives up on f_",
        ],
    );
}

#[test]
fn a_pass_returning_ir_the_verifier_rejects_is_named() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let dir = tempfile::tempdir().expect("tempdir");
    let path = pass_recipe(dir.path(), "{root}/tests/plugin-fixtures/ir-breaker", "ir-breaker");
    let out = rpt_with_plugins(&["recompile", path.to_str().expect("utf-8")], dir.path());
    assert_clean_failure(&out, &["pass `ir-breaker` on f_", "does not verify"]);
}

#[test]
fn a_library_that_is_not_a_plugin_is_refused_by_path() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let dir = tempfile::tempdir().expect("tempdir");
    let source = dir.path().join("plain.c");
    std::fs::write(&source, "int not_a_plugin(void) { return 42; }\n").expect("writes");
    let lib = dir.path().join("libplain.so");
    let status = Command::new("clang-19")
        .args(["-shared", "-fPIC", "-o"])
        .arg(&lib)
        .arg(&source)
        .status()
        .expect("clang-19 runs");
    assert!(status.success());
    let edit = format!("    plugins: [(library: \"{}\")],", lib.display());
    let path = recipe(dir.path(), "demo-x86.ron", "plain-lib", &[("    plugins: [],", &edit)]);
    let out = rpt_with_plugins(&["recompile", path.to_str().expect("utf-8")], dir.path());
    assert_clean_failure(
        &out,
        &["plugins[0]", "libplain.so: not an rpt plugin", "does not export"],
    );

    let edit = format!("    plugins: [(library: \"{}/missing.so\")],", dir.path().display());
    let path = recipe(
        dir.path(),
        "demo-x86.ron",
        "missing-lib",
        &[("    plugins: [],", &edit)],
    );
    let out = rpt_with_plugins(&["recompile", path.to_str().expect("utf-8")], dir.path());
    assert_clean_failure(&out, &["plugins[0]", "missing.so: cannot read the plugin library"]);
}

#[test]
fn init_pass_scaffolds_a_crate_that_builds_tests_and_loads() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let dir = tempfile::tempdir().expect("tempdir");
    let crate_dir = dir.path().join("count-blocks");
    let out = Command::new(rpt_binary())
        .args(["init-pass", "count-blocks", "--dir"])
        .arg(&crate_dir)
        .output()
        .expect("rpt starts");
    assert!(out.status.success(), "{}", stderr_of(&out));
    let again = Command::new(rpt_binary())
        .args(["init-pass", "count-blocks", "--dir"])
        .arg(&crate_dir)
        .output()
        .expect("rpt starts");
    assert_eq!(again.status.code(), Some(2), "init-pass overwrote a crate");

    let path = pass_recipe(dir.path(), crate_dir.to_str().expect("utf-8"), "count-blocks");
    let out = rpt_with_plugins(&["recompile", path.to_str().expect("utf-8")], dir.path());
    let stderr = stderr_of(&out);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("loaded pass plugin `count-blocks`"), "{stderr}");

    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let test = Command::new(cargo)
        .args(["test", "--quiet", "--manifest-path"])
        .arg(crate_dir.join("Cargo.toml"))
        .arg("--target-dir")
        .arg(plugin_target_dir())
        // rpt's flags for plugin builds, so the dependencies built for the plugin are reused.
        .env("CARGO_ENCODED_RUSTFLAGS", "-Cdebuginfo=0\u{1f}-Cstrip=debuginfo")
        .env("CARGO_INCREMENTAL", "0")
        .output()
        .expect("cargo runs");
    assert!(
        test.status.success(),
        "the scaffold's tests fail:\n{}",
        stderr_of(&test)
    );
}
