//! The AArch64 CPU models a recipe may name, with their level-1 instruction caches.
//!
//! Geometries are the cores' published ones (Arm's technical reference manuals, as Linux device
//! trees repeat them: size, line size and sets). Apple documents no associativity for the M1's
//! performance cores; 6 ways of 128-byte lines give 256 sets like the other models here. It is an
//! estimate: a recipe that knows better overrides it with `l1i`.

use rpt_api::{CacheGeometry, CpuModel};

/// The default model: the Raspberry Pi 4's core, the most common AArch64 Linux machine users port to.
pub const DEFAULT_CPU: &str = "cortex-a72";

struct Model {
    name: &'static str,
    summary: &'static str,
    size_kib: u32,
    ways: u32,
    line: u32,
}

/// The table of models; the first is the default. `-mtune=<name>` is the clang spelling of each.
const MODELS: &[Model] = &[
    Model {
        name: DEFAULT_CPU,
        summary: "Arm Cortex-A72 (Raspberry Pi 4 and 400)",
        size_kib: 48,
        ways: 3,
        line: 64,
    },
    Model {
        name: "cortex-a76",
        summary: "Arm Cortex-A76 (Raspberry Pi 5)",
        size_kib: 64,
        ways: 4,
        line: 64,
    },
    Model {
        name: "cortex-a53",
        summary: "Arm Cortex-A53 (low-cost boards and handhelds)",
        size_kib: 32,
        ways: 2,
        line: 64,
    },
    Model {
        name: "apple-m1",
        summary: "Apple M1 performance core (Asahi Linux)",
        size_kib: 192,
        ways: 6,
        line: 128,
    },
];

/// Every model, the default first. Tuning never narrows the ISA: the code runs on any ARMv8.0-A core.
pub fn cpu_models() -> Vec<CpuModel> {
    MODELS
        .iter()
        .map(|m| CpuModel {
            name: m.name.to_string(),
            summary: m.summary.to_string(),
            l1i: CacheGeometry {
                size: m.size_kib * 1024,
                ways: m.ways,
                line: m.line,
            },
            cflags: vec![format!("-mtune={}", m.name)],
        })
        .collect()
}

/// The default model.
pub(crate) fn default_model() -> CpuModel {
    // MODELS is a non-empty constant; the first entry is the default.
    cpu_models().swap_remove(0)
}
