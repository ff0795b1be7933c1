//! How LoongArch64 binaries run on this x86-64 machine: under qemu-user, called explicitly, because
//! no binfmt handler is registered here. qemu-loongarch64 runs about 80 times slower than native
//! code (floating point especially), so tests run few samples on this host.

use rpt_api::{Requirement, Runner};

/// The emulator command.
pub const QEMU: &str = "qemu-loongarch64";

/// The runner for LoongArch64 binaries (qemu's default CPU, la464, runs the LA64 base ISA rpt emits).
pub fn runner() -> Runner {
    Runner::emulator(QEMU)
}

/// qemu-user provides `qemu-loongarch64`.
pub fn requirements() -> Vec<Requirement> {
    vec![Requirement::qemu_user(QEMU)]
}
