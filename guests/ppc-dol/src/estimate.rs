//! The 750's reciprocal and reciprocal-square-root estimates (`fres`, `frsqrte`): the helpers'
//! names. Their one definition is C, `rpt_helper_fres_estimate` and `rpt_helper_frsqrte_estimate`
//! in `runtime/ppc_helpers.c`, which the interpreter calls too ([`crate::interp`]).
//!
//! Facts from Dolphin's hardware tests: each estimate is a table lookup on the top mantissa bits
//! with linear interpolation (a base and a decrement per segment of the input's mantissa); the
//! tables are the measured ones.
//!
//! Special cases: `fres(±0) = ±inf`, `fres(±inf) = ±0`, tiny inputs give ±FLT_MAX and huge ones
//! ±0; `frsqrte(+0) = +inf`, `frsqrte(-0) = -inf`, `frsqrte(+inf) = +0`, negative inputs (and
//! -inf) give the default NaN; a NaN input comes back quieted.

/// `@fres_estimate(i64) -> i64`: the bit pattern of `fres` of a double's bit pattern.
pub const FRES_HELPER: &str = "fres_estimate";
/// `@frsqrte_estimate(i64) -> i64`: the bit pattern of `frsqrte` of a double's bit pattern.
pub const FRSQRTE_HELPER: &str = "frsqrte_estimate";
