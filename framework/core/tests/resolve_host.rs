//! Resolving a recipe's host: the default CPU model, a named one, an unknown one, the recipe's L1I
//! override, the order of compile flags, and the pipeline a recipe without passes gets.

use std::path::Path;
use std::sync::Arc;

use rpt_api::{
    CEnvironment, CacheGeometry, CompilerSettings, CpuModel, HostDesc, HostPlugin, PluginInfo, Requirement, Runner,
};
use rpt_core::{CoreError, Registry, resolve_host};

struct FakeHost;

fn model(name: &str, size: u32) -> CpuModel {
    CpuModel {
        name: name.into(),
        summary: format!("the {name}"),
        l1i: CacheGeometry {
            size,
            ways: 4,
            line: 64,
        },
        cflags: vec![format!("-mtune={name}")],
    }
}

impl HostPlugin for FakeHost {
    fn info(&self) -> PluginInfo {
        PluginInfo {
            name: "fake".into(),
            version: "1".into(),
            hash: "0".repeat(64),
        }
    }

    fn desc(&self) -> HostDesc {
        HostDesc {
            triple: "fake-linux-gnu".into(),
            cpu: "small".into(),
            pointer_bits: 64,
            gprs: 20,
            fprs: 20,
            big_endian: false,
            l1i: model("small", 16384).l1i,
            recommended_passes: vec!["flag-abi".into(), "memarg".into()],
        }
    }

    fn cpu_models(&self) -> Vec<CpuModel> {
        vec![model("small", 16384), model("big", 65536)]
    }

    fn compiler(&self) -> CompilerSettings {
        CompilerSettings {
            cc: "cc".into(),
            cflags: vec!["-O2".into()],
            ldflags: vec![],
        }
    }

    fn environment(&self) -> CEnvironment {
        CEnvironment::Libc
    }

    fn requirements(&self) -> Vec<Requirement> {
        Vec::new()
    }

    fn runner(&self) -> Runner {
        Runner::Native
    }
}

fn registry() -> Registry {
    let mut registry = Registry::new();
    registry.add_host(Arc::new(FakeHost));
    registry
}

fn recipe(extra: &str) -> rpt_recipe::Recipe {
    let text = format!(
        "(guest: \"x86-pe\", image: \"a.exe\", image_sha256: \"{}\", platform: \"p\", host: \"fake\", \
         compiler: (cflags: [\"-DX\"]), {extra})",
        "0".repeat(64)
    );
    rpt_recipe::parse(Path::new("r.ron"), &text).expect("recipe parses")
}

#[test]
fn the_default_model_adds_its_flags_before_the_recipes() {
    let host = resolve_host(&registry(), &recipe("")).expect("resolves");
    assert_eq!(host.desc, FakeHost.desc());
    assert_eq!(host.compiler.cflags, ["-O2", "-mtune=small", "-DX"]);
    assert_eq!(host.environment, CEnvironment::Libc);
}

#[test]
fn a_named_model_and_an_l1i_override_change_the_description() {
    let host = resolve_host(&registry(), &recipe("host_cpu: \"big\"")).expect("resolves");
    assert_eq!((host.desc.cpu.as_str(), host.desc.l1i.size), ("big", 65536));
    assert_eq!(host.compiler.cflags, ["-O2", "-mtune=big", "-DX"]);
    let host = resolve_host(
        &registry(),
        &recipe("host_cpu: \"big\", l1i: (size: 32768, ways: 8, line: 64)"),
    )
    .expect("resolves");
    assert_eq!(host.desc.cpu, "big");
    assert_eq!(
        host.desc.l1i,
        CacheGeometry {
            size: 32768,
            ways: 8,
            line: 64
        }
    );
    assert_eq!(host.desc.gprs, 20);
}

#[test]
fn unknown_models_and_hosts_list_what_is_known() {
    let err = resolve_host(&registry(), &recipe("host_cpu: \"huge\""))
        .err()
        .expect("unknown model");
    assert_eq!(
        err,
        CoreError::UnknownCpuModel {
            host: "fake".into(),
            cpu: "huge".into(),
            known: "small, big".into()
        }
    );
    assert!(err.to_string().contains("known: small, big"), "{err}");
    let mut r = recipe("");
    r.host = "vax".into();
    let err = resolve_host(&registry(), &r).err().expect("unknown host");
    assert_eq!(err.to_string(), "unknown host `vax` (known: fake)");
}

#[test]
fn the_host_description_is_a_query_over_the_sessions_recipe() {
    use salsa::Setter;
    let mut db = rpt_core::RptDb::new(registry());
    let session = rpt_core::Session::new(&db, recipe(""), Arc::from(Vec::new()), "r.lst".to_string());
    assert_eq!(
        rpt_core::host_desc(&db, session).as_ref().map(|d| d.cpu.clone()),
        Ok("small".to_string())
    );
    session.set_recipe(&mut db).to(recipe("host_cpu: \"big\""));
    assert_eq!(
        rpt_core::host_desc(&db, session).as_ref().map(|d| d.l1i.size),
        Ok(65536)
    );
}

/// A recipe without `passes` runs its host's recommendation; `passes: []` runs none; a list runs
/// itself, disabled entries included (the core filters them); the core's query agrees.
#[test]
fn a_recipe_without_passes_runs_its_hosts_recommended_pipeline() {
    let names = |r: &rpt_recipe::Recipe| -> Vec<String> {
        rpt_core::pipeline(r, Some(&FakeHost))
            .into_iter()
            .map(|p| p.name)
            .collect()
    };
    assert_eq!(names(&recipe("")), ["flag-abi", "memarg"]);
    assert!(names(&recipe("passes: []")).is_empty());
    assert_eq!(
        names(&recipe("passes: [(name: \"memarg\", enabled: false)]")),
        ["memarg"]
    );
    assert!(
        rpt_core::pipeline(&recipe(""), None).is_empty(),
        "an unknown host recommends nothing"
    );

    let db = rpt_core::RptDb::new(registry());
    let session = rpt_core::Session::new(&db, recipe(""), Arc::from(Vec::new()), "r.lst".to_string());
    let enabled: Vec<&str> = rpt_core::enabled_passes(&db, session)
        .iter()
        .map(|p| p.name.as_str())
        .collect();
    assert_eq!(enabled, ["flag-abi", "memarg"]);
}
