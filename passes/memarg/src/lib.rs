//! passes/memarg: the guest memory base as a parameter of every lifted function.
//!
//! A code-generation pass: it leaves the IR alone and asks the C backend ([`Codegen`]) to emit
//! each lifted function as `f_X_m(struct cpu *restrict c, uint8_t *mb)`, calling other lifted
//! functions as `f_Y_m(c, mb)`, with `f_X(c)` kept as a thin wrapper for the function table, the
//! runtime and overrides (docs/c-abi.md, "MEMARG").
//!
//! Why it pays: without it the base is a pointer loaded from the global `rpt_mem`, and because `c`
//! is passed to every call, the compiler cannot rule out that a store through the base changes
//! `*c`; so it reloads guest registers from `c` after every guest store and stores them back before
//! every guest load. A `restrict` parameter cannot alias another parameter, whatever escapes, so
//! with the base a parameter the registers stay in host registers.
//!
//! Why `mb` itself is not `restrict` (the write-up this comes from, ../shared/reference/001
//! "MEMARG", made both restrict): externs, helpers and the runtime reach guest memory through
//! `rpt_mem`, not through `mb`, so a `restrict` base would let the compiler keep a guest value in
//! a register across a call that changed it. `c` alone being `restrict` is enough for the win.

#![deny(missing_docs)]

use rpt_api::{Codegen, FunctionContext, PassError, PassParams, PassPlugin, PluginInfo};
use rpt_ir::Function;

/// The pass's name in recipes and manifests.
pub const NAME: &str = "memarg";

/// The memarg pass. It takes no parameters.
#[derive(Clone, Copy, Debug, Default)]
pub struct MemargPass;

impl PassPlugin for MemargPass {
    fn check_params(&self, params: &PassParams) -> Result<(), PassError> {
        rpt_api::refuse_params(NAME, params)
    }

    fn analyzes(&self) -> bool {
        false
    }

    fn codegen(&self, _params: &PassParams) -> Codegen {
        Codegen {
            memory_base_argument: true,
            ..Codegen::default()
        }
    }

    /// The IR is unchanged: the whole effect is in code generation.
    fn run(&self, _func: &mut Function, _cx: &FunctionContext<'_>, _params: &PassParams) -> Result<(), PassError> {
        Ok(())
    }

    fn info(&self) -> PluginInfo {
        rpt_api::plugin_info!(NAME)
    }
}

/// This pass as rpt registers it (`framework/cli/Cargo.toml` lists the built-in ones).
pub fn plugin() -> rpt_api::Plugin {
    rpt_api::Plugin::Pass(std::sync::Arc::new(MemargPass))
}
