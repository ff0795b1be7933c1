//! AArch64 Linux has glibc (statically linked), so the runtime's C-library host part serves and
//! this host needs no shim.

use rpt_api::CEnvironment;

/// The C environment of AArch64 Linux.
pub fn environment() -> CEnvironment {
    CEnvironment::Libc
}
