//! Finds where each field of a recipe is written, so validation errors can name a line and column.
//!
//! serde hands the validator values without positions, so this module scans the RON text itself:
//! it skips comments, strings and numbers, follows the nesting of `(`, `[` and `{`, and records the
//! position of every struct field name (`shards`, `passes[2].name`), map key
//! (`passes[0].params.limit`) and list element (`overrides[1]`). It only ever runs on text that ron
//! has already accepted, so it can be forgiving: on anything it does not understand it records
//! nothing, and the error is then reported with the file name alone.

use std::collections::HashMap;

use crate::error::Location;

/// Field paths of a recipe text mapped to where they are written (the first character of the
/// field's name, or of a list element).
#[derive(Debug, Default)]
pub(crate) struct FieldLocations {
    at: HashMap<String, Location>,
}

impl FieldLocations {
    /// Scans `text` (a recipe that ron accepted).
    pub(crate) fn scan(text: &str) -> FieldLocations {
        Scanner::new(text).run()
    }

    /// Where `path` (such as `passes[2].name`) is written, if it is.
    pub(crate) fn get(&self, path: &str) -> Option<Location> {
        self.at.get(path).copied()
    }
}

enum Frame {
    /// `( ... )`: a struct (or a tuple, whose elements have no names).
    Struct { key: Option<String> },
    /// `[ ... ]`: the index of the element being read, and whether its start was recorded.
    List { index: usize, recorded: bool },
    /// `{ ... }`: a map, keyed by the last key seen.
    Map { key: Option<String> },
}

struct Scanner {
    chars: Vec<char>,
    locations: Vec<Location>,
    i: usize,
    stack: Vec<Frame>,
    out: FieldLocations,
}

impl Scanner {
    fn new(text: &str) -> Scanner {
        let chars: Vec<char> = text.chars().collect();
        let mut locations = Vec::with_capacity(chars.len() + 1);
        let (mut line, mut column) = (1, 1);
        for &c in &chars {
            locations.push(Location { line, column });
            if c == '\n' {
                line += 1;
                column = 1;
            } else {
                column += 1;
            }
        }
        locations.push(Location { line, column });
        Scanner {
            chars,
            locations,
            i: 0,
            stack: Vec::new(),
            out: FieldLocations::default(),
        }
    }

    fn peek(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.i + ahead).copied()
    }

    fn run(mut self) -> FieldLocations {
        loop {
            self.skip_trivia();
            let Some(c) = self.peek(0) else { break };
            let start = self.i;
            match c {
                ')' | ']' | '}' => {
                    self.stack.pop();
                    self.i += 1;
                    continue;
                }
                ',' => {
                    match self.stack.last_mut() {
                        Some(Frame::List { index, recorded }) => {
                            *index += 1;
                            *recorded = false;
                        }
                        Some(Frame::Struct { key } | Frame::Map { key }) => *key = None,
                        None => {}
                    }
                    self.i += 1;
                    continue;
                }
                ':' => {
                    self.i += 1;
                    continue;
                }
                _ => {}
            }
            // Anything else starts a value (or a field name): a list element starts here.
            self.record_list_element(start);
            match c {
                '(' => {
                    self.i += 1;
                    self.stack.push(Frame::Struct { key: None });
                }
                '[' => {
                    self.i += 1;
                    self.stack.push(Frame::List {
                        index: 0,
                        recorded: false,
                    });
                }
                '{' => {
                    self.i += 1;
                    self.stack.push(Frame::Map { key: None });
                }
                '"' => {
                    let content = self.string();
                    self.map_key(content, start);
                }
                '\'' => self.char_literal(),
                c if c == '_' || c.is_alphabetic() => self.word(start),
                _ => self.i += 1, // numbers, signs, dots: one character at a time is enough
            }
        }
        self.out
    }

    /// Skips whitespace and (nested) comments.
    fn skip_trivia(&mut self) {
        loop {
            match (self.peek(0), self.peek(1)) {
                (Some(c), _) if c.is_whitespace() => self.i += 1,
                (Some('/'), Some('/')) => {
                    while self.peek(0).is_some_and(|c| c != '\n') {
                        self.i += 1;
                    }
                }
                (Some('/'), Some('*')) => {
                    self.i += 2;
                    let mut depth = 1;
                    while depth > 0 {
                        match (self.peek(0), self.peek(1)) {
                            (None, _) => return,
                            (Some('/'), Some('*')) => {
                                depth += 1;
                                self.i += 2;
                            }
                            (Some('*'), Some('/')) => {
                                depth -= 1;
                                self.i += 2;
                            }
                            _ => self.i += 1,
                        }
                    }
                }
                _ => return,
            }
        }
    }

    /// Reads a quoted string starting at the `"` and returns its text, escapes left as written.
    fn string(&mut self) -> String {
        self.i += 1;
        let mut content = String::new();
        while let Some(c) = self.peek(0) {
            self.i += 1;
            match c {
                '"' => break,
                '\\' => {
                    if let Some(escaped) = self.peek(0) {
                        content.push('\\');
                        content.push(escaped);
                        self.i += 1;
                    }
                }
                c => content.push(c),
            }
        }
        content
    }

    /// Reads a raw string `r#"..."#` starting after the `r` (at the first `#` or `"`).
    fn raw_string(&mut self) -> String {
        let mut hashes = 0;
        while self.peek(0) == Some('#') {
            hashes += 1;
            self.i += 1;
        }
        if self.peek(0) != Some('"') {
            return String::new();
        }
        self.i += 1;
        let mut content = String::new();
        while let Some(c) = self.peek(0) {
            if c == '"' && (1..=hashes).all(|k| self.peek(k) == Some('#')) {
                self.i += 1 + hashes;
                break;
            }
            content.push(c);
            self.i += 1;
        }
        content
    }

    fn char_literal(&mut self) {
        self.i += 1;
        while let Some(c) = self.peek(0) {
            self.i += 1;
            match c {
                '\'' => break,
                '\\' => self.i += 1,
                _ => {}
            }
        }
    }

    /// An identifier: a field name when a `:` follows, a raw or byte string prefix, or a word
    /// value (`true`, a struct name).
    fn word(&mut self, start: usize) {
        let mut end = self.i;
        while self.chars.get(end).is_some_and(|&c| c == '_' || c.is_alphanumeric()) {
            end += 1;
        }
        let word: String = self.chars[self.i..end].iter().collect();
        self.i = end;
        let next = self.peek(0);
        match (word.as_str(), next) {
            ("r" | "br", Some('"' | '#')) => {
                // `r#ident` is a raw identifier, `r#"..."#` a raw string.
                if next == Some('#') && self.peek(1).is_some_and(|c| c == '_' || c.is_alphabetic()) {
                    self.i += 1;
                    self.word(start);
                } else {
                    let content = self.raw_string();
                    self.map_key(content, start);
                }
            }
            ("b", Some('"')) => {
                let content = self.string();
                self.map_key(content, start);
            }
            _ => {
                self.skip_trivia();
                if self.peek(0) == Some(':')
                    && let Some(Frame::Struct { key }) = self.stack.last_mut()
                {
                    *key = Some(word.clone());
                    self.record(start, &word);
                }
            }
        }
    }

    /// A string just read at `start` is a map key if a `:` follows it inside a map.
    fn map_key(&mut self, content: String, start: usize) {
        self.skip_trivia();
        if self.peek(0) == Some(':')
            && let Some(Frame::Map { key }) = self.stack.last_mut()
        {
            *key = Some(content.clone());
            self.record(start, &content);
        }
    }

    /// Records the start of a list element, once per element.
    fn record_list_element(&mut self, start: usize) {
        if let Some(Frame::List { recorded, .. }) = self.stack.last_mut()
            && !*recorded
        {
            *recorded = true;
            let path = self.path(self.stack.len());
            self.insert(path, start);
        }
    }

    /// Records a key of the innermost frame.
    fn record(&mut self, start: usize, key: &str) {
        let mut path = self.path(self.stack.len() - 1);
        if !path.is_empty() {
            path.push('.');
        }
        path.push_str(key);
        self.insert(path, start);
    }

    fn insert(&mut self, path: String, start: usize) {
        if let Some(&location) = self.locations.get(start) {
            // The first occurrence wins; ron rejects duplicate fields anyway.
            self.out.at.entry(path).or_insert(location);
        }
    }

    /// The path of the value being read in the innermost `depth` frames.
    fn path(&self, depth: usize) -> String {
        let mut path = String::new();
        for frame in &self.stack[..depth] {
            match frame {
                Frame::Struct { key: Some(key) } | Frame::Map { key: Some(key) } => {
                    if !path.is_empty() {
                        path.push('.');
                    }
                    path.push_str(key);
                }
                Frame::List { index, .. } => {
                    path.push('[');
                    path.push_str(&index.to_string());
                    path.push(']');
                }
                Frame::Struct { key: None } | Frame::Map { key: None } => {}
            }
        }
        path
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(locations: &FieldLocations, path: &str) -> Option<(usize, usize)> {
        locations.get(path).map(|l| (l.line, l.column))
    }

    #[test]
    fn finds_fields_elements_and_map_keys() {
        let text = "Recipe( // a comment with shards: 3\n\
                    \x20 guest: \"x:y\", /* nested /* block */ comment */\n\
                    \x20 passes: [\n\
                    \x20   (name: \"a\", params: { \"limit\": 3, r#\"raw\"#: 'x' }),\n\
                    \x20   (name: r\"b\"),\n\
                    \x20 ],\n\
                    \x20 shards: 4,\n\
                    )";
        let locations = FieldLocations::scan(text);
        assert_eq!(at(&locations, "guest"), Some((2, 3)));
        assert_eq!(at(&locations, "passes"), Some((3, 3)));
        assert_eq!(at(&locations, "passes[0]"), Some((4, 5)));
        assert_eq!(at(&locations, "passes[0].name"), Some((4, 6)));
        assert_eq!(at(&locations, "passes[0].params.limit"), Some((4, 27)));
        assert_eq!(at(&locations, "passes[0].params.raw"), Some((4, 39)));
        assert_eq!(at(&locations, "passes[1].name"), Some((5, 6)));
        assert_eq!(at(&locations, "shards"), Some((7, 3)));
        assert_eq!(at(&locations, "x"), None);
    }

    #[test]
    fn unterminated_input_records_what_it_saw() {
        let locations = FieldLocations::scan("(guest: \"x\", image: /* open");
        assert_eq!(at(&locations, "guest"), Some((1, 2)));
        assert_eq!(at(&locations, "image"), Some((1, 14)));
    }
}
