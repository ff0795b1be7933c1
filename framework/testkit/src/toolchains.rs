//! Building the programs tests compare: the same C as a freestanding PE and as a native i386 program.

use std::path::Path;
use std::process::Command;

use crate::run_tool;

/// Builds a freestanding PE32 console program from `source` with mingw: the `_start@0` entry, no
/// relocation section, the preferred base, no timestamp (so the same source gives the same bytes),
/// kernel32 only, plus `extra` flags.
pub fn build_freestanding_pe(source: &Path, output: &Path, extra: &[&str]) {
    let mut cmd = Command::new("i686-w64-mingw32-gcc");
    cmd.args([
        "-O2",
        "-m32",
        "-ffreestanding",
        "-nostdlib",
        "-fno-builtin",
        "-fno-asynchronous-unwind-tables",
        "-Wl,-e,_start@0",
        "-Wl,--subsystem,console",
        "-Wl,--disable-dynamicbase",
        "-Wl,--disable-reloc-section",
        "-Wl,--no-insert-timestamp",
    ])
    .args(extra)
    .arg(source)
    .args(["-lkernel32", "-o"])
    .arg(output);
    run_tool(
        &mut cmd,
        b"",
        "the PE tests need mingw-w64 (Debian package gcc-mingw-w64-i686)",
    );
}

/// Builds `source` for i386 Linux with `gcc -m32 -O2 -static`, the native oracle of x86 programs.
pub fn build_native_i386(source: &Path, output: &Path) {
    let mut cmd = Command::new("gcc");
    cmd.args(["-m32", "-O2", "-static", "-o"]).arg(output).arg(source);
    run_tool(
        &mut cmd,
        b"",
        "gcc -m32 needs gcc-12-multilib (scripts/install-deps.sh installs it)",
    );
}
