//! A pass plugin that panics on every function, for the test that rpt catches it and names it.

use rpt_api::{PassError, PassParams, PassPlugin, PluginInfo};
use rpt_ir::Function;

/// The pass.
pub struct Panicker;

rpt_api::export_pass!(Panicker, Panicker);

impl PassPlugin for Panicker {
    fn info(&self) -> PluginInfo {
        PluginInfo {
            name: "panicker".to_string(),
            version: env!("CARGO_PKG_VERSION").to_string(),
            hash: String::new(),
        }
    }

    fn check_params(&self, _params: &PassParams) -> Result<(), PassError> {
        Ok(())
    }

    fn run(
        &self,
        func: &mut Function,
        _cx: &rpt_api::FunctionContext<'_>,
        _params: &PassParams,
    ) -> Result<(), PassError> {
        panic!("the panicker pass gives up on {}", func.name());
    }
}
