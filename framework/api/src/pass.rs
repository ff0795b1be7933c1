//! The pass interface: a named, parameterised transform of lifted functions, optionally preceded by
//! an analysis of the whole program (DESIGN.md §4).
//!
//! A whole-program pass runs in two steps. [`PassPlugin::analyze`] sees every function as the
//! earlier passes left it and returns a [`ProgramAnalysis`]: for each function, the facts its
//! transform needs, encoded by the pass, and a report for the manifest. [`PassPlugin::run`] then
//! transforms each function with only its own facts. The core caches each function's transform on
//! those bytes, so an edit that leaves a function's facts unchanged does not transform it again.

use std::collections::BTreeMap;

use rpt_ir::{Function, GuestAddr, HelperDecl, Program, StateDesc};

use crate::PluginInfo;

/// A pass parameter value from the recipe.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub enum ParamValue {
    /// A switch.
    Bool(bool),
    /// A number.
    Int(i64),
    /// A word or path.
    Str(String),
}

/// A pass's parameters by name, in a stable order.
pub type PassParams = BTreeMap<String, ParamValue>;

/// A pass refusing its parameters or failing on a function.
#[derive(Clone, Debug, PartialEq, Eq, Hash, thiserror::Error, serde::Serialize, serde::Deserialize)]
pub enum PassError {
    /// A parameter the pass does not know or a value of the wrong kind.
    #[error("bad parameter `{name}`: {why}")]
    BadParam {
        /// The parameter.
        name: String,
        /// What is wrong.
        why: String,
    },
    /// The pass cannot transform this function.
    #[error("{0}")]
    Failed(String),
}

/// The `check_params` of a pass that takes no parameters: any parameter is a typo, named with the pass.
pub fn refuse_params(pass: &str, params: &PassParams) -> Result<(), PassError> {
    match params.keys().next() {
        Some(name) => Err(PassError::BadParam {
            name: name.clone(),
            why: format!("{pass} takes no parameters"),
        }),
        None => Ok(()),
    }
}

/// What a whole-program analysis leaves for the transforms and for the generation's manifest.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct ProgramAnalysis {
    /// Per function, the facts its transform needs, in the pass's own encoding. A function that is
    /// absent gets empty facts.
    pub facts: BTreeMap<GuestAddr, Vec<u8>>,
    /// A human-readable report, written into the manifest's `pass_reports` and printed by
    /// `rpt recompile --report`; it must be a pure function of the program (sorted, no addresses of
    /// host memory), so generations can be diffed by it.
    pub report: String,
}

/// How a pass changes code generation rather than the IR: choices of the C backend that passes
/// switch on. The core combines the enabled passes' choices (each is on if any pass asks for it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Codegen {
    /// MEMARG: the guest memory base travels as a parameter through every lifted function.
    pub memory_base_argument: bool,
    /// State in locals: slots of these roles live in C locals within each lifted function,
    /// loaded at entry and written back to `struct cpu` only where code outside the function can
    /// see them (passes/state-in-memory).
    #[serde(default)]
    pub state_in_locals: rpt_ir::RoleSet,
}

impl Codegen {
    /// Both sets of choices.
    pub fn union(self, other: Codegen) -> Codegen {
        Codegen {
            memory_base_argument: self.memory_base_argument || other.memory_base_argument,
            state_in_locals: self.state_in_locals.union(other.state_in_locals),
        }
    }
}

/// What a pass sees besides the function it transforms.
#[derive(Clone, Copy, Debug)]
pub struct FunctionContext<'a> {
    /// The guest's register file.
    pub state: &'a StateDesc,
    /// The program's runtime helpers, with their declared effects.
    pub helpers: &'a BTreeMap<String, HelperDecl>,
    /// This function's facts from the pass's own [`PassPlugin::analyze`] (empty for a pass without
    /// one, or for a function the analysis left none).
    pub facts: &'a [u8],
}

/// What [`PassPlugin::run_all`] sees besides the functions: the context they share and each
/// function's facts, by position.
#[derive(Clone, Copy, Debug)]
pub struct BatchContext<'a> {
    /// The guest's register file.
    pub state: &'a StateDesc,
    /// The program's runtime helpers.
    pub helpers: &'a BTreeMap<String, HelperDecl>,
    /// The facts of each function, in the order of the batch; missing entries are empty facts.
    pub facts: &'a [Vec<u8>],
}

impl<'a> BatchContext<'a> {
    /// The context of the batch's `index`th function.
    pub fn function(&self, index: usize) -> FunctionContext<'a> {
        FunctionContext {
            state: self.state,
            helpers: self.helpers,
            facts: self.facts.get(index).map_or(&[], Vec::as_slice),
        }
    }
}

/// An optimisation or analysis pass over lifted functions.
pub trait PassPlugin: Send + Sync {
    /// Name, version and source hash.
    fn info(&self) -> PluginInfo;
    /// Checks parameters before any function is transformed, so a recipe typo fails early.
    fn check_params(&self, params: &PassParams) -> Result<(), PassError>;
    /// Analyses the whole program before any function is transformed; `None` (the default) for a
    /// pass that works on each function alone.
    ///
    /// `program` holds every lifted function as the passes before this one left it; functions the
    /// recipe overrides with C are not among them but are listed in `program.externs`, since, like
    /// platform imports, they are code the analysis cannot see.
    fn analyze(&self, program: &Program, params: &PassParams) -> Result<Option<ProgramAnalysis>, PassError> {
        let _ = (program, params);
        Ok(None)
    }
    /// Whether [`PassPlugin::analyze`] can return an analysis. A pass that only transforms each
    /// function alone says `false`, and the core then neither assembles the whole program for it
    /// nor waits for every function to reach it. The default, `true`, is always correct.
    fn analyzes(&self) -> bool {
        true
    }
    /// The code-generation choices the pass makes (none by default).
    fn codegen(&self, params: &PassParams) -> Codegen {
        let _ = params;
        Codegen::default()
    }
    /// Transforms one function in place.
    fn run(&self, func: &mut Function, cx: &FunctionContext<'_>, params: &PassParams) -> Result<(), PassError>;

    /// Transforms many functions, stopping at the first failure, which comes with the index of
    /// its function. A pass loaded from a library does this in a few calls across the boundary
    /// (each carrying some thousands of IR instructions), not one per function; the default runs
    /// [`PassPlugin::run`] on each.
    fn run_all(
        &self,
        funcs: &mut [Function],
        batch: &BatchContext<'_>,
        params: &PassParams,
    ) -> Result<(), (usize, PassError)> {
        for (index, func) in funcs.iter_mut().enumerate() {
            self.run(func, &batch.function(index), params).map_err(|e| (index, e))?;
        }
        Ok(())
    }
}

/// A pass that is one function over one function: no parameters (any given are refused), no
/// whole-program analysis, no code-generation choices. Small passes and test plugins are this.
#[derive(Clone, Copy, Debug)]
pub struct FunctionPass {
    /// What [`PassPlugin::info`] answers (`rpt_api::plugin_info!(NAME)` for a crate with a source hash).
    pub info: fn() -> PluginInfo,
    /// The transformation.
    pub run: fn(&mut Function, &FunctionContext<'_>) -> Result<(), PassError>,
}

impl PassPlugin for FunctionPass {
    fn info(&self) -> PluginInfo {
        (self.info)()
    }

    fn check_params(&self, params: &PassParams) -> Result<(), PassError> {
        refuse_params(&(self.info)().name, params)
    }

    fn analyzes(&self) -> bool {
        false
    }

    fn run(&self, func: &mut Function, cx: &FunctionContext<'_>, _params: &PassParams) -> Result<(), PassError> {
        (self.run)(func, cx)
    }
}
