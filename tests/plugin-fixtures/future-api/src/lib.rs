//! A pass plugin that declares the next API version, as one built against a newer rpt-api would,
//! for the test that rpt refuses it with a clear message instead of calling into it.

use rpt_api::{PassError, PassParams, PassPlugin, PluginInfo};
use rpt_ir::Function;

/// The pass.
pub struct FutureApi;

rpt_api::__rpt_export_plugin!(
    Pass,
    rpt_api::PassPlugin,
    FutureApi,
    FutureApi,
    rpt_api::abi::serve_pass,
    rpt_api::abi::serve_pass_shared,
    rpt_api::abi::API_VERSION + 1
);

impl PassPlugin for FutureApi {
    fn info(&self) -> PluginInfo {
        PluginInfo {
            name: "future-api".to_string(),
            version: env!("CARGO_PKG_VERSION").to_string(),
            hash: String::new(),
        }
    }

    fn check_params(&self, _params: &PassParams) -> Result<(), PassError> {
        Ok(())
    }

    fn run(
        &self,
        _func: &mut Function,
        _cx: &rpt_api::FunctionContext<'_>,
        _params: &PassParams,
    ) -> Result<(), PassError> {
        Ok(())
    }
}
