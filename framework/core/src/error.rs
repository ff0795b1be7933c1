//! Errors of the core pipeline, each naming the guest address, import, pass or plugin involved.

use rpt_api::{Diagnostic, GuestError, PassError};
use rpt_ir::GuestAddr;

/// A failure anywhere from loading the image to producing shard text.
///
/// Values are cheap to clone and compare because salsa memoises them.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CoreError {
    /// The recipe names a guest plugin that is not registered.
    #[error("unknown guest `{name}` (known: {known})")]
    UnknownGuest {
        /// The name in the recipe.
        name: String,
        /// Registered guests, comma-separated.
        known: String,
    },
    /// The recipe names a host plugin that is not registered.
    #[error("unknown host `{name}` (known: {known})")]
    UnknownHost {
        /// The name in the recipe.
        name: String,
        /// Registered hosts, comma-separated.
        known: String,
    },
    /// The recipe names a CPU model its host does not know.
    #[error("host `{host}` has no CPU model `{cpu}` (known: {known}; `rpt hosts` describes them)")]
    UnknownCpuModel {
        /// The host.
        host: String,
        /// The model the recipe names.
        cpu: String,
        /// The host's models, comma-separated.
        known: String,
    },
    /// The recipe names a pass that is not registered.
    #[error("unknown pass `{name}` (known: {known})")]
    UnknownPass {
        /// The name in the recipe.
        name: String,
        /// Registered passes, comma-separated or "none".
        known: String,
    },
    /// The recipe's `import_stubs` names something that is not an import the platform lacks.
    #[error(
        "the recipe's import_stubs names `{name}`, which is not an import of this image that the platform lacks \
         (those are: {missing})"
    )]
    UnknownImportStub {
        /// The name in the recipe.
        name: String,
        /// The imports the platform lacks, `module!name`, comma-separated, or "none".
        missing: String,
    },
    /// The guest plugin refused the image or platform.
    #[error("{0}")]
    Guest(GuestError),
    /// Guest code that cannot be lifted on a reachable path, with `strict_lifting` on.
    #[error("{}", describe_diagnostics(.0))]
    Unliftable(Vec<Diagnostic>),
    /// A lifter produced IR the verifier rejects (a bug in the guest plugin).
    #[error("the lifter produced invalid IR for {}:\n{errors}\n{text}", .function.function_name())]
    BadLift {
        /// The function.
        function: GuestAddr,
        /// The verifier's messages.
        errors: String,
        /// The function's text form.
        text: String,
    },
    /// A pass failed or broke the IR.
    #[error("pass `{pass}` on {}: {message}", .function.function_name())]
    Pass {
        /// The pass.
        pass: String,
        /// The function it was transforming.
        function: GuestAddr,
        /// What went wrong, with the function's text form when the verifier rejected the result.
        message: String,
    },
    /// A pass rejected its parameters.
    #[error("pass `{pass}`: {error}")]
    PassParams {
        /// The pass.
        pass: String,
        /// Its complaint.
        error: PassError,
    },
    /// The C emitter could not translate a function.
    #[error("cannot emit C for {}: {message}", .function.function_name())]
    Emit {
        /// The function.
        function: GuestAddr,
        /// The emitter's message.
        message: String,
    },
    /// An override's guard failed: the function's original bytes are not the ones the recipe names.
    #[error(
        "override of {} by `{c_symbol}`: the function's original bytes have sha256 {actual} but the \
         recipe expects {expected}; an override applies only to the code it was written for (for a \
         new override, put this hash in original_sha256; if the guest code changed, first check \
         that `{c_symbol}` still fits it)",
        .function.function_name()
    )]
    OverrideMismatch {
        /// The overridden function.
        function: GuestAddr,
        /// Its replacement.
        c_symbol: String,
        /// The hash the recipe names.
        expected: String,
        /// The hash of the function's original bytes.
        actual: String,
    },
    /// An override names an address where discovery found no function.
    #[error(
        "the override by `{c_symbol}` names {}, which is not a discovered function \
         (list it in function_hints if it is one)",
        .function.function_name()
    )]
    OverrideNotAFunction {
        /// The address in the recipe.
        function: GuestAddr,
        /// The replacement.
        c_symbol: String,
    },
    /// A function named in the recipe or the function table that discovery did not find.
    #[error("{} is not a discovered function", .0.function_name())]
    NotAFunction(GuestAddr),
}

fn describe_diagnostics(diags: &[Diagnostic]) -> String {
    let mut out = String::from(
        "guest code that cannot be lifted (the recipe's strict_lifting is on; without it each place \
         compiles to a guest fault raised only if execution gets there):",
    );
    for d in diags {
        out.push_str(&format!("\n  at guest address {:#010x}: {}", d.addr.0, d.message));
    }
    out
}
