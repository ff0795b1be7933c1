//! The C runtime shared by every guest, embedded in rpt.
