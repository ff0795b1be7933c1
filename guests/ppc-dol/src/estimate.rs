//! The 750's reciprocal and reciprocal-square-root estimates (`fres`, `frsqrte`).
//!
//! Facts from Dolphin's hardware tests: each estimate is a table lookup on the top mantissa bits
//! with linear interpolation (a base and a decrement per segment of the input's mantissa); the
//! tables below are the measured ones. The same algorithm is written in C in
//! `runtime/ppc_runtime.c` (`rpt_helper_fres_estimate`, `rpt_helper_frsqrte_estimate`); a test
//! compiles that and compares the two on many inputs.
//!
//! Special cases: `fres(±0) = ±inf`, `fres(±inf) = ±0`, tiny inputs give ±FLT_MAX and huge ones
//! ±0; `frsqrte(+0) = +inf`, `frsqrte(-0) = -inf`, `frsqrte(+inf) = +0`, negative inputs (and
//! -inf) give the default NaN; a NaN input comes back quieted.

/// `@fres_estimate(i64) -> i64`: the bit pattern of `fres` of a double's bit pattern.
pub const FRES_HELPER: &str = "fres_estimate";
/// `@frsqrte_estimate(i64) -> i64`: the bit pattern of `frsqrte` of a double's bit pattern.
pub const FRSQRTE_HELPER: &str = "frsqrte_estimate";

/// (base, decrement) per 1/32 of the mantissa, for `fres`.
pub const FRES_TABLE: [(i64, i64); 32] = [
    (0x7ff800, 0x3e1),
    (0x783800, 0x3a7),
    (0x70ea00, 0x371),
    (0x6a0800, 0x340),
    (0x638800, 0x313),
    (0x5d6200, 0x2ea),
    (0x579000, 0x2c4),
    (0x520800, 0x2a0),
    (0x4cc800, 0x27f),
    (0x47ca00, 0x261),
    (0x430800, 0x245),
    (0x3e8000, 0x22a),
    (0x3a2c00, 0x212),
    (0x360800, 0x1fb),
    (0x321400, 0x1e5),
    (0x2e4a00, 0x1d1),
    (0x2aa800, 0x1be),
    (0x272c00, 0x1ac),
    (0x23d600, 0x19b),
    (0x209e00, 0x18b),
    (0x1d8800, 0x17c),
    (0x1a9000, 0x16e),
    (0x17ae00, 0x15b),
    (0x14f800, 0x15b),
    (0x124400, 0x143),
    (0x0fbe00, 0x143),
    (0x0d3800, 0x12d),
    (0x0ade00, 0x12d),
    (0x088400, 0x11a),
    (0x065000, 0x11a),
    (0x041c00, 0x108),
    (0x020c00, 0x106),
];

/// (base, decrement) per 1/16 of the mantissa, for `frsqrte`: even exponents first, then odd.
pub const FRSQRTE_TABLE: [(i64, i64); 32] = [
    (0x3ffa000, 0x7a4),
    (0x3c29000, 0x700),
    (0x38aa000, 0x670),
    (0x3572000, 0x5f2),
    (0x3279000, 0x584),
    (0x2fb7000, 0x524),
    (0x2d26000, 0x4cc),
    (0x2ac0000, 0x47e),
    (0x2881000, 0x43a),
    (0x2665000, 0x3fa),
    (0x2468000, 0x3c2),
    (0x2287000, 0x38e),
    (0x20c1000, 0x35e),
    (0x1f12000, 0x332),
    (0x1d79000, 0x30a),
    (0x1bf4000, 0x2e6),
    (0x1a7e800, 0x568),
    (0x17cb800, 0x4f3),
    (0x1552800, 0x48d),
    (0x130c000, 0x435),
    (0x10f2000, 0x3e7),
    (0x0eff000, 0x3a2),
    (0x0d2e000, 0x365),
    (0x0b7c000, 0x32e),
    (0x09e5000, 0x2fc),
    (0x0867000, 0x2d0),
    (0x06ff000, 0x2a8),
    (0x05ab800, 0x283),
    (0x046a000, 0x261),
    (0x0339800, 0x243),
    (0x0218800, 0x226),
    (0x0105800, 0x20b),
];

const SIGN: u64 = 1 << 63;
const EXP: u64 = 0x7ff << 52;
const FRAC: u64 = (1 << 52) - 1;
const QUIET: u64 = 1 << 51;
const DEFAULT_NAN: u64 = 0x7ff8_0000_0000_0000;
const INF: u64 = EXP;
const FLT_MAX_AS_DOUBLE: u64 = 0x47ef_ffff_e000_0000;

/// `fres` of a double's bit pattern.
pub fn fres(bits: u64) -> u64 {
    let (sign, exp, frac) = (bits & SIGN, bits & EXP, bits & FRAC);
    if exp == 0 && frac == 0 {
        return sign | INF;
    }
    if exp == EXP {
        return if frac == 0 { sign } else { bits | QUIET };
    }
    if exp < (895 << 52) {
        return sign | FLT_MAX_AS_DOUBLE;
    }
    if exp >= (1149 << 52) {
        return sign;
    }
    let exp = (0x7fd << 52) - exp;
    let i = (frac >> 37) as i64;
    let (base, dec) = FRES_TABLE[(i / 1024) as usize];
    let m = base - (dec * (i % 1024) + 1) / 2;
    sign | exp | ((m as u64) << 29)
}

/// `frsqrte` of a double's bit pattern.
pub fn frsqrte(bits: u64) -> u64 {
    let (sign, exp, mut frac) = (bits & SIGN, bits & EXP, bits & FRAC);
    if exp == 0 && frac == 0 {
        return sign | INF;
    }
    if exp == EXP {
        if frac != 0 {
            return bits | QUIET;
        }
        return if sign != 0 { DEFAULT_NAN } else { 0 };
    }
    if sign != 0 {
        return DEFAULT_NAN;
    }
    // The exponent stays a shifted field, signed so a normalised denormal can go below zero.
    let mut exponent = exp as i64;
    if exponent == 0 {
        while frac & (1 << 52) == 0 {
            exponent -= 1 << 52;
            frac <<= 1;
        }
        frac &= FRAC;
        exponent += 1 << 52;
    }
    let odd = exponent & (1 << 52) == 0;
    let e = ((0x3ff_i64 << 52) - ((exponent - (0x3fe_i64 << 52)) / 2)) & (0x7ff_i64 << 52);
    let i = (frac >> 37) as i64;
    let (base, dec) = FRSQRTE_TABLE[(i / 2048 + if odd { 16 } else { 0 }) as usize];
    (e as u64) | (((base - dec * (i % 2048)) as u64) << 26)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(v: f64) -> u64 {
        v.to_bits()
    }

    #[test]
    fn special_cases() {
        assert_eq!(fres(f(0.0)), f(f64::INFINITY));
        assert_eq!(fres(f(-0.0)), f(f64::NEG_INFINITY));
        assert_eq!(fres(f(f64::INFINITY)), f(0.0));
        assert_eq!(frsqrte(f(0.0)), f(f64::INFINITY));
        assert_eq!(frsqrte(f(-0.0)), f(f64::NEG_INFINITY));
        assert_eq!(frsqrte(f(f64::INFINITY)), f(0.0));
        assert_eq!(frsqrte(f(-1.0)), DEFAULT_NAN);
        assert_eq!(frsqrte(0x7ff0_0000_0000_0001), 0x7ff8_0000_0000_0001);
    }

    #[test]
    fn estimates_are_close() {
        for &x in &[1.0f64, 1.5, 2.0, 3.0, 10.0, 0.3, 12345.678, 1e-30, 7e20] {
            let r = f64::from_bits(fres(f(x)));
            assert!((r * x - 1.0).abs() < 1.0 / 4096.0, "fres({x}) = {r}");
            let s = f64::from_bits(frsqrte(f(x)));
            assert!((s * s * x - 1.0).abs() < 1.0 / 2048.0, "frsqrte({x}) = {s}");
        }
        // Exact table values at segment starts.
        assert_eq!(fres(f(1.0)), 0x3fef_ff00_0000_0000);
        assert_eq!(frsqrte(f(1.0)), 0x3fef_fe80_0000_0000);
    }
}
