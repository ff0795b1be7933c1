//! Golden lift tests (`tests/golden/*.rir`, `test lift x86`): the `bytes` line is code placed at
//! 0x401000 and lifted as one function; the expected listing and IR follow the `---` line.
//! `RPT_BLESS=1 cargo test -p rpt-guest-x86-pe --test golden` rewrites the expectations.

#[test]
fn golden_lifts() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    rpt_testkit::guest::run_lift_goldens(&dir, &rpt_guest_x86_pe::X86Pe, "lift x86", "bytes", ".text", 0x40_1000);
}
