//! Golden tests of emitted C (`tests/golden/*.rir`, `test emit-c`): each program is emitted (CPU
//! header, one shard with all its functions, function table) into the `default` section, and once
//! more with MEMARG into the `memarg` section, and once with every slot role's state in C locals
//! into the `locals` section. `RPT_BLESS=1 cargo test -p rpt-emit-c --test golden`
//! rewrites them.

mod common;

use std::collections::BTreeSet;

use rpt_ir::GuestAddr;
use rpt_testkit::filetest;

use common::generation::Choices;

fn render(program: &rpt_ir::Program, listing_name: &str, choices: Choices) -> String {
    let memarg = choices.memarg;
    let emitted = common::emit_all_with(program, listing_name, choices);
    let refs: Vec<&rpt_emit_c::EmittedFunction> = emitted.iter().collect();
    let addrs: BTreeSet<GuestAddr> = program.functions.keys().copied().collect();
    let entry = addrs.iter().next().copied().unwrap_or_default();
    let mut out = String::new();
    out.push_str("/* ==== cpu.h ==== */\n");
    out.push_str(&rpt_emit_c::cpu_header(
        &program.state,
        common::memory_of(program),
        &program.helpers,
        false,
    ));
    out.push_str("/* ==== shard ==== */\n");
    out.push_str(&rpt_emit_c::shard_source(&refs, &program.externs, memarg));
    out.push_str("/* ==== functab.c ==== */\n");
    out.push_str(&rpt_emit_c::function_table(
        &addrs,
        &program.externs,
        entry,
        memarg,
        &Default::default(),
    ));
    out
}

#[test]
fn emitted_c_matches_the_golden_files() {
    filetest::run(common::data_dir("golden"), "emit-c", |case| {
        let program = common::parse_program(&case.path, &case.input);
        let listing = format!("{}.lst", case.name);
        Ok(vec![
            ("default".to_string(), render(&program, &listing, Choices::BASELINE)),
            (
                "memarg".to_string(),
                render(
                    &program,
                    &listing,
                    Choices {
                        memarg: true,
                        ..Choices::BASELINE
                    },
                ),
            ),
            (
                "locals".to_string(),
                render(
                    &program,
                    &listing,
                    Choices {
                        state_in_locals: rpt_ir::RoleSet::of(&rpt_ir::SlotRole::ALL),
                        ..Choices::BASELINE
                    },
                ),
            ),
            // MEMARG with state in locals, as the default pipeline emits.
            (
                "memarg+locals".to_string(),
                render(
                    &program,
                    &listing,
                    Choices {
                        memarg: true,
                        state_in_locals: rpt_ir::RoleSet::of(&rpt_ir::SlotRole::ALL),
                    },
                ),
            ),
        ])
    });
}
