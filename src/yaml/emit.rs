//! YAML text of a JSON value, byte for byte as serde_yaml 0.9 wrote it through libyaml.
//!
//! Every golden file (the rendered CR and CRD, the GitOps folder, the Flux and Argo CD
//! objects, the reports) was written by serde_yaml, which is unmaintained; no maintained
//! serializer makes the same choices (when to quote, which quote, `|-` blocks, where a
//! sequence sits under its key). So clinv emits YAML itself: serde_yaml's choice of
//! scalar style, then libyaml's emitter for the block styles serde_yaml used — its scalar
//! analysis, its style selection and its writers, with an unlimited line width and
//! Unicode allowed. Only what serde_yaml emitted for JSON-shaped data is here: block
//! mappings and sequences, `[]` and `{}` for empty ones, and scalars; no tags, anchors
//! or flow collections with items.

use serde_json::{Map, Value};

/// The YAML document for `value`, ending in a newline.
pub fn to_string(value: &Value) -> String {
    let mut e = Emitter {
        out: String::new(),
        column: 0,
        indent: -1,
        indents: Vec::new(),
        whitespace: true,
        indention: true,
    };
    e.node(value, Context::ROOT);
    // The document's end: serde_yaml ended no stream, so no `...` after a `|+` block.
    e.write_indent();
    e.out
}

/// libyaml's indentation step (`best_indent`).
const INDENT: i32 = 2;
/// Longest key libyaml writes as a simple `key: value` (longer ones get `? key`).
const SIMPLE_KEY_MAX: usize = 128;

/// Where a node stands: libyaml's `*_context` flags.
#[derive(Clone, Copy)]
struct Context {
    mapping: bool,
    simple_key: bool,
}

impl Context {
    const ROOT: Context = Context {
        mapping: false,
        simple_key: false,
    };
    const ITEM: Context = Context::ROOT;
    const VALUE: Context = Context {
        mapping: true,
        simple_key: false,
    };
    const KEY: Context = Context {
        mapping: true,
        simple_key: true,
    };
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Style {
    Plain,
    SingleQuoted,
    DoubleQuoted,
    Literal,
}

/// The emitter's state, as libyaml keeps it (no flow level: empty collections are the
/// only flow ones, and they have no items).
struct Emitter {
    out: String,
    column: usize,
    indent: i32,
    indents: Vec<i32>,
    whitespace: bool,
    indention: bool,
}

impl Emitter {
    fn node(&mut self, value: &Value, ctx: Context) {
        match value {
            Value::Null => self.scalar("null", Some(Style::Plain), ctx),
            Value::Bool(b) => {
                self.scalar(if *b { "true" } else { "false" }, Some(Style::Plain), ctx)
            }
            Value::Number(n) => self.scalar(&n.to_string(), Some(Style::Plain), ctx),
            Value::String(s) => self.scalar(s, serde_yaml_style(s), ctx),
            Value::Array(items) if items.is_empty() => self.empty("[", "]"),
            Value::Object(map) if map.is_empty() => self.empty("{", "}"),
            Value::Array(items) => self.sequence(items, ctx),
            Value::Object(map) => self.mapping(map),
        }
    }

    fn empty(&mut self, open: &str, close: &str) {
        self.indicator(open, true, true, false);
        self.indicator(close, false, false, false);
    }

    fn sequence(&mut self, items: &[Value], ctx: Context) {
        self.increase_indent(false, ctx.mapping && !self.indention);
        for item in items {
            self.write_indent();
            self.indicator("-", true, false, true);
            self.node(item, Context::ITEM);
        }
        self.pop_indent();
    }

    fn mapping(&mut self, map: &Map<String, Value>) {
        self.increase_indent(false, false);
        for (key, value) in map {
            self.write_indent();
            let scan = Scan::of(key);
            if !scan.multiline && key.len() <= SIMPLE_KEY_MAX {
                self.node(&Value::String(key.clone()), Context::KEY);
                self.indicator(":", false, false, false);
            } else {
                self.indicator("?", true, false, true);
                self.node(&Value::String(key.clone()), Context::VALUE);
                self.write_indent();
                self.indicator(":", true, false, true);
            }
            self.node(value, Context::VALUE);
        }
        self.pop_indent();
    }

    /// libyaml's `emit_scalar`: the style it can use, then the writer for it.
    fn scalar(&mut self, text: &str, wanted: Option<Style>, ctx: Context) {
        let scan = Scan::of(text);
        let style = select_style(wanted, &scan, text.is_empty(), ctx.simple_key);
        self.increase_indent(true, false);
        match style {
            Style::Plain => self.plain(text),
            Style::SingleQuoted => self.single_quoted(text),
            Style::DoubleQuoted => self.double_quoted(text),
            Style::Literal => self.literal(text),
        }
        self.pop_indent();
    }

    fn increase_indent(&mut self, flow: bool, indentless: bool) {
        self.indents.push(self.indent);
        if self.indent < 0 {
            self.indent = if flow { INDENT } else { 0 };
        } else if !indentless {
            self.indent += INDENT;
        }
    }

    fn pop_indent(&mut self) {
        self.indent = self.indents.pop().unwrap_or(-1);
    }

    fn put(&mut self, c: char) {
        self.out.push(c);
        self.column += 1;
    }

    fn put_break(&mut self) {
        self.out.push('\n');
        self.column = 0;
    }

    /// libyaml's `WRITE_BREAK`: `\n` is a line break; the other breaks are copied.
    fn write_break(&mut self, c: char) {
        if c == '\n' {
            self.put_break();
        } else {
            self.out.push(c);
            self.column = 0;
        }
    }

    /// A line break inside a scalar's text: the next line starts at the indentation.
    fn text_break(&mut self, c: char) {
        self.write_break(c);
        self.indention = true;
    }

    /// The indentation before a scalar's text goes on, after line `breaks`.
    fn resume(&mut self, breaks: bool) {
        if breaks {
            self.write_indent();
        }
    }

    fn write_indent(&mut self) {
        let indent = usize::try_from(self.indent.max(0)).unwrap_or(0);
        if !self.indention || self.column > indent || (self.column == indent && !self.whitespace) {
            self.put_break();
        }
        while self.column < indent {
            self.put(' ');
        }
        self.whitespace = true;
        self.indention = true;
    }

    fn indicator(&mut self, text: &str, need_space: bool, is_space: bool, is_indention: bool) {
        if need_space && !self.whitespace {
            self.put(' ');
        }
        for c in text.chars() {
            self.put(c);
        }
        self.whitespace = is_space;
        self.indention = self.indention && is_indention;
    }

    fn plain(&mut self, text: &str) {
        if !self.whitespace && !text.is_empty() {
            self.put(' ');
        }
        for c in text.chars() {
            self.put(c);
        }
        self.whitespace = false;
        self.indention = false;
    }

    /// Single quotes; `'` doubled; line breaks written as libyaml does (a `\n` doubled,
    /// the text resumed at the indentation).
    fn single_quoted(&mut self, text: &str) {
        self.indicator("'", true, false, false);
        let mut breaks = false;
        for c in text.chars() {
            if is_break(c) {
                if !breaks && c == '\n' {
                    self.put_break();
                }
                self.text_break(c);
                breaks = true;
            } else {
                self.resume(breaks);
                if c == '\'' {
                    self.put('\'');
                }
                self.put(c);
                self.indention = false;
                breaks = false;
            }
        }
        if breaks {
            self.write_indent();
        }
        self.indicator("'", false, false, false);
        self.whitespace = false;
        self.indention = false;
    }

    fn double_quoted(&mut self, text: &str) {
        self.indicator("\"", true, false, false);
        for c in text.chars() {
            if !is_printable(c) || c == '\u{feff}' || is_break(c) || c == '"' || c == '\\' {
                self.put('\\');
                self.escape(c);
            } else {
                self.put(c);
            }
        }
        self.indicator("\"", false, false, false);
        self.whitespace = false;
        self.indention = false;
    }

    fn escape(&mut self, c: char) {
        let short = match c {
            '\0' => Some('0'),
            '\u{7}' => Some('a'),
            '\u{8}' => Some('b'),
            '\t' => Some('t'),
            '\n' => Some('n'),
            '\u{b}' => Some('v'),
            '\u{c}' => Some('f'),
            '\r' => Some('r'),
            '\u{1b}' => Some('e'),
            '"' => Some('"'),
            '\\' => Some('\\'),
            '\u{85}' => Some('N'),
            '\u{a0}' => Some('_'),
            '\u{2028}' => Some('L'),
            '\u{2029}' => Some('P'),
            _ => None,
        };
        if let Some(s) = short {
            self.put(s);
            return;
        }
        let code = u32::from(c);
        let (letter, digits) = match code {
            0..=0xFF => ('x', 2),
            0x100..=0xFFFF => ('u', 4),
            _ => ('U', 8),
        };
        self.put(letter);
        for shift in (0..digits).rev() {
            let digit = (code >> (shift * 4)) & 0xF;
            self.put(
                char::from_digit(digit, 16)
                    .unwrap_or('0')
                    .to_ascii_uppercase(),
            );
        }
    }

    fn literal(&mut self, text: &str) {
        self.indicator("|", true, false, false);
        self.block_hints(text);
        self.put_break();
        self.indention = true;
        self.whitespace = true;
        let mut breaks = true;
        for c in text.chars() {
            if is_break(c) {
                self.text_break(c);
                breaks = true;
            } else {
                self.resume(breaks);
                self.put(c);
                self.indention = false;
                breaks = false;
            }
        }
    }

    /// The indentation hint (text starting with a space or a break) and the chomping
    /// hint: `-` without a final break, `+` for more than one, none for exactly one.
    fn block_hints(&mut self, text: &str) {
        if text.starts_with(|c: char| c == ' ' || is_break(c)) {
            self.indicator("2", false, false, false);
        }
        let mut tail = text.chars().rev();
        let chomp = match (tail.next(), tail.next()) {
            (None, _) => Some("-"),
            (Some(last), _) if !is_break(last) => Some("-"),
            (Some(_), None) => Some("+"),
            (Some(_), Some(before)) if is_break(before) => Some("+"),
            _ => None,
        };
        if let Some(chomp) = chomp {
            self.indicator(chomp, false, false, false);
        }
    }
}

/// libyaml's `select_scalar_style` for block context (`None` is "any").
fn select_style(wanted: Option<Style>, scan: &Scan, empty: bool, simple_key: bool) -> Style {
    let mut style = wanted.unwrap_or(Style::Plain);
    if simple_key && scan.multiline {
        style = Style::DoubleQuoted;
    }
    if style == Style::Plain && (!scan.block_plain_allowed || (empty && simple_key)) {
        style = Style::SingleQuoted;
    }
    if style == Style::SingleQuoted && !scan.single_quoted_allowed {
        style = Style::DoubleQuoted;
    }
    if style == Style::Literal && (!scan.block_allowed || simple_key) {
        style = Style::DoubleQuoted;
    }
    style
}

/// What libyaml's `analyze_scalar` concludes about a text (block context only).
struct Scan {
    multiline: bool,
    block_plain_allowed: bool,
    single_quoted_allowed: bool,
    block_allowed: bool,
}

impl Scan {
    fn of(text: &str) -> Scan {
        if text.is_empty() {
            return Scan {
                multiline: false,
                block_plain_allowed: true,
                single_quoted_allowed: true,
                block_allowed: false,
            };
        }
        let chars: Vec<char> = text.chars().collect();
        // Past the end, libyaml reads the terminating NUL: "followed by whitespace".
        let at = |i: usize| chars.get(i).copied().unwrap_or('\0');
        let mut f = Flags {
            block_indicators: text.starts_with("---") || text.starts_with("..."),
            ..Flags::default()
        };
        let (mut previous_space, mut previous_break) = (false, false);
        let mut preceded_by_whitespace = true;
        for (i, &c) in chars.iter().enumerate() {
            let followed_by_whitespace = is_blankz(at(i + 1));
            f.indicators(c, i == 0, preceded_by_whitespace, followed_by_whitespace);
            f.special |= !is_printable(c);
            let last = i + 1 == chars.len();
            if c == ' ' {
                f.leading_space |= i == 0;
                f.trailing_space |= last;
                f.break_space |= previous_break;
                (previous_space, previous_break) = (true, false);
            } else if is_break(c) {
                f.line_breaks = true;
                f.leading_break |= i == 0;
                f.trailing_break |= last;
                f.space_break |= previous_space;
                (previous_space, previous_break) = (false, true);
            } else {
                (previous_space, previous_break) = (false, false);
            }
            preceded_by_whitespace = is_blankz(c);
        }
        f.conclude()
    }
}

#[derive(Default)]
struct Flags {
    block_indicators: bool,
    line_breaks: bool,
    special: bool,
    leading_space: bool,
    leading_break: bool,
    trailing_space: bool,
    trailing_break: bool,
    break_space: bool,
    space_break: bool,
}

impl Flags {
    /// The indicator characters that rule out a plain scalar in block context.
    fn indicators(&mut self, c: char, first: bool, preceded_by_ws: bool, followed_by_ws: bool) {
        if first {
            self.block_indicators |= matches!(
                c,
                '#' | ','
                    | '['
                    | ']'
                    | '{'
                    | '}'
                    | '&'
                    | '*'
                    | '!'
                    | '|'
                    | '>'
                    | '\''
                    | '"'
                    | '%'
                    | '@'
                    | '`'
            ) || (matches!(c, '?' | ':' | '-') && followed_by_ws);
        } else {
            self.block_indicators |= (c == ':' && followed_by_ws) || (c == '#' && preceded_by_ws);
        }
    }

    fn conclude(self) -> Scan {
        let mut s = Scan {
            multiline: self.line_breaks,
            block_plain_allowed: true,
            single_quoted_allowed: true,
            block_allowed: true,
        };
        if self.leading_space || self.leading_break || self.trailing_space || self.trailing_break {
            s.block_plain_allowed = false;
        }
        if self.trailing_space {
            s.block_allowed = false;
        }
        if self.break_space {
            s.block_plain_allowed = false;
            s.single_quoted_allowed = false;
        }
        if self.space_break || self.special {
            s.block_plain_allowed = false;
            s.single_quoted_allowed = false;
            s.block_allowed = false;
        }
        if self.line_breaks || self.block_indicators {
            s.block_plain_allowed = false;
        }
        s
    }
}

fn is_break(c: char) -> bool {
    matches!(c, '\r' | '\n' | '\u{85}' | '\u{2028}' | '\u{2029}')
}

fn is_blankz(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\0') || is_break(c)
}

/// libyaml's `IS_PRINTABLE` (tab and the C1 controls are not).
fn is_printable(c: char) -> bool {
    matches!(u32::from(c),
        0x0A | 0x20..=0x7E | 0xA0..=0xD7FF | 0xE000..=0xFFFD | 0x10000..=0x10FFFF)
        && c != '\u{feff}'
}

/// The style serde_yaml asked for a string: a literal block for text with a newline,
/// single quotes for text that would read back as another type (null, bool, a number,
/// digits with a leading zero), otherwise any (libyaml then picks).
fn serde_yaml_style(s: &str) -> Option<Style> {
    if s.contains('\n') {
        Some(Style::Literal)
    } else if reads_as_other_type(s) {
        Some(Style::SingleQuoted)
    } else {
        None
    }
}

/// serde_yaml 0.9's untagged-scalar resolution: does `s`, unquoted, read as something
/// other than a string?
fn reads_as_other_type(s: &str) -> bool {
    s.is_empty()
        || matches!(s, "null" | "Null" | "NULL" | "~")
        || matches!(s, "true" | "True" | "TRUE" | "false" | "False" | "FALSE")
        || digits_but_not_number(s)
        || number::is_int(s)
        || number::is_float(s)
}

/// Leading zero(s) then digits: a string in YAML 1.2, quoted to stay one.
fn digits_but_not_number(s: &str) -> bool {
    let s = s.strip_prefix(['-', '+']).unwrap_or(s);
    s.len() > 1 && s.starts_with('0') && s[1..].bytes().all(|b| b.is_ascii_digit())
}

/// serde_yaml 0.9's integer and float recognition (`parse_unsigned_int`,
/// `parse_negative_int`, their 128-bit forms, `parse_f64`).
mod number {
    use super::digits_but_not_number;

    /// An integer in any radix serde_yaml reads (`0x`, `0o`, `0b`, decimal), of any
    /// width up to 128 bits, signed or not.
    pub(super) fn is_int(s: &str) -> bool {
        unsigned(s, |t, r| u128::from_str_radix(t, r).is_ok())
            || negative(s, |t, r| i128::from_str_radix(t, r).is_ok())
    }

    fn unsigned(s: &str, parses: impl Fn(&str, u32) -> bool) -> bool {
        let unpositive = s.strip_prefix('+').unwrap_or(s);
        for (prefix, radix) in [("0x", 16), ("0o", 8), ("0b", 2)] {
            if let Some(rest) = unpositive.strip_prefix(prefix) {
                if rest.starts_with(['+', '-']) {
                    return false;
                }
                if parses(rest, radix) {
                    return true;
                }
            }
        }
        if unpositive.starts_with(['+', '-']) || digits_but_not_number(s) {
            return false;
        }
        parses(unpositive, 10)
    }

    fn negative(s: &str, parses: impl Fn(&str, u32) -> bool) -> bool {
        for (prefix, radix) in [("-0x", 16), ("-0o", 8), ("-0b", 2)] {
            if let Some(rest) = s.strip_prefix(prefix)
                && parses(&format!("-{rest}"), radix)
            {
                return true;
            }
        }
        !digits_but_not_number(s) && parses(s, 10)
    }

    pub(super) fn is_float(s: &str) -> bool {
        if digits_but_not_number(s) {
            return false;
        }
        let unpositive = match s.strip_prefix('+') {
            Some(rest) if rest.starts_with(['+', '-']) => return false,
            Some(rest) => rest,
            None => s,
        };
        matches!(unpositive, ".inf" | ".Inf" | ".INF")
            || matches!(s, "-.inf" | "-.Inf" | "-.INF" | ".nan" | ".NaN" | ".NAN")
            || unpositive.parse::<f64>().is_ok_and(f64::is_finite)
            || overflows(unpositive)
    }

    /// A numeral whose exponent overflows (`97583e637712`, a snapshot id): serde_yaml
    /// wrote it plain, which Go's yaml.v3 reads back as a string but a YAML 1.2 reader
    /// (serde_saphyr, ruamel) as an infinite float, or refuses. Quoted, every reader
    /// reads the string. (`inf`, `nan` and `infinity`, which Rust's parser also takes,
    /// are words, not numerals: they stay plain, as serde_yaml wrote them.)
    fn overflows(s: &str) -> bool {
        let numeral = s.starts_with(|c: char| c.is_ascii_digit() || c == '.' || c == '-')
            && s.contains(['e', 'E']);
        numeral && s.parse::<f64>().is_ok_and(f64::is_infinite)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_numeral_that_overflows_is_quoted_and_words_stay_plain() {
        let text = |v: &str| to_string(&serde_json::json!({ "id": v }));
        assert_eq!(text("97583e637712"), "id: '97583e637712'\n");
        assert_eq!(text("-1E999"), "id: '-1E999'\n");
        assert_eq!(text("97583f637712"), "id: 97583f637712\n");
        for word in ["inf", "nan", "infinity", "e5"] {
            assert_eq!(text(word), format!("id: {word}\n"));
        }
    }

    /// 1,500 random JSON values (keys and strings drawn from YAML's indicator characters,
    /// line breaks, C0/C1 controls, BOM, astral and typed-looking words such as `0x1F`,
    /// `.NaN`, `012`, keys over 128 bytes) with the text serde_yaml 0.9.34 wrote for each,
    /// recorded before serde_yaml left the tree; the emitter had matched it on 400,000
    /// such values.
    #[test]
    fn writes_what_serde_yaml_wrote() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/yaml/emit.jsonl");
        let corpus = std::fs::read_to_string(path).unwrap();
        let mut n = 0;
        for line in corpus.lines() {
            let (value, yaml): (Value, String) = serde_json::from_str(line).unwrap();
            assert_eq!(to_string(&value), yaml, "{line}");
            n += 1;
        }
        assert_eq!(n, 1500);
    }

    #[test]
    fn block_styles_as_kubernetes_manifests_read() {
        let v = serde_json::json!({
            "a": [], "b": {}, "c": ["x", {"k": "1.10", "l": "a\nb\n"}], "d": "", "e": "null",
            "f": " lead", "g": "tab\there", "h": "it's", "i": {"j": ["- x", "#c"]}
        });
        assert_eq!(
            to_string(&v),
            "a: []\nb: {}\nc:\n- x\n- k: '1.10'\n  l: |\n    a\n    b\nd: ''\ne: 'null'\n\
             f: ' lead'\ng: \"tab\\there\"\nh: it's\ni:\n  j:\n  - '- x'\n  - '#c'\n"
        );
    }
}
