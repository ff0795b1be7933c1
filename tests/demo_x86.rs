//! The bundled demo: recompiled from its PE, it prints exactly what the same source prints natively on i386.

use std::path::Path;
use std::process::Command;

use rpt_tests::{build_native_i386, object_counts, read_tree, rpt_in, stderr_of, workspace_root};

const RECIPE: &str = "recipes/demo-x86.ron";

fn native_oracle(dir: &Path) -> std::process::Output {
    let exe = dir.join("demo-i386");
    build_native_i386(&workspace_root().join("tests/guests/x86/demo.c"), &exe);
    Command::new(&exe).output().expect("native oracle runs")
}

#[test]
fn demo_output_is_byte_identical_to_native_i386() {
    let dir = tempfile::tempdir().expect("tempdir");
    let oracle = native_oracle(dir.path());
    assert!(!oracle.stdout.is_empty(), "the oracle printed nothing");

    let gen_dir = dir.path().join("gen");
    let cache = dir.path().join("cache");
    let out = rpt_in("run", RECIPE, &gen_dir, &cache, &[]);
    let stderr = stderr_of(&out);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&oracle.stdout),
        "recompiled output differs from native i386; rpt said:\n{stderr}"
    );
    assert_eq!(out.stdout, oracle.stdout);
    assert_eq!(
        out.status.code(),
        oracle.status.code(),
        "exit codes differ; rpt said:\n{stderr}"
    );
}

#[test]
fn recompiling_twice_gives_identical_sources_and_compiles_nothing_new() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cache = dir.path().join("cache");
    let run = |gen_dir: &Path| {
        let out = rpt_in("recompile", RECIPE, gen_dir, &cache, &[]);
        let stderr = stderr_of(&out);
        assert!(out.status.success(), "rpt recompile failed:\n{stderr}");
        stderr
    };
    let first_gen = dir.path().join("first");
    let second_gen = dir.path().join("second");
    let first = run(&first_gen);
    let second = run(&second_gen);
    let (compiled, reused) = object_counts(&first);
    assert!(compiled > 0, "a fresh cache must compile:\n{first}");
    assert_eq!(reused, 0, "{first}");
    assert_eq!(
        object_counts(&second),
        (0, compiled),
        "the second run must reuse every object:\n{second}"
    );

    // Same inputs, same bytes: sources, listing, manifest and binary alike.
    let first_tree = read_tree(&first_gen);
    let second_tree = read_tree(&second_gen);
    assert!(
        first_tree.iter().any(|(p, _)| p.ends_with(".c")),
        "no C sources generated"
    );
    let names = |t: &[(String, Vec<u8>)]| t.iter().map(|(p, _)| p.clone()).collect::<Vec<_>>();
    assert_eq!(names(&first_tree), names(&second_tree));
    for ((path, a), (_, b)) in first_tree.iter().zip(&second_tree) {
        if path.contains("/obj/") {
            continue;
        }
        assert!(a == b, "{path} differs between two runs on the same inputs");
    }
}

#[test]
fn two_runs_of_one_recipe_into_one_gen_dir_take_turns() {
    // Each would rewrite the same src/, obj/ and bin/; the generation lock makes the second wait.
    let dir = tempfile::tempdir().expect("tempdir");
    let (gen_dir, cache) = (dir.path().join("gen"), dir.path().join("cache"));
    let runs: Vec<_> = (0..2)
        .map(|_| {
            let (gen_dir, cache) = (gen_dir.clone(), cache.clone());
            std::thread::spawn(move || rpt_in("run", "recipes/demo-x86.ron", &gen_dir, &cache, &[]))
        })
        .collect();
    let outputs: Vec<_> = runs.into_iter().map(|r| r.join().expect("thread")).collect();
    for out in &outputs {
        assert!(out.status.success(), "a concurrent run failed:\n{}", stderr_of(out));
    }
    assert_eq!(outputs[0].stdout, outputs[1].stdout);
}
