//! A pass plugin that panics on every function, for the test that rpt catches it and names it.

rpt_api::export_pass!(
    rpt_api::FunctionPass,
    rpt_api::FunctionPass {
        info: || rpt_api::plugin_info!("panicker", hash = ""),
        run: |func, _| panic!("the panicker pass gives up on {}", func.name()),
    }
);
