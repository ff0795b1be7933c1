//! Golden tests of emitted C (`tests/golden/*.rir`, `test emit-c`): each program is emitted (CPU
//! header, one shard with all its functions, function table) into the `default` section, and once
//! more with MEMARG into the `memarg` section. `RPT_BLESS=1 cargo test -p rpt-emit-c --test golden`
//! rewrites them.

mod common;

use std::collections::BTreeSet;

use rpt_ir::GuestAddr;
use rpt_testkit::filetest;

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
    filetest::run(common::data_dir("golden"), "emit-c", |case| {
        let program = common::parse_program(&case.path, &case.input);
        let listing = format!("{}.lst", case.name);
        Ok(vec![
            ("default".to_string(), render(&program, &listing, false)),
            ("memarg".to_string(), render(&program, &listing, true)),
        ])
    });
}
