//! Golden lift tests: each `tests/golden/*.rir` file holds `test lift ppc`, comment lines, a
//! `words` line (big-endian instruction words placed at 0x80003100) and, after a `---` line, the
//! expected IR text. `RPT_BLESS=1 cargo test -p rpt-guest-ppc-dol --test golden` rewrites the
//! expectations.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use rpt_api::{GuestImage, GuestPlugin, Segment, SegmentFlags};
use rpt_guest_ppc_dol::PpcDol;
use rpt_ir::GuestAddr;
use rpt_ir::verify::{VerifyContext, verify_function};

const ADDR: u64 = 0x8000_3100;

fn parse_head(text: &str, name: &str) -> (String, Vec<u8>, String) {
    let (head, expected) = text.split_once("\n---\n").unwrap_or((text, ""));
    assert!(
        head.starts_with("test lift ppc\n"),
        "{name}: the first line must be `test lift ppc`"
    );
    let words = head
        .lines()
        .find_map(|l| l.strip_prefix("words "))
        .unwrap_or_else(|| panic!("{name}: no `words` line"));
    let bytes = words
        .split_whitespace()
        .flat_map(|w| {
            u32::from_str_radix(w, 16)
                .unwrap_or_else(|_| panic!("{name}: bad word {w}"))
                .to_be_bytes()
        })
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
    let plugin = PpcDol;
    let state = plugin.state(&Default::default());
    let helpers: BTreeMap<String, rpt_ir::HelperDecl> = rpt_guest_ppc_dol::helpers()
        .into_iter()
        .map(|h| (h.name.clone(), h))
        .collect();
    let mut failures = Vec::new();
    for path in &files {
        let name = path.display().to_string();
        let text = std::fs::read_to_string(path).expect("read golden file");
        let (head, bytes, expected) = parse_head(&text, &name);
        let image = GuestImage {
            segments: vec![Segment {
                name: "text0".to_string(),
                addr: GuestAddr(ADDR),
                mem_size: bytes.len() as u64,
                bytes,
                flags: SegmentFlags {
                    read: true,
                    write: false,
                    execute: true,
                },
            }],
            entry: GuestAddr(ADDR),
            exports: BTreeMap::new(),
            imports: Vec::new(),
        };
        let entry = GuestAddr(ADDR);
        let functions = BTreeSet::from([entry]);
        let lifted = plugin.lift(&image, entry, &functions, &Default::default());
        let ctx = VerifyContext {
            state: &state,
            helpers: Some(&helpers),
            callees: Some(&functions),
        };
        let ir = rpt_ir::print::function_to_string(&lifted.function, &state);
        if let Err(e) = verify_function(&lifted.function, ctx) {
            panic!("{name} does not verify: {e}\n{ir}");
        }
        let parsed = rpt_ir::parse::parse_function(&ir, &state)
            .unwrap_or_else(|e| panic!("{name}: the lifted IR does not parse back: {e}"));
        assert_eq!(parsed, lifted.function, "{name}: print/parse round trip");
        let mut actual = String::new();
        for (addr, insn) in &lifted.listing {
            actual.push_str(&format!("; {addr}  {insn}\n"));
        }
        actual.push_str(&ir);
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
