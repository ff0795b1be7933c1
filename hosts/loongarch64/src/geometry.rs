//! The LoongArch64 CPU models a recipe may name, with their level-1 instruction caches.
//!
//! Both Loongson cores have a 64 KiB, 4-way L1I with 64-byte lines (Loongson's LA464 and LA664
//! documentation); they differ in the pipeline `-mtune` models.

use rpt_api::{CacheGeometry, CpuModel};

/// The default model: the current desktop Loongson.
pub const DEFAULT_CPU: &str = "loongson-3a6000";

const LOONGSON_L1I: CacheGeometry = CacheGeometry {
    size: 64 * 1024,
    ways: 4,
    line: 64,
};

/// Every model, the default first. Tuning never narrows the ISA: see `toolchain` for why LSX stays off.
pub fn cpu_models() -> Vec<CpuModel> {
    let model = |name: &str, summary: &str, tune: &str| CpuModel {
        name: name.to_string(),
        summary: summary.to_string(),
        l1i: LOONGSON_L1I,
        cflags: vec![format!("-mtune={tune}")],
    };
    vec![
        model(DEFAULT_CPU, "Loongson 3A6000 (LA664 cores)", "la664"),
        model("loongson-3a5000", "Loongson 3A5000 (LA464 cores)", "la464"),
    ]
}

/// The default model.
pub(crate) fn default_model() -> CpuModel {
    // The table above is non-empty; its first entry is the default.
    cpu_models().swap_remove(0)
}
