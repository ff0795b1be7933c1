//! A pass plugin that returns IR the verifier rejects (a write to a state slot that does not
//! exist, of a value that is never defined), for the test that rpt names the pass.

use rpt_ir::{Function, Inst, InstKind, SlotId, Value};

fn break_ir(func: &mut Function, _: &rpt_api::FunctionContext<'_>) -> Result<(), rpt_api::PassError> {
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

rpt_api::export_pass!(
    rpt_api::FunctionPass,
    rpt_api::FunctionPass {
        info: || rpt_api::plugin_info!("ir-breaker", hash = ""),
        run: break_ir,
    }
);
