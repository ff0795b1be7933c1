//! Golden lift tests (`tests/golden/*.rir`, `test lift ppc`): the `words` line holds big-endian
//! instruction words placed at 0x80003100 and lifted as one function; the expected listing and IR
//! follow the `---` line. `RPT_BLESS=1 cargo test -p rpt-guest-ppc-dol --test golden` rewrites the
//! expectations.

use std::collections::BTreeSet;
use std::path::Path;

use rpt_api::GuestPlugin;
use rpt_guest_ppc_dol::PpcDol;
use rpt_ir::GuestAddr;
use rpt_testkit::{filetest, guest};

const ADDR: u64 = 0x8000_3100;

#[test]
fn golden_lifts() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let options = Default::default();
    let state = PpcDol.state(&options);
    filetest::run(dir, "lift ppc", |case| {
        let bytes = guest::hex_bytes(case.field("words").ok_or("no `words` line")?)?;
        let image = guest::code_image("text0", ADDR, &bytes);
        let entry = GuestAddr(ADDR);
        let lifted = guest::lift_verified(&PpcDol, &image, entry, &BTreeSet::from([entry]), &options);
        Ok(filetest::single(guest::lifted_text(&lifted, &state)?))
    });
}
