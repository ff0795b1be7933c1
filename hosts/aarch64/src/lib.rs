//! The AArch64 host: Linux on 64-bit Arm (Raspberry Pi 4 and 5, Apple Silicon under Linux, handhelds).
//!
//! Code is cross-compiled with clang-19 and linked statically against Debian's arm64 cross glibc,
//! so the binary runs on any AArch64 Linux and, on this x86-64 machine, under `qemu-aarch64` with
//! no sysroot. glibc is there, so the runtime's C-library host part serves as the `shim`.

#![deny(missing_docs)]

mod geometry;
mod runner;
mod shim;
mod toolchain;

use rpt_api::{
    CEnvironment, CompilerSettings, CpuModel, HostDesc, HostPlugin, MEASURED_PIPELINE, PluginInfo, Requirement, Runner,
};

pub use geometry::{DEFAULT_CPU, cpu_models};
pub use runner::QEMU;
pub use toolchain::{CFLAGS, LDFLAGS, TRIPLE};

/// The AArch64 Linux host.
#[derive(Clone, Copy, Debug, Default)]
pub struct Aarch64Host;

impl HostPlugin for Aarch64Host {
    fn desc(&self) -> HostDesc {
        let default = geometry::default_model();
        // x0..x30 without x29 (frame pointer) and x30 (link register); x18 is free on Linux.
        // v0..v31 for floating point.
        HostDesc::little_endian_64(TRIPLE, &default.name, default.l1i, 29, 32).recommending(MEASURED_PIPELINE)
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
        let mut all = toolchain::requirements();
        all.extend(runner::requirements());
        all
    }

    fn runner(&self) -> Runner {
        runner::runner()
    }

    fn info(&self) -> PluginInfo {
        rpt_api::plugin_info!("aarch64")
    }
}

/// This host as rpt registers it (`framework/cli/Cargo.toml` lists the built-in ones).
pub fn plugin() -> rpt_api::Plugin {
    rpt_api::Plugin::Host(std::sync::Arc::new(Aarch64Host))
}
