//! A pass plugin that declares the next API version, as one built against a newer rpt-api would,
//! for the test that rpt refuses it with a clear message instead of calling into it.

rpt_api::__rpt_export_plugin!(
    Pass,
    rpt_api::PassPlugin,
    rpt_api::FunctionPass,
    rpt_api::FunctionPass {
        info: || rpt_api::plugin_info!("future-api", hash = ""),
        run: |_, _| Ok(()),
    },
    rpt_api::abi::serve_pass,
    rpt_api::abi::serve_pass_shared,
    rpt_api::abi::API_VERSION + 1
);
