//! The x86-64 host: clang target, register counts, L1I geometry and runner.
//!
//! Generated code runs natively here, under glibc, so this host needs no freestanding
//! shim; the `toolchain`, `geometry` and `runner` modules are the parts every host has.

#![deny(missing_docs)]

mod geometry;
mod runner;
mod toolchain;

use rpt_api::{CompilerSettings, HostDesc, HostPlugin, PluginInfo, Runner};

pub use geometry::{FALLBACK_L1I, l1i_from_sysfs, l1i_geometry};
pub use toolchain::{CC, CFLAGS, LDFLAGS, TRIPLE};

/// The x86-64 Linux host.
#[derive(Clone, Copy, Debug, Default)]
pub struct X86_64Host;

impl HostPlugin for X86_64Host {
    fn info(&self) -> PluginInfo {
        PluginInfo {
            name: "x86-64".to_string(),
            version: env!("CARGO_PKG_VERSION").to_string(),
            hash: env!("RPT_SOURCE_HASH").to_string(),
        }
    }

    fn desc(&self) -> HostDesc {
        HostDesc {
            triple: TRIPLE.to_string(),
            pointer_bits: 64,
            // rax..r15 and xmm0..xmm15 (without AVX-512, which rpt does not assume).
            gprs: 16,
            fprs: 16,
            big_endian: false,
            l1i: l1i_geometry(),
        }
    }

    fn compiler(&self) -> CompilerSettings {
        toolchain::settings()
    }

    fn runner(&self) -> Runner {
        runner::runner()
    }
}
