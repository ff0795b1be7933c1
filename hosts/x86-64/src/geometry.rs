//! The level-1 instruction cache's geometry, from sysfs where Linux publishes it.

use std::fs;
use std::path::Path;

use rpt_api::CacheGeometry;

/// Used when sysfs says nothing: 32 KiB, 8-way, 64-byte lines (most x86-64 cores of the last decade).
pub const FALLBACK_L1I: CacheGeometry = CacheGeometry {
    size: 32 * 1024,
    ways: 8,
    line: 64,
};

/// The L1I geometry of this machine's first CPU, or [`FALLBACK_L1I`].
pub fn l1i_geometry() -> CacheGeometry {
    l1i_from_sysfs(Path::new("/sys/devices/system/cpu/cpu0/cache")).unwrap_or(FALLBACK_L1I)
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
            (size > 0 && ways > 0 && line > 0).then_some(CacheGeometry { size, ways, line })
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
