//! Golden tests of emitted C: each `tests/golden/NAME.rir` is emitted (CPU header, one shard
//! with all its functions, function table) and compared with `tests/golden/NAME.c`, and once more
//! with MEMARG, compared with `tests/golden/NAME.memarg.c`.
//! `RPT_BLESS=1` rewrites the expected files; a mismatch prints a diff and that hint.

mod common;

use std::collections::BTreeSet;
use std::fs;

use rpt_ir::GuestAddr;

fn render(program: &rpt_ir::Program, listing_name: &str, memarg: bool) -> String {
    let emitted = common::emit_all_with(program, listing_name, memarg);
    let refs: Vec<&rpt_emit_c::EmittedFunction> = emitted.iter().collect();
    let addrs: BTreeSet<GuestAddr> = program.functions.keys().copied().collect();
    let entry = addrs.iter().next().copied().unwrap_or_default();
    let mut out = String::new();
    out.push_str("/* ==== cpu.h ==== */\n");
    out.push_str(&rpt_emit_c::cpu_header(
        &program.state,
        common::MEMORY,
        &program.helpers,
    ));
    out.push_str("/* ==== shard ==== */\n");
    out.push_str(&rpt_emit_c::shard_source(&refs, &program.externs, memarg));
    out.push_str("/* ==== functab.c ==== */\n");
    out.push_str(&rpt_emit_c::function_table(&addrs, &program.externs, entry, memarg));
    out
}

#[test]
fn emitted_c_matches_the_golden_files() {
    let bless = std::env::var_os("RPT_BLESS").is_some_and(|v| v == "1");
    let files = common::rir_files("golden");
    assert!(!files.is_empty(), "no golden programs in tests/golden");
    let mut failures = Vec::new();
    for path in &files {
        let text = fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
        assert!(
            text.starts_with("; test emit-c\n"),
            "{} must start with `; test emit-c`",
            path.display()
        );
        let program = common::load_program(path);
        let name = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        // Each program twice: as emitted by default, and with MEMARG (NAME.memarg.c).
        for (memarg, extension) in [(false, "c"), (true, "memarg.c")] {
            let actual = render(&program, &format!("{name}.lst"), memarg);
            let expected_path = path.with_extension(extension);
            if bless {
                fs::write(&expected_path, &actual)
                    .unwrap_or_else(|e| panic!("cannot write {}: {e}", expected_path.display()));
                continue;
            }
            let expected = fs::read_to_string(&expected_path).unwrap_or_default();
            if expected != actual {
                failures.push(format!(
                    "{} differs from the emitted C (- expected, + actual):\n{}",
                    expected_path.display(),
                    common::diff(&expected, &actual)
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{}\nIf the new output is right, run with RPT_BLESS=1 to update the expected files.",
        failures.join("\n")
    );
}
