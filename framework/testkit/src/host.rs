//! Building and running C with a host plugin's own compiler settings and runner, as a host's tests
//! check them.

use std::path::Path;
use std::process::{Command, Output};

use rpt_api::{HostPlugin, Runner};

/// Compiles each of `units` (C files in `dir`) with the host's flags, `extra_cflags` and
/// `-Werror`, failing on any diagnostic, and links them into `dir/prog`.
pub fn compile_and_link(host: &dyn HostPlugin, dir: &Path, units: &[&str], extra_cflags: &[&str]) {
    let cc = host.compiler();
    let mut objects = Vec::new();
    for (i, unit) in units.iter().enumerate() {
        let object = format!("u{i}.o");
        compile(host, dir, unit, extra_cflags, &object);
        objects.push(object);
    }
    let out = Command::new(&cc.cc)
        .current_dir(dir)
        .args(&objects)
        .args(["-o", "prog"])
        .args(&cc.ldflags)
        .output()
        .expect("the host's compiler links");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

/// Compiles `unit` once with each of the host's CPU models' flags: each must be accepted silently.
pub fn compile_for_every_model(host: &dyn HostPlugin, dir: &Path, unit: &str) {
    for model in host.cpu_models() {
        let flags: Vec<&str> = model.cflags.iter().map(String::as_str).collect();
        compile(host, dir, unit, &flags, "model.o");
    }
}

fn compile(host: &dyn HostPlugin, dir: &Path, unit: &str, extra_cflags: &[&str], object: &str) {
    let cc = host.compiler();
    let out = Command::new(&cc.cc)
        .current_dir(dir)
        .args(&cc.cflags)
        .args(extra_cflags)
        .args(["-Werror", "-c", unit, "-o", object])
        .output()
        .expect("the host's compiler runs (clang-19)");
    assert!(
        out.status.success() && out.stderr.is_empty(),
        "{unit} with {extra_cflags:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Runs `dir/prog` with `args` the way the host runs its binaries (natively or under its emulator).
pub fn run(host: &dyn HostPlugin, dir: &Path, args: &[&str]) -> Output {
    let binary = dir.join("prog");
    let mut cmd = match host.runner() {
        Runner::Native => Command::new(&binary),
        Runner::Emulator { program, args } => {
            let mut cmd = Command::new(program);
            cmd.args(args).arg(&binary);
            cmd
        }
    };
    cmd.args(args)
        .output()
        .expect("the program starts (an emulator comes with qemu-user)")
}
