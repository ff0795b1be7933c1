//! The tracked queries of the pipeline, from loaded image to shard text.
//!
//! Each query returns a value that compares equal when nothing relevant
//! changed, so salsa's early cut-off stops an edit from rippling: adding a
//! function hint re-runs discovery, but every other function's lifted IR
//! compares equal and its C is reused.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use rpt_api::{
    Diagnostic, GuestImage, GuestOptions, GuestPlugin, LiftResult, MemoryModel, ParamValue, PassParams,
    ProgramAnalysis, Seeds,
};
use rpt_emit_c::{EmitContext, EmittedFunction};
use rpt_ir::print::function_to_string;
use rpt_ir::verify::{VerifyContext, verify_function};
use rpt_ir::{Function, GuestAddr, HelperDecl, StateDesc};

use crate::{CoreError, Db, FunctionId, Session};

// Narrow projections of the recipe: each compares equal when its part of the recipe did
// not change, so a query reading one is not re-run by edits to the others.

/// The recipe's guest plugin name.
#[salsa::tracked(returns(ref))]
pub fn guest_name(db: &dyn Db, s: Session) -> String {
    s.recipe(db).guest.clone()
}

/// The enabled passes of the recipe's pipeline ([`crate::pipeline`]), in order.
#[salsa::tracked(returns(ref))]
pub fn enabled_passes(db: &dyn Db, s: Session) -> Vec<rpt_recipe::PassConfig> {
    let recipe = s.recipe(db);
    let host = db.registry().host(&recipe.host).cloned();
    crate::pipeline(recipe, host.as_deref())
        .into_iter()
        .filter(|p| p.enabled)
        .collect()
}

/// The recipe's guest options, in the plugin interface's terms.
#[salsa::tracked(returns(ref))]
pub fn guest_options(db: &dyn Db, s: Session) -> GuestOptions {
    params(&s.recipe(db).guest_options)
}

/// The recipe's overrides by guest address.
#[salsa::tracked(returns(ref))]
pub fn recipe_overrides(db: &dyn Db, s: Session) -> BTreeMap<GuestAddr, rpt_recipe::Override> {
    s.recipe(db)
        .overrides
        .iter()
        .map(|o| (GuestAddr(o.function), o.clone()))
        .collect()
}

/// The recipe's `run_time_tier`, alone, so that what depends on it is not re-run by an edit
/// of anything else in the recipe.
#[salsa::tracked(returns(copy))]
pub fn run_time_tier(db: &dyn Db, s: Session) -> bool {
    s.recipe(db).run_time_tier
}

/// The recipe's `count_instructions`, alone (as [`run_time_tier`]).
#[salsa::tracked(returns(copy))]
pub fn count_instructions(db: &dyn Db, s: Session) -> bool {
    s.recipe(db).count_instructions
}

/// The recipe's shard count.
#[salsa::tracked(returns(copy))]
pub fn shard_count(db: &dyn Db, s: Session) -> u32 {
    s.recipe(db).shards
}

pub(crate) fn guest_plugin(db: &dyn Db, s: Session) -> Result<Arc<dyn GuestPlugin>, CoreError> {
    let name = guest_name(db, s);
    db.registry()
        .guest(name)
        .cloned()
        .ok_or_else(|| CoreError::UnknownGuest {
            name: name.clone(),
            known: db.registry().guest_names().join(", "),
        })
}

/// The guest image, loaded by the guest plugin.
#[salsa::tracked(returns(ref))]
pub fn guest_image(db: &dyn Db, s: Session) -> Result<Arc<GuestImage>, CoreError> {
    let guest = guest_plugin(db, s)?;
    let recipe = s.recipe(db);
    guest
        .load(s.image(db), &recipe.platform, guest_options(db, s))
        .map(Arc::new)
        .map_err(CoreError::Guest)
}

/// What every function's lifting and emission shares: state, helpers, externs and the function set.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ProgramFacts {
    /// The guest register file.
    pub state: StateDesc,
    /// Runtime helpers by name.
    pub helpers: BTreeMap<String, HelperDecl>,
    /// Platform externs: thunk address to C symbol (a stub's for an import the platform lacks).
    pub externs: BTreeMap<GuestAddr, String>,
    /// The imports the platform lacks, in import-table order: thunk and `module!name`. Each thunk's
    /// extern is a generated stub that stops the program when called, or returns what the
    /// recipe's `import_stubs` says (`import_stubs`).
    pub missing_imports: Vec<(GuestAddr, String)>,
    /// The returns the recipe gives stubs of missing imports, by thunk.
    pub import_stubs: BTreeMap<GuestAddr, rpt_emit_c::StubReturn>,
    /// The externs the platform says read and write no flag (`Externs::flag_transparent`).
    pub flag_transparent: BTreeSet<GuestAddr>,
    /// The externs the platform says read and write only some slots (`Externs::state_use`).
    pub extern_state_use: BTreeMap<GuestAddr, rpt_api::ExternStateUse>,
    /// How the guest addresses memory.
    pub memory: MemoryModel,
    /// The image's entry point.
    pub entry: GuestAddr,
    /// Every discovered function.
    pub functions: BTreeSet<GuestAddr>,
    /// Functions whose address is taken.
    pub address_taken: BTreeSet<GuestAddr>,
    /// The image's tables of function addresses.
    pub pointer_tables: BTreeMap<GuestAddr, Vec<GuestAddr>>,
    /// What discovery noticed.
    pub diagnostics: Vec<Diagnostic>,
    /// How many of the recipe's coverage entries (where an earlier run entered the run-time tier)
    /// discovery does not find from the recipe's own seeds.
    pub coverage_new: usize,
}

/// The recipe's `import_stubs`, by the thunk of the missing import each names. A name that is
/// not a missing import of the image (a typo, or one the platform implements) is an error.
fn stub_returns(
    recipe: &rpt_recipe::Recipe,
    missing: &[(GuestAddr, String)],
) -> Result<BTreeMap<GuestAddr, rpt_emit_c::StubReturn>, CoreError> {
    // Module names compare as the platform compares them (without case, with or without `.dll`);
    // function names exactly.
    let module = |m: &str| {
        let m = m.to_ascii_lowercase();
        m.strip_suffix(".dll").map(str::to_string).unwrap_or(m)
    };
    let same = |a: &str, b: &str| match (a.split_once('!'), b.split_once('!')) {
        (Some((ma, fa)), Some((mb, fb))) => module(ma) == module(mb) && fa == fb,
        _ => a == b,
    };
    let mut out = BTreeMap::new();
    for (name, stub) in &recipe.import_stubs {
        let Some(&(thunk, _)) = missing.iter().find(|(_, m)| same(m, name)) else {
            return Err(CoreError::UnknownImportStub {
                name: name.clone(),
                missing: if missing.is_empty() {
                    "none".to_string()
                } else {
                    missing.iter().map(|(_, m)| m.as_str()).collect::<Vec<_>>().join(", ")
                },
            });
        };
        out.insert(
            thunk,
            rpt_emit_c::StubReturn {
                value: stub.returns,
                pops: stub.pops,
                last_error: stub.last_error,
            },
        );
    }
    Ok(out)
}

/// Discovery and the program-wide facts.
#[salsa::tracked(returns(ref))]
pub fn program_facts(db: &dyn Db, s: Session) -> Result<Arc<ProgramFacts>, CoreError> {
    let guest = guest_plugin(db, s)?;
    let image = guest_image(db, s).clone()?;
    let recipe = s.recipe(db);
    let options = guest_options(db, s);
    guest.check_options(options).map_err(CoreError::Guest)?;
    let served = guest.externs(&image, &recipe.platform).map_err(CoreError::Guest)?;
    let import_stubs = stub_returns(recipe, &served.missing)?;
    let unstubbed: Vec<String> = served
        .missing
        .iter()
        .filter(|(thunk, _)| !import_stubs.contains_key(thunk))
        .map(|(_, name)| name.clone())
        .collect();
    if recipe.strict_imports && !unstubbed.is_empty() {
        return Err(CoreError::Guest(rpt_api::GuestError::MissingImports {
            platform: recipe.platform.clone(),
            imports: unstubbed,
        }));
    }
    let mut externs = served.implemented;
    for (thunk, _) in &served.missing {
        externs.insert(*thunk, rpt_emit_c::missing_import_symbol(*thunk));
    }
    let own_seeds = Seeds {
        entry_points: recipe.entry_points.iter().map(|a| GuestAddr(*a)).collect(),
        function_hints: recipe.function_hints.iter().map(|a| GuestAddr(*a)).collect(),
    };
    // Where an earlier run entered the run-time tier are entries too (the coverage file).
    let mut seeds = own_seeds.clone();
    seeds
        .entry_points
        .extend(recipe.coverage_entries.keys().map(|a| GuestAddr(*a)));
    let discovery = guest.discover(&image, &seeds);
    // Coverage entries are where the tier was entered through a pointer computed at run time:
    // passes must treat them as the indirect calls' targets they are (what an indirect call hands
    // over, the flag ABI of functions called from anywhere).
    let address_taken: BTreeSet<GuestAddr> = discovery
        .address_taken
        .iter()
        .copied()
        .chain(recipe.coverage_entries.keys().map(|a| GuestAddr(*a)))
        .filter(|a| discovery.functions.contains(a))
        .collect();
    let coverage_new = if recipe.coverage_entries.is_empty() {
        0
    } else {
        let own = guest.discover(&image, &own_seeds);
        recipe
            .coverage_entries
            .keys()
            .filter(|a| !own.functions.contains(&GuestAddr(**a)))
            .count()
    };
    Ok(Arc::new(ProgramFacts {
        state: guest.state(options),
        helpers: guest
            .helpers(options)
            .into_iter()
            .map(|h| (h.name.clone(), h))
            .collect(),
        flag_transparent: served
            .flag_transparent
            .into_iter()
            .filter(|thunk| externs.contains_key(thunk))
            .collect(),
        extern_state_use: served
            .state_use
            .into_iter()
            .filter(|(thunk, _)| externs.contains_key(thunk))
            .collect(),
        externs,
        missing_imports: served.missing,
        import_stubs,
        memory: guest.memory_model(&recipe.platform, options),
        entry: image.entry,
        functions: discovery.functions,
        address_taken,
        pointer_tables: discovery.pointer_tables,
        diagnostics: discovery.diagnostics,
        coverage_new,
    }))
}

fn verify(func: &Function, facts: &ProgramFacts) -> Result<(), String> {
    let callees: BTreeSet<GuestAddr> = facts.functions.iter().chain(facts.externs.keys()).copied().collect();
    let ctx = VerifyContext {
        state: &facts.state,
        helpers: Some(&facts.helpers),
        callees: Some(&callees),
    };
    verify_function(func, ctx).map_err(|e| e.to_string())
}

/// One function as the guest lifts it, verified.
#[salsa::tracked(returns(ref))]
pub fn lifted_function<'db>(db: &'db dyn Db, s: Session, f: FunctionId<'db>) -> Result<Arc<LiftResult>, CoreError> {
    let guest = guest_plugin(db, s)?;
    let image = guest_image(db, s).clone()?;
    let facts = program_facts(db, s).clone()?;
    let addr = f.addr(db);
    if !facts.functions.contains(&addr) {
        return Err(CoreError::NotAFunction(addr));
    }
    let lifted = guest.lift(&image, addr, &facts.functions, guest_options(db, s));
    verify(&lifted.function, &facts).map_err(|errors| CoreError::BadLift {
        function: addr,
        errors,
        text: function_to_string(&lifted.function, &facts.state),
    })?;
    Ok(Arc::new(lifted))
}

fn params(params: &BTreeMap<String, rpt_recipe::ParamValue>) -> BTreeMap<String, ParamValue> {
    params
        .iter()
        .map(|(k, v)| {
            let v = match v {
                rpt_recipe::ParamValue::Bool(b) => ParamValue::Bool(*b),
                rpt_recipe::ParamValue::Int(i) => ParamValue::Int(*i),
                rpt_recipe::ParamValue::Str(s) => ParamValue::Str(s.clone()),
            };
            (k.clone(), v)
        })
        .collect()
}

/// One function after the recipe's passes, verified after each pass.
#[salsa::tracked(returns(ref))]
pub fn optimized_function<'db>(db: &'db dyn Db, s: Session, f: FunctionId<'db>) -> Result<Arc<Function>, CoreError> {
    function_after_passes(db, s, f, enabled_passes(db, s).len() as u32).clone()
}

/// The registered pass behind the recipe's `index`th enabled pass, with its parameters.
fn pass_at(
    db: &dyn Db,
    s: Session,
    index: u32,
) -> Result<(String, Arc<dyn rpt_api::PassPlugin>, PassParams), CoreError> {
    let passes = enabled_passes(db, s);
    let Some(config) = passes.get(index as usize) else {
        return Err(CoreError::Pass {
            pass: format!("#{index}"),
            function: GuestAddr(0),
            message: "no such pass in the recipe".to_string(),
        });
    };
    let pass = db
        .registry()
        .pass(&config.name)
        .cloned()
        .ok_or_else(|| CoreError::UnknownPass {
            name: config.name.clone(),
            known: none_if_empty(db.registry().pass_names()),
        })?;
    Ok((config.name.clone(), pass, params(&config.params)))
}

/// One function after the first `done` enabled passes (0: as lifted), verified after each.
#[salsa::tracked(returns(ref))]
pub fn function_after_passes<'db>(
    db: &'db dyn Db,
    s: Session,
    f: FunctionId<'db>,
    done: u32,
) -> Result<Arc<Function>, CoreError> {
    if done == 0 {
        return Ok(Arc::new(lifted_function(db, s, f).clone()?.function.clone()));
    }
    let index = done - 1;
    let before = function_after_passes(db, s, f, index).clone()?;
    let (name, pass, params) = pass_at(db, s, index)?;
    let facts = program_facts(db, s).clone()?;
    let own_facts = function_facts(db, s, f, index).clone()?;
    let mut func = before.as_ref().clone();
    let entry = func.entry;
    let fail = |message: String| CoreError::Pass {
        pass: name.clone(),
        function: entry,
        message,
    };
    let cx = rpt_api::FunctionContext {
        state: &facts.state,
        helpers: &facts.helpers,
        facts: &own_facts,
    };
    pass.run(&mut func, &cx, &params).map_err(|e| fail(e.to_string()))?;
    verify(&func, &facts).map_err(|errors| {
        fail(format!(
            "the result does not verify:\n{errors}\n{}",
            function_to_string(&func, &facts.state)
        ))
    })?;
    Ok(Arc::new(func))
}

/// Every function as `function` gives it, in one program with the facts' state, helpers, externs
/// and address-taken set. Overridden functions are left out and listed as externs: the code that
/// runs there is the override's C, which no analysis can see (and which may read every flag).
fn whole_program<'db>(
    db: &'db dyn Db,
    s: Session,
    facts: &ProgramFacts,
    function: impl Fn(FunctionId<'db>) -> Result<Arc<Function>, CoreError>,
) -> Result<rpt_ir::Program, CoreError> {
    let overrides = recipe_overrides(db, s);
    let mut program = rpt_ir::Program::new(facts.state.clone());
    program.helpers = facts.helpers.clone();
    program.externs = facts.externs.clone();
    program.address_taken = facts.address_taken.clone();
    program.flag_transparent = facts.flag_transparent.clone();
    program.pointer_tables = facts.pointer_tables.clone();
    for &addr in &facts.functions {
        if let Some(over) = overrides.get(&addr) {
            program.externs.insert(addr, over.c_symbol.clone());
            program.flag_transparent.remove(&addr);
            continue;
        }
        let func = function(FunctionId::new(db, addr))?;
        program.functions.insert(addr, func.as_ref().clone());
    }
    Ok(program)
}

/// The whole-program analysis of the recipe's `index`th enabled pass (`None` for a pass that has
/// none), over every function as the passes before it left it. Overridden functions are left out
/// and listed as externs: the code that runs there is the override's C, which no pass can see.
#[salsa::tracked(returns(ref))]
pub fn program_analysis(db: &dyn Db, s: Session, index: u32) -> Result<Option<Arc<ProgramAnalysis>>, CoreError> {
    let (name, pass, params) = pass_at(db, s, index)?;
    if !pass.analyzes() {
        return Ok(None);
    }
    let facts = program_facts(db, s).clone()?;
    let program = whole_program(db, s, &facts, |f| function_after_passes(db, s, f, index).clone())?;
    let analysis = pass.analyze(&program, &params).map_err(|e| CoreError::Pass {
        pass: name,
        function: facts.entry,
        message: format!("whole-program analysis: {e}"),
    })?;
    Ok(analysis.map(Arc::new))
}

/// One function's share of a whole-program analysis: what its transform by the `index`th pass is
/// keyed on, so a function whose facts did not change is not transformed again.
#[salsa::tracked(returns(ref))]
pub fn function_facts<'db>(
    db: &'db dyn Db,
    s: Session,
    f: FunctionId<'db>,
    index: u32,
) -> Result<Arc<[u8]>, CoreError> {
    let analysis = program_analysis(db, s, index).clone()?;
    Ok(analysis
        .and_then(|a| a.facts.get(&f.addr(db)).map(|bytes| Arc::from(bytes.as_slice())))
        .unwrap_or_else(|| Arc::from(&[][..])))
}

/// The reports of the recipe's whole-program analyses, by pass name (for the manifest).
#[salsa::tracked(returns(ref))]
pub fn pass_reports(db: &dyn Db, s: Session) -> Result<BTreeMap<String, String>, CoreError> {
    let mut reports = BTreeMap::new();
    for index in 0..enabled_passes(db, s).len() as u32 {
        if let Some(analysis) = program_analysis(db, s, index).clone()? {
            let (name, _, _) = pass_at(db, s, index)?;
            reports.insert(name, analysis.report.clone());
        }
    }
    Ok(reports)
}

fn none_if_empty(names: Vec<String>) -> String {
    if names.is_empty() {
        "none".to_string()
    } else {
        names.join(", ")
    }
}

/// How far an instruction's span may reach in [`original_bytes_sha256`]: longer than any
/// instruction of a supported guest (x86 instructions are at most 15 bytes).
pub const ORIGINAL_SPAN_LIMIT: u64 = 16;

/// The sha256 of a function's original bytes, which guards an override.
///
/// The original bytes are those of the guest instructions the lifter marked (every `mark pc` in
/// the lifted IR), in ascending address order, each address once: the span of an instruction runs
/// from its address to the next marked address, but at most [`ORIGINAL_SPAN_LIMIT`] bytes and never
/// past its segment's initialised bytes. For straight-line code that is exactly each instruction's
/// bytes; after the last instruction of a run (a `ret`, a `jmp`) it also takes in up to 16 of the
/// bytes that follow, so the guard errs on the strict side. The spans are concatenated without
/// separators. This needs nothing but the IR and the image, so it is the same for every guest.
pub fn original_bytes_sha256(func: &Function, image: &GuestImage) -> String {
    let marks: BTreeSet<u64> = func
        .blocks
        .iter()
        .flat_map(|b| b.insts.iter())
        .filter_map(|inst| match inst.kind {
            rpt_ir::InstKind::Mark { pc } => Some(pc.0),
            _ => None,
        })
        .collect();
    let mut bytes = Vec::new();
    let mut iter = marks.iter().peekable();
    while let Some(&pc) = iter.next() {
        let limit = match iter.peek() {
            Some(&&next) => (next - pc).min(ORIGINAL_SPAN_LIMIT),
            None => ORIGINAL_SPAN_LIMIT,
        };
        // `limit` is at most 16, so it fits any usize.
        if let Some(span) = image.bytes_at(GuestAddr(pc), limit as usize) {
            bytes.extend_from_slice(span);
        }
    }
    rpt_recipe::sha256_hex(&bytes)
}

/// The C function replacing this function, if the recipe overrides it; checks the override's
/// guard, the sha256 of the function's original bytes ([`original_bytes_sha256`]).
#[salsa::tracked(returns(ref))]
pub fn function_override<'db>(db: &'db dyn Db, s: Session, f: FunctionId<'db>) -> Result<Option<String>, CoreError> {
    let addr = f.addr(db);
    let Some(over) = recipe_overrides(db, s).get(&addr) else {
        return Ok(None);
    };
    let lifted = lifted_function(db, s, f).clone()?;
    let image = guest_image(db, s).clone()?;
    let actual = original_bytes_sha256(&lifted.function, &image);
    if actual != over.original_sha256 {
        return Err(CoreError::OverrideMismatch {
            function: addr,
            c_symbol: over.c_symbol.clone(),
            expected: over.original_sha256.clone(),
            actual,
        });
    }
    Ok(Some(over.c_symbol.clone()))
}

/// The code-generation choices of the recipe's enabled passes, combined. An unknown pass is
/// reported by the pass queries; here it simply makes no choice.
#[salsa::tracked(returns(copy))]
pub fn codegen_options(db: &dyn Db, s: Session) -> rpt_api::Codegen {
    enabled_passes(db, s)
        .iter()
        .filter_map(|config| Some(db.registry().pass(&config.name)?.codegen(&params(&config.params))))
        .fold(rpt_api::Codegen::default(), rpt_api::Codegen::union)
}

/// With state in locals, what every lifted function may read and write after the passes, callees
/// included (`rpt_emit_c::state_use`): a call then hands its callee only that. Overridden functions
/// are externs here, as in [`program_analysis`]: their C may touch anything. Without state in
/// locals nothing is handed over, so nothing is analysed.
#[salsa::tracked(returns(ref))]
pub fn program_state_use(db: &dyn Db, s: Session) -> Result<Arc<rpt_emit_c::state_use::ProgramStateUse>, CoreError> {
    if codegen_options(db, s).state_in_locals.is_empty() {
        return Ok(Arc::default());
    }
    let facts = program_facts(db, s).clone()?;
    let overrides = recipe_overrides(db, s);
    let program = whole_program(db, s, &facts, |f| optimized_function(db, s, f).clone())?;
    // An override's C may touch anything: its address has no extern contract.
    let contracts: BTreeMap<GuestAddr, rpt_api::ExternStateUse> = facts
        .extern_state_use
        .iter()
        .filter(|(addr, _)| !overrides.contains_key(addr))
        .map(|(addr, u)| (*addr, u.clone()))
        .collect();
    Ok(Arc::new(rpt_emit_c::state_use::analyze(
        &program,
        &contracts,
        facts.memory.stack_pointer,
        &facts.memory.scratch_registers,
    )))
}

/// What the callees of one function may read and write: the part of [`program_state_use`] its C
/// depends on, so that a change elsewhere that leaves it alone does not emit the function again.
#[salsa::tracked(returns(ref))]
pub fn function_calls_state_use<'db>(
    db: &'db dyn Db,
    s: Session,
    f: FunctionId<'db>,
) -> Result<Arc<rpt_emit_c::CallStateUse>, CoreError> {
    let uses = program_state_use(db, s).clone()?;
    let func = optimized_function(db, s, f).clone()?;
    Ok(Arc::new(uses.calls_of(&func)))
}

/// What the C of this generation is emitted against, with `calls` for the code being emitted.
fn emit_context<'a>(
    db: &'a dyn Db,
    s: Session,
    facts: &'a ProgramFacts,
    calls: &'a rpt_emit_c::CallStateUse,
) -> EmitContext<'a> {
    EmitContext {
        state: &facts.state,
        helpers: &facts.helpers,
        externs: &facts.externs,
        memory: &facts.memory,
        listing_name: s.listing_name(db),
        memarg: codegen_options(db, s).memory_base_argument,
        state_in_locals: codegen_options(db, s).state_in_locals,
        calls,
        run_time_tier: run_time_tier(db, s),
        count_instructions: count_instructions(db, s),
    }
}

/// One function's C definition (for an overridden function, a call to its replacement).
#[salsa::tracked(returns(ref))]
pub fn function_c<'db>(db: &'db dyn Db, s: Session, f: FunctionId<'db>) -> Result<Arc<EmittedFunction>, CoreError> {
    if let Some(symbol) = function_override(db, s, f).clone()? {
        return Ok(Arc::new(rpt_emit_c::emit_override(
            f.addr(db),
            &symbol,
            s.listing_name(db),
            codegen_options(db, s).memory_base_argument,
        )));
    }
    let func = optimized_function(db, s, f).clone()?;
    let facts = program_facts(db, s).clone()?;
    let calls = function_calls_state_use(db, s, f).clone()?;
    let ctx = emit_context(db, s, &facts, &calls);
    rpt_emit_c::emit_function(&func, &ctx)
        .map(Arc::new)
        .map_err(|e| CoreError::Emit {
            function: func.entry,
            message: e.to_string(),
        })
}

/// The C text of one shard: the functions whose address hashes to it, in address order.
#[salsa::tracked(returns(ref))]
pub fn shard_text(db: &dyn Db, s: Session, shard: u32) -> Result<Arc<String>, CoreError> {
    let facts = program_facts(db, s).clone()?;
    let count = shard_count(db, s);
    let mut emitted = Vec::new();
    for addr in facts
        .functions
        .iter()
        .filter(|a| rpt_emit_c::shard_of(**a, count) == shard)
    {
        emitted.push(function_c(db, s, FunctionId::new(db, *addr)).clone()?);
    }
    let refs: Vec<&EmittedFunction> = emitted.iter().map(|e| e.as_ref()).collect();
    Ok(Arc::new(rpt_emit_c::shard_source(
        &refs,
        &facts.externs,
        codegen_options(db, s).memory_base_argument,
    )))
}

/// The IR text of one shard: the same functions as [`shard_text`], after passes, in address
/// order, so a generation shows (and `rpt archive diff` compares) the IR each function's C came from.
/// An overridden function's IR follows a comment naming its replacement.
#[salsa::tracked(returns(ref))]
pub fn shard_ir_text(db: &dyn Db, s: Session, shard: u32) -> Result<Arc<String>, CoreError> {
    let facts = program_facts(db, s).clone()?;
    let count = shard_count(db, s);
    let overrides = recipe_overrides(db, s);
    let mut out =
        format!("; Generated by rpt: the IR of shard {shard} after passes, by guest address. Not compiled.\n");
    for addr in facts
        .functions
        .iter()
        .filter(|a| rpt_emit_c::shard_of(**a, count) == shard)
    {
        let func = optimized_function(db, s, FunctionId::new(db, *addr)).clone()?;
        out.push('\n');
        if let Some(over) = overrides.get(addr) {
            out.push_str(&format!(
                "; replaced by the C function `{}` (a recipe override); this IR is not compiled\n",
                over.c_symbol
            ));
        }
        out.push_str(&function_to_string(&func, &facts.state));
    }
    Ok(Arc::new(out))
}

/// The generated `cpu.h`.
#[salsa::tracked(returns(ref))]
pub fn cpu_header(db: &dyn Db, s: Session) -> Result<Arc<String>, CoreError> {
    let facts = program_facts(db, s).clone()?;
    let guest = guest_plugin(db, s)?;
    let inline_header = guest
        .runtime_sources(&s.recipe(db).platform, guest_options(db, s))
        .map_err(CoreError::Guest)?
        .iter()
        .any(|f| f.path == rpt_api::GUEST_INLINE_HEADER);
    Ok(Arc::new(rpt_emit_c::cpu_header(
        &facts.state,
        facts.memory.clone(),
        &facts.helpers,
        inline_header,
    )))
}

/// The generated `functab.c` (which functions the direct table holds depends on what every
/// function reads and writes: [`program_state_use`]).
#[salsa::tracked(returns(ref))]
pub fn function_table_c(db: &dyn Db, s: Session) -> Result<Arc<String>, CoreError> {
    let facts = program_facts(db, s).clone()?;
    let uses = program_state_use(db, s).clone()?;
    Ok(Arc::new(rpt_emit_c::function_table(
        &facts.functions,
        &facts.externs,
        facts.entry,
        codegen_options(db, s).memory_base_argument,
        &uses,
    )))
}

/// The generated `image.c`.
#[salsa::tracked(returns(ref))]
pub fn image_c(db: &dyn Db, s: Session) -> Result<Arc<String>, CoreError> {
    let image = guest_image(db, s).clone()?;
    Ok(Arc::new(rpt_emit_c::image_source(&image)))
}

/// The generated `tier.c`: the run-time tier's instructions (`rpt_api::tier`), every instruction
/// of the executable segments that no lifted function holds, lifted alone by the guest and
/// grouped into forms; empty tables when the recipe turns the tier off.
#[salsa::tracked(returns(ref))]
pub fn tier_c(db: &dyn Db, s: Session) -> Result<Arc<String>, CoreError> {
    let facts = program_facts(db, s).clone()?;
    let mut instructions = Vec::new();
    if run_time_tier(db, s) {
        let guest = guest_plugin(db, s)?;
        let image = guest_image(db, s).clone()?;
        let mut covered = BTreeSet::new();
        for addr in &facts.functions {
            let lifted = lifted_function(db, s, FunctionId::new(db, *addr)).clone()?;
            covered.extend(lifted.listing.iter().map(|(at, _)| *at));
        }
        let ctx = VerifyContext {
            state: &facts.state,
            helpers: Some(&facts.helpers),
            // A tier instruction may call any address: the tier finds what is there.
            callees: None,
        };
        for lifted in guest.lift_uncovered(&image, &facts.functions, &covered, guest_options(db, s)) {
            let addr = lifted.function.entry;
            verify_function(&lifted.function, ctx).map_err(|e| CoreError::BadLift {
                function: addr,
                errors: e.to_string(),
                text: function_to_string(&lifted.function, &facts.state),
            })?;
            instructions.push((addr, lifted.function));
        }
    }
    let forms = rpt_api::tier::group_forms(&instructions);
    // The tier keeps the state in `struct cpu`; `tier_source` emits its forms that way.
    let ctx = emit_context(db, s, &facts, &rpt_emit_c::state_use::UNKNOWN_CALLS);
    rpt_emit_c::tier_source(&forms, &facts.functions, &ctx)
        .map(Arc::new)
        .map_err(|e| CoreError::Emit {
            function: GuestAddr(0),
            message: format!("the run-time tier: {e}"),
        })
}

/// The listing: every lifted guest instruction with its disassembly.
#[salsa::tracked(returns(ref))]
pub fn listing_text(db: &dyn Db, s: Session) -> Result<Arc<String>, CoreError> {
    let facts = program_facts(db, s).clone()?;
    let mut lines = BTreeMap::new();
    for addr in &facts.functions {
        let lifted = lifted_function(db, s, FunctionId::new(db, *addr)).clone()?;
        // Code shared by two functions is listed once.
        lines.extend(lifted.listing.iter().cloned());
    }
    let lines: Vec<(GuestAddr, String)> = lines.into_iter().collect();
    Ok(Arc::new(rpt_emit_c::listing(&lines)))
}
