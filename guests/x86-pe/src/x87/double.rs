//! The unit of the `f64` value model (`runtime/x87_f64.h` is its C twin, kept alike line for line).
//!
//! A register holds an IEEE double: its bits in the significand slot, the sign-and-exponent slot
//! zero. Loads, stores, the four operations, compares, `fxam`, `fchs`, `fabs`, `fsqrt` and
//! `frndint` are plain `f64` arithmetic under round to nearest; under another rounding control,
//! and for the transcendental instructions, `fscale`, `fprem`, `fxtract` and the constants other
//! than 0 and 1, the exact unit computes at 53-bit precision and the result is rounded to a double
//! again. Precision control is ignored, so the model equals the real unit only at 53-bit
//! precision (inside the double exponent range). The fast path keeps no exception flag but IE.

use super::{C0, C2, C3, F80, Kind, Unit, op, sw};

const SIGN: u64 = 0x8000_0000_0000_0000;
const QUIET: u64 = 0x0008_0000_0000_0000;
const RC_NEAREST: u16 = 0;
const RC_TRUNCATE: u16 = 3;
/// The QNaN indefinite as a double.
const INDEFINITE: F80 = F80 {
    m: 0xfff8_0000_0000_0000,
    se: 0,
};

fn rc(cw: u16) -> u16 {
    (cw >> 10) & 3
}

/// The guest's control word with 53-bit precision: the exact unit's results are then doubles but
/// for the exponent range.
fn cw53(cw: u16) -> u16 {
    (cw & !0x0300) | 0x0200
}

fn value(v: F80) -> f64 {
    f64::from_bits(v.m)
}

fn reg(d: f64) -> F80 {
    F80 { m: d.to_bits(), se: 0 }
}

fn is_snan(bits: u64) -> bool {
    bits & !SIGN > 0x7ff0_0000_0000_0000 && bits & QUIET == 0
}

/// `d` rounded to an integer under `rc`; below 2^52 the truncation and the fraction are exact.
fn round_int(d: f64, rc: u16) -> f64 {
    if d.abs() >= 4_503_599_627_370_496.0 || d.is_nan() {
        return d;
    }
    let mut i = d as i64;
    let frac = d - i as f64;
    match rc {
        RC_NEAREST => {
            if frac > 0.5 || (frac == 0.5 && i & 1 != 0) {
                i += 1;
            } else if frac < -0.5 || (frac == -0.5 && i & 1 != 0) {
                i -= 1;
            }
        }
        1 if frac < 0.0 => i -= 1,
        2 if frac > 0.0 => i += 1,
        _ => {}
    }
    // A zero result keeps the operand's sign, as frndint's does.
    match i {
        0 if d < 0.0 => -0.0,
        0 => 0.0,
        _ => i as f64,
    }
}

/// The f64 unit; `exact` does what it does not do in doubles.
pub(super) struct F64Unit<'a> {
    pub(super) exact: &'a dyn Unit,
}

impl F64Unit<'_> {
    /// An 80-bit value rounded to a double under cw's rounding control; its flags join `hw`.
    fn narrow(&self, cw: u16, w: F80, hw: &mut u16) -> F80 {
        let (bits, flags) = self.exact.store(cw, Kind::F64, false, w);
        *hw |= flags & sw::EXCEPTIONS;
        F80 { m: bits, se: 0 }
    }
}

impl Unit for F64Unit<'_> {
    fn load(&self, cw: u16, kind: Kind, bits: u64) -> (F80, u16) {
        match kind {
            Kind::F32 => {
                let b = bits as u32;
                let snan = b & 0x7fff_ffff > 0x7f80_0000 && b & 0x0040_0000 == 0;
                (reg(f64::from(f32::from_bits(b))), if snan { sw::IE } else { 0 })
            }
            Kind::F64 if is_snan(bits) => (F80 { m: bits | QUIET, se: 0 }, sw::IE),
            Kind::F64 => (F80 { m: bits, se: 0 }, 0),
            Kind::I16 => (reg(f64::from(bits as u16 as i16)), 0),
            Kind::I32 => (reg(f64::from(bits as u32 as i32)), 0),
            _ => {
                // Beyond 2^53 the conversion rounds, under the guest's rounding control.
                let i = bits as i64;
                if i > -(1 << 53) && i < (1 << 53) {
                    return (reg(i as f64), 0);
                }
                let (w, mut hw) = self.exact.load(cw, kind, bits);
                (self.narrow(cw, w, &mut hw), hw)
            }
        }
    }

    fn store(&self, cw: u16, kind: Kind, truncate: bool, v: F80) -> (u64, u16) {
        let d = value(v);
        match kind {
            Kind::F32 if rc(cw) == RC_NEAREST && !self.is_nan(v) => (u64::from((d as f32).to_bits()), 0),
            Kind::F32 => self.exact.store(cw, kind, truncate, self.to_f80(v)),
            Kind::F64 => (v.m, 0),
            _ => {
                let r = round_int(d, if truncate { RC_TRUNCATE } else { rc(cw) });
                let limit = match kind {
                    Kind::I16 => 32_768.0,
                    Kind::I32 => 2_147_483_648.0,
                    _ => 9_223_372_036_854_775_808.0,
                };
                if r >= -limit && r < limit {
                    (r as i64 as u64, 0)
                } else {
                    // The integer indefinite: the sign bit of the format alone.
                    (kind.indefinite(), sw::IE)
                }
            }
        }
    }

    fn arith(&self, cw: u16, which: u32, a: F80, b: F80) -> (F80, u16) {
        if rc(cw) != RC_NEAREST {
            let (w, mut hw) = self.exact.arith(cw53(cw), which, self.to_f80(a), self.to_f80(b));
            return (self.narrow(cw, w, &mut hw), hw);
        }
        let (x, y) = (value(a), value(b));
        let r = match which {
            op::ADD => x + y,
            op::MUL => x * y,
            op::SUB => x - y,
            op::SUBR => y - x,
            op::DIV => x / y,
            _ => y / x,
        };
        // A NaN out of numbers is an invalid operation: the x87's indefinite.
        if r.is_nan() && !x.is_nan() && !y.is_nan() {
            return (INDEFINITE, sw::IE);
        }
        (reg(r), 0)
    }

    fn compare(&self, _cw: u16, unordered: bool, a: F80, b: F80) -> u16 {
        let (x, y) = (value(a), value(b));
        if x > y {
            0
        } else if x < y {
            C0
        } else if x == y {
            C3
        } else {
            // fucom raises IE for a signalling NaN only, fcom for any NaN.
            let invalid = !unordered || is_snan(a.m) || is_snan(b.m);
            C0 | C2 | C3 | if invalid { sw::IE } else { 0 }
        }
    }

    fn unary(&self, cw: u16, which: u32, a: F80) -> (F80, F80, u16) {
        let x = value(a);
        let (exp, frac) = ((a.m >> 52) & 0x7ff, a.m & 0x000f_ffff_ffff_ffff);
        match which {
            op::FCHS => return (F80 { m: a.m ^ SIGN, se: 0 }, F80::ZERO, 0),
            op::FABS => return (F80 { m: a.m & !SIGN, se: 0 }, F80::ZERO, 0),
            op::FSQRT if rc(cw) == RC_NEAREST => {
                return if x < 0.0 {
                    (INDEFINITE, F80::ZERO, sw::IE)
                } else {
                    (reg(x.sqrt()), F80::ZERO, 0)
                };
            }
            op::FRNDINT => return (reg(round_int(x, rc(cw))), F80::ZERO, 0),
            op::FTST => return (F80::ZERO, F80::ZERO, self.compare(cw, false, a, reg(0.0))),
            op::FXAM => {
                // A double's denormal is a normal number in an 80-bit register, and fxam says so.
                let codes = match (exp, frac) {
                    (0x7ff, 0) => C0 | C2,
                    (0x7ff, _) => C0,
                    (0, 0) => C3,
                    _ => C2,
                };
                return (F80::ZERO, F80::ZERO, codes);
            }
            _ => {}
        }
        let (wr, wp, mut hw) = self.exact.unary(cw53(cw), which, self.to_f80(a));
        let r = self.narrow(cw, wr, &mut hw);
        let pushed = self.narrow(cw, wp, &mut hw);
        (r, pushed, hw)
    }

    fn binary(&self, cw: u16, which: u32, a: F80, b: F80) -> (F80, u16) {
        let (w, mut hw) = self.exact.binary(cw53(cw), which, self.to_f80(a), self.to_f80(b));
        (self.narrow(cw, w, &mut hw), hw)
    }

    fn constant(&self, cw: u16, which: u32) -> F80 {
        match which {
            op::FLDZ => reg(0.0),
            op::FLD1 => reg(1.0),
            _ => self.narrow(cw, self.exact.constant(cw, which), &mut 0),
        }
    }

    fn arith_memory(&self, cw: u16, which: u32, kind: Kind, a: F80, bits: u64) -> (F80, u16) {
        let (b, hw) = self.load(cw, kind, bits);
        let (r, flags) = self.arith(cw, which, a, b);
        (r, hw | flags)
    }

    fn compare_memory(&self, cw: u16, kind: Kind, a: F80, bits: u64) -> u16 {
        let (b, hw) = self.load(cw, kind, bits);
        hw | self.compare(cw, false, a, b)
    }

    fn indefinite(&self) -> F80 {
        INDEFINITE
    }

    fn is_nan(&self, v: F80) -> bool {
        v.m & !SIGN > 0x7ff0_0000_0000_0000
    }

    fn sign(&self, v: F80) -> bool {
        v.m & SIGN != 0
    }

    fn load_f80(&self, cw: u16, v: F80) -> (F80, u16) {
        let mut hw = 0;
        (self.narrow(cw, v, &mut hw), hw)
    }

    fn to_f80(&self, v: F80) -> F80 {
        self.exact.load(super::CW_INIT, Kind::F64, v.m).0
    }
}
