//! x86-64 Linux has glibc, so the runtime's C-library host part serves and this host needs no shim.

use rpt_api::CEnvironment;

/// The C environment of x86-64 Linux.
pub fn environment() -> CEnvironment {
    CEnvironment::Libc
}
