//! What the tests that build C for every host share (the runtime's own host test, and the guests'
//! platform tests, which include this file by path): the hosts, the runtime as each builds it,
//! and running a program on a host.

#![allow(dead_code)] // Each test binary uses a different subset.

use std::path::Path;
use std::process::Command;

use rpt_api::{CEnvironment, HostPlugin, Runner, SourceFile};

/// Every host rpt builds for.
pub fn hosts() -> Vec<Box<dyn HostPlugin>> {
    vec![
        Box::new(rpt_host_x86_64::X86_64Host),
        Box::new(rpt_host_aarch64::Aarch64Host),
        Box::new(rpt_host_loongarch64::Loongarch64Host),
    ]
}

/// The runtime as `host` builds it: with the C-library part, or, on a freestanding host, without
/// it and with the host's shim in its place.
pub fn runtime_for(host: &dyn HostPlugin) -> Vec<SourceFile> {
    match host.environment() {
        CEnvironment::Libc => rpt_runtime::sources(),
        CEnvironment::Freestanding { shim } => {
            let mut files = rpt_runtime::freestanding_sources();
            files.extend(shim);
            files
        }
    }
}

/// A command that runs `program` on `host`: directly, or under the host's emulator.
pub fn command_on(host: &dyn HostPlugin, program: &Path) -> Command {
    match host.runner() {
        Runner::Native => Command::new(program),
        Runner::Emulator {
            program: emulator,
            args,
        } => {
            let mut cmd = Command::new(emulator);
            cmd.args(args).arg(program);
            cmd
        }
    }
}
