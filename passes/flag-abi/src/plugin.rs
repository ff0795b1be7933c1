//! The pass as rpt runs it: the [`PassPlugin`] implementation.

use rpt_api::{FunctionContext, PassError, PassParams, PassPlugin, PluginInfo, ProgramAnalysis};
use rpt_ir::{Function, Program};

use crate::{Audit, FunctionFacts, NAME, analyze, apply, facts_for};

/// The flag-abi pass. It takes no parameters.
#[derive(Clone, Copy, Debug, Default)]
pub struct FlagAbiPass;

impl PassPlugin for FlagAbiPass {
    fn check_params(&self, params: &PassParams) -> Result<(), PassError> {
        rpt_api::refuse_params(NAME, params)
    }

    fn analyze(&self, program: &Program, _params: &PassParams) -> Result<Option<ProgramAnalysis>, PassError> {
        let (universe, abi) = analyze(program).map_err(|e| PassError::Failed(e.to_string()))?;
        let is_lifted = |a| program.functions.contains_key(&a);
        let facts = program
            .functions
            .values()
            .map(|func| (func.entry, facts_for(&abi, func, is_lifted).encode()))
            .collect();
        // The report is the analysis; how much each function lost is left to the C diff.
        let audit = Audit::new(&abi, &universe, &program.state, program.functions.len(), None);
        Ok(Some(ProgramAnalysis {
            facts,
            report: audit.text,
        }))
    }

    fn run(&self, func: &mut Function, cx: &FunctionContext<'_>, _params: &PassParams) -> Result<(), PassError> {
        let facts = FunctionFacts::decode(cx.facts).map_err(PassError::Failed)?;
        apply(func, cx.state, cx.helpers, &facts).map_err(|e| PassError::Failed(e.to_string()))?;
        Ok(())
    }

    fn info(&self) -> PluginInfo {
        rpt_api::plugin_info!(NAME)
    }
}

/// This pass as rpt registers it (`framework/cli/Cargo.toml` lists the built-in ones).
pub fn plugin() -> rpt_api::Plugin {
    rpt_api::Plugin::Pass(std::sync::Arc::new(FlagAbiPass))
}
