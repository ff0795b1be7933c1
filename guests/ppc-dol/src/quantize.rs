//! Paired-single quantisation (`psq_l`, `psq_st` and their forms), as Gekko does it: the helpers'
//! names. Their one definition is C, `rpt_helper_psq_load` and `rpt_helper_psq_store` in
//! `runtime/ppc_helpers.c`, which the interpreter calls too ([`crate::interp`]).
//!
//! A GQR holds a load type and scale (bits 16..18 and 24..29) and a store type and scale
//! (bits 0..2 and 8..13). Types: 0 float, 4 u8, 5 u16, 6 s8, 7 s16; 1..3 are reserved and
//! treated as float here. Scales are signed 6-bit exponents.
//!
//! Facts from Dolphin's hardware tests, which the helpers follow:
//! - Loads convert the integer to single precision and multiply by 2^-scale (exact); a float
//!   load is `lfs`'s exact widening.
//! - Stores round the double to single (to nearest), multiply by 2^scale, clamp to the type's
//!   range and truncate toward zero. A NaN stores 0 (rpt's choice: what the x86 conversion the
//!   hardware tests ran on produces). A float store moves the bits as `stfs` does, but flushes
//!   results in the single denormal range to a signed zero.
//! - Addresses in an uncached view are folded onto the cached one, as every load and store is.

/// `@psq_load(i32 ea, i32 gqr, i32 slot) -> i64`: the double bit pattern of slot 0 or 1.
pub const LOAD_HELPER: &str = "psq_load";
/// `@psq_store(i32 ea, i32 gqr, i64 bits, i32 slot)`: stores slot 0 or 1.
pub const STORE_HELPER: &str = "psq_store";
