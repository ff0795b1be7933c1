//! The rpt command.
fn main() {}
