//! Golden lift tests (`tests/golden/*.rir`, `test lift x86`): the `bytes` line is code placed at
//! 0x401000 and lifted as one function; the expected listing and IR follow the `---` line.
//! `RPT_BLESS=1 cargo test -p rpt-guest-x86-pe --test golden` rewrites the expectations.

use std::collections::BTreeSet;
use std::path::Path;

use rpt_api::GuestPlugin;
use rpt_guest_x86_pe::X86Pe;
use rpt_ir::GuestAddr;
use rpt_testkit::{filetest, guest};

const ADDR: u64 = 0x40_1000;

#[test]
fn golden_lifts() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let options = Default::default();
    let state = X86Pe.state(&options);
    filetest::run(dir, "lift x86", |case| {
        let bytes = guest::hex_bytes(case.field("bytes").ok_or("no `bytes` line")?)?;
        let image = guest::code_image(".text", ADDR, &bytes);
        let entry = GuestAddr(ADDR);
        let lifted = guest::lift_verified(&X86Pe, &image, entry, &BTreeSet::from([entry]), &options);
        Ok(filetest::single(guest::lifted_text(&lifted, &state)?))
    });
}
