//! The LoongArch64 host plugin: its description and CPU models, and its freestanding shim built
//! warning-free with the host's flags into a program that runs under qemu-loongarch64.

use rpt_testkit::host;
use std::fs;

use rpt_api::{CEnvironment, HostPlugin, Purpose};
use rpt_host_loongarch64::{DEFAULT_CPU, Loongarch64Host, shim_sources};

#[test]
fn describes_freestanding_loongarch64_linux() {
    let host = Loongarch64Host;
    assert_eq!(host.info().name, "loongarch64");
    let desc = host.desc();
    assert_eq!(
        (desc.triple.as_str(), desc.cpu.as_str()),
        ("loongarch64-linux-gnu", DEFAULT_CPU)
    );
    assert_eq!(
        (desc.pointer_bits, desc.gprs, desc.fprs, desc.big_endian),
        (64, 26, 32, false)
    );
    let CEnvironment::Freestanding { shim } = host.environment() else {
        panic!("LoongArch64 has no C library here")
    };
    let paths: Vec<&str> = shim.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(
        paths,
        ["host/start.c", "host/syscalls.c", "host/memory.c", "host/jump.c"]
    );
    let cc = host.compiler();
    for flag in ["-mno-lsx", "-ffreestanding", "-nostdlibinc", "-Wall"] {
        assert!(
            cc.cflags.iter().any(|f| f == flag),
            "{flag} missing from {:?}",
            cc.cflags
        );
    }
    assert!(cc.ldflags.iter().any(|f| f == "-nostdlib"), "{:?}", cc.ldflags);
    let requirements = host.requirements();
    let run: Vec<&str> = requirements
        .iter()
        .filter(|r| r.purpose == Purpose::Run)
        .map(|r| r.package.as_str())
        .collect();
    assert_eq!(run, ["qemu-user"]);
}

#[test]
fn cpu_models_have_real_geometries() {
    let models = Loongarch64Host.cpu_models();
    let names: Vec<&str> = models.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(names, ["loongson-3a6000", "loongson-3a5000"]);
    for m in &models {
        assert_eq!(m.l1i.check(), Ok(()), "{}", m.name);
        assert_eq!((m.l1i.size, m.l1i.ways, m.l1i.line), (65536, 4, 64), "{}", m.name);
    }
    assert_eq!(models[0].cflags, ["-mtune=la664"]);
    assert_eq!(models[1].cflags, ["-mtune=la464"]);
}

/// A program on the shim alone: it writes through the shim's primitives and exits with a status
/// computed from them, so start-up, write, exit and the memory functions are all exercised.
const MAIN_C: &str = r#"#include "rpt_host.h"
#include <stddef.h>
void *memcpy(void *restrict dst, const void *restrict src, size_t n);
void *memmove(void *dst, const void *src, size_t n);
void *memset(void *dst, int c, size_t n);
int memcmp(const void *a, const void *b, size_t n);
int main(int argc, char **argv)
{
	static char buf[64];
	memset(buf, 'x', sizeof buf);
	memcpy(buf, "hello ", 6);
	memmove(buf + 1, buf, 5); /* "hhello" */
	size_t n = 6;
	for (int i = 1; i < argc; i++)
		for (const char *p = argv[i]; *p && n < sizeof buf - 1; p++)
			buf[n++] = *p;
	buf[n++] = '\n';
	rpt_host_write(1, buf, n);
	return memcmp(buf, "hhello", 6) == 0 ? 40 + argc : 1;
}
"#;

#[test]
fn the_shim_builds_warning_free_and_runs_under_qemu() {
    let host = Loongarch64Host;
    let dir = tempfile::tempdir().expect("temporary directory");
    fs::create_dir_all(dir.path().join("host")).expect("host dir");
    fs::write(dir.path().join("rpt_host.h"), rpt_runtime::HOST_HEADER).expect("write header");
    fs::write(dir.path().join("main.c"), MAIN_C).expect("write main");
    let mut units = vec!["main.c".to_string()];
    for f in shim_sources() {
        fs::write(dir.path().join(&f.path), &f.contents).expect("write shim");
        units.push(f.path);
    }
    let units: Vec<&str> = units.iter().map(String::as_str).collect();
    host::compile_and_link(&host, dir.path(), &units, &["-Wextra", "-I."]);
    let out = host::run(&host, dir.path(), &["a", "bc"]);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "hhelloabc\n");
    assert_eq!(out.status.code(), Some(43));
}
