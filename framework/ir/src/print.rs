//! The text form, printing side. [`crate::parse`] reads exactly what this writes.

use std::fmt::{self, Write};

use crate::{BlockCall, CallTarget, Function, InstKind, Program, SlotId, SlotLayout, StateDesc, Terminator, Value};

/// Writes a whole program: state, helpers, externs, address-taken set, then functions by address.
pub fn write_program(out: &mut String, program: &Program) -> fmt::Result {
    write_state(out, &program.state)?;
    for helper in program.helpers.values() {
        write!(out, "helper @{}(", helper.name)?;
        for (i, ty) in helper.params.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            out.push_str(ty.name());
        }
        out.push(')');
        if let Some(ty) = helper.result {
            write!(out, " -> {ty}")?;
        }
        for effect in helper.effects.names() {
            write!(out, " {effect}")?;
        }
        if !helper.touches.is_empty() {
            out.push_str(" touches");
            for slot in &helper.touches {
                match program.state.get(*slot) {
                    Some(s) => write!(out, " %{}", s.name)?,
                    None => write!(out, " %{slot}")?,
                }
            }
        }
        out.push('\n');
    }
    for (addr, symbol) in &program.externs {
        let transparent = if program.flag_transparent.contains(addr) {
            " flag_transparent"
        } else {
            ""
        };
        writeln!(out, "extern {} {:?}{transparent}", addr.function_name(), symbol)?;
    }
    for addr in &program.address_taken {
        writeln!(out, "address_taken {}", addr.function_name())?;
    }
    for (at, entries) in &program.pointer_tables {
        write!(out, "pointer_table {:#010x}", at.0)?;
        for f in entries {
            write!(out, " {}", f.function_name())?;
        }
        out.push('\n');
    }
    for func in program.functions.values() {
        out.push('\n');
        write_function(out, func, &program.state)?;
    }
    Ok(())
}

/// Writes the `state { ... }` block.
pub fn write_state(out: &mut String, state: &StateDesc) -> fmt::Result {
    out.push_str("state {\n");
    for (_, slot) in state.iter() {
        match slot.layout {
            SlotLayout::Plain => writeln!(out, "    {}: {} {}", slot.name, slot.ty, slot.role.name())?,
            SlotLayout::Array { len } => writeln!(out, "    {}: {}[{}] {}", slot.name, slot.ty, len, slot.role.name())?,
            SlotLayout::Packed { parent, lsb, bits } => writeln!(
                out,
                "    {}: {} {} = {}[{}+{}]",
                slot.name,
                slot.ty,
                slot.role.name(),
                slot_name(state, parent),
                lsb,
                bits
            )?,
        }
    }
    out.push_str("}\n");
    Ok(())
}

fn slot_name(state: &StateDesc, slot: SlotId) -> String {
    state
        .get(slot)
        .map_or_else(|| format!("<bad {slot}>"), |s| s.name.clone())
}

fn write_args(out: &mut String, args: &[Value]) -> fmt::Result {
    for (i, v) in args.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        write!(out, "{v}")?;
    }
    Ok(())
}

fn write_block_call(out: &mut String, call: &BlockCall) -> fmt::Result {
    write!(out, "{}", call.block)?;
    if !call.args.is_empty() {
        out.push('(');
        write_args(out, &call.args)?;
        out.push(')');
    }
    Ok(())
}

fn write_target(out: &mut String, target: &CallTarget) -> fmt::Result {
    match target {
        CallTarget::Direct(addr) => out.push_str(&addr.function_name()),
        CallTarget::Indirect(v) => write!(out, "{v}")?,
    }
    Ok(())
}

/// Writes one function.
pub fn write_function(out: &mut String, func: &Function, state: &StateDesc) -> fmt::Result {
    writeln!(out, "function {} {{", func.name())?;
    for (block, data) in func.iter_blocks() {
        write!(out, "{block}")?;
        if !data.params.is_empty() {
            out.push('(');
            for (i, v) in data.params.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write!(out, "{v}: {}", type_name(func, *v))?;
            }
            out.push(')');
        }
        out.push_str(":\n");
        for inst in &data.insts {
            out.push_str("    ");
            if let Some(v) = inst.result {
                write!(out, "{v}: {} = ", type_name(func, v))?;
            }
            write_inst(out, &inst.kind, state)?;
            out.push('\n');
        }
        out.push_str("    ");
        write_terminator(out, &data.term)?;
        out.push('\n');
    }
    out.push_str("}\n");
    Ok(())
}

fn type_name(func: &Function, v: Value) -> &'static str {
    func.value_type(v).map_or("<untyped>", |t| t.name())
}

fn write_inst(out: &mut String, kind: &InstKind, state: &StateDesc) -> fmt::Result {
    match kind {
        InstKind::Iconst { imm, .. } => write!(out, "iconst {imm:#x}"),
        InstKind::Fconst { bits, .. } => write!(out, "fconst {bits:#x}"),
        InstKind::Unary { op, arg } => write!(out, "{} {arg}", op.name()),
        InstKind::Binary { op, args } => write!(out, "{} {}, {}", op.name(), args[0], args[1]),
        InstKind::Icmp { cond, args } => {
            write!(out, "icmp {} {}, {}", cond.name(), args[0], args[1])
        }
        InstKind::Select {
            cond,
            if_true,
            if_false,
        } => write!(out, "select {cond}, {if_true}, {if_false}"),
        InstKind::Convert { op, arg, .. } => write!(out, "{} {arg}", op.name()),
        InstKind::FBinary { op, rounding, args } => {
            write!(out, "{}.{} {}, {}", op.name(), rounding.name(), args[0], args[1])
        }
        InstKind::FTernary { op, rounding, args } => {
            write!(
                out,
                "{}.{} {}, {}, {}",
                op.name(),
                rounding.name(),
                args[0],
                args[1],
                args[2]
            )
        }
        InstKind::FUnary { op, rounding, arg } => {
            write!(out, "{}.{} {arg}", op.name(), rounding.name())
        }
        InstKind::Fcmp { cond, args } => {
            write!(out, "fcmp {} {}, {}", cond.name(), args[0], args[1])
        }
        InstKind::FConvert { op, rounding, arg, .. } => write!(out, "{}.{} {arg}", op.name(), rounding.name()),
        InstKind::GetSlot { slot } => write!(out, "get %{}", slot_name(state, *slot)),
        InstKind::SetSlot { slot, value } => {
            write!(out, "set %{}, {value}", slot_name(state, *slot))
        }
        InstKind::Kill { slot } => write!(out, "kill %{}", slot_name(state, *slot)),
        InstKind::GetIndexed { slot, index } => {
            write!(out, "get %{}[{index}]", slot_name(state, *slot))
        }
        InstKind::SetIndexed { slot, index, value } => {
            write!(out, "set %{}[{index}], {value}", slot_name(state, *slot))
        }
        InstKind::Load {
            endian, space, addr, ..
        } => write!(out, "load.{} {space} {addr}", endian.name()),
        InstKind::Store {
            endian,
            space,
            addr,
            value,
        } => {
            write!(out, "store.{} {space} {addr}, {value}", endian.name())
        }
        InstKind::CallHelper { helper, args } => {
            write!(out, "call_helper @{helper}(")?;
            write_args(out, args)?;
            out.push(')');
            Ok(())
        }
        InstKind::Mark { pc } => write!(out, "mark {:#010x}", pc.0),
    }
}

fn write_terminator(out: &mut String, term: &Terminator) -> fmt::Result {
    match term {
        Terminator::Jump(dest) => {
            out.push_str("jump ");
            write_block_call(out, dest)
        }
        Terminator::Branch {
            cond,
            then_dest,
            else_dest,
        } => {
            write!(out, "br {cond}, ")?;
            write_block_call(out, then_dest)?;
            out.push_str(", ");
            write_block_call(out, else_dest)
        }
        Terminator::Switch { index, cases, default } => {
            write!(out, "switch {index}, [")?;
            for (i, case) in cases.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_block_call(out, case)?;
            }
            out.push_str("], ");
            write_block_call(out, default)
        }
        Terminator::Call { target, cont } => {
            out.push_str("call ");
            write_target(out, target)?;
            out.push_str(", ");
            write_block_call(out, cont)
        }
        Terminator::Return => {
            out.push_str("return");
            Ok(())
        }
        Terminator::TailCall { target } => {
            out.push_str("tail ");
            write_target(out, target)
        }
        Terminator::Exit { pc, reason } => write!(out, "exit {pc}, {}", reason.name()),
        Terminator::Unreachable => {
            out.push_str("unreachable");
            Ok(())
        }
    }
}

impl fmt::Display for Program {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = String::new();
        write_program(&mut s, self)?;
        f.write_str(&s)
    }
}

/// The text of one function, for diagnostics and golden files.
pub fn function_to_string(func: &Function, state: &StateDesc) -> String {
    let mut s = String::new();
    // Writing into a String cannot fail.
    let _ = write_function(&mut s, func, state);
    s
}
