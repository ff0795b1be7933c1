//! `rpt hosts`: every host rpt can build for, its CPU models with their L1I geometry, and whether
//! this machine has what building for it and running the result need.

use std::fmt::Write as _;

use rpt_api::{CEnvironment, HostPlugin, Purpose, Runner};

use crate::builtin;

/// The listing, one block per host in name order.
pub fn listing() -> String {
    let registry = builtin::registry();
    let mut out = String::new();
    for name in registry.host_names() {
        if let Some(host) = registry.host(&name) {
            describe(&mut out, &name, host.as_ref());
        }
    }
    out
}

fn describe(out: &mut String, name: &str, host: &dyn HostPlugin) {
    let desc = host.desc();
    let runner = match host.runner() {
        Runner::Native => "runs natively".to_string(),
        Runner::Emulator { program, args } if args.is_empty() => format!("runs under {program}"),
        Runner::Emulator { program, args } => format!("runs under {program} {}", args.join(" ")),
    };
    let library = match host.environment() {
        CEnvironment::Libc => "a C library".to_string(),
        CEnvironment::Freestanding { shim } => format!("no C library (freestanding, {} shim files)", shim.len()),
    };
    // Writing to a String cannot fail.
    let _ = writeln!(out, "{name}: {}, {runner}, {library}", desc.triple);
    let _ = writeln!(
        out,
        "  {} general and {} floating-point registers, {}-bit pointers, {}-endian",
        desc.gprs,
        desc.fprs,
        desc.pointer_bits,
        if desc.big_endian { "big" } else { "little" }
    );
    let recommended = match desc.recommended_passes.as_slice() {
        [] => "none".to_string(),
        passes => passes.join(", "),
    };
    let _ = writeln!(
        out,
        "  recommended passes (a recipe without `passes` runs them): {recommended}"
    );
    let _ = writeln!(
        out,
        "  CPU models (recipe `host_cpu`, or --host-cpu; the first is the default):"
    );
    let models = host.cpu_models();
    let width = models.iter().map(|m| m.name.len()).max().unwrap_or(0);
    for model in &models {
        let _ = writeln!(
            out,
            "    {:width$}  L1I {:32}  {}",
            model.name,
            model.l1i.to_string(),
            model.summary
        );
    }
    let requirements = host.requirements();
    for (purpose, what) in [(Purpose::Build, "build"), (Purpose::Run, "run")] {
        let status = match rpt_build::check_requirements(name, &requirements, purpose) {
            Ok(()) => "ready".to_string(),
            Err(e) => e.to_string(),
        };
        let _ = writeln!(out, "  {what}: {status}");
    }
}
