//! The pass interface: a named, parameterised transform of lifted functions.

use std::collections::BTreeMap;

use rpt_ir::{Function, StateDesc};

use crate::PluginInfo;

/// A pass parameter value from the recipe.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
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
#[derive(Clone, Debug, PartialEq, Eq, Hash, thiserror::Error)]
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
}
