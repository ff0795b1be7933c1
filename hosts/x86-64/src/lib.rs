//! The x86-64 host: clang target, register counts, CPU models with their L1I geometry, and runner.
//!
//! Generated code runs natively here, under glibc, so this host's `shim` is the runtime's
//! C-library host part; `toolchain`, `geometry`, `runner` and `shim` are the parts every host has.

#![deny(missing_docs)]

mod geometry;
mod runner;
mod shim;
mod toolchain;

use rpt_api::{
    CEnvironment, CompilerSettings, CpuModel, HostDesc, HostPlugin, MEASURED_PIPELINE, PluginInfo, Requirement, Runner,
};

pub use geometry::{FALLBACK_L1I, cpu_models, l1i_from_sysfs, l1i_geometry};
pub use toolchain::{CFLAGS, LDFLAGS, TRIPLE};

/// The x86-64 Linux host.
#[derive(Clone, Copy, Debug, Default)]
pub struct X86_64Host;

impl HostPlugin for X86_64Host {
    fn desc(&self) -> HostDesc {
        // rax..r15 without rsp and rbp; xmm0..xmm15 (AVX-512's extra registers are not assumed).
        HostDesc::little_endian_64(TRIPLE, "native", l1i_geometry(), 14, 16).recommending(MEASURED_PIPELINE)
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

    fn info(&self) -> PluginInfo {
        rpt_api::plugin_info!("x86-64")
    }
}

/// This host as rpt registers it (`framework/cli/Cargo.toml` lists the built-in ones).
pub fn plugin() -> rpt_api::Plugin {
    rpt_api::Plugin::Host(std::sync::Arc::new(X86_64Host))
}
