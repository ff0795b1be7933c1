//! `fold-constants`, an example pass plugin written only against `rpt-api` and `rpt-ir`.
//!
//! Lifted code moves every guest register through a state slot: `mov eax, 1` becomes a
//! `set_slot eax` of a constant, and the next instruction reads it back with `get_slot eax`. Within
//! a block nothing else can change the slot in between except a helper call, so the pass
//! forwards constants from slot writes to later reads, and then folds integer operations whose
//! operands are all constants (the flags of `cmp eax, 1` after `mov eax, 1`, say).
//!
//! Every rewrite replaces an instruction by an `iconst` defining the same value, so no use of a
//! value has to change and the function's shape stays the same. Parameters:
//! - `slots` (bool, default true): forward constants through state slots.

use std::collections::BTreeMap;

use rpt_api::{FunctionContext, ParamValue, PassError, PassParams, PassPlugin, PluginInfo};
use rpt_ir::{BinaryOp, ConvOp, Function, InstKind, IntCC, SlotId, SlotLayout, StateDesc, Type, UnaryOp, Value};

/// The pass.
#[derive(Clone, Copy, Debug, Default)]
pub struct FoldConstants;

/// This pass as rpt registers it (`framework/cli/Cargo.toml` lists the built-in ones).
pub fn plugin() -> rpt_api::Plugin {
    rpt_api::Plugin::Pass(std::sync::Arc::new(FoldConstants))
}

/// The name recipes use.
pub const NAME: &str = "fold-constants";

#[cfg(feature = "export-plugin")]
rpt_api::export_pass!(FoldConstants, FoldConstants);

impl PassPlugin for FoldConstants {
    fn info(&self) -> PluginInfo {
        PluginInfo {
            name: NAME.to_string(),
            version: env!("CARGO_PKG_VERSION").to_string(),
            // rpt replaces this with the library's sha256 when it loads the plugin.
            hash: String::new(),
        }
    }

    fn check_params(&self, params: &PassParams) -> Result<(), PassError> {
        for (name, value) in params {
            match (name.as_str(), value) {
                ("slots", ParamValue::Bool(_)) => {}
                ("slots", _) => {
                    return Err(PassError::BadParam {
                        name: name.clone(),
                        why: "must be true or false".to_string(),
                    });
                }
                _ => {
                    return Err(PassError::BadParam {
                        name: name.clone(),
                        why: "fold-constants knows only `slots`".to_string(),
                    });
                }
            }
        }
        Ok(())
    }

    /// It folds each function alone: no whole-program analysis to wait for.
    fn analyzes(&self) -> bool {
        false
    }

    fn run(&self, func: &mut Function, cx: &FunctionContext<'_>, params: &PassParams) -> Result<(), PassError> {
        let forward_slots = !matches!(params.get("slots"), Some(ParamValue::Bool(false)));
        fold(func, cx.state, forward_slots);
        Ok(())
    }
}

/// Folds `func` in place and returns how many instructions became constants.
pub fn fold(func: &mut Function, state: &StateDesc, forward_slots: bool) -> usize {
    let mut known: Vec<Option<u64>> = vec![None; func.value_types.len()];
    let mut folded = 0;
    for block in &mut func.blocks {
        // Constants written to plain integer slots earlier in this block.
        let mut slots: BTreeMap<SlotId, u64> = BTreeMap::new();
        for inst in &mut block.insts {
            let result_type = inst.result.and_then(|v| func.value_types.get(v.index()).copied());
            let constant = |v: &Value| constant_of(&known, *v);
            let replacement = match &inst.kind {
                InstKind::Iconst { imm, .. } => {
                    if let Some(v) = inst.result {
                        known[v.index()] = Some(*imm);
                    }
                    None
                }
                InstKind::GetSlot { slot } if forward_slots => slots.get(slot).copied(),
                InstKind::SetSlot { slot, value } => {
                    match state.get(*slot).map(|s| (s.layout, s.ty)) {
                        Some((SlotLayout::Plain, ty)) if ty.is_int() && forward_slots => match constant(value) {
                            Some(imm) => {
                                slots.insert(*slot, imm);
                            }
                            None => {
                                slots.remove(slot);
                            }
                        },
                        // A packed field changes its parent.
                        Some((SlotLayout::Packed { parent, .. }, _)) => {
                            slots.remove(&parent);
                        }
                        _ => {}
                    }
                    None
                }
                // A helper may write any slot.
                InstKind::CallHelper { .. } => {
                    slots.clear();
                    None
                }
                kind => evaluate(kind, &known, &func.value_types, result_type),
            };
            if let (Some(imm), Some(result), Some(ty)) = (replacement, inst.result, result_type)
                && ty.is_int()
            {
                let imm = imm & ty.mask();
                inst.kind = InstKind::Iconst { ty, imm };
                known[result.index()] = Some(imm);
                folded += 1;
            }
        }
    }
    folded
}

fn constant_of(known: &[Option<u64>], value: Value) -> Option<u64> {
    known.get(value.index()).copied().flatten()
}

/// The value of an integer operation whose operands are all known, if the pass folds it.
fn evaluate(kind: &InstKind, known: &[Option<u64>], types: &[Type], result_type: Option<Type>) -> Option<u64> {
    let constant = |v: &Value| constant_of(known, *v);
    let type_of = |v: &Value| types.get(v.index()).copied();
    match kind {
        InstKind::Unary { op, arg } => unary(*op, constant(arg)?, result_type?),
        InstKind::Binary { op, args } => binary(*op, constant(&args[0])?, constant(&args[1])?, result_type?),
        InstKind::Icmp { cond, args } => {
            compare(*cond, constant(&args[0])?, constant(&args[1])?, type_of(&args[0])?).map(u64::from)
        }
        InstKind::Convert { op, arg, to } => convert(*op, constant(arg)?, type_of(arg)?, *to),
        _ => None,
    }
}

fn sign_extend(value: u64, ty: Type) -> i64 {
    let shift = 64 - ty.bits();
    ((value << shift) as i64) >> shift
}

fn unary(op: UnaryOp, a: u64, ty: Type) -> Option<u64> {
    match op {
        UnaryOp::Not => Some(!a),
        UnaryOp::Neg => Some(a.wrapping_neg()),
        _ => None,
    }
    .map(|v| v & ty.mask())
}

fn binary(op: BinaryOp, a: u64, b: u64, ty: Type) -> Option<u64> {
    let bits = ty.bits();
    let amount = (b % u64::from(bits)) as u32;
    let rotate = |left: bool| {
        if amount == 0 {
            return a;
        }
        let a = a & ty.mask();
        if left {
            (a << amount) | (a >> (bits - amount))
        } else {
            (a >> amount) | (a << (bits - amount))
        }
    };
    let value = match op {
        BinaryOp::Add => a.wrapping_add(b),
        BinaryOp::Sub => a.wrapping_sub(b),
        BinaryOp::Mul => a.wrapping_mul(b),
        BinaryOp::And => a & b,
        BinaryOp::Or => a | b,
        BinaryOp::Xor => a ^ b,
        BinaryOp::Shl => a << amount,
        BinaryOp::Lshr => (a & ty.mask()) >> amount,
        BinaryOp::Ashr => (sign_extend(a, ty) >> amount) as u64,
        BinaryOp::Rotl => rotate(true),
        BinaryOp::Rotr => rotate(false),
        // Division and the high halves of products are left to the C compiler.
        _ => return None,
    };
    Some(value & ty.mask())
}

fn compare(cond: IntCC, a: u64, b: u64, ty: Type) -> Option<bool> {
    let (ua, ub) = (a & ty.mask(), b & ty.mask());
    let (sa, sb) = (sign_extend(a, ty), sign_extend(b, ty));
    Some(match cond {
        IntCC::Eq => ua == ub,
        IntCC::Ne => ua != ub,
        IntCC::Ult => ua < ub,
        IntCC::Ule => ua <= ub,
        IntCC::Ugt => ua > ub,
        IntCC::Uge => ua >= ub,
        IntCC::Slt => sa < sb,
        IntCC::Sle => sa <= sb,
        IntCC::Sgt => sa > sb,
        IntCC::Sge => sa >= sb,
    })
}

fn convert(op: ConvOp, a: u64, from: Type, to: Type) -> Option<u64> {
    if !from.is_int() || !to.is_int() {
        return None;
    }
    match op {
        ConvOp::Zext | ConvOp::Trunc => Some(a & from.mask() & to.mask()),
        ConvOp::Sext => Some(sign_extend(a, from) as u64 & to.mask()),
        ConvOp::Bitcast => None,
    }
}

#[cfg(test)]
mod tests;
