//! A pass plugin that returns IR the verifier rejects (a write to a state slot that does not
//! exist, of a value that is never defined), for the test that rpt names the pass.

use rpt_api::{PassError, PassParams, PassPlugin, PluginInfo};
use rpt_ir::{Function, Inst, InstKind, SlotId, Value};

/// The pass.
pub struct IrBreaker;

rpt_api::export_pass!(IrBreaker, IrBreaker);

impl PassPlugin for IrBreaker {
    fn info(&self) -> PluginInfo {
        PluginInfo {
            name: "ir-breaker".to_string(),
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
        if let Some(block) = func.blocks.first_mut() {
            block.insts.push(Inst {
                result: None,
                kind: InstKind::SetSlot {
                    slot: SlotId(u32::MAX),
                    value: Value(u32::MAX),
                },
            });
        }
        Ok(())
    }
}
