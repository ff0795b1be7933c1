//! How binaries built for this host run: directly, since this is the machine rpt runs on.

use rpt_api::Runner;

/// The runner for x86-64 binaries.
pub fn runner() -> Runner {
    Runner::Native
}
