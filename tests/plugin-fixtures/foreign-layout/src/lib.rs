//! The example `fold-constants` pass exported with a layout key no rpt build has, as a plugin
//! built by another compiler (or from another IR source) would report: rpt must send it IR in
//! the flat form, and the result must be the same as in place.

use rpt_pass_example::FoldConstants;

rpt_api::__rpt_export_plugin!(
    Pass,
    rpt_api::PassPlugin,
    FoldConstants,
    FoldConstants,
    rpt_api::abi::serve_pass,
    rpt_api::abi::serve_pass_shared,
    rpt_api::abi::API_VERSION,
    "a build by another compiler"
);
