//! The pass interface: a named, parameterised transform of lifted functions.

use std::collections::BTreeMap;

use rpt_ir::{Function, StateDesc};

use crate::PluginInfo;

/// A pass parameter value from the recipe.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub enum ParamValue {
    /// A switch.
    Bool(bool),
    /// A number.
    Int(i64),
    /// A word or path.
    Str(String),
}

/// A pass's parameters by name, in a stable order.
pub type PassParams = BTreeMap<String, ParamValue>;

/// A pass refusing its parameters or failing on a function.
#[derive(Clone, Debug, PartialEq, Eq, Hash, thiserror::Error, serde::Serialize, serde::Deserialize)]
pub enum PassError {
    /// A parameter the pass does not know or a value of the wrong kind.
    #[error("bad parameter `{name}`: {why}")]
    BadParam {
        /// The parameter.
        name: String,
        /// What is wrong.
        why: String,
    },
    /// The pass cannot transform this function.
    #[error("{0}")]
    Failed(String),
}

/// An optimisation or analysis pass over lifted functions.
pub trait PassPlugin: Send + Sync {
    /// Name, version and source hash.
    fn info(&self) -> PluginInfo;
    /// Checks parameters before any function is transformed, so a recipe typo fails early.
    fn check_params(&self, params: &PassParams) -> Result<(), PassError>;
    /// Transforms one function in place.
    fn run(&self, func: &mut Function, state: &StateDesc, params: &PassParams) -> Result<(), PassError>;

    /// Transforms many functions, stopping at the first failure, which comes with the index of
    /// its function. A pass loaded from a library does this in one call across the boundary, so a
    /// program-wide run pays the boundary once; the default runs [`PassPlugin::run`] on each.
    fn run_all(
        &self,
        funcs: &mut [Function],
        state: &StateDesc,
        params: &PassParams,
    ) -> Result<(), (usize, PassError)> {
        for (index, func) in funcs.iter_mut().enumerate() {
            self.run(func, state, params).map_err(|e| (index, e))?;
        }
        Ok(())
    }
}
