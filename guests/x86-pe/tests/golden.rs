//! Golden lift tests: each `tests/golden/*.rir` file holds `test lift x86`, comment lines, a
//! `bytes` line (code placed at 0x401000) and, after a `---` line, the expected IR text.
//! `RPT_BLESS=1 cargo test -p rpt-guest-x86-pe --test golden` rewrites the expectations.

mod common;

use std::collections::BTreeSet;
use std::path::Path;

use rpt_ir::GuestAddr;

const ADDR: u64 = 0x40_1000;

fn expected_and_input(text: &str, name: &str) -> (String, Vec<u8>, String) {
    let (head, expected) = text.split_once("\n---\n").unwrap_or((text, ""));
    assert!(
        head.starts_with("test lift x86\n"),
        "{name}: the first line must be `test lift x86`"
    );
    let hex = head
        .lines()
        .find_map(|l| l.strip_prefix("bytes "))
        .unwrap_or_else(|| panic!("{name}: no `bytes` line"))
        .trim();
    let bytes = (0..hex.len() / 2)
        .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap_or_else(|_| panic!("{name}: bad hex")))
        .collect();
    (head.to_string(), bytes, expected.to_string())
}

#[test]
fn golden_lifts() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let bless = std::env::var_os("RPT_BLESS").is_some();
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("tests/golden")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "rir"))
        .collect();
    files.sort();
    assert!(files.len() >= 4, "golden files are missing from {}", dir.display());
    let state = rpt_guest_x86_pe::state::state_desc();
    let mut failures = Vec::new();
    for path in &files {
        let name = path.display().to_string();
        let text = std::fs::read_to_string(path).expect("read golden file");
        let (head, bytes, expected) = expected_and_input(&text, &name);
        let image = common::code_image(ADDR, &bytes);
        let entry = GuestAddr(ADDR);
        let lifted = common::lift_verified(&image, entry, &BTreeSet::from([entry]));
        let mut actual = String::new();
        for (addr, insn) in &lifted.listing {
            actual.push_str(&format!("; {addr}  {insn}\n"));
        }
        actual.push_str(&rpt_ir::print::function_to_string(&lifted.function, &state));
        // The printed IR must read back as the same function: the golden text is real IR.
        let parsed =
            rpt_ir::parse::parse_function(&rpt_ir::print::function_to_string(&lifted.function, &state), &state)
                .unwrap_or_else(|e| panic!("{name}: the lifted IR does not parse back: {e}"));
        assert_eq!(parsed, lifted.function, "{name}: print/parse round trip");
        if bless {
            std::fs::write(path, format!("{}\n---\n{actual}", head.trim_end())).expect("bless");
        } else if actual != expected {
            failures.push(format!("{name}:\n--- expected\n{expected}\n--- actual\n{actual}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{}\n\nIf the new output is right, run with RPT_BLESS=1 to rewrite the expectations.",
        failures.join("\n")
    );
}
