//! The msvcrt samples (tests/guests/x86/msvcrt): each recompiled program must print exactly what
//! the PE prints under Wine and what the same source prints when built natively for i386.
//!
//! Wine and the native build are oracles nobody here wrote. Where msvcrt and glibc legitimately
//! differ the comparison with the native build says how (see [`NativeOutput`]); Wine is always
//! compared byte for byte, exit status included.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::Mutex;

use rpt_testkit::process_scratch as scratch;

use rpt_tests::{rpt_binary, stderr_of, workspace_root};

/// How the native build's output relates to the PE's.
#[derive(Clone, Copy, Debug)]
enum NativeOutput {
    /// Byte for byte the same.
    Same,
    /// The PE keeps stdout in text mode, where msvcrt writes each "\n" as "\r\n".
    CrLfLineEnds,
    /// msvcrt prints at least three exponent digits ("1e+005"), glibc two ("1e+05").
    ThreeDigitExponents,
}

/// One sample: how it is run and what its oracles are.
struct Sample {
    /// The name in tests/guests/x86/msvcrt (NAME.c, NAME.exe).
    name: &'static str,
    /// The recipe, relative to the workspace root.
    recipe: &'static str,
    args: &'static [&'static str],
    stdin: &'static [u8],
    env: &'static [(&'static str, &'static str)],
    native: NativeOutput,
    exit_code: i32,
}

const INT_WORK: Sample = Sample {
    name: "int_work",
    recipe: "recipes/msvcrt-int-work.ron",
    args: &["one", "two"],
    stdin: b"",
    env: &[],
    native: NativeOutput::CrLfLineEnds,
    exit_code: 7,
};

const STDIO_STRINGS: Sample = Sample {
    name: "stdio_strings",
    recipe: "recipes/msvcrt-stdio-strings.ron",
    args: &["alpha", "two words"],
    stdin: b"10 apples and\n  20 pears\n\n-5 x y z\n",
    env: &[("RPT_SAMPLE_NAME", "rpt")],
    native: NativeOutput::Same,
    exit_code: 0,
};

const PRINTF_FLOAT: Sample = Sample {
    name: "printf_float",
    recipe: "recipes/msvcrt-printf-float.ron",
    args: &[],
    stdin: b"",
    env: &[],
    native: NativeOutput::ThreeDigitExponents,
    exit_code: 0,
};

const PRINTF_QUIRKS: Sample = Sample {
    name: "printf_quirks",
    recipe: "recipes/msvcrt-printf-quirks.ron",
    args: &[],
    stdin: b"",
    env: &[],
    native: NativeOutput::Same,
    exit_code: 0,
};

const QSORT_MINGW: Sample = Sample {
    name: "qsort_mingw",
    recipe: "recipes/msvcrt-qsort-mingw.ron",
    args: &[],
    stdin: b"",
    env: &[],
    native: NativeOutput::Same,
    exit_code: 3,
};

/// mandelbrot at the 64-bit precision mingw's start-up sets; `%.17g` of a tiny value shows
/// msvcrt's three exponent digits.
const X87_MANDEL: Sample = Sample {
    name: "x87_mandel",
    recipe: "recipes/x87-mandel.ron",
    args: &[],
    stdin: b"",
    env: &[],
    native: NativeOutput::ThreeDigitExponents,
    exit_code: 0,
};

/// n-body, a matrix product and an FFT, printed by mingw's own (x87-using) printf.
const X87_PHYSICS: Sample = Sample {
    name: "x87_physics",
    recipe: "recipes/x87-physics.ron",
    args: &[],
    stdin: b"",
    env: &[],
    native: NativeOutput::Same,
    exit_code: 0,
};

/// A ray tracer run at 53-bit precision (it loads the control word itself), with msvcrt's sqrt.
const X87_RAY53: Sample = Sample {
    name: "x87_ray53",
    recipe: "recipes/x87-ray53.ron",
    args: &[],
    stdin: b"",
    env: &[],
    native: NativeOutput::Same,
    exit_code: 0,
};

/// The ray tracer again, recompiled in the fast x87 value model (doubles): exact at the 53-bit
/// precision it sets, so it prints what Wine and the native build print.
const X87_RAY53_F64: Sample = Sample {
    name: "x87_ray53",
    recipe: "recipes/x87-ray53-f64.ron",
    ..X87_RAY53
};

/// mandelbrot in the fast x87 value model, which cannot be exact at mingw's 64-bit precision.
const X87_MANDEL_F64: Sample = Sample {
    name: "x87_mandel",
    recipe: "recipes/x87-mandel-f64.ron",
    ..X87_MANDEL
};

fn samples_dir() -> PathBuf {
    workspace_root().join("tests/guests/x86/msvcrt")
}

/// Runs a program with the sample's arguments, environment and stdin, in `cwd`.
fn run_with_input(mut cmd: Command, sample: &Sample, cwd: &Path) -> Output {
    cmd.args(sample.args)
        .current_dir(cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in sample.env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().unwrap_or_else(|e| panic!("starting {cmd:?}: {e}"));
    if let Some(mut stdin) = child.stdin.take() {
        stdin.write_all(sample.stdin).expect("write stdin");
    }
    child.wait_with_output().expect("wait for the program")
}

/// A bytecode interpreter dispatching by GCC's computed goto, and functions reached only through
/// a table of function pointers and their neighbours' tail jumps.
const DISPATCH: Sample = Sample {
    name: "dispatch",
    recipe: "recipes/msvcrt-dispatch.ron",
    args: &[],
    stdin: b"",
    env: &[],
    native: NativeOutput::CrLfLineEnds,
    exit_code: 0,
};

const SSE_FLOAT: Sample = Sample {
    name: "sse_float",
    recipe: "recipes/sse-float.ron",
    args: &[],
    stdin: b"",
    env: &[],
    native: NativeOutput::CrLfLineEnds,
    exit_code: 0,
};

/// The recompiled program's run: `rpt run` with the sandbox in a fresh directory. Each run has its
/// own generation directory (objects are shared through the cache): two tests run x87_mandel at the
/// same time, and two `rpt run`s writing one generation's src/ at once trip over each other.
fn run_rpt(sample: &Sample) -> (Output, PathBuf) {
    let sandbox = tempfile::tempdir_in(scratch()).expect("tempdir").keep();
    let gen_dir = tempfile::tempdir_in(scratch()).expect("tempdir");
    let mut cmd = Command::new(rpt_binary());
    cmd.arg("run")
        .arg(workspace_root().join(sample.recipe))
        .arg("--gen-dir")
        .arg(gen_dir.path())
        .arg("--cache-dir")
        .arg(scratch().join("cache"))
        .arg("--")
        .env("CI", "1")
        .env("RPT_SANDBOX", &sandbox);
    (run_with_input(cmd, sample, &sandbox), sandbox)
}

/// The PE under Wine. Every test of this process shares one prefix, made by the first run
/// (about 8 s); runs are serialised so that two first runs never race to make it.
fn run_wine(sample: &Sample) -> Output {
    run_wine_exe(&samples_dir().join(format!("{}.exe", sample.name)), sample)
}

/// `exe` under Wine, run as `sample` says.
fn run_wine_exe(exe: &Path, sample: &Sample) -> Output {
    static PREFIX: Mutex<Option<PathBuf>> = Mutex::new(None);
    let mut prefix = PREFIX.lock().unwrap_or_else(|e| e.into_inner());
    let dir = prefix.get_or_insert_with(|| scratch().join("wine-prefix")).clone();
    let cwd = tempfile::tempdir().expect("tempdir");
    let mut cmd = Command::new("wine");
    cmd.arg(exe)
        .env("WINEPREFIX", &dir)
        .env("WINEDEBUG", "-all")
        .env_remove("DISPLAY");
    let out = run_with_input(cmd, sample, cwd.path());
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("command not found"),
        "Wine is needed (scripts/install-deps.sh installs wine32:i386)"
    );
    out
}

/// The same source built natively for i386 by the sample's build script.
fn run_native(sample: &Sample) -> Output {
    let dir = tempfile::tempdir().expect("tempdir");
    let exe = dir.path().join(sample.name);
    rpt_testkit::run_tool(
        Command::new(samples_dir().join("build.sh"))
            .args(["oracle", sample.name])
            .arg(&exe),
        b"",
        "building the native oracle needs gcc-12-multilib",
    );
    let cwd = tempfile::tempdir().expect("tempdir");
    run_with_input(Command::new(&exe), sample, cwd.path())
}

/// glibc's two-digit exponents widened to msvcrt's three ("e+05" to "e+005"): an `e` or `E` after
/// a digit or a point, then a sign and exactly two digits.
fn widen_exponents(text: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len() + text.len() / 8);
    let digit = |k: usize| text.get(k).is_some_and(u8::is_ascii_digit);
    let mut i = 0;
    while i < text.len() {
        let b = text[i];
        let after_number = i > 0 && (text[i - 1].is_ascii_digit() || text[i - 1] == b'.');
        if (b == b'e' || b == b'E')
            && after_number
            && matches!(text.get(i + 1), Some(b'+' | b'-'))
            && digit(i + 2)
            && digit(i + 3)
            && !digit(i + 4)
        {
            out.extend_from_slice(&[b, text[i + 1], b'0']);
            i += 2;
        } else {
            out.push(b);
            i += 1;
        }
    }
    out
}

fn crlf(text: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len() + text.len() / 16);
    for &b in text {
        if b == b'\n' {
            out.push(b'\r');
        }
        out.push(b);
    }
    out
}

/// What the native output becomes on the PE's side of the documented differences.
fn as_msvcrt_prints(native: &[u8], how: NativeOutput) -> Vec<u8> {
    match how {
        NativeOutput::Same => native.to_vec(),
        NativeOutput::CrLfLineEnds => crlf(native),
        NativeOutput::ThreeDigitExponents => widen_exponents(native),
    }
}

fn same_text(what: &str, got: &[u8], want: &[u8]) {
    if got != want {
        let got_text = String::from_utf8_lossy(got);
        let want_text = String::from_utf8_lossy(want);
        let line = got_text
            .lines()
            .zip(want_text.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(got_text.lines().count().min(want_text.lines().count()));
        panic!(
            "{what}: outputs differ from line {} on\n--- got\n{}\n--- want\n{}",
            line + 1,
            got_text.lines().skip(line).take(3).collect::<Vec<_>>().join("\n"),
            want_text.lines().skip(line).take(3).collect::<Vec<_>>().join("\n")
        );
    }
}

/// The oracles agree with each other (up to the documented difference), then rpt agrees with both.
fn check_sample(sample: &Sample) {
    let wine = run_wine(sample);
    let native = run_native(sample);
    assert_eq!(
        wine.status.code(),
        Some(sample.exit_code),
        "{} under Wine: {}",
        sample.name,
        stderr_of(&wine)
    );
    assert_eq!(native.status.code(), Some(sample.exit_code), "{} natively", sample.name);
    assert!(!wine.stdout.is_empty(), "{} printed nothing under Wine", sample.name);
    same_text(
        &format!("{}: Wine against the native build ({:?})", sample.name, sample.native),
        &wine.stdout,
        &as_msvcrt_prints(&native.stdout, sample.native),
    );

    let (rpt, sandbox) = run_rpt(sample);
    let rpt_stderr = stderr_of(&rpt);
    same_text(
        &format!("{}: rpt against Wine\nrpt said:\n{rpt_stderr}", sample.name),
        &rpt.stdout,
        &wine.stdout,
    );
    assert_eq!(
        rpt.status.code(),
        wine.status.code(),
        "{}: exit status; rpt said:\n{rpt_stderr}",
        sample.name
    );
    // The program cleans up after itself, in rpt's sandbox as anywhere else.
    let left: Vec<_> = fs::read_dir(&sandbox)
        .expect("sandbox")
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert!(left.is_empty(), "{}: files left in the sandbox: {left:?}", sample.name);
    fs::remove_dir_all(&sandbox).ok();
}

#[test]
fn integer_work_with_msvcrt_printf_in_text_mode() {
    check_sample(&INT_WORK);
}

#[test]
fn stdio_strings_files_stdin_and_longjmp() {
    check_sample(&STDIO_STRINGS);
}

#[test]
fn printf_of_doubles_formatted_exactly_as_msvcrt_does() {
    check_sample(&PRINTF_FLOAT);
}

/// Scalar SSE2 (docs/sse.md): the MXCSR rounding modes, NaNs, min/max and conversions, printed
/// as bit patterns, must be what this CPU computes natively and under Wine.
#[test]
fn scalar_sse2_float_work_matches_the_cpu() {
    check_sample(&SSE_FLOAT);
}

/// msvcrt's own ways (ties away from zero, "1.#INF", %p, the 0 flag on strings, _snprintf's -1)
/// have no glibc counterpart, so this sample is compared with Wine alone.
#[test]
fn printf_quirks_that_only_msvcrt_has() {
    let wine = run_wine(&PRINTF_QUIRKS);
    assert_eq!(wine.status.code(), Some(0), "{}", stderr_of(&wine));
    let (rpt, sandbox) = run_rpt(&PRINTF_QUIRKS);
    same_text(
        &format!("printf_quirks: rpt against Wine\nrpt said:\n{}", stderr_of(&rpt)),
        &rpt.stdout,
        &wine.stdout,
    );
    assert_eq!(rpt.status.code(), Some(0));
    fs::remove_dir_all(&sandbox).ok();
}

/// mingw's own printf (guest code: `__mingw_pformat` and its `__pformat_*` helpers) moves and
/// classifies the value through the x87 (`fld` m32/m64/m80, `fstp` m64/m80/st(0), `fxam`,
/// `fnstsw ax`, `fldcw`, `fistp`, `fcomip`, ...): the full three-way comparison of the lifted x87.
#[test]
fn qsort_callbacks_with_mingw_printf() {
    check_sample(&QSORT_MINGW);
}

#[test]
fn computed_goto_dispatch_and_functions_named_only_by_a_table() {
    check_sample(&DISPATCH);
}

/// The interpreter's dispatch (`goto *labels[insn & 0x7f]`, repeated after every handler) is a
/// switch over blocks of the interpreter's own function at each dispatch site: no label is a
/// function of its own, and no dispatch goes through the run-time lookup of indirect jumps.
#[test]
fn computed_goto_dispatch_compiles_to_direct_jumps_inside_the_interpreter() {
    let gen_dir = tempfile::tempdir_in(scratch()).expect("tempdir");
    let out = Command::new(rpt_binary())
        .arg("recompile")
        .arg(workspace_root().join(DISPATCH.recipe))
        .arg("--gen-dir")
        .arg(gen_dir.path())
        .arg("--cache-dir")
        .arg(scratch().join("cache"))
        .env("CI", "1")
        .output()
        .expect("rpt recompile");
    assert!(out.status.success(), "{}", stderr_of(&out));
    let ir = rpt_tests::ir_text(gen_dir.path());
    // Each function's text, by name; each block's first guest address, by function and block.
    let mut functions: Vec<(&str, Vec<&str>)> = Vec::new();
    for line in ir.lines() {
        if let Some(name) = line.strip_prefix("function ") {
            functions.push((name.trim_end_matches(" {"), Vec::new()));
        } else if let Some((_, body)) = functions.last_mut() {
            body.push(line);
        }
    }
    let dispatchers: Vec<_> = functions
        .iter()
        .filter(|(_, body)| body.iter().any(|l| label_switch(l).is_some()))
        .collect();
    assert_eq!(
        dispatchers.len(),
        1,
        "functions with a switch over the 24 labels: {dispatchers:?}"
    );
    let (_, body) = dispatchers[0];
    let switches: Vec<Vec<&str>> = body.iter().filter_map(|l| label_switch(l)).collect();
    assert!(
        switches.len() >= 2,
        "gcc repeats the dispatch after the handlers: {switches:?}"
    );
    let block_addr = |block: &str| -> String {
        let at = body.iter().position(|l| *l == format!("{block}:")).expect("case block");
        let mark = body[at + 1]
            .trim()
            .strip_prefix("mark 0x")
            .expect("a case starts with its mark");
        format!("f_{mark}")
    };
    let names: Vec<&str> = functions.iter().map(|(name, _)| *name).collect();
    for case in &switches[0] {
        let label = block_addr(case);
        assert!(
            !names.contains(&label.as_str()),
            "the label {label} is a function of its own"
        );
    }
}

/// The cases of an IR `switch` line with 24 cases (the interpreter's labels), if it is one.
fn label_switch(line: &str) -> Option<Vec<&str>> {
    let cases = line
        .trim()
        .strip_prefix("switch ")?
        .split_once('[')?
        .1
        .split_once(']')?
        .0;
    let cases: Vec<&str> = cases.split(", ").collect();
    (cases.len() == 24).then_some(cases)
}

#[test]
fn widening_exponents_touches_only_exponents() {
    assert_eq!(
        widen_exponents(b"[1.5e+05][2e-07][1.e+06][E+12][3.25E-300][1e+123][ae+05]"),
        b"[1.5e+005][2e-007][1.e+006][E+12][3.25E-300][1e+123][ae+05]".to_vec()
    );
    assert_eq!(crlf(b"a\nb\n"), b"a\r\nb\r\n".to_vec());
}

/// Builds a fixture from tests/guests/x86/msvcrt with the samples' build script and writes a
/// recipe for it; returns the recipe's path.
fn fixture_recipe(name: &str, dir: &Path) -> PathBuf {
    let exe = dir.join(format!("{name}.exe"));
    let built = Command::new(samples_dir().join("build.sh"))
        .args(["pe", name])
        .arg(&exe)
        .output()
        .expect("build.sh runs");
    assert!(built.status.success(), "building {name} failed:\n{}", stderr_of(&built));
    let recipe = dir.join(format!("{name}.ron"));
    let text = format!(
        "(guest: \"x86-pe\", image: \"{name}.exe\", image_sha256: \"{}\", platform: \"win32-console\")\n",
        rpt_tests::sha256_file(&exe)
    );
    fs::write(&recipe, text).expect("write recipe");
    recipe
}

/// A fixture run with no arguments or input, exiting 0: run through the recipe [`fixture_recipe`]
/// wrote, not a committed one.
fn fixture_sample(name: &'static str) -> Sample {
    Sample {
        name,
        recipe: "",
        args: &[],
        stdin: b"",
        env: &[],
        native: NativeOutput::Same,
        exit_code: 0,
    }
}

fn rpt_run_in(recipe: &Path, sandbox: &Path, args: &[&str]) -> Output {
    Command::new(rpt_binary())
        .arg("run")
        .arg(recipe)
        .arg("--gen-dir")
        .arg(scratch().join("gen"))
        .arg("--cache-dir")
        .arg(scratch().join("cache"))
        .arg("--")
        .args(args)
        .current_dir(sandbox)
        .env("CI", "1")
        .env("RPT_SANDBOX", sandbox)
        .output()
        .expect("rpt runs")
}

/// No guest path reaches outside $RPT_SANDBOX: not with `..`, not with a drive or a host path,
/// not through a symbolic link; and nothing is written, renamed or removed outside it.
#[test]
fn guest_paths_never_leave_the_sandbox() {
    let dir = tempfile::tempdir().expect("tempdir");
    let recipe = fixture_recipe("sandbox_probe", dir.path());
    let outside = dir.path().join("outside");
    let sandbox = dir.path().join("box");
    fs::create_dir_all(&outside).expect("mkdir");
    fs::create_dir_all(sandbox.join("data")).expect("mkdir");
    fs::write(outside.join("secret.txt"), "secret").expect("write");
    fs::write(sandbox.join("data/in.txt"), "inside").expect("write");
    std::os::unix::fs::symlink("../outside/secret.txt", sandbox.join("link.txt")).expect("symlink");
    std::os::unix::fs::symlink("../outside", sandbox.join("linkdir")).expect("symlink");
    let secret = outside.join("secret.txt");
    let host_path = secret.to_str().expect("utf-8 path");

    let out = rpt_run_in(&recipe, &sandbox, &[host_path]);
    let stdout = String::from_utf8_lossy(&out.stdout).replace("\r\n", "\n");
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    let expected = format!(
        "read data/in.txt: ok [inside]\n\
         read C:\\data\\in.txt: ok [inside]\n\
         read /data/in.txt: ok [inside]\n\
         read data\\..\\data\\.\\\\in.txt: ok [inside]\n\
         read ../outside/secret.txt: refused\n\
         read ..\\outside\\secret.txt: refused\n\
         read C:\\..\\outside\\secret.txt: refused\n\
         read data/../../outside/secret.txt: refused\n\
         read \\\\server\\share\\secret.txt: refused\n\
         read {host_path}: refused\n\
         read link.txt: refused\n\
         read linkdir/secret.txt: refused\n\
         write ../escaped.txt: refused\n\
         write linkdir/escaped.txt: refused\n\
         write data/new.txt: ok\n\
         rename out: refused\n\
         remove out: refused\n\
         remove link: ok\n"
    );
    assert_eq!(stdout, expected);
    // Everything outside is as it was; removing the link removed the link, not its target.
    assert_eq!(fs::read_to_string(&secret).expect("secret is still there"), "secret");
    let outside_now: Vec<_> = fs::read_dir(&outside)
        .expect("outside")
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(outside_now, ["secret.txt"]);
    for escaped in ["escaped.txt", "moved.txt"] {
        assert!(
            !dir.path().join(escaped).exists(),
            "{escaped} was written outside the sandbox"
        );
    }
    assert!(sandbox.join("data/new.txt").exists() && !sandbox.join("link.txt").exists());
}

/// A longjmp into a function that has already returned is stopped with a message naming the
/// jmp_buf, instead of jumping into a dead host frame.
#[test]
fn a_longjmp_to_a_returned_setjmp_is_reported() {
    let dir = tempfile::tempdir().expect("tempdir");
    let recipe = fixture_recipe("longjmp_dangling", dir.path());
    let out = rpt_run_in(&recipe, dir.path(), &[]);
    let stderr = stderr_of(&out);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "armed=0\r\n", "{stderr}");
    assert_eq!(out.status.code(), Some(125), "{stderr}");
    assert!(
        stderr.contains("longjmp") && stderr.contains("already returned") && stderr.contains("jmp_buf is at 0x"),
        "{stderr}"
    );
}

/// msvcrt's own math functions (imported, not mingw's libmingwex copies) print the native i386
/// build's digits on every host: x86-64 and AArch64 compute them with glibc, LoongArch64, which has
/// no C library, with the software x87 unit's 128-bit float (guests/x86-pe/runtime/x87_soft_libm.h).
/// The fixture tests/guests/x86/msvcrt/libm_import.c is built at test time; printf is msvcrt's
/// (three exponent digits, "\r\n" in text mode).
#[test]
fn math_imports_print_the_native_digits_on_every_host() {
    fixture_prints_the_native_output_on_every_host("libm_import", "log10(1000) 3 ", |native| {
        widen_exponents(native)
            .into_iter()
            .flat_map(|b| if b == b'\n' { vec![b'\r', b'\n'] } else { vec![b] })
            .collect()
    });
}

#[test]
fn x87_mandelbrot_at_64_bit_precision() {
    check_sample(&X87_MANDEL);
}

#[test]
fn x87_nbody_matrix_fft_with_mingw_printf() {
    check_sample(&X87_PHYSICS);
}

#[test]
fn x87_ray_tracer_at_53_bit_precision() {
    check_sample(&X87_RAY53);
}

#[test]
fn x87_ray_tracer_in_the_f64_model_at_53_bit_precision() {
    check_sample(&X87_RAY53_F64);
}

/// At the 64-bit precision mingw's start-up sets, the f64 model (doubles) computes the orbits
/// differently from the real unit, which the f80 model matches (`x87_mandelbrot_at_64_bit_precision`
/// checks that against Wine and the native build). With this program the escape counts happen to
/// agree; the orbit values printed with 17 digits do not.
#[test]
fn x87_mandelbrot_in_the_f64_model_differs_at_64_bit_precision() {
    let (f80, sandbox80) = run_rpt(&X87_MANDEL);
    let (f64, sandbox64) = run_rpt(&X87_MANDEL_F64);
    assert_eq!(f80.status.code(), Some(0), "f80: {}", stderr_of(&f80));
    assert_eq!(f64.status.code(), Some(0), "f64: {}", stderr_of(&f64));
    let (text80, text64) = (
        String::from_utf8_lossy(&f80.stdout),
        String::from_utf8_lossy(&f64.stdout),
    );
    let probes = |text: &str| -> Vec<String> {
        text.lines()
            .filter(|l| l.starts_with("probe "))
            .map(str::to_string)
            .collect()
    };
    let (probes80, probes64) = (probes(&text80), probes(&text64));
    assert_eq!(probes80.len(), 5, "f80 printed:\n{text80}");
    assert_eq!(probes64.len(), probes80.len(), "f64 printed:\n{text64}");
    let differing = probes80.iter().zip(&probes64).filter(|(a, b)| a != b).count();
    assert!(
        differing >= 3,
        "only {differing} orbit values differ between the models:\n--- f80\n{}\n--- f64\n{}",
        probes80.join("\n"),
        probes64.join("\n")
    );
    // The one with 64-bit significands ends the orbit of probe 3 at 4.02e-32, doubles at 4.93e-32.
    assert!(probes80[3].ends_with("4.023129415689279e-032"), "{}", probes80[3]);
    assert!(probes64[3].ends_with("4.9303806576313238e-032"), "{}", probes64[3]);
    for dir in [sandbox80, sandbox64] {
        fs::remove_dir_all(dir).ok();
    }
}

/// msvcrt's `_controlfp` changes the control word lifted x87 code computes under (precision and
/// rounding control), and reports it in msvcrt's encoding: rpt prints what Wine prints for the
/// fixture tests/guests/x86/msvcrt/x87_controlfp.c, built at test time.
#[test]
fn controlfp_sets_the_x87_precision_and_rounding() {
    let dir = tempfile::tempdir().expect("tempdir");
    let recipe = fixture_recipe("x87_controlfp", dir.path());
    let fixture = fixture_sample("x87_controlfp");
    let wine = run_wine_exe(&dir.path().join("x87_controlfp.exe"), &fixture);
    assert_eq!(wine.status.code(), Some(0), "{}", stderr_of(&wine));
    let text = String::from_utf8_lossy(&wine.stdout);
    assert!(
        text.contains("53-bit: control 0x9001f carry 0"),
        "the fixture shows precision control:\n{text}"
    );
    let sandbox = tempfile::tempdir().expect("tempdir");
    let rpt = rpt_run_in(&recipe, sandbox.path(), &[]);
    same_text("x87_controlfp: rpt against Wine", &rpt.stdout, &wine.stdout);
    assert_eq!(rpt.status.code(), Some(0), "{}", stderr_of(&rpt));
}

/// mingw's `fmodl`, `remainderl` and `remquol` (libmingwex: loops of `fprem`/`fprem1` reading the
/// quotient bits from C0/C3/C1 and repeating while C2 says the reduction is partial) print the
/// 80 bits the native i386 build prints, on every host: AArch64 and LoongArch64 run the software
/// x87 unit's `fprem`. The fixture tests/guests/x86/msvcrt/x87_fprem.c is built at test time.
#[test]
fn fprem_loops_match_the_cpu_on_every_host() {
    fixture_prints_the_native_output_on_every_host("x87_fprem", "case 11", |native| native.to_vec());
}

/// Builds fixture `name`, runs its native i386 build (whose output must contain `marker`) and checks
/// that the recompiled fixture prints `expected(native output)` and exits 0 on every host.
fn fixture_prints_the_native_output_on_every_host(
    name: &'static str,
    marker: &str,
    expected: impl Fn(&[u8]) -> Vec<u8>,
) {
    let dir = tempfile::tempdir().expect("tempdir");
    let recipe = fixture_recipe(name, dir.path());
    let fixture = fixture_sample(name);
    let native = run_native(&fixture);
    assert_eq!(native.status.code(), Some(0), "{}", stderr_of(&native));
    let text = String::from_utf8_lossy(&native.stdout);
    assert!(text.contains(marker), "the native build printed:\n{text}");
    let expected = expected(&native.stdout);
    for host in rpt_tests::matrix::HOSTS {
        let out = Command::new(rpt_binary())
            .arg("run")
            .arg(&recipe)
            .args(["--host", host, "--gen-dir"])
            .arg(scratch().join("gen"))
            .arg("--cache-dir")
            .arg(scratch().join("cache"))
            .current_dir(dir.path())
            .env("CI", "1")
            .output()
            .expect("rpt runs");
        same_text(
            &format!("{name} on {host}\nrpt said:\n{}", stderr_of(&out)),
            &out.stdout,
            &expected,
        );
        assert_eq!(out.status.code(), Some(0), "{host}: {}", stderr_of(&out));
    }
}

/// mingw's long double math (libmingwex: `sinl`, `tanl`, `atan2l`, `expl`, `powl`, `logl`,
/// `log1pl`, ...) is built on the x87's transcendental instructions (fsincos, fptan, fpatan, f2xm1,
/// fyl2x, fyl2xp1, with fprem1 reducing large angles). On every host the recompiled fixture prints
/// what the native i386 build (glibc's versions of the same instructions) prints, to 13 significant
/// digits: AArch64 and LoongArch64 run the software x87 unit's transcendentals. The fixture
/// tests/guests/x86/msvcrt/x87_transcendental.c is built at test time.
#[test]
fn transcendental_functions_match_the_cpu_on_every_host() {
    // msvcrt prints three exponent digits where glibc prints two.
    fixture_prints_the_native_output_on_every_host("x87_transcendental", "money", widen_exponents);
}
