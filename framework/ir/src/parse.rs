//! The text form, reading side: parses what [`crate::print`] writes, with line and column on every error.
//!
//! The text is line-oriented: one declaration, block header, instruction or
//! terminator per line; `;` starts a comment. Values keep the numbers written
//! in the text, so printing a parsed function gives back the same text.

use std::collections::BTreeMap;

use crate::{
    AddrSpace, BinaryOp, Block, BlockCall, CallTarget, ConvOp, Effects, Endian, ExitReason, FBinaryOp, FConvOp,
    FTernaryOp, FUnaryOp, FloatCC, Function, GuestAddr, HelperDecl, Inst, InstKind, IntCC, Program, Rounding, Slot,
    SlotLayout, SlotRole, StateDesc, Terminator, Type, UnaryOp, Value,
};

/// A text-form error at a 1-based line and column.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{line}:{column}: {message}")]
pub struct ParseError {
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
    /// What was wrong.
    pub message: String,
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Word(String),
    Slot(String),
    Helper(String),
    Num(u128),
    Str(String),
    Punct(char),
    Arrow,
}

#[derive(Clone, Debug)]
struct Token {
    tok: Tok,
    column: usize,
}

fn describe(tok: &Tok) -> String {
    match tok {
        Tok::Word(w) => format!("`{w}`"),
        Tok::Slot(s) => format!("`%{s}`"),
        Tok::Helper(h) => format!("`@{h}`"),
        Tok::Num(n) => format!("number {n:#x}"),
        Tok::Str(s) => format!("string {s:?}"),
        Tok::Punct(c) => format!("`{c}`"),
        Tok::Arrow => "`->`".to_string(),
    }
}

fn tokenize(line_no: usize, line: &str) -> Result<Vec<Token>, ParseError> {
    let err = |column: usize, message: String| ParseError {
        line: line_no,
        column,
        message,
    };
    let chars: Vec<char> = line.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let is_word = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '.';
    while i < chars.len() {
        let c = chars[i];
        let column = i + 1;
        if c == ';' {
            break;
        }
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        let word_from = |start: usize| {
            let mut end = start;
            while end < chars.len() && is_word(chars[end]) {
                end += 1;
            }
            (chars[start..end].iter().collect::<String>(), end)
        };
        let tok = if c == '%' || c == '@' {
            let (w, end) = word_from(i + 1);
            if w.is_empty() {
                return Err(err(column, format!("expected a name after `{c}`")));
            }
            i = end;
            if c == '%' { Tok::Slot(w) } else { Tok::Helper(w) }
        } else if c.is_ascii_digit() {
            let (w, end) = word_from(i);
            i = end;
            let parsed = match w.strip_prefix("0x") {
                Some(hex) => u128::from_str_radix(hex, 16),
                None => w.parse::<u128>(),
            };
            Tok::Num(parsed.map_err(|_| err(column, format!("`{w}` is not a number")))?)
        } else if c.is_ascii_alphabetic() || c == '_' {
            let (w, end) = word_from(i);
            i = end;
            Tok::Word(w)
        } else if c == '"' {
            let mut s = String::new();
            let mut j = i + 1;
            loop {
                match chars.get(j) {
                    None => return Err(err(column, "unterminated string".to_string())),
                    Some('"') => break,
                    Some('\\') => {
                        match chars.get(j + 1) {
                            Some(&e @ ('"' | '\\')) => s.push(e),
                            _ => return Err(err(j + 1, "unknown escape in string".to_string())),
                        }
                        j += 2;
                    }
                    Some(&ch) => {
                        s.push(ch);
                        j += 1;
                    }
                }
            }
            i = j + 1;
            Tok::Str(s)
        } else if c == '-' && chars.get(i + 1) == Some(&'>') {
            i += 2;
            Tok::Arrow
        } else if "{}()[],:=+".contains(c) {
            i += 1;
            Tok::Punct(c)
        } else {
            return Err(err(column, format!("unexpected character `{c}`")));
        };
        out.push(Token { tok, column });
    }
    Ok(out)
}

/// A cursor over one line's tokens.
struct Line<'s> {
    no: usize,
    toks: Vec<Token>,
    pos: usize,
    len: usize,
    _text: &'s str,
}

impl Line<'_> {
    fn err(&self, message: impl Into<String>) -> ParseError {
        let column = self.toks.get(self.pos).map_or(self.len + 1, |t| t.column);
        ParseError {
            line: self.no,
            column,
            message: message.into(),
        }
    }

    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos).map(|t| &t.tok)
    }

    fn next(&mut self, what: &str) -> Result<Tok, ParseError> {
        match self.toks.get(self.pos) {
            Some(t) => {
                self.pos += 1;
                Ok(t.tok.clone())
            }
            None => Err(self.err(format!("expected {what}, found the end of the line"))),
        }
    }

    fn unexpected<T>(&mut self, what: &str) -> Result<T, ParseError> {
        let found = self.peek().map_or_else(|| "the end of the line".to_string(), describe);
        Err(self.err(format!("expected {what}, found {found}")))
    }

    fn punct(&mut self, c: char) -> Result<(), ParseError> {
        if self.peek() == Some(&Tok::Punct(c)) {
            self.pos += 1;
            Ok(())
        } else {
            self.unexpected(&format!("`{c}`"))
        }
    }

    fn eat_punct(&mut self, c: char) -> bool {
        if self.peek() == Some(&Tok::Punct(c)) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn word(&mut self, what: &str) -> Result<String, ParseError> {
        match self.peek() {
            Some(Tok::Word(w)) => {
                let w = w.clone();
                self.pos += 1;
                Ok(w)
            }
            _ => self.unexpected(what),
        }
    }

    fn num(&mut self, what: &str) -> Result<u128, ParseError> {
        match self.peek() {
            Some(Tok::Num(n)) => {
                let n = *n;
                self.pos += 1;
                Ok(n)
            }
            _ => self.unexpected(what),
        }
    }

    fn small_num<T: TryFrom<u128>>(&mut self, what: &str) -> Result<T, ParseError> {
        let n = self.num(what)?;
        T::try_from(n).map_err(|_| {
            self.pos -= 1;
            self.err(format!("{what} {n:#x} is out of range"))
        })
    }

    fn end(&mut self) -> Result<(), ParseError> {
        if self.pos == self.toks.len() {
            Ok(())
        } else {
            self.unexpected("the end of the line")
        }
    }

    fn ty(&mut self) -> Result<Type, ParseError> {
        let w = self.word("a type")?;
        Type::from_name(&w).ok_or_else(|| {
            self.pos -= 1;
            self.err(format!("unknown type `{w}`"))
        })
    }

    fn function_name(&mut self) -> Result<GuestAddr, ParseError> {
        let w = self.word("a function name like `f_00401000`")?;
        match GuestAddr::from_function_name(&w) {
            Some(addr) => Ok(addr),
            None => {
                self.pos -= 1;
                Err(self.err(format!("`{w}` is not a function name like `f_00401000`")))
            }
        }
    }
}

fn numbered(word: &str, prefix: &str) -> Option<u32> {
    let digits = word.strip_prefix(prefix)?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// Parses a whole program.
pub fn parse_program(text: &str) -> Result<Program, ParseError> {
    let mut lines = split_lines(text)?;
    let mut program = Program::default();
    let mut seen_state = false;
    while let Some(mut line) = lines.next_line() {
        let keyword = line.word("`state`, `helper`, `extern`, `address_taken`, `pointer_table` or `function`")?;
        match keyword.as_str() {
            "state" if !seen_state => {
                line.punct('{')?;
                line.end()?;
                program.state = parse_state_body(&mut lines)?;
                seen_state = true;
            }
            "helper" => {
                let decl = parse_helper(&mut line, &program.state)?;
                if program.helpers.insert(decl.name.clone(), decl).is_some() {
                    return Err(ParseError {
                        line: line.no,
                        column: 1,
                        message: "helper declared twice".into(),
                    });
                }
            }
            "extern" => {
                let addr = line.function_name()?;
                let symbol = match line.next("a C symbol string")? {
                    Tok::Str(s) => s,
                    _ => {
                        line.pos -= 1;
                        return line.unexpected("a C symbol string");
                    }
                };
                if matches!(line.peek(), Some(Tok::Word(w)) if w == "flag_transparent") {
                    line.pos += 1;
                    program.flag_transparent.insert(addr);
                }
                line.end()?;
                program.externs.insert(addr, symbol);
            }
            "address_taken" => {
                let addr = line.function_name()?;
                line.end()?;
                program.address_taken.insert(addr);
            }
            "pointer_table" => {
                let at: u64 = line.small_num("a table address")?;
                let mut entries = Vec::new();
                while line.peek().is_some() {
                    entries.push(line.function_name()?);
                }
                program.pointer_tables.insert(GuestAddr(at), entries);
            }
            "function" => {
                line.pos -= 1;
                let func = parse_function_at(line, &mut lines, &program.state)?;
                if program.functions.insert(func.entry, func).is_some() {
                    return Err(ParseError {
                        line: lines.last_no,
                        column: 1,
                        message: "function defined twice".into(),
                    });
                }
            }
            _ => {
                line.pos -= 1;
                return Err(line.err(format!("unexpected `{keyword}` at the top level")));
            }
        }
    }
    Ok(program)
}

/// Parses a single function against a known register file.
pub fn parse_function(text: &str, state: &StateDesc) -> Result<Function, ParseError> {
    let mut lines = split_lines(text)?;
    let Some(line) = lines.next_line() else {
        return Err(ParseError {
            line: 1,
            column: 1,
            message: "expected a function, found nothing".into(),
        });
    };
    let func = parse_function_at(line, &mut lines, state)?;
    if let Some(line) = lines.next_line() {
        return Err(line.err("unexpected text after the function"));
    }
    Ok(func)
}

struct Lines<'s> {
    lines: Vec<(usize, &'s str, Vec<Token>)>,
    index: usize,
    last_no: usize,
}

impl<'s> Lines<'s> {
    fn next_line(&mut self) -> Option<Line<'s>> {
        let (no, text, toks) = self.lines.get(self.index)?.clone();
        self.index += 1;
        self.last_no = no;
        Some(Line {
            no,
            toks,
            pos: 0,
            len: text.chars().count(),
            _text: text,
        })
    }
}

fn split_lines(text: &str) -> Result<Lines<'_>, ParseError> {
    let mut lines = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let toks = tokenize(i + 1, line)?;
        if !toks.is_empty() {
            lines.push((i + 1, line, toks));
        }
    }
    Ok(Lines {
        lines,
        index: 0,
        last_no: 0,
    })
}

fn parse_state_body(lines: &mut Lines<'_>) -> Result<StateDesc, ParseError> {
    let mut state = StateDesc::new();
    loop {
        let Some(mut line) = lines.next_line() else {
            return Err(ParseError {
                line: lines.last_no,
                column: 1,
                message: "the state block has no `}`".into(),
            });
        };
        if line.eat_punct('}') {
            line.end()?;
            return Ok(state);
        }
        let name = line.word("a slot name")?;
        line.punct(':')?;
        let ty = line.ty()?;
        let mut layout = SlotLayout::Plain;
        if line.eat_punct('[') {
            let len = line.small_num("an array length")?;
            line.punct(']')?;
            layout = SlotLayout::Array { len };
        }
        let role_name = line.word("a slot role (gpr, fpr, flag, special)")?;
        let Some(role) = SlotRole::from_name(&role_name) else {
            line.pos -= 1;
            return Err(line.err(format!("unknown slot role `{role_name}`")));
        };
        if line.eat_punct('=') {
            let parent_name = line.word("the parent slot")?;
            let Some(parent) = state.find(&parent_name) else {
                line.pos -= 1;
                return Err(line.err(format!("unknown parent slot `{parent_name}`")));
            };
            line.punct('[')?;
            let lsb = line.small_num("the field's lowest bit")?;
            line.punct('+')?;
            let bits = line.small_num("the field's width")?;
            line.punct(']')?;
            layout = SlotLayout::Packed { parent, lsb, bits };
        }
        line.end()?;
        state.add(Slot { name, ty, role, layout }).map_err(|e| ParseError {
            line: line.no,
            column: 1,
            message: e.to_string(),
        })?;
    }
}

fn parse_helper(line: &mut Line<'_>, state: &StateDesc) -> Result<HelperDecl, ParseError> {
    let name = match line.next("`@name`")? {
        Tok::Helper(h) => h,
        _ => {
            line.pos -= 1;
            return line.unexpected("`@name`");
        }
    };
    line.punct('(')?;
    let mut params = Vec::new();
    if !line.eat_punct(')') {
        loop {
            params.push(line.ty()?);
            if line.eat_punct(')') {
                break;
            }
            line.punct(',')?;
        }
    }
    let mut result = None;
    if line.peek() == Some(&Tok::Arrow) {
        line.pos += 1;
        result = Some(line.ty()?);
    }
    let mut effects = Effects::default();
    let mut touches = Vec::new();
    while line.peek().is_some() {
        let w = line.word("an effect or `touches`")?;
        if w == "touches" {
            while line.peek().is_some() {
                match line.next("`%slot`")? {
                    Tok::Slot(name) => match state.find(&name) {
                        Some(slot) => touches.push(slot),
                        None => {
                            line.pos -= 1;
                            return Err(line.err(format!("unknown slot `%{name}`")));
                        }
                    },
                    _ => {
                        line.pos -= 1;
                        return line.unexpected("`%slot`");
                    }
                }
            }
            break;
        }
        if !effects.set_by_name(&w) {
            line.pos -= 1;
            return Err(line.err(format!("unknown effect `{w}`")));
        }
    }
    Ok(HelperDecl {
        name,
        params,
        result,
        effects,
        touches,
    })
}

/// Per-function parsing state: values and blocks keep their textual numbers.
struct FnParser<'a> {
    func: Function,
    state: &'a StateDesc,
    defined_blocks: BTreeMap<u32, usize>,
    defined_values: Vec<bool>,
}

impl FnParser<'_> {
    fn define_value(&mut self, line: &Line<'_>, v: u32, ty: Type) -> Result<Value, ParseError> {
        let index = v as usize;
        if self.func.value_types.len() <= index {
            // Numbers never written (values a pass deleted) get a placeholder type; nothing uses them.
            self.func.value_types.resize(index + 1, Type::I1);
            self.defined_values.resize(index + 1, false);
        }
        if std::mem::replace(&mut self.defined_values[index], true) {
            return Err(line.err(format!("v{v} is defined twice")));
        }
        self.func.value_types[index] = ty;
        Ok(Value(v))
    }

    fn value(&self, line: &mut Line<'_>) -> Result<Value, ParseError> {
        let w = line.word("a value like `v3`")?;
        match numbered(&w, "v") {
            Some(n) => Ok(Value(n)),
            None => {
                line.pos -= 1;
                Err(line.err(format!("`{w}` is not a value like `v3`")))
            }
        }
    }

    fn block(&mut self, line: &mut Line<'_>) -> Result<Block, ParseError> {
        let w = line.word("a block like `block2`")?;
        match numbered(&w, "block") {
            Some(n) => Ok(Block(n)),
            None => {
                line.pos -= 1;
                Err(line.err(format!("`{w}` is not a block like `block2`")))
            }
        }
    }

    fn block_call(&mut self, line: &mut Line<'_>) -> Result<BlockCall, ParseError> {
        let block = self.block(line)?;
        let mut args = Vec::new();
        if line.eat_punct('(') {
            loop {
                args.push(self.value(line)?);
                if line.eat_punct(')') {
                    break;
                }
                line.punct(',')?;
            }
        }
        Ok(BlockCall { block, args })
    }

    fn target(&mut self, line: &mut Line<'_>) -> Result<CallTarget, ParseError> {
        match line.peek() {
            Some(Tok::Word(w)) if w.starts_with("f_") => Ok(CallTarget::Direct(line.function_name()?)),
            _ => Ok(CallTarget::Indirect(self.value(line)?)),
        }
    }

    fn slot(&self, line: &mut Line<'_>) -> Result<crate::SlotId, ParseError> {
        match line.next("a slot like `%eax`")? {
            Tok::Slot(name) => self.state.find(&name).ok_or_else(|| {
                line.pos -= 1;
                line.err(format!("unknown state slot `%{name}`"))
            }),
            _ => {
                line.pos -= 1;
                line.unexpected("a slot like `%eax`")
            }
        }
    }

    fn values(&self, line: &mut Line<'_>, n: usize) -> Result<Vec<Value>, ParseError> {
        let mut out = Vec::with_capacity(n);
        for i in 0..n {
            if i > 0 {
                line.punct(',')?;
            }
            out.push(self.value(line)?);
        }
        Ok(out)
    }

    fn two(&self, line: &mut Line<'_>) -> Result<[Value; 2], ParseError> {
        let v = self.values(line, 2)?;
        Ok([v[0], v[1]])
    }
}

fn split_mnemonic(m: &str) -> (&str, Option<&str>, Option<&str>) {
    let mut parts = m.splitn(3, '.');
    let base = parts.next().unwrap_or("");
    (base, parts.next(), parts.next())
}

fn rounding(line: &mut Line<'_>, q: Option<&str>, mnemonic: &str) -> Result<Rounding, ParseError> {
    match q.and_then(Rounding::from_name) {
        Some(r) => Ok(r),
        None => {
            line.pos -= 1;
            Err(line.err(format!(
                "`{mnemonic}` needs a rounding suffix (.rne, .rz, .ru, .rd, .rdyn)"
            )))
        }
    }
}

fn parse_function_at(mut header: Line<'_>, lines: &mut Lines<'_>, state: &StateDesc) -> Result<Function, ParseError> {
    let kw = header.word("`function`")?;
    if kw != "function" {
        header.pos -= 1;
        return header.unexpected("`function`");
    }
    let entry = header.function_name()?;
    header.punct('{')?;
    header.end()?;
    let mut p = FnParser {
        func: Function::new(entry),
        state,
        defined_blocks: BTreeMap::new(),
        defined_values: Vec::new(),
    };
    let mut current: Option<usize> = None;
    loop {
        let Some(mut line) = lines.next_line() else {
            return Err(ParseError {
                line: lines.last_no,
                column: 1,
                message: format!("function {} has no closing `}}`", entry.function_name()),
            });
        };
        if line.eat_punct('}') {
            line.end()?;
            if current.is_some() {
                return Err(line.err("the last block has no terminator"));
            }
            break;
        }
        // A block header: `blockN(params):`
        if let Some(Tok::Word(w)) = line.peek()
            && numbered(w, "block").is_some()
            && current.is_none()
        {
            let block = p.block(&mut line)?;
            let mut params = Vec::new();
            if line.eat_punct('(') {
                loop {
                    let v = p.value(&mut line)?;
                    line.punct(':')?;
                    let ty = line.ty()?;
                    params.push(p.define_value(&line, v.0, ty)?);
                    if line.eat_punct(')') {
                        break;
                    }
                    line.punct(',')?;
                }
            }
            line.punct(':')?;
            line.end()?;
            if p.defined_blocks.insert(block.0, line.no).is_some() {
                return Err(ParseError {
                    line: line.no,
                    column: 1,
                    message: format!("{block} is defined twice"),
                });
            }
            let index = block.index();
            if index != p.func.blocks.len() {
                return Err(ParseError {
                    line: line.no,
                    column: 1,
                    message: format!(
                        "expected block{} next (blocks are numbered in order)",
                        p.func.blocks.len()
                    ),
                });
            }
            let b = p.func.new_block();
            p.func.block_mut(b).params = params;
            current = Some(index);
            continue;
        }
        let Some(block_index) = current else {
            return line.unexpected("a block header like `block0:`");
        };
        // `vN: ty = ...` or a bare instruction or terminator.
        let mut result = None;
        if let (
            Some(Tok::Word(w)),
            Some(Token {
                tok: Tok::Punct(':'), ..
            }),
        ) = (line.peek().cloned(), line.toks.get(line.pos + 1))
            && numbered(&w, "v").is_some()
        {
            let v = p.value(&mut line)?;
            line.punct(':')?;
            let ty = line.ty()?;
            line.punct('=')?;
            result = Some((v, ty));
        }
        let mnemonic = line.word("an instruction")?;
        let (base, q1, q2) = split_mnemonic(&mnemonic);
        if result.is_none()
            && let Some(term) = parse_terminator(&mut p, &mut line, base)?
        {
            line.end()?;
            p.func.blocks[block_index].term = term;
            current = None;
            continue;
        }
        let kind = parse_inst_kind(&mut p, &mut line, &mnemonic, base, q1, q2, result.map(|r| r.1))?;
        line.end()?;
        let value = match result {
            Some((v, ty)) => Some(p.define_value(&line, v.0, ty)?),
            None => None,
        };
        p.func.blocks[block_index].insts.push(Inst { result: value, kind });
    }
    Ok(p.func)
}

fn parse_terminator(p: &mut FnParser<'_>, line: &mut Line<'_>, base: &str) -> Result<Option<Terminator>, ParseError> {
    let term = match base {
        "jump" => Terminator::Jump(p.block_call(line)?),
        "br" => {
            let cond = p.value(line)?;
            line.punct(',')?;
            let then_dest = p.block_call(line)?;
            line.punct(',')?;
            let else_dest = p.block_call(line)?;
            Terminator::Branch {
                cond,
                then_dest,
                else_dest,
            }
        }
        "switch" => {
            let index = p.value(line)?;
            line.punct(',')?;
            line.punct('[')?;
            let mut cases = Vec::new();
            if !line.eat_punct(']') {
                loop {
                    cases.push(p.block_call(line)?);
                    if line.eat_punct(']') {
                        break;
                    }
                    line.punct(',')?;
                }
            }
            line.punct(',')?;
            let default = p.block_call(line)?;
            Terminator::Switch { index, cases, default }
        }
        "call" => {
            let target = p.target(line)?;
            line.punct(',')?;
            let cont = p.block_call(line)?;
            Terminator::Call { target, cont }
        }
        "return" => Terminator::Return,
        "tail" => Terminator::TailCall {
            target: p.target(line)?,
        },
        "exit" => {
            let pc = p.value(line)?;
            line.punct(',')?;
            let w = line.word("an exit reason")?;
            let Some(reason) = ExitReason::from_name(&w) else {
                line.pos -= 1;
                return Err(line.err(format!("unknown exit reason `{w}`")));
            };
            Terminator::Exit { pc, reason }
        }
        "unreachable" => Terminator::Unreachable,
        _ => return Ok(None),
    };
    Ok(Some(term))
}

fn parse_inst_kind(
    p: &mut FnParser<'_>,
    line: &mut Line<'_>,
    mnemonic: &str,
    base: &str,
    q1: Option<&str>,
    q2: Option<&str>,
    result: Option<Type>,
) -> Result<InstKind, ParseError> {
    let need_result = |line: &mut Line<'_>| -> Result<Type, ParseError> {
        result.ok_or_else(|| {
            line.pos -= 1;
            line.err(format!("`{base}` defines a value: write `vN: type = {base} ...`"))
        })
    };
    let no_qualifier = |line: &mut Line<'_>| -> Result<(), ParseError> {
        if q1.is_some() {
            line.pos -= 1;
            return Err(line.err(format!("`{mnemonic}` takes no suffix")));
        }
        Ok(())
    };
    if let Some(op) = UnaryOp::from_name(base) {
        no_qualifier(line)?;
        need_result(line)?;
        return Ok(InstKind::Unary {
            op,
            arg: p.value(line)?,
        });
    }
    if let Some(op) = BinaryOp::from_name(base) {
        no_qualifier(line)?;
        need_result(line)?;
        return Ok(InstKind::Binary { op, args: p.two(line)? });
    }
    if let Some(op) = ConvOp::from_name(base) {
        no_qualifier(line)?;
        let to = need_result(line)?;
        return Ok(InstKind::Convert {
            op,
            arg: p.value(line)?,
            to,
        });
    }
    if let Some(op) = FBinaryOp::from_name(base) {
        need_result(line)?;
        let rounding = rounding(line, q1, mnemonic)?;
        return Ok(InstKind::FBinary {
            op,
            rounding,
            args: p.two(line)?,
        });
    }
    if let Some(op) = FTernaryOp::from_name(base) {
        need_result(line)?;
        let rounding = rounding(line, q1, mnemonic)?;
        let v = p.values(line, 3)?;
        return Ok(InstKind::FTernary {
            op,
            rounding,
            args: [v[0], v[1], v[2]],
        });
    }
    if let Some(op) = FUnaryOp::from_name(base) {
        need_result(line)?;
        let rounding = rounding(line, q1, mnemonic)?;
        return Ok(InstKind::FUnary {
            op,
            rounding,
            arg: p.value(line)?,
        });
    }
    if let Some(op) = FConvOp::from_name(base) {
        let to = need_result(line)?;
        let rounding = rounding(line, q1, mnemonic)?;
        return Ok(InstKind::FConvert {
            op,
            rounding,
            arg: p.value(line)?,
            to,
        });
    }
    let kind = match base {
        "iconst" => {
            no_qualifier(line)?;
            let ty = need_result(line)?;
            let imm = line.num("an integer")?;
            let imm = u64::try_from(imm).ok().filter(|i| i & !ty.mask() == 0).ok_or_else(|| {
                line.pos -= 1;
                line.err(format!("{imm:#x} does not fit in {ty}"))
            })?;
            InstKind::Iconst { ty, imm }
        }
        "fconst" => {
            no_qualifier(line)?;
            let ty = need_result(line)?;
            InstKind::Fconst {
                ty,
                bits: line.num("a bit pattern")?,
            }
        }
        "icmp" => {
            no_qualifier(line)?;
            need_result(line)?;
            let w = line.word("a condition")?;
            let Some(cond) = IntCC::from_name(&w) else {
                line.pos -= 1;
                return Err(line.err(format!("unknown integer condition `{w}`")));
            };
            InstKind::Icmp {
                cond,
                args: p.two(line)?,
            }
        }
        "fcmp" => {
            no_qualifier(line)?;
            need_result(line)?;
            let w = line.word("a condition")?;
            let Some(cond) = FloatCC::from_name(&w) else {
                line.pos -= 1;
                return Err(line.err(format!("unknown float condition `{w}`")));
            };
            InstKind::Fcmp {
                cond,
                args: p.two(line)?,
            }
        }
        "select" => {
            no_qualifier(line)?;
            need_result(line)?;
            let v = p.values(line, 3)?;
            InstKind::Select {
                cond: v[0],
                if_true: v[1],
                if_false: v[2],
            }
        }
        "get" => {
            no_qualifier(line)?;
            need_result(line)?;
            let slot = p.slot(line)?;
            if line.eat_punct('[') {
                let index = p.value(line)?;
                line.punct(']')?;
                InstKind::GetIndexed { slot, index }
            } else {
                InstKind::GetSlot { slot }
            }
        }
        "set" => {
            no_qualifier(line)?;
            let slot = p.slot(line)?;
            if line.eat_punct('[') {
                let index = p.value(line)?;
                line.punct(']')?;
                line.punct(',')?;
                InstKind::SetIndexed {
                    slot,
                    index,
                    value: p.value(line)?,
                }
            } else {
                line.punct(',')?;
                InstKind::SetSlot {
                    slot,
                    value: p.value(line)?,
                }
            }
        }
        "load" | "store" => {
            let endian = q1.and_then(Endian::from_name).ok_or_else(|| {
                line.pos -= 1;
                line.err(format!(
                    "`{base}` needs a byte-order suffix: `{base}.le` or `{base}.be`"
                ))
            })?;
            if q2.is_some() {
                line.pos -= 1;
                return Err(line.err(format!("`{mnemonic}` has too many suffixes")));
            }
            let w = line.word("an address space (`ram`, `as1`, ...)")?;
            let space = if w == "ram" {
                AddrSpace::RAM
            } else {
                match w.strip_prefix("as").and_then(|n| n.parse::<u8>().ok()) {
                    Some(n) if n > 0 => AddrSpace(n),
                    _ => {
                        line.pos -= 1;
                        return Err(line.err(format!("unknown address space `{w}`")));
                    }
                }
            };
            let addr = p.value(line)?;
            if base == "load" {
                let ty = need_result(line)?;
                InstKind::Load {
                    ty,
                    endian,
                    space,
                    addr,
                }
            } else {
                line.punct(',')?;
                InstKind::Store {
                    endian,
                    space,
                    addr,
                    value: p.value(line)?,
                }
            }
        }
        "call_helper" => {
            no_qualifier(line)?;
            let helper = match line.next("`@helper`")? {
                Tok::Helper(h) => h,
                _ => {
                    line.pos -= 1;
                    return line.unexpected("`@helper`");
                }
            };
            line.punct('(')?;
            let mut args = Vec::new();
            if !line.eat_punct(')') {
                loop {
                    args.push(p.value(line)?);
                    if line.eat_punct(')') {
                        break;
                    }
                    line.punct(',')?;
                }
            }
            InstKind::CallHelper { helper, args }
        }
        "kill" => {
            no_qualifier(line)?;
            InstKind::Kill { slot: p.slot(line)? }
        }
        "mark" => {
            no_qualifier(line)?;
            let pc = line.small_num::<u64>("a guest address")?;
            InstKind::Mark { pc: GuestAddr(pc) }
        }
        _ => {
            line.pos -= 1;
            return Err(line.err(format!("unknown instruction `{mnemonic}`")));
        }
    };
    Ok(kind)
}
