//! How AArch64 binaries run on this x86-64 machine: under qemu-user, called explicitly, because no
//! binfmt handler is registered here (running the binary directly fails with "Exec format error").

use rpt_api::{Requirement, Runner};

/// The emulator command.
pub const QEMU: &str = "qemu-aarch64";

/// The runner for AArch64 binaries. The binary is static, so qemu needs no `-L` sysroot, and
/// qemu's default CPU (`max`) runs everything the ARMv8.0-A baseline allows.
pub fn runner() -> Runner {
    Runner::emulator(QEMU)
}

/// qemu-user provides `qemu-aarch64`.
pub fn requirements() -> Vec<Requirement> {
    vec![Requirement::qemu_user(QEMU)]
}
