//! Golden lift tests (`tests/golden/*.rir`, `test lift ppc`): the `words` line holds big-endian
//! instruction words placed at 0x80003100 and lifted as one function; the expected listing and IR
//! follow the `---` line. `RPT_BLESS=1 cargo test -p rpt-guest-ppc-dol --test golden` rewrites the
//! expectations.

#[test]
fn golden_lifts() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    rpt_testkit::guest::run_lift_goldens(
        &dir,
        &rpt_guest_ppc_dol::PpcDol,
        "lift ppc",
        "words",
        "text0",
        0x8000_3100,
    );
}
