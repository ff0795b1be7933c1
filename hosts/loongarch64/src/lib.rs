//! The LoongArch64 host: Linux on Loongson 3A5000/3A6000 machines.
//!
//! Debian 12 has no C library for LoongArch, so generated code is built freestanding: clang-19
//! compiles it without system headers, and the host's `shim/` (C files written into each
//! generation's `src/host/`) supplies the start-up code, the runtime's host primitives as raw
//! Linux system calls, and the few memory functions the compiler may call. On this x86-64 machine
//! the binary runs under `qemu-loongarch64`.

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
pub use shim::shim_sources;
pub use toolchain::{CFLAGS, LDFLAGS, TRIPLE};

/// The LoongArch64 Linux host.
#[derive(Clone, Copy, Debug, Default)]
pub struct Loongarch64Host;

impl HostPlugin for Loongarch64Host {
    fn desc(&self) -> HostDesc {
        let default = geometry::default_model();
        // r0..r31 without r0 (zero), r1 (ra), r2 (tp), r3 (sp), r21 (reserved) and r22 (fp);
        // f0..f31 for floating point.
        HostDesc::little_endian_64(TRIPLE, &default.name, default.l1i, 26, 32).recommending(MEASURED_PIPELINE)
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
        rpt_api::plugin_info!("loongarch64")
    }
}

/// This host as rpt registers it (`framework/cli/Cargo.toml` lists the built-in ones).
pub fn plugin() -> rpt_api::Plugin {
    rpt_api::Plugin::Host(std::sync::Arc::new(Loongarch64Host))
}
