//! rpt's x86 demo guest (tests/guests/x86): discovered without the recipe's hints, lifted, and
//! run in the IR interpreter, it must print what the same C prints as a native i386 program.

mod common;

use std::path::Path;
use std::process::Command;

use rpt_api::{GuestPlugin, Seeds};
use rpt_guest_x86_pe::X86Pe;
use rpt_ir::GuestAddr;

#[test]
fn the_demo_runs_lifted_as_it_runs_natively() {
    let demo_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/guests/x86");
    let bytes = std::fs::read(demo_dir.join("demo.exe")).expect("tests/guests/x86/demo.exe");
    let oracle = common::scratch("demo").join("demo-i386");
    common::run_tool(
        Command::new("sh")
            .arg(demo_dir.join("build.sh"))
            .arg("oracle")
            .arg(&oracle),
        "the demo's oracle is a native i386 build and needs `gcc -m32`: install gcc-12-multilib",
    );
    let native = Command::new(&oracle).output().expect("run the oracle");
    assert!(native.stdout.windows(14).any(|w| w == b"done checksum="), "{native:?}");

    let image = rpt_guest_x86_pe::loader_pe::load(&bytes).expect("the demo loads");
    let discovery = X86Pe.discover(&image, &Seeds::default());
    let worrying = common::worrying(&discovery.diagnostics);
    assert!(worrying.is_empty(), "{worrying:#?}");
    // The recipe lists the eight callbacks reached only through a table in .data as hints;
    // weak discovery finds them without the hints.
    for hint in [
        0x4014b0, 0x4014c0, 0x4014d0, 0x4014e0, 0x4014f0, 0x401500, 0x401510, 0x401520,
    ] {
        assert!(
            discovery.address_taken.contains(&GuestAddr(hint)),
            "{hint:#x} in {:x?}",
            discovery.address_taken
        );
    }
    let (program, diagnostics) = common::lift_program(&image);
    assert!(common::errors(&diagnostics).is_empty(), "{diagnostics:#?}");
    let (stdout, exit_code) = common::run_program(&image, &program);
    assert_eq!(
        String::from_utf8_lossy(&stdout),
        String::from_utf8_lossy(&native.stdout)
    );
    assert_eq!(exit_code.map(|c| c as i32), native.status.code());
}
