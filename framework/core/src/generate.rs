//! The driver that runs the queries for a whole generation, in parallel where it pays.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use rayon::prelude::*;
use rpt_api::Severity;
use rpt_ir::GuestAddr;

use crate::queries::{ProgramFacts, guest_plugin};
use crate::{
    CoreError, FunctionId, RptDb, Session, cpu_header, function_c, function_table_c, image_c, lifted_function,
    listing_text, optimized_function, pass_reports, program_facts, shard_ir_text, shard_text, tier_c,
};

/// A step of generation, for progress and timings.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Stage {
    /// Loading the image and discovering functions.
    Discover,
    /// Lifting each function.
    Lift,
    /// Running the recipe's passes on each function.
    Passes,
    /// Emitting each function's C.
    EmitC,
    /// Assembling shards and the other generated files.
    Shards,
}

impl Stage {
    /// A short lower-case name for messages.
    pub fn name(self) -> &'static str {
        match self {
            Stage::Discover => "discover",
            Stage::Lift => "lift",
            Stage::Passes => "passes",
            Stage::EmitC => "emit-c",
            Stage::Shards => "shards",
        }
    }
}

/// One file of a generation's `src/`, by path relative to it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GeneratedFile {
    /// Relative path with `/` separators.
    pub path: String,
    /// The file's text.
    pub contents: String,
}

/// Counts and timings of one generation.
#[derive(Clone, Debug, Default)]
pub struct GenerationStats {
    /// Functions lifted.
    pub functions: usize,
    /// Shard files produced.
    pub shards: usize,
    /// Wall time per stage, in pipeline order.
    pub timings: Vec<(Stage, Duration)>,
    /// How many coverage entries discovery would not have found on its own
    /// ([`ProgramFacts::coverage_new`]).
    pub coverage_new: usize,
}

/// Everything the core produces for one recipe: the generated sources and what they are made of.
#[derive(Clone, Debug)]
pub struct Generation {
    /// `cpu.h`, shards, the IR of each shard (`ir/shard_NNNN.rir`), `functab.c`, `image.c`, the
    /// listing and the guest's C part.
    pub files: Vec<GeneratedFile>,
    /// Paths (within `files`) of the C files to compile.
    pub compile_units: Vec<String>,
    /// Counts and timings.
    pub stats: GenerationStats,
    /// Non-fatal diagnostics from discovery and lifting, in address order.
    pub notes: Vec<rpt_api::Diagnostic>,
    /// Code rpt could not lift, one diagnostic per guest address in address order: each compiled to
    /// a guest fault raised only if execution gets there (`faults.c` describes them to the runtime).
    pub fault_sites: Vec<rpt_api::Diagnostic>,
    /// The imports the platform lacks, in import-table order (thunk, `module!name`): each a stub
    /// in `imports.c` that stops the program when called, unless the recipe's `import_stubs`
    /// gives it a return (`stubbed_by_recipe`).
    pub missing_imports: Vec<(GuestAddr, String)>,
    /// The missing imports whose stubs return what the recipe says, by thunk.
    pub stubbed_by_recipe: BTreeSet<GuestAddr>,
    /// The reports of whole-program pass analyses (such as the flag-ABI audit), by pass name.
    pub pass_reports: std::collections::BTreeMap<String, String>,
}

/// Progress callback: stage, items done, items in all.
pub type Progress<'a> = &'a (dyn Fn(Stage, usize, usize) + Sync);

fn parallel_over_functions<T: Send>(
    db: &RptDb,
    facts: &ProgramFacts,
    stage: Stage,
    progress: Progress<'_>,
    work: impl Fn(&RptDb, GuestAddr) -> Result<T, CoreError> + Sync,
) -> Result<Vec<T>, CoreError> {
    let addrs: Vec<GuestAddr> = facts.functions.iter().copied().collect();
    let total = addrs.len();
    let done = std::sync::atomic::AtomicUsize::new(0);
    progress(stage, 0, total);
    // One database handle per worker: salsa shares memoised results between them.
    addrs
        .par_iter()
        .map_with(db.clone(), |db, addr| {
            let result = work(db, *addr);
            let n = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
            progress(stage, n, total);
            result
        })
        .collect()
}

/// Runs every query of a generation and collects its files.
///
/// Fails on the first error in address order, except that all unliftable
/// instructions are reported together so a user sees every address at once.
pub fn generate(db: &RptDb, s: Session, progress: Progress<'_>) -> Result<Generation, CoreError> {
    let mut stats = GenerationStats::default();
    let mut timed = |stage: Stage, started: Instant| stats.timings.push((stage, started.elapsed()));

    let started = Instant::now();
    progress(Stage::Discover, 0, 1);
    let facts = program_facts(db, s).clone()?;
    progress(Stage::Discover, 1, 1);
    timed(Stage::Discover, started);
    let mut fatal: Vec<rpt_api::Diagnostic> = facts
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .cloned()
        .collect();
    let mut notes: Vec<rpt_api::Diagnostic> = facts
        .diagnostics
        .iter()
        .filter(|d| d.severity != Severity::Error)
        .cloned()
        .collect();

    for (addr, over) in crate::queries::recipe_overrides(db, s) {
        if !facts.functions.contains(addr) {
            return Err(CoreError::OverrideNotAFunction {
                function: *addr,
                c_symbol: over.c_symbol.clone(),
            });
        }
    }

    let started = Instant::now();
    let lifted = parallel_over_functions(db, &facts, Stage::Lift, progress, |db, addr| {
        lifted_function(db, s, FunctionId::new(db, addr)).clone()
    })?;
    timed(Stage::Lift, started);
    let overrides = crate::queries::recipe_overrides(db, s);
    for result in &lifted {
        // Code an override replaces is never run, so what could not be lifted there is only a note.
        let overridden = overrides.contains_key(&result.function.entry);
        for d in &result.diagnostics {
            if d.severity == Severity::Error && !overridden {
                fatal.push(d.clone())
            } else {
                notes.push(d.clone())
            }
        }
    }
    // One place per address: discovery's diagnostic names the enclosing function, so it goes
    // first and the lifter's about the same place is dropped.
    fatal.sort_by_key(|d| d.addr);
    fatal.dedup_by_key(|d| d.addr);
    if !fatal.is_empty() && s.recipe(db).strict_lifting {
        return Err(CoreError::Unliftable(fatal));
    }
    let fault_sites = fatal;
    let return_sites: BTreeSet<GuestAddr> = lifted.iter().flat_map(|r| r.function.return_sites()).collect();
    notes.sort_by_key(|d| d.addr);
    notes.dedup();

    let started = Instant::now();
    parallel_over_functions(db, &facts, Stage::Passes, progress, |db, addr| {
        optimized_function(db, s, FunctionId::new(db, addr)).clone().map(|_| ())
    })?;
    timed(Stage::Passes, started);

    let started = Instant::now();
    parallel_over_functions(db, &facts, Stage::EmitC, progress, |db, addr| {
        function_c(db, s, FunctionId::new(db, addr)).clone().map(|_| ())
    })?;
    timed(Stage::EmitC, started);

    let started = Instant::now();
    let shard_count = crate::queries::shard_count(db, s);
    let mut files = Vec::new();
    let mut compile_units = Vec::new();
    for shard in 0..shard_count {
        progress(Stage::Shards, shard as usize, shard_count as usize);
        let text = shard_text(db, s, shard).clone()?;
        let path = format!("shard_{shard:04}.c");
        compile_units.push(path.clone());
        files.push(GeneratedFile {
            path,
            contents: text.as_ref().clone(),
        });
        files.push(GeneratedFile {
            path: format!("ir/shard_{shard:04}.rir"),
            contents: shard_ir_text(db, s, shard).clone()?.as_ref().clone(),
        });
    }
    let guest = guest_plugin(db, s)?;
    let platform = &s.recipe(db).platform;
    for extra in guest
        .runtime_sources(platform, crate::queries::guest_options(db, s))
        .map_err(CoreError::Guest)?
    {
        if extra.path.ends_with(".c") {
            compile_units.push(extra.path.clone());
        }
        files.push(GeneratedFile {
            path: extra.path,
            contents: extra.contents,
        });
    }
    files.push(GeneratedFile {
        path: "cpu.h".into(),
        contents: cpu_header(db, s).clone()?.as_ref().clone(),
    });
    files.push(GeneratedFile {
        path: "functab.c".into(),
        contents: function_table_c(db, s).clone()?.as_ref().clone(),
    });
    files.push(GeneratedFile {
        path: "image.c".into(),
        contents: image_c(db, s).clone()?.as_ref().clone(),
    });
    let sites: Vec<(GuestAddr, String)> = fault_sites.iter().map(|d| (d.addr, d.message.clone())).collect();
    files.push(GeneratedFile {
        path: "faults.c".into(),
        contents: rpt_emit_c::fault_sites_source(&sites, &return_sites),
    });
    compile_units.push("functab.c".into());
    compile_units.push("image.c".into());
    compile_units.push("faults.c".into());
    files.push(GeneratedFile {
        path: "imports.c".into(),
        contents: rpt_emit_c::missing_import_stubs_source(&facts.missing_imports, &facts.import_stubs),
    });
    compile_units.push("imports.c".into());
    files.push(GeneratedFile {
        path: "tier.c".into(),
        contents: tier_c(db, s).clone()?.as_ref().clone(),
    });
    compile_units.push("tier.c".into());
    files.push(GeneratedFile {
        path: s.listing_name(db).clone(),
        contents: listing_text(db, s).clone()?.as_ref().clone(),
    });
    progress(Stage::Shards, shard_count as usize, shard_count as usize);
    timed(Stage::Shards, started);

    files.sort_by(|a, b| a.path.cmp(&b.path));
    stats.functions = facts.functions.len();
    stats.coverage_new = facts.coverage_new;
    stats.shards = shard_count as usize;
    Ok(Generation {
        files,
        compile_units,
        stats,
        notes,
        fault_sites,
        missing_imports: facts.missing_imports.clone(),
        stubbed_by_recipe: facts.import_stubs.keys().copied().collect(),
        pass_reports: pass_reports(db, s).clone()?,
    })
}
