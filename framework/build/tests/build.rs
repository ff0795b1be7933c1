//! The build crate against the real clang-19: cache hits and misses, errors that show the
//! compiler's message, reproducible binaries and running what was built.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use rpt_api::{CompilerSettings, Runner};
use rpt_build::{BuildError, CompileJob, ObjectCache, Toolchain};

fn settings(extra: &[&str]) -> CompilerSettings {
    let mut cflags: Vec<String> = ["-O2", "-gline-tables-only", "-Wall", "-Wextra"]
        .map(String::from)
        .to_vec();
    cflags.extend(extra.iter().map(|s| s.to_string()));
    CompilerSettings {
        cc: "clang-19".into(),
        cflags,
        ldflags: vec!["-fuse-ld=lld".into()],
    }
}

fn toolchain(extra: &[&str]) -> Toolchain {
    Toolchain::probe(settings(extra)).unwrap_or_else(|e| panic!("{e}"))
}

/// Writes a two-file program under `dir/src` and returns its jobs.
fn program(dir: &Path) -> Vec<CompileJob> {
    let src = dir.join("src");
    fs::create_dir_all(src.join("lib")).expect("create src");
    fs::write(src.join("answer.h"), "int answer(int x);\n").expect("write header");
    fs::write(
        src.join("main.c"),
        "#include <stdio.h>\n#include \"answer.h\"\nint main(int argc, char **argv) {\n\t(void)argv;\n\tprintf(\"%d\\n\", answer(argc));\n\treturn 3;\n}\n",
    )
    .expect("write main");
    fs::write(
        src.join("lib/answer.c"),
        "#include \"answer.h\"\nint answer(int x) { return 41 + x; }\n",
    )
    .expect("write lib");
    vec![
        CompileJob {
            name: "main".into(),
            source: src.join("main.c"),
            key_extra: "header-hash-1".into(),
        },
        CompileJob {
            name: "lib/answer".into(),
            source: src.join("lib/answer.c"),
            key_extra: "header-hash-1".into(),
        },
    ]
}

fn compile(
    tc: &Toolchain,
    cache: &ObjectCache,
    jobs: &[CompileJob],
    dir: &Path,
) -> Result<rpt_build::CompileReport, BuildError> {
    rpt_build::compile_all(tc, cache, jobs, &[dir.join("src")], &dir.join("obj"), &|_| {})
}

#[test]
fn a_missing_compiler_is_named_with_the_install_hint() {
    let mut s = settings(&[]);
    s.cc = "clang-does-not-exist".into();
    let err = Toolchain::probe(s).expect_err("no such compiler");
    assert!(matches!(err, BuildError::CompilerMissing { .. }), "{err:?}");
    let msg = err.to_string();
    assert!(msg.contains("`clang-does-not-exist`"), "{msg}");
    assert!(msg.contains("apt-get install clang-19 lld-19"), "{msg}");
}

#[test]
fn content_hashes_are_sha256() {
    assert_eq!(
        rpt_build::content_hash(b"abc"),
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
}

#[test]
fn the_identity_names_the_compiler_version() {
    let tc = toolchain(&[]);
    assert!(tc.identity().starts_with("clang-19: "), "{}", tc.identity());
    assert!(tc.identity().contains("clang version 19"), "{}", tc.identity());
    assert!(!tc.identity().contains("InstalledDir"), "{}", tc.identity());
}

#[test]
fn the_second_compile_reuses_and_any_input_change_recompiles() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let cache = ObjectCache::open(dir.path().join("cache")).expect("open cache");
    let mut jobs = program(dir.path());
    let tc = toolchain(&[]);

    let heard = Mutex::new(Vec::new());
    let first = rpt_build::compile_all(
        &tc,
        &cache,
        &jobs,
        &[dir.path().join("src")],
        &dir.path().join("obj"),
        &|m| heard.lock().expect("lock").push(m.to_string()),
    )
    .expect("first compile");
    assert_eq!((first.compiled, first.reused), (2, 0));
    assert_eq!(
        first.objects,
        vec![dir.path().join("obj/main.o"), dir.path().join("obj/lib_answer.o")]
    );
    assert!(first.objects.iter().all(|o| o.is_file()));
    let mut heard = heard.into_inner().expect("lock");
    heard.sort();
    assert_eq!(heard, vec!["compiled lib/answer", "compiled main"]);

    let second = compile(&tc, &cache, &jobs, dir.path()).expect("second compile");
    assert_eq!((second.compiled, second.reused), (0, 2));
    assert_eq!(first.objects, second.objects);

    // A different flag is a different object.
    let flagged = compile(&toolchain(&["-DEXTRA=1"]), &cache, &jobs, dir.path()).expect("compile with a flag");
    assert_eq!((flagged.compiled, flagged.reused), (2, 0));

    // So is a different header hash for one job...
    jobs[0].key_extra = "header-hash-2".into();
    let rekeyed = compile(&tc, &cache, &jobs, dir.path()).expect("compile with new key_extra");
    assert_eq!((rekeyed.compiled, rekeyed.reused), (1, 1));

    // ...and different source text.
    fs::write(
        dir.path().join("src/lib/answer.c"),
        "#include \"answer.h\"\nint answer(int x) { return 40 + x; }\n",
    )
    .expect("edit");
    let edited = compile(&tc, &cache, &jobs, dir.path()).expect("compile after edit");
    assert_eq!((edited.compiled, edited.reused), (1, 1));

    // Nothing is left behind in the cache's temporary directory.
    assert_eq!(fs::read_dir(dir.path().join("cache/tmp")).expect("tmp").count(), 0);
}

#[test]
fn compile_errors_show_the_file_and_the_compiler_message() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let cache = ObjectCache::open(dir.path().join("cache")).expect("open cache");
    let mut jobs = program(dir.path());
    fs::write(
        dir.path().join("src/broken.c"),
        "int f(void) { return undeclared_thing; }\n",
    )
    .expect("write");
    jobs.push(CompileJob {
        name: "broken".into(),
        source: dir.path().join("src/broken.c"),
        key_extra: String::new(),
    });
    let err = compile(&toolchain(&[]), &cache, &jobs, dir.path()).expect_err("broken source");
    let msg = err.to_string();
    assert!(matches!(err, BuildError::Compile { .. }), "{err:?}");
    assert!(msg.contains("broken.c"), "{msg}");
    assert!(msg.contains("undeclared_thing"), "{msg}");
}

#[test]
fn duplicate_object_names_are_refused() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let cache = ObjectCache::open(dir.path().join("cache")).expect("open cache");
    let mut jobs = program(dir.path());
    jobs.push(jobs[0].clone());
    let err = compile(&toolchain(&[]), &cache, &jobs, dir.path()).expect_err("duplicate");
    assert!(matches!(err, BuildError::DuplicateJob(ref n) if n == "main"), "{err:?}");
}

fn build_in(dir: &Path) -> PathBuf {
    let cache = ObjectCache::open(dir.join("cache")).expect("open cache");
    let jobs = program(dir);
    let tc = toolchain(&[]);
    let report = compile(&tc, &cache, &jobs, dir).expect("compile");
    let binary = dir.join("bin/prog");
    rpt_build::link(&tc, &report.objects, &binary).expect("link");
    binary
}

#[test]
fn builds_are_reproducible_across_directories() {
    let (a, b) = (
        tempfile::tempdir().expect("tempdir"),
        tempfile::tempdir().expect("tempdir"),
    );
    let (bin_a, bin_b) = (build_in(a.path()), build_in(b.path()));
    let (bytes_a, bytes_b) = (fs::read(&bin_a).expect("read"), fs::read(&bin_b).expect("read"));
    assert!(
        bytes_a == bytes_b,
        "two builds of the same sources in different directories differ"
    );
    let text = String::from_utf8_lossy(&bytes_a);
    assert!(
        !text.contains(a.path().to_string_lossy().as_ref()),
        "the binary names its build directory"
    );
}

#[test]
fn built_binaries_run_with_arguments_and_report_their_status() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let binary = build_in(dir.path());
    let out = rpt_build::run_captured(&Runner::Native, &binary, &["x".into(), "y".into()]).expect("run");
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "44\n");
    let status = rpt_build::run(&Runner::Native, &binary, &[], &[]).expect("run");
    assert_eq!(status.code(), Some(3));
    // An emulator runner puts the emulator first; `env` stands in for qemu here.
    let emulator = Runner::Emulator {
        program: "env".into(),
        args: vec!["-u".into(), "NOTHING".into()],
    };
    let out = rpt_build::run_captured(&emulator, &binary, &[]).expect("run under env");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "42\n");
    let err = rpt_build::run(&Runner::Native, &dir.path().join("missing"), &[], &[]).expect_err("no binary");
    assert!(matches!(err, BuildError::Run { .. }), "{err:?}");
}

#[test]
fn link_errors_show_the_linker_message() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let cache = ObjectCache::open(dir.path().join("cache")).expect("open cache");
    let jobs = program(dir.path());
    let tc = toolchain(&[]);
    let report = compile(&tc, &cache, &jobs[..1], dir.path()).expect("compile main only");
    let output = dir.path().join("bin/prog");
    let err = rpt_build::link(&tc, &report.objects, &output).expect_err("answer is undefined");
    assert!(err.to_string().contains("answer"), "{err}");
    assert!(!output.exists(), "a failed link left a binary behind");
}
