//! Paired-single quantisation (`psq_l`, `psq_st` and their forms), as Gekko does it.
//!
//! A GQR holds a load type and scale (bits 16..18 and 24..29) and a store type and scale
//! (bits 0..2 and 8..13). Types: 0 float, 4 u8, 5 u16, 6 s8, 7 s16; 1..3 are reserved and
//! treated as float here. Scales are signed 6-bit exponents.
//!
//! Facts from Dolphin's hardware tests, which this follows:
//! - Loads convert the integer to single precision and multiply by 2^-scale (exact); a float
//!   load is `lfs`'s exact widening.
//! - Stores round the double to single (to nearest), multiply by 2^scale, clamp to the type's
//!   range and truncate toward zero. A NaN stores 0 (rpt's choice: what the x86 conversion the
//!   hardware tests ran on produces). A float store moves the bits as `stfs` does, but flushes
//!   results in the single denormal range to a signed zero.
//!
//! The same functions exist in C (`runtime/ppc_runtime.c`, `rpt_helper_psq_load` and
//! `rpt_helper_psq_store`); the paired-single tests run both and compare.

/// `@psq_load(i32 ea, i32 gqr, i32 slot) -> i64`: the double bit pattern of slot 0 or 1.
pub const LOAD_HELPER: &str = "psq_load";
/// `@psq_store(i32 ea, i32 gqr, i64 bits, i32 slot)`: stores slot 0 or 1.
pub const STORE_HELPER: &str = "psq_store";

/// The size in bytes of one value of a quantisation type.
pub fn size_of_type(ty: u32) -> u32 {
    match ty & 7 {
        4 | 6 => 1,
        5 | 7 => 2,
        _ => 4,
    }
}

/// The signed 6-bit scale at bit `lsb` of a GQR.
fn scale_at(gqr: u32, lsb: u32) -> i32 {
    let s = ((gqr >> lsb) & 63) as i32;
    if s >= 32 { s - 64 } else { s }
}

/// 2^e as a single, for e in -32..=32.
fn pow2(e: i32) -> f32 {
    f32::from_bits(((127 + e) as u32) << 23)
}

/// A single's bit pattern widened to a double's, exactly (signalling NaNs stay signalling).
pub fn single_bits_to_double_bits(w: u32) -> u64 {
    let f = f32::from_bits(w);
    if f.is_nan() {
        (u64::from(w & 0x8000_0000) << 32) | 0x7ff0_0000_0000_0000 | (u64::from(w & 0x007f_ffff) << 29)
    } else {
        f64::from(f).to_bits()
    }
}

/// A double's bit pattern as a single's for a float `psq_st`: `stfs`'s bit move, with the
/// single denormal range flushed to a signed zero.
pub fn double_bits_to_single_ftz(bits: u64) -> u32 {
    let exp = (bits >> 52) & 0x7ff;
    if exp > 896 {
        (((bits >> 62) << 30) | ((bits >> 29) & 0x3fff_ffff)) as u32
    } else {
        ((bits >> 63) << 31) as u32
    }
}

/// What `psq_l` loads into one slot: `read` gives guest bytes.
pub fn load(read: &dyn Fn(u32) -> u8, ea: u32, gqr: u32, slot: u32) -> u64 {
    let ty = (gqr >> 16) & 7;
    let size = size_of_type(ty);
    let addr = ea.wrapping_add(slot * size);
    let byte = |k: u32| u32::from(read(addr.wrapping_add(k)));
    let value = match ty {
        4 => byte(0) as f32,
        5 => ((byte(0) << 8) | byte(1)) as f32,
        6 => f32::from(byte(0) as u8 as i8),
        7 => f32::from(((byte(0) << 8) | byte(1)) as u16 as i16),
        _ => {
            let w = (byte(0) << 24) | (byte(1) << 16) | (byte(2) << 8) | byte(3);
            return single_bits_to_double_bits(w);
        }
    };
    f64::from(value * pow2(-scale_at(gqr, 24))).to_bits()
}

/// What `psq_st` stores for one slot: (address, value, size in bytes).
pub fn store(ea: u32, gqr: u32, bits: u64, slot: u32) -> (u32, u32, u32) {
    let ty = gqr & 7;
    let size = size_of_type(ty);
    let addr = ea.wrapping_add(slot * size);
    let (min, max): (f32, f32) = match ty {
        4 => (0.0, 255.0),
        5 => (0.0, 65535.0),
        6 => (-128.0, 127.0),
        7 => (-32768.0, 32767.0),
        _ => return (addr, double_bits_to_single_ftz(bits), 4),
    };
    let f = (f64::from_bits(bits) as f32) * pow2(scale_at(gqr, 8));
    let v = if f.is_nan() {
        0
    } else if f < min {
        min as i32
    } else if f > max {
        max as i32
    } else {
        f as i32
    };
    (addr, v as u32 & ((1u64 << (8 * size)) - 1) as u32, size)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loads_scale_integers() {
        let mem = [0x80u8, 0xff, 0x01, 0x02];
        let read = |a: u32| mem[(a - 0x100) as usize];
        // u8, scale 0: 128, 255.
        assert_eq!(f64::from_bits(load(&read, 0x100, 4 << 16, 0)), 128.0);
        assert_eq!(f64::from_bits(load(&read, 0x100, 4 << 16, 1)), 255.0);
        // s8, scale 1: -128 / 2, -1 / 2.
        assert_eq!(f64::from_bits(load(&read, 0x100, (1 << 24) | (6 << 16), 0)), -64.0);
        assert_eq!(f64::from_bits(load(&read, 0x100, (1 << 24) | (6 << 16), 1)), -0.5);
        // s16, scale -2 (62): 0x80ff * 4; second value 0x0102 * 4.
        assert_eq!(
            f64::from_bits(load(&read, 0x100, (62 << 24) | (7 << 16), 0)),
            -32513.0 * 4.0
        );
        assert_eq!(
            f64::from_bits(load(&read, 0x100, (62 << 24) | (7 << 16), 1)),
            258.0 * 4.0
        );
    }

    #[test]
    fn stores_clamp_and_truncate() {
        // u8, scale 2: 10.9 * 4 = 43.6 -> 43.
        assert_eq!(store(0x100, 4 | (2 << 8), 10.9f64.to_bits(), 0), (0x100, 43, 1));
        assert_eq!(store(0x100, 4, 10.9f64.to_bits(), 0), (0x100, 10, 1));
        // s8: -200 clamps to -128; 1000 to 127; NaN stores 0.
        assert_eq!(store(0x100, 6, (-200.0f64).to_bits(), 1), (0x101, 0x80, 1));
        assert_eq!(store(0x100, 6, 1000.0f64.to_bits(), 0), (0x100, 127, 1));
        assert_eq!(store(0x100, 6, f64::NAN.to_bits(), 0), (0x100, 0, 1));
        // s16, slot 1 at +2; u16 negative clamps to 0.
        assert_eq!(store(0x100, 7, (-1.5f64).to_bits(), 1), (0x102, 0xffff, 2));
        assert_eq!(store(0x100, 5, (-1.5f64).to_bits(), 0), (0x100, 0, 2));
        // Float: a bit move; denormal range flushes.
        assert_eq!(store(0x100, 0, 1.5f64.to_bits(), 1), (0x104, 0x3fc0_0000, 4));
        assert_eq!(store(0x100, 0, 1e-40f64.to_bits(), 0), (0x100, 0, 4));
    }
}
