//! Paired singles (Gekko/Broadway): rows and lift functions. Not lifted yet: no rows.

use crate::decode::Row;

/// The paired-single rows of the decoder table.
pub static ROWS: &[Row] = &[];
