//! Generations and the archive end to end, on the demo recipe: promote, rollback, verify, diff of
//! one override, rebuilding an archived version, promotes killed with SIGKILL, concurrent promotes.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use rpt_testkit::Rng;
use rpt_tests::{build_native_i386, read_tree, rpt_binary, sha256_file, stderr_of, workspace_root};

/// A project folder of its own (recipes/, images/, gen/, archive/) holding a copy of the demo recipe.
struct Project {
    dir: tempfile::TempDir,
}

/// The demo's cb_add, which the override replaces.
const CB_ADD: &str = "f_004014b0";

/// Objects are cached across tests and runs, so only the first recompile compiles.
fn cache_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("archive-object-cache")
}

impl Project {
    fn new() -> Project {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = workspace_root();
        fs::create_dir_all(dir.path().join("recipes/overrides")).expect("mkdir");
        fs::create_dir_all(dir.path().join("images")).expect("mkdir");
        fs::copy(
            root.join("tests/guests/x86/demo.exe"),
            dir.path().join("images/demo.exe"),
        )
        .expect("copy image");
        fs::copy(
            root.join("recipes/overrides/demo_cb_add.c"),
            dir.path().join("recipes/overrides/demo_cb_add.c"),
        )
        .expect("copy override");
        let project = Project { dir };
        project.write_recipe("");
        project
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn recipe(&self) -> PathBuf {
        self.path().join("recipes/demo-x86.ron")
    }

    /// The demo recipe with its image in ../images and `overrides_and_sources` in place of `overrides: []`.
    fn write_recipe(&self, overrides_and_sources: &str) {
        let text = fs::read_to_string(workspace_root().join("recipes/demo-x86.ron")).expect("demo recipe");
        let text = text.replace("../tests/guests/x86/demo.exe", "../images/demo.exe");
        let text = if overrides_and_sources.is_empty() {
            text
        } else {
            assert!(text.contains("\n    overrides: [],\n"), "the demo recipe changed shape");
            text.replace("\n    overrides: [],\n", &format!("\n    {overrides_and_sources}\n"))
        };
        fs::write(self.recipe(), text).expect("write recipe");
    }

    /// Overrides cb_add by `demo_cb_add` from overrides/demo_cb_add.c, guarded by `original_sha256`.
    fn override_cb_add(&self, original_sha256: &str) {
        let source_hash = sha256_file(&self.path().join("recipes/overrides/demo_cb_add.c"));
        self.write_recipe(&format!(
            "overrides: [(function: 0x4014b0, c_symbol: \"demo_cb_add\", original_sha256: \"{original_sha256}\")],\n    \
             c_sources: [(path: \"overrides/demo_cb_add.c\", sha256: \"{source_hash}\")],"
        ));
    }

    fn rpt(&self, args: &[&str]) -> Output {
        Command::new(rpt_binary())
            .args(args)
            .current_dir(self.path())
            .env("CI", "1")
            .env("RPT_CACHE_DIR", cache_dir())
            .output()
            .expect("rpt starts")
    }

    fn rpt_ok(&self, args: &[&str]) -> Output {
        let out = self.rpt(args);
        assert!(
            out.status.success(),
            "rpt {} failed:\n{}{}",
            args.join(" "),
            String::from_utf8_lossy(&out.stdout),
            stderr_of(&out)
        );
        out
    }

    fn recompile(&self) -> PathBuf {
        self.recompile_with(&[])
    }

    /// Recompiles the recipe with extra flags (`--host aarch64`); returns the generation directory.
    fn recompile_with(&self, flags: &[&str]) -> PathBuf {
        let args: Vec<&str> = ["recompile", "recipes/demo-x86.ron"]
            .into_iter()
            .chain(flags.iter().copied())
            .collect();
        generation_of(self.path(), &self.rpt_ok(&args))
    }

    fn archive(&self) -> PathBuf {
        self.path().join("archive/demo-x86")
    }

    fn versions(&self) -> Vec<String> {
        let mut out: Vec<String> = fs::read_dir(self.archive())
            .map(|entries| {
                entries
                    .flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|n| n.starts_with('v'))
                    .collect()
            })
            .unwrap_or_default();
        out.sort_by_key(|n| n[1..].parse::<u32>().unwrap_or(0));
        out
    }

    fn current(&self) -> Option<String> {
        fs::read_to_string(self.archive().join("CURRENT")).ok()
    }
}

/// The generation a recompile or run names in its summary, in `project`.
fn generation_of(project: &Path, out: &Output) -> PathBuf {
    let stderr = stderr_of(out);
    let line = stderr
        .lines()
        .find_map(|l| l.trim().strip_prefix("generation: "))
        .unwrap_or_else(|| panic!("no generation line:\n{stderr}"));
    // rpt names it as it was reached, relative to the project folder it ran in.
    project.join(line)
}

fn stdout_of(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Files with their bytes, by relative path.
type Tree = Vec<(String, Vec<u8>)>;

/// Checks, independently of rpt's own verify, that the archived version at `version` is a complete
/// copy of the generation at `generation`: the same files with the same bytes (the object cache
/// left out), plus `manifest.sha256` holding the manifest's hash.
fn assert_complete_copy(version: &Path, generation: &Path) {
    let expected: Vec<(String, Vec<u8>)> = read_tree(generation)
        .into_iter()
        .filter(|(p, _)| !p.starts_with("obj/"))
        .collect();
    let mut found = read_tree(version);
    let sidecar = found
        .iter()
        .position(|(p, _)| p == "manifest.sha256")
        .unwrap_or_else(|| panic!("{} has no manifest.sha256", version.display()));
    let (_, hash) = found.remove(sidecar);
    let names = |t: &[(String, Vec<u8>)]| t.iter().map(|(p, _)| p.clone()).collect::<Vec<_>>();
    assert_eq!(
        names(&found),
        names(&expected),
        "{} is not a complete copy",
        version.display()
    );
    assert!(found == expected, "{} differs from its generation", version.display());
    assert_eq!(
        String::from_utf8_lossy(&hash),
        format!("{}\n", sha256_file(&generation.join("manifest.ron")))
    );
}

fn make_writable(path: &Path) {
    let mut permissions = fs::metadata(path).expect("metadata").permissions();
    #[allow(clippy::permissions_set_readonly_false)]
    permissions.set_readonly(false);
    fs::set_permissions(path, permissions).expect("chmod");
}

#[test]
fn promote_rollback_verify_and_a_diff_that_shows_exactly_the_overridden_function() {
    let p = Project::new();
    let plain = p.recompile();
    let out = p.rpt_ok(&["promote", "recipes/demo-x86.ron"]);
    assert!(stderr_of(&out).contains("CURRENT: v1"), "{}", stderr_of(&out));
    assert_eq!(p.current().as_deref(), Some("v1\n"));

    // An override guarded by the wrong hash is refused, naming the recipe, the function and both hashes.
    let zeros = "0".repeat(64);
    p.override_cb_add(&zeros);
    let out = p.rpt(&["recompile", "recipes/demo-x86.ron"]);
    let stderr = stderr_of(&out);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("recipes/demo-x86.ron") && stderr.contains(&format!("override of {CB_ADD} by `demo_cb_add`")),
        "{stderr}"
    );
    let actual = stderr
        .split("original bytes have sha256 ")
        .nth(1)
        .and_then(|rest| rest.get(..64))
        .unwrap_or_else(|| panic!("no hash in:\n{stderr}"))
        .to_string();
    assert!(stderr.contains(&format!("expects {zeros}")), "{stderr}");

    // With the right hash the override is built in, and the program prints exactly what it did.
    p.override_cb_add(&actual);
    let overridden = p.recompile();
    assert_ne!(plain, overridden, "a new recipe digest makes a new generation");
    let run = |g: &Path| Command::new(g.join("bin/demo-x86")).output().expect("binary runs");
    let (before, after) = (run(&plain), run(&overridden));
    assert!(!before.stdout.is_empty() && before.status.success());
    assert_eq!(
        before.stdout, after.stdout,
        "the exact override must not change the output"
    );
    let out = p.rpt_ok(&["promote", "recipes/demo-x86.ron"]);
    assert!(stderr_of(&out).contains("CURRENT: v1 -> v2"), "{}", stderr_of(&out));
    assert_eq!(p.versions(), ["v1", "v2"]);

    let list = stdout_of(&p.rpt_ok(&["archive", "list"]));
    assert!(
        list.contains("  v1 ") && list.contains("* v2 ") && list.contains("CURRENT"),
        "{list}"
    );
    let show = stdout_of(&p.rpt_ok(&["archive", "show", "v2"]));
    assert!(show.contains("override 0x4014b0 \"demo_cb_add\""), "{show}");

    // The diff names exactly the overridden function, with its C and IR, and the recipe change.
    let diff = stdout_of(&p.rpt_ok(&["archive", "diff", "v1", "v2"]));
    assert!(diff.contains("functions: 1 changed, 0 added, 0 removed"), "{diff}");
    let function_lines: Vec<&str> = diff
        .lines()
        .filter(|l| {
            l.trim_start().starts_with("changed f_")
                || l.trim_start().starts_with("added f_")
                || l.trim_start().starts_with("removed f_")
        })
        .collect();
    assert_eq!(function_lines, [format!("  changed {CB_ADD} (C, IR)")], "{diff}");
    assert!(
        diff.contains("+\t__attribute__((musttail)) return demo_cb_add(c);"),
        "{diff}"
    );
    assert!(diff.contains("+; replaced by the C function `demo_cb_add`"), "{diff}");
    assert!(diff.contains("added   src/overrides/demo_cb_add.c"), "{diff}");
    for field in ["recipe_digest:", "recipe_form:", "compile_units:"] {
        assert!(diff.contains(field), "{field} missing from:\n{diff}");
    }
    assert!(!diff.contains("compiler:") && !diff.contains("image_sha256:"), "{diff}");

    // Rollback, roll forward, rollback: CURRENT moves, nothing is deleted.
    p.rpt_ok(&["rollback", "recipes/demo-x86.ron"]);
    assert_eq!(p.current().as_deref(), Some("v1\n"));
    let out = p.rpt(&["rollback", "recipes/demo-x86.ron"]);
    assert!(
        stderr_of(&out).contains("v1 is the oldest version"),
        "{}",
        stderr_of(&out)
    );
    p.rpt_ok(&["rollback", "recipes/demo-x86.ron", "--to", "v2"]);
    assert_eq!(p.current().as_deref(), Some("v2\n"));
    p.rpt_ok(&["rollback", "recipes/demo-x86.ron"]);
    assert_eq!(p.current().as_deref(), Some("v1\n"));
    assert_eq!(p.versions(), ["v1", "v2"]);
    assert_complete_copy(&p.archive().join("v1"), &plain);
    assert_complete_copy(&p.archive().join("v2"), &overridden);

    // verify: clean, then a flipped byte, a missing file and an extra file, each named.
    let out = p.rpt_ok(&["archive", "verify"]);
    assert!(stdout_of(&out).contains("demo-x86/v1: ok") && stdout_of(&out).contains("demo-x86/v2: ok"));
    let v1 = p.archive().join("v1");
    let shard = v1.join("src/shard_0002.c");
    make_writable(&shard);
    let mut bytes = fs::read(&shard).expect("read shard");
    bytes[100] ^= 0x20;
    fs::write(&shard, bytes).expect("flip a byte");
    make_writable(&v1.join("bin/demo-x86"));
    fs::remove_file(v1.join("bin/demo-x86")).expect("remove binary");
    fs::write(v1.join("src/notes.txt"), "not generated").expect("extra file");
    let out = p.rpt(&["archive", "verify"]);
    let report = stdout_of(&out);
    assert_eq!(out.status.code(), Some(1), "{report}");
    assert!(report.contains("demo-x86/v1: 3 problem(s)"), "{report}");
    assert!(report.contains("missing: bin/demo-x86"), "{report}");
    assert!(report.contains("differs: src/shard_0002.c"), "{report}");
    assert!(report.contains("extra: src/notes.txt"), "{report}");
    assert!(report.contains("demo-x86/v2: ok"), "{report}");
    // A damaged version cannot become current.
    let out = p.rpt(&["rollback", "recipes/demo-x86.ron", "--to", "v1"]);
    assert!(!out.status.success() && stderr_of(&out).contains("missing: bin/demo-x86"));

    // gc removes the generations the archive holds intact (v2's), never a version.
    let out = p.rpt_ok(&["archive", "gc", "--gen-dir", "gen"]);
    let gc = stdout_of(&out);
    assert!(gc.contains("kept every promoted version (v1, v2)"), "{gc}");
    assert!(!overridden.exists() && plain.exists(), "{gc}");
    assert_eq!(p.versions(), ["v1", "v2"]);
}

/// Issue 15: `recompile --host H` named its generation after the recipe with H in place (and the
/// recipe's host_cpu and l1i dropped), but `promote --host H` after the recipe as written with only
/// the host's name swapped, so promote found no generation. Now both take the same flags and one
/// function names the generation: for each foreign host (and with --host-cpu and --passes too), the
/// generation recompile writes runs under qemu-user, prints what the demo prints natively on i386,
/// and is the one promote archives.
#[test]
fn a_generation_for_another_host_runs_and_promotes_with_the_same_flags() {
    let p = Project::new();
    let scratch = tempfile::tempdir().expect("tempdir");
    let oracle_exe = scratch.path().join("demo-i386");
    build_native_i386(&workspace_root().join("tests/guests/x86/demo.c"), &oracle_exe);
    let oracle = Command::new(&oracle_exe).output().expect("the native oracle runs");
    assert!(!oracle.stdout.is_empty(), "the oracle printed nothing");
    let flag_sets: [&[&str]; 3] = [
        &["--host", "aarch64"],
        &["--host", "loongarch64"],
        &["--host", "aarch64", "--host-cpu", "cortex-a53", "--passes", "flag-abi"],
    ];
    for (index, flags) in flag_sets.iter().enumerate() {
        let with_flags = |command: &'static str| -> Vec<&str> {
            [command, "recipes/demo-x86.ron"]
                .into_iter()
                .chain(flags.iter().copied())
                .collect()
        };
        let generation = p.recompile_with(flags);
        let host = flags[1];
        let name = generation.file_name().expect("a name").to_string_lossy().into_owned();
        assert!(name.ends_with(&format!("-{host}")), "{flags:?}: {name}");

        let run = p.rpt(&with_flags("run"));
        let stderr = stderr_of(&run);
        assert_eq!(
            generation_of(p.path(), &run),
            generation,
            "{flags:?}: run built another generation"
        );
        assert_eq!(
            stdout_of(&run),
            String::from_utf8_lossy(&oracle.stdout),
            "{flags:?}:\n{stderr}"
        );
        assert_eq!(run.status.code(), oracle.status.code(), "{flags:?}:\n{stderr}");

        let promoted = p.rpt_ok(&with_flags("promote"));
        let stderr = stderr_of(&promoted);
        let version = format!("v{}", index + 1);
        assert!(
            stderr.contains(&format!(
                "promoted {}",
                generation.strip_prefix(p.path()).expect("in the project").display()
            )),
            "{flags:?}: promote took another generation:\n{stderr}"
        );
        assert_complete_copy(&p.archive().join(&version), &generation);
        let listed = stdout_of(&p.rpt_ok(&["archive", "list"]));
        assert!(listed.contains(&format!("{version}    {name}")), "{listed}");
    }
    assert_eq!(p.current().as_deref(), Some("v3\n"));
}

#[test]
fn rebuilding_an_archived_version_twice_gives_identical_binaries_without_the_image() {
    let p = Project::new();
    let generation = p.recompile();
    p.rpt_ok(&["promote", "recipes/demo-x86.ron"]);
    // Nothing but the archive is needed: no image, no recipe, no generation in gen/.
    fs::remove_file(p.path().join("images/demo.exe")).expect("remove image");
    fs::remove_file(p.recipe()).expect("remove recipe");
    fs::remove_dir_all(&generation).expect("remove generation");
    let recorded = fs::read(p.archive().join("v1/bin/demo-x86")).expect("archived binary");
    let mut rebuilt = Vec::new();
    for out_dir in ["rebuild-a", "rebuild-b"] {
        let out = p.rpt_ok(&["build", "archive/demo-x86/v1", "--no-cache", "--out", out_dir]);
        let stderr = stderr_of(&out);
        assert!(stderr.contains("identical to the recorded binary"), "{stderr}");
        let (compiled, reused) = rpt_tests::object_counts(&stderr);
        assert!(compiled > 0 && reused == 0, "--no-cache compiles everything:\n{stderr}");
        rebuilt.push(fs::read(p.path().join(out_dir).join("bin/demo-x86")).expect("rebuilt binary"));
    }
    assert!(rebuilt[0] == rebuilt[1], "two rebuilds differ");
    assert!(rebuilt[0] == recorded, "the rebuild differs from the archived binary");
    // The default output folder is gen/<recipe>/rebuild-vN beside the archive.
    p.rpt_ok(&["build", "archive/demo-x86/v1"]);
    assert!(p.path().join("gen/demo-x86/rebuild-v1/bin/demo-x86").is_file());
}

/// `rpt promote` of the project's demo recipe started in the background, sleeping `delay_ms` after
/// each file it copies, with its output sent to `output()`.
fn slow_promote(p: &Project, delay_ms: u32, output: fn() -> Stdio) -> std::process::Child {
    Command::new(rpt_binary())
        .args(["promote", "recipes/demo-x86.ron"])
        .current_dir(p.path())
        .env("CI", "1")
        .env("RPT_TEST_PROMOTE_DELAY_MS", delay_ms.to_string())
        .stdout(output())
        .stderr(output())
        .spawn()
        .expect("rpt starts")
}

#[test]
fn a_promote_killed_at_random_points_never_leaves_a_partial_version_nor_loses_one() {
    const TRIALS: usize = 50;
    let p = Project::new();
    let generation = p.recompile();
    // Each of the ~17 files takes at least 6 ms to copy, so the copy is a wide window.
    let spawn = || slow_promote(&p, 6, Stdio::null);
    // One whole promote, timed, so the kills spread over its real length on this machine.
    let started = std::time::Instant::now();
    assert!(spawn().wait().expect("wait").success(), "an unkilled promote fails");
    let whole = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX).max(50);
    eprintln!("a whole promote takes {whole} ms here");
    let mut rng = Rng(0x0005_eed0_fa11_c0de);
    let (mut interrupted, mut completed) = (0, 0);
    let mut known = p.versions();
    // The files of every temporary version directory: what an interrupted copy leaves.
    let partial_copies = || -> Vec<(String, Tree)> {
        let mut out: Vec<_> = fs::read_dir(p.archive())
            .expect("archive dir")
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with(".tmp-v"))
            .map(|e| (e.file_name().to_string_lossy().into_owned(), read_tree(&e.path())))
            .filter(|(_, files)| !files.is_empty())
            .collect();
        out.sort();
        out
    };
    for trial in 0..TRIALS {
        let before = partial_copies();
        let mut child = spawn();
        let delay = rng.below(whole + whole / 10);
        std::thread::sleep(Duration::from_millis(delay));
        // Child::kill sends SIGKILL on Unix: no handler runs, no cleanup happens.
        let _ = child.kill();
        let status = child.wait().expect("wait");

        let versions = p.versions();
        for old in &known {
            assert!(versions.contains(old), "trial {trial} (kill at {delay} ms) lost {old}");
        }
        for v in &versions {
            assert_complete_copy(&p.archive().join(v), &generation);
        }
        let current = p.current().unwrap_or_else(|| panic!("trial {trial}: CURRENT is gone"));
        assert!(
            versions.contains(&current.trim().to_string()),
            "trial {trial}: CURRENT names {current:?}, not one of {versions:?}"
        );
        // A partial copy that this promote wrote: this kill landed in the copy.
        let after = partial_copies();
        let leftovers = !after.is_empty() && after != before;
        if leftovers {
            interrupted += 1;
        }
        if versions.len() > known.len() {
            completed += 1;
        }
        eprintln!(
            "trial {trial}: killed after {delay} ms, {status}, versions {versions:?}, left a temp dir: {leftovers}"
        );
        // Every other trial, gc clears the leftovers (the others leave them for the next promote to
        // clear); gc never removes a version.
        if trial % 2 == 0 {
            p.rpt_ok(&["archive", "gc"]);
            assert_eq!(p.versions(), versions, "gc removed a version");
        }
        known = versions;
    }
    eprintln!("{TRIALS} trials: {interrupted} killed mid-copy, {completed} made a version");
    assert!(
        interrupted >= 5,
        "only {interrupted} of {TRIALS} kills landed in the copy; the test is not testing"
    );
    // The next promote clears what the killed ones left and takes the next number.
    p.rpt_ok(&["promote", "recipes/demo-x86.ron"]);
    let versions = p.versions();
    assert_eq!(versions.len(), known.len() + 1);
    assert!(
        !fs::read_dir(p.archive())
            .expect("archive dir")
            .flatten()
            .any(|e| e.file_name().to_string_lossy().starts_with(".tmp-"))
    );
    let out = p.rpt_ok(&["archive", "verify"]);
    assert!(!stdout_of(&out).contains("problem"), "{}", stdout_of(&out));
}

#[test]
fn two_concurrent_promotes_make_two_complete_versions() {
    let p = Project::new();
    let generation = p.recompile();
    let spawn = || slow_promote(&p, 15, Stdio::piped);
    let (first, second) = (spawn(), spawn());
    let (first_pid, second_pid) = (first.id(), second.id());
    let (a, b) = (
        first.wait_with_output().expect("wait"),
        second.wait_with_output().expect("wait"),
    );
    assert!(a.status.success(), "{}", stderr_of(&a));
    assert!(b.status.success(), "{}", stderr_of(&b));
    assert_eq!(p.versions(), ["v1", "v2"]);
    for v in ["v1", "v2"] {
        assert_complete_copy(&p.archive().join(v), &generation);
    }
    assert_eq!(p.current().as_deref(), Some("v2\n"));
    // The one that came second waited, and said for whom.
    let waited = [(stderr_of(&a), second_pid), (stderr_of(&b), first_pid)]
        .iter()
        .any(|(stderr, other)| stderr.contains(&format!("is locked by rpt process {other}")));
    assert!(
        waited,
        "neither promote reported the lock:\n{}\n{}",
        stderr_of(&a),
        stderr_of(&b)
    );
}
