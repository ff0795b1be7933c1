//! The x86-64 host: clang target, register counts, CPU models with their L1I geometry, and runner.
//!
//! Generated code runs natively here, under glibc, so this host's `shim` is the runtime's
//! C-library host part; `toolchain`, `geometry`, `runner` and `shim` are the parts every host has.

#![deny(missing_docs)]

mod geometry;
mod runner;
mod shim;
mod toolchain;

use rpt_api::{CEnvironment, CompilerSettings, CpuModel, HostDesc, HostPlugin, PluginInfo, Requirement, Runner};

pub use geometry::{FALLBACK_L1I, cpu_models, l1i_from_sysfs, l1i_geometry};
pub use toolchain::{CC, CFLAGS, LDFLAGS, TRIPLE};

/// The x86-64 Linux host.
#[derive(Clone, Copy, Debug, Default)]
pub struct X86_64Host;

/// This host as rpt registers it (`framework/cli/Cargo.toml` lists the built-in ones).
pub fn plugin() -> rpt_api::Plugin {
    rpt_api::Plugin::Host(std::sync::Arc::new(X86_64Host))
}

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
            cpu: "native".to_string(),
            pointer_bits: 64,
            // rax..r15 without rsp and rbp; xmm0..xmm15 (AVX-512's extra registers are not assumed).
            gprs: 14,
            fprs: 16,
            big_endian: false,
            l1i: l1i_geometry(),
        }
    }

    fn cpu_models(&self) -> Vec<CpuModel> {
        geometry::cpu_models()
    }

    fn compiler(&self) -> CompilerSettings {
        toolchain::settings()
    }

    fn environment(&self) -> CEnvironment {
        shim::environment()
    }

    fn requirements(&self) -> Vec<Requirement> {
        toolchain::requirements()
    }

    fn runner(&self) -> Runner {
        runner::runner()
    }
}
