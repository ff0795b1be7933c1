//! The CPU models of x86-64 and their level-1 instruction caches; `native` reads this machine's from sysfs.

use std::fs;
use std::path::Path;

use rpt_api::{CacheGeometry, CpuModel};

/// Used when sysfs says nothing: 32 KiB, 8-way, 64-byte lines (most x86-64 cores of the last decade).
pub const FALLBACK_L1I: CacheGeometry = CacheGeometry {
    size: 32 * 1024,
    ways: 8,
    line: 64,
};

/// Where Linux publishes the first CPU's caches.
const SYSFS_CACHE_DIR: &str = "/sys/devices/system/cpu/cpu0/cache";

/// The CPU models a recipe may name; `native`, the machine rpt runs on, is the default.
///
/// `native` adds no tuning flag: `-mtune=native` would make the objects depend on the machine
/// that compiled them, and rpt's output must not. The named models tune for a core family, and
/// their code runs on every x86-64 CPU, but for `x86-64-v3`, which targets that ISA level (a
/// recipe opts in); every x86-64 core since Sandy Bridge and Zen has a 32 KiB, 8-way L1I with
/// 64-byte lines.
pub fn cpu_models() -> Vec<CpuModel> {
    let model = |name: &str, summary: &str, l1i: CacheGeometry, cflags: &[&str]| CpuModel {
        name: name.to_string(),
        summary: summary.to_string(),
        l1i,
        cflags: cflags.iter().map(|s| s.to_string()).collect(),
    };
    vec![
        model(
            "native",
            "this machine (L1I from /sys/devices/system/cpu/cpu0/cache), generic tuning",
            l1i_geometry(),
            &[],
        ),
        model(
            "skylake",
            "Intel Skylake and its successors",
            FALLBACK_L1I,
            &["-mtune=skylake"],
        ),
        model(
            "znver3",
            "AMD Zen 3 (Ryzen 5000, EPYC 7003)",
            FALLBACK_L1I,
            &["-mtune=znver3"],
        ),
        // The one model that changes what the code needs rather than how it is tuned: opt-in.
        // Floating point stays exact: the hosts build with -ffp-contract=off, so FMA instructions
        // appear only where the C asks for a fused multiply-add.
        model(
            "x86-64-v3",
            "x86-64-v3: AVX2, BMI2, FMA, MOVBE (Intel Haswell, AMD Zen and later); the program needs such a CPU",
            FALLBACK_L1I,
            &["-march=x86-64-v3"],
        ),
    ]
}

/// The L1I geometry of this machine's first CPU, or [`FALLBACK_L1I`].
pub fn l1i_geometry() -> CacheGeometry {
    l1i_from_sysfs(Path::new(SYSFS_CACHE_DIR)).unwrap_or(FALLBACK_L1I)
}

/// Reads the `index*` directory with `type` Instruction and `level` 1 under `cache_dir`.
pub fn l1i_from_sysfs(cache_dir: &Path) -> Option<CacheGeometry> {
    let mut entries: Vec<_> = fs::read_dir(cache_dir)
        .ok()?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .collect();
    // Directory order is unspecified; sort so the choice is stable.
    entries.sort();
    entries
        .into_iter()
        .filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("index")))
        .find_map(|index| {
            let read = |name: &str| fs::read_to_string(index.join(name)).ok().map(|s| s.trim().to_string());
            if read("type")? != "Instruction" || read("level")? != "1" {
                return None;
            }
            let size = parse_size(&read("size")?)?;
            let ways = read("ways_of_associativity")?.parse().ok()?;
            let line = read("coherency_line_size")?.parse().ok()?;
            let geometry = CacheGeometry { size, ways, line };
            // A hypervisor may publish odd numbers; only a geometry cachegrind accepts is used.
            geometry.check().is_ok().then_some(geometry)
        })
}

/// Parses sysfs sizes like `32K`, `1M` or `512`.
fn parse_size(text: &str) -> Option<u32> {
    let (digits, unit) = match text.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((i, _)) => text.split_at(i),
        None => (text, ""),
    };
    let n: u32 = digits.parse().ok()?;
    match unit {
        "" => Some(n),
        "K" => n.checked_mul(1024),
        "M" => n.checked_mul(1024 * 1024),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::parse_size;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("32K"), Some(32768));
        assert_eq!(parse_size("1M"), Some(1 << 20));
        assert_eq!(parse_size("512"), Some(512));
        assert_eq!(parse_size("3G"), None);
        assert_eq!(parse_size("K"), None);
    }
}
