//! passes/state-in-memory: whether the guest state stays in `struct cpu` or lives in C locals.
//!
//! A code-generation pass: it leaves the IR alone and asks the C backend ([`Codegen`]) to keep the
//! slots of the chosen roles in C locals within each lifted function: loaded from `struct cpu` at
//! entry, written back before anything outside the function can look at the state (calls, tail
//! calls, returns, exits, helpers that read it) and reloaded after anything that may change it
//! (calls, helpers that write it). Without it, every guest register write is a store to `*c`; the
//! host compiler removes the loads but keeps each store that reaches a return or a call, and in a
//! loop that calls nothing that is a store per iteration. With it, the compiler sees locals whose
//! address never escapes and keeps them in host registers.
//!
//! Which roles (`gpr`, `fpr`, `flag`, `special`) is the parameter `roles`, a comma-separated
//! list; the default is all four. Arrays (the x87 stack) always stay in `struct cpu`: their index
//! is a run-time value. So do the slots that helpers a function calls name as touched
//! (`HelperDecl::touches`: the x87 unit's words), which every such call would otherwise write back
//! and reload; other locals are not written back around those helpers at all.
//!
//! The write-up this comes from (../shared/reference/000) found promotion 25% faster on x86-64,
//! 30–40% on a Cortex-A72 and 6% slower on Apple silicon; passes/README.md has rpt's numbers.

#![deny(missing_docs)]

use rpt_api::{Codegen, FunctionContext, ParamValue, PassError, PassParams, PassPlugin, PluginInfo};
use rpt_ir::{Function, RoleSet, SlotRole};

/// The pass's name in recipes and manifests.
pub const NAME: &str = "state-in-memory";

/// The state-in-memory pass.
#[derive(Clone, Copy, Debug, Default)]
pub struct StateInMemoryPass;

/// The roles `params` choose: `roles: "gpr,flag"`, or every role when absent.
pub fn chosen_roles(params: &PassParams) -> Result<RoleSet, PassError> {
    let bad = |why: String| PassError::BadParam {
        name: "roles".to_string(),
        why,
    };
    if let Some(name) = params.keys().find(|k| *k != "roles") {
        return Err(PassError::BadParam {
            name: name.clone(),
            why: format!("{NAME} takes only `roles`"),
        });
    }
    let Some(value) = params.get("roles") else {
        return Ok(RoleSet::of(&SlotRole::ALL));
    };
    let ParamValue::Str(list) = value else {
        return Err(bad("`roles` is a comma-separated list such as \"gpr,flag\"".to_string()));
    };
    let mut roles = Vec::new();
    for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        let role = SlotRole::from_name(name).ok_or_else(|| {
            let known: Vec<&str> = SlotRole::ALL.iter().map(|r| r.name()).collect();
            bad(format!("unknown role `{name}` (known: {})", known.join(", ")))
        })?;
        roles.push(role);
    }
    Ok(RoleSet::of(&roles))
}

impl PassPlugin for StateInMemoryPass {
    fn check_params(&self, params: &PassParams) -> Result<(), PassError> {
        chosen_roles(params).map(|_| ())
    }

    fn analyzes(&self) -> bool {
        false
    }

    fn codegen(&self, params: &PassParams) -> Codegen {
        Codegen {
            // check_params has refused anything this would not read.
            state_in_locals: chosen_roles(params).unwrap_or_default(),
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
    rpt_api::Plugin::Pass(std::sync::Arc::new(StateInMemoryPass))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(roles: &str) -> PassParams {
        PassParams::from([("roles".to_string(), ParamValue::Str(roles.to_string()))])
    }

    #[test]
    fn roles_default_to_all_and_parse_from_a_list() {
        assert_eq!(chosen_roles(&PassParams::new()), Ok(RoleSet::of(&SlotRole::ALL)));
        assert_eq!(
            chosen_roles(&params("gpr, flag")),
            Ok(RoleSet::of(&[SlotRole::Gpr, SlotRole::Flag]))
        );
        assert_eq!(chosen_roles(&params("")), Ok(RoleSet::EMPTY));
        let e = chosen_roles(&params("gpr,xmm")).expect_err("unknown role");
        assert!(e.to_string().contains("unknown role `xmm`"), "{e}");
        let other = PassParams::from([("limit".to_string(), ParamValue::Int(3))]);
        assert!(chosen_roles(&other).is_err());
        assert_eq!(
            StateInMemoryPass.codegen(&params("special")).state_in_locals,
            RoleSet::of(&[SlotRole::Special])
        );
    }
}
